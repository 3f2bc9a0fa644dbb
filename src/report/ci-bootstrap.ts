/**
 * `standoff ci bootstrap` and `standoff ci paired`: metric vectors come from the store as Arrow
 * typed columns (grouped in DuckDB order), or from a CSV/Parquet file; resampling is done by
 * `src/stats` with the given seed, which every result records. Analytic standard errors are
 * reported beside each bootstrap interval (CLT; clustered CR0/CR1/Miller with CR1 the one
 * Standoff reports, as Inspect AI does; the paired SE with its covariance term).
 *
 * Sampling unit: over the store, epochs repeat scenarios, so both commands cluster on
 * `scenario_id` by default (`--cluster COL` picks another column, `--no-cluster` treats every
 * observation or pair as independent and says so in `sampling` and `note`). Paired comparisons
 * use `comparePaired` (the report's pairwise table uses it too): a paired cluster bootstrap and
 * the clustered paired SE for p and the MDE. Values not measured (NULL) are left out and counted
 * in `not_measured`.
 */
import { bootstrapMean, clusterBootstrap, clusteredStandardError, cltStandardError } from '../stats/index.ts';
import { StandoffError, dataError, usageError } from '../errors.ts';
import { checkColumns, countNoanswer, countNotMeasured, loadMetric, type MetricKind, type Reducer } from './metrics.ts';
import { DEGENERATE, type Sampling } from './rates.ts';
import { comparePaired, type PairedComparison } from './paired-comparison.ts';
import { float64Column, metricFields, resolveMetric, withStore, type Group, type MetricChoice, type StoreSource } from './ci.ts';

type Method = 'percentile' | 'bca' | 'basic';

/** The default cluster column over the store: a scenario's epochs are correlated observations. */
export const DEFAULT_CLUSTER = 'scenario_id';

