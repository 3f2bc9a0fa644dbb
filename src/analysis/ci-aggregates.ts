/**
 * `standoff ci exact|bootstrap|paired --from-aggregates FILE`: the intervals from per-cluster
 * sufficient statistics that any SQL engine wrote (CSV or Parquet), instead of the store's rows.
 * The SQL that writes them is in `sql/` (`aggregateSql`); the columns:
 *
 * - exact and bootstrap (`cluster-aggregates.sql`): the cluster column (`--cluster`, default
 *   scenario_id), n, sum, sum_sq, and optionally not_measured, nonbinary (required by exact) and
 *   the group columns subject_model, run_id, domain, decision_type, variant (`--by` picks some).
 * - paired (`paired-aggregates.sql`): the cluster column, n, sum_a, sum_b, sum_sq_a, sum_sq_b,
 *   sum_ab, only_a, only_b, and optionally duplicates.
 *
 * Rows with the same group and cluster are added up (sufficient statistics are additive), so an
 * engine may write the file in parts. Clusters enter the bootstrap in the order the store path
 * meets them (one-sample: by subject_model then cluster, UTF-8 byte order as DuckDB sorts;
 * paired: by the `cluster/` text, as the pair keys sort), so with the same seed the intervals are
 * the store path's bit for bit; SEs, p and MDE come from the moments and agree to rounding
 * (docs/scale.md). A bad file is a one-line data error naming the file, its line (Parquet: row)
 * and the column (exit 3).
 */
import { readFileSync } from 'node:fs';
import type { MetricDef } from '../store/metrics.ts';
import type { SqlParams } from '../store/duckdb.ts';
import { dataError, usageError } from '../errors.ts';
import { packagePath } from '../paths.ts';
import { clopperPearson, clusterBootstrapTotals, clusteredStandardErrorFromTotals, cltStandardErrorFromMoments, type BinomialInterval, type Sided } from '../stats/index.ts';
import { StandoffError } from '../errors.ts';
import { orderedInterval } from './ci-exact.ts';
import { exactRepeatsNote, notBinaryNote, type ExactResult, type Group } from './ci.ts';
import { DEFAULT_CLUSTER, bootstrapFields, parseStatistic, statisticLabel, type BootstrapCi, type BootstrapCiOptions, type PairedCi, type PairedCiOptions } from './ci-bootstrap.ts';
import { comparePairedFromTotals } from './paired-comparison.ts';
import { DEGENERATE } from './rates.ts';
import { numbers, readInputFile, texts, type InputColumn, type InputTable } from './input-file.ts';

/** The SQL files, by engine: DuckDB's are what the test runs; Spark SQL and Trino differ only where listed in docs/scale.md. */
export const AGGREGATE_SQL = { cluster: 'cluster-aggregates.sql', paired: 'paired-aggregates.sql' } as const;
export type AggregateEngine = 'duckdb' | 'spark' | 'trino';

/** The text of a shipped aggregate SQL file (`sql/`, in the package). */
export function aggregateSql(kind: keyof typeof AGGREGATE_SQL, engine: AggregateEngine = 'duckdb'): string {
  const dir = engine === 'duckdb' || kind === 'cluster' ? [] : [engine];
  return readFileSync(packagePath('sql', ...dir, AGGREGATE_SQL[kind]), 'utf8');
}

/**
 * The DuckDB query that writes a metric's aggregates over an open store: the shipped SQL file
 * reading `metric_rows` = the metric's rows (`MetricDef.sql`), with the metric's parameters and,
 * for `paired`, `$a` and `$b` bound (never spliced into the text). `COPY (sql) TO 'file.parquet'`
 * writes the file (what tests/cli/ci-aggregates.test.ts does).
 */
export function aggregateQuery(m: Pick<MetricDef, 'sql' | 'params'>, kind: keyof typeof AGGREGATE_SQL, pair?: { a: string; b: string }): { sql: string; params: SqlParams } {
  if (kind === 'paired' && !pair) throw usageError('ci.missingArg', 'paired aggregates need --a and --b');
  return { sql: `WITH metric_rows AS (${m.sql})\nSELECT * FROM (\n${aggregateSql(kind)}\n)`, params: { ...(m.params ?? {}), ...(kind === 'paired' ? pair : {}) } };
}

