/**
 * The BCa acceleration a from jackknife values.
 *
 * Source: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", eq. 14.15:
 *   a = sum_i (theta_bar - theta_(i))^3 / (6 * (sum_i (theta_bar - theta_(i))^2)^(3/2)),
 * with theta_(i) the statistic leaving out observation i and theta_bar their mean. Optional
 * weights count repeated jackknife values (e.g. one value per distinct observation, weighted by
 * how many observations share it), which gives exactly the unweighted sum over all observations.
 * scipy.stats.bootstrap(method='BCa') computes exactly this. R `boot.ci(type = "bca")` applies
 * the same formula to empirical influence values L; given L_i = (n - 1)(theta_bar - theta_(i)) it
 * agrees (a is invariant to the scaling), but its default regression estimate and
 * `empinf(type = "jack")`, which centres at the full-sample estimate instead of theta_bar, differ
 * for statistics other than the mean (e.g. the median of 25 exponential values: a = -0.0017 here
 * and in scipy, 0.036 from `empinf(type = "jack")`).
 *
 * Degenerate cases: when the jackknife values do not vary (the denominator is 0, e.g. all
 * observations identical) a is undefined; this returns 0 (no skewness correction) rather than NaN.
 * Empty input returns 0.
 *
 * @example
 * import { jackknifeAcceleration } from './jackknife-acceleration.ts';
 * // leave-one-out means of [1, 0, 0, 1, 0, 0, 0, 1, 0, 0]: 2/9 for a 1, 3/9 for a 0
 * jackknifeAcceleration([2 / 9, 1 / 3], [3, 7]); // 0.04600437062282381 (scipy's BCa gives the same)
 */
export function jackknifeAcceleration(values: ArrayLike<number>, weights?: ArrayLike<number>): number {
  const k = values.length;
  let wsum = 0;
  let s = 0;
  for (let i = 0; i < k; i++) {
    const w = weights ? weights[i] : 1;
    wsum += w;
    s += w * values[i];
  }
  if (!(wsum > 0)) return 0;
  const bar = s / wsum;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < k; i++) {
    const w = weights ? weights[i] : 1;
    const d = bar - values[i];
    s2 += w * d * d;
    s3 += w * d * d * d;
  }
  if (!(s2 > 0)) return 0;
  const a = s3 / (6 * Math.pow(s2, 1.5));
  return Number.isFinite(a) ? a : 0;
}
