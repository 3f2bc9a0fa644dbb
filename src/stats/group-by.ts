import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * Groups rows by a key, keeping the order in which keys first appear and the rows' order within
 * each group. A helper for statistics that take already-grouped arrays (e.g. `probeOutcomes`).
 *
 * Source: none needed (a partition of the rows); stated so the group order is deterministic.
 *
 * Degenerate cases: no rows -> an empty Map. The key may be a field name (its value must be a
 * string, number or boolean, converted with `String`) or a function returning a string.
 *
 * Throws `dataError('stats.badKey')` when a row's key is missing (null or undefined) or not a
 * string, number or boolean, naming the row index; ('stats.badShape') for a non-array.
 *
 * @example
 * import { groupBy } from './group-by.ts';
 * const g = groupBy([{ m: 'a', x: 1 }, { m: 'b', x: 2 }, { m: 'a', x: 3 }], 'm');
 * // Map { 'a' => [{m:'a',x:1}, {m:'a',x:3}], 'b' => [{m:'b',x:2}] }
 */
export function groupBy<T extends object>(rows: readonly T[], key: keyof T | ((row: T) => string)): Map<string, T[]> {
  if (!Array.isArray(rows)) throw dataError('stats.badShape', `groupBy requires an array of rows, got ${show(rows)}`);
  const out = new Map<string, T[]>();
  rows.forEach((row, i) => {
    const raw: unknown = typeof key === 'function' ? key(row) : row?.[key];
    if (!(typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean')) {
      const name = typeof key === 'function' ? 'the key function' : `key ${JSON.stringify(String(key))}`;
      throw dataError('stats.badKey', `groupBy requires ${name} to give a string, number or boolean, got ${show(raw)} at row ${i}`);
    }
    const k = String(raw);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  });
  return out;
}
