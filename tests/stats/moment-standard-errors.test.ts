/**
 * The moment/total entry points of the standard errors (`--from-aggregates` uses them) against
 * the vector forms on the same data, and their degenerate cases.
 */
import { describe, it, expect } from 'vitest';
import {
  clusteredStandardError,
  clusteredStandardErrorFromTotals,
  cltStandardError,
  cltStandardErrorFromMoments,
  createRng,
  pairedStandardError,
  pairedStandardErrorFromMoments,
} from '../../src/stats/index.ts';

/** Clustered data: G clusters of 1..5 values, 0/1 or graded (0, 0.25, ..., 1). */
function data(seed: number, G: number, graded: boolean) {
  const rng = createRng(seed);
  const values: number[] = [];
  const b: number[] = [];
  const ids: string[] = [];
  for (let g = 0; g < G; g++) {
    const p = rng.uniform();
    const k = 1 + Math.floor(rng.uniform() * 5);
    for (let i = 0; i < k; i++) {
      const draw = () => (graded ? Math.round(rng.uniform() * 4) / 4 : rng.uniform() < p ? 1 : 0);
      values.push(draw());
      b.push(draw());
      ids.push(`c${g}`);
    }
  }
  return { values, b, ids };
}

function totals(values: number[], ids: string[]) {
  const order = [...new Set(ids)];
  const sums = order.map((c) => values.reduce((s, v, i) => (ids[i] === c ? s + v : s), 0));
  const sizes = order.map((c) => ids.filter((x) => x === c).length);
  return { sums, sizes, sumSq: values.reduce((s, v) => s + v * v, 0) };
}

const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-13 * Math.max(1, Math.abs(b)));

describe('standard errors from moments equal the vector forms', () => {
  for (const graded of [false, true]) {
    it(`CLT, clustered (cr0, cr1, Miller) and paired SEs, ${graded ? 'graded' : '0/1'} values`, () => {
      for (const seed of [1, 2, 3]) {
        const { values, b, ids } = data(seed, 40, graded);
        const t = totals(values, ids);
        const n = values.length;
        const sum = values.reduce((s, v) => s + v, 0);
        for (const ddof of [0, 1]) close(cltStandardErrorFromMoments(n, sum, t.sumSq, { ddof }), cltStandardError(values, { ddof }));
        for (const variant of ['cr0', 'cr1', 'miller'] as const) close(clusteredStandardErrorFromTotals(t.sums, t.sizes, t.sumSq, { variant }), clusteredStandardError(values, ids, { variant }));
        const m = { n, sumA: sum, sumB: b.reduce((s, v) => s + v, 0), sumSqA: t.sumSq, sumSqB: b.reduce((s, v) => s + v * v, 0), sumAB: values.reduce((s, v, i) => s + v * b[i]!, 0) };
        for (const ddof of [0, 1]) {
          const want = pairedStandardError(values, b, { ddof });
          const got = pairedStandardErrorFromMoments(m, { ddof });
          expect([got.meanA, got.meanB, got.meanDiff]).toEqual([want.meanA, want.meanB, want.meanDiff]);
          for (const k of ['sdDiff', 'sePaired', 'seUnpaired', 'covariance', 'correlation'] as const) close(got[k], want[k]);
        }
      }
    });
  }

  it('degenerate input throws, and identical cluster means give 0', () => {
    expect(() => cltStandardErrorFromMoments(1, 1, 1)).toThrow(/more than|above ddof/);
    expect(() => clusteredStandardErrorFromTotals([1], [2])).toThrow(/at least 2 clusters/);
    expect(() => clusteredStandardErrorFromTotals([1, 1], [2, 2.5])).toThrow(/integer >= 0/);
    expect(() => clusteredStandardErrorFromTotals([1, 1], [2, 2], undefined, { variant: 'miller' })).toThrow(/sum of squares/);
    expect(clusteredStandardErrorFromTotals([1, 2, 0], [2, 4, 0])).toBe(0);
    expect(() => pairedStandardErrorFromMoments({ n: 3, sumA: NaN, sumB: 1, sumSqA: 1, sumSqB: 1, sumAB: 1 })).toThrow(/sumA/);
  });
});
