/**
 * Pairwise subject comparisons: the ONE implementation behind every report's pairwise table (the
 * core sections of any store and the Standoff O1 suite alike).
 *
 * A suite hands over *families* ({@link PairFamily}): one per task x scorer (the O1 suite: one per
 * metric), each a pivot of the measured values, a row per item x epoch (the same decision state)
 * and a column per subject, with the row's cluster (the item, whose epochs are correlated pairs).
 * For each pair of subjects (A before B in the family's order) the pairs are the rows both have a
 * value on, and `comparePaired` (the function behind `standoff ci paired --metric M --a A --b B`,
 * which prints the same numbers) gives mean(A − B) with a paired bootstrap percentile interval
 * (whole clusters resampled where clustered), the correlation of the paired outcomes, a two-sided
 * z-test p-value on the paired SE (cluster-robust CR1 where clustered) and the minimum detectable
 * effect at 80% power.
 *
 * Multiple comparisons: p-values are adjusted within each family (one task's comparisons on one
 * scorer), never across unrelated scorers or tasks: `p_holm` is always Holm's, `p_adjusted` the
 * report's `--adjust` method (holm, bh, or null with none).
 *
 * One sign convention: a difference is A − B, written with its sign (+ when A is higher).
 */
import { benjaminiHochberg, holm } from '../../stats/index.ts';
import { cell, fixed, fmtCount, pct, pp, ppInterval, pValue, signed, signedInterval, table } from '../markdown.ts';
import { MDE_POWER, comparePairedColumns, tryComparePaired, type PairedComparison } from '../../analysis/paired-comparison.ts';
import type { Sampling } from '../../analysis/rates.ts';
import type { MetricKind } from '../../analysis/metrics.ts';
import { fourCellCounts, renderFourCells, type FourCellCounts } from '../four-cell.ts';
import { forEachNumberChunk } from '../../store/duckdb.ts';
import type { DuckDBConnection } from '@duckdb/node-api';

export { MDE_POWER };

/** Multiple-comparison adjustment of the pairwise p-values (`--adjust`). */
export type Adjust = 'holm' | 'bh' | 'none';
export const ADJUST_METHODS: readonly Adjust[] = ['holm', 'bh', 'none'];
export const ADJUST_LABEL: Record<Adjust, string> = { holm: 'Holm', bh: 'Benjamini-Hochberg', none: 'none' };

export interface Comparison {
  /** The family: its task (suite) and scorer (the O1 suite: the metric). */
  suite: string;
  scorer: string;
  /** Its metric name (`standoff ci paired --metric`): the scorer's, or the O1 suite's metric. */
  metric: string;
  kind: MetricKind | null;
  a: string;
  b: string;
  /** Pairs: item x epoch states both subjects have a measured value on. */
  pairs: number;
  /** Items the pairs fall in (the clusters resampled); null when not clustered. */
  clusters: number | null;
  sampling: Sampling | null;
  mean_a: number | null;
  mean_b: number | null;
  /** mean(A − B). */
  difference: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  method: string;
  /** The cluster column when clustered. */
  cluster: string | null;
  seed: number;
  resamples: number;
  engine: string | null;
  /** Pearson correlation of the paired outcomes (null when either side is constant). */
  correlation: number | null;
  /** The SE behind p and the MDE (cluster-robust CR1 where clustered). */
  se: number | null;
  /** The paired SE that treats every pair as independent (ddof 1), for contrast. */
  se_paired: number | null;
  p_value: number | null;
  /** Holm within the comparison's family (its task and scorer). */
  p_holm: number | null;
  /** Adjusted by the report's `--adjust` method within the family (null with `none`). */
  p_adjusted: number | null;
  /** Smallest true difference detected with 80% power at this SE (two-sided z-test). */
  mde: number | null;
  note?: string;
  /** Binary scorers: both right, only A, only B, both wrong over the pairs (`four-cell.ts`). */
  four_cell?: FourCellCounts | null;
}

export interface PairwiseSection {
  comparisons: Comparison[];
  power: number;
  alpha: number;
  adjust: Adjust;
  /** The family each adjustment runs within: the comparisons of one task (suite) and one scorer. */
  family: 'task x scorer';
  note?: string;
}

/** One family's data: the values of each subject on each item x epoch row (NaN: none measured). */
export interface PairFamily {
  suite: string;
  scorer: string;
  metric: string;
  kind: MetricKind | null;
  /** How a note names the scorer ("policy action accuracy not measured for X"). */
  label: string;
  subjects: string[];
  /** Each row's cluster (item): a dense integer index, or the item id. */
  clusters: Int32Array | string[];
  /** One column per subject, aligned with `clusters`. */
  cols: Float64Array[];
  /** 'always': pairs clustered on the item; 'repeated': only where epochs repeat an item (else independent pairs). */
  clusterWhen: 'always' | 'repeated';
}

