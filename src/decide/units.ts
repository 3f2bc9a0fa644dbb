/**
 * Quantities on the command line of compare / plan: `5pp` (percentage points: 0.05), `5%` (the
 * same), or a plain number in the metric's units (`0.05`).
 */
import { usageError } from '../errors.ts';

export function parseAmount(flag: string, s: string): number {
  const m = /^\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*(pp|%)?\s*$/i.exec(s);
  if (!m) throw usageError('decide.badAmount', `${flag} must be a number, or percentage points like 2pp, got ${JSON.stringify(s)}`);
  const x = Number(m[1]);
  return m[2] ? Number((x / 100).toPrecision(15)) : x;
}
