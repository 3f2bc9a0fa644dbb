/**
 * Rates of a metric per group, with the sampling unit made explicit: the library behind the
 * report's results and slices tables, shared with `standoff ci exact|bootstrap --metric` so the
 * report and the CLI print the same interval for the same data and seed.
 *
 *   metricRates(q, source, groupCols, clusterCol, opts) -> Rate[]
 *
 * `source` is SQL yielding the group columns, the cluster column (the scenario) and `value`
 * (NULL = not measured). SQL returns one row per (group, cluster, value) with its count; the
 * per-cluster sums and sizes are formed here in a fixed order, so nothing depends on DuckDB's
 * thread schedule, and no observation vector is built.
 *
 * Per group: the measured count and sum, the observations not measured (left out of every
 * denominator and reported), the exact Clopper-Pearson interval (binary values only; it treats
 * every observation as independent) and, where a scenario is observed more than once (epochs) or
 * the values are not 0/1, the percentile cluster bootstrap over scenarios (`clusterBootstrapTotals`,
 * whole scenarios resampled). `interval` is the one to show: the cluster interval when clusters
 * repeat (the default sampling unit is the scenario), else the exact one.
 */
import { addClusterMoments, clopperPearson, clusterBootstrapTotals, clusteredCltInterval, CLT_MIN_CLUSTERS, CLT_MIN_EVENTS, emptyClusterMoments, type ClusterMoments } from '../stats/index.ts';
import { StandoffError } from '../errors.ts';
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import { columnReaders, copyNumberColumn, forEachDataChunk, numericChunk, quoteIdent, toPlain, type Plain } from '../store/duckdb.ts';

export type Sampling = 'independent' | 'clustered';

/** One interval in results.json and the CLI: what it is, and what it treats as the sampling unit. */
export interface Interval {
  lower: number | null;
  upper: number | null;
  level: number;
  /** 'clopper-pearson', 'cluster-bootstrap-percentile', 'paired-cluster-bootstrap-percentile', 'clustered-clt-t-cr1' (above CLT_MIN_CLUSTERS clusters), ... */
  method: string;
  /** 'independent': every observation counted as independent; 'clustered': whole clusters resampled. */
  sampling: Sampling;
  /** The cluster column (e.g. scenario_id) when clustered. */
  cluster?: string;
  /** Clusters resampled. */
  clusters?: number;
  seed?: number;
  resamples?: number;
  /** Bootstrap engine ('multinomial' exact counts, or 'resample'). */
  engine?: string;
  /** Standard error: the bootstrap's, or the CR1 one of the clustered CLT interval. */
  se?: number;
  /** Degrees of freedom of the t quantile (clustered CLT interval: clusters - 1). */
  df?: number;
  /** Why the interval is missing, when it is. */
  note?: string;
}

/**
 * A bootstrap over clusters whose clusters all share one mean has no spread: its interval would be
 * the single point [p, p], which understates the uncertainty (0/90 is not "exactly 0"). Such
 * intervals are reported as missing, with this note.
 */
export const DEGENERATE = 'not reported: every cluster has the same mean outcome, so the cluster bootstrap has no spread (the exact interval, where there is one, applies)';

export interface RateOptions {
  level: number;
  seed: number;
  resamples: number;
  method?: 'percentile' | 'bca' | 'basic';
  /** Name of the cluster column in the output (default: the column's own name). */
  clusterLabel?: string;
  /** A column of `source` holding how many observations each row stands for (rows pre-counted in SQL); default: every row is one. */
  weight?: string;
}

export interface Rate {
  /** Group column -> value. */
  group: Record<string, Plain>;
  /** Sum of the measured values (a count for 0/1 values). */
  successes: number;
  /** Measured observations (the denominator). */
  trials: number;
  /** Observations whose value was not measured (NULL): in no denominator. */
  not_measured: number;
  estimate: number | null;
  /** Every measured value is 0 or 1. */
  binary: boolean;
  /** Values equal to 0.5 (two remaining judges split). */
  split: number;
  /** Distinct clusters (scenarios) with a measured value. */
  clusters: number;
  /** Most measured observations of one cluster (epochs that repeat a scenario). */
  max_per_cluster: number;
  /**
   * The interval to show: `cluster` when clusters repeat (or values are not 0/1) and it could be
   * computed; else `exact` (e.g. when every cluster has the same mean the cluster bootstrap has no
   * spread, and the exact interval is the honest one).
   */
  interval: Interval;
  /** Clopper-Pearson on the counts (treats observations as independent); null when not binary. */
  exact: Interval | null;
  /** Cluster bootstrap over clusters; null when no cluster repeats and the values are 0/1. */
  cluster: Interval | null;
}

