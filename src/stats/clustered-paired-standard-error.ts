import { checkChoice, checkOptions } from './arg-checks.ts';
import { checkSameLength, meanOf, sumSquaredDeviations, toFiniteArray } from './bootstrap-internals.ts';
import { clusterTotals, type ClusterId } from './cluster-totals.ts';
import { clusteredStandardError, type ClusteredVariant } from './clustered-standard-error.ts';
import { dataError } from '../errors.ts';

export interface ClusteredPairedStandardErrorOptions {
  /** Small-sample variant. Default 'cr1' (what Standoff reports). */
  variant?: ClusteredVariant;
}

export interface ClusteredPairedStandardError {
  /** Pairs. */
  n: number;
  /** Clusters C (e.g. scenarios, each holding its epochs' pairs). */
  clusters: number;
  meanA: number;
  meanB: number;
  /** mean(a - b), summed as differences. */
  meanDiff: number;
  /** Cluster-robust SE of mean(a - b) (the chosen variant). */
  se: number;
  variant: ClusteredVariant;
  /** The paired SE that treats every pair as independent, SD(a - b) / sqrt(n) (ddof 1), for contrast. */
  seIndependent: number;
}

/**
 * Cluster-robust standard error of a paired difference mean(a - b) when the pairs repeat within
 * clusters (several epochs of one scenario): the per-pair differences d = a - b are the data, and
 * their mean's SE is the clustered SE over the clusters (`clusteredStandardError` on d).
 *
 * Source: Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640): paired differences
 * (section on paired analysis) with clustered standard errors (section on clustered questions),
 * combined by analysing the differences; Liang & Zeger (1986) / Cameron & Miller (2015) for the
 * CR0 / CR1 sandwich. statsmodels: `OLS(d, ones).fit(cov_type='cluster', cov_kwds={'groups': g})`
 * gives CR1 (`use_correction=False`: CR0), checked in tests/oracle/clustered-paired.json. With
 * one pair per cluster, CR1 equals the ordinary paired SE (ddof 1).
 *
 * Degenerate cases: fewer than 2 clusters, empty, mismatched or non-finite input throw
 * (`dataError`). Every cluster with the same mean difference -> 0.
 *
 * @example
 * import { clusteredPairedStandardError } from './clustered-paired-standard-error.ts';
 * const a = [1, 1, 0, 1, 1, 1];
 * const b = [0, 1, 0, 0, 1, 0];
 * const scenario = ['s1', 's1', 's2', 's2', 's3', 's3'];
 * const r = clusteredPairedStandardError(a, b, scenario);
 * // r.meanDiff = 0.5, r.clusters = 3, r.se = 0 (every scenario differs by 0.5 on average), r.seIndependent = 0.2236...
 */
export function clusteredPairedStandardError(
  a: Float64Array | readonly number[],
  b: Float64Array | readonly number[],
  clusterIds: ArrayLike<ClusterId>,
  options?: ClusteredPairedStandardErrorOptions,
): ClusteredPairedStandardError {
  const fn = 'clusteredPairedStandardError';
  const opts = checkOptions(fn, options);
  const variant = checkChoice(fn, 'variant', opts.variant ?? 'cr1', ['cr0', 'cr1', 'miller'] as const);
  const x = toFiniteArray(fn, 'a', a, 1);
  const y = toFiniteArray(fn, 'b', b, 1);
  checkSameLength(fn, 'a', x, 'b', y);
  const n = x.length;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = x[i] - y[i];
  const C = clusterTotals(d, clusterIds, fn).clusters;
  if (C < 2) throw dataError('stats.tooFewClusters', `${fn} requires at least 2 clusters, got ${C}`);
  const se = clusteredStandardError(d, clusterIds, { variant });
  const seIndependent = n > 1 ? Math.sqrt(sumSquaredDeviations(d) / (n - 1) / n) : NaN;
  return { n, clusters: C, meanA: meanOf(x), meanB: meanOf(y), meanDiff: meanOf(d), se, variant, seIndependent };
}
