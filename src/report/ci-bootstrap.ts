/**
 * `standoff ci bootstrap` and `standoff ci paired`: metric vectors come from the store as Arrow
 * typed columns (grouped in DuckDB order), or from a CSV/Parquet file; resampling is done by
 * `src/stats` with the given seed, which every result records. Analytic standard errors are
 * reported beside each bootstrap interval (CLT; clustered CR0/CR1/Miller with CR1 the one
 * Standoff reports, as Inspect AI does; the paired SE with its covariance term).
 */
import {
  bootstrapMean,
  clusterBootstrap,
  clusteredStandardError,
  cltStandardError,
  minimumDetectableEffect,
  pairedBootstrap,
  pairedStandardError,
} from '../stats/index.ts';
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { StandoffError, dataError, usageError } from '../errors.ts';
import { checkColumns, getMetric, loadMetric } from './metrics.ts';
import { float64Column, withStore, type Group, type StoreSource } from './ci.ts';

type Method = 'percentile' | 'bca' | 'basic';

export interface BootstrapCiOptions {
  metric?: string;
  by?: string[];
  cluster?: string;
  input?: string;
  value?: string;
  method: Method;
  level: number;
  seed: number;
  resamples: number;
}

export interface BootstrapCi {
  group?: Group;
  metric?: string;
  n: number;
  clusters?: number;
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  se: number | null;
  method: Method;
  resamples: number;
  seed: number;
  rng?: string;
  engine?: string;
  /** CLT standard error of the mean (n - 1 denominator), and with n. */
  se_clt: number | null;
  se_clt_ddof0: number | null;
  /** Clustered SEs when --cluster is given; se_clustered.cr1 is the one Standoff reports. */
  se_clustered?: { cr0: number; cr1: number; miller: number } | null;
  note?: string;
}

/** One group's interval; a statistic that is undefined for the group becomes a null result with a note. */
export function intervalFor(values: Float64Array, clusters: string[] | null, o: BootstrapCiOptions): BootstrapCi {
  const base = { n: values.length, estimate: null, lower: null, upper: null, level: o.level, method: o.method, resamples: o.resamples, seed: o.seed };
  try {
    const r = clusters
      ? clusterBootstrap(values, clusters, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed })
      : bootstrapMean(values, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed });
    const out: BootstrapCi = {
      ...base,
      estimate: r.estimate,
      lower: r.lower,
      upper: r.upper,
      se: Number.isFinite(r.se) ? r.se : null,
      rng: r.rng,
      engine: r.engine,
      se_clt: values.length > 1 ? cltStandardError(values, { ddof: 1 }) : null,
      se_clt_ddof0: cltStandardError(values, { ddof: 0 }),
    };
    if (values.every((v) => v === values[0])) {
      out.note = 'every value is identical, so the bootstrap has no spread and the interval has zero width; for 0/1 data, ci exact gives an honest interval';
    }
    if (clusters) {
      out.clusters = (r as unknown as { clusters: number }).clusters;
      out.se_clustered =
        out.clusters > 1
          ? {
              cr0: clusteredStandardError(values, clusters, { variant: 'cr0' }),
              cr1: clusteredStandardError(values, clusters, { variant: 'cr1' }),
              miller: clusteredStandardError(values, clusters, { variant: 'miller' }),
            }
          : null;
    }
    return out;
  } catch (err) {
    if (!(err instanceof StandoffError) || err.kind !== 'data') throw err;
    return { ...base, estimate: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null, lower: null, upper: null, se: null, se_clt: null, se_clt_ddof0: null, note: `undefined: ${err.message}` };
  }
}

