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
import { clopperPearson, clusterBootstrapTotals } from '../stats/index.ts';
import { StandoffError } from '../errors.ts';
import type { Plain } from '../store/duckdb.ts';
import { quoteIdent } from '../store/duckdb.ts';

export type Sampling = 'independent' | 'clustered';

/** One interval in results.json and the CLI: what it is, and what it treats as the sampling unit. */
export interface Interval {
  lower: number | null;
  upper: number | null;
  level: number;
  /** 'clopper-pearson', 'cluster-bootstrap-percentile', 'paired-cluster-bootstrap-percentile', ... */
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
  /** Bootstrap standard error. */
  se?: number;
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

export function exactInterval(successes: number, trials: number, level: number): Interval {
  const ci = clopperPearson(successes, trials, { level });
  return { lower: ci.lower, upper: ci.upper, level, method: 'clopper-pearson', sampling: 'independent', ...(trials === 0 ? { note: 'no observations' } : {}) };
}

/** Cluster bootstrap of a mean from per-cluster sums and sizes; null-valued with a note when it cannot run. */
export function clusterIntervalFromTotals(sums: readonly number[], sizes: readonly number[], cluster: string, o: RateOptions): Interval {
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

/**
 * Rates of `value` in `source`, one per group of `groupCols`, clustered on `clusterCol` (null: no
 * clustering, every observation independent). Groups come back in the order of their columns.
 */
export async function metricRates(
  q: (sql: string) => Promise<Record<string, Plain>[]>,
  source: string,
  groupCols: readonly string[],
  clusterCol: string | null,
  o: RateOptions,
): Promise<Rate[]> {
  const g = groupCols.map(quoteIdent);
  const c = clusterCol ? quoteIdent(clusterCol) : 'NULL';
  const keys = [...g, `${c} AS "__cluster"`, 'value'];
  const rows = await q(
    `SELECT ${keys.join(', ')}, CAST(count(*) AS BIGINT) AS "__n" FROM (${source}) GROUP BY ALL
     ORDER BY ${[...g, '"__cluster"', 'value'].map((x) => `${x} NULLS LAST`).join(', ')}`,
  );
  const out: Rate[] = [];
  let i = 0;
  while (i < rows.length) {
    const key = (r: Record<string, Plain>) => groupCols.map((col) => JSON.stringify(r[col])).join('\u0000');
    const k0 = key(rows[i]);
    let j = i;
    while (j < rows.length && key(rows[j]) === k0) j++;
    out.push(rateOf(rows.slice(i, j), groupCols, clusterCol, o));
    i = j;
  }
  return out;
}

function rateOf(rows: Record<string, Plain>[], groupCols: readonly string[], clusterCol: string | null, o: RateOptions): Rate {
  const group = Object.fromEntries(groupCols.map((col) => [col, rows[0][col]]));
  let successes = 0;
  let trials = 0;
  let notMeasured = 0;
  let split = 0;
  let binary = true;
  const sums: number[] = [];
  const sizes: number[] = [];
  let last: Plain | undefined;
  for (const r of rows) {
    const n = Number(r.__n);
    if (r.value === null) {
      notMeasured += n;
      continue;
    }
    const v = Number(r.value);
    if (v !== 0 && v !== 1) binary = false;
    if (v === 0.5) split += n;
    successes += v * n;
    trials += n;
    if (clusterCol === null) continue;
    if (sums.length === 0 || r.__cluster !== last) {
      sums.push(0);
      sizes.push(0);
      last = r.__cluster;
    }
    sums[sums.length - 1] += v * n;
    sizes[sizes.length - 1] += n;
  }
  const maxPer = clusterCol ? Math.max(0, ...sizes) : Math.min(1, trials);
  const exact = binary ? exactInterval(successes, trials, o.level) : null;
  const needCluster = clusterCol !== null && trials > 0 && (maxPer > 1 || !binary);
  const cluster = needCluster ? clusterIntervalFromTotals(sums, sizes, o.clusterLabel ?? clusterCol!, o) : null;
  const interval = shownInterval(cluster, exact) ?? { lower: null, upper: null, level: o.level, method: 'none', sampling: 'independent' as const, note: 'values are not 0/1 and no cluster column was given' };
  return {
    group,
    successes,
    trials,
    not_measured: notMeasured,
    estimate: trials > 0 ? successes / trials : null,
    binary,
    split,
    clusters: clusterCol ? sizes.length : 0,
    max_per_cluster: maxPer,
    interval,
    exact,
    cluster,
  };
}
