/**
 * The work bound of `standoff ci bootstrap` and `ci paired` (#28): a resample that draws units
 * (clusters, or observations) by index costs one draw per unit, so R resamples over G units cost
 * R x G draws (10,000 x 500,000 = 5e9 at a 1e7-episode store). Up to {@link RESAMPLE_DRAWS} draws
 * the commands run the resamples asked for; above, `floor(budget / G)` of them, at least
 * {@link MIN_RESAMPLES}, and the result says so (`resamples_requested`) with the Monte-Carlo
 * standard error of each interval end. The resamples are drawn in order from one seeded stream
 * (the general resampler: in fixed blocks of 64 that depend only on seed and block), so the B run
 * are the first B of an unbounded run with the same seed; only the quantiles read from them differ.
 *
 * The exact multinomial path (0/1 scores, and any data with few distinct cluster totals) does not
 * draw units: one resample costs a few binomial draws whatever G is, so it is not bounded.
 *
 *   boundedResamples(10_000, 500_000)        // 1,000 (the minimum; 5e8 draws)
 *   boundedResamples(10_000, 50_000)         // 4,000
 *   boundedResamples(10_000, 18)             // 10,000 (under the budget: unchanged)
 */
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { usageError } from '../errors.ts';
import { autoUsesMultinomial, meanUnits, type ClusterId } from '../stats/index.ts';
import { clusterTotals } from '../stats/cluster-totals.ts';

/** Draws (resamples x units drawn per resample) a command spends at most, above the minimum resamples. */
export const RESAMPLE_DRAWS = 200_000_000;
/** The fewest resamples a bounded interval runs (when fewer were asked for, those). */
export const MIN_RESAMPLES = 1000;
/** The environment variable that sets the budget (tests; or a larger one for the full resamples). */
export const RESAMPLE_DRAWS_ENV = 'STANDOFF_RESAMPLE_DRAWS';

/**
 * The draw budget: `budget` when given (`--max-draws`), else `STANDOFF_RESAMPLE_DRAWS` when set,
 * else {@link RESAMPLE_DRAWS}. Either must be a positive integer (usage error otherwise).
 */
export function drawBudget(budget?: number): number {
  const env = process.env[RESAMPLE_DRAWS_ENV];
  const b = budget ?? (env !== undefined && env.trim() !== '' ? Number(env) : RESAMPLE_DRAWS);
  const what = budget !== undefined ? '--max-draws' : RESAMPLE_DRAWS_ENV;
  if (!Number.isSafeInteger(b) || b < 1) throw usageError('ci.badMaxDraws', `${what} must be a positive integer, got ${budget ?? env}`);
  return b;
}

/** The resamples to run over `units` units when `requested` were asked for (see the file comment). */
export function boundedResamples(requested: number, units: number, budget = RESAMPLE_DRAWS): number {
  if (units * requested <= budget) return requested;
  return Math.min(requested, Math.max(MIN_RESAMPLES, Math.floor(budget / units)));
}

/**
 * Monte-Carlo standard error of a bootstrap quantile at tail probability p from B replicates,
 * with the bootstrap distribution taken as normal with SD `se`: sqrt(p (1 - p) / B) / phi(z_p) x se
 * (the asymptotic SE of a sample quantile, Efron & Tibshirani 1993 sec. 19.3). Null when se is not finite.
 */
export function quantileMcSe(p: number, resamples: number, se: number | null): number | null {
  if (se === null || !Number.isFinite(se) || !(p > 0 && p < 1)) return null;
  const z = normalQuantile(p, 0, 1);
  const density = Math.exp((-z * z) / 2) / Math.sqrt(2 * Math.PI);
  return (Math.sqrt((p * (1 - p)) / resamples) / density) * se;
}

/**
 * The tail probabilities the interval's ends are read at: (1 -+ level) / 2 for percentile and
 * basic; for BCa the adjusted levels Phi(z0 + (z0 + z) / (1 - a (z0 + z))) (Efron & Tibshirani
 * 1993 eq. 14.10) when BCa did not fall back.
 */
export function endTails(level: number, method: string, bca?: { z0: number; acceleration: number; fallback: string | null } | null): [number, number] {
  const lo = (1 - level) / 2;
  if (method !== 'bca' || !bca || bca.fallback !== null || !Number.isFinite(bca.z0)) return [lo, 1 - lo];
  const a = Number.isFinite(bca.acceleration) ? bca.acceleration : 0;
  const adj = (z: number) => {
    const t = bca.z0 + z;
    return normalCdf(bca.z0 + t / (1 - a * t), 0, 1);
  };
  return [adj(normalQuantile(lo, 0, 1)), adj(normalQuantile(1 - lo, 0, 1))];
}

/** What a bounded interval adds to its result (nothing when the bound did not cut the resamples). */
export interface ResampleBound {
  /** The resamples asked for; set only when fewer (`resamples`) were run. */
  resamples_requested?: number;
  /** Monte-Carlo standard errors of the interval's lower and upper end (normal approximation); set with `resamples_requested`. */
  mc_se_lower?: number | null;
  mc_se_upper?: number | null;
}

/** The fields and the note of an interval whose resamples the bound cut from `requested` to `used` over `units` units. */
export function boundFields(
  r: { level: number; method: string; se: number | null; bca?: { z0: number; acceleration: number; fallback: string | null } | null },
  requested: number,
  used: number,
  units: number,
  budget: number,
): { fields: ResampleBound; note: string } | null {
  if (used >= requested) return null;
  const [pl, pu] = endTails(r.level, r.method, r.bca);
  const lower = quantileMcSe(pl, used, r.se);
  const upper = quantileMcSe(pu, used, r.se);
  const fmt = (x: number | null) => (x === null ? 'not computable' : x.toPrecision(2));
  const note =
    `ran ${used.toLocaleString('en-US')} of the ${requested.toLocaleString('en-US')} resamples asked for: ` +
    `${requested.toLocaleString('en-US')} x ${units.toLocaleString('en-US')} units drawn would exceed the draw budget of ${budget.toLocaleString('en-US')} ` +
    `(--max-draws); Monte-Carlo standard error of the lower end ${fmt(lower)}, of the upper end ${fmt(upper)}`;
  return { fields: { resamples_requested: requested, mc_se_lower: lower, mc_se_upper: upper }, note };
}

/**
 * The units one resample of a mean draws by index, the bound's G: the clusters with cluster ids,
 * else the observations; 0 when the mean's exact multinomial path applies (the engine 'auto'
 * picks for these data: it draws no units). Any other statistic (the general resampler) draws
 * the clusters and weighs every observation: clusters + observations.
 */
export function drawUnits(values: Float64Array, clusters: ArrayLike<ClusterId> | null, isMean: boolean): number {
  if (!isMean) return values.length + (clusters ? new Set(Array.from(clusters)).size : 0);
  if (clusters) {
    const t = clusterTotals(values, clusters, 'clusterBootstrap');
    return autoUsesMultinomial({ num: t.sums, den: t.counts, divisor: 1 }) ? 0 : t.clusters;
  }
  return values.length >= 2 && autoUsesMultinomial(meanUnits(values)) ? 0 : values.length;
}
