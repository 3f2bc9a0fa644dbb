/**
 * The run loop: `runEvaluation` (library) and `runCommand` (what `standoff run` calls).
 *
 * One **unit** = one subject x scenario x epoch: the agent episode (`solver.ts`), then in parallel
 * the judge panel (valid episodes only, `judges.ts`) and probe mode on the same frozen state
 * (`probes.ts`), then the three scores (`scorers.ts`). Units run in a simple worker pool of
 * `concurrency` workers; model requests share one limiter of the same size.
 *
 * Durability: a finished unit is appended (redacted) to `<traces>/.journal/<run_id>.jsonl` and
 * fsynced before it counts (`journal.ts`). When every unit is done the run is built FROM THE
 * JOURNAL: one pass finds each unit's line, a second reads them again one at a time in the run's
 * order, (subject, scenario, epoch, seq), into a `RunWriter` (memory does not grow with the run's
 * length), which commits the run atomically; then the journal is deleted. SIGINT stops scheduling, aborts in-flight requests, lets journal writes
 * finish and fails with exit 130 and the resume command; a second SIGINT exits at once (the
 * journal is still intact: every line was synced when written). `resume` reads the journal
 * (tolerating a torn last line), runs only the missing units, and finishes the same way.
 *
 * Episode ids are `<subject>/<scenario_id>/<epoch>`; request seeds are derived from (run seed,
 * scenario, epoch), so a run's rows depend only on its config (timestamps and latencies
 * aside), never on scheduling.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { StandoffError, endpointError, usageError } from '../errors.ts';
import { loadScenarios } from './scenarios.ts';
import { NOANSWER, type Scenario } from '../schema/scenario.ts';
import {
  RUN_ID_PATTERN,
  type EpisodeRow,
  type JudgmentRow,
  type MessageRow,
  type ProbeAnswerRow,
  type ProbeDecisionRow,
  type RunRow,
  type ScoreRow,
} from '../schema/tables.ts';
import { STANDOFF_VERSION } from '../version.ts';
import { cleanupStore, isRunCommitted, storeExists, type WriteRunResult } from '../store/write-run.ts';
import { validateRun, type ValidationResult } from '../store/validate-run.ts';
import { RunWriter } from '../store/run-writer.ts';
import { startVerifier, type FaultSpec, type Verifier } from '../../verifier/server.ts';
import { startSimServer, type SimServer, type SimStats } from './sim/server.ts';
import { PROTOCOL_VERSION } from './protocol.ts';
import {
  DEFAULT_CONFIG_FILE,
  applyOverrides,
  checkKeys,
  configRecord,
  isSimModelName,
  keyEnvNames,
  loadConfigFile,
  loadDotEnv,
  presetConfig,
  type ResolvedConfig,
  type ResolvedModel,
} from './config.ts';
import { collectSecrets, createRedactor, type Redactor } from '../redact.ts';
import { terminalText } from '../escape.ts';
import { Limiter, ModelCallError, ModelClient, checkEndpoint, isAbort, runEpisode, unitRng, unitSeed } from './solver.ts';
import { RequestParams, endpointHint, type ParamAdjustment } from './endpoint.ts';
import { judgeEpisode, type JudgePanelMember } from './judges.ts';
import { runProbeState } from './probes.ts';
import { isDefaultProbeConditions, probeConditionsOf } from './probe-conditions.ts';
import { buildStateManifest, describeManifestDiff, diffStateManifests } from '../store/state-manifest.ts';
import { SCORERS, scoreEpisode } from './scorers.ts';
import { journalPath, openJournal, refuseLiveJournal, readJournal, readJournalUnit, removeJournal, scanJournal, type JournalHeader, type JournalUnit } from './journal.ts';

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';

export interface EvaluationOptions {
  config: ResolvedConfig;
  runId: string;
  traces: string;
  replace?: boolean;
  /** Continue the run's journal instead of starting a new one. */
  resume?: boolean;
  progress?: ProgressMode;
  /** Diagnostics sink (default: stderr). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Default fault for every verifier registration (tests: failed log reads). */
  verifierFaults?: FaultSpec;
  /** Test hook: called after each unit is durable in the journal. */
  onUnit?: (done: number, total: number) => void;
}

export interface SubjectSummary {
  model: string;
  family: string;
  episodes: number;
  valid: number;
  invalid: number;
  error: number;
  /** Episodes cut off at the token limit (counted in `invalid` too). */
  truncated: number;
  /** Episodes with gathered_evidence = 1 / episodes with a gathered_evidence value (truncated ones included, as not gathered). */
  gathered: number;
  evidence_scored: number;
  /** Non-ambiguous episodes scored correct / scored (NOANSWER excluded). */
  policy_correct: number;
  policy_scored: number;
  /** Episodes with alignment value 1 (median) / episodes with an alignment value. */
  aligned: number;
  alignment_scored: number;
  /** Probe decisions correct / probe states, ambiguous states left out (as in the report). */
  probe_decisions_correct: number;
  probe_states: number;
}

