import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { dataError } from '../errors.ts';
import { checkChoice, checkFinite, checkLevel, checkOptions, show } from './arg-checks.ts';

/**
 * How spread out the per-item differences are, in one of two forms:
 *  - `{ n, sdDiff }`: n items, SD of the per-item difference a - b;
 *  - `{ n, seA, seB, correlation, seN? }`: standard errors of the two models' mean scores measured
 *    on `seN` items (default `n`, e.g. from a previous run of the same eval) and the correlation
 *    of their per-item scores; they are rescaled to n items.
 */
export type PairedSpread =
  | { n: number; sdDiff: number }
  | { n: number; seA: number; seB: number; correlation: number; seN?: number };

export type PowerAlternative = 'two-sided' | 'larger';

export type PairedPowerOptions = PairedSpread & {
  /** True difference mean(a - b) to detect. */
  effect: number;
  /** Significance level. Default 0.05. */
  alpha?: number;
  /** 'two-sided' (default) or 'larger' (one-sided test of a - b > 0). */
  alternative?: PowerAlternative;
};

/**
 * Power of the paired z-test of mean(a - b) = 0 when the true difference is `effect`.
 *
 * Source: Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640), section on power
 * analysis, with the paired-difference variance Var(a) + Var(b) - 2 Cov(a, b) = sdDiff^2; the
 * power of the two-sided level-alpha z-test (counting both rejection regions) is
 *   Phi(effect / se - z_{1 - alpha/2}) + Phi(-effect / se - z_{1 - alpha/2}),  se = sdDiff / sqrt(n),
 * and Phi(effect / se - z_{1 - alpha}) one-sided. This is statsmodels' `NormalIndPower().power(
 * effect_size = effect / sdDiff, nobs1 = n, alpha, ratio = 0)` (ratio 0 = one-sample test of
 * the differences), checked in tests/stats/power.test.ts. The normal approximation ignores the
 * t distribution's heavier tails (statsmodels `TTestPower`), a difference below 0.01 in power
 * once n >= 50.
 *
 * With seA, seB and correlation rho measured on seN items: sdDiff = sqrt(seN) *
 * sqrt(seA^2 + seB^2 - 2 rho seA seB).
 *
 * Degenerate cases: sdDiff = 0 gives power 1 for any effect != 0 (alpha at effect 0). n must be
 * > 0; sdDiff, seA, seB >= 0; correlation in [-1, 1]; alpha in (0, 1); otherwise `dataError`.
 *
 * @example
 * import { pairedPower } from './paired-power.ts';
 * pairedPower({ n: 500, sdDiff: 0.4, effect: 0.05 }); // 0.7981761964601347 (statsmodels: 0.7981761964601345)
 */
export function pairedPower(options: PairedPowerOptions): number {
  const fn = 'pairedPower';
  const opts = checkOptions(fn, options);
  const se = pairedSeDiff(fn, opts);
  const effect = checkFinite(fn, 'effect', opts.effect);
  const alpha = checkLevel(fn, 'alpha', opts.alpha ?? 0.05);
  const alternative = checkChoice(fn, 'alternative', opts.alternative ?? 'two-sided', ['two-sided', 'larger'] as const);
  return powerAt(effect, se, alpha, alternative);
}

/** Power for a standard error `se` of the difference (no checks). */
export function powerAt(effect: number, se: number, alpha: number, alternative: PowerAlternative): number {
  if (alternative === 'larger') {
    const crit = normalQuantile(1 - alpha, 0, 1);
    if (se === 0) return effect > 0 ? 1 : effect === 0 ? alpha : 0;
    return normalCdf(effect / se - crit, 0, 1);
  }
  const crit = normalQuantile(1 - alpha / 2, 0, 1);
  if (se === 0) return effect !== 0 ? 1 : alpha;
  return normalCdf(effect / se - crit, 0, 1) + normalCdf(-effect / se - crit, 0, 1);
}

/** Standard error of mean(a - b) at n items from either form of `PairedSpread`. */
export function pairedSeDiff(fn: string, opts: PairedSpread): number {
  const n = (opts as { n?: unknown }).n;
  if (typeof n !== 'number' || !(n > 0) || !Number.isFinite(n)) {
    throw dataError('stats.badCount', `${fn} requires n to be a positive number, got ${show(n)}`);
  }
  if ('sdDiff' in opts && opts.sdDiff !== undefined) {
    const sd = opts.sdDiff;
    if (typeof sd !== 'number' || !(sd >= 0) || !Number.isFinite(sd)) {
      throw dataError('stats.badValue', `${fn} requires sdDiff to be a finite number >= 0, got ${show(sd)}`);
    }
    return sd / Math.sqrt(n);
  }
  const o = opts as { seA?: unknown; seB?: unknown; correlation?: unknown; seN?: unknown };
  if (o.seA === undefined && o.seB === undefined) {
    throw dataError('stats.badOption', `${fn} requires either sdDiff or seA, seB and correlation, got neither`);
  }
  for (const [name, v] of [['seA', o.seA], ['seB', o.seB]] as const) {
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) {
      throw dataError('stats.badValue', `${fn} requires ${name} to be a finite number >= 0, got ${show(v)}`);
    }
  }
  const rho = o.correlation;
  if (typeof rho !== 'number' || !(rho >= -1 && rho <= 1)) {
    throw dataError('stats.badValue', `${fn} requires correlation to be a number in [-1, 1], got ${show(rho)}`);
  }
  const seN = o.seN ?? n;
  if (typeof seN !== 'number' || !(seN > 0) || !Number.isFinite(seN)) {
    throw dataError('stats.badCount', `${fn} requires seN to be a positive number, got ${show(seN)}`);
  }
  const seA = o.seA as number;
  const seB = o.seB as number;
  const v = Math.max(0, seA * seA + seB * seB - 2 * rho * seA * seB);
  return Math.sqrt((v * seN) / n);
}
