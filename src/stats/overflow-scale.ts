import { maxAbs } from './decimal-scale.ts';
import type { BootstrapResult } from './bootstrap-internals.ts';

/**
 * Overflow-free sums by exact power-of-two scaling (not a statistic itself). A sum of `terms`
 * values of magnitude up to maxAbs(x) stays finite when maxAbs(x) * terms <= `limit` (2^1000 for
 * sums, 2^500 for sums of squares); when it would not, the values are multiplied by 2^-k first
 * and the result by 2^k after. Multiplying a double by a power of two is exact (away from the
 * subnormal range), and means, quantiles, percentile and BCa intervals and standard deviations are
 * equivariant under it, so the result is the one exact arithmetic without overflow would give;
 * ordinary data (k = 0) are not touched and give bit-identical results.
 *
 * Source: Higham (2002), "Accuracy and Stability of Numerical Algorithms", 2nd ed., sec. 27.8
 * (scaling by powers of the radix to avoid overflow).
 *
 * @example
 * overflowShift(Float64Array.of(1e308, 1e308, 1e308, -1e308), 4); // 30 (values scaled by 2^-30)
 */
export function overflowShift(x: ArrayLike<number>, terms: number, limit = 2 ** 1000): number {
  const m = maxAbs(x);
  const bound = limit / Math.max(1, terms);
  return m > bound ? Math.ceil(Math.log2(m / bound)) : 0;
}

/** x times 2^-k (a copy). */
export function scaleDown(x: Float64Array, k: number): Float64Array {
  const f = 2 ** -k;
  return Float64Array.from(x, (v) => v * f);
}

/** A bootstrap result computed on data scaled by 2^-k, scaled back to the data's units. */
export function scaleResultUp<T extends BootstrapResult>(r: T, k: number): T {
  if (k === 0) return r;
  const f = 2 ** k;
  return { ...r, estimate: r.estimate * f, lower: r.lower * f, upper: r.upper * f, se: r.se * f, ...(r.replicates ? { replicates: r.replicates.map((v) => v * f) } : {}) };
}
