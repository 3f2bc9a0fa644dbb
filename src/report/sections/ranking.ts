/**
 * Ranking section (issue 26), for stores with three or more subjects: per main metric, each
 * subject's rate with its interval, rank and rank interval (cluster bootstrap over scenarios) and
 * tier letters (compact letter display over Holm-adjusted clustered paired z-tests), the same
 * numbers as `standoff rank --metric M` (both call `buildRanking`), and a rank-interval figure.
 *
 * A subsection of the pairwise comparisons in the Standoff O1 suite (`suites/standoff-o1.ts`).
 */
import { rankFromTotals, type PairTestResult, type RankResult, type RankTaskTotals } from '../../decide/rank.ts';
import { getMetric } from '../../store/metrics.ts';
import { forEachRow } from '../../store/duckdb.ts';
import { clusteredPairedFromTotals, pairedZTest } from '../../stats/index.ts';
import { cell, fixed, pct, pctInterval, table } from '../markdown.ts';
import { baseConfig, type FigureSpec } from '../figures.ts';
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';
import { GrowableFloat64 } from '../../growable-array.ts';

export const RANK_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action'];

export interface RankingSection {
  rankings: RankResult[];
}

/** The section's numbers, or null with fewer than three subjects. */
export async function rankingSection(ctx: ReportContext): Promise<RankingSection | null> {
  if (ctx.subjects.length < 3) return null;
  const rankings: RankResult[] = [];
  for (const metric of RANK_METRICS) {
    const t = await loadRankTotals(ctx, metric);
    if (t.subjects.length < 3) continue;
    rankings.push(rankFromTotals(t.subjects, [t.task], metric, 'subject_model', { level: ctx.level, seed: ctx.seed, resamples: Math.min(ctx.resamples, 2000) }));
  }
  return rankings.length ? { rankings } : null;
}


/**
 * One metric's ranking input from per-cluster totals. SQL pivots the observations to one row per
 * item (scenario x epoch) with a value column per subject, then returns one row per cluster
 * (scenario, integer `sid`), streamed: per subject the count and sum of its values, per pair of
 * subjects (p < q) the count and sum of v_p - v_q over the items both have and the difference of
 * the first such item (by item key). No JavaScript value per observation.
 *
 * Order, so the numbers are those of the per-item path (`buildRanking` on item maps) to the last
 * bit: the bootstrap's clusters in order of first appearance when the observations are read by
 * subject, scenario and epoch (first subject with a value, then sid); each pair's clusters and its
 * first item in item-key order (the sid as text, then the epoch as text; a NULL epoch is 'NaN').
 * RANK_METRICS are 0/1 metrics, so every sum is an integer and exact in any order.
 */
export async function loadRankTotals(ctx: ReportContext, metric: MainMetric): Promise<{ subjects: string[]; task: RankTaskTotals }> {
  if (!getMetric(metric).binary) throw new Error(`loadRankTotals: ${metric} is not a 0/1 metric`);
  const S = ctx.subjects.length;
  const pq: [number, number][] = [];
  for (let p = 0; p < S; p++) for (let q = p + 1; q < S; q++) pq.push([p, q]);
  const v = (k: number) => `v${k}`;
  const pivot = ctx.subjects.map((_, k) => `max(value) FILTER (WHERE subj = ${k}) AS ${v(k)}`).join(', ');
  const first = `CASE ${ctx.subjects.map((_, k) => `WHEN count(${v(k)}) > 0 THEN ${k}`).join(' ')} END`;
  const cols = [
    ...ctx.subjects.map((_, k) => `CAST(count(${v(k)}) AS INTEGER) AS n${k}, sum(${v(k)}) AS s${k}`),
    ...pq.map(([p, q]) => `CAST(count(${v(p)} - ${v(q)}) AS INTEGER) AS n${p}_${q}, sum(${v(p)} - ${v(q)}) AS s${p}_${q}, arg_min(${v(p)} - ${v(q)}, ek) FILTER (WHERE ${v(p)} - ${v(q)} IS NOT NULL) AS f${p}_${q}`),
  ];
  const sql = `WITH it AS (SELECT sid, coalesce(CAST(epoch AS VARCHAR), 'NaN') AS ek, ${pivot} FROM obs_t WHERE mk = $mk AND value IS NOT NULL GROUP BY sid, epoch)
    SELECT CAST(row_number() OVER (ORDER BY CAST(sid AS VARCHAR)) - 1 AS INTEGER) AS pos, ${cols.join(', ')}
    FROM it GROUP BY sid ORDER BY ${first}, sid`;
  const pos = new GrowableFloat64();
  const n = ctx.subjects.map(() => new GrowableFloat64());
  const sum = ctx.subjects.map(() => new GrowableFloat64());
  const pn = pq.map(() => new GrowableFloat64());
  const ps = pq.map(() => new GrowableFloat64());
  const pf = pq.map(() => new GrowableFloat64());
  await forEachRow(ctx.conn, sql, { mk: MAIN_METRICS.indexOf(metric) }, (c, rows) => {
    for (let i = 0; i < rows; i++) {
      pos.push(c[0](i) as number);
      for (let k = 0; k < S; k++) {
        n[k].push(c[1 + 2 * k](i) as number);
        sum[k].push(Number(c[2 + 2 * k](i) ?? 0));
      }
      for (let x = 0; x < pq.length; x++) {
        const o = 1 + 2 * S + 3 * x;
        pn[x].push(c[o](i) as number);
        ps[x].push(Number(c[o + 1](i) ?? 0));
        pf[x].push(c[o + 2](i) === null ? NaN : Number(c[o + 2](i)));
      }
    }
  });
  return totalsFromColumns(ctx, { pos, n, sum, pq, pn, ps, pf });
}

