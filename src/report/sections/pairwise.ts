/**
 * Section 5: pairwise subject comparisons. For each metric and each pair of subjects (A before B
 * in sorted order), samples are paired on scenario x epoch (the same decision state, so the
 * pairing removes scenario difficulty from the comparison), and the pairs of one scenario are one
 * cluster: epochs of a scenario are correlated, so the sampling unit is the scenario. Reported:
 * mean(A - B) with a paired cluster bootstrap percentile interval (whole scenarios resampled), the
 * correlation of the paired outcomes, a two-sided z-test p-value on the clustered (CR1) paired SE,
 * Holm-adjusted over every comparison in the section, and the minimum detectable effect (80%
 * power, two-sided, alpha = 1 - level) at that SE. All of it is `comparePaired`, the function
 * behind `standoff ci paired --metric M --a A --b B`, which prints the same numbers.
 *
 * SQL builds the pairs (a pivot on scenario x epoch) and hands the value vectors, ordered by
 * scenario and epoch, with their scenario as the cluster.
 */
import { holm } from '../../stats/index.ts';
import { cell, fixed, fmtCount, pct, pp, ppInterval, pValue, table } from '../markdown.ts';
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';
import { float64Column } from '../../store/arrow.ts';
import { MDE_POWER, tryComparePaired } from '../../analysis/paired-comparison.ts';
import type { Sampling } from '../../analysis/rates.ts';
import { forEachChunk } from '../../store/duckdb.ts';

export { MDE_POWER };
export const PAIR_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];

export interface Comparison {
  metric: MainMetric;
  a: string;
  b: string;
  /** Pairs: scenario x epoch states both subjects have a measured value on. */
  pairs: number;
  /** Scenarios the pairs fall in (the clusters resampled). */
  clusters: number | null;
  mean_a: number | null;
  mean_b: number | null;
  /** mean(a - b). */
  difference: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  method: 'paired-cluster-bootstrap-percentile';
  /** Always 'clustered' (by scenario_id) in the report. */
  sampling: Sampling;
  cluster: 'scenario_id';
  seed: number;
  resamples: number;
  engine: string | null;
  /** Pearson correlation of the paired outcomes (null when either side is constant). */
  correlation: number | null;
  /** The SE behind p and the MDE: the cluster-robust (CR1) SE of mean(a - b) over scenarios. */
  se: number | null;
  /** The paired SE that treats every pair as independent (ddof 1), for contrast. */
  se_paired: number | null;
  p_value: number | null;
  p_holm: number | null;
  /** Smallest true difference detected with 80% power at this SE (two-sided z-test). */
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
  const alpha = Number((1 - ctx.level).toPrecision(12));
  const comparisons: Comparison[] = [];
  if (ctx.subjects.length < 2) return { comparisons, power: MDE_POWER, alpha, note: 'only one subject: nothing to compare' };
  for (const metric of PAIR_METRICS) {
    // One pivot per metric: a row per scenario x epoch, a column per subject (NaN when absent or not measured).
    const cols = ctx.subjects.map((_, i) => `avg(value) FILTER (WHERE subj = ${i}) AS s${i}`).join(', ');
    const { sid, col } = await pivotColumns(ctx, `SELECT sid, epoch, ${cols} FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} GROUP BY sid, epoch ORDER BY sid, epoch`, ctx.subjects.length);
    // Subjects with no measured value at all for this metric (e.g. alignment in a run without judges).
    const unmeasured = new Set(ctx.subjects.filter((_, i) => col[i].every((v) => Number.isNaN(v))));
    for (let i = 0; i < ctx.subjects.length; i++) {
      for (let j = i + 1; j < ctx.subjects.length; j++) {
        const a = ctx.subjects[i];
        const b = ctx.subjects[j];
        // Typed vectors of the pairs (the scenario index as the cluster id): 20 bytes a pair, no string per pair.
        let n = 0;
        for (let r = 0; r < sid.length; r++) if (!Number.isNaN(col[i][r]) && !Number.isNaN(col[j][r])) n++;
        const xa = new Float64Array(n);
        const xb = new Float64Array(n);
        const ids = new Int32Array(n);
        for (let r = 0, k = 0; r < sid.length; r++) {
          if (!Number.isNaN(col[i][r]) && !Number.isNaN(col[j][r])) {
            xa[k] = col[i][r];
            xb[k] = col[j][r];
            ids[k++] = sid[r];
          }
        }
        const base: Comparison = {
          metric, a, b, pairs: xa.length, clusters: null, mean_a: null, mean_b: null, difference: null, lower: null, upper: null,
          level: ctx.level, method: 'paired-cluster-bootstrap-percentile', sampling: 'clustered', cluster: 'scenario_id', seed: ctx.seed, resamples: ctx.resamples,
          engine: null, correlation: null, se: null, se_paired: null, p_value: null, p_holm: null, mde: null,
        };
        if (unmeasured.has(a) || unmeasured.has(b)) {
          comparisons.push({ ...base, note: `${METRIC_LABEL[metric].toLowerCase()} not measured for ${[a, b].filter((x) => unmeasured.has(x)).join(' and ')}` });
          continue;
        }
        const r = tryComparePaired(xa, xb, ids, 'scenario_id', { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples });
        if (!('n' in r)) {
          comparisons.push({ ...base, note: r.note });
          continue;
        }
        comparisons.push({
          ...base,
          clusters: r.clusters ?? null,
          mean_a: r.mean_a,
          mean_b: r.mean_b,
          difference: r.mean_diff,
          lower: r.lower,
          upper: r.upper,
          engine: r.engine,
          correlation: r.correlation,
          se: r.se,
          se_paired: r.se_paired,
          p_value: r.p_value,
          mde: r.mde,
          ...(r.note ? { note: r.note } : {}),
        });
      }
    }
  }
  const adjusted = holm(comparisons.map((c) => c.p_value));
  comparisons.forEach((c, i) => (c.p_holm = adjusted[i]));
  return { comparisons, power: MDE_POWER, alpha };
}

