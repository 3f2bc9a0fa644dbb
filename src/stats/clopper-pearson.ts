import betaQuantile from '@stdlib/stats-base-dists-beta-quantile';
import { checkBinomialArgs, type Sided } from './arg-checks.ts';

/** Which interval: two-sided, or a one-sided bound. */
export type { Sided };

/** A confidence interval for a binomial proportion. */
export interface BinomialInterval {
  successes: number;
  trials: number;
  /** successes / trials; null when trials = 0. */
  estimate: number | null;
  /** null when trials = 0. */
  lower: number | null;
  /** null when trials = 0. */
  upper: number | null;
  level: number;
  method: 'clopper-pearson';
  sided: Sided;
}

export interface ClopperPearsonOptions {
  /** Confidence level, strictly between 0 and 1. Default 0.95. */
  level?: number;
  /**
   * 'two' (default): two-sided interval, alpha/2 in each tail.
   * 'upper': a one-sided upper bound, the interval [0, upper]; `lower` is 0. This is R's
   *   `binom.test(x, n, alternative = 'less')$conf.int` and the oracle field `upper_one_sided`.
   * 'lower': a one-sided lower bound, the interval [lower, 1]; `upper` is 1. This is R's
   *   `binom.test(x, n, alternative = 'greater')$conf.int` and the oracle field `lower_one_sided`.
   */
  sided?: Sided;
}

/**
 * Exact (Clopper-Pearson) confidence interval for a binomial proportion.
 *
 * Source: Clopper & Pearson (1934), "The use of confidence or fiducial limits illustrated in the
 * case of the binomial", Biometrika 26(4); the beta-quantile form is the one R's `binom.test`
 * uses: lower = qbeta(a, x, n - x + 1), upper = qbeta(1 - a, x + 1, n - x), with a = (1 - level)/2
 * for the two-sided interval and a = 1 - level for a one-sided bound. Quantiles come from
 * `@stdlib/stats-base-dists-beta-quantile`; the oracle cases agree with R to ~1e-15.
 *
 * Degenerate cases:
 * - x = 0: the lower end is exactly 0 (the beta quantile is undefined there).
 * - x = n: the upper end is exactly 1.
 * - n = 0 (no data): no throw; `estimate`, `lower` and `upper` are all null.
 *
 * Throws `dataError('stats.badCount')` for a non-integer or negative count or successes > n,
 * and `dataError('stats.badLevel')` for a level outside (0, 1).
 *
 * @example
 * import { clopperPearson } from './clopper-pearson.ts';
 * const ci = clopperPearson(3, 20);
 * // ci.lower ≈ 0.03207094, ci.upper ≈ 0.37892683   (R: binom.test(3, 20)$conf.int)
 * const ub = clopperPearson(0, 30, { sided: 'upper' });
 * // ub.lower = 0, ub.upper ≈ 0.09503385 ("rule of three" territory)
 */
export function clopperPearson(successes: number, n: number, options?: ClopperPearsonOptions): BinomialInterval {
  const fn = 'clopperPearson';
  const { level, sided } = checkBinomialArgs(fn, successes, n, options);
  const base = { successes, trials: n, level, method: 'clopper-pearson' as const, sided };
  if (n === 0) return { ...base, estimate: null, lower: null, upper: null };

  const x = successes;
  const tail = sided === 'two' ? (1 - level) / 2 : 1 - level;
  const lowerBound = (): number => (x === 0 ? 0 : betaQuantile(tail, x, n - x + 1));
  const upperBound = (): number => (x === n ? 1 : betaQuantile(1 - tail, x + 1, n - x));
  const lower = sided === 'upper' ? 0 : lowerBound();
  const upper = sided === 'lower' ? 1 : upperBound();
  return { ...base, estimate: x / n, lower, upper };
}
