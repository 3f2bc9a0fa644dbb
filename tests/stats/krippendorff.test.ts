/**
 * Krippendorff's alpha beyond the 18 oracle cases (those are in oracle-cases.test.ts): the
 * degenerate conventions, extra NLTK cases (tests/oracle/extra-stats.json, produced by
 * tests/oracle/gen_extra_stats.py), invariances, bad input, speed, and the unit bootstrap.
 */
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { describe, expect, it } from 'vitest';
import { krippendorffAlpha, type AlphaLevel, type Rating } from '../../src/stats/krippendorff-alpha.ts';
import { krippendorffAlphaBootstrap } from '../../src/stats/krippendorff-alpha-bootstrap.ts';
import { createRng } from '../../src/stats/rng.ts';
import { expectDataError, loadExtraStats } from '../helpers/stats.ts';

const extra = loadExtraStats();
const LEVELS: AlphaLevel[] = ['nominal', 'ordinal', 'interval', 'ratio'];

// Krippendorff (2011), section C: 4 observers x 12 units; published alpha .743/.815/.849/.797.
const PAPER: Rating[][] = [
  [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null],
  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3],
  [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null],
  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null],
];

describe('krippendorffAlpha', () => {
  it('reports the paper example with its counts (n = 40 pairable values in 11 units)', () => {
    const r = krippendorffAlpha(PAPER, 'nominal');
    // Krippendorff (2011) section C: alpha_nominal = .743; the oracle (NLTK + 2 implementations) 0.743421052631579
    expect(r.alpha).toBeCloseTo(0.743421052631579, 12);
    expect(r).toMatchObject({ units: 11, raters: 4, pairableValues: 40, level: 'nominal' });
    expect(1 - (r.observedDisagreement as number) / (r.expectedDisagreement as number)).toBeCloseTo(r.alpha as number, 12);
    // Default level is nominal.
    expect(krippendorffAlpha(PAPER).alpha).toBe(r.alpha);
  });

  describe('extra NLTK cases', () => {
    for (const c of extra.krippendorff_alpha) {
      it(c.id, () => {
        // NLTK 3.8: AnnotationTask(...).alpha() (the source string is in extra-stats.json)
        const got = krippendorffAlpha(c.input.ratings, c.input.level).alpha;
        expect(Math.abs((got as number) - c.expected.alpha)).toBeLessThanOrEqual(c.tol);
      });
    }
  });

  describe('degenerate cases', () => {
    it('no values at all -> null (no raters, no units, all missing)', () => {
      for (const level of LEVELS) {
        expect(krippendorffAlpha([], level)).toMatchObject({ alpha: null, units: 0, raters: 0, pairableValues: 0 });
        expect(krippendorffAlpha([[], []], level)).toMatchObject({ alpha: null, units: 0, raters: 2 });
        expect(krippendorffAlpha([[null, null], [undefined, null]], level).alpha).toBeNull();
      }
    });

    it('one distinct value in the whole matrix -> 1, with or without pairable units (NLTK, irr)', () => {
      for (const level of LEVELS) {
        expect(krippendorffAlpha([[2, 2, null], [2, null, 2]], level).alpha).toBe(1);
        // NLTK 3.8 AnnotationTask.alpha() returns 1 here (extra case alpha-extra-single-value-no-pairable-unit)
        expect(krippendorffAlpha([[4, null], [null, 4]], level)).toMatchObject({ alpha: 1, units: 0, pairableValues: 0 });
        expect(krippendorffAlpha([[7]], level).alpha).toBe(1);
      }
    });

    it('no unit with two values -> null (NLTK divides by zero here)', () => {
      for (const level of LEVELS) {
        const r = krippendorffAlpha([[1, null, 3], [null, 2, null]], level);
        expect(r).toMatchObject({ alpha: null, units: 0, pairableValues: 0, observedDisagreement: null, expectedDisagreement: null });
      }
    });

    it('no variation among the pairable values (D_e = 0) -> null, even if other values occur', () => {
      for (const level of LEVELS) {
        const r = krippendorffAlpha([[1, 1, 2], [1, 1, null]], level);
        expect(r).toMatchObject({ alpha: null, units: 2, pairableValues: 4, observedDisagreement: 0, expectedDisagreement: 0 });
        // Non-integer values whose mean is not exact in floating point must not leak an ulp into alpha.
        expect(krippendorffAlpha([[0.1, 0.1, 0.1, 5], [0.1, 0.1, 0.1, null], [0.1, null, 0.1, null]], level).alpha).toBeNull();
      }
    });

    it('never returns NaN', () => {
      const rng = createRng(99);
      for (let t = 0; t < 200; t++) {
        const m = Array.from({ length: 1 + rng.int(3) }, () =>
          Array.from({ length: rng.int(4) }, () => (rng.uniform() < 0.5 ? null : rng.int(3))),
        );
        const cols = m[0].length;
        for (const row of m) row.length = cols;
        for (const level of LEVELS) {
          const a = krippendorffAlpha(m.map((row) => Array.from(row, (v) => v ?? null)), level).alpha;
          expect(a === null || Number.isFinite(a)).toBe(true);
        }
      }
    });
  });

  it('is 1 under perfect agreement with variation, and 0 for the one-disagreeing-pair case', () => {
    for (const level of LEVELS) {
      expect(krippendorffAlpha([[1, 2, 3], [1, 2, 3]], level).alpha).toBeCloseTo(1, 14);
      // oracle alpha-edge-one-pairable-unit-disagree: D_o = D_e
      expect(krippendorffAlpha([[1, 3, null], [2, null, 4]], level).alpha).toBeCloseTo(0, 14);
    }
  });

  it('accepts string and boolean labels at the nominal level, distinct from numbers', () => {
    expect(krippendorffAlpha([['a', 'b', 'a'], ['a', 'b', 'b']], 'nominal').alpha).toBeCloseTo(
      krippendorffAlpha([[1, 2, 1], [1, 2, 2]], 'nominal').alpha as number,
      14,
    );
    // 1 and '1' are different labels: the single unit disagrees.
    expect(krippendorffAlpha([[1, true], ['1', true]], 'nominal').alpha).not.toBe(1);
  });

  it('has the invariances of its metrics', () => {
    const rng = createRng(2024);
    const m: (number | null)[][] = Array.from({ length: 4 }, () =>
      Array.from({ length: 60 }, () => (rng.uniform() < 0.2 ? null : 1 + rng.int(6))),
    );
    const map = (f: (v: number) => number) => m.map((row) => row.map((v) => (v === null ? null : f(v))));
    const a = (x: (number | null)[][], level: AlphaLevel) => krippendorffAlpha(x, level).alpha as number;
    // interval: affine maps; ordinal: any increasing map; nominal: any one-to-one relabelling; ratio: scaling
    expect(a(map((v) => 3 * v + 7), 'interval')).toBeCloseTo(a(m, 'interval'), 12);
    expect(a(map((v) => v ** 3 + 100), 'ordinal')).toBeCloseTo(a(m, 'ordinal'), 12);
    expect(a(map((v) => (v * 37) % 11), 'nominal')).toBeCloseTo(a(m, 'nominal'), 12);
    expect(a(map((v) => 2.5 * v), 'ratio')).toBeCloseTo(a(m, 'ratio'), 12);
    // rater order and unit order do not matter
    const reversedRaters = [...m].reverse();
    const reversedUnits = m.map((row) => [...row].reverse());
    for (const level of LEVELS) {
      expect(a(reversedRaters, level)).toBeCloseTo(a(m, level), 12);
      expect(a(reversedUnits, level)).toBeCloseTo(a(m, level), 12);
    }
  });

  it('handles ratio values of 0 (d(0, k) = 1, d(0, 0) = 0)', () => {
    // Pairs (0,0) agree, (0,2) -> 1, so alpha is finite and below 1.
    const r = krippendorffAlpha([[0, 0, 2, 4], [0, 2, 2, 4]], 'ratio');
    expect(Number.isFinite(r.alpha)).toBe(true);
    expect(r.alpha as number).toBeLessThan(1);
  });

  it('rejects bad input with specific dataErrors', () => {
    expectDataError(() => krippendorffAlpha('x' as never), 'stats.badShape', 'krippendorffAlpha requires ratings as an array of raters');
    expectDataError(() => krippendorffAlpha([[1, 2], 3] as never), 'stats.badShape', 'ratings[1] to be an array of units, got 3');
    expectDataError(() => krippendorffAlpha([[1, 2], [1]]), 'stats.badShape', 'got 1 in ratings[1] and 2 in ratings[0]');
    expectDataError(() => krippendorffAlpha([[1, 'a']], 'interval'), 'stats.badValue', 'at the interval level requires finite numbers or null, got "a" at ratings[0][1]');
    expectDataError(() => krippendorffAlpha([[1, NaN]], 'ordinal'), 'stats.badValue', 'got NaN at ratings[0][1]');
    expectDataError(() => krippendorffAlpha([[1, Infinity]], 'nominal'), 'stats.badValue', 'got Infinity at ratings[0][1]');
    expectDataError(() => krippendorffAlpha([[1, -2]], 'ratio'), 'stats.badValue', 'ratio level requires non-negative values, got -2 at ratings[0][1]');
    expectDataError(() => krippendorffAlpha([[1, { a: 1 }]] as never, 'nominal'), 'stats.badValue', 'got object at ratings[0][1]');
    expectDataError(() => krippendorffAlpha([[1]], 'metric' as AlphaLevel), 'stats.badOption', `level to be one of 'nominal', 'ordinal', 'interval', 'ratio', got "metric"`);
  });

  it('handles 100,000 units x 5 raters at every level (speed: npm run bench)', () => {
    const rng = createRng(7);
    const units = 100_000;
    const m = Array.from({ length: 5 }, () => Array.from({ length: units }, () => (rng.uniform() < 0.1 ? null : 1 + rng.int(5))));
    for (const level of LEVELS) {
      const r = krippendorffAlpha(m, level);
      expect(r.units).toBeGreaterThan(99_000);
    }
  });
});

