import { dataError } from '../errors.ts';
import { checkChoice, checkOptions, show } from './arg-checks.ts';
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

/**
 * `clusteredStandardError` from per-cluster totals: cluster c holds `sizes[c]` values summing to
 * `sums[c]`; `sumSq` (the sum of squares of all values) is needed only by the 'miller' variant.
 * This is what SQL returns per cluster (`standoff ci --from-aggregates`). Totals are shifted by
 * the first cluster's mean before squaring, as the vector form shifts by its first value, so the
 * two agree to rounding (~1e-15 relative for 0/1 data).
 *
 * Degenerate cases: mismatched lengths, negative or non-integer sizes, non-finite sums, fewer than
 * 2 clusters with values, or 'miller' without a finite `sumSq`, throw (`dataError`). Clusters of
 * size 0 are left out.
 *
 * @example
 * import { clusteredStandardErrorFromTotals } from './clustered-standard-error.ts';
 * clusteredStandardErrorFromTotals([2, 0, 1], [2, 2, 2]); // 0.28867513459481287 (cr1), as the example above
 */
export function clusteredStandardErrorFromTotals(
  sums: ArrayLike<number>,
  sizes: ArrayLike<number>,
  sumSq?: number,
  options?: ClusteredStandardErrorOptions,
): number {
  const fn = 'clusteredStandardErrorFromTotals';
  const opts = checkOptions(fn, options);
  const variant = checkChoice(fn, 'variant', opts.variant ?? 'cr1', ['cr0', 'cr1', 'miller'] as const);
  const { clusters: C, n: N, total, cr0sq } = totalsMoments(fn, sums, sizes, 'sizes');
  if (variant === 'cr0') return Math.sqrt(cr0sq);
  if (variant === 'cr1') return Math.sqrt((cr0sq * C) / (C - 1));
  if (sumSq === undefined || !Number.isFinite(sumSq)) throw dataError('stats.badValue', `${fn} variant 'miller' requires the sum of squares, got ${sumSq}`);
  return Math.sqrt(cr0sq + Math.max(0, sumSq - (total * total) / N) / (N * N * (N - 1)));
}

/** What `totalsMoments` returns: clusters with values C, values N, their total and CR0² = Σ_c e_c² / N². */
export interface TotalsMoments {
  clusters: number;
  n: number;
  total: number;
  cr0sq: number;
}

/**
 * The one CR0 kernel of the from-totals standard errors (`clusteredStandardErrorFromTotals`,
 * `clusteredPairedFromTotals`): checks the totals, then sums e_c = s'_c − n_c·m' over clusters in
 * their order, with s'_c = s_c − n_c·shift and m' = Σ_c s'_c / N. `shift` defaults to the first
 * cluster's mean; `sizeName` names the sizes in messages. Clusters of size 0 are left out; fewer
 * than 2 clusters, mismatched lengths, bad sizes or non-finite sums or shift throw (`dataError`).
 */
export function totalsMoments(fn: string, sums: ArrayLike<number>, sizes: ArrayLike<number>, sizeName: string, shift?: number): TotalsMoments {
  if (sums.length !== sizes.length) throw dataError('stats.lengthMismatch', `${fn} requires sums and ${sizeName} of the same length, got ${sums.length} and ${sizes.length}`);
  if (shift !== undefined && !Number.isFinite(shift)) throw dataError('stats.badValue', `${fn} requires a finite shift, got ${show(shift)}`);
  let C = 0;
  let N = 0;
  let total = 0;
  let h = shift ?? NaN;
  let shifted = 0;
  for (let c = 0; c < sums.length; c++) {
    const w = sizes[c];
    if (!Number.isInteger(w) || w < 0) throw dataError('stats.badCount', `${fn} requires ${sizeName}[${c}] to be an integer >= 0, got ${show(w)}`);
    if (!Number.isFinite(sums[c])) throw dataError('stats.badValue', `${fn} requires sums[${c}] to be finite, got ${show(sums[c])}`);
    if (w === 0) continue;
    if (C === 0 && shift === undefined) h = sums[c] / w;
    C++;
    N += w;
    total += sums[c];
    shifted += sums[c] - w * h;
  }
  if (C < 2) throw dataError('stats.tooFewClusters', `${fn} requires at least 2 clusters, got ${C}`);
  const m = shifted / N;
  let s = 0;
  for (let c = 0; c < sums.length; c++) {
    if (sizes[c] === 0) continue;
    const e = sums[c] - sizes[c] * h - sizes[c] * m;
    s += e * e;
  }
  return { clusters: C, n: N, total, cr0sq: s / (N * N) };
}
