import { dataError } from '../errors.ts';
import { checkChoice, checkCount, checkLevel, checkOptions, show } from './arg-checks.ts';

/**
 * Types, option parsing and input checks shared by the bootstrap functions (`bootstrap`,
 * `bootstrapMean`, `pairedBootstrap`, `clusterBootstrap`) and the analytic standard errors. Not a
 * statistic itself.
 */

export type BootstrapMethod = 'percentile' | 'bca' | 'basic';
export const BOOTSTRAP_METHODS: readonly BootstrapMethod[] = ['percentile', 'bca', 'basic'];

export interface BootstrapOptions {
  /** Number of resamples, an integer >= 1. Default 10,000. */
  resamples?: number;
  /** Confidence level, strictly between 0 and 1. Default 0.95. */
  level?: number;
  /** Interval method. Default 'percentile'. */
  method?: BootstrapMethod;
  /** Seed, an integer in [0, 2^32 - 1]. Required: every result records its seed. */
  seed: number;
  /** Also return the replicates (in the order drawn). Default false. */
  returnReplicates?: boolean;
}

/** BCa diagnostics (null for the other methods). */
export interface BcaDetails {
  /** Bias correction z0 = qnorm(#{replicates < estimate} / resamples); +-Infinity on fallback. */
  z0: number;
  /** Jackknife acceleration a (0 when the jackknife values do not vary); NaN on fallback. */
  acceleration: number;
  /** 'percentile' when z0 was infinite and the percentile interval was reported instead. */
  fallback: 'percentile' | null;
  /** Set when BCa is undefined and no interval is given (degenerate data: every replicate equal). */
  note?: string;
}

export interface BootstrapResult {
  /** The statistic on the data as given. */
  estimate: number;
  lower: number;
  upper: number;
  level: number;
  /** Standard deviation of the replicates, n - 1 denominator (as R `boot` prints); NaN if resamples = 1. */
  se: number;
  method: BootstrapMethod;
  resamples: number;
  seed: number;
  /** Number of observations (items; for `pairedBootstrap` pairs). */
  n: number;
  /** The generator that produced the resamples. */
  rng: 'mt19937' | 'xoshiro128**';
  /**
   * 'resample': indices drawn with replacement from one stream; 'multinomial': exact counts over
   * distinct values; 'resample-blocks': `bootstrapStatistic`'s blocks of 64 resamples, block b
   * drawn from the seed's stream jumped 4b to 4b + 3 times, four lanes (the same result on any
   * number of threads).
   */
  engine: 'resample' | 'multinomial' | 'resample-blocks';
  bca: BcaDetails | null;
  /** Why `lower` and `upper` are NaN, when they are (BCa on degenerate data). */
  note?: string;
  /** Present when `returnReplicates` was set. */
  replicates?: Float64Array;
}

export interface ParsedBootstrapOptions {
  resamples: number;
  level: number;
  method: BootstrapMethod;
  seed: number;
  returnReplicates: boolean;
}

/** Most resamples any procedure draws (`--resamples` of every command, notebook blocks, the report). */
export const MAX_RESAMPLES = 10_000_000;

export function parseBootstrapOptions(fn: string, options: BootstrapOptions | undefined): ParsedBootstrapOptions {
  const opts = checkOptions(fn, options);
  const resamples = checkCount(fn, 'resamples', opts.resamples ?? 10_000, 1);
  if (resamples > MAX_RESAMPLES) throw dataError('stats.badCount', `${fn} requires resamples <= ${MAX_RESAMPLES}, got ${resamples}`);
  const level = checkLevel(fn, 'level', opts.level ?? 0.95);
  const method = checkChoice(fn, 'method', opts.method ?? 'percentile', BOOTSTRAP_METHODS);
  const seed = checkSeed(fn, opts.seed);
  return { resamples, level, method, seed, returnReplicates: opts.returnReplicates === true };
}

export function checkSeed(fn: string, seed: unknown): number {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw dataError('stats.badSeed', `${fn} requires seed to be an integer in [0, 4294967295], got ${show(seed)}`);
  }
  return seed;
}

/**
 * Copies numeric input into a Float64Array, checking it is an array (or Float64Array) of finite
 * numbers with at least `min` elements.
 */
export function toFiniteArray(fn: string, name: string, values: unknown, min: number): Float64Array {
  if (!(values instanceof Float64Array) && !Array.isArray(values)) {
    throw dataError('stats.badShape', `${fn} requires ${name} to be an array of numbers or a Float64Array, got ${show(values)}`);
  }
  const n = values.length;
  if (n < min) {
    const what = n === 0 ? 'empty' : `${n} value${n === 1 ? '' : 's'}`;
    throw dataError(
      n === 0 ? 'stats.empty' : 'stats.tooFewValues',
      `${fn} requires ${name} to hold at least ${min} values, got ${what}`,
    );
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = (values as ArrayLike<unknown>)[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw dataError('stats.badValue', `${fn} requires ${name}[${i}] to be a finite number, got ${show(v)}`);
    }
    out[i] = v;
  }
  return out;
}

export function checkSameLength(fn: string, nameA: string, a: ArrayLike<unknown>, nameB: string, b: ArrayLike<unknown>): void {
  if (a.length !== b.length) {
    throw dataError(
      'stats.lengthMismatch',
      `${fn} requires ${nameA} and ${nameB} to have the same length, got ${a.length} and ${b.length}`,
    );
  }
}

/** Mean by plain summation in index order. */
export function meanOf(x: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return s / x.length;
}

/**
 * Sum of squared deviations from the mean, computed on values shifted by x[0] (two passes), so
 * identical values give exactly 0 and a large common offset costs no precision.
 */
export function sumSquaredDeviations(x: Float64Array): number {
  const n = x.length;
  if (n === 0) return 0;
  const shift = x[0];
  let m = 0;
  for (let i = 0; i < n; i++) m += x[i] - shift;
  m /= n;
  let s = 0;
  for (let i = 0; i < n; i++) {
    const d = x[i] - shift - m;
    s += d * d;
  }
  return s;
}

/** Standard deviation of x with the given delta degrees of freedom; NaN if length <= ddof. */
export function sdOf(x: Float64Array, ddof: number): number {
  const n = x.length;
  if (n <= ddof) return NaN;
  return Math.sqrt(sumSquaredDeviations(x) / (n - ddof));
}
