import { meanStatistic } from './mean-statistic.ts';
import { medianStatistic } from './median.ts';
import { quantileStatistic } from './quantile.ts';
import { standardDeviationStatistic } from './standard-deviation.ts';
import { trimmedMeanStatistic } from './trimmed-mean.ts';
import type { StatisticSpec, WeightedStatistic } from './weighted-statistic.ts';
import { createLaneCountKernel, LANES } from './draw-kernels.ts';
import { createXoshiro128, type Xoshiro128 } from './xoshiro128.ts';

/** Resamples per block: fixed, so the streams (and results) never depend on how blocks are spread over threads. */
export const BLOCK_RESAMPLES = 64;

/** What one block of resamples needs: plain typed arrays and numbers (they cross into worker threads). */
export interface BlockInput {
  /** The values, sorted ascending. */
  sorted: Float64Array;
  /** Cluster index (0..units-1) of each sorted value, or null: each value is its own unit. */
  unit: Int32Array | null;
  /** Units resampled: clusters, or n. */
  units: number;
  spec: StatisticSpec;
  seed: number;
  resamples: number;
}

/** The statistic of `spec` bound to sorted data. */
export function resamplingStatistic(spec: StatisticSpec, sorted: Float64Array): WeightedStatistic {
  switch (spec.name) {
    case 'mean':
      return meanStatistic(sorted);
    case 'median':
      return medianStatistic(sorted);
    case 'quantile':
      return quantileStatistic(sorted, spec.p);
    case 'trimmed-mean':
      return trimmedMeanStatistic(sorted, spec.trim);
    case 'sd':
      return standardDeviationStatistic(sorted);
  }
}

/** Number of blocks for R resamples. */
export const blockCount = (resamples: number): number => Math.ceil(resamples / BLOCK_RESAMPLES);

/**
 * The pure per-block kernel of `bootstrapStatistic` (and of its worker threads): computes the
 * replicates of the blocks `next()` hands out (block indices in increasing order, until it
 * returns -1) into `out` (length R, replicate r of block b at b * 64 + r).
 *
 * Streams: block b has four lane streams, the xoshiro128** stream of `seed` jumped 4b, 4b + 1,
 * 4b + 2 and 4b + 3 times (`Xoshiro128.jump`, 2^64 draws each), so blocks never overlap and a
 * block's replicates depend only on (seed, b), not on which thread computed it or in which order.
 * Each resample of the block, in turn, takes its `units` unit indices from the four lanes at once
 * (lane L makes floor(units / 4) draws, plus one when L < units mod 4, each an unbiased Lemire
 * integer: `createLaneCountKernel`, WebAssembly SIMD) as 32-bit counts per unit, then weights each
 * sorted value by its unit's count and evaluates the statistic on the weights (no copy, no sort);
 * an unclustered statistic with a fused path (`drawn`, the mean) sums the same draws' values
 * instead of counting them.
 *
 * @example
 * import { computeBlocks } from './resample-blocks.ts';
 * const input = { sorted: Float64Array.of(1, 2, 3, 4), unit: null, units: 4, spec: { name: 'median' as const }, seed: 1, resamples: 100 };
 * const out = new Float64Array(100);
 * let b = 0;
 * computeBlocks(input, () => (b < 2 ? b++ : -1), out); // out: 100 bootstrap medians
 */
export function computeBlocks(input: BlockInput, next: () => number, out: Float64Array): void {
  const { sorted, unit, units, spec, seed, resamples } = input;
  const n = sorted.length;
  const stat = resamplingStatistic(spec, sorted);
  const counter = createLaneCountKernel(units);
  const counts = counter.counts;
  const w = unit ? new Int32Array(n) : counts;
  const base = createXoshiro128(seed);
  let at = 0; // jumps applied to base
  for (let b = next(); b >= 0; b = next()) {
    while (at < LANES * b) {
      base.jump();
      at++;
    }
    const lanes: Xoshiro128[] = [];
    for (let L = 0; L < LANES; L++) {
      lanes.push(base.copy());
      base.jump();
      at++;
    }
    const end = Math.min(resamples, (b + 1) * BLOCK_RESAMPLES);
    if (!unit && stat.drawn) {
      for (let r = b * BLOCK_RESAMPLES; r < end; r++) out[r] = stat.drawn(lanes);
      continue;
    }
    for (let r = b * BLOCK_RESAMPLES; r < end; r++) {
      counter.count(lanes, units, units);
      let N = n;
      if (unit) {
        N = 0;
        for (let i = 0; i < n; i++) {
          const c = counts[unit[i]];
          w[i] = c;
          N += c;
        }
      }
      out[r] = stat.weighted(w, N);
      counts.fill(0);
    }
  }
}
