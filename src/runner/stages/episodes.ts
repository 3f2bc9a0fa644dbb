/**
 * Stage 3, run the episodes: opens the journal, starts the verifier and (for `sim:` models) the
 * sim endpoint, and runs the units left to run in a pool of `concurrency` workers (`unit.ts`).
 * A finished unit is appended to the journal and counts once the sync covering it resolved.
 * Fails with the run's first fatal error, or `run.tooManyErrors` at `--max-errors`; both keep
 * the journal for `--resume`.
 */
import { setMaxListeners } from 'node:events';
import { StandoffError, endpointError } from '../../errors.ts';
import { startVerifier, type FaultSpec, type Verifier } from '../../../verifier/server.ts';
import type { ResolvedModel } from '../config.ts';
import { openJournal, readJournal, type Journal, type JournalUnit } from '../journal.ts';
import type { JudgePanelMember } from '../judges.ts';
import { startSimServer, type SimServer, type SimStats } from '../sim/server.ts';
import { isAbort } from '../solver.ts';
import type { RunClients } from './clients.ts';
import { Progress, progressMode } from './progress.ts';
import { runUnit } from './unit.ts';
import type { EvaluationOptions, RunPlan, UnitContext, UnitPlan } from './types.ts';

export interface EpisodesOutcome {
  simStats: SimStats | null;
  journalSyncs: number;
  /** When the units began (Date.now()), for the run's phase timings. */
  unitsStarted: number;
  /** The run was interrupted (the commit stage then reports what is saved). */
  aborted: boolean;
}

type EpisodeOptions = Pick<EvaluationOptions, 'signal' | 'progress' | 'onUnit' | 'verifierFaults'>;

/** The verifier, and the sim endpoint when a `sim:` model runs. */
async function startServers(plan: RunPlan, faults: FaultSpec | undefined): Promise<{ verifier: Verifier; sim: SimServer | null }> {
  const { cfg } = plan;
  const verifier = await startVerifier(faults ? { faults } : {});
  // The sim runs in a worker thread so that its work and the client's overlap on two cores.
  // At concurrency 1 there is only ever one request in flight and the client waits for it, so
  // nothing can overlap: there the sim stays in this thread, saving two cross-thread wake-ups
  // per request. Replies are identical either way.
  const sim = [...cfg.subjects, ...cfg.judges].some((m) => m.sim)
    ? await startSimServer({ seed: cfg.seed, latencyMs: cfg.sim.latency_ms, scenarios: plan.scenarios, thread: cfg.concurrency > 1 ? 'worker' : 'main' }).catch(async (err: unknown) => {
        await verifier.close();
        throw err;
      })
    : null;
  return { verifier, sim };
}

/** What the pool tracks: units counted, errors in this invocation, the first fatal error. */
interface PoolState {
  completed: number;
  erroredNow: number;
  lastError: string | null;
  stoppedForErrors: boolean;
  fatal: unknown;
}

/**
 * Runs `todo` in `concurrency` workers. A unit counts (progress, onUnit, the summary) only once
 * the journal sync covering it has resolved. The sync is not on the worker's critical path,
 * though: the worker starts its next unit while its last one is being synced (group commit
 * batches it with other workers'), and waits for that sync only before handing in another unit,
 * so each worker has at most one unit in flight to the journal.
 */
async function runPool(plan: RunPlan, todo: UnitPlan[], run: (u: UnitPlan) => Promise<JournalUnit>, journal: Journal, ac: AbortController, progress: Progress, onUnit: EpisodeOptions['onUnit']): Promise<PoolState> {
  const st: PoolState = { completed: plan.done.size, erroredNow: 0, lastError: null, stoppedForErrors: false, fatal: null };
  const signal = ac.signal;
  let next = 0;
  const commit = (unit: JournalUnit): Promise<void> =>
    journal.append(unit).then(
      () => {
        st.completed++;
        progress.tick(unit.episode.status === 'error');
        onUnit?.(st.completed, plan.total);
        if (unit.episode.status !== 'error') return;
        st.erroredNow++;
        st.lastError = unit.episode.error;
        if (st.erroredNow >= plan.cfg.max_errors && !st.stoppedForErrors) {
          st.stoppedForErrors = true;
          ac.abort(); // stop scheduling and abort what is in flight: the endpoint keeps failing
        }
      },
      (err: unknown) => {
        st.fatal ??= err;
        ac.abort();
      },
    );
  const worker = async () => {
    let syncing: Promise<void> = Promise.resolve();
    try {
      while (!signal.aborted) {
        const i = next++;
        if (i >= todo.length) return;
        let unit: JournalUnit;
        try {
          unit = await run(todo[i]!);
        } catch (err) {
          if (isAbort(err) || signal.aborted) return;
          st.fatal ??= err;
          ac.abort();
          return;
        }
        // A finished unit is kept even when an interrupt arrived meanwhile.
        const committed = commit(unit);
        await syncing;
        syncing = committed;
      }
    } finally {
      await syncing;
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.cfg.concurrency, todo.length) }, worker));
  return st;
}

