import tQuantile from '@stdlib/stats-base-dists-t-quantile';
import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * Above this many clusters an interval of a mean over clusters comes from the clustered central
 * limit theorem (`clusteredCltInterval`) instead of the cluster bootstrap.
 *
 * Why: the percentile cluster bootstrap converges to the normal interval with the CR0 standard
 * error as the number of clusters G grows (its skewness correction is O(1/sqrt(G))); at G = 5,000
 * the two agree to well within the Monte-Carlo error of a 10,000-resample bootstrap
 * (tests/stats/clustered-clt-interval.test.ts checks it at this threshold), while the bootstrap
 * costs resamples x G draws per interval (5e9 for 500,000 clusters) and needs every cluster total
 * in memory; the CLT needs five running sums. Inspect AI reports the same CR1 standard error.
 */
export const CLT_MIN_CLUSTERS = 5_000;

/**
 * A rate (values in [0, 1]) with fewer than this many successes or failures keeps the bootstrap
 * however many clusters it has: a normal interval is poor for rare events.
 */
export const CLT_MIN_EVENTS = 100;

/**
 * Running sums of per-cluster totals (cluster c: sum s_c of its values, size n_c), enough for
 * the mean and its cluster-robust standard error without keeping one number per cluster. Totals
 * are shifted by the first cluster's mean (s'_c = s_c - n_c k) so that the sum of squares does
 * not cancel catastrophically; `sameMean` records whether every cluster has that mean.
 */
export interface ClusterMoments {
  /** Clusters with at least one observation. */
  clusters: number;
  /** Observations. */
  n: number;
  /** Sum of the (unshifted) cluster sums. */
  sum: number;
  shift: number;
  /** sum_c s'_c, sum_c s'_c^2, sum_c s'_c n_c, sum_c n_c^2. */
  s: number;
  ss: number;
  sn: number;
  nn: number;
  sameMean: boolean;
}

export function emptyClusterMoments(): ClusterMoments {
  return { clusters: 0, n: 0, sum: 0, shift: 0, s: 0, ss: 0, sn: 0, nn: 0, sameMean: true };
}

/** Adds one cluster's total (sum of its values) and size; empty clusters are skipped. */
export function addClusterMoments(m: ClusterMoments, sum: number, size: number): void {
  if (!Number.isFinite(sum) || !Number.isInteger(size) || size < 0) {
    throw dataError('stats.badValue', `addClusterMoments requires a finite sum and an integer size >= 0, got ${show(sum)} and ${show(size)}`);
  }
  if (size === 0) return;
  if (m.clusters === 0) m.shift = sum / size;
  else if (sum / size !== m.shift) m.sameMean = false;
  const s = sum - size * m.shift;
  m.clusters++;
  m.n += size;
  m.sum += sum;
  m.s += s;
  m.ss += s * s;
  m.sn += s * size;
  m.nn += size * size;
}

export interface ClusteredCltInterval {
  estimate: number;
  /** CR1 standard error: sqrt(G / (G - 1)) * sqrt(sum_c (s_c - n_c m)^2) / N. */
  se: number;
  lower: number;
  upper: number;
  /** Degrees of freedom of the t quantile: G - 1. */
  df: number;
  clusters: number;
}

/**
 * Interval of a mean over clustered observations from the clustered central limit theorem:
 * m +- t_{G-1, (1+level)/2} * SE_CR1, with SE_CR1 the cluster-robust standard error with the
 * G / (G - 1) small-sample factor (`clusteredStandardError` variant 'cr1'; Cameron & Miller
 * 2015, "A Practitioner's Guide to Cluster-Robust Inference", sec. VI.B, t with G - 1 degrees of
 * freedom) computed from running sums (`ClusterMoments`). This is how Inspect AI reports a
 * clustered (epochs) standard error; the cluster bootstrap converges to it as G grows.
 *
 * Degenerate cases: fewer than 2 clusters throws `dataError`; every cluster with the same mean
 * gives se 0 and a zero-width interval (callers report that as no spread).
 *
 * @example
 * import { addClusterMoments, clusteredCltInterval, emptyClusterMoments } from './clustered-clt-interval.ts';
 * const m = emptyClusterMoments();
 * for (const [s, n] of [[5, 5], [4, 5], [1, 5], [0, 5]]) addClusterMoments(m, s, n);
 * clusteredCltInterval(m, 0.95); // estimate 0.5, se 0.2415 (= sd of the cluster means / sqrt(4)), df 3
 */
export function clusteredCltInterval(m: ClusterMoments, level: number): ClusteredCltInterval {
  const G = m.clusters;
  if (G < 2) throw dataError('stats.tooFewClusters', `clusteredCltInterval requires at least 2 clusters with observations, got ${G}`);
  if (!(level > 0 && level < 1)) throw dataError('stats.badLevel', `clusteredCltInterval requires level in (0, 1), got ${show(level)}`);
  const d = m.s / m.n; // mean of the shifted values
  const rss = m.sameMean ? 0 : Math.max(0, m.ss - 2 * d * m.sn + d * d * m.nn);
  const se = (Math.sqrt(rss) / m.n) * Math.sqrt(G / (G - 1));
  const estimate = m.sum / m.n;
  const t = tQuantile((1 + level) / 2, G - 1);
  return { estimate, se, lower: estimate - t * se, upper: estimate + t * se, df: G - 1, clusters: G };
}
