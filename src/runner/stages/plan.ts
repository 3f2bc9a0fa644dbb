/**
 * Stage 1, plan the run: the scenarios, the units (subject x scenario x epoch, or this shard's
 * share of them), the config hash, and the journal's state (new, or what a resume continues).
 * Nothing is written here; a run that cannot start fails before any request.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { usageError } from '../../errors.ts';
import { terminalText } from '../../escape.ts';
import { collectSecrets, createRedactor, type Redactor } from '../../redact.ts';
import type { Scenario } from '../../schema/scenario.ts';
import { RUN_ID_PATTERN } from '../../schema/tables.ts';
import { buildStateManifest, describeManifestDiff, diffStateManifests, type StateManifest } from '../../store/state-manifest.ts';
import { isRunCommitted } from '../../store/write-run.ts';
import { checkKeys, keyEnvNames, type ResolvedConfig, type ResolvedModel } from '../config.ts';
import { journalPath, readJournal, refuseLiveJournal, removeJournal, type JournalHeader } from '../journal.ts';
import { PROTOCOL_VERSION } from '../protocol.ts';
import { isDefaultProbeConditions, probeConditionsOf } from '../probe-conditions.ts';
import { loadScenarios } from '../scenarios.ts';
import type { EvaluationOptions, RunPlan, ShardSpec, UnitPlan } from './types.ts';

export const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const episodeIdOf = (subject: string, scenarioId: string, epoch: number) => `${subject}/${scenarioId}/${epoch}`;

/** Deterministic default run id: `<config name>-s<seed>`. */
export function defaultRunId(cfg: Pick<ResolvedConfig, 'name' | 'seed'>): string {
  const id = `${cfg.name}-s${cfg.seed}`;
  if (!RUN_ID_PATTERN.test(id)) throw usageError('run.badRunId', `derived run id "${id}" is not usable; pass --run-id`);
  return id;
}

/** Hash of everything that changes a run's rows (not concurrency, retries, timeouts, latency or the shard). */
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
    ...(isDefaultProbeConditions(probeConditionsOf(cfg)) ? {} : { probe_conditions: probeConditionsOf(cfg) }),
    probes: cfg.probes,
    max_turns: cfg.max_turns,
    retry_degenerate: cfg.retry_degenerate,
    protocol: PROTOCOL_VERSION,
    prompt: cfg.prompt ?? 'neutral',
    // The states' content (runner/manifest.ts): an edited situation text changes the hash.
    ...(statesRoot ? { states_root: statesRoot } : {}),
  };
  return createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16);
}

export function selectScenarios(cfg: ResolvedConfig): Scenario[] {
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

/**
 * Every unit of the run in (subject, scenario, epoch) order; with a shard, the units whose index
 * in that order is `index - 1` modulo `count` (round robin: the shards differ by at most one unit,
 * and together they are the whole plan, each unit once).
 */
export function planUnits(cfg: Pick<ResolvedConfig, 'subjects' | 'epochs'>, scenarios: readonly Scenario[], shard: ShardSpec | null = null): UnitPlan[] {
  const all: UnitPlan[] = [];
  for (const subject of cfg.subjects) {
    for (const scenario of scenarios) {
      for (let epoch = 1; epoch <= cfg.epochs; epoch++) {
        all.push({ id: episodeIdOf(subject.model, scenario.scenario_id, epoch), subject, scenario, epoch });
      }
    }
  }
  return shard ? all.filter((_, i) => i % shard.count === shard.index - 1) : all;
}

const shardText = (s: ShardSpec | null | undefined) => (s ? `${s.index}/${s.count}` : 'none');

/** Parses `--shard i/N` (1 <= i <= N); a usage error (exit 2) otherwise. */
export function parseShardSpec(text: string): ShardSpec {
  const m = /^\s*(\d{1,9})\s*\/\s*(\d{1,9})\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw usageError('run.badShard', `--shard must be i/N with 1 <= i <= N (e.g. 2/8), got "${text}"`);
  }
  return { index, count };
}

/** The run's progress log: every line loses secrets and URL user-info, and shows control characters. */
function runLog(opts: EvaluationOptions, redactor: Redactor): (line: string) => void {
  const rawLog = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  return (line: string) => rawLog(terminalText(redactor.text(line)));
}

type JournalStart = Pick<RunPlan, 'header' | 'done' | 'resumedFrom' | 'resumeContents'>;