export async function ciBootstrap(src: StoreSource, o: BootstrapCiOptions): Promise<BootstrapCi | BootstrapCi[]> {
  if (o.input) return (await import('./ci-input.ts')).ciBootstrapInput(o);
  if (!o.metric) throw usageError('ci.missingArg', 'give --metric NAME (see standoff ci --list-metrics) or --input FILE --value COL');
  const by = o.by ?? [];
  if (o.cluster) checkColumns([o.cluster], '--cluster');
  return withStore(src, async (conn) => {
    const table = await loadMetric(conn, o.metric!, by);
    if (table.numRows === 0) throw dataError('metric.empty', `metric ${o.metric} has no observations in this store`);
    const values = float64Column(table, 'value');
    const key = (i: number) => by.map((c) => String(table.getChild(c)!.get(i))).join('\u0000');
    const clusterCol = o.cluster ? table.getChild(o.cluster)! : null;
    const results: BootstrapCi[] = [];
    let start = 0;
    for (let i = 1; i <= table.numRows; i++) {
      if (i < table.numRows && key(i) === key(start)) continue;
      const group: Group = {};
      for (const c of by) group[c] = table.getChild(c)!.get(start) as string | number | null;
      const clusters = clusterCol ? Array.from({ length: i - start }, (_, j) => String(clusterCol.get(start + j))) : null;
      const r = intervalFor(values.subarray(start, i), clusters, o);
      results.push(by.length ? { group, metric: o.metric, ...r } : { metric: o.metric, ...r });
      start = i;
    }
    return by.length ? results : results[0];
  });
}

export interface PairedCiOptions {
  metric?: string;
  a?: string;
  b?: string;
  cluster?: string;
  input?: string;
  item?: string;
  arm?: string;
  value?: string;
  method: Method;
  level: number;
  seed: number;
  resamples: number;
}

export interface PairedCi {
  a: string;
  b: string;
  metric?: string;
  n: number;
  dropped_unpaired: number;
  clusters?: number;
  mean_a: number;
  mean_b: number;
  mean_diff: number;
  lower: number | null;
  upper: number | null;
  level: number;
  method: Method;
  resamples: number;
  seed: number;
  se_bootstrap: number | null;
  se_paired: number;
  se_paired_ddof0: number;
  se_unpaired: number;
  se_clustered?: number | null;
  correlation: number | null;
  /** Two-sided normal-approximation p-value of mean_diff / se (clustered SE when --cluster). */
  p_value: number | null;
  /** Smallest true difference detectable with 80% power at alpha 0.05 (two-sided) at this n and spread. */
  mde: number | null;
  note?: string;
}

export function pairedFrom(a: string, b: string, keys: string[], va: Map<string, number>, vb: Map<string, number>, clusterOf: Map<string, string> | null, o: PairedCiOptions, metric?: string): PairedCi {
  const shared = keys.filter((k) => va.has(k) && vb.has(k));
  const dropped = new Set([...va.keys(), ...vb.keys()]).size - shared.length;
  if (shared.length === 0) throw dataError('paired.noPairs', `--a "${a}" and --b "${b}" share no paired items`);
  const xa = Float64Array.from(shared, (k) => va.get(k)!);
  const xb = Float64Array.from(shared, (k) => vb.get(k)!);
  if (shared.length < 2) throw dataError('paired.tooFew', `--a "${a}" and --b "${b}" share ${shared.length} paired item; a paired interval needs at least 2`);
  const se = pairedStandardError(xa, xb, { ddof: 1 });
  const se0 = pairedStandardError(xa, xb, { ddof: 0 });
  const opts = { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed };
  let lower: number | null;
  let upper: number | null;
  let seBoot: number | null;
  let clusters: number | undefined;
  let seClustered: number | null | undefined;
  if (clusterOf) {
    const diff = Float64Array.from(shared, (_, i) => xa[i] - xb[i]);
    const ids = shared.map((k) => clusterOf.get(k)!);
    const r = clusterBootstrap(diff, ids, opts);
    [lower, upper, seBoot, clusters] = [r.lower, r.upper, r.se, r.clusters];
    seClustered = clusters > 1 ? clusteredStandardError(diff, ids, { variant: 'cr1' }) : null;
  } else {
    const r = pairedBootstrap(xa, xb, opts);
    [lower, upper, seBoot] = [r.lower, r.upper, r.se];
  }
  const seTest = clusterOf ? (seClustered ?? null) : se.sePaired;
  const z = seTest && seTest > 0 ? Math.abs(se.meanDiff) / seTest : null;
  const out: PairedCi = {
    a,
    b,
    ...(metric ? { metric } : {}),
    n: shared.length,
    dropped_unpaired: dropped,
    ...(clusters !== undefined ? { clusters } : {}),
    mean_a: se.meanA,
    mean_b: se.meanB,
    mean_diff: se.meanDiff,
    lower,
    upper,
    level: o.level,
    method: o.method,
    resamples: o.resamples,
    seed: o.seed,
    se_bootstrap: seBoot !== null && Number.isFinite(seBoot) ? seBoot : null,
    se_paired: se.sePaired,
    se_paired_ddof0: se0.sePaired,
    se_unpaired: se.seUnpaired,
    ...(clusterOf ? { se_clustered: seClustered ?? null } : {}),
    correlation: Number.isFinite(se.correlation) ? se.correlation : null,
    p_value: z === null ? null : 2 * normalCdf(-z, 0, 1),
    mde: se.sdDiff > 0 ? minimumDetectableEffect({ n: shared.length, sdDiff: se.sdDiff }) : null,
  };
  if (se.sdDiff === 0) out.note = 'every paired difference is identical: the interval has zero width and no p-value is defined';
  return out;
}

