/**
 * `standoff ci bootstrap` and `standoff ci paired`: metric vectors come from the store as Arrow
 * typed columns (grouped in DuckDB order), or from a CSV/Parquet file; resampling is done by
 * `src/stats` with the given seed, which every result records. Analytic standard errors are
 * reported beside each bootstrap interval (CLT; clustered CR0/CR1/Miller with CR1 the one
 * Standoff reports, as Inspect AI does; the paired SE with its covariance term).
 *
 * Sampling unit: over the store, epochs repeat scenarios, so both commands cluster on
 * `scenario_id` by default (`--cluster COL` picks another column, `--no-cluster` treats every
 * observation or pair as independent and says so in `sampling` and `note`). Paired comparisons
 * use `comparePaired` (the report's pairwise table uses it too): a paired cluster bootstrap and
 * the clustered paired SE for p and the MDE. Values not measured (NULL) are left out and counted
 * in `not_measured`.
 */
import {
  autoUsesMultinomial,
  bootstrapMean,
  clusterBootstrap,
  clusteredStandardError,
  cltStandardError,
  meanUnits,
  median as medianOf,
  pairedStandardError,
  type BootstrapResult,
  type ClusterId,
  type StatisticSpec,
} from '../stats/index.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachChunk, query, quoteIdent, type SqlParams } from '../store/duckdb.ts';
import type { MetricDef } from '../store/metrics.ts';
import { StandoffError, dataError, usageError } from '../errors.ts';
import { checkColumns, countNoanswer, countNotMeasured, loadMetric, type MetricKind, type Reducer } from './metrics.ts';
import { DEGENERATE, type Sampling } from './rates.ts';
import { loadCodedMetric } from './ci-coded-metric.ts';
import { boundFields, boundedResamples, drawBudget, drawUnits, type ResampleBound } from './ci-resample-bound.ts';
import { comparePairedOnThreads, type PairedComparison } from './paired-comparison.ts';
import { float64Column, kindFromAggregate, metricFields, resolveMetric, withStore, type Group, type MetricChoice, type StoreSource } from './ci.ts';

type Method = 'percentile' | 'bca' | 'basic';

/** `--statistic`: a resampling statistic, or `proportion` (the mean of 0/1 data, checked). */
export type CiStatistic = StatisticSpec | { name: 'proportion' };

export const STATISTIC_CHOICES = 'mean, median, trimmed-mean:P, quantile:P, sd or proportion';

/**
 * Parses `--statistic`: mean, median, sd, proportion, trimmed-mean:P (P in [0, 0.5); plain
 * `trimmed-mean` is 0.1) or quantile:P (P in (0, 1)). Anything else is a usage error (exit 2).
 */
export function parseStatistic(text: string | undefined, allowed?: readonly string[]): CiStatistic {
  const t = (text ?? 'mean').trim();
  const [name, arg, ...rest] = t.split(':');
  const choices = allowed ? allowed.join(' or ') : STATISTIC_CHOICES;
  if (allowed && !allowed.includes(name)) throw usageError('ci.badStatistic', `--statistic must be ${choices}, got "${t}"`);
  const num = (what: string): number => {
    if (arg === undefined || rest.length || !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(arg)) {
      throw usageError('ci.badStatistic', `--statistic ${name} needs ${what}, as in ${name}:${name === 'quantile' ? '0.9' : '0.1'}, got "${t}"`);
    }
    return Number(arg);
  };
  switch (name) {
    case 'mean':
    case 'median':
    case 'sd':
    case 'proportion':
      if (arg !== undefined) throw usageError('ci.badStatistic', `--statistic ${name} takes no parameter, got "${t}"`);
      return { name };
    case 'trimmed-mean': {
      const trim = arg === undefined ? 0.1 : num('a trim proportion in [0, 0.5)');
      if (!(trim >= 0 && trim < 0.5)) throw usageError('ci.badStatistic', `--statistic trimmed-mean:P needs P in [0, 0.5) (the share cut from each end), got ${arg}`);
      return { name, trim };
    }
    case 'quantile': {
      const p = num('a probability in (0, 1)');
      if (!(p > 0 && p < 1)) throw usageError('ci.badStatistic', `--statistic quantile:P needs P strictly between 0 and 1, got ${arg}`);
      return { name, p };
    }
    default:
      throw usageError('ci.badStatistic', `--statistic must be ${choices}, got "${t}"`);
  }
}

