import { dataError } from '../errors.ts';
import { checkChoice, show } from './arg-checks.ts';
import { parseBootstrapOptions } from './bootstrap-internals.ts';
import type { ClusterBootstrapOptions, ClusterBootstrapResult } from './cluster-bootstrap.ts';
import { decimalScale, maxAbs, toScaledIntegers } from './decimal-scale.ts';
import { ratioBootstrap } from './ratio-bootstrap.ts';

const TWO53 = 9007199254740992;

/**
 * Cluster bootstrap of a mean from per-cluster totals: the count-based entry point of
 * `clusterBootstrap`. Cluster c holds `sizes[c]` observations summing to `sums[c]` (for 0/1 data:
 * successes and trials), and the statistic is sum(sums) / sum(sizes) over the resampled clusters.
 * Callers that aggregate in SQL (`GROUP BY scenario`) pass the totals instead of expanding every
 * observation into a vector.
 *
 * Source: Davison & Hinkley (1997), "Bootstrap Methods and their Application", sec. 3.8
 * (resampling clusters; ratio estimator); Field & Welsh (2007). The cluster bootstrap depends on
 * the data only through the per-cluster (sum, size) pairs, so this is the same bootstrap as
 * `clusterBootstrap` on the expanded values: with clusters in the same order (the order of first
 * appearance there) and the same seed it returns bitwise the same estimate, interval, replicates
 * and engine (tests/stats/cluster-bootstrap-totals.test.ts). Sums of short decimals are scaled to
 * exact integers as there (`decimalScale`).
 *
 * Degenerate cases: clusters with size 0 carry no observation of this statistic and are left out
 * (so a conditional share such as P(wrong | facts right) resamples only the clusters where its
 * condition occurred); fewer than 2 clusters left, negative or non-integer sizes, non-finite sums
 * or mismatched lengths throw `dataError`. Every cluster with the same mean -> zero-width interval
 * (for BCa: lower and upper NaN with `note`, see `bootstrapInterval`).
 *
 * @example
 * import { clusterBootstrapTotals } from './cluster-bootstrap-totals.ts';
 * // 4 scenarios x 5 epochs: successes per scenario
 * const r = clusterBootstrapTotals([5, 4, 1, 0], [5, 5, 5, 5], { seed: 9, resamples: 2000 });
 * // r.estimate = 0.5, r.clusters = 4, r.n = 20, r.engine = 'multinomial'
 */
export function clusterBootstrapTotals(
  sums: Float64Array | readonly number[],
  sizes: Float64Array | readonly number[],
  options: ClusterBootstrapOptions,
): ClusterBootstrapResult {
  const fn = 'clusterBootstrapTotals';
  const opts = parseBootstrapOptions(fn, options);
  const engine = checkChoice(fn, 'engine', options.engine ?? 'auto', ['auto', 'multinomial', 'resample'] as const);
  if (!(sums instanceof Float64Array) && !Array.isArray(sums)) throw dataError('stats.badShape', `${fn} requires sums to be an array of numbers, got ${show(sums)}`);
  if (!(sizes instanceof Float64Array) && !Array.isArray(sizes)) throw dataError('stats.badShape', `${fn} requires sizes to be an array of numbers, got ${show(sizes)}`);
  if (sums.length !== sizes.length) {
    throw dataError('stats.lengthMismatch', `${fn} requires sums and sizes to have the same length, got ${sums.length} and ${sizes.length}`);
  }
  const keptSums: number[] = [];
  const keptSizes: number[] = [];
  let n = 0;
  for (let c = 0; c < sums.length; c++) {
    const s = sums[c];
    const w = sizes[c];
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 0) throw dataError('stats.badCount', `${fn} requires sizes[${c}] to be an integer >= 0, got ${show(w)}`);
    if (typeof s !== 'number' || !Number.isFinite(s)) throw dataError('stats.badValue', `${fn} requires sums[${c}] to be a finite number, got ${show(s)}`);
    if (w === 0) {
      if (s !== 0) throw dataError('stats.badValue', `${fn} requires sums[${c}] to be 0 for an empty cluster, got ${show(s)}`);
      continue;
    }
    keptSums.push(s);
    keptSizes.push(w);
    n += w;
  }
  const C = keptSums.length;
  if (C < 2) throw dataError('stats.tooFewClusters', `${fn} requires at least 2 clusters with observations, got ${C}`);
  let num: Float64Array = Float64Array.from(keptSums);
  const den = Float64Array.from(keptSizes);
  let divisor = 1;
  const d = decimalScale(num);
  if (d >= 0) {
    const scaled = toScaledIntegers(num, d);
    const p = 10 ** d;
    let maxSize = 0;
    for (let c = 0; c < C; c++) maxSize = Math.max(maxSize, den[c]);
    if (C * maxAbs(scaled) <= TWO53 && p * C * maxSize <= TWO53) {
      num = scaled;
      divisor = p;
    }
  }
  const boot = ratioBootstrap({ num, den, divisor }, opts, engine, n);
  return { ...boot, clusters: C };
}
