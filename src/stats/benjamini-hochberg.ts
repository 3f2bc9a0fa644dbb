import { checkPValues } from './p-values.ts';

/**
 * Benjamini-Hochberg step-up adjustment of p-values (controls the false discovery rate under
 * independence or positive dependence), returned in input order.
 *
 * Source: Benjamini & Hochberg (1995), "Controlling the false discovery rate: a practical and
 * powerful approach to multiple testing", JRSS B 57(1); computed as R's
 * `p.adjust(p, method = 'BH')`: with the m non-missing p-values sorted ascending, p_(i) becomes
 * min_{j >= i} min(1, m p_(j) / j).
 *
 * Degenerate cases: an empty array -> []; null (missing) entries stay null and do not count in m
 * (as R's default); ties get equal adjusted values; one p-value is returned unchanged.
 *
 * Throws `dataError('stats.badValue')` for an entry that is not null or a number in [0, 1] (the
 * message names the index), and ('stats.badShape') for a non-array.
 *
 * @example
 * import { benjaminiHochberg } from './benjamini-hochberg.ts';
 * benjaminiHochberg([0.01, 0.04, 0.03, 0.005]); // [0.02, 0.04, 0.04, 0.02]   (R: p.adjust(c(.01,.04,.03,.005), 'BH'))
 */
export function benjaminiHochberg(pValues: ReadonlyArray<number | null>): (number | null)[] {
  const p = checkPValues('benjaminiHochberg', pValues);
  const idx = p.flatMap((v, i) => (v === null ? [] : [i])).sort((a, b) => (p[a] as number) - (p[b] as number) || a - b);
  const m = idx.length;
  const out: (number | null)[] = p.map(() => null);
  let running = 1;
  for (let rank = m - 1; rank >= 0; rank--) {
    const i = idx[rank];
    running = Math.min(running, (m / (rank + 1)) * (p[i] as number));
    out[i] = running;
  }
  return out;
}