export interface PairOptions {
  level: number;
  seed: number;
  resamples: number;
}

/** Every pair of subjects of one family. */
export function compareFamily(f: PairFamily, o: PairOptions): Comparison[] {
  const out: Comparison[] = [];
  const unmeasured = new Set(f.subjects.filter((_, i) => f.cols[i].every((v) => Number.isNaN(v))));
  for (let i = 0; i < f.subjects.length; i++) {
    for (let j = i + 1; j < f.subjects.length; j++) out.push(comparePair(f, i, j, unmeasured, o));
  }
  return out;
}

function comparePair(f: PairFamily, i: number, j: number, unmeasured: Set<string>, o: PairOptions): Comparison {
  const [a, b] = [f.subjects[i], f.subjects[j]];
  const measured = !unmeasured.has(a) && !unmeasured.has(b);
  // Clustered on sorted integer ids: the comparison straight from the two columns (no pair vectors).
  const fast = measured && f.clusterWhen === 'always' && f.clusters instanceof Int32Array ? comparePairedColumns(f.cols[i], f.cols[j], f.clusters, 'scenario_id', o) : null;
  if (fast) {
    const c = fast.cells;
    const four = c && { both_right: c.bothRight, only_a: c.onlyA, only_b: c.onlyB, both_wrong: c.bothWrong };
    return withResult(baseComparison(f, a, b, fast.comparison.n, true, o), f.kind === 'binary' ? () => four : null, fast.comparison);
  }
  const { xa, xb, ids } = pairsOf(f, i, j);
  const clustered = f.clusterWhen === 'always' || new Set(ids as ArrayLike<unknown> as unknown[]).size < xa.length;
  const base = baseComparison(f, a, b, xa.length, clustered, o);
  if (!measured) return { ...base, note: `${f.label} not measured for ${[a, b].filter((x) => unmeasured.has(x)).join(' and ')}` };
  if (xa.length === 0) return { ...base, note: 'no shared items' };
  const r = tryComparePaired(xa, xb, clustered ? ids : null, clustered ? 'scenario_id' : null, o);
  if (!('n' in r)) return { ...base, note: r.note };
  return withResult(base, f.kind === 'binary' ? () => fourCellCounts(ids, xa, xb) : null, r);
}

function baseComparison(f: PairFamily, a: string, b: string, pairs: number, clustered: boolean, o: PairOptions): Comparison {
  return {
    suite: f.suite, scorer: f.scorer, metric: f.metric, kind: f.kind, a, b, pairs, clusters: null, sampling: null,
    mean_a: null, mean_b: null, difference: null, lower: null, upper: null, level: o.level,
    method: clustered ? 'paired-cluster-bootstrap-percentile' : 'paired-bootstrap-percentile', cluster: clustered ? 'scenario_id' : null, seed: o.seed, resamples: o.resamples,
    engine: null, correlation: null, se: null, se_paired: null, p_value: null, p_holm: null, p_adjusted: null, mde: null,
  };
}

/** The comparison's numbers from `comparePaired`'s result; `four`: the four cells of a binary scorer. */
function withResult(base: Comparison, four: (() => FourCellCounts | null) | null, r: PairedComparison): Comparison {
  return {
    ...base,
    ...(four ? { four_cell: four() } : {}),
    clusters: r.clusters ?? null,
    sampling: r.sampling,
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
  };
}

/** The rows both subjects have a value on: typed vectors (no string per pair where the clusters are indexes). */
function pairsOf(f: PairFamily, i: number, j: number): { xa: Float64Array; xb: Float64Array; ids: Int32Array | string[] } {
  const [A, B] = [f.cols[i], f.cols[j]];
  let n = 0;
  for (let r = 0; r < A.length; r++) if (!Number.isNaN(A[r]) && !Number.isNaN(B[r])) n++;
  const xa = new Float64Array(n);
  const xb = new Float64Array(n);
  const typed = f.clusters instanceof Int32Array;
  const ids: Int32Array | string[] = typed ? new Int32Array(n) : new Array<string>(n);
  for (let r = 0, k = 0; r < A.length; r++) {
    if (Number.isNaN(A[r]) || Number.isNaN(B[r])) continue;
    xa[k] = A[r];
    xb[k] = B[r];
    ids[k++] = f.clusters[r] as never;
  }
  return { xa, xb, ids };
}

