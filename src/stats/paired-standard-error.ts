import { dataError } from '../errors.ts';
import { checkCount, checkOptions } from './arg-checks.ts';
import { checkSameLength, meanOf, sumSquaredDeviations, toFiniteArray } from './bootstrap-internals.ts';

export interface PairedStandardErrorOptions {
  /** Delta degrees of freedom: 1 (default) or 0. */
  ddof?: number;
}

export interface PairedStandardError {
  n: number;
  meanA: number;
  meanB: number;
  /** mean(a - b), summed as differences (not mean(a) - mean(b), which can differ by an ulp). */
  meanDiff: number;
  /** SD of the per-item differences a - b. */
  sdDiff: number;
  /** Standard error of mean(a - b) for paired items: sqrt((Var a + Var b - 2 Cov(a, b)) / n). */
  sePaired: number;
  /** The same without the covariance term, as if a and b came from different items. */
  seUnpaired: number;
  /** Sample covariance of a and b (same ddof). */
  covariance: number;
  /** Pearson correlation of a and b; NaN when either is constant. */
  correlation: number;
}

/**
 * Standard error of the difference between two models' mean scores on the same items.
 *
 * Source: Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), section on paired
 * differences: Var(mean_A - mean_B) = (Var(s_A) + Var(s_B) - 2 Cov(s_A, s_B)) / n. Because
 * Var(a) + Var(b) - 2 Cov(a, b) = Var(a - b) exactly, `sePaired` is computed as SD(a - b) /
 * sqrt(n) (no cancellation when a and b are highly correlated); `seUnpaired` = sqrt((Var a +
 * Var b) / n) shows what ignoring the pairing would give. Positive correlation (the usual case:
 * hard items are hard for both models) makes the paired SE smaller.
 *
 * Degenerate cases: empty, non-finite or mismatched input, or n <= ddof, throw (`dataError`).
 * Identical a and b -> sePaired 0. A constant a or b -> correlation NaN (undefined).
 *
 * @example
 * import { pairedStandardError } from './paired-standard-error.ts';
 * const r = pairedStandardError([1, 1, 0, 1], [1, 0, 0, 1]);
 * // r.meanDiff = 0.25, r.sePaired = 0.25, r.seUnpaired = 0.38188130791298663
 */
export function pairedStandardError(
  a: Float64Array | readonly number[],
  b: Float64Array | readonly number[],
  options?: PairedStandardErrorOptions,
): PairedStandardError {
  const fn = 'pairedStandardError';
  const opts = checkOptions(fn, options);
  const ddof = checkCount(fn, 'ddof', opts.ddof ?? 1, 0);
  return standardErrorOf(pairedSums(fn, a, b, ddof), ddof);
}

/**
 * `pairedStandardError` with ddof 1 and with ddof 0 from one pass over the pairs: each the same
 * numbers, bit for bit, as its own call (the same sums, divided by n - ddof).
 */
export function pairedStandardErrors(a: Float64Array | readonly number[], b: Float64Array | readonly number[]): { ddof1: PairedStandardError; ddof0: PairedStandardError } {
  const sums = pairedSums('pairedStandardError', a, b, 1);
  return { ddof1: standardErrorOf(sums, 1), ddof0: standardErrorOf(sums, 0) };
}

/** The pairs' means and sums of squared deviations (`pairedSums`; `pairedColumnsSummary` forms the same in one fused pass). */
export interface PairedSums {
  n: number;
  meanA: number;
  meanB: number;
  meanDiff: number;
  /** Sums of squared deviations of a, b and a - b, and of the cross products. */
  ssA: number;
  ssB: number;
  ssD: number;
  sxy: number;
}

/** The pairs' means and sums of squared deviations (input checked: finite, same length, more pairs than ddof). */
function pairedSums(fn: string, a: Float64Array | readonly number[], b: Float64Array | readonly number[], ddof: number): PairedSums {
  const x = toFiniteArray(fn, 'a', a, 1);
  const y = toFiniteArray(fn, 'b', b, 1);
  checkSameLength(fn, 'a', x, 'b', y);
  const n = x.length;
  if (n <= ddof) throw dataError('stats.tooFewValues', `${fn} requires more pairs than ddof (${ddof}), got ${n}`);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = x[i] - y[i];
  const meanA = meanOf(x);
  const meanB = meanOf(y);
  const meanDiff = meanOf(d);
  let sxy = 0;
  for (let i = 0; i < n; i++) sxy += (x[i] - meanA) * (y[i] - meanB);
  return { n, meanA, meanB, meanDiff, ssA: sumSquaredDeviations(x), ssB: sumSquaredDeviations(y), ssD: sumSquaredDeviations(d), sxy };
}

