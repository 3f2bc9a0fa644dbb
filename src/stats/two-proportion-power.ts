import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { dataError } from '../errors.ts';
import { checkLevel, checkProbability, show } from './arg-checks.ts';
import { solveIncreasing } from './solve-increasing.ts';

export interface TwoProportionDesign {
  p1: number;
  p2: number;
  /** Significance level (two-sided). Default 0.05. */
  alpha?: number;
}

/**
 * Power of the two-sided two-sample test of proportions with n observations per group, as R's
 * `power.prop.test(n, p1, p2, sig.level, strict = FALSE)`:
 *   power = Phi((sqrt(n) |p1 - p2| - z_{1-alpha/2} sqrt((p1 + p2)(q1 + q2) / 2)) / sqrt(p1 q1 + p2 q2)).
 *
 * Source: Fleiss, Levin & Paik (2003), "Statistical Methods for Rates and Proportions", 3rd ed.,
 * eq. 4.14 (without continuity correction), as coded in R's stats::power.prop.test. Values are
 * checked against R in tests/oracle/power.json.
 *
 * Degenerate cases: p1 = p2 gives alpha / 2 (R's strict = FALSE); p outside [0, 1], n <= 0,
 * alpha outside (0, 1) throw `dataError`.
 *
 * @example
 * twoProportionPower({ p1: 0.7, p2: 0.65, n: 1000 }); // 0.6655635076112323 (R: power.prop.test(1000, .7, .65)$power = 0.6655635076112)
 */
export function twoProportionPower(o: TwoProportionDesign & { n: number }): number {
  const fn = 'twoProportionPower';
  const { p1, p2, alpha } = check(fn, o);
  if (!(o.n > 0) || !Number.isFinite(o.n)) throw dataError('stats.badCount', `${fn} requires n > 0, got ${show(o.n)}`);
  return powerAt(p1, p2, o.n, alpha);
}

function check(fn: string, o: TwoProportionDesign) {
  return { p1: checkProbability(fn, 'p1', o.p1), p2: checkProbability(fn, 'p2', o.p2), alpha: checkLevel(fn, 'alpha', o.alpha ?? 0.05) };
}

function powerAt(p1: number, p2: number, n: number, alpha: number): number {
  const q1 = 1 - p1;
  const q2 = 1 - p2;
  const za = normalQuantile(1 - alpha / 2, 0, 1);
  const den = Math.sqrt(p1 * q1 + p2 * q2);
  if (den === 0) return p1 === p2 ? alpha / 2 : 1;
  return normalCdf((Math.sqrt(n) * Math.abs(p1 - p2) - za * Math.sqrt(((p1 + p2) * (q1 + q2)) / 2)) / den, 0, 1);
}

/**
 * Observations per group for the given power (R: `power.prop.test(p1 =, p2 =, power =)$n`,
 * fractional; round up for a design). null when p1 = p2 (no n reaches the power).
 */
export function twoProportionSampleSize(o: TwoProportionDesign & { power?: number }): number | null {
  const fn = 'twoProportionSampleSize';
  const { p1, p2, alpha } = check(fn, o);
  const power = checkLevel(fn, 'power', o.power ?? 0.8);
  if (p1 === p2) return null;
  return solveIncreasing((n) => powerAt(p1, p2, n, alpha) - power, 1e-6, 10);
}

/**
 * The smallest change |p2 - p1| from p1 in `direction` detected with `power` at n per group;
 * null when even p2 = 0 or 1 is not detected.
 */
export function twoProportionMde(o: { p1: number; n: number; alpha?: number; power?: number; direction?: 1 | -1 }): number | null {
  const fn = 'twoProportionMde';
  const p1 = checkProbability(fn, 'p1', o.p1);
  const alpha = checkLevel(fn, 'alpha', o.alpha ?? 0.05);
  const power = checkLevel(fn, 'power', o.power ?? 0.8);
  const dir = o.direction ?? -1;
  const room = dir < 0 ? p1 : 1 - p1;
  if (!(room > 0) || powerAt(p1, p1 + dir * room, o.n, alpha) < power) return null;
  return solveIncreasing((e) => powerAt(p1, p1 + dir * e, o.n, alpha) - power, 0, room, room);
}
