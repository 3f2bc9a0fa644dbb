import { describe, it, expect } from 'vitest';
import { createRng, Mt19937Stream } from '../../src/stats/rng.ts';

describe('createRng (MT19937)', () => {
  it('uniform() equals numpy RandomState(seed).random_sample() for the same seed', () => {
    // numpy 1.24: np.random.RandomState(42).random_sample(3)
    const r = createRng(42);
    expect([r.uniform(), r.uniform(), r.uniform()]).toEqual([0.3745401188473625, 0.9507143064099162, 0.7319939418114051]);
  });
  it('is reproducible from the seed and records it', () => {
    const a = createRng(7);
    const b = createRng(7);
    expect(Array.from({ length: 5 }, () => a.int(1000))).toEqual(Array.from({ length: 5 }, () => b.int(1000)));
    expect(a.seed).toBe(7);
    expect(a.algorithm).toBe('mt19937');
  });
  it('int(n) is unbiased for small and large n (chi-square and exact mean)', () => {
    const r = createRng(1);
    const k = 10;
    const counts = new Array(k).fill(0);
    const N = 200_000;
    for (let i = 0; i < N; i++) counts[r.int(k)]++;
    const chi2 = counts.reduce((s, c) => s + (c - N / k) ** 2 / (N / k), 0);
    expect(chi2).toBeLessThan(27.88); // chi-square 0.999 quantile, 9 df (R: qchisq(0.999, 9))
    // Large n takes the exact 64-bit path: the mean of int(n) / n must be 0.5 within 5 standard errors.
    const n = 3_000_000_000;
    let s = 0;
    for (let i = 0; i < 20_000; i++) {
      const x = r.int(n);
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(n);
      s += x / n;
    }
    expect(Math.abs(s / 20_000 - 0.5)).toBeLessThan(5 * Math.sqrt(1 / 12 / 20_000));
  });
  it('int(n) is Lemire\'s floor(x n / 2^32) with rejection, computed in exact 64-bit integers', () => {
    const TWO32 = 0x100000000n;
    for (const n of [1, 7, 1000, 0x1fffff, 0x200000, 0x200001, 3_000_000_000, 0xffffffff]) {
      const r = createRng(11);
      const raw = createRng(11);
      for (let i = 0; i < 3000; i++) {
        const N = BigInt(n);
        let m = BigInt(raw.uint32()) * N;
        if (m % TWO32 < N) {
          const t = (TWO32 - N) % N;
          while (m % TWO32 < t) m = BigInt(raw.uint32()) * N;
        }
        expect(r.int(n)).toBe(Number(m / TWO32));
      }
    }
  });
  it('Mt19937Stream draws what createRng draws (uint32 and int, in blocks of 624)', () => {
    for (const seed of [0, 1, 42, 0xffffffff]) {
      const a = createRng(seed);
      const b = new Mt19937Stream(seed);
      const sizes = [2, 1000, 0x1fffff, 0x200000, 3_000_000_000];
      const xs: number[] = [];
      const ys: number[] = [];
      for (let i = 0; i < 5000; i++) {
        const n = sizes[i % sizes.length];
        xs.push(i % 3 === 0 ? a.uint32() : a.int(n));
        ys.push(i % 3 === 0 ? b.uint32() : b.int(n));
      }
      expect(ys).toEqual(xs);
    }
    expect(() => new Mt19937Stream(1).int(0)).toThrow(/int/);
  });
  it('rejects bad seeds and bounds', () => {
    expect(() => createRng(-1)).toThrow(/seed/);
    expect(() => createRng(1.5)).toThrow(/seed/);
    expect(() => createRng(1).int(0)).toThrow(/int/);
  });
});