/** The paired SEs from the pairs' sums (ddof 0 or 1): `pairedStandardError` after its pass over the pairs. */
export function standardErrorOf(s: PairedSums, ddof: number): PairedStandardError {
  const { n, meanA, meanB, meanDiff } = s;
  const varA = s.ssA / (n - ddof);
  const varB = s.ssB / (n - ddof);
  const varD = s.ssD / (n - ddof);
  const covariance = s.sxy / (n - ddof);
  const correlation = varA > 0 && varB > 0 ? Math.max(-1, Math.min(1, covariance / Math.sqrt(varA * varB))) : NaN;
  return {
    n,
    meanA,
    meanB,
    meanDiff,
    sdDiff: Math.sqrt(varD),
    sePaired: Math.sqrt(varD / n),
    seUnpaired: Math.sqrt((varA + varB) / n),
    covariance,
    correlation,
  };
}

/** Sufficient statistics of n pairs (a_i, b_i): sums, sums of squares and the cross-product sum. */
export interface PairedMoments {
  n: number;
  sumA: number;
  sumB: number;
  sumSqA: number;
  sumSqB: number;
  sumAB: number;
}

/**
 * `pairedStandardError` from the pairs' sufficient statistics (what SQL returns: `count(*)`,
 * `sum(a)`, `sum(b)`, `sum(a * a)`, `sum(b * b)`, `sum(a * b)`; for 0/1 outcomes these are the
 * four pattern counts: both right = sumAB, only a = sumA - sumAB, only b = sumB - sumAB), for
 * `standoff ci paired --from-aggregates`. Same formulas, with each sum of squared deviations as
 * sumSq - sum^2 / n (clamped at 0) and the differences' as sumSqA - 2 sumAB + sumSqB - (sumA -
 * sumB)^2 / n: exact sums (integer data) give the means bit for bit and the SEs to ~1e-12.
 *
 * Degenerate cases: n not an integer > ddof, or non-finite sums, throw (`dataError`).
 *
 * @example
 * import { pairedStandardErrorFromMoments } from './paired-standard-error.ts';
 * pairedStandardErrorFromMoments({ n: 4, sumA: 3, sumB: 2, sumSqA: 3, sumSqB: 2, sumAB: 2 });
 * // meanDiff 0.25, sePaired 0.25, as pairedStandardError([1, 1, 0, 1], [1, 0, 0, 1])
 */
export function pairedStandardErrorFromMoments(m: PairedMoments, options?: PairedStandardErrorOptions): PairedStandardError {
  const fn = 'pairedStandardErrorFromMoments';
  const opts = checkOptions(fn, options);
  const ddof = checkCount(fn, 'ddof', opts.ddof ?? 1, 0);
  const { n, sumA, sumB, sumSqA, sumSqB, sumAB } = m;
  if (!Number.isInteger(n) || n <= ddof) throw dataError('stats.tooFewValues', `${fn} requires more pairs than ddof (${ddof}), got ${n}`);
  for (const [k, v] of Object.entries({ sumA, sumB, sumSqA, sumSqB, sumAB })) {
    if (!Number.isFinite(v)) throw dataError('stats.badValue', `${fn} requires ${k} to be finite, got ${v}`);
  }
  const sumD = sumA - sumB;
  const ssd = (sq: number, s: number) => Math.max(0, sq - (s * s) / n);
  const varA = ssd(sumSqA, sumA) / (n - ddof);
  const varB = ssd(sumSqB, sumB) / (n - ddof);
  const varD = ssd(sumSqA - 2 * sumAB + sumSqB, sumD) / (n - ddof);
  const covariance = (sumAB - (sumA * sumB) / n) / (n - ddof);
  const correlation = varA > 0 && varB > 0 ? Math.max(-1, Math.min(1, covariance / Math.sqrt(varA * varB))) : NaN;
  return {
    n,
    meanA: sumA / n,
    meanB: sumB / n,
    meanDiff: sumD / n,
    sdDiff: Math.sqrt(varD),
    sePaired: Math.sqrt(varD / n),
    seUnpaired: Math.sqrt((varA + varB) / n),
    covariance,
    correlation,
  };
}
