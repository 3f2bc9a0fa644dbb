/**
 * clusterTotals (src/stats/cluster-totals.ts): integer ids in an Int32Array are indexed through a
 * table by id (or a Map when they are sparse), any other ids by a Map that looks a run of one id up
 * once. Every path numbers clusters in order of first appearance and gives the same index, sums
 * and counts as the Map over the same ids as plain numbers.
 */
import { describe, expect, it } from 'vitest';
import { clusterTotals } from '../../src/stats/cluster-totals.ts';
import { createRng } from '../../src/stats/rng.ts';

const plain = (t: ReturnType<typeof clusterTotals>) => ({ clusters: t.clusters, index: [...t.index], sums: [...t.sums], counts: [...t.counts] });

describe('clusterTotals', () => {
  it('numbers clusters in order of first appearance (the documented example)', () => {
    expect(plain(clusterTotals(Float64Array.of(1, 0, 1), ['q1', 'q1', 'q2']))).toEqual({ clusters: 2, index: [0, 0, 1], sums: [1, 1], counts: [2, 1] });
    expect(plain(clusterTotals(Float64Array.of(1, 0, 1, 0.5), Int32Array.of(7, -3, 7, 2)))).toEqual({ clusters: 3, index: [0, 1, 0, 2], sums: [2, 0, 0.5], counts: [2, 1, 1] });
  });

  it('typed integer ids give what the same ids as an array give: sorted, shuffled, negative, sparse, empty', () => {
    const rng = createRng(11);
    const cases: Int32Array[] = [new Int32Array(0), Int32Array.of(5)];
    for (const [n, span, offset] of [
      [2000, 300, 0],
      [2000, 300, -150],
      [500, 1e9, -5e8],
      [3000, 3000, 2 ** 30],
    ]) {
      const ids = new Int32Array(n);
      for (let i = 0; i < n; i++) ids[i] = offset + Math.floor(rng.uniform() * span);
      cases.push(ids, ids.slice().sort());
    }
    for (const ids of cases) {
      const values = new Float64Array(ids.length);
      for (let i = 0; i < values.length; i++) values[i] = Math.round(rng.uniform() * 4) / 4;
      expect(plain(clusterTotals(values, ids))).toEqual(plain(clusterTotals(values, Array.from(ids))));
    }
  });

  it('a run of one id and ids that repeat after others: one cluster each, strings and numbers apart', () => {
    const t = clusterTotals(Float64Array.of(1, 1, 0, 1, 0, 1), ['a', 'a', 'b', 'a', 1, '1']);
    expect(plain(t)).toEqual({ clusters: 4, index: [0, 0, 1, 0, 2, 3], sums: [3, 0, 0, 1], counts: [3, 1, 1, 1] });
    expect(() => clusterTotals(Float64Array.of(1, 1), ['a', Number.NaN])).toThrow(/clusterIds\[1\]/);
  });
});