/** Group columns an aggregate file may carry (constant within a scenario, unlike epoch). */
export const AGGREGATE_GROUPS = ['subject_model', 'run_id', 'domain', 'decision_type', 'variant'] as const;

export interface AggregateFileOptions {
  /** The aggregate file (CSV or Parquet). */
  file: string;
  /** The cluster column (default scenario_id). */
  cluster?: string;
  delimiter?: string;
  /** A label for the output (the metric the file holds). */
  metric?: string;
}

interface Cluster {
  id: string;
  /** Smallest subject_model of its rows (orders clusters as the store path meets them). */
  subject: string | null;
  n: number;
  sum: number;
  sumSq: number;
  nonbinary: number;
}

interface AggGroup {
  group: Group;
  clusters: Cluster[];
  notMeasured: number | null;
}

/** Characters where UTF-16 order (JS `<`) and UTF-8 byte order (DuckDB's VARCHAR order) can disagree. */
const HIGH = /[\uD800-\uFFFF]/;
/** DuckDB's VARCHAR order (bytes of UTF-8), NULL last; JS order where it is the same (no character above U+D7FF). */
function byteOrder(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (HIGH.test(a) || HIGH.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : 1;
}

/** A data error naming the file, the row's line and the column. */
const bad = (t: InputTable, i: number, col: string, what: string) => dataError('aggregates.badValue', `${t.file}: ${t.unit} ${t.lines[i]}: column "${col}": ${what}`);

/** A count cell: an integer >= 0. */
function count(t: InputTable, col: string, i: number): number {
  const v = numbers(t, col)[i]!;
  if (!Number.isInteger(v) || v < 0) throw bad(t, i, col, `expected a count (an integer >= 0), got ${v}`);
  return v;
}

function finite(t: InputTable, col: string, i: number): number {
  const v = numbers(t, col)[i]!;
  if (!Number.isFinite(v)) throw bad(t, i, col, `expected a finite number, got ${v}`);
  return v;
}

/** n, sum and sum of squares of one row, checked: an empty cluster sums to 0, and sum_sq >= sum^2 / n (Cauchy-Schwarz). */
function moments(t: InputTable, i: number, cols: { n: string; sum: string; sumSq: string }): { n: number; sum: number; sumSq: number } {
  const n = count(t, cols.n, i);
  const sum = finite(t, cols.sum, i);
  const sumSq = finite(t, cols.sumSq, i);
  if (n === 0 && (sum !== 0 || sumSq !== 0)) throw bad(t, i, sum !== 0 ? cols.sum : cols.sumSq, `is ${sum !== 0 ? sum : sumSq} where ${cols.n} is 0`);
  if (sumSq < 0 || (n > 0 && sumSq < ((sum * sum) / n) * (1 - 1e-9) - 1e-9)) throw bad(t, i, cols.sumSq, `${sumSq} is below ${cols.sum}^2 / ${cols.n} = ${(sum * sum) / n}: not a sum of squares of these values`);
  return { n, sum, sumSq };
}

/** Reads a one-sample aggregate file (see the module comment), grouped by `by`, clusters merged and ordered. */
async function readClusterFile(o: AggregateFileOptions, by: string[], needBinary: boolean): Promise<AggGroup[]> {
  for (const c of by) {
    if (!(AGGREGATE_GROUPS as readonly string[]).includes(c)) throw usageError('metric.unknownColumn', `--by ${c} does not go with --from-aggregates (a file holds one row per cluster); use ${AGGREGATE_GROUPS.join(', ')}`);
  }
  const cluster = o.cluster ?? DEFAULT_CLUSTER;
  const num = (name: string, optional = false): InputColumn => ({ name, kind: 'number', flag: '--from-aggregates', ...(optional ? { optional: true, ifPresent: true } : {}) });
  const t = await readInputFile(o.file, [
    { name: cluster, kind: 'text', flag: '--cluster' },
    num('n'), num('sum'), num('sum_sq'), num('not_measured', true),
    needBinary ? num('nonbinary') : num('nonbinary', true),
    ...by.map((name): InputColumn => ({ name, kind: 'text', optional: true, flag: '--by' })),
    ...(by.includes('subject_model') ? [] : [{ name: 'subject_model', kind: 'text', optional: true, ifPresent: true } as InputColumn]),
  ], { delimiter: o.delimiter });
  const groups = new Map<string, AggGroup & { index: Map<string, Cluster> }>();
  const subj = t.values.subject_model ? texts(t, 'subject_model') : null;
  for (let i = 0; i < t.rows; i++) {
    const { n, sum, sumSq } = moments(t, i, { n: 'n', sum: 'sum', sumSq: 'sum_sq' });
    const nb = t.values.nonbinary ? count(t, 'nonbinary', i) : 0;
    if (nb > n) throw bad(t, i, 'nonbinary', `${nb} is more than n = ${n}`);
    const missing = t.values.not_measured ? count(t, 'not_measured', i) : null;
    const key = by.length === 0 ? '' : by.length === 1 ? String(texts(t, by[0]!)[i]) + (texts(t, by[0]!)[i] === null ? '\u0001' : '') : by.map((c) => JSON.stringify(texts(t, c)[i])).join(',');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { group: Object.fromEntries(by.map((c) => [c, texts(t, c)[i]])), clusters: [], notMeasured: t.values.not_measured ? 0 : null, index: new Map() }));
    if (missing !== null) g.notMeasured! += missing;
    const id = texts(t, cluster)[i]!;
    const s = subj ? subj[i]! : null;
    const c = g.index.get(id);
    if (!c) {
      const fresh = { id, subject: s, n, sum, sumSq, nonbinary: nb };
      g.index.set(id, fresh);
      g.clusters.push(fresh);
    } else {
      Object.assign(c, { n: c.n + n, sum: c.sum + sum, sumSq: c.sumSq + sumSq, nonbinary: c.nonbinary + nb });
      if (byteOrder(s, c.subject) < 0) c.subject = s;
    }
  }
  const out = [...groups.values()].sort((a, b) => {
    for (const c of by) {
      const d = byteOrder(a.group[c] as string | null, b.group[c] as string | null);
      if (d) return d;
    }
    return 0;
  });
  for (const g of out) {
    // JS order equals DuckDB's byte order unless a string has a character above U+D7FF: test once, not per comparison.
    const plain = !g.clusters.some((c) => HIGH.test(c.id) || (c.subject !== null && HIGH.test(c.subject)));
    const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const cmp = plain ? text : byteOrder;
    g.clusters.sort((a, b) => cmp(a.subject ?? '', b.subject ?? '') || cmp(a.id, b.id));
  }
  return out.map(({ group, clusters, notMeasured }) => ({ group, clusters, notMeasured }));
}