/** The statistic as the output names it: mean, median, trimmed-mean:0.1, quantile:0.9, sd, proportion. */
export const statisticLabel = (s: CiStatistic): string =>
  s.name === 'trimmed-mean' ? `trimmed-mean:${s.trim}` : s.name === 'quantile' ? `quantile:${s.p}` : s.name;

/** `--threads`: an integer >= 1 (usage error otherwise); undefined means the default (cores, capped). */
export function checkThreads(threads: number | undefined): number | undefined {
  if (threads === undefined) return undefined;
  if (!Number.isInteger(threads) || threads < 1) throw usageError('ci.badThreads', `--threads must be an integer >= 1, got ${threads}`);
  return threads;
}

/** The default cluster column over the store: a scenario's epochs are correlated observations. */
export const DEFAULT_CLUSTER = 'scenario_id';

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** A bootstrap's estimate, interval ends and SE (null where not finite) and the generator it drew from: the fields every bootstrap CI carries. */
export function bootstrapFields(r: { estimate: number; lower: number; upper: number; se: number; rng?: string; engine?: string }): Pick<BootstrapCi, 'estimate' | 'lower' | 'upper' | 'se' | 'rng' | 'engine'> {
  return { estimate: r.estimate, lower: finite(r.lower), upper: finite(r.upper), se: finite(r.se), rng: r.rng, engine: r.engine };
}

export interface BootstrapCiOptions extends MetricChoice {
  by?: string[];
  /** Cluster column; over the store `undefined` means scenario_id, and `false` (`--no-cluster`) none. */
  cluster?: string | false;
  input?: string;
  value?: string;
  method: Method;
  level: number;
  seed: number;
  resamples: number;
  /** `--statistic` (default mean); a string is parsed with `parseStatistic`. */
  statistic?: string | CiStatistic;
  /** `--threads`: threads for the general resampler (results do not depend on it). */
  threads?: number;
  /** `--max-draws`: the work bound (`drawBudget`, src/analysis/ci-resample-bound.ts). */
  maxDraws?: number;
}

export interface BootstrapCi extends ResampleBound {
  group?: Group;
  metric?: string;
  /** Inferred kind of the store metric, and the epoch reducer applied. */
  kind?: MetricKind | null;
  reduce?: Reducer;
  /** NOANSWER samples a scorer metric leaves out. */
  noanswer?: number;
  n: number;
  /** The statistic bootstrapped (`--statistic`). */
  statistic?: string;
  /** Observations not measured (NULL), left out (store metrics only). */
  not_measured?: number;
  /** 'clustered': whole clusters resampled; 'independent': every observation treated as independent. */
  sampling: Sampling;
  cluster?: string;
  clusters?: number;
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  se: number | null;
  method: Method;
  resamples: number;
  seed: number;
  rng?: string;
  engine?: string;
  /** CLT standard error of the mean (n - 1 denominator), and with n. */
  se_clt: number | null;
  se_clt_ddof0: number | null;
  /** Clustered SEs when --cluster is given; se_clustered.cr1 is the one Standoff reports. */
  se_clustered?: { cr0: number; cr1: number; miller: number } | null;
  note?: string;
}

/** The parsed `--statistic` of the options. */
const statisticOf = (o: { statistic?: string | CiStatistic }): CiStatistic => (typeof o.statistic === 'object' ? o.statistic : parseStatistic(o.statistic));

/**
 * `--statistic proportion` needs 0/1 values: anything else is a data error (exit 3) naming
 * `where` (the file and column, or the metric).
 */
