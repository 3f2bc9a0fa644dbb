import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

export type ClusterId = string | number;

export interface ClusterTotals {
  /** Number of clusters C. */
  clusters: number;
  /** Cluster index (0..C-1, in order of first appearance) of each value. */
  index: Int32Array;
  /** Per-cluster sum of the values. */
  sums: Float64Array;
  /** Per-cluster number of values. */
  counts: Float64Array;
}

/**
 * Per-cluster sums and counts: the sufficient statistics of the clustered mean
 * sum(sums) / sum(counts) and of its standard errors and cluster bootstrap.
 *
 * Clusters are numbered in order of first appearance. Ids compare with `Map` semantics, so the
 * number 1 and the string "1" are different clusters.
 *
 * Degenerate cases: ids must be as long as values, each a string or a finite number; values are
 * not checked here (callers pass checked Float64Arrays).
 *
 * @example
 * import { clusterTotals } from './cluster-totals.ts';
 * clusterTotals(Float64Array.of(1, 0, 1), ['q1', 'q1', 'q2']);
 * // { clusters: 2, index: [0, 0, 1], sums: [1, 1], counts: [2, 1] }
 */
export function clusterTotals(values: Float64Array, ids: ArrayLike<ClusterId>, fn = 'clusterTotals'): ClusterTotals {
  if (ids === null || typeof ids !== 'object' || typeof (ids as { length?: unknown }).length !== 'number') {
    throw dataError('stats.badShape', `${fn} requires clusterIds to be an array, got ${show(ids)}`);
  }
  if (ids.length !== values.length) {
    throw dataError(
      'stats.lengthMismatch',
      `${fn} requires values and clusterIds to have the same length, got ${values.length} and ${ids.length}`,
    );
  }
  const n = values.length;
  const { index, clusters: C } = ids instanceof Int32Array ? indexIntegerIds(ids) : indexIds(ids, fn);
  const sums = new Float64Array(C);
  const counts = new Float64Array(C);
  for (let i = 0; i < n; i++) {
    sums[index[i]] += values[i];
    counts[index[i]] += 1;
  }
  return { clusters: C, index, sums, counts };
}

/** Cluster indexes in order of first appearance, by `Map` (any string or finite number ids). */
function indexIds(ids: ArrayLike<ClusterId>, fn: string): { index: Int32Array; clusters: number } {
  const n = ids.length;
  const map = new Map<ClusterId, number>();
  const index = new Int32Array(n);
  let last: ClusterId | undefined;
  let lastC = -1;
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) {
      throw dataError('stats.badValue', `${fn} requires clusterIds[${i}] to be a string or finite number, got ${show(id)}`);
    }
    // A run of one id (rows sorted or grouped by cluster) is looked up once.
    if (id !== last) {
      let c = map.get(id);
      if (c === undefined) {
        c = map.size;
        map.set(id, c);
      }
      last = id;
      lastC = c;
    }
    index[i] = lastC;
  }
  return { index, clusters: map.size };
}

/**
 * The same indexes for integer ids (an Int32Array: every id a finite number): through a table by
 * id when the ids span at most a few times as many values as there are ids, else by `Map`.
 */
function indexIntegerIds(ids: Int32Array): { index: Int32Array; clusters: number } {
  const n = ids.length;
  let min = 0;
  let max = -1;
  for (let i = 0; i < n; i++) {
    const id = ids[i];
    if (i === 0 || id < min) min = id;
    if (i === 0 || id > max) max = id;
  }
  if (n === 0 || max - min > 4 * n + 1024) return indexIds(ids, 'clusterTotals');
  // seen[id - min]: 1 + the cluster index of id, 0 while unseen.
  const seen = new Int32Array(max - min + 1);
  const index = new Int32Array(n);
  let C = 0;
  for (let i = 0; i < n; i++) {
    const k = ids[i] - min;
    let c = seen[k];
    if (c === 0) c = seen[k] = ++C;
    index[i] = c - 1;
  }
  return { index, clusters: C };
}
