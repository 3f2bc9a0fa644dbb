import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { normInterQuantile } from './norm-inter-quantile.ts';

/**
 * Internal engine behind `krippendorffAlpha` and `krippendorffAlphaBootstrap` (not exported from
 * the barrel). The ratings matrix is compacted once into typed arrays (values mapped to indices of
 * the sorted distinct values, units stored back to back), and alpha is then computed from
 * per-unit sums and the value marginals, optionally with an integer weight per unit (how many
 * times a bootstrap resample drew it).
 *
 * Coincidence-matrix identities used (Krippendorff 2011, "Computing Krippendorff's
 * Alpha-Reliability", sections B-C), with o_ck the coincidences, n_c = sum_k o_ck the pairable
 * marginals, n = sum_c n_c and m_u the number of values in unit u (pairable when m_u >= 2):
 *
 *     alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck
 *     sum_ck o_ck d_ck = sum_u 1/(m_u - 1) * sum over ordered pairs (i, j) in u of d(v_i, v_j)
 *
 * and the per-metric closed forms for the pair sums:
 *   nominal   sum_{i,j} d = m_u^2 - sum_c n_uc^2;  expected n^2 - sum_c n_c^2
 *   interval  sum_{i,j} (v_i - v_j)^2 = 2 m_u sum_i (v_i - mean_u)^2;  expected 2 n sum_c n_c (v_c - mean)^2
 *   ordinal   the interval form applied to the rank positions P_c = sum_{g<c} n_g + n_c/2, because
 *             Krippendorff's d_ck = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2 = (P_k - P_c)^2
 *   ratio     d = ((v_i - v_j)/(v_i + v_j))^2, no closed form: pairs within a unit, O(V^2) over the
 *             distinct pairable values for the expected term.
 */

export type AlphaLevel = 'nominal' | 'ordinal' | 'interval' | 'ratio';
export const ALPHA_LEVELS: readonly AlphaLevel[] = ['nominal', 'ordinal', 'interval', 'ratio'];

/** One rating: a number, or for the nominal level also a string or boolean label; null = missing. */
export type Rating = number | string | boolean | null | undefined;

export interface CompactRatings {
  raters: number;
  /** Number of units (columns), pairable or not. */
  unitCount: number;
  /** Units' values are valueIdx[unitStart[u] .. unitStart[u + 1]). */
  unitStart: Int32Array;
  valueIdx: Int32Array;
  /** Distinct values in ascending order (numeric levels), as numbers; empty for string labels. */
  numeric: Float64Array;
  /** Number of distinct values. */
  distinct: number;
  /** Per-unit observed pair sums already divided by (m_u - 1); filled for nominal/interval/ratio. */
  observed: Float64Array | null;
}

export interface AlphaCore {
  alpha: number | null;
  /** Pairable units (m_u >= 2), counting repeats under weights. */
  units: number;
  /** Pairable values n. */
  pairableValues: number;
  observedDisagreement: number | null;
  expectedDisagreement: number | null;
}