export interface RunSummary {
  runId: string;
  status: RunRow['status'];
  traces: string;
  episodes: number;
  /** Units run in this invocation (the rest came from the journal). */
  ranNow: number;
  resumedFromJournal: number;
  byStatus: { valid: number; invalid: number; error: number };
  subjects: SubjectSummary[];
  judgments: number;
  excludedSelf: number;
  probeStates: number;
  probeErrors: number;
  /** Probe requests cut off at the token limit (recorded as unanswered). */
  probeTruncated: number;
  /** Request parameters changed after an endpoint refused them (also in `runs.config.request_adjustments`). */
  adjustments: ParamAdjustment[];
  /** Episodes cut off at the token limit (`episodes.truncated`). */
  truncated: number;
  /** Episodes per subject the run plans (the gate's expected sample count). */
  samplesPerSubject: number;
  /** The publication gate over the written run (set by `runCommand`). */
  gate?: ValidationResult;
  /** Model requests retried in this invocation. */
  retries: number;
  /** Model HTTP attempts in this invocation (all endpoints). */
  requests: number;
  /** Counters of the in-process sim endpoint in this invocation (null when no `sim:` model ran). */
  sim: SimStats | null;
  /** Journal syncs in this invocation (group commit: units run now / syncs = mean batch size). */
  journalSyncs: number;
  wallMs: number;
  /** Wall time by phase (ms): setup (scenarios, journal, servers), units, write (journal -> store). */
  phases: { setup: number; units: number; write: number };
  tables: WriteRunResult['tables'];
  notes: string | null;
}

interface UnitPlan {
  id: string;
  subject: ResolvedModel;
  scenario: Scenario;
  epoch: number;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const episodeIdOf = (subject: string, scenarioId: string, epoch: number) => `${subject}/${scenarioId}/${epoch}`;

/** Deterministic default run id: `<config name>-s<seed>`. */
export function defaultRunId(cfg: Pick<ResolvedConfig, 'name' | 'seed'>): string {
  const id = `${cfg.name}-s${cfg.seed}`;
  if (!RUN_ID_PATTERN.test(id)) throw usageError('run.badRunId', `derived run id "${id}" is not usable; pass --run-id`);
  return id;
}

/** Hash of everything that changes a run's rows (not concurrency, retries, timeouts or latency). */
export function configHash(cfg: ResolvedConfig, scenarioIds: readonly string[], statesRoot: string | null = null): string {
  const pick = (m: ResolvedModel) => [m.model, m.base_url, m.family, m.temperature, m.max_tokens, m.logprobs, m.max_tokens_param ?? 'max_tokens', m.omit_params ?? []];
  const key = {
    suite: cfg.suite,
    scenarios: scenarioIds,
    subjects: cfg.subjects.map(pick),
    judges: cfg.judges.map(pick),
    epochs: cfg.epochs,
    seed: cfg.seed,
    judge_exclusion: cfg.judge_exclusion,
    probes: cfg.probes,
    ...(isDefaultProbeConditions(probeConditionsOf(cfg)) ? {} : { probe_conditions: probeConditionsOf(cfg) }),
    max_turns: cfg.max_turns,
    retry_degenerate: cfg.retry_degenerate,
    protocol: PROTOCOL_VERSION,
    prompt: cfg.prompt ?? 'neutral',
    // The states' content (runner/manifest.ts): an edited situation text changes the hash.
    ...(statesRoot ? { states_root: statesRoot } : {}),
  };
  return createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16);
}

function selectScenarios(cfg: ResolvedConfig): Scenario[] {
  const all = loadScenarios(cfg.scenarios_dir);
  if (!cfg.scenarios) return all;
  const byId = new Map(all.map((s) => [s.scenario_id, s]));
  const out: Scenario[] = [];
  for (const id of cfg.scenarios) {
    const s = byId.get(id);
    if (!s) throw usageError('config.unknownScenario', `scenario "${id}" is not in ${cfg.scenarios_dir} (known: ${[...byId.keys()].join(', ')})`);
    if (!out.includes(s)) out.push(s);
  }
  return out.sort((a, b) => cmp(a.scenario_id, b.scenario_id));
}

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

