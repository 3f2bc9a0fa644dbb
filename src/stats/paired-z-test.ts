import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { dataError } from '../errors.ts';
import { checkFinite, checkLevel, checkOptions, show } from './arg-checks.ts';
import { minimumDetectableEffect } from './minimum-detectable-effect.ts';

export interface PairedZTestOptions {
  /** The estimated difference mean(a - b). */
  difference: number;
  /**
   * Its standard error: the paired SE (`pairedStandardError`) when pairs are independent, or the
   * cluster-robust SE (`clusteredPairedStandardError`) when pairs repeat within clusters.
   */
  se: number;
  /** Significance level of the test and of the MDE. Default 0.05. */
  alpha?: number;
  /** Power at which the minimum detectable effect is computed. Default 0.8. */
  power?: number;
}

export interface PairedZTest {
  difference: number;
  se: number;
  /** difference / se; null when se = 0 (no spread: the test is undefined). */
  z: number | null;
  /** Two-sided p-value 2 (1 - Phi(|z|)); null when se = 0. */
  p: number | null;
  /** Smallest true difference the two-sided level-alpha test detects with `power`; null when se = 0. */
  mde: number | null;
  alpha: number;
  power: number;
}

/**
 * Two-sided z-test of a paired difference against 0, with the minimum detectable effect at the
 * same standard error: the test behind every pairwise comparison in the report and `standoff ci
 * paired`, so both compute p and MDE one way.
 *
 * Source: Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), sections on paired
 * differences and power: z = d / se, p = 2 (1 - Phi(|z|)); MDE solves power(effect) = `power` for
 * the two-sided test counting both rejection regions (`minimumDetectableEffect` with n = 1 and
 * sdDiff = se), ~ (z_{1 - alpha/2} + z_{power}) se. scipy: `2 * scipy.stats.norm.sf(abs(d / se))`;
 * statsmodels: `NormalIndPower().solve_power(None, nobs1=1, alpha, power, ratio=0) * se`
 * (checked in tests/stats/paired-z-test.test.ts and tests/oracle/clustered-paired.json).
 *
 * Degenerate cases: se = 0 (every paired difference identical, or every cluster the same) gives z,
 * p and mde null: with no spread the normal approximation says nothing (the caller reports why).
 * Non-finite difference or se, se < 0, alpha outside (0, 1) or power not in (alpha, 1) throw
 * `dataError`.
 *
 * @example
 * import { pairedZTest } from './paired-z-test.ts';
 * const t = pairedZTest({ difference: 0.1, se: 0.04 });
 * // t.z = 2.5, t.p = 0.012419330651552318, t.mde = 0.11206...  (scipy: 2 * norm.sf(2.5) = 0.01241933065155227)
 */
export function pairedZTest(options: PairedZTestOptions): PairedZTest {
  const fn = 'pairedZTest';
  const opts = checkOptions(fn, options);
  const difference = checkFinite(fn, 'difference', opts.difference);
  const se = checkFinite(fn, 'se', opts.se);
  if (se < 0) throw dataError('stats.badValue', `${fn} requires se >= 0, got ${show(se)}`);
  const alpha = checkLevel(fn, 'alpha', opts.alpha ?? 0.05);
  const power = checkLevel(fn, 'power', opts.power ?? 0.8);
  if (!(power > alpha)) throw dataError('stats.badValue', `${fn} requires power to exceed alpha (${alpha}), got ${show(power)}`);
  if (se === 0) return { difference, se, z: null, p: null, mde: null, alpha, power };
  const z = difference / se;
  const p = Math.min(1, 2 * normalCdf(-Math.abs(z), 0, 1));
  const mde = minimumDetectableEffect({ n: 1, sdDiff: se, alpha, power });
  return { difference, se, z, p, mde, alpha, power };
}
