import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { dataError } from '../errors.ts';
import { checkBinomialArgs, type Sided } from './arg-checks.ts';

/** A Wilson score interval for a binomial proportion. */
export interface WilsonInterval {
  successes: number;
  trials: number;
  /** successes / trials; null when trials = 0. */
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  method: 'wilson';
  /** Whether the continuity correction (Yates' 1/2) was applied. */
  continuity: boolean;
  sided: Sided;
}

export interface WilsonOptions {
  /** Confidence level, strictly between 0 and 1. Default 0.95. */
  level?: number;
  /** Apply the continuity correction (Newcombe 1998, method 4). Default false. */
  continuity?: boolean;
  /** 'two' (default), 'upper' ([0, upper]) or 'lower' ([lower, 1]); as in `clopperPearson`. */
  sided?: Sided;
}

/**
 * Wilson score interval for a binomial proportion, optionally with continuity correction.
 *
 * Source: Wilson (1927), "Probable inference, the law of succession, and statistical inference",
 * JASA 22; continuity-corrected form: Newcombe (1998), "Two-sided confidence intervals for the
 * single proportion: comparison of seven methods", Statistics in Medicine 17, method 4. The code
 * follows R's `prop.test` (`stats:::prop.test`), with z = qnorm((1 + level)/2) (two-sided) or
 * qnorm(level) (one-sided), p = x/n, c = 0.5 with continuity and 0 without:
 *
 *     upper = (p+ + z²/2n + z·sqrt(p+(1 - p+)/n + z²/4n²)) / (1 + z²/n),  p+ = p + c/n (1 if p+ >= 1)
 *     lower = (p- + z²/2n - z·sqrt(p-(1 - p-)/n + z²/4n²)) / (1 + z²/n),  p- = p - c/n (0 if p- <= 0)
 *
 * Without correction this equals R `prop.test(x, n, correct = FALSE)$conf.int` and statsmodels
 * `proportion_confint(x, n, method = 'wilson')`. With correction it equals
 * `prop.test(x, n, correct = TRUE)$conf.int` except when x = n/2 exactly: R then drops the
 * correction (it caps it at |x - n·p0| with p0 = 0.5, a property of its test, not of the
 * interval); this function always applies it, as Newcombe's formula does.
 *
 * Degenerate cases: x = 0 gives lower = 0 and x = n gives upper = 1 exactly; n = 0 (no data)
 * gives estimate, lower and upper null (no throw). Bad counts or level throw as in
 * `clopperPearson`.
 *
 * @example
 * import { wilson } from './wilson.ts';
 * const ci = wilson(3, 20);
 * // ci.lower ≈ 0.05237, ci.upper ≈ 0.36042   (R: prop.test(3, 20, correct = FALSE)$conf.int)
 * const cc = wilson(3, 20, { continuity: true });
 * // cc.lower ≈ 0.03957, cc.upper ≈ 0.38863   (R: prop.test(3, 20, correct = TRUE)$conf.int)
 */
export function wilson(successes: number, n: number, options?: WilsonOptions): WilsonInterval {
  const fn = 'wilson';
  const { level, sided } = checkBinomialArgs(fn, successes, n, options);
  const continuity = options?.continuity ?? false;
  if (typeof continuity !== 'boolean') {
    throw dataError('stats.badOption', `${fn} requires continuity to be a boolean, got ${String(continuity)}`);
  }
  const base = { successes, trials: n, level, method: 'wilson' as const, continuity, sided };
  if (n === 0) return { ...base, estimate: null, lower: null, upper: null };

  const p = successes / n;
  const z = normalQuantile(sided === 'two' ? (1 + level) / 2 : level, 0, 1);
  const c = continuity ? 0.5 : 0;
  const z22n = (z * z) / (2 * n);
  const bound = (pc: number, sign: 1 | -1): number =>
    (pc + z22n + sign * z * Math.sqrt((pc * (1 - pc)) / n + z22n / (2 * n))) / (1 + 2 * z22n);

  const pUp = p + c / n;
  const pLo = p - c / n;
  const upper = sided === 'lower' || pUp >= 1 ? 1 : Math.min(1, bound(pUp, 1));
  const lower = sided === 'upper' || pLo <= 0 ? 0 : Math.max(0, bound(pLo, -1));
  return { ...base, estimate: p, lower, upper };
}