/** Reads the journal a resume continues, and checks it belongs to this plan. */
async function resumeJournal(p: Omit<RunPlan, keyof JournalStart>, manifest: StateManifest): Promise<JournalStart> {
  const { jpath, runId } = p;
  if (!existsSync(jpath)) throw usageError('run.noJournal', `no journal for run "${runId}" at ${jpath}: nothing to resume`);
  const contents = await readJournal(jpath);
  if (!contents.header) throw usageError('run.noJournal', `${jpath} has no header: it cannot be resumed (delete it and start over)`);
  const recorded = contents.header.state_manifest;
  const changed = recorded ? describeManifestDiff(diffStateManifests(recorded, manifest)) : null;
  if (changed) {
    throw usageError('run.statesChanged', `run "${runId}" was started on other state content (${changed} since it began; root ${recorded!.root.slice(0, 16)}, now ${manifest.root.slice(0, 16)}); restore the states or start a new run`);
  }
  if (contents.header.config_hash !== p.hash) {
    throw usageError('run.configChanged', `run "${runId}" was started with a different configuration (journal ${contents.header.config_hash}, now ${p.hash}); resume without --config/--preset overrides, or start a new run`);
  }
  if (shardText(contents.header.shard) !== shardText(p.shard)) {
    throw usageError('run.shardChanged', `run "${runId}" was started as shard ${shardText(contents.header.shard)}, now ${shardText(p.shard)}; resume with the same --shard`);
  }
  const done = new Set<string>();
  for (const [id, u] of contents.units) {
    if (!p.planIds.has(id)) throw usageError('run.journalMismatch', `${jpath}: episode "${id}" is not part of this run's plan`);
    if (u.episode.status !== 'error') done.add(id);
  }
  if (contents.units.size > done.size) p.log(`standoff run: running ${contents.units.size - done.size} episode(s) again that ended in error`);
  if (contents.torn) p.log(`standoff run: dropped a torn last line from ${jpath}`);
  return { header: contents.header, done, resumedFrom: done.size, resumeContents: contents };
}

/** A new run's journal header (the journal itself is created after the endpoint check). */
async function newJournal(p: Omit<RunPlan, keyof JournalStart>): Promise<JournalStart> {
  await refuseLiveJournal(p.jpath, p.runId);
  if (existsSync(p.jpath)) {
    throw usageError('run.journalExists', `a journal for run "${p.runId}" already exists (${p.jpath}): resume it with --resume ${p.runId}, or delete the file to start over`);
  }
  const header: JournalHeader = {
    kind: 'header',
    version: 1,
    run_id: p.runId,
    created_at: new Date().toISOString(),
    config_hash: p.hash,
    state_manifest: p.manifest,
    total: p.total,
    ...(p.shard ? { shard: p.shard } : {}),
    config: p.redactor.value(p.cfg),
  };
  return { header, done: new Set(), resumedFrom: 0, resumeContents: null };
}

/** Refuses a run id that is committed already (and clears a resume's leftover journal). */
async function refuseCommitted(opts: EvaluationOptions, jpath: string): Promise<void> {
  const { runId, traces } = opts;
  if (!isRunCommitted(traces, runId) || opts.replace) return;
  if (opts.resume && existsSync(jpath)) {
    // A crash between the commit and the journal's removal: the run was written from the
    // complete journal, so the journal is redundant.
    await removeJournal(jpath);
    throw usageError('run.alreadyComplete', `run "${runId}" is already complete in ${traces}; removed its leftover journal`);
  }
  throw usageError('store.runExists', `run "${runId}" already exists in ${traces}; pass --replace to overwrite it, or --run-id to name a new run`);
}

/** Stage 1: the run's plan (see the module comment). */
export async function planRun(opts: EvaluationOptions): Promise<RunPlan> {
  const cfg = opts.config;
  const { runId, traces } = opts;
  if (!RUN_ID_PATTERN.test(runId)) throw usageError('store.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  const redactor = createRedactor(collectSecrets(keyEnvNames(cfg)));
  const log = runLog(opts, redactor);
  checkKeys(cfg);
  const scenarios = selectScenarios(cfg);
  const scenarioIds = scenarios.map((s) => s.scenario_id);
  const manifest = buildStateManifest(scenarios);
  const shard = opts.shard ?? null;
  const units = planUnits(cfg, scenarios, shard);
  const jpath = journalPath(traces, runId);
  await refuseCommitted(opts, jpath);
  const base = {
    cfg, runId, traces, shard, redactor, log, scenarios, scenarioIds, manifest, units, jpath,
    planIds: new Set(units.map((u) => u.id)),
    total: units.length,
    hash: configHash(cfg, scenarioIds, manifest.root),
  };
  return { ...base, ...(opts.resume ? await resumeJournal(base, manifest) : await newJournal(base)) };
}
