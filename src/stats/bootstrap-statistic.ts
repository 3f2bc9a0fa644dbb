import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { toBootstrapResult } from './bootstrap-interval.ts';
import { parseBootstrapOptions, toFiniteArray, type BootstrapOptions, type BootstrapResult, type ParsedBootstrapOptions } from './bootstrap-internals.ts';
import { clusterTotals, type ClusterId } from './cluster-totals.ts';
import { jackknifeAcceleration } from './jackknife-acceleration.ts';
import { checkQuantileP } from './quantile.ts';
import { blockCount, computeBlocks, resamplingStatistic, type BlockInput } from './resample-blocks.ts';
import { checkTrim } from './trimmed-mean.ts';
import type { StatisticSpec } from './weighted-statistic.ts';

export interface BootstrapStatisticOptions extends BootstrapOptions {
  /** Cluster of each value: whole clusters are resampled (and left out by the jackknife). */
  clusters?: ArrayLike<ClusterId>;
}

export interface BootstrapStatisticResult extends BootstrapResult {
  statistic: StatisticSpec;
  /** Clusters resampled (clustered only). */
  clusters?: number;
}

/** A bootstrap ready to run: the block input, and what `finishBootstrapStatistic` needs. */
export interface PreparedBootstrapStatistic {
  input: BlockInput;
  opts: ParsedBootstrapOptions;
  estimate: number;
  n: number;
  clusters: number | null;
}

/**
 * Nonparametric bootstrap of the mean, median, a quantile, a trimmed mean or the standard
 * deviation of one sample, optionally with whole clusters resampled; the engine of
 * `ci bootstrap --statistic` (which spreads its blocks over worker threads,
 * src/compute/parallel-bootstrap.ts) and of `ci paired --statistic median` (on the differences).
 *
 * Sources: Efron & Tibshirani (1993), "An Introduction to the Bootstrap": resampling (ch. 6),
 * percentile interval (ch. 13), BCa (ch. 14: z0 from the share of replicates STRICTLY below the
 * estimate as R `boot`, acceleration eq. 14.15 from the jackknife); basic interval Davison &
 * Hinkley (1997) eq. 5.6; clusters resampled whole, Davison & Hinkley sec. 3.8. Intervals and
 * quantile conventions as `bootstrapInterval` (R `boot.ci`). Statistic definitions: `median`,
 * `quantile` (type 7), `trimmedMean` (R `mean(x, trim)`), `standardDeviation` (n - 1), and the
 * mean (`meanStatistic`).
 *
 * How it runs: the values are sorted once; a resample is a vector of multiplicities over the
 * sorted values (`computeBlocks`), so each statistic is a running sum over it: O(n) per resample
 * with no sort or selection (order statistics by counting). The R resamples form blocks of 64
 * (`BLOCK_RESAMPLES`); block b draws from four xoshiro128** streams, the seed's stream jumped 4b
 * to 4b + 3 times (`computeBlocks`), so the result is the same whichever thread computes which
 * block. This function computes every block
 * in the calling thread; `parallelBootstrapStatistic` gives byte-identical results on several.
 *
 * The jackknife (BCa only) leaves out one value per distinct value in O(1) each (weighted by
 * multiplicity), or, clustered, one cluster at a time (O(n) each).
 *
 * Degenerate cases: fewer than 2 values (2 clusters), non-finite values, level outside (0, 1),
 * resamples < 1, a missing seed, quantile p outside (0, 1) or trim outside [0, 0.5) throw
 * `dataError`. All values identical: every replicate equals the estimate, a zero-width interval
 * (percentile, basic) and, for BCa, no interval (NaN) with `note` = `DEGENERATE_BCA_NOTE`.
 *
 * @example
 * import { bootstrapStatistic } from './bootstrap-statistic.ts';
 * const r = bootstrapStatistic([3.1, 4.7, 2.2, 5.0, 3.9, 4.1, 2.8], { name: 'median' }, { seed: 7, resamples: 2000 });
 * // r.estimate = 3.9, r.lower <= 3.9 <= r.upper, r.engine = 'resample-blocks'; same result for seed 7
 */
