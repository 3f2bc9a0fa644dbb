/**
 * clusterBootstrap: whole clusters resampled, ratio estimator sum(sums) / sum(counts). Checked
 * against a naive implementation written here that resamples cluster ids and averages all the
 * drawn values (two-sample Kolmogorov-Smirnov at alpha = 0.001, D < 1.9495 sqrt(2 / B)); the exact
 * multinomial path against the index resampler the same way; and, for equal cluster sizes (where
 * a replicate is the mean of C cluster means drawn i.i.d.), against the exact moments of that
 * distribution within 5 Monte Carlo standard errors. Its SE converges to CR0
 * (clusteredStandardError 'cr0'). Oracle bands are in bootstrap-oracle.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { clusterBootstrap } from '../../src/stats/cluster-bootstrap.ts';
import { clusteredStandardError } from '../../src/stats/clustered-standard-error.ts';
import { createRng } from '../../src/stats/rng.ts';
import { createXoshiro128 } from '../../src/stats/xoshiro128.ts';
import { expectBootstrapMeanMoments, expectDataError, ksCritical, ksTwoSample } from '../helpers/stats.ts';

/** C clusters with the given sizes; binary or continuous scores with a per-cluster difficulty. */
function clustered(sizes: number[], binary: boolean, seed: number): { values: number[]; ids: string[] } {
  const g = createXoshiro128(seed);
  const values: number[] = [];
  const ids: string[] = [];
  sizes.forEach((m, c) => {
    const p = 0.1 + 0.8 * g.uniform();
    for (let e = 0; e < m; e++) {
      values.push(binary ? (g.uniform() < p ? 1 : 0) : Math.round((p + 0.3 * (g.uniform() - 0.5)) * 1000) / 1000);
      ids.push(`item-${c}`);
    }
  });
  return { values, ids };
}

/** Naive cluster bootstrap: resample cluster ids (MT19937) and average all their values. */
function naiveClusterBootstrap(values: number[], ids: string[], B: number, seed: number): Float64Array {
  const byId = new Map<string, number[]>();
  values.forEach((v, i) => {
    if (!byId.has(ids[i])) byId.set(ids[i], []);
    byId.get(ids[i])!.push(v);
  });
  const groups = [...byId.values()];
  const rng = createRng(seed);
  const out = new Float64Array(B);
  for (let r = 0; r < B; r++) {
    const all: number[] = [];
    for (let c = 0; c < groups.length; c++) all.push(...groups[rng.int(groups.length)]);
    out[r] = all.reduce((s, v) => s + v, 0) / all.length;
  }
  return out;
}

describe('clusterBootstrap distribution', () => {
  it('unequal cluster sizes, continuous scores: sums-and-counts resampler = naive concatenating resampler (KS)', () => {
    const g = createXoshiro128(3);
    const sizes = Array.from({ length: 60 }, () => 1 + g.int(8));
    const { values, ids } = clustered(sizes, false, 4);
    const B = 20_000;
    const r = clusterBootstrap(values, ids, { seed: 1, resamples: B, returnReplicates: true });
    expect(r.engine).toBe('resample');
    expect(r.rng).toBe('xoshiro128**');
    const naive = naiveClusterBootstrap(values, ids, B, 2);
    expect(ksTwoSample(r.replicates!, naive)).toBeLessThan(ksCritical(B, B));
  });

  it('binary scores, unequal sizes: exact multinomial over (sum, size) atoms = resampler = naive (KS)', () => {
    const g = createXoshiro128(5);
    const sizes = Array.from({ length: 80 }, () => 2 + g.int(4));
    const { values, ids } = clustered(sizes, true, 6);
    const B = 20_000;
    const fast = clusterBootstrap(values, ids, { seed: 1, resamples: B, engine: 'multinomial', returnReplicates: true });
    const slow = clusterBootstrap(values, ids, { seed: 2, resamples: B, engine: 'resample', returnReplicates: true });
    const naive = naiveClusterBootstrap(values, ids, B, 3);
    expect(fast.engine).toBe('multinomial');
    expect(fast.rng).toBe('mt19937');
    expect(ksTwoSample(fast.replicates!, slow.replicates!)).toBeLessThan(ksCritical(B, B));
    expect(ksTwoSample(fast.replicates!, naive)).toBeLessThan(ksCritical(B, B));
    expect(fast.estimate).toBe(slow.estimate);
  });

  it('equal cluster sizes: replicate = mean of C i.i.d. cluster means; exact moments within 5 MC SEs; SE -> CR0', () => {
    const C = 50;
    const { values, ids } = clustered(new Array(C).fill(5), true, 8);
    const means: number[] = [];
    for (let c = 0; c < C; c++) means.push(values.slice(5 * c, 5 * c + 5).reduce((s, v) => s + v, 0) / 5);
    const m = means.reduce((s, v) => s + v, 0) / C;
    const s2 = means.reduce((s, v) => s + (v - m) ** 2, 0) / C;
    for (const engine of ['multinomial', 'resample'] as const) {
      const r = clusterBootstrap(values, ids, { seed: 11, resamples: 40_000, engine, returnReplicates: true });
      expectBootstrapMeanMoments(r.replicates!, means, engine);
      // with equal sizes the bootstrap variance s2 / C is exactly CR0^2
      expect(Math.sqrt(s2 / C)).toBeCloseTo(clusteredStandardError(values, ids, { variant: 'cr0' }), 14);
    }
  });
});

