/**
 * The run: `runEvaluation` (library) and `runCommand` (what `standoff run` calls).
 *
 * A run is a short sequence of stages, each in its own file under `stages/` with a typed input
 * and output:
 * 1. plan (`stages/plan.ts`): scenarios, units (subject x scenario x epoch, or a shard's share),
 *    config hash, the journal's state (new, or what a resume continues);
 * 2. check the endpoints (`stages/endpoints.ts`, clients from `stages/clients.ts`);
 * 3. run the episodes (`stages/episodes.ts`): a pool of `concurrency` workers runs each unit
 *    (`stages/unit.ts`): the agent episode (`solver.ts`), then in parallel the judge stage
 *    (`stages/judge.ts`, valid episodes only) and the probe stage (`stages/probe.ts`, on the same
 *    frozen state), then the three scores (`scorers.ts`);
 * 4. commit (`stages/commit.ts`): the journal streamed into the store, atomically;
 * 5. summarise (`stages/summary.ts`).
 *
 * Durability: a finished unit is appended (redacted) to `<traces>/.journal/<run_id>.jsonl` and
 * fsynced before it counts (`journal.ts`). When every unit is done the run is built FROM THE
 * JOURNAL, in the run's order, (subject, scenario, epoch, seq), into a `RunWriter` (memory does
 * not grow with the run's length), which commits the run atomically; then the journal is
 * deleted. SIGINT stops scheduling, aborts in-flight requests, lets journal writes finish and
 * fails with exit 130 and the resume command; a second SIGINT exits at once (the journal is still
 * intact: every line was synced when written). `resume` reads the journal (tolerating a torn last
 * line), runs only the missing units, and finishes the same way.
 *
 * Episode ids are `<subject>/<scenario_id>/<epoch>`; request seeds are derived from (run seed,
 * scenario, epoch), so a run's rows depend only on its config (timestamps and latencies
 * aside), never on scheduling, nor on how the run is split into shards.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { usageError } from '../errors.ts';
import { isRunCommitted, storeExists } from '../store/write-run.ts';
import { validateRun } from '../store/validate-run.ts';
import type { FaultSpec } from '../../verifier/server.ts';
import { DEFAULT_CONFIG_FILE, applyOverrides, loadConfigFile, loadDotEnv, presetConfig, type ResolvedConfig } from './config.ts';
import { journalPath, readJournal } from './journal.ts';
import { buildClients } from './stages/clients.ts';
import { commitRun } from './stages/commit.ts';
import { checkRunEndpoints } from './stages/endpoints.ts';
import { runEpisodes } from './stages/episodes.ts';
import { defaultRunId, parseShardSpec, planRun } from './stages/plan.ts';
import { summariseRun, type RunSummary } from './stages/summary.ts';
import type { EvaluationOptions, ProgressMode, ShardSpec } from './stages/types.ts';

export { assembleRows, unitRows, type BuiltRun } from './stages/commit.ts';
export { checkEndpoints } from './stages/endpoints.ts';
export { configHash, defaultRunId, episodeIdOf, parseShardSpec, planUnits } from './stages/plan.ts';
export { formatSummary, runVerdict, type RunSummary, type SubjectSummary } from './stages/summary.ts';
export type { EvaluationOptions, ProgressMode, ShardSpec } from './stages/types.ts';

/** Runs (or resumes) an evaluation and writes it to the store: the stages, in order. */
export async function runEvaluation(opts: EvaluationOptions): Promise<RunSummary> {
  const t0 = Date.now();
  const plan = await planRun(opts);
  const clients = buildClients(plan.cfg, plan.redactor, plan.log);
  await checkRunEndpoints(plan, clients, opts.signal);
  const ran = await runEpisodes(plan, clients, opts);
  const unitsEnded = Date.now();
  const committed = await commitRun(plan, { aborted: ran.aborted, replace: opts.replace, adjustments: clients.adjustments });
  return summariseRun(plan, clients, ran, committed, { t0, unitsEnded });
}

// ---------------------------------------------------------------------------------------------
// runCommand (the CLI entry)
// ---------------------------------------------------------------------------------------------

export interface RunCommandOptions {
  /** Config file (default `standoff.config.json` when neither a preset nor resume is given). */
  config?: string;
  /** Built-in preset name (`demo`, `smoke`). */
  preset?: string;
  /** Subject model names (must be in the config, or `sim:` models). */
  subjects?: string[];
  /** Judge model names (`none` for no judges). */
  judges?: string[];
  epochs?: number;
  concurrency?: number;
  seed?: number;
  /** Run id (default `<config name>-s<seed>`). */
  runId?: string;
  /** Resume this run id from its journal. */
  resume?: string;
  /** Run only this share of the units: `i/N` (`--shard`); a resume takes the journal's when not given. */
  shard?: string | ShardSpec;
  /** Trace store directory. */
  traces: string;
  /** Overwrite an existing run with the same id. */
  replace?: boolean;
  /** Added latency of the in-process sim endpoint (ms). */
  simLatencyMs?: number;
  /** Agent prompt variant (`--prompt neutral|instructed`; default: the config's, else neutral). */
  prompt?: string;
  /** Composition-ladder conditions (`--probe-conditions raw,own-answers,facts,composed`; default raw,composed). */
  probeConditions?: string;
  progress?: ProgressMode;
  /** Stop once this many episodes have ended in error (overrides the config's `max_errors`). */
  maxErrors?: number;
  /** Truncated episodes the run's gate allows (`--allow-truncated N`, default 0). */
  allowTruncated?: number;
  /** ERROR verdicts the run's gate allows (`--allow-judge-errors N`, default 0). */
  allowJudgeErrors?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Install the SIGINT handler for the duration of the run (default true). */
  handleSignals?: boolean;
  verifierFaults?: FaultSpec;
}

