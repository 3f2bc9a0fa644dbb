/**
 * Reconciles the aggregates an lm-eval `results_*.json` reports with the same numbers recomputed
 * from its samples files. Pure: the ingest feeds per-sample values into {@link MetricTally}s while
 * it streams, then `reconcileResults` compares.
 *
 * How the harness aggregates (lm_eval `evaluator_utils._compute_task_aggregations`, `api/metrics.py`):
 * a task's `"<metric>,<filter>"` is its aggregation function over the per-document values logged
 * in the samples (`mean`: `sum(arr) / len(arr)`; `median`: `sorted(arr)[len(arr) // 2]`); the
 * stderr of `mean` is `sample_stddev / sqrt(n)` (n - 1 in the variance), others are bootstrapped
 * (random, so not recomputed). A group's value (`api/group.py` `Group.aggregate`,
 * `aggregate_subtask_metrics`) is the mean of its leaf tasks' values weighted by their sizes
 * (`weight_by_size: true`, the default) or unweighted; the results file does not say which, so
 * both are tried and the matching one is named. Group stderrs are pooled from the subtasks'
 * (`pooled_sample_stderr`) and not recomputed. Corpus-level metrics (per-sample values that are
 * not numbers, or an aggregation other than mean and median, e.g. `f1`, `bleu`, `perplexity`, a
 * custom Python function) are listed as not recomputed.
 *
 * A recomputed number matches when |recomputed - reported| <= {@link TOLERANCE}.abs +
 * {@link TOLERANCE}.rel x |reported| (the harness sums the same floats in the same order, so only
 * a sum in another order or float formatting can differ); anything beyond is `FLAG`ged. The
 * document count is checked against `n-samples[task].effective` exactly.
 */
import type { QueryResult } from '../../store/duckdb.ts';
import { aggregationOf, effectiveSamplesOf, leafTasksOf, reportedEntries, type LmEvalResults } from './results.ts';

export const TOLERANCE = { abs: 1e-9, rel: 1e-9 } as const;

export const withinTolerance = (recomputed: number, reported: number): boolean =>
  (Number.isNaN(recomputed) && Number.isNaN(reported)) || Math.abs(recomputed - reported) <= TOLERANCE.abs + TOLERANCE.rel * Math.abs(reported);

/** Running statistics of one (task, metric, filter)'s per-sample values, in file order. */
export class MetricTally {
  /** Documents with a number. */
  n = 0;
  /** Documents whose value is not a number (a corpus-level metric's item). */
  nonScalar = 0;
  /** Sum in file order (the harness's `sum(arr)`). */
  sum = 0;
  private mean = 0;
  private m2 = 0;
  /** The values, kept only when the aggregation needs them (median). */
  readonly values: number[] | null;

  constructor(keepValues = false) {
    this.values = keepValues ? [] : null;
  }

  add(v: number | null): void {
    if (v === null) {
      this.nonScalar++;
      return;
    }
    this.n++;
    this.sum += v;
    // Welford's update for the variance (B. P. Welford 1962, Technometrics 4(3):419-420).
    const d = v - this.mean;
    this.mean += d / this.n;
    this.m2 += d * (v - this.mean);
    this.values?.push(v);
  }

  /** lm-eval's `mean_stderr`: sqrt(sum((x - mean)^2) / (n - 1)) / sqrt(n); null below two values. */
  meanStderr(): number | null {
    return this.n > 1 ? Math.sqrt(this.m2 / (this.n - 1)) / Math.sqrt(this.n) : null;
  }
}

/** Tallies of one task: key `<metric>\u0000<filter>`. */
export type TaskTallies = Map<string, MetricTally>;
export const tallyKey = (metric: string, filter: string) => `${metric}\u0000${filter}`;

export type ReconcileStatus = 'ok' | 'FLAG' | 'not recomputed';

export interface ReconcileRow {
  results_file: string;
  task: string;
  kind: 'task' | 'group' | 'docs';
  metric: string;
  filter: string;
  /** Documents (task), or documents over the subtasks (group), the recomputed value is over. */
  n: number | null;
  reported: number | null;
  recomputed: number | null;
  diff: number | null;
  reported_stderr: number | null;
  recomputed_stderr: number | null;
  status: ReconcileStatus;
  note: string;
}

interface Recomputed {
  value: number | null;
  stderr: number | null;
  n: number | null;
  note: string;
}

function recomputeTask(r: LmEvalResults, task: string, metric: string, filter: string, tallies: TaskTallies | undefined): Recomputed {
  const t = tallies?.get(tallyKey(metric, filter));
  const agg = aggregationOf(r, task, metric);
  const aggName = agg.includes('\n') || agg.length > 40 ? 'a custom function' : agg;
  if (!t || (t.n === 0 && t.nonScalar === 0)) return { value: null, stderr: null, n: null, note: 'not in the samples file' };
  if (t.nonScalar > 0) return { value: null, stderr: null, n: null, note: `corpus-level metric: per-sample values are not numbers (aggregation ${aggName})` };
  if (agg === 'mean') return { value: t.sum / t.n, stderr: t.meanStderr(), n: t.n, note: 'mean' };
  if (agg === 'median' && t.values) {
    const sorted = [...t.values].sort((a, b) => a - b);
    return { value: sorted[Math.floor(sorted.length / 2)]!, stderr: null, n: t.n, note: 'median (stderr bootstrapped, not recomputed)' };
  }
  return { value: null, stderr: null, n: t.n, note: `aggregation ${aggName} is not recomputed` };
}