const withGroup = <T>(by: string[], g: AggGroup, r: T) => (by.length ? { group: g.group, ...r } : r);
const label = (metric?: string) => (metric ? { metric } : {});

/* ------------------------------------------------------------------ ci exact */

/**
 * `ci exact --from-aggregates FILE [--by COLS]`: successes and trials summed per group, as
 * `ci exact --metric` counts them over the store (a group with values other than 0 and 1 has no
 * exact interval and says so).
 */
export async function ciExactAggregates(o: AggregateFileOptions & { by?: string[]; level?: number; sided?: Sided }): Promise<ExactResult[]> {
  const by = o.by ?? [];
  const groups = await readClusterFile(o, by, true);
  const name = o.metric ?? 'METRIC';
  return groups.map((g) => {
    const n = g.clusters.reduce((a, c) => a + c.n, 0);
    const k = g.clusters.reduce((a, c) => a + c.sum, 0);
    const nb = g.clusters.reduce((a, c) => a + c.nonbinary, 0);
    const missing = g.notMeasured !== null ? { not_measured: g.notMeasured } : {};
    const ci = (x: number, m: number): BinomialInterval => orderedInterval(clopperPearson(x, m, { level: o.level, sided: o.sided }));
    if (nb > 0) return withGroup(by, g, { ...label(o.metric), ...ci(0, 0), trials: n, ...missing, sampling: 'independent' as const, note: notBinaryNote(nb, name) });
    if (!Number.isInteger(k)) throw dataError('aggregates.badValue', `${o.file}: column "sum" adds up to ${k} in a group whose values are 0/1 (nonbinary 0): successes must be a whole number`);
    const maxK = g.clusters.reduce((a, c) => Math.max(a, c.n), 0);
    const r: ExactResult = { ...label(o.metric), ...ci(k, n), ...missing, sampling: 'independent', max_per_scenario: maxK };
    if (maxK > 1) r.note = exactRepeatsNote(name, maxK);
    return withGroup(by, g, r);
  });
}

