/**
 * parallelBootstrapStatistic: the blocks of resamples spread over worker threads give results
 * byte-identical to the single-threaded bootstrapStatistic, for any number of threads (the
 * workers here run from the TypeScript sources through bootstrap-worker-boot.mjs).
 */
import { describe, expect, it } from 'vitest';
import { parallelBootstrapStatistic, defaultThreads, MAX_THREADS } from '../../src/compute/parallel-bootstrap.ts';
import { bootstrapStatistic, createXoshiro128, type StatisticSpec } from '../../src/stats/index.ts';
import { comparePaired, comparePairedOnThreads } from '../../src/analysis/paired-comparison.ts';

const g = createXoshiro128(17);
// 3,000 values x 6,400 resamples = 19.2 million draws: enough for 3 threads (4 million each at
// least); clustered, 1,500 clusters: 9,600 + 19,200 thousand steps
const n = 3000;
const x = Float64Array.from({ length: n }, () => -Math.log(1 - g.uniform()));
const clusters = Array.from({ length: n }, (_, i) => `q${i % 1500}`);
const R = 6400;

const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('parallelBootstrapStatistic', () => {
  const cases: [string, StatisticSpec, boolean][] = [
    ['median', { name: 'median' }, false],
    ['mean (fused draw-and-add)', { name: 'mean' }, false],
    ['trimmed mean 0.1, clustered', { name: 'trimmed-mean', trim: 0.1 }, true],
    ['quantile 0.9, clustered', { name: 'quantile', p: 0.9 }, true],
  ];
  for (const [name, spec, clustered] of cases) {
    it(`${name}: threads 1, 2 and 3 give the single-threaded result, byte for byte`, async () => {
      const opts = { seed: 11, resamples: R, method: 'bca' as const, returnReplicates: true, ...(clustered ? { clusters } : {}) };
      const ref = bootstrapStatistic(x, spec, opts);
      for (const threads of [1, 2, 3]) {
        const r = await parallelBootstrapStatistic(x, spec, opts, { threads });
        expect(bytes(r.replicates!).equals(bytes(ref.replicates!)), `threads ${threads}: replicates`).toBe(true);
        expect({ ...r, replicates: undefined }).toEqual({ ...ref, replicates: undefined });
      }
      // a seed changes the result
      const other = await parallelBootstrapStatistic(x, spec, { ...opts, seed: 12 }, { threads: 2 });
      expect(bytes(other.replicates!).equals(bytes(ref.replicates!))).toBe(false);
    }, 120_000);
  }

  it('a resample count that is not a multiple of the block size', async () => {
    const opts = { seed: 3, resamples: 4321, returnReplicates: true };
    const ref = bootstrapStatistic(x, { name: 'sd' }, opts);
    const r = await parallelBootstrapStatistic(x, { name: 'sd' }, opts, { threads: 2 });
    expect(bytes(r.replicates!).equals(bytes(ref.replicates!))).toBe(true);
    expect(r.replicates!.length).toBe(4321);
  }, 60_000);

  it('comparePairedOnThreads (ci paired, continuous pairs) equals comparePaired (the report) for threads 1, 2 and 3; 0/1 pairs keep the exact path', async () => {
    const b = Float64Array.from(x, (v, i) => v * 0.9 + (i % 7) / 10);
    const o = { seed: 21, resamples: R, level: 0.95, method: 'bca' as const };
    const ref = comparePaired(x, b, null, null, o);
    expect(ref.engine).toBe('resample-blocks');
    for (const threads of [1, 2, 3]) expect(await comparePairedOnThreads(x, b, null, null, { ...o, threads })).toEqual(ref);
    const a01 = Float64Array.from(x, (v) => (v > 1 ? 1 : 0));
    const b01 = Float64Array.from(x, (v) => (v > 0.8 ? 1 : 0));
    const exact = await comparePairedOnThreads(a01, b01, null, null, { ...o, threads: 2 });
    expect(exact.engine).toBe('multinomial');
    expect(exact).toEqual(comparePaired(a01, b01, null, null, o));
  }, 120_000);

  it('default threads: the available cores, capped', () => {
    expect(defaultThreads()).toBeGreaterThanOrEqual(1);
    expect(defaultThreads()).toBeLessThanOrEqual(MAX_THREADS);
  });
});
