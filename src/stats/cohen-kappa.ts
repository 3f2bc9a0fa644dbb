import { dataError } from '../errors.ts';
import { checkWeights, show } from './arg-checks.ts';
import { isLabel, type Label } from './judge-panel.ts';

export interface CohenKappaResult {
  /** Cohen's kappa; null when undefined (no pairs, or expected agreement 1). */
  kappa: number | null;
  /** Items both raters labelled. */
  n: number;
  /** Of those, items with the same label. */
  agreements: number;
  /** p_o, the share of those items with the same label; null when n = 0. */
  observedAgreement: number | null;
  /** p_e = sum_c p_a(c) p_b(c), chance agreement from the two raters' own marginals; null when n = 0. */
  expectedAgreement: number | null;
  /** Distinct labels seen on the paired items. */
  categories: number;
}

/**
 * Cohen's kappa for two raters' nominal labels of the same items: (p_o - p_e) / (1 - p_e), computed
 * on the items both raters labelled (null or undefined = not labelled; such items are dropped).
 *
 * Source: Cohen (1960), "A coefficient of agreement for nominal scales", Educational and
 * Psychological Measurement 20(1). Same value as statsmodels
 * `statsmodels.stats.inter_rater.cohens_kappa(table).kappa` on the contingency table, and as
 * scikit-learn's `cohen_kappa_score`.
 *
 * Degenerate cases: no item labelled by both -> kappa, observedAgreement and expectedAgreement
 * null; both raters used one and the same label throughout (p_e = 1) -> kappa null (0/0; perfect
 * raw agreement is still visible as observedAgreement 1). Kappa can be negative (worse than chance).
 *
 * With `weights`, item i counts weights[i] times (a non-negative integer): the kappa of the
 * expanded data, for callers that hold distinct label pairs with their counts.
 *
 * Throws `dataError` ('stats.badShape') when the two arrays (or the weights) differ in length,
 * ('stats.badValue') for a label that is not a string, finite number or boolean, and
 * ('stats.badCount') for a weight that is not a non-negative integer.
 *
 * @example
 * import { cohenKappa } from './cohen-kappa.ts';
 * cohenKappa(['y', 'y', 'n', 'n'], ['y', 'n', 'n', 'n']).kappa; // 0.5 (p_o 0.75, p_e 0.5)
 */
export function cohenKappa(
  a: ReadonlyArray<Label | null | undefined>,
  b: ReadonlyArray<Label | null | undefined>,
  weights?: ArrayLike<number>,
): CohenKappaResult {
  const fn = 'cohenKappa';
  if (!Array.isArray(a) || !Array.isArray(b)) {
    throw dataError('stats.badShape', `${fn} requires two arrays of labels, got ${show(a)} and ${show(b)}`);
  }
  if (a.length !== b.length) {
    throw dataError('stats.badShape', `${fn} requires two arrays of the same length, got ${a.length} and ${b.length}`);
  }
  const w8 = checkWeights(fn, 'weights', weights, a.length);
  const ca = new Map<Label, number>();
  const cb = new Map<Label, number>();
  let n = 0;
  let agree = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== null && x !== undefined && !isLabel(x)) throw dataError('stats.badValue', `${fn} requires labels to be strings, finite numbers or booleans, got ${show(x)} at a[${i}]`);
    if (y !== null && y !== undefined && !isLabel(y)) throw dataError('stats.badValue', `${fn} requires labels to be strings, finite numbers or booleans, got ${show(y)} at b[${i}]`);
    const w = w8 ? w8[i] : 1;
    if (x === null || x === undefined || y === null || y === undefined || w === 0) continue;
    n += w;
    if (x === y) agree += w;
    ca.set(x, (ca.get(x) ?? 0) + w);
    cb.set(y, (cb.get(y) ?? 0) + w);
  }
  const categories = new Set([...ca.keys(), ...cb.keys()]).size;
  if (n === 0) return { kappa: null, n, agreements: 0, observedAgreement: null, expectedAgreement: null, categories };
  let pe = 0;
  for (const [label, count] of ca) pe += (count / n) * ((cb.get(label) ?? 0) / n);
  const po = agree / n;
  // p_e = 1 exactly when both raters used a single, common label (p_e is a sum of products of
  // shares, so decide it from the counts rather than floating point).
  const undefinedKappa = ca.size === 1 && cb.size === 1 && categories === 1;
  return {
    kappa: undefinedKappa ? null : (po - pe) / (1 - pe),
    n,
    agreements: agree,
    observedAgreement: po,
    expectedAgreement: undefinedKappa ? 1 : pe,
    categories,
  };
}