function resolveRunConfig(o: RunCommandOptions, journalConfig: ResolvedConfig | null): ResolvedConfig {
  if (o.config && o.preset) throw usageError('run.configAndPreset', 'pass either --config or --preset, not both');
  let cfg: ResolvedConfig;
  if (o.preset) cfg = presetConfig(o.preset);
  else if (o.config) cfg = loadConfigFile(o.config);
  else if (journalConfig) cfg = journalConfig;
  else if (existsSync(DEFAULT_CONFIG_FILE)) cfg = loadConfigFile(DEFAULT_CONFIG_FILE);
  else throw usageError('run.noConfig', `no configuration: pass --config FILE or --preset demo (or create ${DEFAULT_CONFIG_FILE})`);
  cfg = applyOverrides(cfg, { subjects: o.subjects, judges: o.judges, epochs: o.epochs, concurrency: o.concurrency, seed: o.seed, maxErrors: o.maxErrors, prompt: o.prompt, probeConditions: o.probeConditions });
  if (o.simLatencyMs !== undefined) {
    if (!(o.simLatencyMs >= 0)) throw usageError('config.invalid', `--sim-latency must be >= 0 ms, got ${o.simLatencyMs}`);
    cfg = { ...cfg, sim: { ...cfg.sim, latency_ms: o.simLatencyMs } };
  }
  return cfg;
}

/**
 * `standoff run`: resolves the config (preset, file, or the journal when resuming), loads `.env`,
 * runs, writes the run, and returns the summary. SIGINT -> `StandoffError` kind `interrupted`
 * (exit 130) whose message names the resume command.
 */
export async function runCommand(o: RunCommandOptions): Promise<RunSummary> {
  if (!o.traces) throw usageError('run.noTraces', 'pass --traces DIR (the trace store to write the run into)');
  await storeExists(o.traces); // a file in the way: store.notDirectory (exit 4) before anything else
  loadDotEnv([process.cwd(), ...(o.config ? [resolve(o.config, '..')] : [])]);
  let journalConfig: ResolvedConfig | null = null;
  let shard: ShardSpec | undefined = typeof o.shard === 'string' ? parseShardSpec(o.shard) : o.shard;
  if (o.resume) {
    if (o.runId && o.runId !== o.resume) throw usageError('run.resumeRunId', `--resume ${o.resume} and --run-id ${o.runId} disagree`);
    const jp = journalPath(o.traces, o.resume);
    if (!existsSync(jp)) {
      const committed = isRunCommitted(o.traces, o.resume);
      throw usageError(
        'run.noJournal',
        committed
          ? `run "${o.resume}" is already complete in ${o.traces} (no journal left to resume)`
          : `no journal for run "${o.resume}" in ${o.traces}: nothing to resume`,
      );
    }
    const c = await readJournal(jp);
    journalConfig = (c.header?.config as ResolvedConfig | undefined) ?? null;
    shard ??= c.header?.shard;
  }
  const cfg = resolveRunConfig(o, journalConfig);
  const runId = o.resume ?? o.runId ?? defaultRunId(cfg);

  const ac = new AbortController();
  const onOuter = () => ac.abort();
  o.signal?.addEventListener('abort', onOuter, { once: true });
  if (o.signal?.aborted) ac.abort();
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const handle = o.handleSignals !== false;
  const saved = handle ? process.listeners('SIGINT') : [];
  let sigints = 0;
  const onSigint = () => {
    sigints++;
    if (sigints === 1) {
      log(`\nstandoff run: interrupted; saving finished episodes (Ctrl-C again to exit now; resume with --resume ${runId})`);
      ac.abort();
    } else {
      process.exit(130);
    }
  };
  if (handle) {
    process.removeAllListeners('SIGINT');
    process.on('SIGINT', onSigint);
  }
  for (const [flag, v] of [['--allow-truncated', o.allowTruncated], ['--allow-judge-errors', o.allowJudgeErrors]] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw usageError('config.invalid', `${flag} must be a non-negative integer, got ${v}`);
  }
  try {
    const summary = await runEvaluation({
      config: cfg,
      runId,
      traces: o.traces,
      replace: o.replace,
      resume: !!o.resume,
      shard,
      progress: o.progress,
      log,
      signal: ac.signal,
      verifierFaults: o.verifierFaults,
    });
    // A shard is not a run to publish: the gate runs on the merged run (`standoff merge`, then `validate`).
    if (shard) return summary;
    // The run ends with the publication gate, exactly as `standoff validate` runs it.
    summary.gate = await validateRun(o.traces, { runId, expectedSamples: summary.samplesPerSubject, allowTruncated: o.allowTruncated, allowJudgeErrors: o.allowJudgeErrors });
    return summary;
  } finally {
    o.signal?.removeEventListener('abort', onOuter);
    if (handle) {
      process.removeListener('SIGINT', onSigint);
      for (const l of saved) process.on('SIGINT', l as (...a: unknown[]) => void);
    }
  }
}
