import { checkPValues } from './p-values.ts';

/**
 * Holm's step-down adjustment of p-values for multiple comparisons (controls the family-wise
 * error rate), returned in input order.
 *
 * Source: Holm (1979), "A simple sequentially rejective multiple test procedure", Scandinavian
 * Journal of Statistics 6(2); computed as R's `p.adjust(p, method = 'holm')`: with the m
 * non-missing p-values sorted ascending, p_(i) becomes max_{j <= i} min(1, (m - j + 1) p_(j)).
 *
 * Degenerate cases: an empty array -> []; null (missing) entries stay null and do not count in m
 * (R's default `n = length(p[!is.na(p)])`); ties get equal adjusted values; one p-value is returned
 * unchanged.
 *
 * Throws `dataError('stats.badValue')` for an entry that is not null or a number in [0, 1] (the
 * message names the index), and ('stats.badShape') for a non-array.
 *
 * @example
 * import { holm } from './holm.ts';
 * holm([0.01, 0.04, 0.03, 0.005]); // [0.03, 0.06, 0.06, 0.02]   (R: p.adjust(c(.01,.04,.03,.005), 'holm'))
 */
export function holm(pValues: ReadonlyArray<number | null>): (number | null)[] {
  const p = checkPValues('holm', pValues);
  const idx = p.flatMap((v, i) => (v === null ? [] : [i])).sort((a, b) => (p[a] as number) - (p[b] as number) || a - b);
  const m = idx.length;
  const out: (number | null)[] = p.map(() => null);
  let running = 0;
  idx.forEach((i, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * (p[i] as number)));
    out[i] = running;
  });
  return out;
}
