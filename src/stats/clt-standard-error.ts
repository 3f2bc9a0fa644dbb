import { dataError } from '../errors.ts';
import { checkCount, checkOptions } from './arg-checks.ts';
import { sumSquaredDeviations, toFiniteArray } from './bootstrap-internals.ts';
import { overflowShift, scaleDown } from './overflow-scale.ts';

export interface CltStandardErrorOptions {
  /** Delta degrees of freedom of the standard deviation: 1 (default, sample SD) or 0. */
  ddof?: number;
}

/**
 * Central-limit-theorem standard error of a mean: SD / sqrt(n), treating the n values as
 * independent draws.
 *
 * Source: Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language Model
 * Evaluations" (arXiv:2411.00640), eq. for SE_CLT = sqrt(Var(s) / n); with ddof = 1 this is
 * `scipy.stats.sem` and what Inspect AI's `stderr()` reports for unclustered scores. ddof = 0 is
 * the plug-in value the bootstrap SE converges to.
 *
 * Degenerate cases: empty input, non-finite values or n <= ddof throw (`dataError`); all
 * values identical -> 0.
 *
 * @example
 * import { cltStandardError } from './clt-standard-error.ts';
 * cltStandardError([1, 0, 0, 1, 0, 0, 0, 1, 0, 0]);              // 0.15275252316519464
 * cltStandardError([1, 0, 0, 1, 0, 0, 0, 1, 0, 0], { ddof: 0 }); // 0.14491376746189435
 */
export function cltStandardError(values: Float64Array | readonly number[], options?: CltStandardErrorOptions): number {
  const fn = 'cltStandardError';
  const opts = checkOptions(fn, options);
  const ddof = checkCount(fn, 'ddof', opts.ddof ?? 1, 0);
  const x = toFiniteArray(fn, 'values', values, 1);
  const n = x.length;
  if (n <= ddof) {
    throw dataError('stats.tooFewValues', `${fn} requires more values than ddof (${ddof}), got ${n}`);
  }
  // Squares of values beyond ~2^500 overflow: scaled by a power of two first (exact).
  const k = overflowShift(x, n, 2 ** 500);
  if (k > 0) return Math.sqrt(sumSquaredDeviations(scaleDown(x, k)) / (n - ddof) / n) * 2 ** k;
  return Math.sqrt(sumSquaredDeviations(x) / (n - ddof) / n);
}

/**
 * `cltStandardError` from the sufficient statistics of the values: their count n, sum and sum of
 * squares (what SQL returns per group: `count(v)`, `sum(v)`, `sum(v * v)`), for callers that never
 * hold the values (`standoff ci bootstrap --from-aggregates`). The sum of squared deviations is
 * sumSq - sum^2 / n (clamped at 0), which loses relative precision ~ eps * mean^2 / variance
 * against the two-pass formula: for scores in a bounded range the two agree to ~1e-12.
 *
 * Degenerate cases: n not an integer > ddof, or a non-finite sum or sum of squares, throw
 * (`dataError`).
 *
 * @example
 * import { cltStandardErrorFromMoments } from './clt-standard-error.ts';
 * cltStandardErrorFromMoments(10, 3, 3); // 0.15275252316519464, as cltStandardError([1,0,0,1,0,0,0,1,0,0])
 */
export function cltStandardErrorFromMoments(n: number, sum: number, sumSq: number, options?: CltStandardErrorOptions): number {
  const fn = 'cltStandardErrorFromMoments';
  const opts = checkOptions(fn, options);
  const ddof = checkCount(fn, 'ddof', opts.ddof ?? 1, 0);
  if (!Number.isInteger(n) || n <= ddof) throw dataError('stats.tooFewValues', `${fn} requires an integer count above ddof (${ddof}), got ${n}`);
  if (!Number.isFinite(sum) || !Number.isFinite(sumSq)) throw dataError('stats.badValue', `${fn} requires a finite sum and sum of squares, got ${sum} and ${sumSq}`);
  return Math.sqrt(Math.max(0, sumSq - (sum * sum) / n) / (n - ddof) / n);
}