/** The run's first fatal error, with where its finished episodes are kept. */
function fatalError(plan: RunPlan, fatal: unknown): StandoffError {
  const msg = fatal instanceof Error ? fatal.message : String(fatal);
  return new StandoffError(
    fatal instanceof StandoffError ? fatal.code : 'run.failed',
    fatal instanceof StandoffError ? fatal.kind : 'internal',
    `${plan.redactor.text(msg)} (finished episodes are kept in ${plan.jpath}; resume with --resume ${plan.runId})`,
    fatal as { cause?: unknown },
  );
}

async function tooManyErrors(plan: RunPlan, st: PoolState): Promise<StandoffError> {
  const saved = (await readJournal(plan.jpath)).units;
  const kept = [...saved.values()].filter((u) => u.episode.status !== 'error').length;
  return endpointError(
    'run.tooManyErrors',
    `stopped: ${st.erroredNow} episode(s) ended in error (--max-errors ${plan.cfg.max_errors}); last: ${plan.redactor.text(st.lastError ?? 'unknown error')}; ${kept}/${plan.total} episodes are saved in the journal ${plan.jpath}; fix the endpoint, then resume with: standoff run --resume ${plan.runId} --traces ${plan.traces} (episodes that ended in error run again)`,
  );
}

/** Stage 3 (see the module comment). */
export async function runEpisodes(plan: RunPlan, clients: RunClients, o: EpisodeOptions): Promise<EpisodesOutcome> {
  const { cfg } = plan;
  const journal = plan.resumeContents ? await openJournal(plan.jpath, plan.header, { resume: plan.resumeContents }) : await openJournal(plan.jpath, plan.header);
  const todo = plan.units.filter((p) => !plan.done.has(p.id));
  const ac = new AbortController();
  const onOuterAbort = () => ac.abort(o.signal?.reason);
  if (o.signal?.aborted) ac.abort();
  o.signal?.addEventListener('abort', onOuterAbort, { once: true });
  setMaxListeners(0, ac.signal); // every in-flight request listens to it
  const progress = new Progress(progressMode(o.progress), plan.total, plan.log);
  let servers: { verifier: Verifier; sim: SimServer | null } | null = null;
  let st: PoolState | null = null;
  let unitsStarted = Date.now();
  let simStats: SimStats | null = null;
  try {
    if (todo.length > 0) {
      servers = await startServers(plan, o.verifierFaults);
      const baseOf = (m: ResolvedModel) => (m.sim ? servers!.sim!.baseURL : m.base_url!);
      const ctx: UnitContext = {
        cfg,
        runId: plan.runId,
        redactor: plan.redactor,
        signal: ac.signal,
        verifier: servers.verifier,
        subjectClients: new Map(cfg.subjects.map((m) => [m.model, clients.clientFor(m, baseOf(m))])),
        panel: cfg.judges.map((m): JudgePanelMember => ({ spec: m, client: clients.clientFor(m, baseOf(m)) })),
      };
      unitsStarted = Date.now();
      progress.start(plan.done.size, 0);
      st = await runPool(plan, todo, (u) => runUnit(ctx, u), journal, ac, progress, o.onUnit);
    }
  } finally {
    progress.stop();
    o.signal?.removeEventListener('abort', onOuterAbort);
    await journal.flush().catch(() => undefined);
    await journal.close().catch(() => undefined);
    simStats = servers?.sim?.stats() ?? null;
    await Promise.all([servers?.verifier.close(), servers?.sim?.close()]);
  }
  if (st?.fatal) throw fatalError(plan, st.fatal);
  if (st?.stoppedForErrors) throw await tooManyErrors(plan, st);
  return { simStats, journalSyncs: journal.syncs, unitsStarted, aborted: ac.signal.aborted };
}
