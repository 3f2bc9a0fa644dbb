/**
 * The aggregate metrics an Inspect log reports about itself (header `results.scores[].metrics`),
 * as {@link ReportedMetric}s for `runs.config.reported_metrics` (see `src/ingest/reported-metrics.ts`).
 *
 * Each score gives one entry per metric; its `stderr` metric (Inspect's `stderr()`) is folded into
 * the other entries' `stderr` rather than listed as a metric of its own. `scorer` is the score's
 * name in the header: for a plain score it is the scorer the samples carry (`scores.scorer`); for a
 * dict-valued score the samples' scorers are `<scorer>/<key>` (see `mapScores` in `./map.ts`).
 */
import { finiteOrNull, type ReportedMetric } from '../reported-metrics.ts';
import type { InspectHeader } from './read-eval.ts';

interface HeaderScore {
  name?: unknown;
  scorer?: unknown;
  reducer?: unknown;
  metrics?: Record<string, { name?: unknown; value?: unknown }> | null;
}

/** Reported metrics of a log header; empty when it has no results (a crashed or unfinished eval). */
export function inspectReportedMetrics(header: InspectHeader): ReportedMetric[] {
  const scores = (header.results as { scores?: unknown } | null | undefined)?.scores;
  if (!Array.isArray(scores)) return [];
  const out: ReportedMetric[] = [];
  for (const s of scores as HeaderScore[]) {
    if (!s || typeof s !== 'object' || typeof s.name !== 'string') continue;
    const metrics = s.metrics && typeof s.metrics === 'object' ? s.metrics : {};
    const stderr = finiteOrNull(metrics.stderr?.value);
    for (const [key, m] of Object.entries(metrics)) {
      if (key === 'stderr' || !m || typeof m !== 'object') continue;
      const entry: ReportedMetric = {
        task: header.eval.task,
        metric: typeof m.name === 'string' ? m.name : key,
        filter: null,
        value: finiteOrNull(m.value),
        stderr,
        scorer: s.name,
      };
      if (typeof s.scorer === 'string') entry.inspect_scorer = s.scorer;
      if (typeof s.reducer === 'string') entry.reducer = s.reducer;
      out.push(entry);
    }
  }
  return out;
}
