/**
 * clusteredPairedFromTotals: the mean difference and CR1 SE of clusteredPairedStandardError from
 * per-cluster totals, identical to the last bit for 0/1 data; degenerate input throws.
 */
import { describe, it, expect } from 'vitest';
import { clusteredPairedFromTotals, clusteredPairedStandardError } from '../../src/stats/index.ts';
import { createRng } from '../../src/stats/rng.ts';

describe('clusteredPairedFromTotals', () => {
  it('equals clusteredPairedStandardError on 0/1 pairs to the last bit', () => {
    for (const seed of [1, 2, 3, 4]) {
      const rng = createRng(seed);
      const a: number[] = [];
      const b: number[] = [];
      const ids: number[] = [];
      const C = 30 + seed * 7;
      for (let c = 0; c < C; c++) {
        const n = 1 + rng.int(5);
        for (let e = 0; e < n; e++) {
          a.push(rng.int(2));
          b.push(rng.int(3) === 0 ? 1 : 0);
          ids.push(c);
        }
      }
      const ref = clusteredPairedStandardError(a, b, ids, { variant: 'cr1' });
      const sums = new Float64Array(C);
      const counts = new Float64Array(C);
      a.forEach((x, i) => {
        sums[ids[i]] += x - b[i];
        counts[ids[i]]++;
      });
      const r = clusteredPairedFromTotals(sums, counts, a[0] - b[0]);
      expect(r).toEqual({ n: ref.n, clusters: ref.clusters, meanDiff: ref.meanDiff, se: ref.se });
      // A wrong shift changes the last bits at most, never the value to rounding.
      expect(clusteredPairedFromTotals(sums, counts, 0).se).toBeCloseTo(ref.se, 12);
    }
  });

  it('skips empty clusters and gives the documented example', () => {
    expect(clusteredPairedFromTotals([1, 0, 1, 1], [2, 0, 2, 2], 1)).toEqual({ n: 6, clusters: 3, meanDiff: 0.5, se: 0 });
  });

  it('throws on fewer than 2 clusters, mismatched lengths, bad counts and non-finite input', () => {
    expect(() => clusteredPairedFromTotals([1, 0], [2, 0], 1)).toThrow(/at least 2 clusters/);
    expect(() => clusteredPairedFromTotals([1, 0], [2], 1)).toThrow(/same length/);
    expect(() => clusteredPairedFromTotals([1, 0], [2, 1.5], 1)).toThrow(/integer >= 0/);
    expect(() => clusteredPairedFromTotals([1, NaN], [2, 1], 1)).toThrow(/finite/);
    expect(() => clusteredPairedFromTotals([1, 0], [2, 1], NaN)).toThrow(/finite shift/);
  });
});
