/**
 * The Standoff O1 suite's pairwise families for the one pairwise implementation
 * (`sections/pairwise.ts`): one family per metric (evidence gathered, policy action, alignment),
 * each a pivot of the report's observations (`obs_t`: a row per scenario x epoch, a column per
 * subject, NaN where absent or not measured), always clustered on the scenario, whose epochs are
 * correlated pairs. p-values are adjusted within each metric.
 */
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from '../sections/context.ts';
import { RANK_METRICS, RankTotalsBuilder, keepRankTotals } from '../sections/ranking.ts';
import { pairwiseOf, pivotColumns, type Adjust, type PairFamily, type PairwiseSection, type PairwiseView } from '../sections/pairwise.ts';

export const PAIR_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];

export async function o1PairFamilies(ctx: ReportContext): Promise<PairFamily[]> {
  const out: PairFamily[] = [];
  const S = ctx.subjects.length;
  for (const metric of PAIR_METRICS) {
    // The ranking section's items are this pivot's (its `max(value)` per subject beside the mean):
    // one GROUP BY for both sections, its totals kept for the ranking (`keepRankTotals`).
    const rank = S >= 3 && RANK_METRICS.includes(metric) ? new RankTotalsBuilder(ctx, metric) : null;
    const cols = [
      ...ctx.subjects.map((_, i) => `avg(value) FILTER (WHERE subj = ${i}) AS s${i}`),
      ...(rank ? ctx.subjects.map((_, i) => `max(value) FILTER (WHERE subj = ${i}) AS v${i}`) : []),
    ].join(', ');
    const sql = `SELECT sid, epoch, ${cols} FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} GROUP BY sid, epoch ORDER BY sid, epoch`;
    const { sid, col } = await pivotColumns(ctx.conn, sql, S, rank ? (c, rows) => rank.addChunk(c, rows, 2 + S) : undefined);
    if (rank) keepRankTotals(ctx, metric, rank.finish());
    out.push({ suite: ctx.suite, scorer: metric, metric, kind: metric === 'alignment' ? 'bounded' : 'binary', label: METRIC_LABEL[metric].toLowerCase(), subjects: ctx.subjects, clusters: sid, cols: col, clusterWhen: 'always' });
  }
  return out;
}

/** The O1 report's pairwise comparisons (section 5). */
export async function pairwiseSection(ctx: ReportContext, adjust: Adjust = 'holm'): Promise<PairwiseSection> {
  const o = { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, adjust };
  if (ctx.subjects.length < 2) return { ...pairwiseOf([], o), note: 'only one subject: nothing to compare' };
  return pairwiseOf(await o1PairFamilies(ctx), o);
}

export const O1_PAIRWISE_VIEW: PairwiseView = {
  heading: '## 5. Pairwise subject comparisons',
  unit: 'scenario',
  family: 'one metric',
  familyColumn: 'metric',
  suiteColumn: false,
  scorerColumn: { title: 'Metric', label: (c) => METRIC_LABEL[c.metric as MainMetric] ?? c.metric },
  percent: () => true,
  fourCells: (metric) => METRIC_LABEL[metric as MainMetric] ?? metric,
};
