/**
 * pairedBootstrap: joint resampling of items, statistic mean(a - b). The exact fast path for 0/1
 * pairs (multinomial over the (a, b) cells) is checked against the index resampler and a naive
 * joint resampler written here (two-sample Kolmogorov-Smirnov at alpha = 0.001: D must stay below
 * 1.9495 sqrt(2 / B)) and against the exact moments of the bootstrap distribution of a mean of n
 * draws from the empirical distribution of d = a - b (mean d-bar, variance s2 / n, 4th central
 * moment (m4 + 3 (n - 1) s2^2) / n^3, s2 and m4 plug-in central moments of d), within 5 Monte
 * Carlo standard errors. Oracle bands for the shared cases are in bootstrap-oracle.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { bootstrap } from '../../src/stats/bootstrap.ts';
import { pairedBootstrap, pairedDifferences } from '../../src/stats/paired-bootstrap.ts';
import { bootstrapStatistic } from '../../src/stats/bootstrap-statistic.ts';
import { pairedStandardError } from '../../src/stats/paired-standard-error.ts';
import { createRng } from '../../src/stats/rng.ts';
import { createXoshiro128 } from '../../src/stats/xoshiro128.ts';
import { expectBootstrapMeanMoments, expectDataError, ksCritical, ksTwoSample } from '../helpers/stats.ts';

/** 0/1 pairs with given cell counts n11, n10, n01, n00, shuffled deterministically. */
function pairs(n11: number, n10: number, n01: number, n00: number, seed = 1): { a: number[]; b: number[] } {
  const cells: [number, number][] = [];
  for (const [k, ab] of [[n11, [1, 1]], [n10, [1, 0]], [n01, [0, 1]], [n00, [0, 0]]] as const) {
    for (let i = 0; i < k; i++) cells.push([ab[0], ab[1]]);
  }
  const g = createXoshiro128(seed);
  for (let i = cells.length - 1; i > 0; i--) {
    const j = g.int(i + 1);
    [cells[i], cells[j]] = [cells[j], cells[i]];
  }
  return { a: cells.map((c) => c[0]), b: cells.map((c) => c[1]) };
}

describe('pairedBootstrap: exact multinomial fast path vs resampling', () => {
  for (const [n11, n10, n01, n00] of [[8, 3, 2, 7], [180, 40, 25, 255], [1, 1, 0, 0]] as const) {
    it(`cells (1,1)=${n11} (1,0)=${n10} (0,1)=${n01} (0,0)=${n00}: same distribution by three routes`, () => {
      const { a, b } = pairs(n11, n10, n01, n00);
      const d = a.map((v, i) => v - b[i]);
      const n = a.length;
      const B = 20_000;
      const fast = pairedBootstrap(a, b, { seed: 1, resamples: B, engine: 'multinomial', returnReplicates: true });
      const slow = pairedBootstrap(a, b, { seed: 2, resamples: B, engine: 'resample', returnReplicates: true });
      // naive joint resampler: draw item indices (MT19937), average a_i - b_i
      const rng = createRng(3);
      const naive = new Float64Array(B);
      for (let r = 0; r < B; r++) {
        let s = 0;
        for (let i = 0; i < n; i++) {
          const k = rng.int(n);
          s += a[k] - b[k];
        }
        naive[r] = s / n;
      }
      expect(fast.engine).toBe('multinomial');
      expect(slow.engine).toBe('resample-blocks'); // forced resampling: the general resampler's blocks
      expect(fast.estimate).toBe((n10 - n01) / n);
      expectBootstrapMeanMoments(fast.replicates!, d, 'multinomial');
      expectBootstrapMeanMoments(slow.replicates!, d, 'resample');
      expectBootstrapMeanMoments(naive, d, 'naive');
      expect(ksTwoSample(fast.replicates!, slow.replicates!)).toBeLessThan(ksCritical(B, B));
      expect(ksTwoSample(fast.replicates!, naive)).toBeLessThan(ksCritical(B, B));
    });
  }

  it('continuous pairs: resampling pairs = bootstrap of the differences (KS against bootstrap() on a - b)', () => {
    const g = createXoshiro128(12);
    const a = Array.from({ length: 150 }, () => g.uniform());
    const b = a.map((v) => v * 0.8 + 0.2 * g.uniform());
    const d = a.map((v, i) => v - b[i]);
    const B = 20_000;
    const r = pairedBootstrap(a, b, { seed: 5, resamples: B, returnReplicates: true });
    expect(r.engine).toBe('resample-blocks');
    // exactly the general resampler's mean of the differences (what ci paired spreads over threads)
    const same = bootstrapStatistic(pairedDifferences(Float64Array.from(a), Float64Array.from(b)).values, { name: 'mean' }, { seed: 5, resamples: B, returnReplicates: true });
    expect(Buffer.from(r.replicates!.buffer).equals(Buffer.from(same.replicates!.buffer))).toBe(true);
    expect([r.estimate, r.lower, r.upper, r.se]).toEqual([same.estimate, same.lower, same.upper, same.se]);
    const viaD = bootstrap(d, (x) => x.reduce((s, v) => s + v, 0) / x.length, { seed: 6, resamples: B, returnReplicates: true });
    expect(ksTwoSample(r.replicates!, viaD.replicates!)).toBeLessThan(ksCritical(B, B));
    expectBootstrapMeanMoments(r.replicates!, d, 'continuous pairs');
  });

  it('100,000 pairs x 10,000 resamples run on the exact path (speed: npm run bench)', () => {
    const { a, b } = pairs(60_000, 9_000, 7_000, 24_000, 7);
    pairedBootstrap(a.slice(0, 100), b.slice(0, 100), { seed: 1, resamples: 100 }); // JIT warm-up
    const r = pairedBootstrap(a, b, { seed: 1, resamples: 10_000 });
    expect(r.engine).toBe('multinomial');
    expect(r.estimate).toBeCloseTo(0.02, 15);
    // Speed is measured in bench/stats-bootstrap.ts (npm run bench), never asserted in a test.
  });
});

