/**
 * Multiple-comparison adjustments. Reference values: R 4.2.2 `p.adjust(p, 'holm' | 'BH')`, via
 * tests/oracle/gen_extra_stats.py -> tests/oracle/extra-stats.json (each case records its R call).
 */
import { describe, expect, it } from 'vitest';
import { benjaminiHochberg } from '../../src/stats/benjamini-hochberg.ts';
import { holm } from '../../src/stats/holm.ts';
import { expectDataError, loadExtraStats } from '../helpers/stats.ts';

const extra = loadExtraStats();
const METHODS = { holm, BH: benjaminiHochberg } as const;

describe('R p.adjust cases', () => {
  for (const c of extra.p_adjust) {
    it(`${c.id} (${c.source})`, () => {
      const got = METHODS[c.input.method as keyof typeof METHODS](c.input.p);
      expect(got).toHaveLength(c.expected.length);
      c.expected.forEach((e: number | null, i: number) => {
        if (e === null) expect(got[i]).toBeNull();
        else expect(Math.abs((got[i] as number) - e)).toBeLessThanOrEqual(c.tol);
      });
    });
  }
});

describe('holm', () => {
  it('matches the JSDoc example', () => {
    // R: p.adjust(c(.01, .04, .03, .005), 'holm') -> 0.03 0.06 0.06 0.02
    const got = holm([0.01, 0.04, 0.03, 0.005]);
    [0.03, 0.06, 0.06, 0.02].forEach((e, i) => expect(got[i]).toBeCloseTo(e, 15));
  });

  it('degenerate: empty, single, all null, ties', () => {
    expect(holm([])).toEqual([]);
    expect(holm([0.2])).toEqual([0.2]);
    expect(holm([null, null])).toEqual([null, null]);
    const t = holm([0.01, 0.01, 0.01]);
    expect(t[0]).toBe(t[1]);
    expect(t[1]).toBe(t[2]);
    expect(t[0]).toBeCloseTo(0.03, 15);
  });

  it('never decreases a p-value and caps at 1', () => {
    const p = [0.001, 0.3, 0.5, 0.04, 0.9];
    holm(p).forEach((a, i) => {
      expect(a as number).toBeGreaterThanOrEqual(p[i]);
      expect(a as number).toBeLessThanOrEqual(1);
    });
  });

  it('rejects bad input', () => {
    expectDataError(() => holm([0.1, 1.2]), 'stats.badValue', 'holm requires p-values in [0, 1] or null, got 1.2 at index 1');
    expectDataError(() => holm([NaN]), 'stats.badValue', 'got NaN at index 0');
    expectDataError(() => holm(['0.1' as never]), 'stats.badValue', 'got "0.1" at index 0');
    expectDataError(() => holm(0.1 as never), 'stats.badShape', 'holm requires an array of p-values, got 0.1');
  });
});

describe('benjaminiHochberg', () => {
  it('matches the JSDoc example', () => {
    // R: p.adjust(c(.01, .04, .03, .005), 'BH') -> 0.02 0.04 0.04 0.02
    const got = benjaminiHochberg([0.01, 0.04, 0.03, 0.005]);
    [0.02, 0.04, 0.04, 0.02].forEach((e, i) => expect(got[i]).toBeCloseTo(e, 15));
  });

  it('degenerate: empty, single, all null, ties', () => {
    expect(benjaminiHochberg([])).toEqual([]);
    expect(benjaminiHochberg([0.2])).toEqual([0.2]);
    expect(benjaminiHochberg([null])).toEqual([null]);
    const t = benjaminiHochberg([0.02, 0.02, 0.5]);
    expect(t[0]).toBe(t[1]);
    expect(t[0]).toBeCloseTo(0.03, 15);
  });

  it('is never larger than Holm', () => {
    const p = [0.001, 0.012, 0.3, 0.04, 0.049, 0.9, 0.0001];
    const h = holm(p);
    benjaminiHochberg(p).forEach((b, i) => expect(b as number).toBeLessThanOrEqual(h[i] as number));
  });

  it('rejects bad input', () => {
    expectDataError(() => benjaminiHochberg([-0.1]), 'stats.badValue', 'benjaminiHochberg requires p-values in [0, 1] or null, got -0.1 at index 0');
    expectDataError(() => benjaminiHochberg({} as never), 'stats.badShape', 'got object');
  });
});