/* ------------------------------------------------------------- ci bootstrap */

/**
 * The clustered interval of a mean from per-cluster totals: what `intervalFor` gives for the
 * values with cluster ids (the cluster bootstrap only sees the totals), with the CLT and
 * clustered SEs from the moments.
 */
export function intervalFromTotals(clusters: Cluster[], o: BootstrapCiOptions, clusterName: string, statistic: string): BootstrapCi {
  const sums = Float64Array.from(clusters, (c) => c.sum);
  const sizes = Float64Array.from(clusters, (c) => c.n);
  let n = 0;
  let total = 0;
  let sumSq = 0;
  for (const c of clusters) [n, total, sumSq] = [n + c.n, total + c.sum, sumSq + c.sumSq];
  const base = { n, statistic, sampling: 'clustered' as const, cluster: clusterName, estimate: null, lower: null, upper: null, level: o.level, method: o.method, resamples: o.resamples, seed: o.seed };
  try {
    const r = clusterBootstrapTotals(sums, sizes, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed });
    const out: BootstrapCi = {
      ...base,
      ...bootstrapFields(r),
      se_clt: n > 1 ? cltStandardErrorFromMoments(n, total, sumSq, { ddof: 1 }) : null,
      se_clt_ddof0: cltStandardErrorFromMoments(n, total, sumSq, { ddof: 0 }),
    };
    if (r.note) out.note = r.note;
    else if (r.se === 0) [out.lower, out.upper, out.note] = [null, null, DEGENERATE];
    out.clusters = r.clusters;
    const se = (variant: 'cr0' | 'cr1' | 'miller') => clusteredStandardErrorFromTotals(sums, sizes, sumSq, { variant });
    out.se_clustered = out.clusters > 1 ? { cr0: se('cr0'), cr1: se('cr1'), miller: se('miller') } : null;
    return out;
  } catch (err) {
    if (!(err instanceof StandoffError) || err.kind !== 'data') throw err;
    return { ...base, estimate: n === 0 ? null : total / n, lower: null, upper: null, se: null, se_clt: null, se_clt_ddof0: null, note: `undefined: ${err.message}` };
  }
}

/** `ci bootstrap --from-aggregates FILE [--by COLS]`: the clustered bootstrap of the mean (or proportion). */
export async function ciBootstrapAggregates(o: AggregateFileOptions & BootstrapCiOptions): Promise<BootstrapCi | BootstrapCi[]> {
  const stat = parseStatistic(typeof o.statistic === 'object' ? statisticLabel(o.statistic) : o.statistic, ['mean', 'proportion']);
  const by = o.by ?? [];
  const groups = await readClusterFile(o, by, stat.name === 'proportion');
  const out = groups.map((g) => {
    if (stat.name === 'proportion' && g.clusters.some((c) => c.nonbinary > 0)) throw dataError('ci.notBinary', `--statistic proportion needs 0/1 values, but ${o.file} counts ${g.clusters.reduce((a, c) => a + c.nonbinary, 0)} other value(s)${by.length ? ` in group ${JSON.stringify(g.group)}` : ''}`);
    const r = intervalFromTotals(g.clusters, o, o.cluster ?? DEFAULT_CLUSTER, statisticLabel(stat));
    if (g.notMeasured !== null) r.not_measured = g.notMeasured;
    return withGroup(by, g, { ...label(o.metric), ...r });
  });
  return by.length ? out : out[0]!;
}