/** The counts and intervals of a rate, as the report's tables keep them (results, slices). */
export type RateCounts = Pick<Rate, 'successes' | 'trials' | 'not_measured' | 'estimate' | 'interval' | 'exact' | 'cluster'>;

export function exactInterval(successes: number, trials: number, level: number): Interval {
  const ci = clopperPearson(successes, trials, { level });
  return { lower: ci.lower, upper: ci.upper, level, method: 'clopper-pearson', sampling: 'independent', ...(trials === 0 ? { note: 'no observations' } : {}) };
}

/**
 * The interval of a mean from per-cluster sums and sizes: the percentile cluster bootstrap, or,
 * with `CLT_MIN_CLUSTERS` clusters or more (and, for a rate, `CLT_MIN_EVENTS` successes and
 * failures), the clustered CLT interval (CR1 standard error, t with G - 1 degrees of freedom),
 * which the bootstrap converges to; `method` says which. Null-valued with a note when it cannot run.
 */
export function clusterIntervalFromTotals(sums: readonly number[], sizes: readonly number[], cluster: string, o: RateOptions): Interval {
  const m = emptyClusterMoments();
  for (let c = 0; c < sizes.length; c++) addClusterMoments(m, sums[c], sizes[c]);
  if (usesClt(m)) return clusterIntervalFromMoments(m, cluster, o);
  return bootstrapFromTotals(sums, sizes, cluster, o);
}

/** Whether the clustered CLT replaces the bootstrap for these clusters (see `clusterIntervalFromTotals`). */
export function usesClt(m: ClusterMoments): boolean {
  if (m.clusters < CLT_MIN_CLUSTERS) return false;
  const rate = m.sum >= 0 && m.sum <= m.n;
  return !rate || Math.min(m.sum, m.n - m.sum) >= CLT_MIN_EVENTS;
}

/** The clustered CLT interval from running sums (any number of clusters; callers check `usesClt`). */
export function clusterIntervalFromMoments(m: ClusterMoments, cluster: string, o: RateOptions): Interval {
  const base = { level: o.level, method: CLT_METHOD, sampling: 'clustered' as const, cluster };
  if (m.clusters === 0) return { ...base, lower: null, upper: null, clusters: 0, note: 'no observations' };
  if (m.clusters < 2) return { ...base, lower: null, upper: null, clusters: m.clusters, note: 'one cluster: a clustered interval needs at least 2' };
  if (m.sameMean) return { ...base, lower: null, upper: null, clusters: m.clusters, note: DEGENERATE };
  const r = clusteredCltInterval(m, o.level);
  return { ...base, lower: r.lower, upper: r.upper, clusters: r.clusters, se: r.se, df: r.df };
}

/** Method name of the clustered CLT interval in results.json. */
export const CLT_METHOD = 'clustered-clt-t-cr1';

