/**
 * The aggregate numbers an evaluation framework reported about itself, as ingests store them in
 * `runs.config` under the key `reported_metrics` (an array of {@link ReportedMetric}). They are
 * kept verbatim so a report can show them beside the values Standoff recomputes from the per-sample
 * rows, and flag any difference.
 *
 * - lm-evaluation-harness (`src/ingest/lm-eval`): one entry per `"<metric>,<filter>"` key of the
 *   task's entry in `results_*.json` (and of every group the task belongs to, with `group: true`).
 * - Inspect AI (`src/ingest/inspect`): one entry per metric of each score in the log header's
 *   `results.scores` (`filter` is null there; the `stderr` metric is folded into `stderr`).
 *
 * @example
 * // runs.config of an lm-eval run of gsm8k
 * { "reported_metrics": [
 *   { "task": "gsm8k", "metric": "exact_match", "filter": "strict-match", "value": 0.1,
 *     "stderr": 0.1, "scorer": "exact_match/strict-match" } ] }
 */
export interface ReportedMetric {
  /** Task (lm-eval task or group name; Inspect task). */
  task: string;
  /** Metric name as the framework spells it (`acc`, `exact_match`, `accuracy`, `mean`, ...). */
  metric: string;
  /** lm-eval filter (`none`, `strict-match`, `flexible-extract`, ...); null for Inspect. */
  filter: string | null;
  /** The reported value; null when it is not a finite number (`"N/A"`, NaN, a list). */
  value: number | null;
  /** The reported standard error; null when absent or not a finite number (lm-eval's `"N/A"`). */
  stderr: number | null;
  /**
   * The Standoff scorer (`scores.scorer`) holding the per-sample values this aggregate summarises,
   * when the samples carry one per sample; null when they do not (a corpus-level metric such as
   * lm-eval's `f1` or `bleu`, whose per-sample values are not numbers). For Inspect this is the
   * score's name in the header.
   */
  scorer: string | null;
  /** lm-eval: the entry is a group aggregate over `subtasks` (leaf tasks), not this run's task. */
  group?: true;
  /** lm-eval groups: the leaf tasks the group aggregates. */
  subtasks?: string[];
  /** Inspect: the scorer's registry name and the epoch reducer, when the header gives them. */
  inspect_scorer?: string;
  reducer?: string;
}

/** A reported number as stored: finite numbers only (NaN, Infinity, "N/A" and others become null). */
export const finiteOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
