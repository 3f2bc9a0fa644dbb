import { dataError } from '../errors.ts';
import { checkChoice, checkCount, checkLevel, checkOptions, show } from './arg-checks.ts';
import { ALPHA_LEVELS, alphaCore, alphaPercentile, compactRatings, type AlphaLevel, type Rating } from './krippendorff-core.ts';
import { createRng } from './rng.ts';

export interface KrippendorffAlphaBootstrapOptions {
  /** Number of bootstrap resamples, >= 1. Default 10,000. */
  resamples?: number;
  /** Confidence level of the percentile interval, strictly between 0 and 1. Default 0.95. */
  levelCI?: number;
  /** Seed for `createRng` (integer in [0, 2^32 - 1]). Required: every result records its seed. */
  seed: number;
}

export interface KrippendorffAlphaBootstrapResult {
  /** Alpha on the data as given (the point estimate); null when undefined. */
  estimate: number | null;
  /** Percentile interval; null when no resample gave a defined alpha. */
  lower: number | null;
  upper: number | null;
  /** Confidence level of [lower, upper]. */
  level: number;
  /** Standard deviation (n - 1 denominator) of the defined bootstrap alphas; null if fewer than 2. */
  se: number | null;
  method: 'percentile';
  resamples: number;
  /** Resamples whose alpha was undefined (null); left out of the interval and the se. */
  undefinedResamples: number;
  seed: number;
  /** Units resampled (all columns of the matrix). */
  n: number;
  /** Measurement level of alpha. */
  measurementLevel: AlphaLevel;
}

/**
 * Nonparametric bootstrap of Krippendorff's alpha, resampling units (columns of the raters x units
 * matrix) with replacement, with a percentile interval.
 *
 * Source: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 6 and 13 (case
 * resampling, percentile interval). Resampling units is the cluster bootstrap for alpha: a unit's
 * ratings stay together, so within-unit dependence is kept. (Hayes & Krippendorff 2007 instead
 * resample pairs of values; this function does not reproduce their procedure.)
 *
 * Procedure, in this exact order of random draws: `rng = createRng(seed)`; for each of the
 * `resamples` resamples, draw `n` unit indices with `rng.int(n)`; the resample's alpha equals
 * `krippendorffAlpha` on the matrix made of those columns (computed here from per-unit weights,
 * without copying), except as noted under the degenerate cases. The interval ends are the
 * (1 - level)/2 and (1 + level)/2 quantiles of the defined resample alphas by R `boot`'s
 * convention (`normInterQuantile`, as for every percentile interval in this library: order
 * statistic (R + 1) p, interpolated on the normal scale).
 *
 * Degenerate cases: resamples whose alpha is undefined are counted in `undefinedResamples` and left
 * out; if none is defined, lower, upper and se are null. One deliberate difference from running
 * `krippendorffAlpha` on the resampled matrix: a resample that draws no pairable unit is undefined
 * even when it holds a single value (where the point-estimate convention would say 1), because it
 * carries no information about agreement and would pull the upper end towards 1. No units ->
 * estimate, lower, upper and se null. A single distinct value in pairable units throughout gives
 * alpha 1 in every resample, so [1, 1] and se 0.
 *
 * @example
 * import { krippendorffAlphaBootstrap } from './krippendorff-alpha-bootstrap.ts';
 * const ratings = [
 *   [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null],
 *   [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3],
 *   [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null],
 *   [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null],
 * ];
 * const b = krippendorffAlphaBootstrap(ratings, 'nominal', { resamples: 2000, seed: 7 });
 * // b.estimate = 0.7434..., b.lower < b.estimate < b.upper, same numbers for the same seed
 */
export function krippendorffAlphaBootstrap(
  ratings: ReadonlyArray<ReadonlyArray<Rating>>,
  level: AlphaLevel,
  options: KrippendorffAlphaBootstrapOptions,
): KrippendorffAlphaBootstrapResult {
  const fn = 'krippendorffAlphaBootstrap';
  checkChoice(fn, 'level', level, ALPHA_LEVELS);
  const opts = checkOptions(fn, options);
  const resamples = checkCount(fn, 'resamples', opts.resamples ?? 10_000, 1);
  const levelCI = checkLevel(fn, 'levelCI', opts.levelCI ?? 0.95);
  const seed = opts.seed;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw dataError('stats.badSeed', `${fn} requires seed to be an integer in [0, 4294967295], got ${show(seed)}`);
  }
  const data = compactRatings(fn, ratings, level);
  const n = data.unitCount;
  const estimate = alphaCore(data, level).alpha;
  const base = { level: levelCI, method: 'percentile' as const, resamples, seed, n, measurementLevel: level };
  if (n === 0) {
    return { ...base, estimate, lower: null, upper: null, se: null, undefinedResamples: resamples };
  }

  const rng = createRng(seed);
  const weights = new Int32Array(n);
  const stats = new Float64Array(resamples);
  let defined = 0;
  for (let b = 0; b < resamples; b++) {
    weights.fill(0);
    for (let i = 0; i < n; i++) weights[rng.int(n)]++;
    const a = alphaCore(data, level, weights, true).alpha;
    if (a !== null) stats[defined++] = a;
  }
  const { lower, upper, se } = alphaPercentile(stats.subarray(0, defined), levelCI);
  return { ...base, estimate, lower, upper, se, undefinedResamples: resamples - defined };
}
