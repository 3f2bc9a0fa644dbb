import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { quantile } from './quantile.ts';
import { createRng } from './rng.ts';

/** Ranks 1..n with ties given their average rank (R `rank(ties.method = "average")`). */
function averageRanks(v: readonly number[]): number[] {
  const idx = v.map((_, i) => i).sort((a, b) => v[a] - v[b]);
  const r = new Array<number>(v.length);
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && v[idx[j + 1]] === v[idx[i]]) j++;
    const avg = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

function pearson(x: readonly number[], y: readonly number[]): number | null {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

/**
 * Spearman's rank correlation: the Pearson correlation of the average ranks (ties share their
 * mean rank), as R `cor(x, y, method = "spearman")` and scipy `spearmanr`. Null when either
 * variable is constant (the correlation is undefined).
 *
 * Source: Spearman (1904); R 4.x `cor` with `method = "spearman"`.
 *
 * Throws `dataError` ('stats.badShape') unless x and y are equal-length arrays of at least two finite numbers.
 *
 * @example spearmanCorrelation([1, 2, 3], [10, 30, 20]) // 0.5
 */
export function spearmanCorrelation(x: readonly number[], y: readonly number[]): number | null {
  const fn = 'spearmanCorrelation';
  if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length || x.length < 2) {
    throw dataError('stats.badShape', `${fn} requires two arrays of the same length >= 2, got ${show(x)} and ${show(y)}`);
  }
  for (const v of [...x, ...y]) if (typeof v !== 'number' || !Number.isFinite(v)) throw dataError('stats.badShape', `${fn} requires finite numbers, got ${show(v)}`);
  return pearson(averageRanks(x), averageRanks(y));
}

export interface SpearmanBootstrapResult {
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  seed: number;
  resamples: number;
  /** Resamples where a variable was constant (the correlation undefined): left out of the percentiles. */
  undefinedResamples: number;
  method: 'percentile-bootstrap-over-pairs';
}

/**
 * Percentile bootstrap interval of Spearman's correlation: resample the (x, y) pairs with
 * replacement (each pair a unit, e.g. a subject), recompute, take type-7 quantiles of the defined
 * replicates (Efron & Tibshirani 1993, ch. 13). With few pairs the interval is wide and coarse (the
 * replicate distribution has few distinct values): it is an honest statement of how little a
 * handful of units can say.
 */
export function spearmanBootstrap(x: readonly number[], y: readonly number[], o: { seed: number; resamples: number; level: number }): SpearmanBootstrapResult {
  const estimate = spearmanCorrelation(x, y);
  const n = x.length;
  const rng = createRng(o.seed);
  const reps: number[] = [];
  let undef = 0;
  const bx = new Array<number>(n);
  const by = new Array<number>(n);
  for (let b = 0; b < o.resamples; b++) {
    for (let i = 0; i < n; i++) {
      const j = rng.int(n);
      bx[i] = x[j];
      by[i] = y[j];
    }
    const r = pearson(averageRanks(bx), averageRanks(by));
    if (r === null) undef++;
    else reps.push(r);
  }
  const a = (1 - o.level) / 2;
  const has = reps.length > 0 && estimate !== null;
  return { estimate, lower: has ? quantile(reps, a) : null, upper: has ? quantile(reps, 1 - a) : null, level: o.level, seed: o.seed, resamples: o.resamples, undefinedResamples: undef, method: 'percentile-bootstrap-over-pairs' };
}