export function checkProportion(values: Float64Array, where: string): void {
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== 0 && values[i] !== 1) throw dataError('ci.notBinary', `--statistic proportion needs 0/1 values, but ${where} holds ${values[i]}`);
  }
}

/**
 * One group's interval; a statistic that is undefined for the group becomes a null result with a
 * note. The mean (and `proportion`) keeps its exact fast paths (`bootstrapMean` for few-valued
 * data, `clusterBootstrap` for clusters); every other case runs the general resampler
 * (`parallelBootstrapStatistic`, blocks over `--threads` threads, the same result for any number).
 */
export async function intervalFor(values: Float64Array, clusters: ArrayLike<ClusterId> | null, o: BootstrapCiOptions, clusterName?: string): Promise<BootstrapCi> {
  const stat = statisticOf(o);
  const label = statisticLabel(stat);
  const isMean = stat.name === 'mean' || stat.name === 'proportion';
  const sampling: Sampling = clusters ? 'clustered' : 'independent';
  const budget = drawBudget(o.maxDraws);
  const base = { n: values.length, statistic: label, sampling, ...(clusters && clusterName ? { cluster: clusterName } : {}), estimate: null, lower: null, upper: null, level: o.level, method: o.method, resamples: o.resamples, seed: o.seed };
  try {
    // Units one resample draws by index (0 on the exact multinomial path, which draws none): the work bound's G.
    const units = drawUnits(values, clusters, isMean);
    const B = boundedResamples(o.resamples, units, budget);
    const bopts = { resamples: B, level: o.level, method: o.method, seed: o.seed };
    let r: BootstrapResult & { clusters?: number };
    if (isMean && clusters) r = clusterBootstrap(values, clusters, bopts);
    else if (isMean && values.length >= 2 && autoUsesMultinomial(meanUnits(values))) r = bootstrapMean(values, bopts);
    else {
      const { parallelBootstrapStatistic } = await import('../compute/parallel-bootstrap.ts');
      const spec: StatisticSpec = stat.name === 'proportion' ? { name: 'mean' } : stat;
      r = await parallelBootstrapStatistic(values, spec, { ...bopts, ...(clusters ? { clusters } : {}) }, { threads: o.threads });
    }
    const bound = boundFields({ level: o.level, method: o.method, se: finite(r.se), bca: r.bca }, o.resamples, B, units, budget);
    const out: BootstrapCi = {
      ...base,
      resamples: B,
      ...bound?.fields,
      ...bootstrapFields(r),
      se_clt: isMean && values.length > 1 ? cltStandardError(values, { ddof: 1 }) : null,
      se_clt_ddof0: isMean ? cltStandardError(values, { ddof: 0 }) : null,
    };
    if (r.note) out.note = r.note;
    else if (clusters ? r.se === 0 : values.every((v) => v === values[0])) {
      // No spread: a [p, p] interval would understate the uncertainty (the report says the same).
      out.lower = null;
      out.upper = null;
      out.note = clusters ? DEGENERATE : 'not reported: every value is identical, so the bootstrap has no spread; for 0/1 data, ci exact gives an honest interval';
    }
    if (bound) out.note = out.note ? `${out.note}; ${bound.note}` : bound.note;
    if (clusters) {
      out.clusters = r.clusters!;
      out.se_clustered =
        isMean && out.clusters > 1
          ? {
              cr0: clusteredStandardError(values, clusters, { variant: 'cr0' }),
              cr1: clusteredStandardError(values, clusters, { variant: 'cr1' }),
              miller: clusteredStandardError(values, clusters, { variant: 'miller' }),
            }
          : null;
    }
    return out;
  } catch (err) {
    if (!(err instanceof StandoffError) || err.kind !== 'data') throw err;
    const estimate = values.length === 0 ? null : isMean ? values.reduce((a, b) => a + b, 0) / values.length : stat.name === 'median' ? medianOf(values) : null;
    return { ...base, estimate, lower: null, upper: null, se: null, se_clt: null, se_clt_ddof0: null, note: `undefined: ${err.message}` };
  }
}

