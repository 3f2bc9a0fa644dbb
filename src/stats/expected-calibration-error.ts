import { dataError } from '../errors.ts';
import { checkCount, checkOptions, show } from './arg-checks.ts';

export interface CalibrationBin {
  /** Bin edges: the bin is (lower, upper], except the first, which is [0, upper]. */
  lower: number;
  upper: number;
  count: number;
  /** Mean confidence in the bin; null when empty. */
  meanConfidence: number | null;
  /** Share correct in the bin; null when empty. */
  accuracy: number | null;
}

export interface ExpectedCalibrationErrorResult {
  /** sum_b (n_b / N) |accuracy_b - meanConfidence_b|; null when there is no data. */
  ece: number | null;
  /** Largest |accuracy_b - meanConfidence_b| over non-empty bins (the MCE); null when no data. */
  maxCalibrationError: number | null;
  /** Number of predictions. */
  n: number;
  bins: CalibrationBin[];
}

export interface ExpectedCalibrationErrorOptions {
  /** Number of equal-width bins on [0, 1]. Default 10. */
  bins?: number;
}

/**
 * Expected calibration error of confidence scores against correctness, with equal-width bins.
 *
 * Source: Naeini, Cooper & Hauskrecht (2015), "Obtaining well calibrated probabilities using
 * Bayesian binning", AAAI; Guo, Pleiss, Sun & Weinberger (2017), "On calibration of modern neural
 * networks", ICML (eq. 3): ECE = sum_b (|B_b| / N) |acc(B_b) - conf(B_b)|, and MCE = max_b
 * |acc(B_b) - conf(B_b)|. Oracle values in tests come from a direct numpy computation of the same
 * formula (`np.digitize(right=True)`) in tests/oracle/gen_extra_stats.py.
 *
 * Bin edge rule (stated because values on an edge are common, e.g. 0.7 or 1.0): with B bins and
 * edges e_b = b / B, bin b (0-based) holds the confidences c with e_b < c <= e_{b+1}; bins are
 * right-closed, as in Guo et al. (I_m = ((m - 1)/M, m/M]). Confidence 0 goes in the first bin, so
 * the first bin is [0, 1/B]. So 0.7 with 10 bins falls in (0.6, 0.7] and 1.0 in (0.9, 1.0].
 *
 * Degenerate cases: no predictions -> ece and maxCalibrationError null, every bin count 0; empty
 * bins have null meanConfidence and accuracy and add nothing to the ECE; all predictions in one
 * bin -> ECE = |accuracy - mean confidence|.
 *
 * Throws `dataError` ('stats.badShape') when the arrays differ in length or are not arrays,
 * ('stats.badValue') for a confidence outside [0, 1] or a `correct` entry that is not a boolean or
 * 0/1 (naming the index), and ('stats.badCount') for bins not an integer >= 1.
 *
 * @example
 * import { expectedCalibrationError } from './expected-calibration-error.ts';
 * const r = expectedCalibrationError([0.9, 0.9, 0.6, 0.6], [true, false, true, true], { bins: 10 });
 * // bin (0.8, 0.9]: accuracy 0.5 vs confidence 0.9; bin (0.5, 0.6]: accuracy 1 vs 0.6
 * // r.ece = 0.5 * 0.4 + 0.5 * 0.4 = 0.4
 */
export function expectedCalibrationError(
  confidences: ReadonlyArray<number>,
  correct: ReadonlyArray<boolean | 0 | 1>,
  options?: ExpectedCalibrationErrorOptions,
): ExpectedCalibrationErrorResult {
  const fn = 'expectedCalibrationError';
  const opts = checkOptions(fn, options);
  const B = checkCount(fn, 'bins', opts.bins ?? 10, 1);
  if (!Array.isArray(confidences) || !Array.isArray(correct)) {
    throw dataError('stats.badShape', `${fn} requires confidences and correct to be arrays, got ${show(confidences)} and ${show(correct)}`);
  }
  if (confidences.length !== correct.length) {
    throw dataError(
      'stats.badShape',
      `${fn} requires confidences and correct of the same length, got ${confidences.length} and ${correct.length}`,
    );
  }
  const bins = new CalibrationBins(B);
  const N = confidences.length;
  for (let i = 0; i < N; i++) {
    const c = confidences[i];
    if (typeof c !== 'number' || !(c >= 0 && c <= 1)) {
      throw dataError('stats.badValue', `${fn} requires confidences in [0, 1], got ${show(c)} at index ${i}`);
    }
    const y = correct[i];
    if (!(y === true || y === false || y === 0 || y === 1)) {
      throw dataError('stats.badValue', `${fn} requires correct to hold booleans or 0/1, got ${show(y)} at index ${i}`);
    }
    bins.add(c, y === true || y === 1);
  }
  return bins.result();
}

/**
 * `expectedCalibrationError` folded one prediction at a time, for predictions streamed in order
 * (nothing held per prediction): `add` each in turn, then `result()`, which is exactly
 * `expectedCalibrationError` of the same predictions in the same order (the bins' sums are formed
 * in that order). `add` does not check its arguments: the confidence must be in [0, 1].
 */
export class CalibrationBins {
  private readonly count: Float64Array;
  private readonly confSum: Float64Array;
  private readonly hits: Float64Array;
  private n = 0;

  constructor(readonly B: number) {
    this.count = new Float64Array(B);
    this.confSum = new Float64Array(B);
    this.hits = new Float64Array(B);
  }

  add(c: number, correct: boolean): void {
    const b = binOf(c, this.B);
    this.count[b]++;
    this.confSum[b] += c;
    if (correct) this.hits[b]++;
    this.n++;
  }

  result(): ExpectedCalibrationErrorResult {
    const { B, count, confSum, hits, n: N } = this;
    let ece = 0;
    let mce = 0;
    const bins: CalibrationBin[] = [];
    for (let b = 0; b < B; b++) {
      const k = count[b];
      const meanConfidence = k > 0 ? confSum[b] / k : null;
      const accuracy = k > 0 ? hits[b] / k : null;
      if (k > 0) {
        const gap = Math.abs((accuracy as number) - (meanConfidence as number));
        ece += (k / N) * gap;
        mce = Math.max(mce, gap);
      }
      bins.push({ lower: b / B, upper: (b + 1) / B, count: k, meanConfidence, accuracy });
    }
    return { ece: N === 0 ? null : ece, maxCalibrationError: N === 0 ? null : mce, n: N, bins };
  }
}

/** 0-based bin of c under the right-closed rule, comparing against the edges b / B exactly. */
function binOf(c: number, B: number): number {
  let b = Math.ceil(c * B) - 1;
  if (b < 0) b = 0;
  if (b > B - 1) b = B - 1;
  // c * B can round across an edge; settle against the edges as computed for the output.
  while (b > 0 && c <= b / B) b--;
  while (b < B - 1 && c > (b + 1) / B) b++;
  return b;
}
