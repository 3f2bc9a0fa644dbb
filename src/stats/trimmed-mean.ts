import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import type { WeightedStatistic } from './weighted-statistic.ts';

/**
 * The trimmed mean: with g = floor(N trim), the mean of the sorted values y_g ... y_(N-1-g), i.e.
 * g values cut from each end. trim 0 is the mean.
 *
 * Source: R 4.2 `mean(x, trim)` (lo = floor(n trim) + 1, hi = n + 1 - lo) and
 * `scipy.stats.trim_mean(x, proportiontocut)` (int(proportiontocut * n) cut from each end): the
 * same g for trim in [0, 0.5).
 *
 * As a resampling statistic (`trimmedMeanStatistic`, used by `bootstrapStatistic`): the kept
 * values of a resample are summed by one running sum of its multiplicities over the sorted data
 * (no sort per resample); the jackknife value without sorted value s comes from prefix sums of
 * the sorted data in O(1).
 *
 * Degenerate cases: trim outside [0, 0.5) or an empty sample throw `dataError` (R returns the
 * median for trim >= 0.5, scipy raises).
 *
 * @example
 * import { trimmedMean } from './trimmed-mean.ts';
 * trimmedMean([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 0.1); // 5.5 (R: mean(c(1:9, 100), trim = 0.1))
 */
export function trimmedMean(values: ArrayLike<number>, trim: number): number {
  checkTrim('trimmedMean', trim);
  if (values.length === 0) throw dataError('stats.empty', 'trimmedMean requires at least 1 value, got empty');
  const x = Float64Array.from(values as ArrayLike<number>).sort();
  const n = x.length;
  const g = Math.floor(n * trim);
  let s = 0;
  for (let i = g; i < n - g; i++) s += x[i];
  return s / (n - 2 * g);
}

export function checkTrim(fn: string, trim: unknown): number {
  if (typeof trim !== 'number' || !(trim >= 0 && trim < 0.5)) {
    throw dataError('stats.badOption', `${fn} requires trim to be a number in [0, 0.5), got ${show(trim)}`);
  }
  return trim;
}

/** The trimmed mean bound to sorted data (see `trimmedMean`). */
export function trimmedMeanStatistic(x: Float64Array, trim: number): WeightedStatistic {
  const n = x.length;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i] + x[i];
  /** Sum of z_a .. z_(b-1), z the sorted data without position s. */
  const sumWithout = (s: number, a: number, b: number): number => {
    if (b <= s) return prefix[b] - prefix[a];
    if (a >= s) return prefix[b + 1] - prefix[a + 1];
    return prefix[b + 1] - prefix[a] - x[s];
  };
  return {
    weighted(w, N) {
      const g = Math.floor(N * trim);
      const hi = N - g;
      let pos = g;
      let cum = 0;
      let sum = 0;
      let i = 0;
      // skip the values wholly below position g
      while (cum + w[i] <= g) cum += w[i++];
      while (pos < hi) {
        const end = cum + w[i];
        if (end > pos) {
          const t = (end < hi ? end : hi) - pos;
          sum += t * x[i];
          pos += t;
        }
        cum = end;
        i++;
      }
      return sum / (N - 2 * g);
    },
    without(s) {
      const m = n - 1;
      const g = Math.floor(m * trim);
      return sumWithout(s, g, m - g) / (m - 2 * g);
    },
  };
}