function compare(base: Omit<ReconcileRow, 'diff' | 'status' | 'note' | 'recomputed' | 'recomputed_stderr' | 'n'>, rec: Recomputed, extraNote = ''): ReconcileRow {
  const row: ReconcileRow = { ...base, n: rec.n, recomputed: rec.value, recomputed_stderr: rec.stderr, diff: null, status: 'not recomputed', note: rec.note + extraNote };
  if (rec.value === null) return row;
  if (base.reported === null) {
    row.status = 'FLAG';
    row.note += '; the results file reports no number';
    return row;
  }
  row.diff = rec.value - base.reported;
  const valueOk = withinTolerance(rec.value, base.reported);
  // A stderr is compared when both sides have one ("N/A": fewer than two documents, or bootstrap_iters 0).
  const stderrOk = rec.stderr === null || base.reported_stderr === null || withinTolerance(rec.stderr, base.reported_stderr);
  row.status = valueOk && stderrOk ? 'ok' : 'FLAG';
  if (!stderrOk) row.note += `; stderr differs`;
  return row;
}

function recomputeGroup(r: LmEvalResults, group: string, metric: string, filter: string, reported: number | null, tallies: Map<string, TaskTallies>): Recomputed {
  const leaves = leafTasksOf(r, group).filter((t) => reportedEntries(r, t).some((e) => e.metric === metric && e.filter === filter));
  if (leaves.length === 0) return { value: null, stderr: null, n: null, note: 'no subtask reports it' };
  const parts = leaves.map((t) => recomputeTask(r, t, metric, filter, tallies.get(t)));
  const missing = parts.findIndex((p) => p.value === null || p.n === null);
  if (missing >= 0) return { value: null, stderr: null, n: null, note: `subtask ${leaves[missing]} not recomputed (${parts[missing]!.note})` };
  const n = parts.reduce((s, p) => s + p.n!, 0);
  const weighted = parts.reduce((s, p) => s + p.value! * p.n!, 0) / n;
  const unweighted = parts.reduce((s, p) => s + p.value!, 0) / parts.length;
  const k = `${parts.length} subtask${parts.length === 1 ? '' : 's'}`;
  const stderrNote = '; group stderr pooled from the subtasks, not recomputed';
  if (reported !== null && !withinTolerance(weighted, reported) && withinTolerance(unweighted, reported)) {
    return { value: unweighted, stderr: null, n, note: `unweighted mean of ${k}${stderrNote}` };
  }
  return { value: weighted, stderr: null, n, note: `size-weighted mean of ${k}${stderrNote}` };
}

/**
 * Every reported aggregate of a results file beside its recomputed value: the tasks (with their
 * document counts) in `tasks` order, then the groups. `tallies` holds each ingested task's.
 */
export function reconcileResults(r: LmEvalResults, tasks: readonly string[], tallies: Map<string, TaskTallies>, docs: Map<string, number>): ReconcileRow[] {
  const rows: ReconcileRow[] = [];
  for (const task of tasks) {
    const effective = effectiveSamplesOf(r, task);
    const seen = docs.get(task) ?? 0;
    rows.push({
      results_file: r.file,
      task,
      kind: 'docs',
      metric: '(documents)',
      filter: '',
      n: seen,
      reported: effective,
      recomputed: seen,
      diff: effective === null ? null : seen - effective,
      reported_stderr: null,
      recomputed_stderr: null,
      status: effective === null ? 'not recomputed' : seen === effective ? 'ok' : 'FLAG',
      note: effective === null ? 'the results file has no n-samples for the task' : 'distinct doc_id in the samples file vs n-samples.effective',
    });
    for (const e of reportedEntries(r, task)) {
      const base = { results_file: r.file, task, kind: 'task' as const, metric: e.metric, filter: e.filter, reported: e.value, reported_stderr: e.stderr };
      rows.push(compare(base, recomputeTask(r, task, e.metric, e.filter, tallies.get(task))));
    }
  }
  for (const group of r.groups.keys()) {
    for (const e of reportedEntries(r, group)) {
      const base = { results_file: r.file, task: group, kind: 'group' as const, metric: e.metric, filter: e.filter, reported: e.value, reported_stderr: e.stderr };
      const rec = recomputeGroup(r, group, e.metric, e.filter, e.value, tallies);
      const row = compare({ ...base, reported_stderr: null }, rec);
      row.reported_stderr = e.stderr;
      rows.push(row);
    }
  }
  return rows;
}

/** The comparison as a table (for `--format table|csv|markdown`); `withFile` adds the results file as the first column. */
export function reconciliationTable(rows: readonly ReconcileRow[], withFile = false): QueryResult {
  const columns = ['task', 'kind', 'metric', 'filter', 'n', 'reported', 'recomputed', 'diff', 'reported_stderr', 'recomputed_stderr', 'status', 'note'];
  const types = ['VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'BIGINT', 'DOUBLE', 'DOUBLE', 'DOUBLE', 'DOUBLE', 'DOUBLE', 'VARCHAR', 'VARCHAR'];
  const num = (v: number | null) => (v === null ? null : Number.isNaN(v) ? 'NaN' : v);
  return {
    columns: withFile ? ['results_file', ...columns] : columns,
    types: withFile ? ['VARCHAR', ...types] : types,
    rows: rows.map((r) => ({
      ...(withFile ? { results_file: r.results_file } : {}),
      task: r.task,
      kind: r.kind,
      metric: r.metric,
      filter: r.filter,
      n: r.n,
      reported: num(r.reported),
      recomputed: num(r.recomputed),
      diff: num(r.diff),
      reported_stderr: num(r.reported_stderr),
      recomputed_stderr: num(r.recomputed_stderr),
      status: r.status,
      note: r.note,
    })),
  };
}