/** The section: every family compared, p-values adjusted within each family. */
export function pairwiseOf(families: PairFamily[], o: PairOptions & { adjust: Adjust }): PairwiseSection {
  return pairwiseFrom(families.flatMap((f) => compareFamily(f, o)), o);
}

/** `pairwiseOf` on families read one at a time: each compared before the next is read (one family's columns held at a time). */
export async function pairwiseOfEach(families: AsyncIterable<PairFamily>, o: PairOptions & { adjust: Adjust }): Promise<PairwiseSection> {
  const comparisons: Comparison[] = [];
  for await (const f of families) for (const c of compareFamily(f, o)) comparisons.push(c);
  return pairwiseFrom(comparisons, o);
}

function pairwiseFrom(comparisons: Comparison[], o: PairOptions & { adjust: Adjust }): PairwiseSection {
  const alpha = Number((1 - o.level).toPrecision(12));
  adjustWithinFamilies(comparisons, o.adjust);
  return { comparisons, power: MDE_POWER, alpha, adjust: o.adjust, family: 'task x scorer' };
}

const familyKey = (c: Pick<Comparison, 'suite' | 'scorer'>) => `${c.suite}\u0000${c.scorer}`;

/**
 * Each family (one task's comparisons on one scorer) adjusted on its own, as R's
 * `p.adjust(p, method)` on that family's p-values: unrelated scorers and tasks do not dilute each other.
 */
export function adjustWithinFamilies(comparisons: Comparison[], adjust: Adjust): void {
  for (const fam of new Set(comparisons.map(familyKey))) {
    const mine = comparisons.filter((c) => familyKey(c) === fam);
    const h = holm(mine.map((c) => c.p_value));
    const a = adjust === 'bh' ? benjaminiHochberg(mine.map((c) => c.p_value)) : adjust === 'holm' ? h : mine.map(() => null);
    mine.forEach((c, i) => {
      c.p_holm = h[i];
      c.p_adjusted = a[i];
    });
  }
}

/** What the pairwise table adjusted, and within which family. */
export function adjustText(adjust: Adjust, cmp: Comparison[], what = 'one task and one scorer'): string {
  if (adjust === 'none') return 'not adjusted for multiple comparisons (--adjust none): read each p on its own';
  const fams = new Map<string, number>();
  for (const c of cmp) if (c.p_value !== null) fams.set(familyKey(c), (fams.get(familyKey(c)) ?? 0) + 1);
  const sizes = [...new Set(fams.values())].sort((a, b) => a - b);
  return `${ADJUST_LABEL[adjust]}-adjusted within each family of ${what} (${fams.size} famil${fams.size === 1 ? 'y' : 'ies'} of ${sizes.join('/')} comparison${sizes.length === 1 && sizes[0] === 1 ? '' : 's'}; unrelated scorers and tasks do not dilute each other)`;
}

/** How a suite's table names and shows its comparisons. */
export interface PairwiseView {
  /** Heading, e.g. `## 3. Pairwise subject comparisons per scorer`. */
  heading: string;
  /** The sampling unit's name: item, scenario. */
  unit: string;
  /** The family's name in the text ("one task and one scorer", "one metric") and in the adjusted column's title ("scorer", "metric"). */
  family: string;
  familyColumn: string;
  /** A column naming the task (several suites in the store). */
  suiteColumn: boolean;
  /** The scorer column: its title and each comparison's label. */
  scorerColumn: { title: string; label: (c: Comparison) => string };
  /** Differences in percentage points (true), or by the scorer's kind (binary in pp, others in its units). */
  percent: (c: Comparison) => boolean;
  /** The four-cell table of the binary comparisons under the pairwise table, its scorer cells named so (the core sections place theirs themselves). */
  fourCells?: (scorer: string) => string;
}

