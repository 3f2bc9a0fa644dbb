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
import { forEachNumberChunk } from '../../store/duckdb.ts';
import { clusteredPairedFromTotals, pairedZTest } from '../../stats/index.ts';
import { cell, fixed, pct, pctInterval, table } from '../markdown.ts';
import { baseConfig, type FigureSpec } from '../figures.ts';
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';
import { GrowableFloat64, GrowableInt32 } from '../../growable-array.ts';

export const RANK_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action'];

export interface RankingSection {
  rankings: RankResult[];
}

/** The section's numbers, or null with fewer than three subjects. */
export async function rankingSection(ctx: ReportContext): Promise<RankingSection | null> {
  if (ctx.subjects.length < 3) return null;
  const rankings: RankResult[] = [];
  for (const metric of RANK_METRICS) {
    const t = takeRankTotals(ctx, metric) ?? (await loadRankTotals(ctx, metric));
    if (t.subjects.length < 3) continue;
    rankings.push(rankFromTotals(t.subjects, [t.task], metric, 'subject_model', { level: ctx.level, seed: ctx.seed, resamples: Math.min(ctx.resamples, 2000) }));
  }
  return rankings.length ? { rankings } : null;
}


/**
 * One metric's ranking input from per-cluster totals: the observations pivoted in SQL to one row
 * per item (scenario x epoch) with a column per subject (`max(value)`), streamed in (sid, epoch)
 * order and folded per cluster (scenario, integer `sid`) by {@link RankTotalsBuilder}: per
 * subject the count and sum of its values, per pair of subjects (p < q) the count and sum of
 * v_p - v_q over the items both have and the difference of the first such item (by item key). No
 * JavaScript value per observation. The pairwise section folds the same rows from its own pivot
 * (`o1PairFamilies`) and leaves the totals for this section ({@link takeRankTotals}).
 */
export async function loadRankTotals(ctx: ReportContext, metric: MainMetric): Promise<{ subjects: string[]; task: RankTaskTotals }> {
  const b = new RankTotalsBuilder(ctx, metric);
  const cols = ctx.subjects.map((_, k) => `max(value) FILTER (WHERE subj = ${k}) AS v${k}`).join(', ');
  await forEachNumberChunk(ctx.conn, `SELECT sid, epoch, ${cols} FROM obs_t WHERE mk = $mk AND value IS NOT NULL GROUP BY sid, epoch ORDER BY sid, epoch`, { mk: MAIN_METRICS.indexOf(metric) }, (c, rows) => b.addChunk(c, rows, 2));
  return b.finish();
}

/** Ranking totals left by the pairwise section, per context and metric (taken once). */
const pending = new WeakMap<ReportContext, Map<MainMetric, { subjects: string[]; task: RankTaskTotals }>>();

/** Keeps a metric's totals for the ranking section (`rankingSection` takes them instead of reading them again). */
export function keepRankTotals(ctx: ReportContext, metric: MainMetric, t: { subjects: string[]; task: RankTaskTotals }): void {
  if (!pending.has(ctx)) pending.set(ctx, new Map());
  pending.get(ctx)!.set(metric, t);
}

/** The totals the pairwise section left for `metric` (removed), or undefined. */
export function takeRankTotals(ctx: ReportContext, metric: MainMetric): { subjects: string[]; task: RankTaskTotals } | undefined {
  const m = pending.get(ctx);
  const t = m?.get(metric);
  m?.delete(metric);
  return t;
}

/**
 * Folds a pivot's rows (one per item: sid, epoch, a value column per subject, NULL where absent),
 * streamed in (sid, epoch) order, into per-cluster totals. The same numbers as the former SQL
 * (per item `max(value)` over the non-NULL values; per cluster `count`, `sum`, and
 * `arg_min(v_p - v_q, ek)` with the item key `ek` = the epoch as text, 'NaN' for NULL), to the
 * last bit: RANK_METRICS are 0/1 metrics, so every sum is an integer and exact in any order. A
 * cluster whose items have no value at all is left out, as the former `WHERE value IS NOT NULL`
 * left it out. Orders, as before: the bootstrap's clusters by first subject with a value, then
 * sid (first appearance when the observations are read by subject, scenario and epoch); each
 * pair's clusters in item-key order (the sid as text).
 */
/** An epoch's key as the ranking compares first epochs: its decimal string ('NaN' for NULL), the small integers' cached. */
const EPOCH_KEYS = Array.from({ length: 256 }, (_, e) => String(e));
const epochKey = (e: number): string => (Number.isInteger(e) && e >= 0 && e < EPOCH_KEYS.length ? EPOCH_KEYS[e] : String(e));

export class RankTotalsBuilder {
  private readonly S: number;
  private readonly pq: [number, number][] = [];
  private readonly sid = new GrowableInt32();
  private readonly n: GrowableFloat64[];
  private readonly sum: GrowableFloat64[];
  private readonly pn: GrowableFloat64[];
  private readonly ps: GrowableFloat64[];
  private readonly pf: GrowableFloat64[];
  // The cluster being folded.
  private cur = -1;
  private readonly cn: Float64Array;
  private readonly cs: Float64Array;
  private readonly cpn: Float64Array;
  private readonly cps: Float64Array;
  private readonly cpf: Float64Array;
  private readonly cpk: (string | null)[];
  private readonly v: Float64Array;