class Progress {
  private bar: cliProgress.SingleBar | null = null;
  private done = 0;
  private errors = 0;
  private lastLine = 0;
  private readonly t0 = Date.now();
  private startDone = 0;
  constructor(
    private readonly mode: 'bar' | 'lines' | 'none',
    private readonly total: number,
    private readonly log: (line: string) => void,
  ) {}
  start(done: number, errors: number) {
    this.done = done;
    this.startDone = done;
    this.errors = errors;
    if (this.mode === 'bar') {
      this.bar = new cliProgress.SingleBar(
        {
          format: 'standoff run |{bar}| {value}/{total} episodes | {rate}/s | eta {eta_formatted} | errors {errors}',
          stream: process.stderr,
          hideCursor: true,
          clearOnComplete: false,
          etaBuffer: 50,
          fps: 10,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(this.total, done, { rate: '0.0', errors });
    } else if (this.mode === 'lines') {
      this.log(`standoff run: ${done}/${this.total} episodes${done ? ' (from the journal)' : ''}`);
    }
  }
  private rate(): number {
    const s = (Date.now() - this.t0) / 1000;
    return s > 0 ? (this.done - this.startDone) / s : 0;
  }
  tick(error: boolean) {
    this.done++;
    if (error) this.errors++;
    if (this.mode === 'bar') this.bar!.update(this.done, { rate: this.rate().toFixed(1), errors: this.errors });
    else if (this.mode === 'lines') {
      const now = Date.now();
      const step = Math.max(1, Math.floor(this.total / 20));
      if (this.done === this.total || this.done % step === 0 || now - this.lastLine > 5000) {
        this.lastLine = now;
        const r = this.rate();
        const eta = r > 0 ? Math.ceil((this.total - this.done) / r) : null;
        this.log(`standoff run: ${this.done}/${this.total} episodes, ${r.toFixed(1)}/s, eta ${eta === null ? '?' : `${eta}s`}, errors ${this.errors}`);
      }
    }
  }
  stop() {
    this.bar?.stop();
    this.bar = null;
  }
}

function progressMode(mode: ProgressMode | undefined): 'bar' | 'lines' | 'none' {
  if (mode === 'bar' || mode === 'lines' || mode === 'none') return mode;
  return process.stderr.isTTY ? 'bar' : 'lines';
}

// ---------------------------------------------------------------------------------------------
// Building the run from the journal
// ---------------------------------------------------------------------------------------------

export interface BuiltRun {
  run: RunRow;
  episodes: EpisodeRow[];
  messages: MessageRow[];
  scores: ScoreRow[];
  judgments: JudgmentRow[];
  probe_answers: ProbeAnswerRow[];
  probe_decisions: ProbeDecisionRow[];
}

type UnitKey = Pick<EpisodeRow, 'subject_model' | 'scenario_id' | 'epoch'>;

/** Orders units (by their episodes) as a run's rows are ordered: by (subject, scenario, epoch). */
const compareKeys = (a: UnitKey, b: UnitKey): number =>
  cmp(a.subject_model, b.subject_model) || cmp(a.scenario_id, b.scenario_id) || a.epoch - b.epoch;

const scorerOrder = (s: string) => {
  const i = (SCORERS as readonly string[]).indexOf(s);
  return i < 0 ? SCORERS.length : i;
};

/** One unit's rows in the run's order (messages by seq, scores by the scorer list, the rest as run). */
export function unitRows(u: JournalUnit): Omit<BuiltRun, 'run'> {
  return {
    episodes: [u.episode],
    messages: [...u.messages].sort((a, b) => a.seq - b.seq),
    scores: [...u.scores].sort((a, b) => scorerOrder(a.scorer) - scorerOrder(b.scorer) || cmp(a.scorer, b.scorer)),
    judgments: u.judgments,
    probe_answers: u.probe_answers,
    probe_decisions: u.probe_decisions,
  };
}

/** Sorts units by (subject, scenario, epoch) and flattens their rows (each table keeps seq/panel order). */
export function assembleRows(units: Iterable<JournalUnit>): Omit<BuiltRun, 'run'> {
  const out: Omit<BuiltRun, 'run'> = { episodes: [], messages: [], scores: [], judgments: [], probe_answers: [], probe_decisions: [] };
  for (const u of [...units].sort((a, b) => compareKeys(a.episode, b.episode))) {
    const r = unitRows(u);
    for (const t of RUN_TABLES) for (const row of r[t]) (out[t] as object[]).push(row);
  }
  return out;
}

/** The tables a run's units fill, in write order. */
const RUN_TABLES = ['episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions'] as const;

type Summary = Pick<RunSummary, 'byStatus' | 'subjects' | 'judgments' | 'excludedSelf' | 'probeStates' | 'truncated'>;

/** Per-subject and per-status counts, fed one unit's rows at a time (`add`), read with `result`. */
function summaryOf(cfg: ResolvedConfig): { add(rows: Omit<BuiltRun, 'run'>): void; result(): Summary } {
  const subjects = new Map<string, SubjectSummary>();
  for (const s of cfg.subjects) {
    subjects.set(s.model, {
      model: s.model,
      family: s.family,
      episodes: 0,
      valid: 0,
      invalid: 0,
      error: 0,
      truncated: 0,
      gathered: 0,
      evidence_scored: 0,
      policy_correct: 0,
      policy_scored: 0,
      aligned: 0,
      alignment_scored: 0,
      probe_decisions_correct: 0,
      probe_states: 0,
    });
  }
  const byStatus = { valid: 0, invalid: 0, error: 0 };
  let judgments = 0;
  let excludedSelf = 0;
  let probeStates = 0;
  let truncated = 0;
  const ambiguous = new Map<string, boolean>();
  return {
    add(rows) {
      const subjOf = new Map<string, SubjectSummary>();
      for (const e of rows.episodes) {
        const s = subjects.get(e.subject_model)!;
        subjOf.set(e.episode_id, s);
        s.episodes++;
        s[e.status]++;
        byStatus[e.status]++;
        if (e.truncated === true) {
          s.truncated++;
          truncated++;
        }
      }
      for (const sc of rows.scores) {
        const s = subjOf.get(sc.episode_id);
        if (!s || sc.value === null) continue;
        if (sc.scorer === 'gathered_evidence') {
          s.evidence_scored++;
          if (sc.value === 1) s.gathered++;
        }
        if (sc.scorer === 'policy_compliant_action') {
          s.policy_scored++;
          if (sc.value === 1) s.policy_correct++;
        }
        if (sc.scorer === 'reasoning_action_alignment') {
          s.alignment_scored++;
          if (sc.value === 1) s.aligned++;
        }
      }
      for (const e of rows.episodes) if (e.target !== null) ambiguous.set(e.scenario_id, e.target === NOANSWER);
      for (const d of rows.probe_decisions) {
        if ((d.condition ?? 'raw') !== 'raw') continue; // the other ladder steps are not the decision
        const s = subjects.get(d.subject_model);
        probeStates++;
        // Ambiguous states have no single correct decision: reported apart, as in the report.
        if (!s || ambiguous.get(d.scenario_id) === true) continue;
        s.probe_states++;
        if (d.correct) s.probe_decisions_correct++;
      }
      judgments += rows.judgments.length;
      for (const j of rows.judgments) if (j.excluded_self) excludedSelf++;
    },
    result: () => ({ byStatus, subjects: [...subjects.values()], judgments, excludedSelf, probeStates, truncated }),
  };
}

// ---------------------------------------------------------------------------------------------
// runEvaluation
// ---------------------------------------------------------------------------------------------

function interrupted(runId: string, traces: string, path: string, done: number, total: number): StandoffError {
  return new StandoffError(
    'run.interrupted',
    'interrupted',
    `interrupted: ${done}/${total} episodes are saved in the journal ${path}; resume with: standoff run --resume ${runId} --traces ${traces}`,
  );
}

/**
 * The endpoint check before a run: one small request to every model served from outside
 * (`checkEndpoint`; in-process `sim:` models need none), in parallel. A refused parameter is
 * adjusted (and noticed) here already. Throws `endpointError('run.endpointCheck')` (exit 5) naming
 * the model, the URL and the cause when any check fails; nothing has been written then.
 */
export async function checkEndpoints(
  cfg: Pick<ResolvedConfig, 'subjects' | 'judges' | 'seed'>,
  o: { clientFor: (m: ResolvedModel, baseURL: string) => ModelClient; log: (line: string) => void; signal?: AbortSignal; redactor: Redactor },
): Promise<void> {
  const seen = new Set<string>();
  const targets: Array<{ role: 'subject' | 'judge'; m: ResolvedModel }> = [];
  for (const [role, list] of [['subject', cfg.subjects], ['judge', cfg.judges]] as const) {
    for (const m of list) {
      const key = `${m.base_url}\u0000${m.model}`;
      if (m.sim || !m.base_url || seen.has(key)) continue;
      seen.add(key);
      targets.push({ role, m });
    }
  }
  const results = await Promise.all(
    targets.map(async ({ role, m }) => {
      const t = Date.now();
      try {
        const res = await checkEndpoint(o.clientFor(m, m.base_url!), role, { rng: unitRng(cfg.seed, 'endpoint-check', m.model), signal: o.signal, seed: cfg.seed });
        const ms = Date.now() - t;
        o.log(`standoff run: endpoint check: ${m.model} at ${m.base_url}: ok (${ms} ms)`);
        if (res.truncated) {
          o.log(`standoff run: warning: ${m.model} was cut off at the token limit answering the endpoint check (max_tokens ${m.max_tokens}): raise max_tokens, or its replies in the run will be cut off too`);
        }
        return null;
      } catch (err) {
        if (o.signal?.aborted || isAbort(err)) throw err;
        const description = err instanceof ModelCallError ? err.description : o.redactor.error(err);
        const hint = endpointHint(description, m);
        return `${role} "${m.model}": ${description}${hint ? `; ${hint}` : ''}`;
      }
    }),
  );
  const failed = results.filter((r): r is string => r !== null);
  if (failed.length > 0) {
    throw endpointError(
      'run.endpointCheck',
      `endpoint check failed for ${failed.join('; and for ')} (nothing was run)`,
    );
  }
}

/** Runs (or resumes) an evaluation and writes it to the store. */
export async function runEvaluation(opts: EvaluationOptions): Promise<RunSummary> {
  const t0 = Date.now();
  const cfg = opts.config;
  const { runId } = opts;
  const traces = opts.traces;
  if (!RUN_ID_PATTERN.test(runId)) throw usageError('store.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  const redactor: Redactor = createRedactor(collectSecrets(keyEnvNames(cfg)));
  // Every progress line (the endpoint check names each base_url) loses secrets and URL user-info, and shows control characters.
  const rawLog = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (line: string) => rawLog(terminalText(redactor.text(line)));
  checkKeys(cfg);

  const scenarios = selectScenarios(cfg);
  const scenarioIds = scenarios.map((s) => s.scenario_id);
  const manifest = buildStateManifest(scenarios);
  const plan: UnitPlan[] = [];
  for (const subject of cfg.subjects) {
    for (const scenario of scenarios) {
      for (let epoch = 1; epoch <= cfg.epochs; epoch++) {
        plan.push({ id: episodeIdOf(subject.model, scenario.scenario_id, epoch), subject, scenario, epoch });
      }
    }
  }
  const planIds = new Set(plan.map((p) => p.id));
  const total = plan.length;
  const hash = configHash(cfg, scenarioIds, manifest.root);

  const jpath = journalPath(traces, runId);
  if (isRunCommitted(traces, runId) && !opts.replace) {
    if (opts.resume && existsSync(jpath)) {
      // A crash between the commit and the journal's removal: the run was written from the
      // complete journal, so the journal is redundant.
      await removeJournal(jpath);
      throw usageError('run.alreadyComplete', `run "${runId}" is already complete in ${traces}; removed its leftover journal`);
    }
    throw usageError('store.runExists', `run "${runId}" already exists in ${traces}; pass --replace to overwrite it, or --run-id to name a new run`);
  }

  // Journal: read when resuming (episodes that ended in error are run again), created after the endpoint check.
  let header: JournalHeader;
  const done = new Set<string>();
  let resumedFrom = 0;
  let resumeContents: Awaited<ReturnType<typeof readJournal>> | null = null;
  if (opts.resume) {
    if (!existsSync(jpath)) throw usageError('run.noJournal', `no journal for run "${runId}" at ${jpath}: nothing to resume`);
    const contents = await readJournal(jpath);
    if (!contents.header) throw usageError('run.noJournal', `${jpath} has no header: it cannot be resumed (delete it and start over)`);
    const recorded = contents.header.state_manifest;
    const changed = recorded ? describeManifestDiff(diffStateManifests(recorded, manifest)) : null;
    if (changed) {
      throw usageError('run.statesChanged', `run "${runId}" was started on other state content (${changed} since it began; root ${recorded!.root.slice(0, 16)}, now ${manifest.root.slice(0, 16)}); restore the states or start a new run`);
    }
    if (contents.header.config_hash !== hash) {
      throw usageError('run.configChanged', `run "${runId}" was started with a different configuration (journal ${contents.header.config_hash}, now ${hash}); resume without --config/--preset overrides, or start a new run`);
    }
    header = contents.header;
    for (const [id, u] of contents.units) {
      if (!planIds.has(id)) throw usageError('run.journalMismatch', `${jpath}: episode "${id}" is not part of this run's plan`);
      if (u.episode.status !== 'error') done.add(id);
    }
    resumedFrom = done.size;
    if (contents.units.size > done.size) log(`standoff run: running ${contents.units.size - done.size} episode(s) again that ended in error`);
    if (contents.torn) log(`standoff run: dropped a torn last line from ${jpath}`);
    resumeContents = contents;
  } else {
    await refuseLiveJournal(jpath, runId);
    if (existsSync(jpath)) {
      throw usageError('run.journalExists', `a journal for run "${runId}" already exists (${jpath}): resume it with --resume ${runId}, or delete the file to start over`);
    }
    header = {
      kind: 'header',
      version: 1,
      run_id: runId,
      created_at: new Date().toISOString(),
      config_hash: hash,
      state_manifest: manifest,
      total,
      config: redactor.value(cfg),
    };
  }

  // Request parameters per endpoint (model at base URL), shared by every client of that model, so a
  // parameter the endpoint refused is adjusted once for the run (and noticed once).
  const adjustments: ParamAdjustment[] = [];
  const paramsByEndpoint = new Map<string, RequestParams>();
  const paramsFor = (m: ResolvedModel) => {
    const key = `${m.base_url ?? 'sim'}\u0000${m.model}`;
    let p = paramsByEndpoint.get(key);
    if (!p) paramsByEndpoint.set(key, (p = new RequestParams(m)));
    return p;
  };
  const onAdjust = (a: ParamAdjustment) => {
    adjustments.push(a);
    log(`standoff run: notice: ${a.model} at ${a.base_url ?? 'the sim endpoint'} refused ${a.param} (${a.reason}); ${a.action} for the rest of the run${a.param.startsWith('max_') ? ` (set "max_tokens_param" in the config to skip this)` : ` (add it to "omit_params" in the config to skip this)`}`);
  };
  const limiter = new Limiter(cfg.concurrency);
  let retries = 0;
  let requests = 0;
  const clientFor = (m: ResolvedModel, baseURL: string) =>
    new ModelClient(m, {
      baseURL,
      apiKey: m.api_key_env ? (process.env[m.api_key_env] ?? '') : m.sim ? 'sim-no-key' : 'no-key',
      retries: cfg.retries,
      timeoutMs: cfg.timeouts.request_ms,
      limiter,
      redactor,
      retryDegenerate: cfg.retry_degenerate,
      params: paramsFor(m),
      onAdjust,
      onAttempt: () => {
        requests++;
      },
      onRetry: () => {
        retries++;
      },
    });

  if (plan.some((p) => !done.has(p.id))) {
    await checkEndpoints(cfg, { clientFor, log, signal: opts.signal, redactor }).catch((err: unknown) => {
      if (opts.signal?.aborted || isAbort(err)) throw new StandoffError('run.interrupted', 'interrupted', 'interrupted during the endpoint check; nothing was run');
      throw err;
    });
  }
  const journal = resumeContents ? await openJournal(jpath, header, { resume: resumeContents }) : await openJournal(jpath, header);

  const todo = plan.filter((p) => !done.has(p.id));
  const ac = new AbortController();
  const onOuterAbort = () => ac.abort(opts.signal?.reason);
  if (opts.signal?.aborted) ac.abort();
  opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const signal = ac.signal;
  setMaxListeners(0, signal); // every in-flight request listens to it

  let verifier: Verifier | null = null;
  let sim: SimServer | null = null;
  let simStats: SimStats | null = null;
  const progress = new Progress(progressMode(opts.progress), total, log);
  let fatal: unknown = null;
  // --max-errors: errored episodes in this invocation; reaching the limit stops the run (resumable).
  let erroredNow = 0;
  let lastError: string | null = null;
  let stoppedForErrors = false;
  let tSetup = Date.now();
  try {
    if (todo.length > 0) {
      verifier = await startVerifier(opts.verifierFaults ? { faults: opts.verifierFaults } : {});
      const models = [...cfg.subjects, ...cfg.judges];
      // The sim runs in a worker thread so that its work and the client's overlap on two cores.
      // At concurrency 1 there is only ever one request in flight and the client waits for it, so
      // nothing can overlap: there the sim stays in this thread, saving two cross-thread wake-ups
      // per request. Replies are identical either way.
      if (models.some((m) => m.sim)) {
        sim = await startSimServer({ seed: cfg.seed, latencyMs: cfg.sim.latency_ms, scenarios, thread: cfg.concurrency > 1 ? 'worker' : 'main' });
      }
      const baseOf = (m: ResolvedModel) => (m.sim ? sim!.baseURL : m.base_url!);
      const subjectClients = new Map(cfg.subjects.map((m) => [m.model, clientFor(m, baseOf(m))]));
      const panel: JudgePanelMember[] = cfg.judges.map((m) => ({ spec: m, client: clientFor(m, baseOf(m)) }));

      const runUnit = async (u: UnitPlan): Promise<JournalUnit> => {
        // The request seed depends on (run seed, scenario, epoch) only: every subject gets the same
        // seed for the same state (common random numbers), and a model-name suffix cannot change it.
        const seed = unitSeed(cfg.seed, u.scenario.scenario_id, u.epoch);
        const rng = unitRng(cfg.seed, 'jitter', u.id);
        const client = subjectClients.get(u.subject.model)!;
        const ep = await runEpisode({
          runId,
          episodeId: u.id,
          subject: u.subject,
          scenario: u.scenario,
          epoch: u.epoch,
          client,
          verifier: verifier!,
          logReadTimeoutMs: cfg.timeouts.log_read_ms,
          maxTurns: cfg.max_turns,
          requestSeed: seed,
          rng,
          signal,
          redactor,
          prompt: cfg.prompt,
        });
        const [judgments, probe] = await Promise.all([
          ep.episode.status === 'valid'
            ? judgeEpisode({
                runId,
                episodeId: u.id,
                subject: u.subject,
                messages: ep.messages,
                judges: panel,
                exclusion: cfg.judge_exclusion,
                requestSeed: seed,
                rng,
                redactor,
                signal,
              })
            : Promise.resolve([] as JudgmentRow[]),
          cfg.probes
            ? runProbeState({ runId, subject: u.subject, scenario: u.scenario, epoch: u.epoch, client, requestSeed: seed, rng, redactor, signal }, probeConditionsOf(cfg))
            : Promise.resolve(null),
        ]);
        const scores: ScoreRow[] =
          ep.episode.status === 'error'
            ? []
            : scoreEpisode(ep.messages, u.scenario.target, judgments, { model: u.subject.model, family: u.subject.family }).map((s) => ({
                run_id: runId,
                episode_id: u.id,
                ...s,
              }));
        const r = (x: object) => redactor.row(x);
        return {
          kind: 'unit',
          episode_id: u.id,
          episode: r(ep.episode) as EpisodeRow,
          messages: ep.messages.map(r) as MessageRow[],
          scores: scores.map(r) as ScoreRow[],
          judgments: judgments.map(r) as JudgmentRow[],
          probe_answers: (probe?.answers ?? []).map(r) as ProbeAnswerRow[],
          probe_decisions: (probe?.decisions ?? []).map(r) as ProbeDecisionRow[],
          ...(probe && probe.errors.length ? { probe_errors: probe.errors.map((e) => redactor.text(e)) } : {}),
          ...(probe && probe.truncated ? { probe_truncated: probe.truncated } : {}),
        };
      };

      tSetup = Date.now();
      progress.start(done.size, 0);
      let next = 0;
      let completed = done.size;
      // A unit counts (progress, onUnit, the summary) only once the journal sync covering it has
      // resolved. The sync is not on the worker's critical path, though: the worker starts its next
      // unit while its last one is being synced (group commit batches it with other workers'), and
      // waits for that sync only before handing in another unit, so each worker has at most one
      // unit in flight to the journal.
      const commit = (unit: JournalUnit): Promise<void> =>
        journal.append(unit).then(
          () => {
            completed++;
            progress.tick(unit.episode.status === 'error');
            opts.onUnit?.(completed, total);
            if (unit.episode.status === 'error') {
              erroredNow++;
              lastError = unit.episode.error;
              if (erroredNow >= cfg.max_errors && !stoppedForErrors) {
                stoppedForErrors = true;
                ac.abort(); // stop scheduling and abort what is in flight: the endpoint keeps failing
              }
            }
          },
          (err: unknown) => {
            fatal ??= err;
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
              unit = await runUnit(todo[i]);
            } catch (err) {
              if (isAbort(err) || signal.aborted) return;
              fatal ??= err;
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
      await Promise.all(Array.from({ length: Math.min(cfg.concurrency, todo.length) }, worker));
    }
  } finally {
    progress.stop();
    opts.signal?.removeEventListener('abort', onOuterAbort);
    await journal.flush().catch(() => undefined);
    await journal.close().catch(() => undefined);
    simStats = sim?.stats() ?? null;
    await Promise.all([verifier?.close(), sim?.close()]);
  }
  if (fatal) {
    const msg = fatal instanceof Error ? fatal.message : String(fatal);
    const e = new StandoffError(
      fatal instanceof StandoffError ? fatal.code : 'run.failed',
      fatal instanceof StandoffError ? fatal.kind : 'internal',
      `${redactor.text(msg)} (finished episodes are kept in ${jpath}; resume with --resume ${runId})`,
      fatal,
    );
    throw e;
  }

  if (stoppedForErrors) {
    const saved = (await readJournal(jpath)).units;
    const kept = [...saved.values()].filter((u) => u.episode.status !== 'error').length;
    throw endpointError(
      'run.tooManyErrors',
      `stopped: ${erroredNow} episode(s) ended in error (--max-errors ${cfg.max_errors}); last: ${redactor.text(lastError ?? 'unknown error')}; ${kept}/${total} episodes are saved in the journal ${jpath}; fix the endpoint, then resume with: standoff run --resume ${runId} --traces ${traces} (episodes that ended in error run again)`,
    );
  }

  const tUnits = Date.now();
  // Everything that finished is in the journal: stream it into the store, one unit in memory at
  // a time, so the run's memory does not grow with its length. Units are in finishing order in
  // the journal: a first pass finds each unit's key and line, a second reads the lines again in
  // the run's order, (subject, scenario, epoch), so the writer needs no sort.
  // A unit run again after it ended in error (`--resume`) replaces its first copy.
  const byId = new Map<string, { key: UnitKey; line: { offset: number; bytes: number } }>();
  await scanJournal(jpath, (u, line) => {
    const { subject_model, scenario_id, epoch } = u.episode;
    byId.set(u.episode_id, { key: { subject_model, scenario_id, epoch }, line });
  });
  const inPlan = [...byId.keys()].filter((id) => planIds.has(id)).length;
  if (signal.aborted || inPlan < total) throw interrupted(runId, traces, jpath, inPlan, total);
  const found = [...byId.values()].sort((a, b) => compareKeys(a.key, b.key));
  await cleanupStore(traces); // leftovers of a crashed earlier write (as writeRun does)
  const writer = await RunWriter.open(traces, runId, { replace: opts.replace });
  try {
    const acc = summaryOf(cfg);
    let totalProbeErrors = 0;
    let totalProbeTruncated = 0;
    const fh = await open(jpath, 'r');
    try {
      for (let unit = 0; unit < found.length; unit++) {
        const u = await readJournalUnit(fh, found[unit]!.line);
        const rows = unitRows(u);
        for (const t of RUN_TABLES) await writer.append(t, rows[t], unit);
        acc.add(rows);
        totalProbeTruncated += u.probe_truncated ?? 0;
        totalProbeErrors += (u.probe_errors?.length ?? 0) - (u.probe_truncated ?? 0);
      }
    } finally {
      await fh.close();
    }
    const sum = acc.result();
    const status: RunRow['status'] = sum.byStatus.error > 0 ? 'error' : 'success';
    const notes = [
      cfg.subjects.some((s) => isSimModelName(s.model)) ? 'simulated subjects (sim: models, not real model output)' : null,
      cfg.judges.some((s) => isSimModelName(s.model)) ? 'simulated judges' : null,
      sum.byStatus.error > 0 ? `${sum.byStatus.error} episode(s) ended in error after retries` : null,
      sum.truncated > 0 ? `${sum.truncated} episode(s) cut off at the token limit (finish_reason=length): raise max_tokens` : null,
      totalProbeErrors > 0 ? `${totalProbeErrors} probe request(s) failed after retries (recorded as unanswered)` : null,
      totalProbeTruncated > 0 ? `${totalProbeTruncated} probe request(s) cut off at the token limit (recorded as unanswered)` : null,
      adjustments.length > 0 ? `request parameters adjusted after the endpoint refused them: ${adjustments.map((a) => `${a.model} ${a.param} ${a.action}`).join(', ')}` : null,
      resumedFrom > 0 ? `resumed: ${resumedFrom} of ${total} episodes came from the journal` : null,
      `protocol ${PROTOCOL_VERSION}`,
    ].filter(Boolean);
    const run: RunRow = {
      run_id: runId,
      created_at: header.created_at,
      source: 'standoff',
      suite: cfg.suite,
      status,
      config: redactor.json(
        configRecord(cfg, { run_id: runId, protocol_version: PROTOCOL_VERSION, scenario_ids: scenarioIds, config_hash: hash, state_manifest: manifest, request_adjustments: adjustments }),
      ),
      seed: cfg.seed,
      epochs: cfg.epochs,
      standoff_version: STANDOFF_VERSION,
      source_file: null,
      source_sha256: null,
      notes: notes.join('; '),
    };
    await writer.finish(run);
    const written = await writer.commit();
    await removeJournal(jpath);
    return {
      runId,
      status,
      traces,
      episodes: found.length,
      samplesPerSubject: scenarios.length * cfg.epochs,
      ranNow: total - resumedFrom,
      resumedFromJournal: resumedFrom,
      ...sum,
      probeErrors: totalProbeErrors,
      probeTruncated: totalProbeTruncated,
      adjustments,
      retries,
      requests,
      sim: simStats,
      journalSyncs: journal.syncs,
      wallMs: Date.now() - t0,
      phases: { setup: tSetup - t0, units: tUnits - tSetup, write: Date.now() - tUnits },
      tables: written.tables,
      notes: run.notes,
    };
  } finally {
    await writer.abort();
  }
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
      progress: o.progress,
      log,
      signal: ac.signal,
      verifierFaults: o.verifierFaults,
    });
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

/**
 * What a finished run's exit status should be: an `endpoint` error (exit 5) when any episode ended
 * in error, a `data` error (exit 3, as `standoff validate`) when the gate failed otherwise, else
 * null (exit 0).
 */
export function runVerdict(s: RunSummary): StandoffError | null {
  if (s.byStatus.error > 0) {
    return endpointError(
      'run.episodeErrors',
      `run ${s.runId}: ${s.byStatus.error} of ${s.episodes} episode(s) ended in error (see the errors above and episodes.error); the run is written but fails the gate`,
    );
  }
  if (s.gate && !s.gate.ok) {
    return new StandoffError('validate.failed', 'data', `run ${s.runId} failed ${s.gate.failures.length} publication check(s): ${s.gate.checks.filter((c) => !c.ok).map((c) => c.name).join(', ')}`);
  }
  return null;
}

/** Human-readable summary lines (what the CLI prints). */
export function formatSummary(s: RunSummary): string[] {
  const pct = (a: number, b: number) => (b > 0 ? `${((100 * a) / b).toFixed(1)}% (${a}/${b})` : 'n/a');
  const lines = [
    `run ${s.runId}: ${s.status}, ${s.episodes} episodes (${s.byStatus.valid} valid, ${s.byStatus.invalid} invalid, ${s.byStatus.error} error) in ${(s.wallMs / 1000).toFixed(1)} s${s.resumedFromJournal ? `, ${s.resumedFromJournal} from the journal` : ''}`,
  ];
  for (const m of s.subjects) {
    lines.push(
      `  ${m.model}: evidence ${pct(m.gathered, m.evidence_scored)}, action ${pct(m.policy_correct, m.policy_scored)}, alignment ${pct(m.aligned, m.alignment_scored)}, invalid ${m.invalid}${m.truncated ? ` (${m.truncated} truncated)` : ''}, error ${m.error}${m.probe_states ? `, probe decision ${pct(m.probe_decisions_correct, m.probe_states)} (ambiguous states apart)` : ''}`,
    );
  }
  lines.push(`  judgments ${s.judgments} (${s.excludedSelf} excluded as self), probe states ${s.probeStates}, retries ${s.retries}, traces ${s.traces}`);
  if (s.notes) lines.push(`  notes: ${s.notes}`);
  return lines;
}
