import { decimalScale, maxAbs, toScaledIntegers } from './decimal-scale.ts';
import { createLaneSumKernel, type LaneSumKernel } from './draw-kernels.ts';
import type { WeightedStatistic } from './weighted-statistic.ts';
import { overflowShift, scaleDown } from './overflow-scale.ts';

const TWO53 = 9007199254740992;

/**
 * The mean as a resampling statistic of `bootstrapStatistic` (the mean of a sample itself is
 * `meanOf`; `bootstrapMean` is the mean's bootstrap with its exact fast paths): sum_i w_i x_i / N
 * over the sorted data, in sorted order.
 *
 * Source: Efron & Tibshirani (1993), ch. 6. Values with at most 9 decimal places are summed as
 * exact scaled integers (`decimalScale`, as `bootstrapMean` does), so a resample whose exact mean
 * equals the estimate is bitwise equal to it and BCa's strict count of replicates below the
 * estimate is not perturbed by rounding. Jackknife: theta_(s) = theta + (theta - x_s) / (n - 1),
 * the cancellation-free form. Unclustered resamples use the fused draw-and-add
 * (`createLaneSumKernel`, WebAssembly, over 32-bit integers when the scaled values fit: the same
 * draws and sums from a table half the size): it sums lane by lane, which is exact for scaled
 * integers; for other doubles a resample equal to the data may differ from the estimate in the
 * last bit (irrelevant for continuous data, where such ties have probability ~0).
 *
 * Values whose sums could overflow are scaled by a power of two (`overflowShift`, exact; the
 * divisor carries 2^-k). Degenerate cases: callers give n >= 2 sorted finite values (the sum over n values must stay
 * below 2^53 in scaled units, else plain floating-point sums are used).
 *
 * @example
 * import { meanStatistic } from './mean-statistic.ts';
 * const x = Float64Array.of(1, 2, 6);
 * meanStatistic(x).weighted(Int32Array.of(0, 2, 1), 3); // (2 + 2 + 6) / 3 = 3.3333333333333335
 */
export function meanStatistic(x: Float64Array): WeightedStatistic {
  const n = x.length;
  let u = x;
  let divisor = 1;
  const d = decimalScale(x);
  if (d >= 0) {
    const r = toScaledIntegers(x, d);
    const p = 10 ** d;
    // Sums of up to 255 n scaled values stay exact (an unclustered resample has N = n; a clustered
    // one beyond 255 n values, vanishingly rare, is summed with ordinary rounding).
    if (255 * n * maxAbs(r) <= TWO53 && p * 255 * n <= TWO53) {
      u = r;
      divisor = p;
    }
  }
  // Values whose (clustered) sums could overflow are scaled by 2^-k (exact): divisor 2^-k.
  const k = u === x ? overflowShift(x, 255 * n) : 0;
  if (k > 0) {
    u = scaleDown(x, k);
    divisor = 2 ** -k;
  }
  // Scaled values that fit 32 bits are drawn from an Int32 table (same sums, half the table),
  // placed in the kernel's memory at the first fused draw.
  let kernel: LaneSumKernel | null = null;
  let total = 0;
  for (let i = 0; i < n; i++) total += u[i];
  const theta = total / (divisor * n);
  return {
    weighted(w, N) {
      let s = 0;
      for (let i = 0; i < n; i++) s += w[i] * u[i];
      return s / (divisor * N);
    },
    without(s) {
      if (k > 0) return (theta * divisor + (theta * divisor - u[s]) / (n - 1)) / divisor;
      return theta + (theta - x[s]) / (n - 1);
    },
    drawn(lanes) {
      kernel ??= createLaneSumKernel(isInt32(u) ? Int32Array.from(u) : u);
      return kernel.sum(lanes, n, n) / (divisor * n);
    },
  };
}

/** True when every value is an integer in [-2^31, 2^31 - 1]. */
function isInt32(x: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) if ((x[i] | 0) !== x[i]) return false;
  return true;
}