function bootstrapFromTotals(sums: readonly number[], sizes: readonly number[], cluster: string, o: RateOptions): Interval {
  const method = o.method ?? 'percentile';
  const base = { level: o.level, method: `cluster-bootstrap-${method}`, sampling: 'clustered' as const, cluster, seed: o.seed, resamples: o.resamples };
  const C = sizes.filter((n) => n > 0).length;
  if (C === 0) return { ...base, lower: null, upper: null, clusters: 0, note: 'no observations' };
  if (C < 2) return { ...base, lower: null, upper: null, clusters: C, note: 'one cluster: a cluster bootstrap needs at least 2' };
  let first: number | null = null;
  let same = true;
  sizes.forEach((n, c) => {
    if (n === 0) return;
    const m = sums[c] / n;
    if (first === null) first = m;
    else if (m !== first) same = false;
  });
  if (same) return { ...base, lower: null, upper: null, clusters: C, note: DEGENERATE };
  try {
    const r = clusterBootstrapTotals(sums, sizes, { seed: o.seed, resamples: o.resamples, level: o.level, method });
    const out: Interval = { ...base, lower: finite(r.lower), upper: finite(r.upper), clusters: r.clusters, engine: r.engine };
    if (Number.isFinite(r.se)) out.se = r.se;
    if (r.note) out.note = r.note;
    return out;
  } catch (err) {
    if (err instanceof StandoffError && err.kind === 'data') return { ...base, lower: null, upper: null, clusters: C, note: err.message };
    throw err;
  }
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** The interval a table shows: the cluster interval when there is one with bounds, else the exact one, else the cluster one (with its note). */
export function shownInterval(cluster: Interval | null, exact: Interval | null): Interval | null {
  if (cluster && cluster.lower !== null) return cluster;
  return exact ?? cluster;
}

/** Where metricRates reads its rows: a function returning plain rows, or a connection to stream them from (bounded memory). */
export type RowSource = ((sql: string) => Promise<Record<string, Plain>[]>) | { conn: DuckDBConnection };

/** A cluster key compared by value (a Date or list would otherwise compare by reference). */
const keyOf = (v: unknown): unknown => (v !== null && typeof v === 'object' ? JSON.stringify(toPlain(v)) : v);

/**
 * Rates of `value` in `source`, one per group of `groupCols`, clustered on `clusterCol` (null: no
 * clustering, every observation independent); with `o.weight`, each row of `source` counts that
 * many observations (the same (group, cluster, value, count) rows, so the same rates). Groups come back in the order of their columns.
 * With a connection (`{ conn }`) the (group, cluster, value, count) rows are streamed a chunk at a
 * time and folded into per-cluster sums and sizes: memory grows with the clusters of one group,
 * never with the observations.
 */
export async function metricRates(src: RowSource, source: string, groupCols: readonly string[], clusterCol: string | null, o: RateOptions): Promise<Rate[]> {
  const g = groupCols.map(quoteIdent);
  const c = clusterCol ? quoteIdent(clusterCol) : 'NULL';
  const keys = [...g, `${c} AS "__cluster"`, 'value'];
  const order = `ORDER BY ${[...g, '"__cluster"', 'value'].map((x) => `${x} NULLS LAST`).join(', ')}`;
  // A count as DOUBLE (exact below 2^53): no BigInt per row. Weighted rows are already counted
  // (a few per (group, cluster, value)): they are sorted, not grouped again, and the rows of one
  // (group, cluster, value), adjacent in that order, are folded as one row with their counts summed
  // (integers: exact), as GROUP BY would give them: the same fold, without a hash aggregation.
  const sql = o.weight
    ? `SELECT ${keys.join(', ')}, CAST(${quoteIdent(o.weight)} AS DOUBLE) AS "__n" FROM (${source}) ${order}`
    : `SELECT ${keys.join(', ')}, CAST(count(*) AS DOUBLE) AS "__n" FROM (${source}) GROUP BY ALL ${order}`;
  const fold = new RateFold(groupCols, clusterCol, o);
  if (typeof src === 'function') {
    for (const r of await src(sql)) fold.merger.take(groupCols.map((col) => keyOf(r[col])), r.__cluster, r.value, Number(r.__n));
  } else {
    await streamRows(src.conn, sql, groupCols.length, fold);
  }
  return fold.finish();
}

/**
 * The fold of sorted (group, cluster, value, count) rows into one rate per group: `merger` merges
 * adjacent rows of one (group, cluster, value) (weighted rows), `add` folds each into its group's
 * `RateAccumulator`; `typedRows` is the same fold over a chunk read as typed columns.
 */
class RateFold {
  readonly out: Rate[] = [];
  acc: RateAccumulator | null = null;
  private key: unknown[] = [];
  readonly merger: RowMerger;
  constructor(
    readonly groupCols: readonly string[],
    readonly clusterCol: string | null,
    readonly o: RateOptions,
  ) {
    this.merger = new RowMerger((g, c, v, n) => this.add(g, c, v, n), o.weight !== undefined);
  }

  add(groupValues: unknown[], cluster: unknown, value: unknown, n: number): void {
    this.accFor(groupValues).add(keyOf(cluster), value === null ? null : Number(value), n);
  }

  /** The accumulator of the group `groupValues`: the current one, or a new one where the values differ. */
  accFor(groupValues: unknown[]): RateAccumulator {
    if (!this.acc || differs(groupValues, this.key)) {
      if (this.acc) this.out.push(this.acc.finish(this.clusterCol, this.o));
      this.key = groupValues;
      this.acc = new RateAccumulator(Object.fromEntries(this.groupCols.map((col, k) => [col, toPlain(groupValues[k])])));
    }
    return this.acc;
  }

  finish(): Rate[] {
    this.merger.flush();
    if (this.acc) this.out.push(this.acc.finish(this.clusterCol, this.o));
    this.acc = null;
    return this.out;
  }
}

/**
 * Streams the sorted (group..., cluster, value, count) rows into `fold`. A chunk whose columns are
 * all numbers, with no NULL but in the value column, is read as typed columns (`copyNumberColumn`:
 * the same numbers, without a reader call per value); any other chunk value by value.
 */
async function streamRows(conn: DuckDBConnection, sql: string, G: number, fold: RateFold): Promise<void> {
  const state: { last: unknown[] | null } = { last: null };
  let cols: Float64Array[] = [];
  let valueNulls = new Uint8Array(0);
  const typed = (chunk: DuckDBDataChunk, rows: number): boolean => {
    if (!numericChunk(chunk)) return false;
    if (cols.length !== G + 3 || cols[0].length < rows) [cols, valueNulls] = [Array.from({ length: G + 3 }, () => new Float64Array(Math.max(rows, 2048))), new Uint8Array(Math.max(rows, 2048))];
    for (let c = 0; c < G + 3; c++) if (copyNumberColumn(chunk, c, rows, cols[c], c === G + 1 ? valueNulls : undefined) > 0 && c !== G + 1) return false;
    return true;
  };
  await forEachDataChunk(conn, sql, undefined, (chunk, rows) => {
    if (typed(chunk, rows)) return typedRows(fold, state, G, cols, valueNulls, rows);
    const readers = columnReaders(chunk);
    for (let i = 0; i < rows; i++) {
      // The group's values are gathered only where the group changes (rows come sorted by group).
      let same = state.last !== null;
      for (let k = 0; same && k < G; k++) same = keyOf(readers[k](i)) === state.last![k];
      if (!same) state.last = readers.slice(0, G).map((col) => keyOf(col(i)));
      fold.merger.take(state.last!, readers[G](i), readers[G + 1](i), Number(readers[G + 2](i)));
    }
  });
}

/**
 * `fold.merger.take` of each row of a typed chunk (groups and clusters numbers, no NULL but in the
 * value column: `nulls`), in numbers: the first row through `take` (it may merge with the row left
 * pending by the chunk before), the rest merged here as `take` merges them (the same cluster by
 * ===, the same value by === or both NaN, or both NULL; the same group), each merged row added to
 * its group's accumulator as `add` adds it; the last row left pending in the merger.
 */
function typedRows(fold: RateFold, state: { last: unknown[] | null }, G: number, cols: Float64Array[], nulls: Uint8Array, rows: number): void {
  const m = fold.merger;
  const cl = cols[G];
  const val = cols[G + 1];
  const cnt = cols[G + 2];
  const groupAt = (i: number): unknown[] => {
    let same = state.last !== null;
    for (let k = 0; same && k < G; k++) same = cols[k][i] === state.last![k];
    if (!same) state.last = cols.slice(0, G).map((col) => col[i]);
    return state.last!;
  };
  m.take(groupAt(0), cl[0], nulls[0] ? null : val[0], cnt[0]);
  let pg = m.group!;
  let pc = cl[0];
  let pv = val[0];
  let pNull = nulls[0] === 1;
  let pn = m.n;
  for (let i = 1; i < rows; i++) {
    const g = groupAt(i);
    const c = cl[i];
    const v = val[i];
    const isNull = nulls[i] === 1;
    if (m.merge && c === pc && (isNull ? pNull : !pNull && (v === pv || (Number.isNaN(v) && Number.isNaN(pv)))) && (g === pg || sameGroup(g, pg))) {
      pn += cnt[i];
      continue;
    }
    fold.accFor(pg).add(pc, pNull ? null : pv, pn);
    pg = g;
    pc = c;
    pv = v;
    pNull = isNull;
    pn = cnt[i];
  }
  m.pending(pg, pc, pNull ? null : pv, pn);
}

/**
 * Passes sorted (group, cluster, value, count) rows on to `add`; with `merge`, adjacent rows of one
 * (group, cluster, value) as one row with their counts summed (values compared as GROUP BY does:
 * NULL with NULL, NaN with NaN).
 */
class RowMerger {
  group: unknown[] | null = null;
  private cluster: unknown = undefined;
  private clusterKey: unknown = undefined;
  private value: unknown = undefined;
  n = 0;
  constructor(
    readonly add: (groupValues: unknown[], cluster: unknown, value: unknown, n: number) => void,
    readonly merge: boolean,
  ) {}

  take(group: unknown[], cluster: unknown, value: unknown, n: number): void {
    if (this.merge && this.group !== null) {
      const ck = keyOf(cluster);
      if (ck === this.clusterKey && sameValue(value, this.value) && sameGroup(group, this.group)) {
        this.n += n;
        return;
      }
    }
    this.flush();
    this.group = group;
    this.cluster = cluster;
    this.clusterKey = keyOf(cluster);
    this.value = value;
    this.n = n;
  }

  flush(): void {
    if (this.group !== null) this.add(this.group, this.cluster, this.value, this.n);
    this.group = null;
  }

  /** Leaves a row pending (a number cluster), as `take` would after it. */
  pending(group: unknown[], cluster: number, value: number | null, n: number): void {
    this.group = group;
    this.cluster = cluster;
    this.clusterKey = cluster;
    this.value = value;
    this.n = n;
  }
}

/** Whether a group's values differ from the key's, value by value (`!==`: a NaN differs from itself, as before). */
function differs(values: unknown[], key: unknown[]): boolean {
  for (let k = 0; k < values.length; k++) if (values[k] !== key[k]) return true;
  return false;
}

const sameValue = (a: unknown, b: unknown) => a === b || (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b));
const sameGroup = (a: unknown[], b: unknown[]) => a === b || (a.length === b.length && a.every((v, k) => v === b[k]));

