import { checkChoice } from './arg-checks.ts';
import { parseBootstrapOptions, toFiniteArray, type BootstrapOptions, type BootstrapResult } from './bootstrap-internals.ts';
import { decimalScale, maxAbs, toScaledIntegers } from './decimal-scale.ts';
import { ratioBootstrap, type RatioEngine } from './ratio-bootstrap.ts';
import { overflowShift, scaleDown, scaleResultUp } from './overflow-scale.ts';

export interface BootstrapMeanOptions extends BootstrapOptions {
  /**
   * 'auto' (default) uses the exact multinomial fast path when the data take few distinct values
   * (always for 0/1 scores of any size), else resamples indices. Force either to compare them.
   */
  engine?: RatioEngine;
}

const TWO53 = 9007199254740992;

/**
 * Nonparametric bootstrap confidence interval for the mean, with an exact fast path for 0/1
 * (and any few-valued) scores.
 *
 * Sources: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 6, 13 and 14;
 * quantiles and BCa as R `boot.ci` (see `bootstrapInterval`). Fast path: the bootstrap
 * distribution of the mean of n scores taking k distinct values v_j with counts c_j is that of
 * sum_j N_j v_j / n with N ~ Multinomial(n; c / n); for 0/1 data this is Binomial(n, p) / n.
 * Each resample then costs k - 1 exact binomial draws (`sampleBinomial`, MT19937) rather than n
 * index draws: n = 1,000,000 0/1 scores with 10,000 resamples take ~0.1 s (scipy: ~200 s). Other data use
 * ordinary resampling (xoshiro128**). The result's `engine` and `rng` say which ran.
 *
 * Scores with at most 9 decimal places are summed as exact integers (see `decimalScale`), so a
 * replicate whose exact mean equals the estimate is bitwise equal to it and BCa's strict count
 * (z0 from replicates strictly below the estimate, as R `boot`; scipy counts ties as one half)
 * is not perturbed by rounding. On discrete data the two conventions differ visibly, e.g. 0/1
 * scores [1,0,0,1,0,0,0,1,0,0]: BCa strict [0.0, 0.5], scipy [0.1, 0.6], percentile [0.0, 0.6].
 *
 * Values whose sum would overflow are scaled by a power of two first (`overflowShift`): the
 * mean of 1e308, 1e308, 1e308, -1e308 is 5e307.
 *
 * Degenerate cases: fewer than 2 values, non-finite values, level outside (0, 1) or resamples < 1
 * throw `dataError`. All values identical -> estimate = lower = upper, se 0 (for BCa the
 * percentile fallback, recorded in `bca.fallback`).
 *
 * @example
 * import { bootstrapMean } from './bootstrap-mean.ts';
 * const r = bootstrapMean([1, 0, 0, 1, 0, 0, 0, 1, 0, 0], { seed: 1 });
 * // r.estimate = 0.3, [r.lower, r.upper] = [0, 0.6], r.engine = 'multinomial', r.seed = 1
 */
export function bootstrapMean(values: Float64Array | readonly number[], options: BootstrapMeanOptions): BootstrapResult {
  const fn = 'bootstrapMean';
  const opts = parseBootstrapOptions(fn, options);
  const engine = checkChoice(fn, 'engine', options.engine ?? 'auto', ['auto', 'multinomial', 'resample'] as const);
  const x = toFiniteArray(fn, 'values', values, 2);
  // Values so large that their sum would overflow (1e308 x 3) are scaled by a power of two.
  const k = overflowShift(x, x.length);
  if (k > 0) return scaleResultUp(ratioBootstrap(meanUnits(scaleDown(x, k)), opts, engine, x.length), k);
  return ratioBootstrap(meanUnits(x), opts, engine, x.length);
}

/** Units for the mean: exact scaled integers when the values are short decimals. */
export function meanUnits(x: Float64Array): { num: Float64Array; den: null; divisor: number } {
  const d = decimalScale(x);
  if (d >= 0) {
    const r = toScaledIntegers(x, d);
    const p = 10 ** d;
    if (x.length * maxAbs(r) <= TWO53 && p * x.length <= TWO53) return { num: r, den: null, divisor: p };
  }
  return { num: x, den: null, divisor: 1 };
}