export function bootstrapStatistic(values: Float64Array | readonly number[], spec: StatisticSpec, options: BootstrapStatisticOptions): BootstrapStatisticResult {
  const p = prepareBootstrapStatistic(values, spec, options);
  const reps = new Float64Array(p.opts.resamples);
  let b = 0;
  const K = blockCount(p.opts.resamples);
  computeBlocks(p.input, () => (b < K ? b++ : -1), reps);
  return finishBootstrapStatistic(p, reps);
}

export function checkStatisticSpec(fn: string, spec: unknown): StatisticSpec {
  const s = spec as StatisticSpec;
  if (s === null || typeof s !== 'object') throw dataError('stats.badOption', `${fn} requires a statistic spec, got ${show(spec)}`);
  switch (s.name) {
    case 'mean':
    case 'median':
    case 'sd':
      return { name: s.name };
    case 'quantile':
      if (!(s.p > 0 && s.p < 1)) throw dataError('stats.badOption', `${fn} requires the quantile p to be in (0, 1), got ${show(s.p)}`);
      return { name: 'quantile', p: checkQuantileP(fn, s.p) };
    case 'trimmed-mean':
      return { name: 'trimmed-mean', trim: checkTrim(fn, s.trim) };
    default:
      throw dataError('stats.badOption', `${fn} requires statistic mean, median, quantile, trimmed-mean or sd, got ${show((s as { name?: unknown }).name)}`);
  }
}

/** Checks and sorts the input and computes the estimate; the blocks are run by the caller. */
export function prepareBootstrapStatistic(values: Float64Array | readonly number[], spec: StatisticSpec, options: BootstrapStatisticOptions): PreparedBootstrapStatistic {
  const fn = 'bootstrapStatistic';
  const opts = parseBootstrapOptions(fn, options);
  const s = checkStatisticSpec(fn, spec);
  const clustered = options.clusters !== undefined && options.clusters !== null;
  const x = toFiniteArray(fn, 'values', values, clustered ? 1 : 2);
  const n = x.length;
  let sorted: Float64Array;
  let unit: Int32Array | null = null;
  let units = n;
  if (clustered) {
    const totals = clusterTotals(x, options.clusters!, fn);
    if (totals.clusters < 2) throw dataError('stats.tooFewClusters', `${fn} requires at least 2 clusters, got ${totals.clusters}`);
    const order = Int32Array.from({ length: n }, (_, i) => i).sort((i, j) => x[i] - x[j] || i - j);
    sorted = Float64Array.from(order, (i) => x[i]);
    unit = Int32Array.from(order, (i) => totals.index[i]);
    units = totals.clusters;
  } else {
    sorted = x.sort();
  }
  const stat = resamplingStatistic(s, sorted);
  const estimate = stat.weighted(new Int32Array(n).fill(1), n);
  return { input: { sorted, unit, units, spec: s, seed: opts.seed, resamples: opts.resamples }, opts, estimate, n, clusters: clustered ? units : null };
}

/** The interval from the replicates of a prepared bootstrap (with the jackknife for BCa). */
export function finishBootstrapStatistic(p: PreparedBootstrapStatistic, reps: Float64Array): BootstrapStatisticResult {
  const { sorted, unit, units, spec } = p.input;
  const n = sorted.length;
  const acceleration = (): number => {
    const stat = resamplingStatistic(spec, sorted);
    if (!unit) {
      const jack: number[] = [];
      const weight: number[] = [];
      for (let s = 0; s < n; ) {
        let e = s + 1;
        while (e < n && sorted[e] === sorted[s]) e++;
        jack.push(stat.without(s));
        weight.push(e - s);
        s = e;
      }
      return jackknifeAcceleration(jack, weight);
    }
    // leave one cluster out: weights 1, 0 on the cluster's values
    const members: number[][] = Array.from({ length: units }, () => []);
    for (let i = 0; i < n; i++) members[unit[i]].push(i);
    const w = new Int32Array(n).fill(1);
    const jack = new Float64Array(units);
    for (let c = 0; c < units; c++) {
      for (const i of members[c]) w[i] = 0;
      jack[c] = stat.weighted(w, n - members[c].length);
      for (const i of members[c]) w[i] = 1;
    }
    return jackknifeAcceleration(jack);
  };
  const r = toBootstrapResult(reps, p.estimate, p.opts, { n: p.n, rng: 'xoshiro128**', engine: 'resample-blocks', acceleration });
  return { ...r, statistic: spec, ...(p.clusters !== null ? { clusters: p.clusters } : {}) };
}