/* --------------------------------------------------------------- ci paired */

const PAIRED_COLUMNS = ['n', 'sum_a', 'sum_b', 'sum_sq_a', 'sum_sq_b', 'sum_ab', 'only_a', 'only_b'] as const;

/** `ci paired --from-aggregates FILE --a A --b B`: the paired cluster bootstrap of mean(a - b) from per-cluster moments. */
export async function ciPairedAggregates(o: AggregateFileOptions & PairedCiOptions): Promise<PairedCi> {
  const stat = parseStatistic(typeof o.statistic === 'object' ? statisticLabel(o.statistic) : o.statistic, ['mean']);
  const a = o.a ?? 'a';
  const b = o.b ?? 'b';
  const cluster = o.cluster ?? DEFAULT_CLUSTER;
  const t = await readInputFile(o.file, [
    { name: cluster, kind: 'text', flag: '--cluster' },
    ...PAIRED_COLUMNS.map((name): InputColumn => ({ name, kind: 'number', flag: '--from-aggregates' })),
    { name: 'duplicates', kind: 'number', optional: true, ifPresent: true },
  ], { delimiter: o.delimiter });
  const byId = new Map<string, Record<(typeof PAIRED_COLUMNS)[number], number>>();
  for (let i = 0; i < t.rows; i++) {
    if (t.values.duplicates && count(t, 'duplicates', i) > 0) throw bad(t, i, 'duplicates', `${numbers(t, 'duplicates')[i]} (scenario, epoch) key(s) occur twice for one subject (several runs?): filter metric_rows to one run per subject`);
    const ma = moments(t, i, { n: 'n', sum: 'sum_a', sumSq: 'sum_sq_a' });
    const mb = moments(t, i, { n: 'n', sum: 'sum_b', sumSq: 'sum_sq_b' });
    const row = { n: ma.n, sum_a: ma.sum, sum_b: mb.sum, sum_sq_a: ma.sumSq, sum_sq_b: mb.sumSq, sum_ab: finite(t, 'sum_ab', i), only_a: count(t, 'only_a', i), only_b: count(t, 'only_b', i) };
    const id = texts(t, cluster)[i]!;
    const prev = byId.get(id);
    if (prev) for (const k of PAIRED_COLUMNS) prev[k] += row[k];
    else byId.set(id, row);
  }
  // The store path sorts pair keys `scenario/epoch` as text: clusters meet in the order of `scenario/`.
  const ids = [...byId.keys()].sort((x, y) => (`${x}/` < `${y}/` ? -1 : `${x}/` > `${y}/` ? 1 : 0));
  const rows = ids.map((id) => byId.get(id)!);
  const total = (k: (typeof PAIRED_COLUMNS)[number]) => rows.reduce((s, r) => s + r[k], 0);
  const n = total('n');
  for (const [flag, s, only] of [['--a', a, 'only_a'], ['--b', b, 'only_b']] as const) {
    if (n + total(only) === 0) throw dataError('paired.noArm', `${o.file}: ${flag} "${s}" has no values (n and ${only} are 0 in every row)`);
  }
  if (n === 0) throw dataError('paired.noPairs', `${o.file}: --a "${a}" and --b "${b}" share no paired items (n is 0 in every row)`);
  if (n < 2) throw dataError('paired.tooFew', `${o.file}: --a "${a}" and --b "${b}" share ${n} paired item; a paired interval needs at least 2`);
  const r = comparePairedFromTotals(
    { n, sumA: total('sum_a'), sumB: total('sum_b'), sumSqA: total('sum_sq_a'), sumSqB: total('sum_sq_b'), sumAB: total('sum_ab'), sizes: Float64Array.from(rows, (x) => x.n), sumsDiff: Float64Array.from(rows, (x) => x.sum_a - x.sum_b) },
    cluster,
    { level: o.level, seed: o.seed, resamples: o.resamples, method: o.method },
  );
  return { a, b, ...label(o.metric), dropped_unpaired: total('only_a') + total('only_b'), statistic: stat.name as 'mean', ...r };
}