  constructor(private readonly ctx: ReportContext, metric: MainMetric) {
    if (!getMetric(metric).binary) throw new Error(`RankTotalsBuilder: ${metric} is not a 0/1 metric`);
    this.S = ctx.subjects.length;
    for (let p = 0; p < this.S; p++) for (let q = p + 1; q < this.S; q++) this.pq.push([p, q]);
    const cols = (k: number) => Array.from({ length: k }, () => new GrowableFloat64(1 << 12));
    [this.n, this.sum, this.pn, this.ps, this.pf] = [cols(this.S), cols(this.S), cols(this.pq.length), cols(this.pq.length), cols(this.pq.length)];
    [this.cn, this.cs, this.v] = [new Float64Array(this.S), new Float64Array(this.S), new Float64Array(this.S)];
    [this.cpn, this.cps, this.cpf] = [new Float64Array(this.pq.length), new Float64Array(this.pq.length), new Float64Array(this.pq.length)];
    this.cpk = this.pq.map(() => null);
  }

  /** One streamed chunk of typed columns (NULL as NaN): column 0 the sid, 1 the epoch, `from`.. the subjects' values. */
  addChunk(c: Float64Array[], rows: number, from: number): void {
    const [sids, epochs] = [c[0], c[1]];
    for (let i = 0; i < rows; i++) {
      const sid = sids[i];
      if (sid !== this.cur) {
        this.flush();
        this.cur = sid;
      }
      for (let k = 0; k < this.S; k++) this.v[k] = c[from + k][i];
      this.item(epochKey(epochs[i]));
    }
  }

  private item(ek: string): void {
    const { v, S } = this;
    for (let k = 0; k < S; k++) {
      if (Number.isNaN(v[k])) continue;
      this.cn[k]++;
      this.cs[k] += v[k];
    }
    for (let x = 0; x < this.pq.length; x++) {
      const [p, q] = this.pq[x];
      if (Number.isNaN(v[p]) || Number.isNaN(v[q])) continue;
      const d = v[p] - v[q];
      this.cpn[x]++;
      this.cps[x] += d;
      if (this.cpk[x] === null || ek < this.cpk[x]!) {
        this.cpk[x] = ek;
        this.cpf[x] = d;
      }
    }
  }

  /** Ends the current cluster: kept when some subject has a value in it. */
  private flush(): void {
    if (this.cur >= 0 && this.cn.some((x) => x > 0)) {
      this.sid.push(this.cur);
      for (let k = 0; k < this.S; k++) {
        this.n[k].push(this.cn[k]);
        this.sum[k].push(this.cs[k]);
      }
      for (let x = 0; x < this.pq.length; x++) {
        this.pn[x].push(this.cpn[x]);
        this.ps[x].push(this.cps[x]);
        this.pf[x].push(this.cpk[x] === null ? NaN : this.cpf[x]);
      }
    }
    this.cn.fill(0);
    this.cs.fill(0);
    this.cpn.fill(0);
    this.cps.fill(0);
    this.cpk.fill(null);
  }

  /** The subjects with observations (sorted) and the task. */
  finish(): { subjects: string[]; task: RankTaskTotals } {
    this.flush();
    this.cur = -1;
    const C = this.sid.length;
    const sids = this.sid.data.subarray(0, C);
    // The bootstrap's order: first subject with a value, then sid (clusters are in sid order).
    const first = new Int32Array(C);
    for (let r = 0; r < C; r++) {
      let k = 0;
      while (this.n[k].data[r] === 0) k++;
      first[r] = k;
    }
    const order = new Int32Array(C);
    let at = 0;
    for (let k = 0; k < this.S; k++) for (let r = 0; r < C; r++) if (first[r] === k) order[at++] = r;
    return totalsFromColumns(this.ctx, { order, pos: textOrderPlaces(sids), n: this.n, sum: this.sum, pq: this.pq, pn: this.pn, ps: this.ps, pf: this.pf });
  }
}

/**
 * Each sid's place among `sids` (distinct, ascending, non-negative integers) when sorted as text,
 * as `ORDER BY CAST(sid AS VARCHAR)` sorts them: the decimal forms in lexicographic order, walked
 * (0, 1, 10, 100, ..., 101, ..., 11, ...) over 0..max without a sort.
 */
export function textOrderPlaces(sids: Int32Array): Int32Array {
  const C = sids.length;
  const pos = new Int32Array(C);
  if (C === 0) return pos;
  const max = sids[C - 1];
  const index = new Int32Array(max + 1).fill(-1);
  for (let r = 0; r < C; r++) {
    if (!(sids[r] >= 0) || (r > 0 && sids[r] <= sids[r - 1])) throw new Error('textOrderPlaces: sids must be distinct, ascending and non-negative');
    index[sids[r]] = r;
  }
  let place = 0;
  if (index[0] >= 0) pos[index[0]] = place++;
  for (let x = 1, seen = 0; seen < max; seen++) {
    if (index[x] >= 0) pos[index[x]] = place++;
    if (x * 10 <= max) x *= 10;
    else {
      while (x % 10 === 9 || x + 1 > max) x = Math.floor(x / 10);
      x++;
    }
  }
  return pos;
}

interface RankColumns {
  /** Row r of the bootstrap's order is cluster order[r] of the columns. */
  order: Int32Array;
  /** Each cluster's place in item-key order. */
  pos: Int32Array;
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
    for (let r = 0; r < C; r++) {
      sums[j * C + r] = c.sum[k].data[c.order[r]];
      counts[j * C + r] = c.n[k].data[c.order[r]];
    }
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
      const at = c.pos[r];
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