/**
 * `--cluster` over the store: the column, scenario_id by default, or none with `--no-cluster`.
 * After `--reduce` every item is one observation, so there is no default cluster.
 */
function storeCluster(cluster: string | false | undefined, reduced = false): string | null {
  if (cluster === false || (reduced && cluster === undefined)) return null;
  const c = cluster ?? DEFAULT_CLUSTER;
  checkColumns([c], '--cluster');
  return c;
}

export async function ciBootstrap(src: StoreSource, o: BootstrapCiOptions): Promise<BootstrapCi | BootstrapCi[]> {
  // A file is ci-input.ts's (ciBootstrapInput), which builds on this module: no import back.
  if (o.input) throw usageError('ci.conflict', 'ciBootstrap reads the store; an --input file is ciBootstrapInput (src/analysis/ci-input.ts)');
  if (!o.metric && !o.metricSql) throw usageError('ci.missingArg', 'give --metric NAME (see standoff ci --list-metrics), --metric-sql FILE, or --input FILE --value COL');
  o = { ...o, statistic: statisticOf(o), threads: checkThreads(o.threads) };
  const by = o.by ?? [];
  const cluster = storeCluster(o.cluster, o.reduce !== undefined);
  return withStore(src, async (conn) => {
    // Clustered: the kind and the not-measured counts come from loadCodedMetric's one aggregate (two scans fewer).
    let resolved = await resolveMetric(conn, src, o, by, cluster ? { kind: false } : {});
    const m = resolved.def;
    if (cluster) {
      const noanswer = m.source === 'scorer' && !m.reduce ? await countNoanswer(conn, m, by) : null;
      const coded = await loadCodedMetric(conn, m, by, cluster);
      resolved = { ...resolved, kind: await kindFromAggregate(conn, m, coded.kindRows) };
      const fields = metricFields(resolved);
      const missing = coded.missing;
      if (coded.values.length === 0) throw dataError('metric.empty', `metric ${m.name} has no measured observations in this store${missing.size ? ` (${[...missing.values()].reduce((a, b) => a + b, 0)} not measured)` : ''}`);
      if ((o.statistic as CiStatistic).name === 'proportion') checkProportion(coded.values, `metric ${m.name}`);
      const out: BootstrapCi[] = [];
      for (const { group, key, start, end } of coded.groups) {
        const r = await intervalFor(coded.values.subarray(start, end), coded.clusters.subarray(start, end), o, cluster);
        r.not_measured = missing.get(key) ?? 0;
        if (noanswer) r.noanswer = noanswer.get(key) ?? 0;
        if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
        out.push(by.length ? { group, ...fields, ...r } : { ...fields, ...r });
      }
      return by.length ? out : out[0]!;
    }
    const fields = metricFields(resolved);
    const missing = await countNotMeasured(conn, m, by);
    const noanswer = m.source === 'scorer' && !m.reduce ? await countNoanswer(conn, m, by) : null;
    const table = await loadMetric(conn, m, by, ['scenario_id']);
    if (table.numRows === 0) throw dataError('metric.empty', `metric ${m.name} has no measured observations in this store${missing.size ? ` (${[...missing.values()].reduce((a, b) => a + b, 0)} not measured)` : ''}`);
    const values = float64Column(table, 'value');
    if ((o.statistic as CiStatistic).name === 'proportion') checkProportion(values, `metric ${m.name}`);
    const key = (i: number) => by.map((c) => String(table.getChild(c)!.get(i))).join('\u0000');
    const clusterCol = cluster ? table.getChild(cluster)! : null;
    const scenario = table.getChild('scenario_id')!;
    const results: BootstrapCi[] = [];
    let start = 0;
    for (let i = 1; i <= table.numRows; i++) {
      if (i < table.numRows && key(i) === key(start)) continue;
      const group: Group = {};
      for (const c of by) group[c] = table.getChild(c)!.get(start) as string | number | null;
      const clusters = clusterCol ? Array.from({ length: i - start }, (_, j) => String(clusterCol.get(start + j))) : null;
      const r = await intervalFor(values.subarray(start, i), clusters, o, cluster ?? undefined);
      r.not_measured = missing.get(key(start)) ?? 0;
      if (noanswer) r.noanswer = noanswer.get(key(start)) ?? 0;
      if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
      if (!clusters && !m.reduce) {
        const perScenario = new Map<string, number>();
        for (let j = start; j < i; j++) perScenario.set(String(scenario.get(j)), (perScenario.get(String(scenario.get(j))) ?? 0) + 1);
        let maxK = 0;
        for (const k of perScenario.values()) if (k > maxK) maxK = k;
        if (maxK > 1) r.note = `${r.note ? `${r.note}; ` : ''}--no-cluster: epochs repeat scenarios (up to ${maxK} observations of one scenario) and this interval treats them as independent, so it is too narrow`;
      }
      results.push(by.length ? { group, ...fields, ...r } : { ...fields, ...r });
      start = i;
    }
    return by.length ? results : results[0];
  });
}

