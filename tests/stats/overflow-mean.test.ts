/**
 * Means of values whose sums overflow (issue 22, LOW): computed on values scaled by an exact power
 * of two (`overflowShift`), so 1e308 x3 and -1e308 give 5e307, not Infinity, on every path
 * (bootstrapMean's multinomial and resample engines, bootstrapStatistic's mean, the CLT standard
 * error); and, scaling being exact, the result is the unscaled computation's on data scaled back.
 * Reference: the exact rational mean (Python's fractions, values below computed with it).
 */
import { describe, it, expect } from 'vitest';
import { bootstrapMean, bootstrapStatistic, cltStandardError } from '../../src/stats/index.ts';
import { overflowShift } from '../../src/stats/overflow-scale.ts';

const HUGE = [1e308, 1e308, 1e308, -1e308];

describe('mean without overflow', () => {
  it('1e308 x3, -1e308: 5e307 on every engine and method', () => {
    for (const engine of ['multinomial', 'resample'] as const) {
      for (const method of ['percentile', 'bca', 'basic'] as const) {
        const r = bootstrapMean(HUGE, { seed: 3, resamples: 400, engine, method });
        expect(r.estimate, `${engine} ${method}`).toBe(5e307);
        expect(Number.isFinite(r.lower) && Number.isFinite(r.upper) && Number.isFinite(r.se), `${engine} ${method}`).toBe(true);
      }
    }
    const s = bootstrapStatistic(HUGE, { name: 'mean' }, { seed: 3, resamples: 400, method: 'bca' });
    expect(s.estimate).toBe(5e307);
    expect(Number.isFinite(s.lower) && Number.isFinite(s.upper)).toBe(true);
    expect(cltStandardError(HUGE)).toBe(5e307);
  });

  it('equals the computation on the same data scaled down by 2^k, scaled back (exact)', () => {
    // 40 values in (-1.7e308, 1.7e308), seed 3; exact mean (fractions): 8.677964063937757e+306
    const x: number[] = [];
    let a = 3;
    for (let i = 0; i < 40; i++) {
      a = (a * 1103515245 + 12345) % 2147483648;
      x.push((a / 2147483648 * 2 - 1) * 1.7e308);
    }
    const k = overflowShift(x, 255 * x.length);
    expect(k).toBeGreaterThan(0);
    const small = x.map((v) => v * 2 ** -k);
    const big = bootstrapStatistic(x, { name: 'mean' }, { seed: 5, resamples: 300, method: 'bca' });
    const ref = bootstrapStatistic(small, { name: 'mean' }, { seed: 5, resamples: 300, method: 'bca' });
    expect(big.estimate).toBe(ref.estimate * 2 ** k);
    expect(big.lower).toBe(ref.lower * 2 ** k);
    expect(big.upper).toBe(ref.upper * 2 ** k);
  });

  it('ordinary data are not scaled (k = 0), so their numbers stay bit-identical', () => {
    expect(overflowShift([1, 2, 3.5, -1e10], 255 * 4)).toBe(0);
    expect(overflowShift([1e290, -1e290], 255 * 2)).toBe(0);
    expect(overflowShift([1e307, 1e307], 255 * 2)).toBeGreaterThan(0);
  });
});
