/**
 * One paired comparison of two arms on the same items: the library behind the report's pairwise
 * table and `standoff ci paired`, so both print the same interval, p and MDE for the same pairs
 * and seed.
 *
 *   comparePaired(a, b, clusterIds | null, cluster, opts) -> PairedComparison
 *
 * With cluster ids (the default over the store: the scenario, whose epochs are correlated pairs),
 * the interval is the paired cluster bootstrap (`pairedClusterBootstrap`: whole scenarios
 * resampled) and p and the MDE use the cluster-robust (CR1) paired SE; without, the paired
 * bootstrap of independent pairs and the paired SE, and the result says the pairs were treated
 * as independent. p is the two-sided z-test and the MDE is at 80% power and alpha = 1 - level
 * (`pairedZTest`).
 *
 * `comparePairedOnThreads` is the same comparison with the independent-pairs bootstrap of
 * continuous differences (the general resampler) spread over worker threads: byte-identical to
 * `comparePaired` for any number of threads, which `ci paired` uses and the report need not.
 */
import { StandoffError, dataError } from '../errors.ts';
import {
  clusterBootstrapTotals,
  clusteredStandardErrorFromTotals,
  pairedBootstrap,
  pairedClusterInterval,
  pairedColumnsSummary,
  pairedDifferences,
  pairedStandardErrors,
  pairedStandardErrorFromMoments,
  pairedZTest,
  type BootstrapResult,
  type PairCells,
  type PairedMoments,
  type PairedStandardError,
} from '../stats/index.ts';
import type { Sampling } from './rates.ts';
import type { ClusterId } from '../stats/cluster-totals.ts';

export const MDE_POWER = 0.8;

export interface PairedOptions {
  level: number;
  seed: number;
  resamples: number;
  method?: 'percentile' | 'bca' | 'basic';
}