export interface PairedCiOptions extends MetricChoice {
  a?: string;
  b?: string;
  /** Cluster column; over the store `undefined` means scenario_id, and `false` (`--no-cluster`) none. */
  cluster?: string | false;
  input?: string;
  item?: string;
  arm?: string;
  value?: string;
  method: Method;
  level: number;
  seed: number;
  resamples: number;
  /** `--statistic mean|median` (default mean): the median is of the per-pair differences a - b. */
  statistic?: string | CiStatistic;
  threads?: number;
  /** `--max-draws`: the work bound (`drawBudget`, src/analysis/ci-resample-bound.ts). */
  maxDraws?: number;
}

/**
 * `ci paired --statistic median`: the bootstrap interval of the median of the per-pair differences
 * a - b (pairs, or clusters of pairs, resampled; the general resampler), beside the means. No p or
 * MDE: those are of the mean difference (`--statistic mean`).
 */
export interface PairedMedianComparison {
  n: number;
  clusters?: number;
  statistic: 'median';
  /** Median of a - b over the pairs. */
  median_diff: number;
  lower: number | null;
  upper: number | null;
  level: number;
  method: Method;
  sampling: Sampling;
  cluster?: string;
  resamples: number;
  seed: number;
  rng: string;
  engine: string;
  se_bootstrap: number | null;
  mean_a: number;
  mean_b: number;
  mean_diff: number;
  correlation: number | null;
  note?: string;
}

/** `ci paired`: the arms, the metric, how many items could not be paired, then `comparePaired`'s fields. */
export type PairedCi = { a: string; b: string; metric?: string; kind?: MetricKind | null; reduce?: Reducer; dropped_unpaired: number } & ResampleBound & ((PairedComparison & { statistic?: 'mean' }) | PairedMedianComparison);

/** The median-of-differences comparison (see `PairedMedianComparison`). */
async function comparePairedMedian(xa: Float64Array, xb: Float64Array, ids: ArrayLike<ClusterId> | null, clusterName: string | null, o: PairedCiOptions): Promise<PairedMedianComparison> {
  const d = new Float64Array(xa.length);
  for (let i = 0; i < d.length; i++) d[i] = xa[i] - xb[i];
  const { parallelBootstrapStatistic } = await import('../compute/parallel-bootstrap.ts');
  const r = await parallelBootstrapStatistic(d, { name: 'median' }, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed, ...(ids ? { clusters: ids } : {}) }, { threads: o.threads });
  const se = pairedStandardError(xa, xb, { ddof: 1 });
  const out: PairedMedianComparison = {
    n: d.length,
    ...(r.clusters !== undefined ? { clusters: r.clusters } : {}),
    statistic: 'median',
    median_diff: r.estimate,
    lower: finite(r.lower),
    upper: finite(r.upper),
    level: o.level,
    method: o.method,
    sampling: ids ? 'clustered' : 'independent',
    ...(ids && clusterName ? { cluster: clusterName } : {}),
    resamples: o.resamples,
    seed: o.seed,
    rng: r.rng,
    engine: r.engine,
    se_bootstrap: finite(r.se),
    mean_a: se.meanA,
    mean_b: se.meanB,
    mean_diff: se.meanDiff,
    correlation: finite(se.correlation),
  };
  if (r.note) out.note = r.note;
  else if (r.se === 0) {
    out.lower = null;
    out.upper = null;
    out.note = 'not reported: every resample has the same median difference, so the bootstrap has no spread';
  }
  return out;
}