export function renderPairwise(p: PairwiseSection, level: number, v: PairwiseView): string {
  const L = Math.round(level * 100);
  const out: string[] = [`${v.heading}\n`];
  const cmp = p.comparisons;
  if (cmp.length === 0) {
    out.push(`${cell(p.note ?? 'Fewer than two subjects share a scorer: nothing to compare.')}\n`);
    return out.join('\n');
  }
  const clusters = [...new Set(cmp.map((c) => c.clusters).filter((x): x is number => x !== null))].sort((a, b) => a - b);
  const always = cmp.every((c) => c.cluster !== null);
  out.push(
    `Differences are mean(A − B) over samples paired on ${v.unit} × epoch (${cmp.every(v.percent) ? 'percentage points' : 'percentage points for binary scorers, else in the scorer\'s units'}). ` +
      `${L}% interval: paired bootstrap (percentile) that resamples whole ${v.unit}s with all their epochs' pairs${always ? '' : ` where epochs repeat a ${v.unit} (else the pairs are independent)`}` +
      (clusters.length ? ` (${clusters.map(fmtCount).join(' or ')} ${v.unit}s)` : '') +
      `; p: two-sided z-test on the paired SE (cluster-robust CR1 where clustered), ${adjustText(p.adjust, cmp, v.family)}; ` +
      `MDE: the smallest true difference detected with ${Math.round(p.power * 100)}% power at α = ${fixed(p.alpha, 2)}, given the observed SE; ` +
      `r: correlation of the paired outcomes (how much the pairing helps). \`standoff ci paired --metric M --a A --b B\` prints the same numbers.\n`,
  );
  out.push(pairwiseTable(p, L, v));
  const notes = cmp.filter((c) => c.note && c.lower !== null);
  if (notes.length) out.push(notes.map((c) => `- ${cell(v.scorerColumn.label(c))}, ${cell(c.a)} vs ${cell(c.b)}: ${cell(c.note)}`).join('\n') + '\n');
  const four = v.fourCells ? renderFourCells(cmp, v.suiteColumn, v.fourCells, v.scorerColumn.title) : '';
  if (four) out.push(four);
  return out.join('\n');
}

function pairwiseTable(p: PairwiseSection, L: number, v: PairwiseView): string {
  const adjusted = p.adjust === 'none' ? [] : [`p (${p.adjust === 'bh' ? 'BH' : 'Holm'}, within ${v.familyColumn})`];
  const head = [...(v.suiteColumn ? ['Task'] : []), v.scorerColumn.title, 'A', 'B', 'Pairs', 'A', 'B', 'A − B', `${L}% CI`, 'r', 'p', ...adjusted, 'MDE'];
  const rows = p.comparisons.map((c) => {
    const inPp = v.percent(c);
    const value = (x: number | null) => (inPp ? pct(x) : fixed(x, 3));
    return [
      ...(v.suiteColumn ? [cell(c.suite)] : []),
      cell(v.scorerColumn.label(c)),
      cell(c.a),
      cell(c.b),
      fmtCount(c.pairs),
      value(c.mean_a),
      value(c.mean_b),
      inPp ? pp(c.difference) : signed(c.difference),
      c.lower === null ? cell(c.note ?? '—') : inPp ? ppInterval(c.lower, c.upper) : signedInterval(c.lower, c.upper),
      c.correlation === null ? '—' : fixed(c.correlation, 2).replace('-', '−'),
      pValue(c.p_value),
      ...(adjusted.length ? [pValue(c.p_adjusted)] : []),
      c.mde === null ? '—' : `±${inPp ? pp(c.mde).replace('+', '') : fixed(c.mde, 3)}`,
    ];
  });
  return table(head, rows, head.map((_, i) => (i < (v.suiteColumn ? 4 : 3) ? 'l' : 'r')));
}

/**
 * A typed pivot streamed a chunk at a time (NULL -> NaN; `forEachNumberChunk`, columns read as
 * typed arrays): `sql` yields the cluster index, the epoch, then one column per subject; rows in
 * the order the SQL sorts them. `each` also sees every chunk's typed columns (columns after the
 * subjects' are the caller's).
 */
export async function pivotColumns(
  conn: DuckDBConnection,
  sql: string,
  subjects: number,
  each?: (cols: Float64Array[], rows: number) => void,
): Promise<{ sid: Int32Array; col: Float64Array[] }> {
  let cap = 1 << 16;
  let sid = new Int32Array(cap);
  let col = Array.from({ length: subjects }, () => new Float64Array(cap));
  let n = 0;
  await forEachNumberChunk(conn, sql, undefined, (cols, rows) => {
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
    // Float64 -> Int32 as an assignment converts (the sid is never NULL).
    sid.set(cols[0].subarray(0, rows), n);
    for (let s = 0; s < subjects; s++) col[s].set(cols[2 + s].subarray(0, rows), n);
    n += rows;
    each?.(cols, rows);
  });
  // Trimmed to the rows (a copy, one column at a time): the doubled buffers are up to twice as long,
  // and a report holds several families at once.
  const trim = <T extends Int32Array | Float64Array>(x: T): T => (x.length === n ? x : (x.slice(0, n) as T));
  sid = trim(sid);
  for (let s = 0; s < subjects; s++) col[s] = trim(col[s]);
  return { sid, col };
}
