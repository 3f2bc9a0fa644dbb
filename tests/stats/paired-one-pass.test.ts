/**
 * The pairwise comparison's one-pass forms (src/analysis/paired-comparison.ts): `pairedStandardErrors`
 * gives what `pairedStandardError` gives with ddof 1 and with ddof 0, and `pairedClusterInterval`
 * what `pairedClusterBootstrap` gives of the interval and the CR1 SE, bit for bit, errors included.
 */
import { describe, expect, it } from 'vitest';
import { pairedClusterBootstrap, pairedClusterInterval, pairedStandardError, pairedStandardErrors } from '../../src/stats/index.ts';
import { createRng } from '../../src/stats/rng.ts';

/** Pairs over `clusters` clusters of 1-5 items: 0/1, halves, or arbitrary doubles. */
function pairs(seed: number, clusters: number, kind: 'binary' | 'halves' | 'doubles') {
  const rng = createRng(seed);
  const a: number[] = [];
  const b: number[] = [];
  const ids: number[] = [];
  const draw = (p: number) => (kind === 'doubles' ? rng.uniform() * 3 - 1 : kind === 'halves' ? Math.round(rng.uniform() * 2 * p) / 2 : Number(rng.uniform() < p));
  for (let c = 0; c < clusters; c++) {
    const p = rng.uniform();
    for (let k = 1 + Math.floor(rng.uniform() * 5); k > 0; k--) {
      a.push(draw(p));
      b.push(draw(p * 0.8));
      ids.push(c * 3 + 7);
    }
  }
  return { a: Float64Array.from(a), b: Float64Array.from(b), ids: Int32Array.from(ids) };
}

const same = (x: unknown, y: unknown) => expect(JSON.stringify(x, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))).toBe(JSON.stringify(y, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));

describe('the pairwise comparison in one pass', () => {
  for (const kind of ['binary', 'halves', 'doubles'] as const) {
    for (const clusters of [40, 6000]) {
      it(`${kind}, ${clusters} clusters: the same numbers as the separate calls`, () => {
        const { a, b, ids } = pairs(clusters + kind.length, clusters, kind);
        const both = pairedStandardErrors(a, b);
        same(both.ddof1, pairedStandardError(a, b, { ddof: 1 }));
        same(both.ddof0, pairedStandardError(a, b, { ddof: 0 }));
        const o = { resamples: 2000, level: 0.95, method: 'percentile' as const, seed: 5 };
        const full = pairedClusterBootstrap(a, b, ids, o);
        const lean = pairedClusterInterval(a, b, ids, o);
        const picked = Object.fromEntries(Object.keys(lean).map((k) => [k, full[k as keyof typeof full]]));
        same(lean, picked);
        expect(Object.keys(lean)).toEqual(expect.arrayContaining(['lower', 'upper', 'se', 'engine', 'clusters', 'seClustered']));
      });
    }
  }

  it('the same errors', () => {
    expect(() => pairedStandardErrors([1], [0])).toThrow(/pairedStandardError requires more pairs than ddof \(1\), got 1/);
    expect(() => pairedStandardErrors([1, Number.NaN], [0, 1])).toThrow(pairedError(() => pairedStandardError([1, Number.NaN], [0, 1])));
    expect(() => pairedClusterInterval([1, 0, 1], [0, 0, 1], [1, 1, 1], { resamples: 100, level: 0.95, seed: 1 })).toThrow(
      pairedError(() => pairedClusterBootstrap([1, 0, 1], [0, 0, 1], [1, 1, 1], { resamples: 100, level: 0.95, seed: 1 })),
    );
  });
});

function pairedError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
}
