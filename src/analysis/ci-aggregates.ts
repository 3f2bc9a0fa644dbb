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
import { quoteIdent, forEachChunk } from '../store/duckdb.ts';
import { withAggregateFile, type AggCheck, type AggColumn } from './aggregate-file.ts';
import { GrowableFloat64 } from '../growable-array.ts';

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

/** One group of a one-sample file: its clusters' sizes and sums in the store path's order, and its totals. */
interface AggGroup {
  group: Group;
  /** Per cluster, in order: observations and their sum (rows of one cluster added up). */
  sizes: Float64Array;
  sums: Float64Array;
  /** Totals in cluster order (the order the vector path adds them in). */
  n: number;
  total: number;
  sumSq: number;
  nonbinary: number;
  /** Most observations in one cluster. */
  maxN: number;
  notMeasured: number | null;
}

/** A count column, a finite number column, a text column (see `AggColumn`). */
const countCol = (name: string, ifPresent = false): AggColumn => ({ name, kind: 'count', flag: '--from-aggregates', ...(ifPresent ? { ifPresent } : {}) });
const numberCol = (name: string): AggColumn => ({ name, kind: 'number', flag: '--from-aggregates' });

/** n, sum and sum of squares of one row, checked in SQL: an empty cluster sums to 0, and sum_sq >= sum^2 / n (Cauchy-Schwarz). */
function momentChecks(n: string, sum: string, sumSq: string): AggCheck[] {
  const [N, S, Q] = [n, sum, sumSq].map(quoteIdent) as [string, string, string];
  return [
    { bad: `${N} = 0 AND (${S} <> 0 OR ${Q} <> 0)`, column: (v) => (v[sum] !== 0 ? sum : sumSq), what: (v) => `is ${v[sum] !== 0 ? v[sum] : v[sumSq]} where ${n} is 0` },
    {
      bad: `${Q} < 0 OR (${N} > 0 AND ${Q} < ((${S} * ${S}) / ${N}) * (1 - 1e-9) - 1e-9)`,
      column: () => sumSq,
      what: (v) => `${v[sumSq]} is below ${sum}^2 / ${n} = ${(v[sum]! * v[sum]!) / v[n]!}: not a sum of squares of these values`,
    },
  ];
}


/** The columns of a one-sample file (see the module comment). */
function clusterColumns(cluster: string, by: string[], needBinary: boolean): AggColumn[] {
  return [
    { name: cluster, kind: 'text', flag: '--cluster' },
    countCol('n'),
    numberCol('sum'),
    numberCol('sum_sq'),
    countCol('not_measured', true),
    countCol('nonbinary', !needBinary),
    ...by.map((name): AggColumn => ({ name, kind: 'text', nullable: true, flag: '--by' })),
    ...(by.includes('subject_model') ? [] : [{ name: 'subject_model', kind: 'text', nullable: true, ifPresent: true } as AggColumn]),
  ];
}

/**
 * Reads a one-sample aggregate file (see the module comment), grouped by `by`: rows of one
 * cluster added up (`fsum`, compensated: the same total whatever order DuckDB meets them in), groups in DuckDB's VARCHAR (UTF-8 byte) order with NULL last,
 * clusters by their smallest subject_model, then id, as the store path meets them. Totals are
 * added in JS in that order; with `arrays`, each group's per-cluster sizes and sums also come
 * back as typed arrays (the bootstrap). Per-cluster rows are streamed a chunk at a time.
 */
