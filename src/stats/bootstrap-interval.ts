import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { overflowShift } from './overflow-scale.ts';
import { dataError } from '../errors.ts';
import type { BcaDetails, BootstrapMethod, BootstrapResult, ParsedBootstrapOptions } from './bootstrap-internals.ts';
import { normInterQuantile } from './norm-inter-quantile.ts';

export interface BootstrapIntervalOptions {
  method: BootstrapMethod;
  level: number;
  /**
   * Jackknife acceleration for BCa, or a function computing it (called only when BCa needs it, so
   * an expensive jackknife is skipped on fallback).
   */
  acceleration?: number | (() => number);
}

/** Why BCa gives no interval when every replicate is the same value. */
export const DEGENERATE_BCA_NOTE =
  'BCa is undefined on degenerate data: every bootstrap replicate equals the estimate (scipy returns NaN with a DegenerateDataWarning; R boot.ci stops)';

export interface BootstrapInterval {
  lower: number;
  upper: number;
  /** Standard deviation of the replicates (n - 1 denominator); NaN for a single replicate. */
  se: number;
  bca: BcaDetails | null;
}

/**
 * A bootstrap confidence interval from replicates: percentile, basic or BCa, all with R `boot`'s
 * quantile convention (`normInterQuantile`).
 *
 * Sources: Efron & Tibshirani (1993), "An Introduction to the Bootstrap": percentile interval
 * (eq. 13.5), BCa (ch. 14, eq. 14.9-14.15); basic interval Davison & Hinkley (1997) eq. 5.6:
 * [2 t0 - t*_((1+level)/2), 2 t0 - t*_((1-level)/2)].
 *
 * BCa: z0 = qnorm(#{t* < t0} / R), counting replicates STRICTLY below the estimate, as Efron &
 * Tibshirani and R `boot:::bca.ci` do. scipy.stats.bootstrap counts ties with the estimate as one
 * half (`(#{t* < t0} + #{t* = t0}/2) / R`); on discrete data (0/1 scores, Likert items) many
 * replicates equal the estimate exactly and the two conventions give visibly different
 * intervals (oracle fields `bca_strict` vs `bca`). The adjusted levels are
 * alpha_j = pnorm(z0 + (z0 + z_j) / (1 - a (z0 + z_j))) for z_j = qnorm((1 -+ level) / 2).
 *
 * Degenerate cases: all replicates equal -> a zero-width interval [t, t] for percentile (basic
 * gives [2 t0 - t, 2 t0 - t]), as scipy; for BCa there is no interval: lower and upper are NaN
 * (null in JSON) with `bca.note` = {@link DEGENERATE_BCA_NOTE}, as scipy.stats.bootstrap returns
 * NaN (DegenerateDataWarning) and R `boot.ci` stops ("All values of t are equal"). BCa when no
 * replicate, or every replicate, lies strictly
 * below the estimate: z0 is infinite and BCa undefined (R stops with "estimated adjustment 'w' is
 * infinite"); this falls back to the percentile interval and says so in `bca.fallback`. An
 * undefined acceleration is taken as 0 (see `jackknifeAcceleration`). As in R, nothing special
 * is done when 1 - a (z0 + z_j) <= 0 (only for |a| > ~0.25, i.e. a few extreme outliers in a tiny
 * sample), where the BCa transform stops being monotone. Replicates must be finite.
 *
 * @example
 * import { bootstrapInterval } from './bootstrap-interval.ts';
 * const reps = Float64Array.from({ length: 999 }, (_, i) => (i + 1) / 1000);
 * bootstrapInterval(reps, 0.5, { method: 'percentile', level: 0.95 }); // { lower: 0.025, upper: 0.975, ... }
 */
export function bootstrapInterval(
  replicates: Float64Array,
  estimate: number,
  options: BootstrapIntervalOptions,
): BootstrapInterval {
  const R = replicates.length;
  if (R === 0) throw dataError('stats.empty', 'bootstrapInterval requires at least 1 replicate, got empty');
  const sorted = Float64Array.from(replicates).sort();
  // Deviations are taken from the smallest replicate first (shifted data), so equal replicates
  // give exactly 0 and large offsets cost no precision.
  // Replicates so large that their squares overflow are scaled by 2^-k first (exact; f = 1 else).
  const f = 2 ** -overflowShift(sorted, R, 2 ** 500);
  const shift = sorted[0] * f;
  let mean = 0;
  for (let i = 0; i < R; i++) mean += sorted[i] * f - shift;
  mean /= R;
  let ss = 0;
  for (let i = 0; i < R; i++) {
    const d = sorted[i] * f - shift - mean;
    ss += d * d;
  }
  const se = R > 1 ? Math.sqrt(ss / (R - 1)) / f : NaN;
  const { level, method } = options;
  const aLo = (1 - level) / 2;
  const aHi = (1 + level) / 2;

  if (method === 'basic') {
    return {
      lower: 2 * estimate - normInterQuantile(sorted, aHi),
      upper: 2 * estimate - normInterQuantile(sorted, aLo),
      se,
      bca: null,
    };
  }
  const percentile = (): BootstrapInterval => ({
    lower: normInterQuantile(sorted, aLo),
    upper: normInterQuantile(sorted, aHi),
    se,
    bca: null,
  });
  if (method === 'percentile') return percentile();
  if (sorted[0] === sorted[R - 1]) {
    return { lower: NaN, upper: NaN, se, bca: { z0: NaN, acceleration: NaN, fallback: null, note: DEGENERATE_BCA_NOTE } };
  }

  // replicates strictly below the estimate (binary search in the sorted copy)
  let lo = 0;
  let hi = R;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < estimate) lo = mid + 1;
    else hi = mid;
  }
  const below = lo;
  const z0 = normalQuantile(below / R, 0, 1);
  if (!Number.isFinite(z0)) {
    return { ...percentile(), bca: { z0, acceleration: NaN, fallback: 'percentile' } };
  }
  const acc = options.acceleration;
  let a = typeof acc === 'function' ? acc() : (acc ?? 0);
  if (!Number.isFinite(a)) a = 0;
  const adjust = (alpha: number): number => {
    const z = normalQuantile(alpha, 0, 1);
    return normalCdf(z0 + (z0 + z) / (1 - a * (z0 + z)), 0, 1);
  };
  return {
    lower: normInterQuantile(sorted, adjust(aLo)),
    upper: normInterQuantile(sorted, adjust(aHi)),
    se,
    bca: { z0, acceleration: a, fallback: null },
  };
}

/**
 * The interval of a set of replicates, packaged as the `BootstrapResult` every resampler returns
 * (estimate, interval, se, the options and seed used, the generator and engine, and the
 * replicates themselves when asked for).
 */
export function toBootstrapResult(
  reps: Float64Array,
  estimate: number,
  opts: ParsedBootstrapOptions,
  run: { n: number; rng: BootstrapResult['rng']; engine: BootstrapResult['engine']; acceleration?: BootstrapIntervalOptions['acceleration'] },
): BootstrapResult {
  const ci = bootstrapInterval(reps, estimate, { method: opts.method, level: opts.level, acceleration: run.acceleration });
  const result: BootstrapResult = {
    estimate,
    lower: ci.lower,
    upper: ci.upper,
    level: opts.level,
    se: ci.se,
    method: opts.method,
    resamples: opts.resamples,
    seed: opts.seed,
    n: run.n,
    rng: run.rng,
    engine: run.engine,
    bca: ci.bca,
  };
  if (ci.bca?.note) result.note = ci.bca.note;
  if (opts.returnReplicates) result.replicates = reps;
  return result;
}
