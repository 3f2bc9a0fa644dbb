/**
 * Section 5: pairwise subject comparisons. For each metric and each pair of subjects (A before B
 * in sorted order), samples are paired on scenario x epoch (the same decision state, so the
 * pairing removes scenario difficulty from the comparison). Reported: the mean difference
 * mean(A - B) with a paired-bootstrap percentile interval, the correlation of the paired outcomes,
 * a two-sided paired z-test p-value (difference / paired SE), Holm-adjusted over every comparison
 * in the section, and the minimum detectable effect (80% power, two-sided, alpha = 1 - level) at
 * this number of pairs and this spread of the differences.
 *
 * SQL builds the pairs (a join on scenario x epoch) and hands the two value vectors to
 * `pairedBootstrap` as typed arrays, ordered by scenario and epoch.
 */
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { holm, minimumDetectableEffect, pairedBootstrap } from '../../stats/index.ts';
import { StandoffError } from '../../errors.ts';
import { cell, fixed, fmtCount, pct, pp, ppInterval, pValue, table } from '../markdown.ts';
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';
import { float64Column } from '../../store/arrow.ts';

export const PAIR_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];
export const MDE_POWER = 0.8;

export interface Comparison {
  metric: MainMetric;
  a: string;
  b: string;
  /** Pairs: scenario x epoch states both subjects have an observation on. */
  pairs: number;
  mean_a: number | null;
  mean_b: number | null;
  /** mean(a - b). */
  difference: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  method: 'paired-bootstrap-percentile';
  seed: number;
  resamples: number;
  engine: string | null;
  /** Pearson correlation of the paired outcomes (null when either side is constant). */
  correlation: number | null;
  se_paired: number | null;
  p_value: number | null;
  p_holm: number | null;
  /** Smallest true difference detected with 80% power at this n and spread (two-sided z-test). */
  mde: number | null;
  note?: string;
}

export interface PairwiseSection {
  comparisons: Comparison[];
  power: number;
  alpha: number;
  note?: string;
}

export async function pairwiseSection(ctx: ReportContext): Promise<PairwiseSection> {
  const alpha = 1 - ctx.level;
  const comparisons: Comparison[] = [];
  if (ctx.subjects.length < 2) return { comparisons, power: MDE_POWER, alpha, note: 'only one subject: nothing to compare' };
  for (const metric of PAIR_METRICS) {
    // One pivot per metric: a row per scenario x epoch, a column per subject (NaN when absent).
    const cols = ctx.subjects.map((_, i) => `avg(value) FILTER (WHERE subj = ${i}) AS s${i}`).join(', ');
    const t = await ctx.arrow(`SELECT sid, epoch, ${cols} FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} GROUP BY sid, epoch ORDER BY sid, epoch`);
    const col = ctx.subjects.map((_, i) => float64Column(t, `s${i}`));
    for (let i = 0; i < ctx.subjects.length; i++) {
      for (let j = i + 1; j < ctx.subjects.length; j++) {
        const a = ctx.subjects[i];
        const b = ctx.subjects[j];
        const xa: number[] = [];
        const xb: number[] = [];
        for (let r = 0; r < col[i].length; r++) {
          if (!Number.isNaN(col[i][r]) && !Number.isNaN(col[j][r])) {
            xa.push(col[i][r]);
            xb.push(col[j][r]);
          }
        }
        const va = Float64Array.from(xa);
        const vb = Float64Array.from(xb);
        const base: Comparison = {
          metric, a, b, pairs: va.length, mean_a: null, mean_b: null, difference: null, lower: null, upper: null,
          level: ctx.level, method: 'paired-bootstrap-percentile', seed: ctx.seed, resamples: ctx.resamples, engine: null,
          correlation: null, se_paired: null, p_value: null, p_holm: null, mde: null,
        };
        if (va.length < 2) {
          comparisons.push({ ...base, note: `${va.length} pair${va.length === 1 ? '' : 's'}: too few to compare` });
          continue;
        }
        try {
          const r = pairedBootstrap(va, vb, { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, method: 'percentile' });
          const se = r.sePaired;
          const z = se > 0 ? r.estimate / se : null;
          const p = z === null ? (r.estimate === 0 ? 1 : 0) : 2 * normalCdf(-Math.abs(z), 0, 1);
          const sdDiff = se * Math.sqrt(va.length);
          let mde: number | null = null;
          try {
            mde = minimumDetectableEffect({ n: va.length, sdDiff, alpha, power: MDE_POWER });
          } catch (err) {
            if (!(err instanceof StandoffError)) throw err;
          }
          comparisons.push({
            ...base,
            mean_a: r.meanA,
            mean_b: r.meanB,
            difference: r.estimate,
            lower: r.lower,
            upper: r.upper,
            engine: r.engine,
            correlation: Number.isFinite(r.correlation) ? r.correlation : null,
            se_paired: se,
            p_value: p,
            mde,
          });
        } catch (err) {
          if (!(err instanceof StandoffError)) throw err;
          comparisons.push({ ...base, note: err.message });
        }
      }
    }
  }
  const adjusted = holm(comparisons.map((c) => c.p_value));
  comparisons.forEach((c, i) => (c.p_holm = adjusted[i]));
  return { comparisons, power: MDE_POWER, alpha };
}

export function renderPairwise(p: PairwiseSection, level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['## 5. Pairwise subject comparisons\n'];
  if (p.comparisons.length === 0) {
    out.push(`${p.note ?? 'No comparisons.'}\n`);
    return out.join('\n');
  }
  const m = p.comparisons.filter((c) => c.pairs > 0).length;
  out.push(
    `Differences are mean(A − B) over samples paired on scenario × epoch, in percentage points, with ${L}% paired-bootstrap percentile intervals. ` +
      `p: two-sided paired z-test (difference / paired SE); Holm: adjusted over all ${m} comparisons in this table. ` +
      `MDE: the smallest true difference this many pairs would detect with ${Math.round(p.power * 100)}% power at α = ${fixed(p.alpha, 2)}, given the observed spread of the paired differences. ` +
      `r: correlation of the paired outcomes (how much the pairing helps).\n`,
  );
  out.push(
    table(
      ['Metric', 'A', 'B', 'Pairs', 'A', 'B', 'A − B', `${L}% CI`, 'r', 'p', 'p (Holm)', 'MDE'],
      p.comparisons.map((c) => [
        METRIC_LABEL[c.metric],
        cell(c.a),
        cell(c.b),
        fmtCount(c.pairs),
        pct(c.mean_a),
        pct(c.mean_b),
        pp(c.difference),
        c.note ? cell(c.note) : ppInterval(c.lower, c.upper),
        c.correlation === null ? '—' : fixed(c.correlation, 2).replace('-', '−'),
        pValue(c.p_value),
        pValue(c.p_holm),
        c.mde === null ? '—' : pp(c.mde).replace('+', '±'),
      ]),
      ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  return out.join('\n');
}
