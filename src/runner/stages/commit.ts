/**
 * Stage 4, commit: everything that finished is in the journal; it is streamed into the store, one
 * unit in memory at a time, so the run's memory does not grow with its length. Units are in
 * finishing order in the journal: a first pass finds each unit's key and line, a second reads the
 * lines again in the run's order, (subject, scenario, epoch), into a `RunWriter`, which commits the
 * run atomically (`runs` last); then the journal is deleted. A unit run again after it ended in
 * error (`--resume`) replaces its first copy.
 */
import { open } from 'node:fs/promises';
import { StandoffError } from '../../errors.ts';
import type { EpisodeRow, RunRow } from '../../schema/tables.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { RunWriter } from '../../store/run-writer.ts';
import { cleanupStore, type WriteRunResult } from '../../store/write-run.ts';
import { configRecord, isSimModelName } from '../config.ts';
import type { ParamAdjustment } from '../endpoint.ts';
import { readJournalUnit, removeJournal, scanJournal, type JournalUnit } from '../journal.ts';
import { PROTOCOL_VERSION } from '../protocol.ts';
import { SCORERS } from '../scorers.ts';
import { cmp } from './plan.ts';
import { summaryOf, type Summary } from './summary.ts';
import type { BuiltRun, RunPlan } from './types.ts';

export type { BuiltRun } from './types.ts';


type UnitKey = Pick<EpisodeRow, 'subject_model' | 'scenario_id' | 'epoch'>;

/** Orders units (by their episodes) as a run's rows are ordered: by (subject, scenario, epoch). */
export const compareKeys = (a: UnitKey, b: UnitKey): number =>
  cmp(a.subject_model, b.subject_model) || cmp(a.scenario_id, b.scenario_id) || a.epoch - b.epoch;

const scorerOrder = (s: string) => {
  const i = (SCORERS as readonly string[]).indexOf(s);
  return i < 0 ? SCORERS.length : i;
};

/** The tables a run's units fill, in write order. */
export const RUN_TABLES = ['episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions'] as const;

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

function interrupted(runId: string, traces: string, path: string, done: number, total: number): StandoffError {
  return new StandoffError(
    'run.interrupted',
    'interrupted',
    `interrupted: ${done}/${total} episodes are saved in the journal ${path}; resume with: standoff run --resume ${runId} --traces ${traces}`,
  );
}

type JournalLine = { offset: number; bytes: number };

/** First pass: each unit's line in the journal, in the run's order; `run.interrupted` unless the plan is complete. */
async function locateUnits(plan: RunPlan, aborted: boolean): Promise<JournalLine[]> {
  const byId = new Map<string, { key: UnitKey; line: JournalLine }>();
  await scanJournal(plan.jpath, (u, line) => {
    const { subject_model, scenario_id, epoch } = u.episode;
    byId.set(u.episode_id, { key: { subject_model, scenario_id, epoch }, line });
  });
  const inPlan = [...byId.keys()].filter((id) => plan.planIds.has(id)).length;
  if (aborted || inPlan < plan.total) throw interrupted(plan.runId, plan.traces, plan.jpath, inPlan, plan.total);
  return [...byId.values()].sort((a, b) => compareKeys(a.key, b.key)).map((f) => f.line);
}

export interface CommitOutcome {
  summary: Summary;
  episodes: number;
  probeErrors: number;
  probeTruncated: number;
  status: RunRow['status'];
  notes: string;
  tables: WriteRunResult['tables'];
}

type Tally = { summary: Summary; probeErrors: number; probeTruncated: number };