describe('clusterBootstrap speed (brief: 10,000 clusters x 10 epochs x 10,000 resamples < 2 s)', () => {
  it('binary scores take the exact path; continuous scores the sums-and-counts resampler; at full bench size', () => {
    const bin = clustered(new Array(10_000).fill(10), true, 1);
    const cont = clustered(new Array(10_000).fill(10), false, 2);
    clusterBootstrap(bin.values.slice(0, 100), bin.ids.slice(0, 100), { seed: 1, resamples: 100 }); // warm-up
    const rb = clusterBootstrap(bin.values, bin.ids, { seed: 1, resamples: 10_000 });
    const rc = clusterBootstrap(cont.values, cont.ids, { seed: 1, resamples: 10_000 });
    expect(rb.engine).toBe('multinomial');
    expect(rc.engine).toBe('resample');
    expect(rb.clusters).toBe(10_000);
    expect(rb.n).toBe(100_000);
    // Speed is measured in bench/stats-bootstrap.ts (npm run bench), never asserted in a test.
  });
});

describe('clusterBootstrap behaviour', () => {
  it('same seed -> identical; the result records seed, clusters and n', () => {
    const { values, ids } = clustered([3, 4, 2, 5, 3, 3], true, 9);
    const a = clusterBootstrap(values, ids, { seed: 5, method: 'bca' });
    expect(a).toEqual(clusterBootstrap(values, ids, { seed: 5, method: 'bca' }));
    expect(a).toMatchObject({ seed: 5, clusters: 6, n: 20, method: 'bca', resamples: 10_000 });
  });

  it('cluster ids may be numbers; order of first appearance does not matter to the estimate', () => {
    const r1 = clusterBootstrap([1, 0, 1, 1], [7, 7, 3, 3], { seed: 1, resamples: 100 });
    const r2 = clusterBootstrap([1, 1, 1, 0], [3, 3, 7, 7], { seed: 1, resamples: 100 });
    expect(r1.estimate).toBe(0.75);
    expect(r2.estimate).toBe(0.75);
  });

  it('all values identical, or every cluster with the same mean -> zero-width interval (BCa: none, NaN with a note)', () => {
    for (const [values, ids] of [
      [[1, 1, 1, 1], ['a', 'a', 'b', 'b']],
      [[1, 0, 0, 1, 1, 0], ['a', 'a', 'b', 'b', 'c', 'c']],
    ] as const) {
      for (const method of ['percentile', 'bca'] as const) {
        const r = clusterBootstrap([...values], [...ids], { seed: 1, resamples: 300, method });
        expect(r.se).toBe(0);
        if (method === 'bca') {
          expect([r.lower, r.upper]).toEqual([NaN, NaN]);
          expect(r.note).toMatch(/^BCa is undefined on degenerate data/);
        } else {
          expect(r.lower).toBe(r.estimate);
          expect(r.upper).toBe(r.estimate);
        }
      }
    }
  });

  it('rejects bad input', () => {
    const o = { seed: 1 };
    expectDataError(() => clusterBootstrap([], [], o), 'stats.empty');
    expectDataError(() => clusterBootstrap([1, 0, 1], ['a', 'a', 'a'], o), 'stats.tooFewClusters', /at least 2 clusters, got 1/);
    expectDataError(() => clusterBootstrap([1, 0, 1], ['a', 'b'], o), 'stats.lengthMismatch', /got 3 and 2/);
    expectDataError(() => clusterBootstrap([1, NaN], ['a', 'b'], o), 'stats.badValue', /values\[1\]/);
    expectDataError(() => clusterBootstrap([1, 0], ['a', null as never], o), 'stats.badValue', /clusterIds\[1\]/);
    expectDataError(() => clusterBootstrap([1, 0], ['a', 'b'], { seed: 1, level: 2 }), 'stats.badLevel');
    expectDataError(() => clusterBootstrap([1, 0], ['a', 'b'], { seed: 1, resamples: -1 }), 'stats.badCount');
  });
});
