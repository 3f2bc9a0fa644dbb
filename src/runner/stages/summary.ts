/**
 * Stage 5, summarise: the run's counts per subject and status (fed one unit's rows at a time
 * while the commit stage writes them), the summary `standoff run` prints, and the exit verdict.
 */
import { StandoffError, endpointError } from '../../errors.ts';
import { NOANSWER } from '../../schema/scenario.ts';
import type { RunRow } from '../../schema/tables.ts';
import type { ValidationResult } from '../../store/validate-run.ts';
import type { WriteRunResult } from '../../store/write-run.ts';
import type { ResolvedConfig } from '../config.ts';
import type { ParamAdjustment } from '../endpoint.ts';
import type { SimStats } from '../sim/server.ts';
import type { BuiltRun, ShardSpec } from './types.ts';

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
  /** Sum of the alignment medians (a split panel counts 0.5, as in `ci` and the report) / episodes with an alignment value. */
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
  /** The shard this invocation ran (`--shard i/N`), or null for a whole run. */
  shard: ShardSpec | null;
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
  /** Episodes per subject the run plans (the gate's expected sample count; the whole run's, when sharded). */
  samplesPerSubject: number;
  /** The publication gate over the written run (set by `runCommand`; not for a shard, whose gate is the merged run's). */
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

export type Summary = Pick<RunSummary, 'byStatus' | 'subjects' | 'judgments' | 'excludedSelf' | 'probeStates' | 'truncated'>;

/** Per-subject and per-status counts, fed one unit's rows at a time (`add`), read with `result`. */
export function summaryOf(cfg: ResolvedConfig): { add(rows: Omit<BuiltRun, 'run'>): void; result(): Summary } {
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
          s.aligned += sc.value; // the panel median: 0, 1, or 0.5 where two judges split (as ci and the report count it)
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


/** Stage 5: the run's summary from what the stages returned. */
export function summariseRun(
  plan: { runId: string; traces: string; shard: ShardSpec | null; total: number; resumedFrom: number; scenarios: readonly unknown[]; cfg: Pick<ResolvedConfig, 'epochs'> },
  clients: { adjustments: ParamAdjustment[]; counters: { retries: number; requests: number } },
  ran: { simStats: SimStats | null; journalSyncs: number; unitsStarted: number },
  committed: { summary: Summary; episodes: number; probeErrors: number; probeTruncated: number; status: RunRow['status']; notes: string; tables: WriteRunResult['tables'] },
  times: { t0: number; unitsEnded: number },
): RunSummary {
  return {
    runId: plan.runId,
    status: committed.status,
    traces: plan.traces,
    shard: plan.shard,
    episodes: committed.episodes,
    samplesPerSubject: plan.scenarios.length * plan.cfg.epochs,
    ranNow: plan.total - plan.resumedFrom,
    resumedFromJournal: plan.resumedFrom,
    ...committed.summary,
    probeErrors: committed.probeErrors,
    probeTruncated: committed.probeTruncated,
    adjustments: clients.adjustments,
    retries: clients.counters.retries,
    requests: clients.counters.requests,
    sim: ran.simStats,
    journalSyncs: ran.journalSyncs,
    wallMs: Date.now() - times.t0,
    phases: { setup: ran.unitsStarted - times.t0, units: times.unitsEnded - ran.unitsStarted, write: Date.now() - times.unitsEnded },
    tables: committed.tables,
    notes: committed.notes,
  };
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
    `run ${s.runId}${s.shard ? ` shard ${s.shard.index}/${s.shard.count}` : ''}: ${s.status}, ${s.episodes} episodes (${s.byStatus.valid} valid, ${s.byStatus.invalid} invalid, ${s.byStatus.error} error) in ${(s.wallMs / 1000).toFixed(1)} s${s.resumedFromJournal ? `, ${s.resumedFromJournal} from the journal` : ''}`,
  ];
  for (const m of s.subjects) {
    lines.push(
      `  ${m.model}: evidence ${pct(m.gathered, m.evidence_scored)}, action ${pct(m.policy_correct, m.policy_scored)}, alignment ${pct(m.aligned, m.alignment_scored)}, invalid ${m.invalid}${m.truncated ? ` (${m.truncated} truncated)` : ''}, error ${m.error}${m.probe_states ? `, probe decision ${pct(m.probe_decisions_correct, m.probe_states)} (ambiguous states apart)` : ''}`,
    );
  }
  lines.push(`  judgments ${s.judgments} (${s.excludedSelf} excluded as self), probe states ${s.probeStates}, retries ${s.retries}, traces ${s.traces}`);
  if (s.notes) lines.push(`  notes: ${s.notes}`);
  if (s.shard) lines.push(`  shard ${s.shard.index}/${s.shard.count}: no publication gate for a shard; merge the shards (standoff merge OUT STORE...), then standoff validate`);
  return lines;
}
