import { checkChoice } from './arg-checks.ts';
import {
  checkSameLength,
  parseBootstrapOptions,
  toFiniteArray,
  type BootstrapOptions,
  type BootstrapResult,
} from './bootstrap-internals.ts';
import { decimalScale, maxAbs, toScaledIntegers } from './decimal-scale.ts';
import { bootstrapStatistic } from './bootstrap-statistic.ts';
import { pairedStandardError } from './paired-standard-error.ts';
import { autoUsesMultinomial, ratioBootstrap, type RatioEngine, type RatioUnits } from './ratio-bootstrap.ts';

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
 * ~0.04 s. Any other few-valued differences use the same multinomial; the rest (continuous
 * scores) are the mean of the differences through `bootstrapStatistic` (engine
 * 'resample-blocks'), so `ci paired` can spread the same resamples over threads
 * (`pairedDifferences` says which path a pair of arms takes).
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

  const p = pairedDifferences(x, y);
  let boot: BootstrapResult;
  if (engine === 'resample' || (engine === 'auto' && !p.multinomial)) {
    const { statistic: _mean, ...r } = bootstrapStatistic(p.values, { name: 'mean' }, { resamples: opts.resamples, level: opts.level, method: opts.method, seed: opts.seed, returnReplicates: opts.returnReplicates });
    boot = r;
  } else boot = ratioBootstrap(p.units, opts, engine, n);
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

/** The paired differences as the bootstrap resamples them (see `pairedDifferences`). */
export interface PairedDifferences {
  /** The ratio engine's units: exact scaled differences where the data allow (divisor 10^d). */
  units: RatioUnits;
  /** a_i - b_i as doubles, from the exact scaled differences where the data allow. */
  values: Float64Array;
  /** Whether the 'auto' engine takes the exact multinomial path (few distinct differences). */
  multinomial: boolean;
}

/**
 * The per-pair differences a - b of `pairedBootstrap`: when both arms have at most 9 decimal
 * places the differences are taken between scaled integers (exact), else in floating point; and
 * which path 'auto' takes on them. Callers give finite arrays of one length (n >= 2).
 *
 * @example
 * import { pairedDifferences } from './paired-bootstrap.ts';
 * pairedDifferences(Float64Array.of(0.3, 1), Float64Array.of(0.1, 1)).values; // [0.2, 0], not 0.19999999999999998
 */
export function pairedDifferences(x: Float64Array, y: Float64Array): PairedDifferences {
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
  const units: RatioUnits = { num, den: null, divisor };
  const values = divisor === 1 ? num : Float64Array.from(num, (v) => v / divisor);
  return { units, values, multinomial: autoUsesMultinomial(units) };
}
