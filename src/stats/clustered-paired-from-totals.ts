import { totalsMoments } from './clustered-standard-error.ts';

export interface ClusteredPairedTotals {
  /** Pairs N. */
  n: number;
  /** Clusters with at least one pair. */
  clusters: number;
  /** mean(a - b). */
  meanDiff: number;
  /** CR1 cluster-robust SE of mean(a - b). */
  se: number;
}

/**
 * `clusteredPairedStandardError`'s mean difference and CR1 SE from per-cluster totals of the
 * differences d = a - b instead of the pairs: `sums[c]` and `counts[c]` are cluster c's sum of d
 * and number of pairs (clusters in the order of their first pair; a count of 0 is no cluster),
 * `shift` is the first pair's difference. The arithmetic is that function's (values shifted by
 * the first one, cluster terms added in cluster order), so for integer-valued differences (0/1
 * metrics: d in {-1, 0, 1}, sums exact below 2^53) the result is identical to the last bit; for
 * other values the within-cluster sums are formed in another order (equal to rounding).
 *
 * SE_CR1 = sqrt(C / (C - 1)) · sqrt(Σ_c (s'_c − n_c·m')²) / N with s'_c = s_c − n_c·shift and
 * m' = Σ_c s'_c / N (Cameron & Miller 2015; Miller 2024 for the paired form).
 *
 * Degenerate cases: mismatched lengths, a negative or non-integer count, a non-finite sum or shift,
 * or fewer than 2 clusters throw (`dataError`).
 *
 * @example
 * // pairs a = [1, 1, 0, 1, 1, 1], b = [0, 1, 0, 0, 1, 0] in clusters s1 s1 s2 s2 s3 s3:
 * clusteredPairedFromTotals([1, 1, 1], [2, 2, 2], 1); // { n: 6, clusters: 3, meanDiff: 0.5, se: 0 }
 */
export function clusteredPairedFromTotals(sums: ArrayLike<number>, counts: ArrayLike<number>, shift: number): ClusteredPairedTotals {
  const { clusters: C, n: N, total, cr0sq } = totalsMoments('clusteredPairedFromTotals', sums, counts, 'counts', shift);
  return { n: N, clusters: C, meanDiff: total / N, se: Math.sqrt((cr0sq * C) / (C - 1)) };
}