interface RankColumns {
  pos: GrowableFloat64;
  n: GrowableFloat64[];
  sum: GrowableFloat64[];
  pq: [number, number][];
  pn: GrowableFloat64[];
  ps: GrowableFloat64[];
  pf: GrowableFloat64[];
}

/** The subjects with observations (sorted) and the task: bootstrap totals, and pairs re-ordered by item key. */
function totalsFromColumns(ctx: ReportContext, c: RankColumns): { subjects: string[]; task: RankTaskTotals } {
  const C = c.pos.length;
  const present = ctx.subjects.map((_, k) => k).filter((k) => c.n[k].data.subarray(0, C).some((x) => x > 0));
  const subjects = present.map((k) => ctx.subjects[k]);
  const sums = new Float64Array(present.length * Math.max(1, C));
  const counts = new Float64Array(present.length * Math.max(1, C));
  present.forEach((k, j) => {
    sums.set(c.sum[k].data.subarray(0, C), j * C);
    counts.set(c.n[k].data.subarray(0, C), j * C);
  });
  const pairs = new Map<string, PairTestResult>();
  c.pq.forEach(([p, q], x) => {
    // The pair's clusters in item-key order (pos: the sid's place as text).
    const ns = new Float64Array(C);
    const ss = new Float64Array(C);
    let shift = NaN;
    let N = 0;
    let clusters = 0;
    const firstAt = new Float64Array(C).fill(NaN);
    for (let r = 0; r < C; r++) {
      const at = c.pos.data[r];
      ns[at] = c.pn[x].data[r];
      ss[at] = c.ps[x].data[r];
      firstAt[at] = c.pf[x].data[r];
      N += ns[at];
      if (ns[at] > 0) clusters++;
    }
    for (let at = 0; at < C && Number.isNaN(shift); at++) if (ns[at] > 0) shift = firstAt[at];
    let result: PairTestResult = { pairs: N, difference: null, p: null };
    if (N >= 2 && clusters >= 2) {
      const r = clusteredPairedFromTotals(ss, ns, shift);
      result = { pairs: N, difference: r.meanDiff, p: pairedZTest({ difference: r.meanDiff, se: r.se }).p };
    }
    pairs.set(`${p},${q}`, result);
  });
  const pair = (a: number, b: number): PairTestResult => {
    const [p, q] = [present[a], present[b]];
    if (p < q) return pairs.get(`${p},${q}`)!;
    // b - a: the same totals negated (exact; squares and |z| unchanged), the same p.
    const r = pairs.get(`${q},${p}`)!;
    return { pairs: r.pairs, difference: r.difference === null ? null : 0 - r.difference, p: r.p };
  };
  const observations = present.map((k) => {
    let t = 0;
    for (let r = 0; r < C; r++) t += c.n[k].data[r];
    return t;
  });
  return { subjects, task: { task: ctx.suite, totals: { clusters: Math.max(1, C), sums, counts }, observations, pair } };
}

/** The section as Markdown. */
export function renderRanking(s: RankingSection): string {
  const out = ['### Ranking', ''];
  for (const r of s.rankings) {
    out.push(`#### ${METRIC_LABEL[r.metric as MainMetric] ?? cell(r.metric)}`, '');
    out.push(
      table(
        ['subject', 'rate', `${Math.round(r.level * 100)}% CI`, 'rank', 'rank interval', 'tier'],
        r.rows.map((x) => [cell(x.subject), pct(x.estimate), pctInterval(x.lower, x.upper), fixed(x.rank, 1), `${fixed(x.rank_lower, 1)} - ${fixed(x.rank_upper, 1)}`, cell(x.tier)]),
        ['l', 'r', 'r', 'r', 'r', 'l'],
      ),
      '',
    );
  }
  out.push(`Rank intervals: 2.5% and 97.5% points of each subject's rank over ${s.rankings[0].resamples} cluster-bootstrap resamples (seed ${s.rankings[0].seed}). Tiers: ${s.rankings[0].tier_rule}.`, '');
  return out.join('\n');
}

/** Vega-Lite: each subject's rank (point) and rank interval (rule), one panel per metric. */
export function rankIntervalSpec(s: RankingSection): Record<string, unknown> {
  const values = s.rankings.flatMap((r) => r.rows.map((x) => ({ metric: r.metric, subject: x.subject, rank: x.rank, lower: x.rank_lower, upper: x.rank_upper, tier: x.tier })));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    config: baseConfig(),
    data: { values },
    facet: { column: { field: 'metric', type: 'nominal', title: null } },
    spec: {
      width: 220,
      height: { step: 28 },
      layer: [
        { mark: { type: 'rule', strokeWidth: 2 }, encoding: { y: { field: 'subject', type: 'nominal', title: null }, x: { field: 'lower', type: 'quantitative', title: 'rank (1 = best)', scale: { reverse: true } }, x2: { field: 'upper' } } },
        { mark: { type: 'point', filled: true, size: 60 }, encoding: { y: { field: 'subject', type: 'nominal' }, x: { field: 'rank', type: 'quantitative' } } },
        { mark: { type: 'text', dx: 12, align: 'left' }, encoding: { y: { field: 'subject', type: 'nominal' }, x: { field: 'upper', type: 'quantitative' }, text: { field: 'tier' } } },
      ],
    },
  };
}

/** The rank-interval figure (figures/ranking.*). */
export function rankingFigure(s: RankingSection): FigureSpec {
  return { name: 'ranking', caption: "Each subject's rank (point) and its rank interval from the cluster bootstrap (rule), with its tier letters; 1 is best.", spec: rankIntervalSpec(s) };
}
