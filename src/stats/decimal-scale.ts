/**
 * The smallest number of decimal places d (0..9) such that every value is the double nearest to
 * a decimal with d places, i.e. `Math.round(v * 10^d) / 10^d === v` for all v; -1 if there is none.
 *
 * Why: bootstrap replicates of a mean are compared with the estimate for exact equality (BCa's
 * z0 counts replicates strictly below it). Summing doubles such as 0.1 + 0.2 in different orders
 * gives results one ulp apart, so a resample whose mean equals the estimate in exact arithmetic
 * can land on either side of it. Scores written with few decimals (0/1, Likert, 0.5 steps, 0.25
 * rubric points) can instead be summed as exact integers round(v * 10^d) and divided once, so the
 * replicate and the estimate are the same correctly-rounded double whenever the exact means agree.
 * Source: IEEE 754 correct rounding of integer division; the test is exact (no tolerance).
 *
 * Degenerate cases: empty input -> 0. Non-finite values -> -1.
 *
 * @example
 * import { decimalScale } from './decimal-scale.ts';
 * decimalScale([0, 1, 1]);       // 0
 * decimalScale([0.25, 0.5, 1]);  // 2
 * decimalScale([Math.PI]);       // -1
 */
export function decimalScale(values: ArrayLike<number>): number {
  let d = 0;
  let p = 1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) return -1;
    while (Math.round(v * p) / p !== v) {
      d++;
      if (d > 9) return -1;
      p *= 10;
    }
  }
  return d;
}

/** `Math.round(v * 10^d)` for each value (exact integers when `decimalScale(values) <= d`). */
export function toScaledIntegers(values: ArrayLike<number>, d: number): Float64Array {
  const p = 10 ** d;
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.round(values[i] * p);
  return out;
}

/** Largest absolute value (0 for empty input). */
export function maxAbs(values: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]);
    if (a > m) m = a;
  }
  return m;
}
