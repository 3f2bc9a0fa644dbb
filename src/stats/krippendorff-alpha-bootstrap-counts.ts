import { dataError } from '../errors.ts';
import { checkChoice, checkCount, checkLevel, checkOptions, show } from './arg-checks.ts';
import { ALPHA_LEVELS, alphaCore, alphaPercentile, compactRatings, type AlphaLevel, type Rating } from './krippendorff-core.ts';
import type { KrippendorffAlphaBootstrapOptions } from './krippendorff-alpha-bootstrap.ts';
import { sampleMultinomialRaw } from './multinomial-sample.ts';
import { createRng } from './rng.ts';

export interface KrippendorffAlphaBootstrapCountsResult {
  /** Alpha on the data as given; null when undefined. */
  estimate: number | null;
  /** Percentile interval; null when no resample gave a defined alpha. */
  lower: number | null;
  upper: number | null;
  level: number;
  /** SD (n - 1 denominator) of the defined bootstrap alphas; null if fewer than 2. */
  se: number | null;
  method: 'percentile';
  resamples: number;
  undefinedResamples: number;
  seed: number;
  /** Units resampled: the sum of the counts. */
  n: number;
  /** Distinct unit patterns after merging identical ones. */
  patterns: number;
  /** Pairable units (two or more values), counted with their multiplicity. */
  pairableUnits: number;
  /** Values in pairable units (the coincidence-matrix total). */
  pairableValues: number;
  raters: number;
  measurementLevel: AlphaLevel;
}

/**
 * Krippendorff's alpha with a bootstrap over units, from distinct unit patterns and their counts:
 * the weight-based entry point of `krippendorffAlphaBootstrap`. A judge panel's verdicts take few
 * patterns (each column is one unit's ratings, e.g. [ALIGNED, ALIGNED, ERROR]); SQL counts them,
 * and this function never expands them into a units x raters matrix.
 *
 * Source: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability" (coincidence form,
 * every level; `krippendorffAlpha`'s engine with unit weights); Efron & Tibshirani (1993) ch. 6
 * and 13 (resampling units, percentile interval). Resampling N units with replacement draws the
 * pattern counts from Multinomial(N; counts / N): one resample is (patterns - 1) exact binomial
 * draws (`sampleMultinomial`, MT19937 from `seed`), whatever N. Identical patterns given separately
 * are merged and patterns are put in a canonical order first, so the result does not depend on
 * how the units were listed: a full matrix (every count 1) and its pattern counts give the same
 * numbers for the same seed. Quantiles as every percentile interval in this library (R `boot`'s
 * `norm.inter`); a resample whose alpha is undefined (no pairable unit, no variation) is left out
 * and counted in `undefinedResamples`, as in `krippendorffAlphaBootstrap`.
 *
 * Degenerate cases: no units (all counts 0) -> estimate, interval and se null; alpha undefined on
 * the data -> estimate null (the interval may still exist). Counts must be non-negative integers,
 * one per pattern column; a ragged matrix or a bad rating throws `dataError` as `krippendorffAlpha`.
 *
 * @example
 * import { krippendorffAlphaBootstrapCounts } from './krippendorff-alpha-bootstrap-counts.ts';
 * // 3 judges; patterns (columns): all agree 1, all agree 0, one dissents
 * const patterns = [[1, 0, 1], [1, 0, 1], [1, 0, 0]];
 * const r = krippendorffAlphaBootstrapCounts(patterns, [60, 30, 10], 'nominal', { seed: 7, resamples: 2000 });
 * // r.estimate = 0.8514..., r.n = 100, r.patterns = 3 (same as krippendorffAlpha on the 100-column matrix)
 */
export function krippendorffAlphaBootstrapCounts(
  patterns: ReadonlyArray<ReadonlyArray<Rating>>,
  counts: ArrayLike<number>,
  level: AlphaLevel,
  options: KrippendorffAlphaBootstrapOptions,
): KrippendorffAlphaBootstrapCountsResult {
  const fn = 'krippendorffAlphaBootstrapCounts';
  checkChoice(fn, 'level', level, ALPHA_LEVELS);
  const opts = checkOptions(fn, options);
  const resamples = checkCount(fn, 'resamples', opts.resamples ?? 10_000, 1);
  const levelCI = checkLevel(fn, 'levelCI', opts.levelCI ?? 0.95);
  const seed = opts.seed;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw dataError('stats.badSeed', `${fn} requires seed to be an integer in [0, 4294967295], got ${show(seed)}`);
  }
  compactRatings(fn, patterns, level); // validates shape and ratings
  const raters = patterns.length;
  const P = raters > 0 ? patterns[0].length : 0;
  if (counts === null || typeof counts !== 'object' || counts.length !== P) {
    throw dataError('stats.badShape', `${fn} requires one count per pattern (${P}), got ${show(counts)}`);
  }
  // Merge identical patterns and order them canonically.
  const merged = new Map<string, { column: Rating[]; count: number }>();
  for (let p = 0; p < P; p++) {
    const c = counts[p];
    if (typeof c !== 'number' || !Number.isInteger(c) || c < 0) throw dataError('stats.badCount', `${fn} requires counts[${p}] to be an integer >= 0, got ${show(c)}`);
    if (c === 0) continue;
    const column = patterns.map((row) => (row[p] === undefined ? null : row[p]));
    const key = JSON.stringify(column.map((v) => (v === null ? null : [typeof v, v])));
    const m = merged.get(key);
    if (m) m.count += c;
    else merged.set(key, { column, count: c });
  }
  const keys = [...merged.keys()].sort();
  const columns = keys.map((k) => merged.get(k)!);
  const weights = Float64Array.from(columns, (x) => x.count);
  const N = weights.reduce((a, b) => a + b, 0);
  const matrix: Rating[][] = Array.from({ length: raters }, (_, r) => columns.map((x) => x.column[r]));
  const data = compactRatings(fn, matrix, level);
  const point = alphaCore(data, level, weights);
  const base = {
    level: levelCI, method: 'percentile' as const, resamples, seed, n: N, patterns: columns.length,
    pairableUnits: point.units, pairableValues: point.pairableValues, raters, measurementLevel: level,
  };
  if (N === 0) return { ...base, estimate: point.alpha, lower: null, upper: null, se: null, undefinedResamples: resamples };

  const rng = createRng(seed);
  const draw = new Float64Array(columns.length);
  const stats = new Float64Array(resamples);
  let defined = 0;
  for (let b = 0; b < resamples; b++) {
    sampleMultinomialRaw(rng, N, weights, N, draw);
    const a = alphaCore(data, level, draw, true).alpha;
    if (a !== null) stats[defined++] = a;
  }
  const { lower, upper, se } = alphaPercentile(stats.subarray(0, defined), levelCI);
  return { ...base, estimate: point.alpha, lower, upper, se, undefinedResamples: resamples - defined };
}
