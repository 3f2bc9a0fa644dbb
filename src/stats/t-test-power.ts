import tQuantile from '@stdlib/stats-base-dists-t-quantile';
import { dataError } from '../errors.ts';
import { checkChoice, checkLevel, show } from './arg-checks.ts';
import { noncentralTCdf } from './noncentral-t-cdf.ts';
import { solveIncreasing } from './solve-increasing.ts';

export type TTestType = 'two.sample' | 'paired' | 'one.sample';

export interface TTestDesign {
  /** True difference in means. */
  delta: number;
  /** SD of the observations (two.sample), or of the per-pair differences (paired). */
  sd: number;
  alpha?: number;
  type?: TTestType;
}

/**
 * Power of the two-sided t-test, as R's `power.t.test(n, delta, sd, sig.level, type, strict =
 * FALSE)`: nu = (n - 1) * tsample, power = P(T'_{nu, ncp} > t_{1-alpha/2, nu}) with
 * ncp = sqrt(n / tsample) |delta| / sd, tsample = 2 for two samples (n per group) and 1 for paired
 * or one-sample (n pairs). The noncentral t is `noncentralTCdf` (AS 243).
 *
 * Source: R stats::power.t.test (R Core Team), after Cohen (1988), "Statistical Power Analysis
 * for the Behavioral Sciences", ch. 2; checked against R in tests/oracle/power.json.
 *
 * Degenerate cases: n must exceed 1 (nu > 0); sd > 0; alpha in (0, 1); otherwise `dataError`.
 *
 * @example
 * tTestPower({ n: 50, delta: 0.5, sd: 1 }); // R: power.t.test(50, .5, 1)$power = 0.6968...
 */
export function tTestPower(o: TTestDesign & { n: number }): number {
  const fn = 'tTestPower';
  const d = check(fn, o);
  if (!(o.n > 1) || !Number.isFinite(o.n)) throw dataError('stats.badCount', `${fn} requires n > 1, got ${show(o.n)}`);
  return powerAt(o.n, d);
}

function check(fn: string, o: TTestDesign) {
  if (!Number.isFinite(o.delta)) throw dataError('stats.badValue', `${fn} requires a finite delta, got ${show(o.delta)}`);
  if (!(o.sd > 0) || !Number.isFinite(o.sd)) throw dataError('stats.badValue', `${fn} requires sd > 0, got ${show(o.sd)}`);
  const type = checkChoice(fn, 'type', o.type ?? 'two.sample', ['two.sample', 'paired', 'one.sample'] as const);
  return { delta: Math.abs(o.delta), sd: o.sd, alpha: checkLevel(fn, 'alpha', o.alpha ?? 0.05), tsample: type === 'two.sample' ? 2 : 1 };
}

function powerAt(n: number, d: { delta: number; sd: number; alpha: number; tsample: number }): number {
  const nu = (n - 1) * d.tsample;
  const crit = tQuantile(1 - d.alpha / 2, nu);
  return 1 - noncentralTCdf(crit, nu, (Math.sqrt(n / d.tsample) * d.delta) / d.sd);
}

/** n per group (two.sample) or pairs for the given power (R: `power.t.test(delta =, sd =, power =)$n`, fractional); null for delta = 0. */
export function tTestSampleSize(o: TTestDesign & { power?: number }): number | null {
  const fn = 'tTestSampleSize';
  const d = check(fn, o);
  const power = checkLevel(fn, 'power', o.power ?? 0.8);
  if (d.delta === 0) return null;
  return solveIncreasing((n) => powerAt(n, d) - power, 2, 16);
}

/** The smallest |delta| detected with `power` at n (per group, or pairs). */
export function tTestMde(o: { n: number; sd: number; alpha?: number; power?: number; type?: TTestType }): number {
  const fn = 'tTestMde';
  const d = check(fn, { ...o, delta: 0 });
  const power = checkLevel(fn, 'power', o.power ?? 0.8);
  if (!(o.n > 1)) throw dataError('stats.badCount', `${fn} requires n > 1, got ${show(o.n)}`);
  return solveIncreasing((e) => powerAt(o.n, { ...d, delta: e }) - power, 0, d.sd, Infinity)!;
}
