import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { dataError } from '../errors.ts';
import { checkFinite, checkLevel, show } from './arg-checks.ts';

export interface NonInferiorityTest {
  /** (difference + margin) / se; null when se = 0. */
  z: number | null;
  /** One-sided p of H0: true difference <= -margin; null when se = 0. */
  p: number | null;
  /** Lower limit difference - z_{1 - alpha} se of the one-sided (1 - alpha) Wald bound. */
  lower: number;
  /** True when lower > -margin (equivalently p < alpha). */
  nonInferior: boolean;
}

/**
 * Non-inferiority z-test of a difference d = candidate - baseline (higher is better) at margin
 * m >= 0: H0: delta <= -m against H1: delta > -m. z = (d + m) / se, p = 1 - Phi(z); the candidate
 * is shown non-inferior when p < alpha, i.e. when the one-sided lower bound d - z_{1-alpha} se lies
 * above -m.
 *
 * Source: Chow, Shao & Wang (2008), "Sample Size Calculations in Clinical Research", 2nd ed.,
 * sec. 3.2.1 (test for non-inferiority, large-sample z); ICH E9 / CPMP "Points to consider on
 * switching between superiority and non-inferiority" (2000): with a two-sided 100(1 - 2 alpha)%
 * interval the same decision. `standoff compare --margin` calls it with alpha = (1 - level) / 2, so
 * the decision is "the lower limit of the two-sided level interval lies above -margin".
 *
 * Degenerate cases: se = 0 gives z and p null and nonInferior = d > -m. A negative or non-finite
 * margin, a negative se or alpha outside (0, 1) throw `dataError`.
 *
 * @example
 * nonInferiorityTest({ difference: -0.01, se: 0.01, margin: 0.02, alpha: 0.025 });
 * // z = 1, p = 0.15865525393145707, lower = -0.0295996..., nonInferior = false
 */
export function nonInferiorityTest(o: { difference: number; se: number; margin: number; alpha?: number }): NonInferiorityTest {
  const fn = 'nonInferiorityTest';
  const d = checkFinite(fn, 'difference', o.difference);
  const se = checkFinite(fn, 'se', o.se);
  const m = checkFinite(fn, 'margin', o.margin);
  if (se < 0) throw dataError('stats.badValue', `${fn} requires se >= 0, got ${show(se)}`);
  if (m < 0) throw dataError('stats.badValue', `${fn} requires margin >= 0, got ${show(m)}`);
  const alpha = checkLevel(fn, 'alpha', o.alpha ?? 0.025);
  const lower = d - normalQuantile(1 - alpha, 0, 1) * se;
  if (se === 0) return { z: null, p: null, lower: d, nonInferior: d > -m };
  const z = (d + m) / se;
  const p = normalCdf(-z, 0, 1);
  return { z, p, lower, nonInferior: p < alpha };
}