describe('pairedBootstrap: result fields', () => {
  it('adds meanA, meanB, correlation, sePaired, seUnpaired (= pairedStandardError, ddof 1) and records the seed', () => {
    const { a, b } = pairs(30, 9, 4, 17);
    const r = pairedBootstrap(a, b, { seed: 77, method: 'bca' });
    const se = pairedStandardError(a, b);
    expect(r).toMatchObject({
      meanA: se.meanA,
      meanB: se.meanB,
      correlation: se.correlation,
      sePaired: se.sePaired,
      seUnpaired: se.seUnpaired,
      seed: 77,
      n: 60,
      method: 'bca',
      resamples: 10_000,
    });
    expect(r.sePaired).toBeLessThan(r.seUnpaired); // positively correlated pairs
    // the bootstrap SE estimates the ddof-0 paired SE
    expect(Math.abs(r.se - pairedStandardError(a, b, { ddof: 0 }).sePaired)).toBeLessThan(0.05 * r.se);
  });

  it('estimate is mean(a - b) computed on the differences, exact for decimal scores', () => {
    // mean(a) - mean(b) = 0.1 + 0.3 - ... in floating point is not 0, the exact answer
    const a = [0.1, 0.7, 0.3, 0.6];
    const b = [0.3, 0.5, 0.1, 0.8];
    expect(a.reduce((s, v) => s + v, 0) / 4 - b.reduce((s, v) => s + v, 0) / 4).not.toBe(0);
    const r = pairedBootstrap(a, b, { seed: 1, resamples: 1000, method: 'bca' });
    expect(r.estimate).toBe(0);
    expect(r.lower).toBeLessThan(0);
    expect(r.upper).toBeGreaterThan(0);
  });

  it('same seed -> identical result (both engines)', () => {
    const { a, b } = pairs(20, 5, 3, 12);
    for (const engine of ['multinomial', 'resample'] as const) {
      expect(pairedBootstrap(a, b, { seed: 4, engine })).toEqual(pairedBootstrap(a, b, { seed: 4, engine }));
    }
  });

  it('a identical to b -> estimate 0, zero-width interval [0, 0]; BCa: no interval (NaN) with a note', () => {
    const a = [1, 0, 1, 1, 0];
    for (const method of ['percentile', 'bca', 'basic'] as const) {
      const r = pairedBootstrap(a, a, { seed: 1, resamples: 200, method });
      if (method === 'bca') {
        expect([r.estimate, r.lower, r.upper, r.se, r.sePaired]).toEqual([0, NaN, NaN, 0, 0]);
        expect(r.note).toMatch(/^BCa is undefined on degenerate data/);
      } else expect([r.estimate, r.lower, r.upper, r.se, r.sePaired]).toEqual([0, 0, 0, 0, 0]);
    }
  });

  it('constant a -> correlation NaN (undefined), the bootstrap still runs', () => {
    const r = pairedBootstrap([1, 1, 1, 1], [1, 0, 1, 0], { seed: 1, resamples: 100 });
    expect(r.correlation).toBeNaN();
    expect(r.estimate).toBe(0.5);
  });

  it('rejects bad input', () => {
    const o = { seed: 1 };
    expectDataError(() => pairedBootstrap([], [], o), 'stats.empty');
    expectDataError(() => pairedBootstrap([1], [0], o), 'stats.tooFewValues', /a.*got 1 value/);
    expectDataError(() => pairedBootstrap([1, 0, 1], [1, 0], o), 'stats.lengthMismatch', /a and b.*got 3 and 2/);
    expectDataError(() => pairedBootstrap([1, 0], [1, NaN], o), 'stats.badValue', /b\[1\].*NaN/);
    expectDataError(() => pairedBootstrap([1, 0], [1, 0], { seed: 1, level: 0 }), 'stats.badLevel');
    expectDataError(() => pairedBootstrap([1, 0], [1, 0], { seed: 1, level: 1 }), 'stats.badLevel');
    expectDataError(() => pairedBootstrap([1, 0], [1, 0], { seed: 1, resamples: 0 }), 'stats.badCount', /resamples/);
    expectDataError(() => pairedBootstrap([1, 0], [1, 0], {} as never), 'stats.badSeed');
  });
});
