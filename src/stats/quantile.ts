import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { orderPairOf, skipAt, type WeightedStatistic } from './weighted-statistic.ts';

/**
 * The p-quantile of a sample, the default of R `quantile` (type 7) and numpy's `quantile`
 * ('linear'): with the sorted values y_0 <= ... <= y_(N-1), h = (N - 1) p, j = floor(h),
 * Q(p) = (1 - (h - j)) y_j + (h - j) y_(j+1) (R's form of the interpolation; y_j when the two are
 * equal).
 *
 * Source: Hyndman & Fan (1996), "Sample quantiles in statistical packages", The American
 * Statistician 50(4), definition 7; R 4.2 `quantile.default`.
 *
 * As a resampling statistic (`quantileStatistic`, used by `bootstrapStatistic`): y_j and y_(j+1)
 * of a resample are found by a running sum of its multiplicities over the sorted data, scanning
 * from whichever end is nearer (no sort, no selection per resample); the jackknife value without
 * sorted value s is read off the sorted data in O(1).
 *
 * Degenerate cases: p outside [0, 1] or an empty sample throw `dataError`; one value is its own
 * quantile.
 *
 * @example
 * import { quantile } from './quantile.ts';
 * quantile([1, 2, 3, 4, 10], 0.9); // 7.6 (R: quantile(c(1,2,3,4,10), 0.9) -> 7.6)
 */
export function quantile(values: ArrayLike<number>, p: number): number {
  checkQuantileP('quantile', p);
  if (values.length === 0) throw dataError('stats.empty', 'quantile requires at least 1 value, got empty');
  const x = Float64Array.from(values as ArrayLike<number>).sort();
  return interpolate(x[Math.floor((x.length - 1) * p)], x[Math.min(x.length - 1, Math.floor((x.length - 1) * p) + 1)], (x.length - 1) * p);
}

export function checkQuantileP(fn: string, p: unknown): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw dataError('stats.badOption', `${fn} requires p to be a number in [0, 1], got ${show(p)}`);
  return p;
}

/** (1 - f) a + f b with f = h - floor(h), R's type-7 form; a when a = b. */
function interpolate(a: number, b: number, h: number): number {
  const f = h - Math.floor(h);
  return f === 0 || a === b ? a : (1 - f) * a + f * b;
}

/** The p-quantile bound to sorted data (see `quantile`). */
export function quantileStatistic(x: Float64Array, p: number): WeightedStatistic {
  const pair = new Float64Array(2);
  const n = x.length;
  return {
    weighted(w, N) {
      const h = (N - 1) * p;
      const j = Math.floor(h);
      if (j >= N - 1) {
        orderPairOf(x, w, N, N - 2, pair);
        return pair[1];
      }
      orderPairOf(x, w, N, j, pair);
      return interpolate(pair[0], pair[1], h);
    },
    without(s) {
      const m = n - 1;
      const h = (m - 1) * p;
      const j = Math.floor(h);
      const a = skipAt(x, s, j);
      return j + 1 >= m ? a : interpolate(a, skipAt(x, s, j + 1), h);
    },
  };
}