/** One group's rate, folded row by row from (cluster, value, count) rows sorted by cluster then value. */
class RateAccumulator {
  successes = 0;
  trials = 0;
  notMeasured = 0;
  split = 0;
  binary = true;
  sums: number[] = [];
  sizes: number[] = [];
  maxSize = 0;
  last: unknown = undefined;
  constructor(readonly group: Record<string, Plain>) {}

  add(cluster: unknown, v: number | null, n: number): void {
    if (v === null) {
      this.notMeasured += n;
      return;
    }
    if (v !== 0 && v !== 1) this.binary = false;
    if (v === 0.5) this.split += n;
    this.successes += v * n;
    this.trials += n;
    if (this.sums.length === 0 || cluster !== this.last) {
      this.sums.push(0);
      this.sizes.push(0);
      this.last = cluster;
    }
    const k = this.sums.length - 1;
    this.sums[k] += v * n;
    this.sizes[k] += n;
    if (this.sizes[k] > this.maxSize) this.maxSize = this.sizes[k];
  }

  finish(clusterCol: string | null, o: RateOptions): Rate {
    const { successes, trials, binary, sums, sizes } = this;
    const maxPer = clusterCol ? this.maxSize : Math.min(1, trials);
    const exact = binary ? exactInterval(successes, trials, o.level) : null;
    const needCluster = clusterCol !== null && trials > 0 && (maxPer > 1 || !binary);
    const cluster = needCluster ? clusterIntervalFromTotals(sums, sizes, o.clusterLabel ?? clusterCol!, o) : null;
    const interval = shownInterval(cluster, exact) ?? { lower: null, upper: null, level: o.level, method: 'none', sampling: 'independent' as const, note: 'values are not 0/1 and no cluster column was given' };
    return {
      group: this.group,
      successes,
      trials,
      not_measured: this.notMeasured,
      estimate: trials > 0 ? successes / trials : null,
      binary,
      split: this.split,
      clusters: clusterCol ? sizes.length : 0,
      max_per_cluster: maxPer,
      interval,
      exact,
      cluster,
    };
  }
}
