import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/** Input check shared by `holm` and `benjaminiHochberg` (not a statistic itself). */
export function checkPValues(fn: string, pValues: unknown): (number | null)[] {
  if (!Array.isArray(pValues)) {
    throw dataError('stats.badShape', `${fn} requires an array of p-values, got ${show(pValues)}`);
  }
  return pValues.map((v: unknown, i: number) => {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) {
      throw dataError('stats.badValue', `${fn} requires p-values in [0, 1] or null, got ${show(v)} at index ${i}`);
    }
    return v;
  });
}
