/**
 * Expected calibration error. Reference values: numpy 1.24, the direct formula (Guo et al. 2017,
 * eq. 3) with right-closed bins (np.digitize(right=True), edges np.arange(B+1)/B), via
 * tests/oracle/gen_extra_stats.py -> tests/oracle/extra-stats.json.
 */
import { describe, expect, it } from 'vitest';
import { expectedCalibrationError } from '../../src/stats/expected-calibration-error.ts';
import { expectDataError, loadExtraStats } from '../helpers/stats.ts';

const extra = loadExtraStats();

describe('numpy reference cases', () => {
  for (const c of extra.ece) {
    it(c.id, () => {
      // numpy: direct ECE formula with np.digitize(right=True)
      const r = expectedCalibrationError(c.input.confidences, c.input.correct, { bins: c.input.bins });
      expect(Math.abs((r.ece as number) - c.expected.ece)).toBeLessThanOrEqual(c.tol);
      expect(Math.abs((r.maxCalibrationError as number) - c.expected.maxCalibrationError)).toBeLessThanOrEqual(c.tol);
      expect(r.bins).toHaveLength(c.input.bins);
      r.bins.forEach((b, i) => {
        const e = c.expected.bins[i];
        expect(b.count).toBe(e.count);
        if (e.count === 0) {
          expect(b.meanConfidence).toBeNull();
          expect(b.accuracy).toBeNull();
        } else {
          expect(Math.abs((b.meanConfidence as number) - e.meanConfidence)).toBeLessThanOrEqual(c.tol);
          expect(Math.abs((b.accuracy as number) - e.accuracy)).toBeLessThanOrEqual(c.tol);
        }
      });
    });
  }
});

describe('expectedCalibrationError', () => {
  it('matches the JSDoc example', () => {
    const r = expectedCalibrationError([0.9, 0.9, 0.6, 0.6], [true, false, true, true], { bins: 10 });
    expect(r.ece).toBeCloseTo(0.4, 15);
    expect(r.n).toBe(4);
    expect(r.bins[8]).toEqual({ lower: 0.8, upper: 0.9, count: 2, meanConfidence: 0.9, accuracy: 0.5 });
  });

  it('uses right-closed bins: an edge value belongs to the bin below it; 0 goes in the first bin', () => {
    const r = expectedCalibrationError([0, 0.1, 0.3, 0.7, 1], [1, 1, 1, 1, 1]);
    // 0 and 0.1 in [0, 0.1]; 0.3 in (0.2, 0.3]; 0.7 in (0.6, 0.7]; 1 in (0.9, 1]
    expect(r.bins.map((b) => b.count)).toEqual([2, 0, 1, 0, 0, 0, 1, 0, 0, 1]);
    // every edge value, for several bin counts, lands in the bin whose upper edge it equals
    for (const B of [3, 7, 10, 15, 20]) {
      for (let b = 1; b <= B; b++) {
        const c = b / B;
        const res = expectedCalibrationError([c], [true], { bins: B });
        expect(res.bins[b - 1].count, `c = ${b}/${B}`).toBe(1);
      }
    }
  });

  it('defaults to 10 bins with edges b/10', () => {
    const r = expectedCalibrationError([0.5], [0]);
    expect(r.bins).toHaveLength(10);
    expect(r.bins.map((b) => b.upper)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((b) => b / 10));
    expect(r.ece).toBe(0.5);
  });

  it('degenerate: no data -> null ECE and empty bins; one bin; perfect calibration', () => {
    const none = expectedCalibrationError([], [], { bins: 4 });
    expect(none.ece).toBeNull();
    expect(none.maxCalibrationError).toBeNull();
    expect(none.bins.every((b) => b.count === 0 && b.meanConfidence === null && b.accuracy === null)).toBe(true);
    // one bin: |accuracy - mean confidence| = |2/3 - 0.5|
    expect(expectedCalibrationError([0.2, 0.4, 0.9], [1, 0, 1], { bins: 1 }).ece).toBeCloseTo(1 / 6, 15);
    // confidence 1 and always right, confidence 0 and always wrong: perfectly calibrated
    expect(expectedCalibrationError([1, 1, 0, 0], [true, true, false, false]).ece).toBe(0);
  });

  it('rejects bad input', () => {
    expectDataError(() => expectedCalibrationError([0.5], [true, false]), 'stats.badShape', 'same length, got 1 and 2');
    expectDataError(() => expectedCalibrationError([1.5], [true]), 'stats.badValue', 'confidences in [0, 1], got 1.5 at index 0');
    expectDataError(() => expectedCalibrationError([0.5, NaN], [true, true]), 'stats.badValue', 'got NaN at index 1');
    expectDataError(() => expectedCalibrationError([0.5], ['yes' as never]), 'stats.badValue', 'booleans or 0/1, got "yes" at index 0');
    expectDataError(() => expectedCalibrationError([0.5], [2 as never]), 'stats.badValue', 'got 2 at index 0');
    expectDataError(() => expectedCalibrationError([0.5], [true], { bins: 0 }), 'stats.badCount', 'bins to be an integer >= 1, got 0');
    expectDataError(() => expectedCalibrationError([0.5], [true], { bins: 2.5 }), 'stats.badCount', 'got 2.5');
    expectDataError(() => expectedCalibrationError('x' as never, []), 'stats.badShape', 'to be arrays');
  });
});