async function readClusterFile(o: AggregateFileOptions, by: string[], needBinary: boolean, arrays: boolean): Promise<AggGroup[]> {
  for (const c of by) {
    if (!(AGGREGATE_GROUPS as readonly string[]).includes(c)) throw usageError('metric.unknownColumn', `--by ${c} does not go with --from-aggregates (a file holds one row per cluster); use ${AGGREGATE_GROUPS.join(', ')}`);
  }
  const cluster = o.cluster ?? DEFAULT_CLUSTER;
  const nonbinary: AggCheck = { needs: 'nonbinary', bad: 'nonbinary > n', column: () => 'nonbinary', what: (v) => `${v.nonbinary} is more than n = ${v.n}` };
  const checks = [...momentChecks('n', 'sum', 'sum_sq'), nonbinary];
  return withAggregateFile(o.file, clusterColumns(cluster, by, needBinary), checks, { delimiter: o.delimiter }, async ({ conn, present }) => {
    const cols = by.map(quoteIdent).map((x) => `${x}, `).join('');
    const order = by.map((c) => `${quoteIdent(c)} NULLS LAST, `).join('');
    const subject = present.has('subject_model') ? 'min(subject_model)' : 'NULL';
    // Rows of one cluster (a file written in parts) are added with compensated summation (fsum), so
    // the total does not depend on DuckDB's thread schedule; a single row's values pass unchanged.
    await conn.run(
      `CREATE TEMP TABLE clusters AS SELECT ${cols}CAST(${quoteIdent(cluster)} AS VARCHAR) AS id, sum(n) AS n, fsum(sum) AS s, fsum(sum_sq) AS ss, ${present.has('nonbinary') ? 'sum(nonbinary)' : '0'} AS nb, ${subject} AS subj FROM agg GROUP BY ALL`,
    );
    const notMeasured = present.has('not_measured') ? 'sum(not_measured)' : 'NULL';
    const heads = (await conn.runAndReadAll(`SELECT ${cols}${notMeasured} AS nm FROM agg GROUP BY ALL ORDER BY ${order}1`)).getRowObjectsJS();
    const groups = heads.map((h): AggGroup & { grow: [GrowableFloat64, GrowableFloat64] } => ({
      group: Object.fromEntries(by.map((c) => [c, (h[c] ?? null) as string | null])),
      sizes: new Float64Array(),
      sums: new Float64Array(),
      n: 0,
      total: 0,
      sumSq: 0,
      nonbinary: 0,
      maxN: 0,
      notMeasured: h.nm === null ? null : Number(h.nm),
      grow: [new GrowableFloat64(), new GrowableFloat64()],
    }));
    if (!arrays) {
      // Totals only (exact): counts and 0/1 sums are integers, exact in any order.
      const tot = (await conn.runAndReadAll(`SELECT ${cols}sum(n) AS n, sum(s) AS s, sum(nb) AS nb, max(n) AS mx FROM clusters GROUP BY ALL ORDER BY ${order}1`)).getRowObjectsJS();
      return groups.map(({ grow: _, ...g }, i) => ({ ...g, n: Number(tot[i]!.n), total: Number(tot[i]!.s), nonbinary: Number(tot[i]!.nb), maxN: Number(tot[i]!.mx) }));
    }
    // Groups in the order of `heads` (gi = 1, 2, ...), clusters in the store path's order within each.
    const rank = by.length ? `dense_rank() OVER (ORDER BY ${order}1)` : '1';
    const sql = `SELECT ${rank} AS gi, n, s, ss, nb FROM clusters ORDER BY ${order}coalesce(subj, ''), id`;
    await forEachChunk(conn, sql, undefined, (columns, rows) => {
      const [G, N, S, SS, NB] = columns as [unknown[], number[], number[], number[], number[]];
      for (let i = 0; i < rows; i++) {
        const g = groups[Number(G[i]) - 1]!;
        const n = N[i]!;
        g.n += n;
        g.total += S[i]!;
        g.sumSq += SS[i]!;
        g.nonbinary += Number(NB[i]);
        if (n > g.maxN) g.maxN = n;
        g.grow[0].push(n);
        g.grow[1].push(S[i]!);
      }
    });
    return groups.map(({ grow, ...g }) => ({ ...g, sizes: grow[0].toArray(), sums: grow[1].toArray() }));
  });
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
  const groups = await readClusterFile(o, by, true, false);
  const name = o.metric ?? 'METRIC';
  return groups.map((g) => {
    const [n, k, nb] = [g.n, g.total, g.nonbinary];
    const missing = g.notMeasured !== null ? { not_measured: g.notMeasured } : {};
    const ci = (x: number, m: number): BinomialInterval => orderedInterval(clopperPearson(x, m, { level: o.level, sided: o.sided }));
    if (nb > 0) return withGroup(by, g, { ...label(o.metric), ...ci(0, 0), trials: n, ...missing, sampling: 'independent' as const, note: notBinaryNote(nb, name) });
    if (!Number.isInteger(k)) throw dataError('aggregates.badValue', `${o.file}: column "sum" adds up to ${k} in a group whose values are 0/1 (nonbinary 0): successes must be a whole number`);
    const maxK = g.maxN;
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
export function intervalFromTotals(g: Pick<AggGroup, 'sizes' | 'sums' | 'n' | 'total' | 'sumSq'>, o: BootstrapCiOptions, clusterName: string, statistic: string): BootstrapCi {
  const { sums, sizes, n, total, sumSq } = g;
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
  const groups = await readClusterFile(o, by, stat.name === 'proportion', true);
  const out = groups.map((g) => {
    if (stat.name === 'proportion' && g.nonbinary > 0) throw dataError('ci.notBinary', `--statistic proportion needs 0/1 values, but ${o.file} counts ${g.nonbinary} other value(s)${by.length ? ` in group ${JSON.stringify(g.group)}` : ''}`);
    const r = intervalFromTotals(g, o, o.cluster ?? DEFAULT_CLUSTER, statisticLabel(stat));
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
  const columns: AggColumn[] = [
    { name: cluster, kind: 'text', flag: '--cluster' },
    ...PAIRED_COLUMNS.map((name) => (name === 'n' || name.startsWith('only_') ? countCol(name) : numberCol(name))),
    countCol('duplicates', true),
  ];
  const duplicates: AggCheck = { needs: 'duplicates', bad: 'duplicates > 0', column: () => 'duplicates', what: (v) => `${v.duplicates} (scenario, epoch) key(s) occur twice for one subject (several runs?): filter metric_rows to one run per subject` };
  const checks = [duplicates, ...momentChecks('n', 'sum_a', 'sum_sq_a'), ...momentChecks('n', 'sum_b', 'sum_sq_b')];
  const { sizes, sumsDiff, totals } = await withAggregateFile(o.file, columns, checks, { delimiter: o.delimiter }, async ({ conn }) => {
    // Rows of one cluster added with fsum (as above). The store path sorts pair keys `scenario/epoch`
    // as text, so clusters meet in the order of `scenario/` (DuckDB's byte order; the same as
    // JavaScript's unless an id mixes characters above U+FFFF with U+E000..U+FFFF).
    const sums = PAIRED_COLUMNS.map((k) => `fsum(${quoteIdent(k)}) AS ${quoteIdent(k)}`).join(', ');
    const sql = `SELECT ${sums} FROM agg GROUP BY CAST(${quoteIdent(cluster)} AS VARCHAR) ORDER BY CAST(${quoteIdent(cluster)} AS VARCHAR) || '/'`;
    const totals = Object.fromEntries(PAIRED_COLUMNS.map((k) => [k, 0])) as Record<(typeof PAIRED_COLUMNS)[number], number>;
    const [sz, diff] = [new GrowableFloat64(), new GrowableFloat64()];
    await forEachChunk(conn, sql, undefined, (cols, rows) => {
      const c = Object.fromEntries(PAIRED_COLUMNS.map((k, j) => [k, cols[j] as number[]])) as Record<(typeof PAIRED_COLUMNS)[number], number[]>;
      for (let i = 0; i < rows; i++) {
        for (const k of PAIRED_COLUMNS) totals[k] += c[k][i]!;
        sz.push(c.n[i]!);
        diff.push(c.sum_a[i]! - c.sum_b[i]!);
      }
    });
    return { sizes: sz.toArray(), sumsDiff: diff.toArray(), totals };
  });
  const total = (k: (typeof PAIRED_COLUMNS)[number]) => totals[k];
  const n = total('n');
  for (const [flag, s, only] of [['--a', a, 'only_a'], ['--b', b, 'only_b']] as const) {
    if (n + total(only) === 0) throw dataError('paired.noArm', `${o.file}: ${flag} "${s}" has no values (n and ${only} are 0 in every row)`);
  }
  if (n === 0) throw dataError('paired.noPairs', `${o.file}: --a "${a}" and --b "${b}" share no paired items (n is 0 in every row)`);
  if (n < 2) throw dataError('paired.tooFew', `${o.file}: --a "${a}" and --b "${b}" share ${n} paired item; a paired interval needs at least 2`);
  const r = comparePairedFromTotals(
    { n, sumA: total('sum_a'), sumB: total('sum_b'), sumSqA: total('sum_sq_a'), sumSqB: total('sum_sq_b'), sumAB: total('sum_ab'), sizes, sumsDiff },
    cluster,
    { level: o.level, seed: o.seed, resamples: o.resamples, method: o.method },
  );
  return { a, b, ...label(o.metric), dropped_unpaired: total('only_a') + total('only_b'), statistic: stat.name as 'mean', ...r };
}
