import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * Design effect of clusters of m correlated observations with intraclass correlation icc:
 * DE = 1 + (m - 1) icc, the factor by which clustering inflates the variance of a mean over
 * independent observations. An item run for m epochs is a cluster: n items give n m / DE
 * effective observations, so a design for n_indep independent observations needs
 * n_indep DE / m items.
 *
 * Source: Kish (1965), "Survey Sampling", sec. 5.4; Donner & Klar (2000), "Design and Analysis of
 * Cluster Randomization Trials in Health Research", ch. 5 (sample size with the variance
 * inflation factor).
 *
 * Degenerate cases: m must be >= 1 and icc in [-1 / (m - 1), 1] (icc in [0, 1] for m = 1),
 * else `dataError`.
 *
 * @example
 * designEffect(2, 0.15); // 1.15
 */
export function designEffect(m: number, icc: number): number {
  if (!(m >= 1) || !Number.isFinite(m)) throw dataError('stats.badCount', `designEffect requires a cluster size >= 1, got ${show(m)}`);
  const lo = m > 1 ? -1 / (m - 1) : 0;
  if (!(icc >= lo && icc <= 1)) throw dataError('stats.badValue', `designEffect requires icc in [${lo}, 1], got ${show(icc)}`);
  return 1 + (m - 1) * icc;
}
