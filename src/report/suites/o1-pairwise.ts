/**
 * The Standoff O1 suite's pairwise families for the one pairwise implementation
 * (`sections/pairwise.ts`): one family per metric (evidence gathered, policy action, alignment),
 * each a pivot of the report's observations (`obs_t`: a row per scenario x epoch, a column per
 * subject, NaN where absent or not measured), always clustered on the scenario, whose epochs are
 * correlated pairs. p-values are adjusted within each metric.
 */
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from '../sections/context.ts';
import { RANK_METRICS, RankTotalsBuilder, keepRankTotals } from '../sections/ranking.ts';
import { pairwiseOf, pairwiseOfEach, pivotColumns, type Adjust, type PairFamily, type PairwiseSection, type PairwiseView } from '../sections/pairwise.ts';

export const PAIR_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];

export async function o1PairFamilies(ctx: ReportContext): Promise<PairFamily[]> {
  const out: PairFamily[] = [];
  for await (const f of o1PairFamilyStream(ctx)) out.push(f);
  return out;
}

/** The families one at a time, in PAIR_METRICS order (the section compares each and lets it go before the next is read). */
async function* o1PairFamilyStream(ctx: ReportContext): AsyncGenerator<PairFamily> {
  const S = ctx.subjects.length;
  for (const metric of PAIR_METRICS) {
    // The ranking section's items are this pivot's: one GROUP BY for both sections, the totals kept
    // for the ranking (`keepRankTotals`). Its per-item value is max(value) per subject, which is the
    // mean wherever a subject has at most one value on the item: `nv` (the item's values) equal to
    // the subjects with a mean says so; otherwise (repeated rows) the ranking reads its own pivot.
    const rank = S >= 3 && RANK_METRICS.includes(metric) ? new RankTotalsBuilder(ctx, metric) : null;
    let repeated = false;
    const cols = [...ctx.subjects.map((_, i) => `avg(value) FILTER (WHERE subj = ${i}) AS s${i}`), ...(rank ? ['CAST(count(value) AS INTEGER) AS nv'] : [])].join(', ');
    const sql = `SELECT sid, epoch, ${cols} FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} GROUP BY sid, epoch ORDER BY sid, epoch`;
    const each = (c: Float64Array[], rows: number) => {
      for (let i = 0; i < rows && !repeated; i++) {
        let m = 0;
        for (let k = 0; k < S; k++) if (!Number.isNaN(c[2 + k][i])) m++;
        repeated = c[2 + S][i] !== m;
      }
      if (!repeated) rank!.addChunk(c, rows, 2);
    };
    const { sid, col } = await pivotColumns(ctx.conn, sql, S, rank ? each : undefined);
    if (rank && !repeated) keepRankTotals(ctx, metric, rank.finish());
    yield { suite: ctx.suite, scorer: metric, metric, kind: metric === 'alignment' ? 'bounded' : 'binary', label: METRIC_LABEL[metric].toLowerCase(), subjects: ctx.subjects, clusters: sid, cols: col, clusterWhen: 'always' };
  }
}

/** The O1 report's pairwise comparisons (section 5). */
export async function pairwiseSection(ctx: ReportContext, adjust: Adjust = 'holm'): Promise<PairwiseSection> {
  const o = { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, adjust };
  if (ctx.subjects.length < 2) return { ...pairwiseOf([], o), note: 'only one subject: nothing to compare' };
  return pairwiseOfEach(o1PairFamilyStream(ctx), o);
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
