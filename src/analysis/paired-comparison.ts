/**
 * One paired comparison of two arms on the same items: the library behind the report's pairwise
 * table and `standoff ci paired`, so both print the same interval, p and MDE for the same pairs
 * and seed.
 *
 *   comparePaired(a, b, clusterIds | null, cluster, opts) -> PairedComparison
 *
 * With cluster ids (the default over the store: the scenario, whose epochs are correlated pairs),
 * the interval is the paired cluster bootstrap (`pairedClusterBootstrap`: whole scenarios
 * resampled) and p and the MDE use the cluster-robust (CR1) paired SE; without, the paired
 * bootstrap of independent pairs and the paired SE, and the result says the pairs were treated
 * as independent. p is the two-sided z-test and the MDE is at 80% power and alpha = 1 - level
 * (`pairedZTest`).
 *
 * `comparePairedOnThreads` is the same comparison with the independent-pairs bootstrap of
 * continuous differences (the general resampler) spread over worker threads: byte-identical to
 * `comparePaired` for any number of threads, which `ci paired` uses and the report need not.
 */
import { StandoffError, dataError } from '../errors.ts';
import { pairedBootstrap, pairedClusterBootstrap, pairedDifferences, pairedStandardError, pairedZTest, type BootstrapResult } from '../stats/index.ts';
import type { Sampling } from './rates.ts';
import type { ClusterId } from '../stats/cluster-totals.ts';

export const MDE_POWER = 0.8;

export interface PairedOptions {
  level: number;
  seed: number;
  resamples: number;
  method?: 'percentile' | 'bca' | 'basic';
}

export interface PairedComparison {
  /** Pairs. */
  n: number;
  /** Clusters resampled (clustered only). */
  clusters?: number;
  mean_a: number;
  mean_b: number;
  /** mean(a - b), summed as differences. */
  mean_diff: number;
  lower: number | null;
  upper: number | null;
  level: number;
  method: 'percentile' | 'bca' | 'basic';
  /** 'clustered': whole clusters of pairs resampled, clustered SE; 'independent': pairs treated as independent. */
  sampling: Sampling;
  cluster?: string;
  resamples: number;
  seed: number;
  engine: string | null;
  se_bootstrap: number | null;
  /** The SE behind p and the MDE: se_clustered when clustered, else se_paired. */
  se: number;
  /** Paired SE treating pairs as independent (ddof 1), and with ddof 0. */
  se_paired: number;
  se_paired_ddof0: number;
  /** SE ignoring the pairing altogether, for contrast. */
  se_unpaired: number;
  /** Cluster-robust (CR1) SE of mean(a - b); clustered only. */
  se_clustered?: number;
  /** Pearson correlation of the paired outcomes; null when either side is constant. */
  correlation: number | null;
  /** Two-sided z-test of mean_diff / se; null when se = 0. */
  p_value: number | null;
  /** Smallest true difference detected with `power` at alpha (two-sided); null when se = 0. */
  mde: number | null;
  alpha: number;
  power: number;
  note?: string;
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * `boot`: the independent-pairs bootstrap already computed (by `comparePairedOnThreads`, equal to
 * what `pairedBootstrap` gives for these pairs and options); unused with cluster ids.
 */
export function comparePaired(a: Float64Array, b: Float64Array, clusterIds: ArrayLike<ClusterId> | null, cluster: string | null, o: PairedOptions, boot?: BootstrapResult): PairedComparison {
  if (a.length < 2) throw dataError('paired.tooFew', `${a.length} pair${a.length === 1 ? '' : 's'}: a paired interval needs at least 2`);
  const method = o.method ?? 'percentile';
  const alpha = Number((1 - o.level).toPrecision(12)); // 0.05, not 0.050000000000000044
  const se1 = pairedStandardError(a, b, { ddof: 1 });
  const se0 = pairedStandardError(a, b, { ddof: 0 });
  const bopts = { resamples: o.resamples, level: o.level, method, seed: o.seed };
  let lower: number | null;
  let upper: number | null;
  let seBoot: number | null;
  let engine: string;
  let note: string | undefined;
  let se: number;
  let extra: Partial<PairedComparison> = {};
  if (clusterIds) {
    const r = pairedClusterBootstrap(a, b, clusterIds, bopts);
    [lower, upper, seBoot, engine, note] = [finite(r.lower), finite(r.upper), finite(r.se), r.engine, r.note];
    se = r.seClustered;
    extra = { clusters: r.clusters, cluster: cluster ?? undefined, se_clustered: r.seClustered };
  } else {
    const r = boot ?? pairedBootstrap(a, b, bopts);
    [lower, upper, seBoot, engine, note] = [finite(r.lower), finite(r.upper), finite(r.se), r.engine, r.note];
    se = se1.sePaired;
  }
  const t = pairedZTest({ difference: se1.meanDiff, se, alpha, power: MDE_POWER });
  const out: PairedComparison = {
    n: a.length,
    ...(extra.clusters !== undefined ? { clusters: extra.clusters } : {}),
    mean_a: se1.meanA,
    mean_b: se1.meanB,
    mean_diff: se1.meanDiff,
    lower,
    upper,
    level: o.level,
    method,
    sampling: clusterIds ? 'clustered' : 'independent',
    ...(extra.cluster ? { cluster: extra.cluster } : {}),
    resamples: o.resamples,
    seed: o.seed,
    engine,
    se_bootstrap: seBoot,
    se,
    se_paired: se1.sePaired,
    se_paired_ddof0: se0.sePaired,
    se_unpaired: se1.seUnpaired,
    ...(extra.se_clustered !== undefined ? { se_clustered: extra.se_clustered } : {}),
    correlation: finite(se1.correlation),
    p_value: t.p,
    mde: t.mde,
    alpha,
    power: MDE_POWER,
  };
  if (se === 0) {
    out.note = clusterIds
      ? `every ${cluster ?? 'cluster'} has the same mean difference: no spread, so no p-value or MDE`
      : 'every paired difference is identical: no spread, so no p-value or MDE';
  } else if (note) out.note = note;
  return out;
}

/** `comparePaired` with the general resampler's blocks over `threads` threads (see the file comment). */
export async function comparePairedOnThreads(
  a: Float64Array,
  b: Float64Array,
  clusterIds: readonly string[] | null,
  cluster: string | null,
  o: PairedOptions & { threads?: number },
): Promise<PairedComparison> {
  const ok = !clusterIds && a.length >= 2 && a.length === b.length && a.every(Number.isFinite) && b.every(Number.isFinite);
  const p = ok ? pairedDifferences(a, b) : null;
  if (!p || p.multinomial) return comparePaired(a, b, clusterIds, cluster, o); // exact or clustered paths, and every error
  const { parallelBootstrapStatistic } = await import('../compute/parallel-bootstrap.ts');
  const { statistic: _mean, ...boot } = await parallelBootstrapStatistic(p.values, { name: 'mean' }, { resamples: o.resamples, level: o.level, method: o.method ?? 'percentile', seed: o.seed }, { threads: o.threads });
  return comparePaired(a, b, null, cluster, o, boot);
}

/** `comparePaired`, or a result without numbers and with the reason when the data do not allow one. */
export function tryComparePaired(...args: Parameters<typeof comparePaired>): PairedComparison | { note: string } {
  try {
    return comparePaired(...args);
  } catch (err) {
    if (err instanceof StandoffError && err.kind === 'data') return { note: err.message };
    throw err;
  }
}
