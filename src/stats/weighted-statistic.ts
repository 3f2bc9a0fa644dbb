/**
 * The shape every resampling statistic of `bootstrapStatistic` has: a statistic of a resample
 * held as multiplicities over the sorted data (how many copies of each sorted value it drew), and
 * its leave-one-out values for BCa's jackknife. Not a statistic itself; each statistic is in its
 * own file (`mean-statistic.ts`, `median.ts`, `quantile.ts`, `trimmed-mean.ts`,
 * `standard-deviation.ts`) and `resamplingStatistic` picks one by its spec.
 *
 * A resample of the sorted values x_0 <= ... <= x_(n-1) is the vector of weights w (w_i copies of
 * x_i, N = sum w). Its sorted expansion y_0 <= ... <= y_(N-1) never has to be written out: order
 * statistics are found by a running sum of the weights (counting, O(n), no sort per resample),
 * sums are sum_i w_i x_i in sorted order. The same resample therefore always gives bitwise the
 * same value, whichever order its draws came in.
 */
import type { Lanes } from './draw-kernels.ts';

/** Which statistic to resample (serialisable: it crosses into worker threads). */
export type StatisticSpec =
  | { name: 'mean' }
  | { name: 'median' }
  | { name: 'quantile'; p: number }
  | { name: 'trimmed-mean'; trim: number }
  | { name: 'sd' };

/** A statistic bound to one sorted data set. */
export interface WeightedStatistic {
  /** The statistic of the resample holding w[i] copies of sorted value i (N = sum of w, N >= 2). */
  weighted(w: Int32Array, N: number): number;
  /** The statistic of the data without one copy of sorted value s (the jackknife), O(1). */
  without(s: number): number;
  /**
   * Optional fused path for unclustered resamples: the statistic of one resample of n values
   * drawn straight from the four lane generators (no count table, `createLaneCountKernel`'s draws
   * exactly); used instead of `weighted` when present.
   */
  drawn?(lanes: Lanes): number;
}

/**
 * y_k and y_(k+1) of the sorted expansion of (x, w) (0 <= k, k + 1 < N), by a running sum of the
 * weights; writes them to out[0], out[1].
 */
export function orderPair(x: Float64Array, w: Int32Array, k: number, out: Float64Array): void {
  let cum = 0;
  let i = 0;
  for (;;) {
    cum += w[i];
    if (cum > k) break;
    i++;
  }
  out[0] = x[i];
  if (cum > k + 1) {
    out[1] = x[i];
    return;
  }
  i++;
  while (w[i] === 0) i++;
  out[1] = x[i];
}

/**
 * The same as `orderPair`, scanning down from the top (fewer steps for k above the middle).
 */
export function orderPairFromTop(x: Float64Array, w: Int32Array, N: number, k: number, out: Float64Array): void {
  // above = number of expanded values at positions >= the current sorted value's first copy
  let above = 0;
  let i = x.length - 1;
  const want = N - 1 - k; // y_(k+1) has N - 2 - k values above it
  for (;;) {
    above += w[i];
    if (above >= want) break;
    i--;
  }
  out[1] = x[i];
  if (above >= want + 1) {
    out[0] = x[i];
    return;
  }
  i--;
  while (w[i] === 0) i--;
  out[0] = x[i];
}

/** y_(k) and y_(k+1), choosing the shorter scan. */
export function orderPairOf(x: Float64Array, w: Int32Array, N: number, k: number, out: Float64Array): void {
  if (2 * k < N) orderPair(x, w, k, out);
  else orderPairFromTop(x, w, N, k, out);
}

/** z_j of the sorted data without position s: x_j below s, x_(j+1) from s on. */
export const skipAt = (x: Float64Array, s: number, j: number): number => x[j < s ? j : j + 1];