export async function ciPaired(src: StoreSource, o: PairedCiOptions): Promise<PairedCi> {
  if (!o.a || !o.b) throw usageError('ci.missingArg', 'ci paired needs --a and --b');
  if (o.a === o.b) throw usageError('ci.sameArms', `--a and --b are both "${o.a}"`);
  if (o.input) {
    const r = await (await import('./ci-input.ts')).ciPairedInput(o);
    if (Array.isArray(r)) throw usageError('ci.conflict', 'ciPaired gives one comparison; use ciPairedInput for --by');
    return r;
  }
  if (!o.metric) throw usageError('ci.missingArg', 'give --metric NAME, or --input FILE --item COL --arm COL --value COL');
  getMetric(o.metric);
  if (o.cluster) checkColumns([o.cluster], '--cluster');
  return withStore(src, async (conn) => {
    const table = await loadMetric(conn, o.metric!);
    const subj = table.getChild('subject_model')!;
    const scen = table.getChild('scenario_id')!;
    const ep = table.getChild('epoch')!;
    const val = float64Column(table, 'value');
    const clusterCol = o.cluster ? table.getChild(o.cluster)! : null;
    const va = new Map<string, number>();
    const vb = new Map<string, number>();
    const clusterOf = clusterCol ? new Map<string, string>() : null;
    const keys: string[] = [];
    const subjects = new Set<string>();
    for (let i = 0; i < table.numRows; i++) {
      const s = String(subj.get(i));
      subjects.add(s);
      const m = s === o.a ? va : s === o.b ? vb : null;
      if (!m) continue;
      const key = `${scen.get(i)}/${ep.get(i)}`;
      if (m.has(key)) throw dataError('paired.duplicateItem', `subject "${s}" has two ${o.metric} values for scenario x epoch ${key} (several runs?): pick one with --run`);
      m.set(key, val[i]);
      clusterOf?.set(key, String(clusterCol!.get(i)));
      keys.push(key);
    }
    for (const [flag, s] of [['--a', o.a!], ['--b', o.b!]] as const) {
      if (!subjects.has(s)) throw dataError('paired.noArm', `${flag} "${s}" has no ${o.metric} values (subjects: ${[...subjects].sort().join(', ')})`);
    }
    return pairedFrom(o.a!, o.b!, [...new Set(keys)].sort(), va, vb, clusterOf, o, o.metric);
  });
}
