import { parseBootstrapOptions } from './bootstrap-internals.ts';
import type { ClusterBootstrapOptions, ClusterBootstrapResult } from './cluster-bootstrap.ts';
import { maxAbs } from './decimal-scale.ts';
import { standardErrorOf, type PairedStandardError } from './paired-standard-error.ts';
import { ratioBootstrap } from './ratio-bootstrap.ts';

const TWO53 = 9007199254740992;

/** The four cells of 0/1 pairs (a and b right, only a, only b, both wrong). */
export interface PairCells {
  bothRight: number;
  onlyA: number;
  onlyB: number;
  bothWrong: number;
}

/** What `pairedColumnsSummary` returns: the numbers `comparePaired` (clustered) computes from the extracted pairs. */
export interface PairedColumnsSummary {
  /** Pairs: rows where both columns hold a number. */
  n: number;
  /** `pairedStandardErrors` of the pairs (ddof 1 and 0). */
  ddof1: PairedStandardError;
  ddof0: PairedStandardError;
  /** `clusterBootstrap` of d = a - b over the clusters. */
  boot: ClusterBootstrapResult;
  /** `clusteredStandardError` of d, variant CR1. */
  seClustered: number;
  /** The four cells when every paired value is 0 or 1, else null. */
  cells: PairCells | null;
}

/** Running state of the first pass: sums in pair order, per-cluster totals, the decimal scale of d. */
interface FirstPass {
  n: number;
  clusters: number;
  x0: number;
  y0: number;
  d0: number;
  sumA: number;
  sumB: number;
  sumD: number;
  /** Sums of x - x0, y - y0 and d - d0 (`sumSquaredDeviations`' first pass; the last also the CR1 SE's mean). */
  shA: number;
  shB: number;
  shD: number;
  /** `decimalScale` of the d values (-1: none). */
  scale: number;
  sums: Float64Array;
  shifted: Float64Array;
  counts: Float64Array;
  cells: PairCells | null;
}

/**
 * The paired cluster comparison of columns `a` and `b` (NaN: no value) on the rows both hold a
 * value, clustered on `ids`, without extracting the pairs: the same numbers, bit for bit, as
 * `pairedStandardErrors`, `clusterBootstrap` and `clusteredStandardError` (CR1) give on the
 * extracted pairs and their ids (what `pairedClusterInterval` runs), because every sum is formed
 * in the same order from the same terms (pairs in row order; cluster totals in order of first
 * appearance, which for sorted ids is the order of the rows). Two passes over the rows and one
 * over the clusters, instead of a dozen copies of every pair.
 *
 * Returns null where the extracted-pairs path would throw or its checks differ (ids not sorted
 * ascending, a non-finite value, fewer than 2 pairs or clusters): callers then take that path,
 * which gives the errors.
 *
 * @example
 * import { pairedColumnsSummary } from './paired-columns.ts';
 * const s = pairedColumnsSummary(Float64Array.of(1, 1, NaN, 0), Float64Array.of(0, 1, 1, 0), Int32Array.of(0, 0, 1, 2), { seed: 1, resamples: 200 });
 * // s.n = 3, s.boot.clusters = 2, s.cells = { bothRight: 1, onlyA: 1, onlyB: 0, bothWrong: 1 }
 */
export function pairedColumnsSummary(a: Float64Array, b: Float64Array, ids: Int32Array, options: ClusterBootstrapOptions): PairedColumnsSummary | null {
  if (a.length !== b.length || ids.length !== a.length) return null;
  const distinct = distinctSorted(ids);
  if (distinct < 0) return null;
  const p1 = firstPass(a, b, ids, distinct);
  if (p1 === null || p1.n < 2 || p1.clusters < 2) return null;
  const opts = parseBootstrapOptions('clusterBootstrap', options);
  const p2 = secondPass(a, b, ids, p1);
  const { n, clusters: C } = p1;
  const sums = { n, meanA: p1.sumA / n, meanB: p1.sumB / n, meanDiff: p1.sumD / n, ssA: p2.ssA, ssB: p2.ssB, ssD: p2.ssD, sxy: p2.sxy };
  const counts = p1.counts.subarray(0, C);
  let num = p1.sums.subarray(0, C);
  let divisor = 1;
  if (p2.scaled) {
    const p = 10 ** p1.scale;
    let maxCount = 0;
    for (let c = 0; c < C; c++) maxCount = Math.max(maxCount, counts[c]);
    if (p2.totalAbs <= TWO53 && C * maxAbs(p2.scaled) <= TWO53 && p * C * maxCount <= TWO53) {
      num = p2.scaled;
      divisor = p;
    }
  }
  const boot = { ...ratioBootstrap({ num, den: counts, divisor }, opts, 'auto', n), clusters: C };
  return { n, ddof1: standardErrorOf(sums, 1), ddof0: standardErrorOf(sums, 0), boot, seClustered: crOneStandardError(p1), cells: p1.cells };
}