/** Validates the raters x units matrix and compacts it. */
export function compactRatings(fn: string, ratings: unknown, level: AlphaLevel): CompactRatings {
  if (!Array.isArray(ratings)) {
    throw dataError('stats.badShape', `${fn} requires ratings as an array of raters (raters x units), got ${show(ratings)}`);
  }
  const raters = ratings.length;
  let unitCount = 0;
  for (let r = 0; r < raters; r++) {
    const row = ratings[r];
    if (!Array.isArray(row)) {
      throw dataError('stats.badShape', `${fn} requires ratings[${r}] to be an array of units, got ${show(row)}`);
    }
    if (r === 0) unitCount = row.length;
    else if (row.length !== unitCount) {
      throw dataError(
        'stats.badShape',
        `${fn} requires every rater row to have the same number of units, got ${row.length} in ratings[${r}] and ${unitCount} in ratings[0]`,
      );
    }
  }
  const rows = ratings as unknown[][];
  const numericLevel = level !== 'nominal';
  const unitStart = new Int32Array(unitCount + 1);
  let total = 0;
  for (let u = 0; u < unitCount; u++) {
    for (let r = 0; r < raters; r++) {
      const v = rows[r][u];
      if (v !== null && v !== undefined) total++;
    }
  }
  const valueIdx = new Int32Array(total);
  const index = new Map<unknown, number>();
  const firstSeen: unknown[] = [];
  let k = 0;
  for (let u = 0; u < unitCount; u++) {
    unitStart[u] = k;
    for (let r = 0; r < raters; r++) {
      const v = rows[r][u];
      if (v === null || v === undefined) continue;
      let id = index.get(v);
      if (id === undefined) {
        checkRating(fn, level, numericLevel, v, r, u);
        id = firstSeen.length;
        index.set(v, id);
        firstSeen.push(v);
      }
      valueIdx[k++] = id;
    }
  }
  unitStart[unitCount] = k;

  // Renumber the distinct values in ascending order (numbers numerically, labels by type then text).
  const distinct = firstSeen.length;
  const order = Array.from({ length: distinct }, (_, i) => i);
  order.sort((a, b) => compareLabels(firstSeen[a], firstSeen[b]));
  const rank = new Int32Array(distinct);
  for (let i = 0; i < distinct; i++) rank[order[i]] = i;
  for (let i = 0; i < total; i++) valueIdx[i] = rank[valueIdx[i]];
  const numeric = new Float64Array(numericLevel ? distinct : 0);
  if (numericLevel) for (let i = 0; i < distinct; i++) numeric[i] = firstSeen[order[i]] as number;

  const data: CompactRatings = { raters, unitCount, unitStart, valueIdx, numeric, distinct, observed: null };
  if (level !== 'ordinal') data.observed = observedPerUnit(data, level);
  return data;
}

function checkRating(fn: string, level: AlphaLevel, numericLevel: boolean, v: unknown, r: number, u: number): void {
  const where = `ratings[${r}][${u}]`;
  if (numericLevel) {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw dataError('stats.badValue', `${fn} at the ${level} level requires finite numbers or null, got ${show(v)} at ${where}`);
    }
    if (level === 'ratio' && v < 0) {
      throw dataError('stats.badValue', `${fn} at the ratio level requires non-negative values, got ${v} at ${where}`);
    }
  } else if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
    throw dataError('stats.badValue', `${fn} requires finite numbers, strings, booleans or null, got ${show(v)} at ${where}`);
  }
}