export interface PairedComparison {
  /** Pairs. */
  n: number;
  /** Clusters resampled (clustered only). */
  clusters?: number;
  mean_a: number;
  mean_b: number;
  /** mean(a - b), summed as differences. */
  mean_diff: number;
  lower: number | null;
  upper: number | null;
  level: number;
  method: 'percentile' | 'bca' | 'basic';
  /** 'clustered': whole clusters of pairs resampled, clustered SE; 'independent': pairs treated as independent. */
  sampling: Sampling;
  cluster?: string;
  resamples: number;
  seed: number;
  engine: string | null;
  se_bootstrap: number | null;
  /** The SE behind p and the MDE: se_clustered when clustered, else se_paired. */
  se: number;
  /** Paired SE treating pairs as independent (ddof 1), and with ddof 0. */
  se_paired: number;
  se_paired_ddof0: number;
  /** SE ignoring the pairing altogether, for contrast. */
  se_unpaired: number;
  /** Cluster-robust (CR1) SE of mean(a - b); clustered only. */
  se_clustered?: number;
  /** Pearson correlation of the paired outcomes; null when either side is constant. */
  correlation: number | null;
  /** Two-sided z-test of mean_diff / se; null when se = 0. */
  p_value: number | null;
  /** Smallest true difference detected with `power` at alpha (two-sided); null when se = 0. */
  mde: number | null;
  alpha: number;
  power: number;
  note?: string;
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * `boot`: the independent-pairs bootstrap already computed (by `comparePairedOnThreads`, equal to
 * what `pairedBootstrap` gives for these pairs and options); unused with cluster ids.
 */
export function comparePaired(a: Float64Array, b: Float64Array, clusterIds: ArrayLike<ClusterId> | null, cluster: string | null, o: PairedOptions, boot?: BootstrapResult): PairedComparison {
  if (a.length < 2) throw dataError('paired.tooFew', `${a.length} pair${a.length === 1 ? '' : 's'}: a paired interval needs at least 2`);
  const bopts = { resamples: o.resamples, level: o.level, method: o.method ?? 'percentile', seed: o.seed };
  // The paired SEs with ddof 1 and 0 from one pass; with clusters, the interval and CR1 SE of
  // pairedClusterBootstrap without its means and correlation (se1 has them): the same numbers.
  const { ddof1: se1, ddof0: se0 } = pairedStandardErrors(a, b);
  if (clusterIds) {
    const r = pairedClusterInterval(a, b, clusterIds, bopts);
    return pairedResult(a.length, r, se1, se0, { clusters: r.clusters, cluster, seClustered: r.seClustered }, o);
  }
  return pairedResult(a.length, boot ?? pairedBootstrap(a, b, bopts), se1, se0, null, o);
}

/**
 * `comparePaired` with cluster ids on the rows of two aligned columns where both hold a value (NaN:
 * none), without extracting the pairs (`pairedColumnsSummary`): the same comparison, bit for bit,
 * as `comparePaired` on the extracted pairs and their ids, with the four cells of 0/1 pairs (null
 * otherwise). Null where that summary does not apply (ids not sorted ascending, a non-finite value,
 * fewer than 2 pairs or clusters): the caller extracts the pairs and runs `comparePaired`.
 */
export function comparePairedColumns(a: Float64Array, b: Float64Array, ids: Int32Array, cluster: string | null, o: PairedOptions): { comparison: PairedComparison; cells: PairCells | null } | null {
  const s = pairedColumnsSummary(a, b, ids, { resamples: o.resamples, level: o.level, method: o.method ?? 'percentile', seed: o.seed });
  if (!s) return null;
  const comparison = pairedResult(s.n, s.boot, s.ddof1, s.ddof0, { clusters: s.boot.clusters, cluster, seClustered: s.seClustered }, o);
  return { comparison, cells: s.cells };
}

/** Per-cluster sufficient statistics of the pairs of one comparison (`comparePairedFromTotals`). */
export interface PairedClusterTotals extends PairedMoments {
  /** Per cluster, in the order the vector form meets them: pairs, and the sum of a - b. */
  sizes: Float64Array;
  sumsDiff: Float64Array;
}

/**
 * `comparePaired` with cluster ids, from per-cluster totals instead of the pairs
 * (`standoff ci paired --from-aggregates`): the paired cluster bootstrap depends on the pairs
 * only through each cluster's (pairs, sum of a - b), so with clusters in the same order and the
 * same seed the interval is the same bit for bit (sums of short decimals scale to exact
 * integers); the SEs, p and MDE come from the moments (`pairedStandardErrorFromMoments`,
 * `clusteredStandardErrorFromTotals`) and agree to rounding.
 */
export function comparePairedFromTotals(t: PairedClusterTotals, cluster: string | null, o: PairedOptions): PairedComparison {
  if (t.n < 2) throw dataError('paired.tooFew', `${t.n} pair${t.n === 1 ? '' : 's'}: a paired interval needs at least 2`);
  const r = clusterBootstrapTotals(t.sumsDiff, t.sizes, { resamples: o.resamples, level: o.level, method: o.method ?? 'percentile', seed: o.seed });
  const seClustered = clusteredStandardErrorFromTotals(t.sumsDiff, t.sizes, undefined, { variant: 'cr1' });
  return pairedResult(t.n, r, pairedStandardErrorFromMoments(t, { ddof: 1 }), pairedStandardErrorFromMoments(t, { ddof: 0 }), { clusters: r.clusters, cluster, seClustered }, o);
}

/** The comparison's fields from its bootstrap, its paired SEs and (clustered) the CR1 SE. */
function pairedResult(n: number, r: BootstrapResult, se1: PairedStandardError, se0: PairedStandardError, cl: { clusters: number; cluster: string | null; seClustered: number } | null, o: PairedOptions): PairedComparison {
  const method = o.method ?? 'percentile';
  const alpha = Number((1 - o.level).toPrecision(12)); // 0.05, not 0.050000000000000044
  const se = cl ? cl.seClustered : se1.sePaired;
  const t = pairedZTest({ difference: se1.meanDiff, se, alpha, power: MDE_POWER });
  const out: PairedComparison = {
    n,
    ...(cl ? { clusters: cl.clusters } : {}),
    mean_a: se1.meanA,
    mean_b: se1.meanB,
    mean_diff: se1.meanDiff,
    lower: finite(r.lower),
    upper: finite(r.upper),
    level: o.level,
    method,
    sampling: cl ? 'clustered' : 'independent',
    ...(cl?.cluster ? { cluster: cl.cluster } : {}),
    resamples: o.resamples,
    seed: o.seed,
    engine: r.engine,
    se_bootstrap: finite(r.se),
    se,
    se_paired: se1.sePaired,
    se_paired_ddof0: se0.sePaired,
    se_unpaired: se1.seUnpaired,
    ...(cl ? { se_clustered: cl.seClustered } : {}),
    correlation: finite(se1.correlation),
    p_value: t.p,
    mde: t.mde,
    alpha,
    power: MDE_POWER,
  };
  if (se === 0) {
    out.note = cl
      ? `every ${cl.cluster ?? 'cluster'} has the same mean difference: no spread, so no p-value or MDE`
      : 'every paired difference is identical: no spread, so no p-value or MDE';
  } else if (r.note) out.note = r.note;
  return out;
}

/** `comparePaired` with the general resampler's blocks over `threads` threads (see the file comment). */
export async function comparePairedOnThreads(
  a: Float64Array,
  b: Float64Array,
  clusterIds: ArrayLike<ClusterId> | null,
  cluster: string | null,
  o: PairedOptions & { threads?: number },
): Promise<PairedComparison> {
  const ok = !clusterIds && a.length >= 2 && a.length === b.length && a.every(Number.isFinite) && b.every(Number.isFinite);
  const p = ok ? pairedDifferences(a, b) : null;
  if (!p || p.multinomial) return comparePaired(a, b, clusterIds, cluster, o); // exact or clustered paths, and every error
  const { parallelBootstrapStatistic } = await import('../compute/parallel-bootstrap.ts');
  const { statistic: _mean, ...boot } = await parallelBootstrapStatistic(p.values, { name: 'mean' }, { resamples: o.resamples, level: o.level, method: o.method ?? 'percentile', seed: o.seed }, { threads: o.threads });
  return comparePaired(a, b, null, cluster, o, boot);
}

/** `comparePaired`, or a result without numbers and with the reason when the data do not allow one. */
export function tryComparePaired(...args: Parameters<typeof comparePaired>): PairedComparison | { note: string } {
  try {
    return comparePaired(...args);
  } catch (err) {
    if (err instanceof StandoffError && err.kind === 'data') return { note: err.message };
    throw err;
  }
}