export interface BootstrapCiOptions extends MetricChoice {
  by?: string[];
  /** Cluster column; over the store `undefined` means scenario_id, and `false` (`--no-cluster`) none. */
  cluster?: string | false;
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
  /** Inferred kind of the store metric, and the epoch reducer applied. */
  kind?: MetricKind | null;
  reduce?: Reducer;
  /** NOANSWER samples a scorer metric leaves out. */
  noanswer?: number;
  n: number;
  /** Observations not measured (NULL), left out (store metrics only). */
  not_measured?: number;
  /** 'clustered': whole clusters resampled; 'independent': every observation treated as independent. */
  sampling: Sampling;
  cluster?: string;
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
export function intervalFor(values: Float64Array, clusters: string[] | null, o: BootstrapCiOptions, clusterName?: string): BootstrapCi {
  const sampling: Sampling = clusters ? 'clustered' : 'independent';
  const base = { n: values.length, sampling, ...(clusters && clusterName ? { cluster: clusterName } : {}), estimate: null, lower: null, upper: null, level: o.level, method: o.method, resamples: o.resamples, seed: o.seed };
  try {
    const r = clusters
      ? clusterBootstrap(values, clusters, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed })
      : bootstrapMean(values, { resamples: o.resamples, level: o.level, method: o.method, seed: o.seed });
    const out: BootstrapCi = {
      ...base,
      estimate: r.estimate,
      lower: Number.isFinite(r.lower) ? r.lower : null,
      upper: Number.isFinite(r.upper) ? r.upper : null,
      se: Number.isFinite(r.se) ? r.se : null,
      rng: r.rng,
      engine: r.engine,
      se_clt: values.length > 1 ? cltStandardError(values, { ddof: 1 }) : null,
      se_clt_ddof0: cltStandardError(values, { ddof: 0 }),
    };
    if (r.note) out.note = r.note;
    else if (clusters ? r.se === 0 : values.every((v) => v === values[0])) {
      // No spread: a [p, p] interval would understate the uncertainty (the report says the same).
      out.lower = null;
      out.upper = null;
      out.note = clusters ? DEGENERATE : 'not reported: every value is identical, so the bootstrap has no spread; for 0/1 data, ci exact gives an honest interval';
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

/**
 * `--cluster` over the store: the column, scenario_id by default, or none with `--no-cluster`.
 * After `--reduce` every item is one observation, so there is no default cluster.
 */
function storeCluster(cluster: string | false | undefined, reduced = false): string | null {
  if (cluster === false || (reduced && cluster === undefined)) return null;
  const c = cluster ?? DEFAULT_CLUSTER;
  checkColumns([c], '--cluster');
  return c;
}

export async function ciBootstrap(src: StoreSource, o: BootstrapCiOptions): Promise<BootstrapCi | BootstrapCi[]> {
  if (o.input) return (await import('./ci-input.ts')).ciBootstrapInput({ ...o, cluster: o.cluster || undefined });
  if (!o.metric && !o.metricSql) throw usageError('ci.missingArg', 'give --metric NAME (see standoff ci --list-metrics), --metric-sql FILE, or --input FILE --value COL');
  const by = o.by ?? [];
  const cluster = storeCluster(o.cluster, o.reduce !== undefined);
  return withStore(src, async (conn) => {
    const resolved = await resolveMetric(conn, src, o, by);
    const m = resolved.def;
    const fields = metricFields(resolved);
    const table = await loadMetric(conn, m, by);
    const missing = await countNotMeasured(conn, m, by);
    const noanswer = m.source === 'scorer' && !m.reduce ? await countNoanswer(conn, m, by) : null;
    if (table.numRows === 0) throw dataError('metric.empty', `metric ${m.name} has no measured observations in this store${missing.size ? ` (${[...missing.values()].reduce((a, b) => a + b, 0)} not measured)` : ''}`);
    const values = float64Column(table, 'value');
    const key = (i: number) => by.map((c) => String(table.getChild(c)!.get(i))).join('\u0000');
    const clusterCol = cluster ? table.getChild(cluster)! : null;
    const scenario = table.getChild('scenario_id')!;
    const results: BootstrapCi[] = [];
    let start = 0;
    for (let i = 1; i <= table.numRows; i++) {
      if (i < table.numRows && key(i) === key(start)) continue;
      const group: Group = {};
      for (const c of by) group[c] = table.getChild(c)!.get(start) as string | number | null;
      const clusters = clusterCol ? Array.from({ length: i - start }, (_, j) => String(clusterCol.get(start + j))) : null;
      const r = intervalFor(values.subarray(start, i), clusters, o, cluster ?? undefined);
      r.not_measured = missing.get(key(start)) ?? 0;
      if (noanswer) r.noanswer = noanswer.get(key(start)) ?? 0;
      if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
      if (!clusters && !m.reduce) {
        const perScenario = new Map<string, number>();
        for (let j = start; j < i; j++) perScenario.set(String(scenario.get(j)), (perScenario.get(String(scenario.get(j))) ?? 0) + 1);
        const maxK = Math.max(...perScenario.values());
        if (maxK > 1) r.note = `${r.note ? `${r.note}; ` : ''}--no-cluster: epochs repeat scenarios (up to ${maxK} observations of one scenario) and this interval treats them as independent, so it is too narrow`;
      }
      results.push(by.length ? { group, ...fields, ...r } : { ...fields, ...r });
      start = i;
    }
    return by.length ? results : results[0];
  });
}

export interface PairedCiOptions extends MetricChoice {
  a?: string;
  b?: string;
  /** Cluster column; over the store `undefined` means scenario_id, and `false` (`--no-cluster`) none. */
  cluster?: string | false;
  input?: string;
  item?: string;
  arm?: string;
  value?: string;
  method: Method;
  level: number;
  seed: number;
  resamples: number;
}

/** `ci paired`: the arms, the metric, how many items could not be paired, then `comparePaired`'s fields. */
export type PairedCi = { a: string; b: string; metric?: string; kind?: MetricKind | null; reduce?: Reducer; dropped_unpaired: number } & PairedComparison;

export function pairedFrom(a: string, b: string, keys: string[], va: Map<string, number>, vb: Map<string, number>, clusterOf: Map<string, string> | null, clusterName: string | null, o: PairedCiOptions, metric?: string): PairedCi {
  const shared = keys.filter((k) => va.has(k) && vb.has(k));
  const dropped = new Set([...va.keys(), ...vb.keys()]).size - shared.length;
  if (shared.length === 0) throw dataError('paired.noPairs', `--a "${a}" and --b "${b}" share no paired items`);
  const xa = Float64Array.from(shared, (k) => va.get(k)!);
  const xb = Float64Array.from(shared, (k) => vb.get(k)!);
  if (shared.length < 2) throw dataError('paired.tooFew', `--a "${a}" and --b "${b}" share ${shared.length} paired item; a paired interval needs at least 2`);
  const ids = clusterOf ? shared.map((k) => clusterOf.get(k)!) : null;
  const r = comparePaired(xa, xb, ids, clusterName, { level: o.level, seed: o.seed, resamples: o.resamples, method: o.method });
  return { a, b, ...(metric ? { metric } : {}), dropped_unpaired: dropped, ...r };
}

export async function ciPaired(src: StoreSource, o: PairedCiOptions): Promise<PairedCi> {
  if (!o.a || !o.b) throw usageError('ci.missingArg', 'ci paired needs --a and --b');
  if (o.a === o.b) throw usageError('ci.sameArms', `--a and --b are both "${o.a}"`);
  if (o.input) {
    const r = await (await import('./ci-input.ts')).ciPairedInput({ ...o, cluster: o.cluster || undefined });
    if (Array.isArray(r)) throw usageError('ci.conflict', 'ciPaired gives one comparison; use ciPairedInput for --by');
    return r;
  }
  if (!o.metric && !o.metricSql) throw usageError('ci.missingArg', 'give --metric NAME, --metric-sql FILE, or --input FILE --item COL --arm COL --value COL');
  const cluster = storeCluster(o.cluster, o.reduce !== undefined);
  return withStore(src, async (conn) => {
    const resolved = await resolveMetric(conn, src, o);
    const metric = resolved.def.name;
    const table = await loadMetric(conn, resolved.def);
    const subj = table.getChild('subject_model')!;
    const scen = table.getChild('scenario_id')!;
    const ep = table.getChild('epoch')!;
    const val = float64Column(table, 'value');
    const clusterCol = cluster ? table.getChild(cluster)! : null;
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
      if (m.has(key)) throw dataError('paired.duplicateItem', `subject "${s}" has two ${metric} values for scenario x epoch ${key} (several runs?): pick one with --run`);
      m.set(key, val[i]);
      clusterOf?.set(key, String(clusterCol!.get(i)));
      keys.push(key);
    }
    for (const [flag, s] of [['--a', o.a!], ['--b', o.b!]] as const) {
      if (!subjects.has(s)) throw dataError('paired.noArm', `${flag} "${s}" has no ${metric} values (subjects: ${[...subjects].sort().join(', ')})`);
    }
    const p = pairedFrom(o.a!, o.b!, [...new Set(keys)].sort(), va, vb, clusterOf, cluster, o, metric);
    const { a, b, metric: _m, ...rest } = p;
    const r: PairedCi = { a, b, ...metricFields(resolved), ...rest };
    if (resolved.note) r.note = `${r.note ? `${r.note}; ` : ''}${resolved.note}`;
    if (!clusterOf && !resolved.def.reduce && new Set([...va.keys()].map((k) => k.slice(0, k.lastIndexOf('/')))).size < va.size) {
      r.note = `${r.note ? `${r.note}; ` : ''}--no-cluster: epochs repeat scenarios and this interval, p and MDE treat the pairs as independent, so they are too optimistic`;
    }
    return r;
  });
}
