import { dataError } from '../errors.ts';
import type { WeightedStatistic } from './weighted-statistic.ts';

/**
 * The sample standard deviation with the n - 1 denominator (R `sd`, numpy `std(ddof=1)`):
 * sqrt(sum (y_i - ybar)^2 / (N - 1)).
 *
 * Source: the usual unbiased-variance definition; R 4.2 `sd`, numpy 1.24 `std(ddof=1)`.
 *
 * As a resampling statistic (`standardDeviationStatistic`, used by `bootstrapStatistic`): the
 * data are centred once at their median c (so identical values give exactly 0, and
 * |mean - c| <= sd keeps the one-pass formula accurate), and a resample's variance is
 * (S2 - S1^2 / N) / (N - 1) with S1 = sum w_i (x_i - c), S2 = sum w_i (x_i - c)^2; the
 * jackknife value without sorted value s subtracts its terms, O(1).
 *
 * Degenerate cases: fewer than 2 values throw `dataError`; identical values give 0.
 *
 * @example
 * import { standardDeviation } from './standard-deviation.ts';
 * standardDeviation([2, 4, 4, 4, 5, 5, 7, 9]); // 2.138089935299395 (R: sd(c(2,4,4,4,5,5,7,9)))
 */
export function standardDeviation(values: ArrayLike<number>): number {
  const n = values.length;
  if (n < 2) throw dataError('stats.tooFewValues', `standardDeviation requires at least 2 values, got ${n}`);
  let m = 0;
  for (let i = 0; i < n; i++) m += values[i];
  m /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (values[i] - m) ** 2;
  return Math.sqrt(ss / (n - 1));
}

/** The standard deviation (n - 1 denominator) bound to sorted data (see `standardDeviation`). */
export function standardDeviationStatistic(x: Float64Array): WeightedStatistic {
  const n = x.length;
  const c = x[n >> 1];
  const d = new Float64Array(n);
  const d2 = new Float64Array(n);
  let S1 = 0;
  let S2 = 0;
  for (let i = 0; i < n; i++) {
    d[i] = x[i] - c;
    d2[i] = d[i] * d[i];
    S1 += d[i];
    S2 += d2[i];
  }
  const sd = (s1: number, s2: number, N: number): number => {
    const v = (s2 - (s1 * s1) / N) / (N - 1);
    return v > 0 ? Math.sqrt(v) : 0;
  };
  return {
    weighted(w, N) {
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const k = w[i];
        s1 += k * d[i];
        s2 += k * d2[i];
      }
      return sd(s1, s2, N);
    },
    without(s) {
      return sd(S1 - d[s], S2 - d2[s], n - 1);
    },
  };
}
