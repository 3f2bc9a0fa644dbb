/**
 * Binomial intervals: clopperPearson and wilson. Reference values come from R 4.2.2 via
 * tests/oracle/gen_extra_stats.py (committed output: tests/oracle/extra-stats.json); the oracle
 * cases of ../shared are in oracle-cases.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { clopperPearson, type Sided } from '../../src/stats/clopper-pearson.ts';
import { wilson } from '../../src/stats/wilson.ts';
import { expectDataError, loadExtraStats } from '../helpers/stats.ts';

const extra = loadExtraStats();

describe('clopperPearson', () => {
  it('matches R for the JSDoc example', () => {
    // R: binom.test(3, 20)$conf.int -> 0.03207094 0.37892683
    const ci = clopperPearson(3, 20);
    expect(ci.lower).toBeCloseTo(0.03207094, 8);
    expect(ci.upper).toBeCloseTo(0.37892683, 8);
    expect(ci).toMatchObject({ successes: 3, trials: 20, estimate: 0.15, level: 0.95, method: 'clopper-pearson', sided: 'two' });
  });

  describe('extra R cases (two-sided and one-sided bounds)', () => {
    for (const c of extra.clopper_pearson) {
      it(c.id, () => {
        const { x, n, level } = c.input;
        // R: binom.test(x, n, conf.level)$conf.int
        const two = clopperPearson(x, n, { level });
        expect(Math.abs((two.lower as number) - c.expected.two_sided[0])).toBeLessThanOrEqual(c.tol);
        expect(Math.abs((two.upper as number) - c.expected.two_sided[1])).toBeLessThanOrEqual(c.tol);
        // R: binom.test(x, n, alternative = 'less', conf.level)$conf.int = [0, upper]
        const up = clopperPearson(x, n, { level, sided: 'upper' });
        expect(up.lower).toBe(0);
        expect(Math.abs((up.upper as number) - c.expected.upper_one_sided)).toBeLessThanOrEqual(c.tol);
        // R: binom.test(x, n, alternative = 'greater', conf.level)$conf.int = [lower, 1]
        const lo = clopperPearson(x, n, { level, sided: 'lower' });
        expect(lo.upper).toBe(1);
        expect(Math.abs((lo.lower as number) - c.expected.lower_one_sided)).toBeLessThanOrEqual(c.tol);
      });
    }
  });

  it('puts the lower end at exactly 0 when x = 0 and the upper end at exactly 1 when x = n', () => {
    expect(clopperPearson(0, 12).lower).toBe(0);
    expect(clopperPearson(12, 12).upper).toBe(1);
    expect(clopperPearson(0, 12, { sided: 'lower' }).lower).toBe(0);
    expect(clopperPearson(12, 12, { sided: 'upper' }).upper).toBe(1);
    // R: binom.test(0, 30, alternative = 'less')$conf.int[2] = 0.0950338528553041 (oracle cp-x0-n30-c95)
    expect(clopperPearson(0, 30, { sided: 'upper' }).upper).toBeCloseTo(0.09503385285530408, 12);
  });

  it('returns nulls, not a throw, when n = 0 (no data)', () => {
    for (const sided of ['two', 'upper', 'lower'] as Sided[]) {
      expect(clopperPearson(0, 0, { sided })).toEqual({
        successes: 0, trials: 0, estimate: null, lower: null, upper: null, level: 0.95, method: 'clopper-pearson', sided,
      });
    }
  });

  it('nests: a higher level gives a wider interval, one-sided bounds are tighter than two-sided', () => {
    const a = clopperPearson(7, 40, { level: 0.9 });
    const b = clopperPearson(7, 40, { level: 0.99 });
    expect(b.lower as number).toBeLessThan(a.lower as number);
    expect(b.upper as number).toBeGreaterThan(a.upper as number);
    expect(clopperPearson(7, 40, { sided: 'upper' }).upper as number).toBeLessThan(clopperPearson(7, 40).upper as number);
    expect(clopperPearson(7, 40, { sided: 'lower' }).lower as number).toBeGreaterThan(clopperPearson(7, 40).lower as number);
  });

  it('rejects bad input with a dataError naming the argument and value', () => {
    expectDataError(() => clopperPearson(12, 10), 'stats.badCount', 'clopperPearson requires successes <= n, got 12 > 10');
    expectDataError(() => clopperPearson(2.5, 10), 'stats.badCount', 'successes to be an integer >= 0, got 2.5');
    expectDataError(() => clopperPearson(-1, 10), 'stats.badCount', 'successes to be an integer >= 0, got -1');
    expectDataError(() => clopperPearson(1, -3), 'stats.badCount', 'n to be an integer >= 0, got -3');
    expectDataError(() => clopperPearson(1, NaN), 'stats.badCount', 'got NaN');
    expectDataError(() => clopperPearson(1, '10' as unknown as number), 'stats.badCount', 'got "10"');
    expectDataError(() => clopperPearson(1, 10, { level: 95 }), 'stats.badLevel', 'level strictly between 0 and 1, got 95');
    expectDataError(() => clopperPearson(1, 10, { level: 0 }), 'stats.badLevel', 'got 0');
    expectDataError(() => clopperPearson(1, 10, { level: 1 }), 'stats.badLevel', 'got 1');
    expectDataError(() => clopperPearson(1, 10, { sided: 'both' as Sided }), 'stats.badOption', `sided to be one of 'two', 'upper', 'lower', got "both"`);
  });
});

describe('wilson', () => {
  it('matches the JSDoc example', () => {
    // R: prop.test(3, 20, correct = FALSE)$conf.int -> 0.0523687459 0.3604188647
    const ci = wilson(3, 20);
    expect(ci.lower).toBeCloseTo(0.0523687459, 9);
    expect(ci.upper).toBeCloseTo(0.3604188647, 9);
    // R: prop.test(3, 20, correct = TRUE)$conf.int -> 0.0395662717 0.3886251218
    const cc = wilson(3, 20, { continuity: true });
    expect(cc.lower).toBeCloseTo(0.0395662717, 9);
    expect(cc.upper).toBeCloseTo(0.3886251218, 9);
    expect(cc).toMatchObject({ method: 'wilson', continuity: true, sided: 'two', estimate: 0.15 });
  });

  describe('R prop.test / Newcombe (1998) cases', () => {
    // Each case's source (R call) is recorded in tests/oracle/extra-stats.json; the uncorrected
    // two-sided ones also agree with statsmodels proportion_confint(method='wilson').
    for (const c of extra.wilson) {
      it(c.id, () => {
        const { x, n, level, continuity, sided } = c.input;
        const ci = wilson(x, n, { level, continuity, sided });
        expect(Math.abs((ci.lower as number) - c.expected[0])).toBeLessThanOrEqual(c.tol);
        expect(Math.abs((ci.upper as number) - c.expected[1])).toBeLessThanOrEqual(c.tol);
      });
    }
  });

  it('keeps the continuity correction at x = n/2, where R prop.test drops it', () => {
    // R: prop.test(5, 10, correct = TRUE)$conf.int equals the uncorrected interval (0.2365931 0.7634069)
    const plain = wilson(5, 10);
    const cc = wilson(5, 10, { continuity: true });
    expect(plain.lower).toBeCloseTo(0.2365930905, 9);
    expect(cc.lower as number).toBeLessThan(plain.lower as number);
    expect(cc.upper as number).toBeGreaterThan(plain.upper as number);
  });

  it('clamps at 0 and 1 exactly and returns nulls for n = 0', () => {
    expect(wilson(0, 10).lower).toBe(0);
    expect(wilson(10, 10).upper).toBe(1);
    expect(wilson(0, 10, { continuity: true }).lower).toBe(0);
    expect(wilson(0, 0)).toMatchObject({ estimate: null, lower: null, upper: null, trials: 0 });
  });

  it('rejects bad input like clopperPearson', () => {
    expectDataError(() => wilson(11, 10), 'stats.badCount', 'wilson requires successes <= n, got 11 > 10');
    expectDataError(() => wilson(1.5, 10), 'stats.badCount', 'wilson requires successes to be an integer >= 0, got 1.5');
    expectDataError(() => wilson(1, 10, { level: -0.5 }), 'stats.badLevel', 'got -0.5');
    expectDataError(() => wilson(1, 10, { continuity: 'yes' as unknown as boolean }), 'stats.badOption', 'continuity to be a boolean');
  });
});
