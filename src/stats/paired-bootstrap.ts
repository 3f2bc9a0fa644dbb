import { checkChoice } from './arg-checks.ts';
import {
  checkSameLength,
  parseBootstrapOptions,
  toFiniteArray,
  type BootstrapOptions,
  type BootstrapResult,
} from './bootstrap-internals.ts';
import { decimalScale, maxAbs, toScaledIntegers } from './decimal-scale.ts';
import { pairedStandardError } from './paired-standard-error.ts';
import { ratioBootstrap, type RatioEngine } from './ratio-bootstrap.ts';

export interface PairedBootstrapOptions extends BootstrapOptions {
  /** 'auto' (default), or force 'multinomial' (exact) / 'resample' (see `bootstrapMean`). */
  engine?: RatioEngine;
}

export interface PairedBootstrapResult extends BootstrapResult {
  /** Mean of a. */
  meanA: number;
  /** Mean of b. */
  meanB: number;
  /** Pearson correlation of a and b per item; NaN when either is constant. */
  correlation: number;
  /** Analytic paired SE of mean(a - b), ddof 1 (`pairedStandardError`). */
  sePaired: number;
  /** Analytic SE ignoring the pairing, sqrt((Var a + Var b) / n), ddof 1, for contrast. */
  seUnpaired: number;
}

const TWO53 = 9007199254740992;

/**
 * Paired bootstrap of the difference between two models' mean scores on the same n items:
 * items are resampled jointly (each resampled item brings its a and its b), and the statistic is
 * mean(a - b), summed as differences (not mean(a) - mean(b), which in floating point can break
 * ties by an ulp; oracle README).
 *
 * Sources: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 6 and 14; Miller
 * (2024), "Adding Error Bars to Evals" (arXiv:2411.00640) on paired differences. Resampling pairs
 * is resampling the per-item differences d = a - b, so this is the bootstrap of a mean of d:
 * intervals, BCa (z0 strictly below, as R `boot`) and quantiles as `bootstrapMean`.
 *
 * Exact fast path: for 0/1 scores the pairs fall in four cells (1,1), (1,0), (0,1), (0,0) and
 * the resampled cell counts are Multinomial(n; cell shares); mean(a - b) = (N10 - N01) / n
 * depends only on the cells' differences, so cells with equal difference are merged ((1,1) with
 * (0,0)) and each resample costs two binomial draws. 100,000 pairs x 10,000 resamples take
 * ~0.04 s. Any other few-valued differences use the same multinomial; the rest resample indices.
 *
 * Degenerate cases: fewer than 2 pairs, non-finite values, mismatched lengths, level outside
 * (0, 1) or resamples < 1 throw (`dataError`). a identical to b -> estimate 0 and a zero-width
 * interval [0, 0] (BCa falls back to percentile). Constant a or b -> correlation NaN.
 *
 * @example
 * import { pairedBootstrap } from './paired-bootstrap.ts';
 * const r = pairedBootstrap([1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0], { seed: 3 });
 * // r.estimate = 0.3333333333333333 (= mean(a - b)), r.sePaired = 0.21081851067789198
 */
export function pairedBootstrap(
  a: Float64Array | readonly number[],
  b: Float64Array | readonly number[],
  options: PairedBootstrapOptions,
): PairedBootstrapResult {
  const fn = 'pairedBootstrap';
  const opts = parseBootstrapOptions(fn, options);
  const engine = checkChoice(fn, 'engine', options.engine ?? 'auto', ['auto', 'multinomial', 'resample'] as const);
  const x = toFiniteArray(fn, 'a', a, 2);
  const y = toFiniteArray(fn, 'b', b, 2);
  checkSameLength(fn, 'a', x, 'b', y);
  const n = x.length;

  let num: Float64Array | null = null;
  let divisor = 1;
  const dx = decimalScale(x);
  const dy = decimalScale(y);
  if (dx >= 0 && dy >= 0) {
    const d = Math.max(dx, dy);
    const rx = toScaledIntegers(x, d);
    const ry = toScaledIntegers(y, d);
    divisor = 10 ** d;
    num = new Float64Array(n);
    for (let i = 0; i < n; i++) num[i] = rx[i] - ry[i];
    if (!(n * maxAbs(num) <= TWO53 && divisor * n <= TWO53 && maxAbs(rx) <= TWO53 && maxAbs(ry) <= TWO53)) {
      num = null;
      divisor = 1;
    }
  }
  if (num === null) {
    num = new Float64Array(n);
    for (let i = 0; i < n; i++) num[i] = x[i] - y[i];
  }
  const boot = ratioBootstrap({ num, den: null, divisor }, opts, engine, n);
  const se = pairedStandardError(x, y);
  return {
    ...boot,
    meanA: se.meanA,
    meanB: se.meanB,
    correlation: se.correlation,
    sePaired: se.sePaired,
    seUnpaired: se.seUnpaired,
  };
}