export async function pairedFrom(a: string, b: string, keys: string[], va: Map<string, number>, vb: Map<string, number>, clusterOf: Map<string, string> | null, clusterName: string | null, o: PairedCiOptions, metric?: string): Promise<PairedCi> {
  const shared = keys.filter((k) => va.has(k) && vb.has(k));
  const dropped = new Set([...va.keys(), ...vb.keys()]).size - shared.length;
  const xa = Float64Array.from(shared, (k) => va.get(k)!);
  const xb = Float64Array.from(shared, (k) => vb.get(k)!);
  const ids = clusterOf ? shared.map((k) => clusterOf.get(k)!) : null;
  return pairedFromArrays(a, b, xa, xb, ids, dropped, clusterName, o, metric);
}

/** `pairedFrom` once the pairs are formed: a's and b's values of each shared item in key order, their clusters, and the unpaired count. */
async function pairedFromArrays(a: string, b: string, xa: Float64Array, xb: Float64Array, ids: ArrayLike<ClusterId> | null, dropped: number, clusterName: string | null, o: PairedCiOptions, metric?: string): Promise<PairedCi> {
  const stat = typeof o.statistic === 'object' ? o.statistic : parseStatistic(o.statistic, ['mean', 'median']);
  if (xa.length === 0) throw dataError('paired.noPairs', `--a "${a}" and --b "${b}" share no paired items`);
  if (xa.length < 2) throw dataError('paired.tooFew', `--a "${a}" and --b "${b}" share ${xa.length} paired item; a paired interval needs at least 2`);
  const budget = drawBudget(o.maxDraws);
  const d = new Float64Array(xa.length);
  for (let i = 0; i < d.length; i++) d[i] = xa[i] - xb[i];
  const units = drawUnits(d, ids, stat.name === 'mean');
  const B = boundedResamples(o.resamples, units, budget);
  const ob = { ...o, resamples: B };
  const r = stat.name === 'median' ? await comparePairedMedian(xa, xb, ids, clusterName, ob) : { statistic: 'mean' as const, ...(await comparePairedOnThreads(xa, xb, ids, clusterName, { level: o.level, seed: o.seed, resamples: B, method: o.method, threads: o.threads })) };
  const bound = boundFields({ level: o.level, method: o.method, se: r.se_bootstrap, bca: null }, o.resamples, B, units, budget);
  const out = { a, b, ...(metric ? { metric } : {}), dropped_unpaired: dropped, ...r, ...bound?.fields } as PairedCi;
  if (bound) out.note = out.note ? `${out.note}; ${bound.note}` : bound.note;
  return out;
}

const NO_CLUSTER_PAIRS = '--no-cluster: epochs repeat scenarios and this interval, p and MDE treat the pairs as independent, so they are too optimistic';

/**
 * `ci paired` over the store, clustered on scenario_id or not at all: the pairs are formed in SQL
 * (key `scenario/epoch`, in text order; a's and b's value; the cluster as a dense_rank code) and
 * streamed into Float64Arrays, so only the two arms' pairs reach JS, as numbers (#28). The checks
 * and messages are the row-by-row path's (`pairedFrom`).
 */