/** Distinct ids of ids sorted ascending (-1 when not sorted), once per ids array (a family's columns share theirs; `firstPass` checks the order again, so a changed array cannot mislead it). */
const DISTINCT = new WeakMap<Int32Array, number>();
function distinctSorted(ids: Int32Array): number {
  const known = DISTINCT.get(ids);
  if (known !== undefined) return known;
  let distinct = 0;
  for (let r = 0; r < ids.length && distinct >= 0; r++) {
    if (r > 0 && ids[r] < ids[r - 1]) distinct = -1;
    else if (r === 0 || ids[r] !== ids[r - 1]) distinct++;
  }
  DISTINCT.set(ids, distinct);
  return distinct;
}

/** Pass 1: the sums in pair order, the per-cluster totals of d and d - d0, the decimal scale of d, the four cells. Null on a non-finite value. */
function firstPass(a: Float64Array, b: Float64Array, ids: Int32Array, distinct: number): FirstPass | null {
  const sums = new Float64Array(distinct);
  const shifted = new Float64Array(distinct);
  const counts = new Float64Array(distinct);
  let cells: PairCells | null = { bothRight: 0, onlyA: 0, onlyB: 0, bothWrong: 0 };
  let n = 0, x0 = 0, y0 = 0, d0 = 0, sumA = 0, sumB = 0, sumD = 0, shA = 0, shB = 0, shD = 0, scale = 0;
  let p = 1;
  let c = -1;
  let last = 0;
  for (let r = 0; r < a.length; r++) {
    const x = a[r];
    const y = b[r];
    if (Number.isNaN(x) || Number.isNaN(y)) continue;
    if (!Number.isFinite(x) || !Number.isFinite(y)) return null;
    const d = x - y;
    if (n === 0) {
      x0 = x;
      y0 = y;
      d0 = d;
    }
    if (c < 0 || ids[r] !== last) {
      // Clusters in order of first appearance are clusters in row order only for ascending ids.
      if ((c >= 0 && ids[r] < last) || c + 1 >= distinct) return null;
      c++;
      last = ids[r];
    }
    sumA += x;
    sumB += y;
    sumD += d;
    shA += x - x0;
    shB += y - y0;
    shD += d - d0;
    sums[c] += d;
    shifted[c] += d - d0;
    counts[c] += 1;
    // decimalScale, value by value as it scans them.
    while (scale >= 0 && Math.round(d * p) / p !== d) {
      p *= 10;
      scale = scale === 9 ? -1 : scale + 1;
    }
    if (cells && !addCell(cells, x, y)) cells = null;
    n++;
  }
  return { n, clusters: c + 1, x0, y0, d0, sumA, sumB, sumD, shA, shB, shD, scale, sums, shifted, counts, cells };
}

function addCell(cells: PairCells, x: number, y: number): boolean {
  if ((x !== 0 && x !== 1) || (y !== 0 && y !== 1)) return false;
  if (x === 1 && y === 1) cells.bothRight++;
  else if (x === 0 && y === 0) cells.bothWrong++;
  else if (x === 1) cells.onlyA++;
  else cells.onlyB++;
  return true;
}

/** Pass 2: the sums of squared deviations and cross products about pass 1's means, and d scaled to integers per cluster. */
function secondPass(a: Float64Array, b: Float64Array, ids: Int32Array, s: FirstPass) {
  const { n, x0, y0, d0 } = s;
  const meanA = s.sumA / n;
  const meanB = s.sumB / n;
  const mA = s.shA / n;
  const mB = s.shB / n;
  const mD = s.shD / n;
  const p = s.scale >= 0 ? 10 ** s.scale : 0;
  const scaled = s.scale >= 0 ? new Float64Array(s.clusters) : null;
  let sxy = 0, ssA = 0, ssB = 0, ssD = 0, totalAbs = 0;
  let c = -1;
  let last = 0;
  for (let r = 0; r < a.length; r++) {
    const x = a[r];
    const y = b[r];
    if (Number.isNaN(x) || Number.isNaN(y)) continue;
    const d = x - y;
    if (c < 0 || ids[r] !== last) {
      c++;
      last = ids[r];
    }
    sxy += (x - meanA) * (y - meanB);
    const ea = x - x0 - mA;
    const eb = y - y0 - mB;
    const ed = d - d0 - mD;
    ssA += ea * ea;
    ssB += eb * eb;
    ssD += ed * ed;
    if (scaled) {
      const k = Math.round(d * p);
      scaled[c] += k;
      totalAbs += Math.abs(k);
    }
  }
  return { sxy, ssA, ssB, ssD, scaled, totalAbs };
}

/** `clusteredStandardError` (CR1) of d from the per-cluster totals of d - d0. */
function crOneStandardError(s: FirstPass): number {
  const { n: N, clusters: C } = s;
  const m = s.shD / N;
  let sum = 0;
  for (let c = 0; c < C; c++) {
    const e = s.shifted[c] - s.counts[c] * m;
    sum += e * e;
  }
  const cr0sq = sum / (N * N);
  return Math.sqrt((cr0sq * C) / (C - 1));
}