/** R boot:::norm.inter's quantile of sorted replicates: order statistic (R + 1) p, normal-scale interpolation. */
function normInter(sorted: number[], p: number): number {
  const R = sorted.length;
  const rk = (R + 1) * p;
  const k = Math.trunc(rk);
  if (k <= 0) return sorted[0];
  if (k >= R) return sorted[R - 1];
  if (k === rk) return sorted[k - 1];
  const q = (x: number) => normalQuantile(x, 0, 1);
  return sorted[k - 1] + ((q(p) - q(k / (R + 1))) / (q((k + 1) / (R + 1)) - q(k / (R + 1)))) * (sorted[k] - sorted[k - 1]);
}

describe('krippendorffAlphaBootstrap', () => {
  it('equals krippendorffAlpha on column-resampled matrices drawn in the documented order', () => {
    for (const level of LEVELS) {
      const resamples = 150;
      const seed = 31;
      const got = krippendorffAlphaBootstrap(PAPER, level, { resamples, seed, levelCI: 0.9 });
      // Reference: the documented procedure written out naively.
      const rng = createRng(seed);
      const U = PAPER[0].length;
      const alphas: number[] = [];
      for (let b = 0; b < resamples; b++) {
        const cols = Array.from({ length: U }, () => rng.int(U));
        const r = krippendorffAlpha(PAPER.map((row) => cols.map((c) => row[c])), level);
        // documented exception: a resample with no pairable unit is undefined
        if (r.alpha !== null && r.units > 0) alphas.push(r.alpha);
      }
      alphas.sort((x, y) => x - y);
      const mean = alphas.reduce((s, v) => s + v, 0) / alphas.length;
      const se = Math.sqrt(alphas.reduce((s, v) => s + (v - mean) ** 2, 0) / (alphas.length - 1));
      expect(got.estimate).toBe(krippendorffAlpha(PAPER, level).alpha);
      expect(got.undefinedResamples).toBe(resamples - alphas.length);
      expect(got.lower as number).toBeCloseTo(normInter(alphas, 0.05), 12);
      expect(got.upper as number).toBeCloseTo(normInter(alphas, 0.95), 12);
      expect(got.se as number).toBeCloseTo(se, 12);
      expect(got).toMatchObject({ level: 0.9, method: 'percentile', resamples, seed, n: 12, measurementLevel: level });
    }
  });

  it('is reproducible for a seed and brackets the estimate on the paper example', () => {
    const a = krippendorffAlphaBootstrap(PAPER, 'interval', { resamples: 2000, seed: 7 });
    const b = krippendorffAlphaBootstrap(PAPER, 'interval', { resamples: 2000, seed: 7 });
    const c = krippendorffAlphaBootstrap(PAPER, 'interval', { resamples: 2000, seed: 8 });
    expect(b).toEqual(a);
    expect(c.lower).not.toBe(a.lower);
    expect(a.lower as number).toBeLessThan(a.estimate as number);
    expect(a.upper as number).toBeGreaterThanOrEqual(a.estimate as number);
    expect(a.se as number).toBeGreaterThan(0);
    expect(a.level).toBe(0.95);
  });

  it('defaults to 10,000 resamples and resamples 100,000 units x 5 raters', () => {
    expect(krippendorffAlphaBootstrap([[1, 2, 3], [1, 2, 2]], 'nominal', { seed: 1 }).resamples).toBe(10_000);
    const rng = createRng(3);
    const m = Array.from({ length: 5 }, () => Array.from({ length: 100_000 }, () => 1 + rng.int(4)));
    const r = krippendorffAlphaBootstrap(m, 'nominal', { resamples: 20, seed: 1 });
    expect(r.lower as number).toBeLessThanOrEqual(r.upper as number);
  });

  it('counts undefined resamples and leaves them out, including single-value resamples without pairs', () => {
    // Unit 0 is the only pairable unit; resamples without it have no pairable value and are
    // undefined, also those that draw unit 1 (value 3) three times, where the point-estimate
    // convention would give 1.
    const m = [[1, 3, 4], [2, null, null]];
    const r = krippendorffAlphaBootstrap(m, 'nominal', { resamples: 500, seed: 5 });
    expect(r.estimate).toBe(0);
    expect(r.undefinedResamples).toBeGreaterThan(0);
    expect(r.undefinedResamples).toBeLessThan(500);
    // Defined resamples hold unit 0 (values 1, 2) k times: n = 2k, sum o d = 2k, n^2 - sum n_c^2 = 2k^2,
    // so alpha = 1 - (2k - 1) 2k / 2k^2 = (1 - k)/k: 0, -0.5, -2/3 (the (n - 1) factor), never above 0.
    expect(r.upper).toBe(0);
    expect(r.lower as number).toBeLessThan(0);
  });

  it('handles the degenerate matrices', () => {
    const single = krippendorffAlphaBootstrap([[2, 2], [2, 2]], 'interval', { resamples: 50, seed: 1 });
    expect(single).toMatchObject({ estimate: 1, lower: 1, upper: 1, se: 0, undefinedResamples: 0 });
    const empty = krippendorffAlphaBootstrap([[], []], 'nominal', { resamples: 50, seed: 1 });
    expect(empty).toMatchObject({ estimate: null, lower: null, upper: null, se: null, n: 0, undefinedResamples: 50 });
    const none = krippendorffAlphaBootstrap([[1, null], [null, 2]], 'nominal', { resamples: 50, seed: 1 });
    expect(none).toMatchObject({ estimate: null, lower: null, upper: null, se: null, undefinedResamples: 50 });
    // One value, never pairable: the estimate follows the convention (1); no resample is informative.
    const lone = krippendorffAlphaBootstrap([[4, null], [null, 4]], 'nominal', { resamples: 50, seed: 1 });
    expect(lone).toMatchObject({ estimate: 1, lower: null, upper: null, se: null, undefinedResamples: 50 });
  });

  it('rejects bad options', () => {
    const m = [[1, 2], [1, 2]];
    expectDataError(() => krippendorffAlphaBootstrap(m, 'nominal', {} as never), 'stats.badSeed', 'seed to be an integer in [0, 4294967295], got undefined');
    expectDataError(() => krippendorffAlphaBootstrap(m, 'nominal', { seed: -1 }), 'stats.badSeed', 'got -1');
    expectDataError(() => krippendorffAlphaBootstrap(m, 'nominal', { seed: 1, resamples: 0 }), 'stats.badCount', 'resamples to be an integer >= 1, got 0');
    expectDataError(() => krippendorffAlphaBootstrap(m, 'nominal', { seed: 1, levelCI: 1.5 }), 'stats.badLevel', 'levelCI strictly between 0 and 1, got 1.5');
    expectDataError(() => krippendorffAlphaBootstrap(m, 'x' as AlphaLevel, { seed: 1 }), 'stats.badOption', 'got "x"');
  });
});
