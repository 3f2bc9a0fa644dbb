import { dataError } from '../errors.ts';
import { orderPairOf, skipAt, type WeightedStatistic } from './weighted-statistic.ts';

/**
 * The sample median: the middle sorted value for an odd count, the mean of the two middle ones
 * for an even count (R `median`, numpy `median`).
 *
 * Source: the usual definition; R 4.2 `median.default` (mean of the two middle order statistics)
 * and numpy 1.24 `median`.
 *
 * As a resampling statistic (`medianStatistic`, used by `bootstrapStatistic`): the middle
 * values of a resample are found by a running sum of its multiplicities over the sorted data
 * (counting, O(n), no sort or quickselect per resample); the jackknife value without sorted
 * value s is read off the sorted data in O(1).
 *
 * Degenerate cases: an empty sample throws `dataError`; one value is its own median.
 *
 * @example
 * import { median } from './median.ts';
 * median([3, 1, 4, 1, 5, 9]); // 3.5
 */
export function median(values: ArrayLike<number>): number {
  if (values.length === 0) throw dataError('stats.empty', 'median requires at least 1 value, got empty');
  const x = Float64Array.from(values as ArrayLike<number>).sort();
  const n = x.length;
  return n % 2 === 1 ? x[(n - 1) >> 1] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/** The median bound to sorted data (see `median`). */
export function medianStatistic(x: Float64Array): WeightedStatistic {
  const pair = new Float64Array(2);
  const n = x.length;
  return {
    weighted(w, N) {
      orderPairOf(x, w, N, (N - 1) >> 1, pair);
      return N % 2 === 1 ? pair[0] : (pair[0] + pair[1]) / 2;
    },
    without(s) {
      const m = n - 1;
      return m % 2 === 1 ? skipAt(x, s, (m - 1) >> 1) : (skipAt(x, s, m / 2 - 1) + skipAt(x, s, m / 2)) / 2;
    },
  };
}