async function loadPairs(conn: DuckDBConnection, m: MetricDef, a: string, b: string, clustered: boolean): Promise<{ xa: Float64Array; xb: Float64Array; ids: Float64Array | null; dropped: number; repeats: boolean }> {
  const params = { ...((m.params ?? {}) as Record<string, unknown>), pair_a: a, pair_b: b } as SqlParams;
  const measured = `(SELECT * FROM (${m.sql}) WHERE value IS NOT NULL)`;
  const subjects = (await query(conn, `SELECT DISTINCT CAST(subject_model AS VARCHAR) AS s FROM ${measured}`, m.params)).rows.map((r) => String(r.s));
  for (const [flag, s] of [['--a', a], ['--b', b]] as const) {
    if (!subjects.includes(s)) throw dataError('paired.noArm', `${flag} "${s}" has no ${m.name} values (subjects: ${[...subjects].sort().join(', ')})`);
  }
  const x = `(SELECT scenario_id, CAST(scenario_id AS VARCHAR) || '/' || coalesce(CAST(epoch AS VARCHAR), 'null') AS k, CAST(value AS DOUBLE) AS v, subject_model = $pair_a AS is_a, subject_model FROM ${measured} WHERE subject_model IN ($pair_a, $pair_b))`;
  // One scan of the metric's rows: the two arms' rows per key (a's and b's count and value), kept in a temp table that the checks and the pairs read.
  const pk = `standoff_pairs_${process.pid}`;
  await query(conn, `DROP TABLE IF EXISTS ${pk}`);
  await query(
    conn,
    `CREATE TEMP TABLE ${pk} AS SELECT k, max(scenario_id) AS scenario_id, max(v) FILTER (WHERE is_a) AS va, max(v) FILTER (WHERE NOT is_a) AS vb,
            count(*) FILTER (WHERE is_a) AS ca, count(*) FILTER (WHERE NOT is_a) AS cb FROM ${x} GROUP BY k`,
    params,
  );
  try {
    return await pairsFromTable(conn, pk, m, { pair_a: a, pair_b: b }, clustered);
  } finally {
    await query(conn, `DROP TABLE IF EXISTS ${pk}`);
  }
}

/** `loadPairs` once the keys are counted (table `pk`: k, scenario_id, va, vb, ca, cb): the duplicate check, the counts and the pairs streamed. */
async function pairsFromTable(conn: DuckDBConnection, pk: string, m: MetricDef, params: SqlParams, clustered: boolean): Promise<{ xa: Float64Array; xb: Float64Array; ids: Float64Array | null; dropped: number; repeats: boolean }> {
  const dup = (await query(conn, `SELECT s, k FROM (SELECT $pair_a AS s, k FROM ${pk} WHERE ca > 1 UNION ALL SELECT $pair_b AS s, k FROM ${pk} WHERE cb > 1) ORDER BY s, k LIMIT 1`, params)).rows[0];
  if (dup) throw dataError('paired.duplicateItem', `subject "${dup.s}" has two ${m.name} values for scenario x epoch ${dup.k} (several runs?): pick one with --run`);
  const counts = (await query(conn, `SELECT count(*) AS keys, count(DISTINCT scenario_id) FILTER (WHERE ca > 0) AS sa, sum(ca) AS na FROM ${pk}`)).rows[0]!;
  const pairs = `SELECT va, vb, ${clustered ? 'dense_rank() OVER (ORDER BY scenario_id)' : '0'} AS c FROM ${pk} WHERE ca = 1 AND cb = 1 ORDER BY k`;
  const out: Record<'xa' | 'xb' | 'c', Float64Array> = { xa: new Float64Array(1024), xb: new Float64Array(1024), c: new Float64Array(1024) };
  let n = 0;
  await forEachChunk(conn, pairs, undefined, (chunk, rows) => {
    if (n + rows > out.xa.length) for (const key of ['xa', 'xb', 'c'] as const) out[key] = grow(out[key], n + rows);
    const [A, B, C] = chunk as [number[], number[], (bigint | number)[]];
    for (let i = 0; i < rows; i++, n++) [out.xa[n], out.xb[n], out.c[n]] = [A[i]!, B[i]!, Number(C[i])];
  });
  return { xa: out.xa.slice(0, n), xb: out.xb.slice(0, n), ids: clustered ? out.c.slice(0, n) : null, dropped: Number(counts.keys) - n, repeats: Number(counts.sa) < Number(counts.na) };
}