const TYPE_ORDER: Record<string, number> = { boolean: 0, number: 1, string: 2 };
function compareLabels(a: unknown, b: unknown): number {
  const ta = TYPE_ORDER[typeof a];
  const tb = TYPE_ORDER[typeof b];
  if (ta !== tb) return ta - tb;
  if (typeof a === 'number') return a - (b as number);
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function ratioDelta(a: number, b: number): number {
  if (a === b) return 0;
  const d = (a - b) / (a + b);
  return d * d;
}

/** Per-unit sum over ordered pairs of d(v_i, v_j), divided by (m_u - 1); 0 for unpairable units. */
function observedPerUnit(data: CompactRatings, level: AlphaLevel): Float64Array {
  const { unitCount, unitStart, valueIdx, numeric } = data;
  const out = new Float64Array(unitCount);
  const count = level === 'nominal' ? new Int32Array(data.distinct) : null;
  for (let u = 0; u < unitCount; u++) {
    const s = unitStart[u];
    const e = unitStart[u + 1];
    const m = e - s;
    if (m < 2) continue;
    let sum = 0;
    if (level === 'nominal') {
      const cnt = count as Int32Array;
      let sq = 0;
      for (let i = s; i < e; i++) sq += 2 * cnt[valueIdx[i]]++ + 1;
      for (let i = s; i < e; i++) cnt[valueIdx[i]] = 0;
      sum = m * m - sq;
    } else if (level === 'interval') {
      let mean = 0;
      for (let i = s; i < e; i++) mean += numeric[valueIdx[i]];
      mean /= m;
      let ss = 0;
      for (let i = s; i < e; i++) {
        const d = numeric[valueIdx[i]] - mean;
        ss += d * d;
      }
      sum = 2 * m * ss;
    } else {
      for (let i = s; i < e; i++) {
        const a = numeric[valueIdx[i]];
        for (let j = i + 1; j < e; j++) sum += ratioDelta(a, numeric[valueIdx[j]]);
      }
      sum *= 2;
    }
    out[u] = sum / (m - 1);
  }
  return out;
}

/** Value marginals n_c over the pairable units (m_u >= 2), weighted; units counted with repeats. */
function pairableMarginals(data: CompactRatings, weights?: Int32Array | Float64Array): { nc: Float64Array; units: number; n: number; kindsPairable: number } {
  const { unitCount, unitStart, valueIdx, distinct } = data;
  const nc = new Float64Array(distinct);
  let units = 0;
  for (let u = 0; u < unitCount; u++) {
    const s = unitStart[u];
    const e = unitStart[u + 1];
    if (e - s < 2) continue;
    const w = weights ? weights[u] : 1;
    if (w === 0) continue;
    units += w;
    for (let i = s; i < e; i++) nc[valueIdx[i]] += w;
  }
  let n = 0;
  let kindsPairable = 0;
  for (let c = 0; c < distinct; c++) {
    n += nc[c];
    if (nc[c] > 0) kindsPairable++;
  }
  return { nc, units, n, kindsPairable };
}

/**
 * The expected pair sum sum_ck n_c n_k d_ck, and for the squared-difference metrics the centred
 * positions (interval: values; ordinal: rank positions) the observed term reuses.
 */
function expectedPairSum(level: AlphaLevel, nc: Float64Array, n: number, numeric: Float64Array): { expected: number; pos: Float64Array | null } {
  const distinct = nc.length;
  let expected = 0;
  if (level === 'nominal') {
    let sq = 0;
    for (let c = 0; c < distinct; c++) sq += nc[c] * nc[c];
    return { expected: n * n - sq, pos: null };
  }
  if (level === 'interval' || level === 'ordinal') {
    const pos = new Float64Array(distinct);
    if (level === 'interval') {
      for (let c = 0; c < distinct; c++) pos[c] = numeric[c];
    } else {
      let below = 0;
      for (let c = 0; c < distinct; c++) {
        pos[c] = below + nc[c] / 2;
        below += nc[c];
      }
    }
    let mean = 0;
    for (let c = 0; c < distinct; c++) mean += nc[c] * pos[c];
    mean = n > 0 ? mean / n : 0;
    let ss = 0;
    for (let c = 0; c < distinct; c++) {
      pos[c] -= mean;
      ss += nc[c] * pos[c] * pos[c];
    }
    return { expected: 2 * n * ss, pos };
  }
  for (let c = 0; c < distinct; c++) {
    if (nc[c] === 0) continue;
    let row = 0;
    for (let k = c + 1; k < distinct; k++) if (nc[k] !== 0) row += nc[k] * ratioDelta(numeric[c], numeric[k]);
    expected += 2 * nc[c] * row;
  }
  return { expected, pos: null };
}

/** Alpha when D_e is 0 or nothing is pairable: 1 when the whole (weighted) matrix holds one value, else undefined. */
function degenerateAlpha(data: CompactRatings, weights: Int32Array | Float64Array | undefined, units: number, n: number): AlphaCore {
  const { unitCount, unitStart, valueIdx, distinct } = data;
  const seen = new Uint8Array(distinct);
  let kinds = 0;
  for (let u = 0; u < unitCount && kinds < 2; u++) {
    if (weights && weights[u] === 0) continue;
    for (let i = unitStart[u]; i < unitStart[u + 1]; i++) {
      if (seen[valueIdx[i]] === 0) {
        seen[valueIdx[i]] = 1;
        kinds++;
      }
    }
  }
  const defined = n > 0;
  return {
    alpha: kinds === 1 ? 1 : null,
    units,
    pairableValues: n,
    observedDisagreement: defined ? 0 : null,
    expectedDisagreement: defined ? 0 : null,
  };
}

/** The observed pair sum sum_ck o_ck d_ck: per-unit sums precomputed, or (ordinal) from the positions. */
function observedPairSum(data: CompactRatings, pos: Float64Array | null, weights?: Int32Array | Float64Array): number {
  const { unitCount, unitStart, valueIdx } = data;
  let observed = 0;
  if (data.observed) {
    const obs = data.observed;
    if (weights) for (let u = 0; u < unitCount; u++) observed += weights[u] * obs[u];
    else for (let u = 0; u < unitCount; u++) observed += obs[u];
    return observed;
  }
  const p = pos as Float64Array;
  for (let u = 0; u < unitCount; u++) {
    const s = unitStart[u];
    const e = unitStart[u + 1];
    const m = e - s;
    if (m < 2) continue;
    const w = weights ? weights[u] : 1;
    if (w === 0) continue;
    let mean = 0;
    for (let i = s; i < e; i++) mean += p[valueIdx[i]];
    mean /= m;
    let ss = 0;
    for (let i = s; i < e; i++) {
      const d = p[valueIdx[i]] - mean;
      ss += d * d;
    }
    observed += (w * 2 * m * ss) / (m - 1);
  }
  return observed;
}

/**
 * Alpha for the compacted matrix; `weights[u]` (default 1) is how often unit u counts.
 * Degenerate rules (the oracle's conventions): no values at all -> null; a single distinct value in
 * the whole (weighted) matrix -> 1 (with `requirePairs`, only if some unit is pairable); otherwise
 * no pairable unit or no variation among the pairable values (D_e = 0) -> null.
 */
export function alphaCore(
  data: CompactRatings,
  level: AlphaLevel,
  weights?: Int32Array | Float64Array,
  /** When true, no pairable value -> null even if the matrix holds one value (used for resamples). */
  requirePairs = false,
): AlphaCore {
  const { nc, units, n, kindsPairable } = pairableMarginals(data, weights);
  const e = expectedPairSum(level, nc, n, data.numeric);
  // Decided structurally, not by the floating-point value of D_e (an ulp of rounding in a mean
  // must not turn "no variation" into a huge or tiny alpha).
  const expected = kindsPairable < 2 ? 0 : e.expected;
  if (n === 0 && requirePairs) {
    return { alpha: null, units, pairableValues: 0, observedDisagreement: null, expectedDisagreement: null };
  }
  // Undefined (0/0) unless the whole matrix holds one value, which alpha counts as agreement.
  if (n === 0 || expected === 0) return degenerateAlpha(data, weights, units, n);
  const observed = observedPairSum(data, e.pos, weights);
  return {
    alpha: 1 - ((n - 1) * observed) / expected,
    units,
    pairableValues: n,
    observedDisagreement: observed / n,
    expectedDisagreement: expected / (n * (n - 1)),
  };
}

/**
 * The percentile interval and bootstrap SE of the defined resample alphas (sorted in place): ends
 * at (1 -+ level) / 2 by R `boot`'s quantile convention (`normInterQuantile`), SE with the n - 1
 * denominator; null when no (for the SE: fewer than two) resample was defined.
 */
export function alphaPercentile(alphas: Float64Array, level: number): { lower: number | null; upper: number | null; se: number | null } {
  const defined = alphas.length;
  const sample = alphas.sort();
  const lower = defined > 0 ? normInterQuantile(sample, (1 - level) / 2) : null;
  const upper = defined > 0 ? normInterQuantile(sample, (1 + level) / 2) : null;
  let se: number | null = null;
  if (defined >= 2) {
    let mean = 0;
    for (let i = 0; i < defined; i++) mean += sample[i];
    mean /= defined;
    let ss = 0;
    for (let i = 0; i < defined; i++) ss += (sample[i] - mean) ** 2;
    se = Math.sqrt(ss / (defined - 1));
  }
  return { lower, upper, se };
}
