import { describe, expect, it } from 'vitest';
import {
  addClusterMoments,
  clusterBootstrapTotals,
  clusteredCltInterval,
  clusteredStandardError,
  CLT_MIN_CLUSTERS,
  CLT_MIN_EVENTS,
  createRng,
  emptyClusterMoments,
} from '../../src/stats/index.ts';
import { CLT_METHOD, clusterIntervalFromTotals } from '../../src/analysis/rates.ts';

const momentsOf = (sums: number[], sizes: number[]) => {
  const m = emptyClusterMoments();
  sums.forEach((s, c) => addClusterMoments(m, s, sizes[c]));
  return m;
};

/** Clustered 0/1 data: G clusters of 1-5 observations, each cluster with its own rate (a random effect). */
function clusteredRates(G: number, seed: number): { sums: number[]; sizes: number[] } {
  const rng = createRng(seed);
  const sums: number[] = [];
  const sizes: number[] = [];
  for (let c = 0; c < G; c++) {
    const n = 1 + Math.floor(rng.uniform() * 5);
    const p = Math.min(0.95, Math.max(0.05, 0.3 + 0.25 * (rng.uniform() - 0.5) * 2));
    let s = 0;
    for (let i = 0; i < n; i++) if (rng.uniform() < p) s++;
    sums.push(s);
    sizes.push(n);
  }
  return { sums, sizes };
}

describe('clusteredCltInterval', () => {
  it('is the CR1 standard error of clusteredStandardError with a t(G-1) quantile (R qt)', () => {
    const sums = [5, 4, 1, 0];
    const sizes = [5, 5, 5, 5];
    const r = clusteredCltInterval(momentsOf(sums, sizes), 0.95);
    const values = sizes.flatMap((n, c) => Array.from({ length: n }, (_, i) => (i < sums[c] ? 1 : 0)));
    const ids = sizes.flatMap((n, c) => Array.from({ length: n }, () => `c${c}`));
    expect(r.estimate).toBe(0.5);
    expect(r.se).toBeCloseTo(clusteredStandardError(values, ids, { variant: 'cr1' }), 14);
    expect(r.df).toBe(3);
    // R: qt(0.975, 3) = 3.182446305283708
    expect((r.upper - r.estimate) / r.se).toBeCloseTo(3.182446305283708, 12);
  });

  it('matches clusteredStandardError on unequal clusters with decimal values', () => {
    const values = [0.5, 1, 0, 0.25, 0.75, 1, 1, 0.5, 0, 0.125];
    const ids = ['a', 'a', 'b', 'c', 'c', 'c', 'd', 'e', 'e', 'e'];
    const order = [...new Set(ids)];
    const sums = order.map((k) => values.filter((_, i) => ids[i] === k).reduce((a, x) => a + x, 0));
    const sizes = order.map((k) => ids.filter((x) => x === k).length);
    const r = clusteredCltInterval(momentsOf(sums, sizes), 0.9);
    expect(r.se).toBeCloseTo(clusteredStandardError(values, ids, { variant: 'cr1' }), 14);
  });

  it('gives se 0 when every cluster has the same mean, and needs 2 clusters', () => {
    expect(clusteredCltInterval(momentsOf([2, 4], [4, 8]), 0.95).se).toBe(0);
    expect(() => clusteredCltInterval(momentsOf([1], [2]), 0.95)).toThrow(/at least 2 clusters/);
  });
});

describe('clustered CLT vs cluster bootstrap at the threshold', () => {
  // The percentile endpoint of a B-resample bootstrap has Monte-Carlo SE about
  // sqrt(a (1 - a) / B) / phi(z_a) * se_boot (the density of the near-normal bootstrap distribution).
  const B = 10_000;
  const mcSe = (se: number) => (Math.sqrt(0.025 * 0.975 / B) / (Math.exp(-0.5 * 1.959964 ** 2) / Math.sqrt(2 * Math.PI))) * se;
  const agree = (boot: { lower: number; upper: number; se: number }, clt: { lower: number; upper: number }) =>
    Math.abs(boot.lower - clt.lower) < 4 * mcSe(boot.se) && Math.abs(boot.upper - clt.upper) < 4 * mcSe(boot.se);

  for (const seed of [1, 2, 3]) {
    it(`agrees within 4 Monte-Carlo SEs at G = CLT_MIN_CLUSTERS (${CLT_MIN_CLUSTERS}), seed ${seed}`, () => {
      const { sums, sizes } = clusteredRates(CLT_MIN_CLUSTERS, seed);
      const boot = clusterBootstrapTotals(sums, sizes, { seed: 20261129, resamples: B, level: 0.95, method: 'percentile' });
      const clt = clusteredCltInterval(momentsOf(sums, sizes), 0.95);
      expect(clt.estimate).toBeCloseTo(boot.estimate, 14);
      // the bootstrap SE estimates the CR0 SE; CR1 is larger by sqrt(G / (G - 1))
      expect(Math.abs(boot.se / clt.se - 1)).toBeLessThan(0.05);
      expect(agree(boot, clt)).toBe(true);
      // The check can fail: an interval 15% too wide is outside the Monte-Carlo error.
      const wide = { lower: clt.estimate - 1.15 * (clt.estimate - clt.lower), upper: clt.estimate + 1.15 * (clt.upper - clt.estimate) };
      expect(agree(boot, wide)).toBe(false);
    });
  }

  it('the report switches method at the threshold and keeps the bootstrap for rare events', () => {
    const o = { level: 0.95, seed: 20261129, resamples: 1000 };
    const big = clusteredRates(CLT_MIN_CLUSTERS, 4);
    expect(clusterIntervalFromTotals(big.sums, big.sizes, 'scenario_id', o).method).toBe(CLT_METHOD);
    const small = clusteredRates(CLT_MIN_CLUSTERS - 1, 4);
    const b = clusterIntervalFromTotals(small.sums, small.sizes, 'scenario_id', o);
    expect(b.method).toBe('cluster-bootstrap-percentile');
    expect(b.resamples).toBe(1000);
    // Fewer than CLT_MIN_EVENTS successes: the bootstrap, however many clusters.
    const rare = big.sizes.map((n, c) => (c < CLT_MIN_EVENTS - 1 ? 1 : 0));
    expect(clusterIntervalFromTotals(rare, big.sizes, 'scenario_id', o).method).toBe('cluster-bootstrap-percentile');
    const i = clusterIntervalFromTotals(big.sums, big.sizes, 'scenario_id', o);
    expect(i.df).toBe(CLT_MIN_CLUSTERS - 1);
    expect(i.se).toBeGreaterThan(0);
  });
});