const grow = (a: Float64Array, need: number): Float64Array => {
  const next = new Float64Array(Math.max(need, a.length * 2));
  next.set(a);
  return next;
};

export async function ciPaired(src: StoreSource, o: PairedCiOptions): Promise<PairedCi> {
  o = { ...o, statistic: parseStatistic(typeof o.statistic === 'object' ? statisticLabel(o.statistic) : o.statistic, ['mean', 'median']), threads: checkThreads(o.threads) };
  if (!o.a || !o.b) throw usageError('ci.missingArg', 'ci paired needs --a and --b');
  if (o.a === o.b) throw usageError('ci.sameArms', `--a and --b are both "${o.a}"`);
  if (o.input) throw usageError('ci.conflict', 'ciPaired reads the store; an --input file is ciPairedInput (src/analysis/ci-input.ts)');
  if (!o.metric && !o.metricSql) throw usageError('ci.missingArg', 'give --metric NAME, --metric-sql FILE, or --input FILE --item COL --arm COL --value COL');
  const cluster = storeCluster(o.cluster, o.reduce !== undefined);
  return withStore(src, async (conn) => {
    const resolved = await resolveMetric(conn, src, o);
    const metric = resolved.def.name;
    if (cluster === null || cluster === DEFAULT_CLUSTER) {
      const q = await loadPairs(conn, resolved.def, o.a!, o.b!, cluster !== null);
      const { a, b, metric: _m, ...rest } = await pairedFromArrays(o.a!, o.b!, q.xa, q.xb, q.ids, q.dropped, cluster, o, metric);
      const r = { a, b, ...metricFields(resolved), ...rest } as PairedCi;
      if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
      if (!cluster && !resolved.def.reduce && q.repeats) r.note = `${r.note ? `${r.note}; ` : ''}${NO_CLUSTER_PAIRS}`;
      return r;
    }
    const table = await loadMetric(conn, resolved.def, [], ['subject_model', 'scenario_id', 'epoch', ...(cluster ? [cluster] : [])]);
    const subj = table.getChild('subject_model')!;
    const scen = table.getChild('scenario_id')!;
    const ep = table.getChild('epoch')!;
    const val = float64Column(table, 'value');
    const clusterCol = cluster ? table.getChild(cluster)! : null;
    const va = new Map<string, number>();
    const vb = new Map<string, number>();
    const clusterOf = clusterCol ? new Map<string, string>() : null;
    const keys: string[] = [];
    const subjects = new Set<string>();
    for (let i = 0; i < table.numRows; i++) {
      const s = String(subj.get(i));
      subjects.add(s);
      const m = s === o.a ? va : s === o.b ? vb : null;
      if (!m) continue;
      const key = `${scen.get(i)}/${ep.get(i)}`;
      if (m.has(key)) throw dataError('paired.duplicateItem', `subject "${s}" has two ${metric} values for scenario x epoch ${key} (several runs?): pick one with --run`);
      m.set(key, val[i]);
      clusterOf?.set(key, String(clusterCol!.get(i)));
      keys.push(key);
    }
    for (const [flag, s] of [['--a', o.a!], ['--b', o.b!]] as const) {
      if (!subjects.has(s)) throw dataError('paired.noArm', `${flag} "${s}" has no ${metric} values (subjects: ${[...subjects].sort().join(', ')})`);
    }
    const p = await pairedFrom(o.a!, o.b!, [...new Set(keys)].sort(), va, vb, clusterOf, cluster, o, metric);
    const { a, b, metric: _m, ...rest } = p;
    const r = { a, b, ...metricFields(resolved), ...rest } as PairedCi;
    if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
    if (!clusterOf && !resolved.def.reduce && new Set([...va.keys()].map((k) => k.slice(0, k.lastIndexOf('/')))).size < va.size) {
      r.note = `${r.note ? `${r.note}; ` : ''}${NO_CLUSTER_PAIRS}`;
    }
    return r;
  });
}
