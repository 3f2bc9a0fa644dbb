import { dataError } from '../errors.ts';

/**
 * Argument checks shared by the functions in `src/stats` (not a statistic itself). Each check
 * throws `dataError('stats.<code>', ...)` with a lower-case, one-line message naming the function,
 * the argument and the offending value, e.g.
 * `clopperPearson requires successes <= n, got 12 > 10`.
 */

/** Formats a value for an error message (short, one line). */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) {
    return String(value);
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value;
}

/** A non-negative integer count (`successes`, `n`, `bins`...). */
export function checkCount(fn: string, name: string, value: unknown, min = 0): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw dataError(
      'stats.badCount',
      `${fn} requires ${name} to be an integer >= ${min}, got ${show(value)}`,
    );
  }
  return value;
}

/** A confidence level strictly between 0 and 1. */
export function checkLevel(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value < 1)) {
    throw dataError('stats.badLevel', `${fn} requires ${name} strictly between 0 and 1, got ${show(value)}`);
  }
  return value;
}

/** A finite number. */
export function checkFinite(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw dataError('stats.badValue', `${fn} requires ${name} to be a finite number, got ${show(value)}`);
  }
  return value;
}

/** A probability in [0, 1]. */
export function checkProbability(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw dataError('stats.badValue', `${fn} requires ${name} to be a number in [0, 1], got ${show(value)}`);
  }
  return value;
}

/** An array (any element type). */
export function checkArray<T>(fn: string, name: string, value: unknown): readonly T[] {
  if (!Array.isArray(value)) {
    throw dataError('stats.badShape', `${fn} requires ${name} to be an array, got ${show(value)}`);
  }
  return value as readonly T[];
}

/** One of a fixed set of string options. */
export function checkChoice<T extends string>(fn: string, name: string, value: unknown, choices: readonly T[]): T {
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw dataError(
      'stats.badOption',
      `${fn} requires ${name} to be one of ${choices.map((c) => `'${c}'`).join(', ')}, got ${show(value)}`,
    );
  }
  return value as T;
}

/** An object (for options bags); `undefined` becomes `{}`. */
export function checkOptions<T extends object>(fn: string, value: T | undefined): T {
  if (value === undefined) return {} as T;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw dataError('stats.badOption', `${fn} requires its options to be an object, got ${show(value)}`);
  }
  return value;
}

/** One-sided or two-sided interval (shared by the binomial intervals). */
export type Sided = 'two' | 'upper' | 'lower';

/**
 * The argument checks every binomial interval makes: non-negative integer counts with
 * successes <= n, a level in (0, 1), and a `sided` of two, upper or lower.
 */
export function checkBinomialArgs(
  fn: string,
  successes: unknown,
  n: unknown,
  options: { level?: number; sided?: Sided } | undefined,
): { level: number; sided: Sided } {
  const opts = checkOptions(fn, options);
  checkCount(fn, 'successes', successes);
  checkCount(fn, 'n', n);
  if ((successes as number) > (n as number)) {
    throw dataError('stats.badCount', `${fn} requires successes <= n, got ${successes} > ${n}`);
  }
  const level = checkLevel(fn, 'level', opts.level ?? 0.95);
  const sided = checkChoice<Sided>(fn, 'sided', opts.sided ?? 'two', ['two', 'upper', 'lower']);
  return { level, sided };
}

/**
 * Optional per-item weights (multiplicities): absent -> null; else one non-negative integer per
 * item (`n` of them), so a weighted statistic equals the statistic of the expanded data.
 */
export function checkWeights(fn: string, name: string, weights: ArrayLike<number> | undefined, n: number): ArrayLike<number> | null {
  if (weights === undefined) return null;
  if (weights === null || typeof weights !== 'object' || weights.length !== n) {
    throw dataError('stats.badShape', `${fn} requires ${name} to hold one weight per item (${n}), got ${show(weights)}`);
  }
  for (let i = 0; i < n; i++) {
    const w = weights[i];
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 0) throw dataError('stats.badCount', `${fn} requires ${name}[${i}] to be an integer >= 0, got ${show(w)}`);
  }
  return weights;
}
