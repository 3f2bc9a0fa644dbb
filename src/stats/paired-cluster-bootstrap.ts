import { checkChoice } from './arg-checks.ts';
import { checkSameLength, parseBootstrapOptions, toFiniteArray } from './bootstrap-internals.ts';
import { clusterBootstrap, type ClusterBootstrapOptions, type ClusterBootstrapResult } from './cluster-bootstrap.ts';
import type { ClusterId } from './cluster-totals.ts';
import { clusteredPairedStandardError } from './clustered-paired-standard-error.ts';
import { clusteredStandardError } from './clustered-standard-error.ts';
import { pairedStandardError } from './paired-standard-error.ts';

export interface PairedClusterBootstrapResult extends ClusterBootstrapResult {
  meanA: number;
  meanB: number;
  /** Pearson correlation of a and b over the pairs; NaN when either is constant. */
  correlation: number;
  /** Cluster-robust (CR1) SE of mean(a - b) (`clusteredPairedStandardError`). */
  seClustered: number;
  /** The paired SE treating every pair as independent (ddof 1), for contrast. */
  seIndependent: number;
}

/** The options checked and the pairs read as `pairedClusterBootstrap` checks them (its errors), with d = a - b. */
function checkedPairs(a: Float64Array | readonly number[], b: Float64Array | readonly number[], options: ClusterBootstrapOptions): { x: Float64Array; y: Float64Array; d: Float64Array } {
  const fn = 'pairedClusterBootstrap';
  parseBootstrapOptions(fn, options);
  checkChoice(fn, 'engine', options.engine ?? 'auto', ['auto', 'multinomial', 'resample'] as const);
  const x = toFiniteArray(fn, 'a', a, 1);
  const y = toFiniteArray(fn, 'b', b, 1);
  checkSameLength(fn, 'a', x, 'b', y);
  const d = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) d[i] = x[i] - y[i];
  return { x, y, d };
}

/**
 * Paired cluster bootstrap of the difference between two models' mean scores on the same items,
 * when items repeat within clusters (every epoch of a scenario is a pair, and a scenario's pairs
 * are correlated): whole clusters are resampled with replacement, each bringing all its pairs, and
 * the statistic is sum(a - b) / (pairs drawn) over the resampled clusters.
 *
 * Source: Davison & Hinkley (1997) sec. 3.8 (cluster resampling) applied to the per-pair
 * differences, as Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), recommends for
 * paired comparisons on clustered questions; the bootstrap is `clusterBootstrap` on d = a - b
 * with the same cluster ids (so its engines, BCa and seed behaviour), and its SE tends to the CR0
 * clustered SE of mean(d). R `boot` on the clusters (statistic sum(d[i]) / sum(n[i]) over the
 * resampled cluster totals) is the oracle (tests/oracle/clustered-paired.json). Pairing on
 * scenario x epoch alone, without clustering, treats the epochs of one scenario as independent
 * and gives intervals that are too narrow.
 *
 * Degenerate cases: as `clusterBootstrap` (fewer than 2 clusters, mismatched or non-finite input
 * throw `dataError`; every cluster with the same mean difference -> zero-width interval).
 *
 * @example
 * import { pairedClusterBootstrap } from './paired-cluster-bootstrap.ts';
 * const a = [1, 1, 1, 0, 1, 1, 0, 0];
 * const b = [1, 0, 0, 0, 1, 0, 0, 0];
 * const scenario = ['s1', 's1', 's2', 's2', 's3', 's3', 's4', 's4'];
 * const r = pairedClusterBootstrap(a, b, scenario, { seed: 5, resamples: 2000 });
 * // r.estimate = 0.375, r.clusters = 4, r.n = 8, r.seClustered = 0.125
 */
export function pairedClusterBootstrap(
  a: Float64Array | readonly number[],
  b: Float64Array | readonly number[],
  clusterIds: ArrayLike<ClusterId>,
  options: ClusterBootstrapOptions,
): PairedClusterBootstrapResult {
  const { x, y, d } = checkedPairs(a, b, options);
  const boot = clusterBootstrap(d, clusterIds, options);
  const cl = clusteredPairedStandardError(x, y, clusterIds, { variant: 'cr1' });
  const correlation = x.length > 1 ? pairedStandardError(x, y).correlation : NaN;
  return { ...boot, meanA: cl.meanA, meanB: cl.meanB, correlation, seClustered: cl.se, seIndependent: cl.seIndependent };
}

/**
 * What `pairedClusterBootstrap` gives of the interval and the CR1 SE only (`clusterBootstrap` of
 * d = a - b, and `clusteredStandardError` of d, as `clusteredPairedStandardError` computes it):
 * the same numbers and the same errors, without the means, correlation and independent SE that
 * `comparePaired` (src/analysis/paired-comparison.ts) takes from `pairedStandardError`.
 */
export function pairedClusterInterval(
  a: Float64Array | readonly number[],
  b: Float64Array | readonly number[],
  clusterIds: ArrayLike<ClusterId>,
  options: ClusterBootstrapOptions,
): ClusterBootstrapResult & { seClustered: number } {
  const { d } = checkedPairs(a, b, options);
  const boot = clusterBootstrap(d, clusterIds, options);
  return { ...boot, seClustered: clusteredStandardError(d, clusterIds, { variant: 'cr1' }) };
}