/** The pivot's columns as typed arrays, streamed a chunk at a time (NULL -> NaN): `sid` and one column per subject. */
async function pivotColumns(ctx: ReportContext, sql: string, subjects: number): Promise<{ sid: Int32Array; col: Float64Array[] }> {
  let cap = 1 << 16;
  let sid = new Int32Array(cap);
  let col = Array.from({ length: subjects }, () => new Float64Array(cap));
  let n = 0;
  await forEachChunk(ctx.conn, sql, undefined, (cols, rows) => {
    if (n + rows > cap) {
      while (n + rows > cap) cap *= 2;
      const grow = <T extends Int32Array | Float64Array>(x: T, make: (k: number) => T): T => {
        const y = make(cap);
        y.set(x.subarray(0, n) as never);
        return y;
      };
      sid = grow(sid, (k) => new Int32Array(k));
      col = col.map((c) => grow(c, (k) => new Float64Array(k)));
    }
    for (let r = 0; r < rows; r++) {
      sid[n + r] = Number(cols[0][r]);
      for (let s = 0; s < subjects; s++) {
        const v = cols[2 + s][r];
        col[s][n + r] = v === null ? Number.NaN : Number(v);
      }
    }
    n += rows;
  });
  return { sid: sid.subarray(0, n), col: col.map((c) => c.subarray(0, n)) };
}

export function renderPairwise(p: PairwiseSection, level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['## 5. Pairwise subject comparisons\n'];
  if (p.comparisons.length === 0) {
    out.push(`${cell(p.note ?? 'No comparisons.')}\n`);
    return out.join('\n');
  }
  const m = p.comparisons.filter((c) => c.p_value !== null).length;
  const clusters = [...new Set(p.comparisons.map((c) => c.clusters).filter((x): x is number => x !== null))].sort((a, b) => a - b);
  out.push(
    `Differences are mean(A − B) over samples paired on scenario × epoch, in percentage points. Sampling unit: the scenario: ` +
      `the ${L}% interval is a paired cluster bootstrap (percentile) that resamples whole scenarios with all their epochs' pairs` +
      (clusters.length ? ` (${clusters.map(fmtCount).join(' or ')} scenarios)` : '') +
      `, and p and MDE use the cluster-robust (CR1) SE of the paired difference; treating the epochs of a scenario as independent pairs would make all three too optimistic. ` +
      `p: two-sided z-test (difference / clustered SE); Holm: adjusted over the ${m} comparisons with a p-value. ` +
      `MDE: the smallest true difference this design would detect with ${Math.round(p.power * 100)}% power at α = ${fixed(p.alpha, 2)}, given the observed clustered SE. ` +
      `r: correlation of the paired outcomes (how much the pairing helps). \`standoff ci paired --metric M --a A --b B\` prints the same numbers.\n`,
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
        c.lower === null && c.note ? cell(c.note) : ppInterval(c.lower, c.upper),
        c.correlation === null ? '—' : fixed(c.correlation, 2).replace('-', '−'),
        pValue(c.p_value),
        pValue(c.p_holm),
        c.mde === null ? '—' : pp(c.mde).replace('+', '±'),
      ]),
      ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  const notes = p.comparisons.filter((c) => c.note && c.lower !== null);
  if (notes.length) out.push(notes.map((c) => `- ${METRIC_LABEL[c.metric]}, ${cell(c.a)} vs ${cell(c.b)}: ${cell(c.note)}`).join('\n') + '\n');
  return out.join('\n');
}
