import { dataError } from '../errors.ts';
import { checkChoice, checkOptions } from './arg-checks.ts';
import { meanOf, sumSquaredDeviations, toFiniteArray } from './bootstrap-internals.ts';
import { clusterTotals, type ClusterId } from './cluster-totals.ts';

export type ClusteredVariant = 'cr0' | 'cr1' | 'miller';

export interface ClusteredStandardErrorOptions {
  /** Small-sample variant. Default 'cr1' (what Standoff reports: it agrees with Inspect AI). */
  variant?: ClusteredVariant;
}

/**
 * Cluster-robust standard error of the overall mean of N values in C clusters (e.g. several
 * epochs of each question; each question a cluster).
 *
 * With mean m, cluster sums s_c and sizes n_c:
 *  - 'cr0': sqrt(sum_c (s_c - n_c m)^2) / N. The sandwich (Liang & Zeger 1986) estimator for the
 *    intercept-only model, and the limit of the cluster bootstrap SE (`clusterBootstrap`).
 *  - 'cr1' (default): CR0 * sqrt(C / (C - 1)), the usual small-sample correction; for equal
 *    cluster sizes it equals the SD (ddof 1) of the cluster means / sqrt(C), which is what
 *    Inspect AI reports for epochs. Standoff reports this variant.
 *  - 'miller': Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), clustered SE
 *    sqrt(Var(s)/N + (1/N^2) sum_c sum_{i != j in c} (s_i - m)(s_j - m)) with Var(s) the ddof-1
 *    variance; equal to sqrt(CR0^2 + sum_i (s_i - m)^2 / (N^2 (N - 1))).
 * The three differ only by O(1/C) corrections (oracle fields se_clustered_cr0 / _cr1 / _miller).
 *
 * Degenerate cases: empty input, non-finite values, mismatched lengths or fewer than 2 clusters
 * throw (`dataError`; one cluster carries no between-cluster information). All values identical
 * -> 0. One value per cluster -> CR0 is the ddof-0 CLT SE and CR1 the ddof-1 one.
 *
 * @example
 * import { clusteredStandardError } from './clustered-standard-error.ts';
 * const scores = [1, 1, 0, 0, 1, 0];
 * const question = ['a', 'a', 'b', 'b', 'c', 'c'];
 * clusteredStandardError(scores, question);                     // 0.28867513459481287 (cr1)
 * clusteredStandardError(scores, question, { variant: 'cr0' }); // 0.23570226039551584
 */
export function clusteredStandardError(
  values: Float64Array | readonly number[],
  clusterIds: ArrayLike<ClusterId>,
  options?: ClusteredStandardErrorOptions,
): number {
  const fn = 'clusteredStandardError';
  const opts = checkOptions(fn, options);
  const variant = checkChoice(fn, 'variant', opts.variant ?? 'cr1', ['cr0', 'cr1', 'miller'] as const);
  const x = toFiniteArray(fn, 'values', values, 1);
  // Work with values shifted by the first one: identical values then give exactly 0.
  const shifted = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) shifted[i] = x[i] - x[0];
  const t = clusterTotals(shifted, clusterIds, fn);
  const C = t.clusters;
  if (C < 2) throw dataError('stats.tooFewClusters', `${fn} requires at least 2 clusters, got ${C}`);
  const N = x.length;
  const m = meanOf(shifted);
  let s = 0;
  for (let c = 0; c < C; c++) {
    const e = t.sums[c] - t.counts[c] * m;
    s += e * e;
  }
  const cr0sq = s / (N * N);
  if (variant === 'cr0') return Math.sqrt(cr0sq);
  if (variant === 'cr1') return Math.sqrt((cr0sq * C) / (C - 1));
  return Math.sqrt(cr0sq + sumSquaredDeviations(x) / (N * N * (N - 1)));
}