/** Second pass: the units' rows, in the run's order, into the writer and the summary. */
async function appendUnits(plan: RunPlan, lines: JournalLine[], writer: RunWriter): Promise<Tally> {
  const acc = summaryOf(plan.cfg);
  let probeErrors = 0;
  let probeTruncated = 0;
  const fh = await open(plan.jpath, 'r');
  try {
    for (let unit = 0; unit < lines.length; unit++) {
      const u = await readJournalUnit(fh, lines[unit]!);
      const rows = unitRows(u);
      for (const t of RUN_TABLES) await writer.append(t, rows[t], unit);
      acc.add(rows);
      probeTruncated += u.probe_truncated ?? 0;
      probeErrors += (u.probe_errors?.length ?? 0) - (u.probe_truncated ?? 0);
    }
  } finally {
    await fh.close();
  }
  return { summary: acc.result(), probeErrors, probeTruncated };
}

/** What a run row's notes say about it (provenance, errors, adjustments, resume). */
export function runNotes(plan: Pick<RunPlan, 'cfg' | 'resumedFrom' | 'total'>, t: Tally, adjustments: readonly ParamAdjustment[]): string {
  const { cfg } = plan;
  const sum = t.summary;
  return [
    cfg.subjects.some((s) => isSimModelName(s.model)) ? 'simulated subjects (sim: models, not real model output)' : null,
    cfg.judges.some((s) => isSimModelName(s.model)) ? 'simulated judges' : null,
    sum.byStatus.error > 0 ? `${sum.byStatus.error} episode(s) ended in error after retries` : null,
    sum.truncated > 0 ? `${sum.truncated} episode(s) cut off at the token limit (finish_reason=length): raise max_tokens` : null,
    t.probeErrors > 0 ? `${t.probeErrors} probe request(s) failed after retries (recorded as unanswered)` : null,
    t.probeTruncated > 0 ? `${t.probeTruncated} probe request(s) cut off at the token limit (recorded as unanswered)` : null,
    adjustments.length > 0 ? `request parameters adjusted after the endpoint refused them: ${adjustments.map((a) => `${a.model} ${a.param} ${a.action}`).join(', ')}` : null,
    plan.resumedFrom > 0 ? `resumed: ${plan.resumedFrom} of ${plan.total} episodes came from the journal` : null,
    `protocol ${PROTOCOL_VERSION}`,
  ]
    .filter(Boolean)
    .join('; ');
}

/** The run's `runs` row; a shard's records which share it holds (`config.shard`, removed again by `standoff merge`). */
function runRow(plan: RunPlan, status: RunRow['status'], notes: string, adjustments: ParamAdjustment[]): RunRow {
  const { cfg, runId } = plan;
  const extra = { run_id: runId, protocol_version: PROTOCOL_VERSION, scenario_ids: plan.scenarioIds, config_hash: plan.hash, state_manifest: plan.manifest, request_adjustments: adjustments };
  return {
    run_id: runId,
    created_at: plan.header.created_at,
    source: 'standoff',
    suite: cfg.suite,
    status,
    config: plan.redactor.json({ ...configRecord(cfg, extra), ...(plan.shard ? { shard: plan.shard } : {}) }),
    seed: cfg.seed,
    epochs: cfg.epochs,
    standoff_version: STANDOFF_VERSION,
    source_file: null,
    source_sha256: null,
    notes,
  };
}

/** Stage 4 (see the module comment). */
export async function commitRun(plan: RunPlan, o: { aborted: boolean; replace?: boolean; adjustments: ParamAdjustment[] }): Promise<CommitOutcome> {
  const lines = await locateUnits(plan, o.aborted);
  await cleanupStore(plan.traces); // leftovers of a crashed earlier write (as writeRun does)
  const writer = await RunWriter.open(plan.traces, plan.runId, { replace: o.replace });
  try {
    const tally = await appendUnits(plan, lines, writer);
    const status: RunRow['status'] = tally.summary.byStatus.error > 0 ? 'error' : 'success';
    const notes = runNotes(plan, tally, o.adjustments);
    await writer.finish(runRow(plan, status, notes, o.adjustments));
    const written = await writer.commit();
    await removeJournal(plan.jpath);
    return { summary: tally.summary, episodes: lines.length, probeErrors: tally.probeErrors, probeTruncated: tally.probeTruncated, status, notes, tables: written.tables };
  } finally {
    await writer.abort();
  }
}
