import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * The alpha-quantile of bootstrap replicates by R `boot`'s convention: order statistic
 * (R + 1) * alpha, interpolated on the normal quantile scale when that is not an integer.
 *
 * Source: Davison & Hinkley (1997), "Bootstrap Methods and their Application", eq. 5.8, as
 * implemented by `boot:::norm.inter` (R package boot 1.3-28, used by `boot.ci` for the
 * percentile, basic and BCa intervals). With t_(1) <= ... <= t_(R) the sorted replicates and
 * k = floor((R + 1) alpha):
 *   - k = 0 -> t_(1); k = R -> t_(R) (R warns "extreme order statistics used as endpoints");
 *   - (R + 1) alpha an integer -> t_(k);
 *   - otherwise t_(k) + (qnorm(alpha) - qnorm(k/(R+1))) / (qnorm((k+1)/(R+1)) - qnorm(k/(R+1)))
 *     * (t_(k+1) - t_(k)).
 * (scipy.stats.bootstrap instead takes `np.percentile(..., 100 alpha)`, linear interpolation at
 * position (R - 1) alpha; the two differ by a fraction of one order-statistic gap.)
 *
 * Degenerate cases: an empty array throws; alpha must be in [0, 1] (0 gives t_(1), 1 gives
 * t_(R)). The input must already be sorted ascending; this is not checked.
 *
 * @example
 * import { normInterQuantile } from './norm-inter-quantile.ts';
 * const t = Float64Array.from({ length: 9999 }, (_, i) => i + 1);
 * normInterQuantile(t, 0.025); // 250: (R + 1) * 0.025 is the integer 250, so t_(250)
 */
export function normInterQuantile(sorted: Float64Array, alpha: number): number {
  const R = sorted.length;
  if (R === 0) throw dataError('stats.empty', 'normInterQuantile requires at least 1 replicate, got empty');
  if (typeof alpha !== 'number' || !(alpha >= 0 && alpha <= 1)) {
    throw dataError('stats.badValue', `normInterQuantile requires alpha to be a number in [0, 1], got ${show(alpha)}`);
  }
  const rk = (R + 1) * alpha;
  const k = Math.trunc(rk);
  if (k <= 0) return sorted[0];
  if (k >= R) return sorted[R - 1];
  if (k === rk) return sorted[k - 1];
  const z = normalQuantile(alpha, 0, 1);
  const zk = normalQuantile(k / (R + 1), 0, 1);
  const zk1 = normalQuantile((k + 1) / (R + 1), 0, 1);
  const tk = sorted[k - 1];
  const tk1 = sorted[k];
  return tk + ((z - zk) / (zk1 - zk)) * (tk1 - tk);
}
