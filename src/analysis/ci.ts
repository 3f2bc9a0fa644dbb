/**
 * Library behind `standoff ci exact|bootstrap|paired`, `standoff agreement`, `standoff judges`
 * and `standoff probes`: loads data from the trace store (aggregation in DuckDB, only per-group
 * vectors come into JS) or from a CSV/Parquet `--input` file, and calls `src/stats`.
 * Every function returns plain, documented JSON-ready objects.
 */
import { accuracyForm, type AccuracyForm } from '../report/probe-accuracy-form.ts';
import { createExcludedStates, loadSensitivity, type ProbeSensitivity } from './probe-sensitivity.ts';
import { ConcentrationCollector, loadConcentration, type ConcentrationReport } from './probe-concentration.ts';
import { loadProbeLadder, type ProbeLadder } from './probe-ladder.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  clopperPearson,
  medianOfJudges,
  probeOutcomes,
  probeSufficiency,
  type AlphaLevel,
  type BinomialInterval,
  type Judge,
  type JudgedSample,
  type ProbeRow,
  type Sided,
} from '../stats/index.ts';
import { SELF_EXCLUSION_DEFAULT } from '../stats/judge-panel.ts';
import { openStore } from '../store/open-store.ts';
import { query, quoteIdent, type Plain, type SqlParams } from '../store/duckdb.ts';
import { float64Column } from '../store/arrow.ts';
import { dataError, usageError } from '../errors.ts';
import { REDUCERS, checkColumns, countNoanswer, metricStats, reduceMetric, storeMetrics, type MetricDef, type MetricKind, type Reducer } from './metrics.ts';
import { basename } from 'node:path';
import { orderedInterval } from './ci-exact.ts';
import { agreementFromCounts, loadJudgePatterns, patternMatrix, type AgreementResult } from './judge-patterns.ts';
import { PROBE_GROUP_COLUMNS, loadProbeTables, type ProbeTables } from './probe-tables.ts';
import { numbers, readInputFile, texts, type InputColumn } from './input-file.ts';

export interface StoreSource {
  traces: string;
  runs?: string[];
}

/**
 * Opens the store for a statistics command, sandboxed as `standoff sql` is (external access off,
 * only the store readable): a SQL metric (`--metric-sql`, `<store>/metrics/*.sql`) is user SQL.
 * Bounded as the report is (`ANALYSIS_DB`: 2 threads, 1 GB, a private spill directory).
 */
export async function withStore<T>(src: StoreSource, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const store = await openStore(src.traces, { runs: src.runs, requireRuns: true, sandbox: true, bounded: true });
  try {
    return await fn(store.conn);
  } finally {
    store.close();
  }
}

export type Group = Record<string, string | number | null>;

/** How a command names its metric over the store. */
export interface MetricChoice {
  metric?: string;
  /** `--metric-sql FILE`: a SQL metric named after the file (the metric when --metric is not given). */
  metricSql?: string;
  /** `--reduce R`: epochs reduced per (run, subject, scenario) before intervals. */
  reduce?: Reducer;
}

export interface ResolvedMetric {
  def: MetricDef;
  /** Inferred from the measured values (after the reduction). */
  kind: MetricKind | null;
  /** Which metric a name meant, when a scorer shares a built-in's name. */
  note?: string;
}

/**
 * The metric a command asked for: the store's registry (`storeMetrics`: built-ins, scorers, SQL
 * files), the reducer applied, and the kind inferred. A reducer needs observations of items, not
 * of epochs, so it cannot go with --by epoch or episode_id; at_least_one needs a 0/1 metric.
 */
export async function resolveMetric(conn: DuckDBConnection, src: StoreSource, c: MetricChoice, by: string[] = [], opts: { kind?: boolean } = {}): Promise<ResolvedMetric> {
  if (c.reduce !== undefined && !(REDUCERS as readonly string[]).includes(c.reduce)) throw usageError('ci.badReduce', `--reduce must be one of ${REDUCERS.join(', ')}, got "${c.reduce}"`);
  const reg = await storeMetrics(conn, { storeDir: src.traces, metricSql: c.metricSql ? [c.metricSql] : [] });
  const name = c.metric ?? (c.metricSql ? basename(c.metricSql).replace(/\.sql$/i, '') : undefined);
  if (!name) throw usageError('ci.missingArg', 'give --metric NAME (see standoff ci --list-metrics) or --metric-sql FILE');
  let def = reg.get(name);
  let note: string | undefined;
  if (!reg.standoff && def.source === 'built-in' && reg.metrics.some((m) => m.source === 'scorer' && m.scorer === name)) {
    note = `"${name}" is the built-in metric; this store's scorer ${name} is metric score:${name}`;
  }
  if (c.reduce) {
    for (const col of by) if (col === 'epoch' || col === 'episode_id') throw usageError('ci.reduceBy', `--by ${col} cannot go with --reduce (epochs are reduced to one value per item)`);
    if (c.reduce === 'at_least_one') {
      const k = (await metricStats(conn, def)).kind;
      if (k !== null && k !== 'binary') throw usageError('ci.reduceNotBinary', `--reduce at_least_one needs a 0/1 metric; ${def.name} is ${k}`);
    }
    def = reduceMetric(def, c.reduce);
  }
  // `kind: false`: the caller infers the kind from its own aggregate (`kindFromAggregate`), saving a scan of the metric's rows.
  const kind = opts.kind === false ? null : (await metricStats(conn, def)).kind;
  return { def, kind, ...(note ? { note } : {}) };
}

export interface MetricListing {
  metric: string;
  source: 'built-in' | 'scorer' | 'sql';
  kind: MetricKind | null;
  /** Measured observations, and those not measured (NULL), in the store. */
  observations: number;
  not_measured: number;
  description: string;
  /** The store has measured values of it (the store's own metrics are always listed as available). */
  available: boolean;
}

/**
 * `ci --list-metrics --traces S`: the store's metrics (built-in, one per scorer, SQL files) with
 * each one's kind and counts. A scorer named like a built-in is listed as `score:NAME`.
 */
export async function listStoreMetrics(src: StoreSource, opts: { metricSql?: string } = {}): Promise<MetricListing[]> {
  return withStore(src, async (conn) => {
    const reg = await storeMetrics(conn, { storeDir: src.traces, metricSql: opts.metricSql ? [opts.metricSql] : [] });
    if (reg.broken.length) throw reg.broken[0].error;
    const out: MetricListing[] = [];
    for (const m of reg.metrics) {
      const st = await metricStats(conn, m);
      const source = m.source ?? 'built-in';
      out.push({ metric: m.name, source, kind: st.kind, observations: st.observations, not_measured: st.not_measured, description: m.description, available: source !== 'built-in' || st.observations > 0 });
    }
    // The store's own metrics (scorers, SQL files) first, then built-ins with data, then the rest.
    const rank = (x: MetricListing) => (x.source !== 'built-in' ? 0 : x.available ? 1 : 2);
    return out.map((x, i) => ({ x, i })).sort((a, b) => rank(a.x) - rank(b.x) || a.i - b.i).map(({ x }) => x);
  });
}

/** The fields every store-metric result carries: metric, kind, reducer (when one was applied). */
export const metricFields = (r: ResolvedMetric) => ({ metric: r.def.name, kind: r.kind, ...(r.def.reduce ? { reduce: r.def.reduce } : {}) });

/* ------------------------------------------------------------------ ci exact */

export interface ExactResult extends BinomialInterval {
  group?: Group;
  /** The store metric, its inferred kind and the epoch reducer (metrics only). */
  metric?: string;
  kind?: MetricKind | null;
  reduce?: Reducer;
  /** NOANSWER samples a scorer metric leaves out of the denominator. */
  noanswer?: number;
  /** Observations whose value was not measured (NULL): in no denominator (metrics only). */
  not_measured?: number;
  /** Clopper-Pearson treats every observation as independent. */
  sampling?: 'independent';
  /** Most observations of one scenario in the group (epochs that repeat it; metrics only). */
  max_per_scenario?: number;
  note?: string;
}

export { ciExactCounts, orderedInterval } from './ci-exact.ts';

/** The plain statement every exact interval over repeated scenarios carries. */
export const exactRepeatsNote = (metric: string, k: number) =>
  `epochs repeat scenarios (up to ${k} observations of one scenario): this exact interval treats them as independent and is too narrow; standoff ci bootstrap --metric ${metric} clusters on scenario_id (or reduce epochs per item with --reduce)`;

/** The note of a group whose values are not all 0/1: no binomial count, so no exact interval. */
export const notBinaryNote = (nonbinary: number, metric: string | undefined) =>
  `not binary: ${nonbinary} value(s) are not 0 or 1 (e.g. split judge medians); use standoff ci bootstrap --metric ${metric}`;

/**
 * `ci exact --metric M [--by COLS]` over the store: successes and trials counted in DuckDB per
 * group (measured values only; NULL = not measured is counted apart). A metric that is not binary
 * by definition (alignment) is accepted when every measured value is 0 or 1. With
 * `aggregates: true`, reads the `aggregates` table (rows ingested from a published results table)
 * for metric names as stored there.
 */
export async function ciExactMetric(
  src: StoreSource,
  opts: MetricChoice & { by?: string[]; level?: number; sided?: Sided; aggregates?: boolean },
): Promise<ExactResult[]> {
  const by = opts.by ?? [];
  return withStore(src, async (conn) => {
    let rows;
    let resolved: ResolvedMetric | null = null;
    let noanswer = new Map<string, number>();
    if (opts.aggregates) {
      if (!opts.metric) throw usageError('ci.missingArg', '--aggregates needs --metric NAME');
      for (const c of by) if (c !== 'subject_model' && c !== 'run_id') throw usageError('metric.unknownColumn', `--by column "${c}" does not exist in aggregates; use subject_model or run_id`);
      const keys = by.map(quoteIdent);
      const sel = keys.length ? `${keys.join(', ')}, ` : '';
      rows = (
        await query(
          conn,
          `SELECT ${sel}CAST(sum(successes) AS BIGINT) AS k, CAST(sum(trials) AS BIGINT) AS n FROM aggregates WHERE metric = $metric ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')}` : ''}`,
          { metric: opts.metric },
        )
      ).rows;
      if (rows.length === 0 || rows.every((r) => r.n === null)) {
        const known = (await query(conn, 'SELECT DISTINCT metric FROM aggregates ORDER BY 1')).rows.map((r) => r.metric);
        throw usageError('metric.unknown', `no aggregate rows for metric "${opts.metric}" (aggregates hold: ${known.join(', ') || 'none'})`);
      }
    } else {
      checkColumns(by, '--by');
      resolved = await resolveMetric(conn, src, opts, by, { kind: false });
      const m = resolved.def;
      noanswer = await countNoanswer(conn, m, by);
      const keys = by.map(quoteIdent);
      const sel = keys.length ? `${keys.join(', ')}, ` : '';
      const grp = keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')}` : '';
      // One scan of the metric's rows: the counts, and the kind's inputs (min, max), so no separate metricStats pass.
      rows = (
        await query(
          conn,
          `SELECT ${sel}CAST(sum(k) AS BIGINT) AS k, CAST(sum(n) AS BIGINT) AS n, CAST(sum(missing) AS BIGINT) AS missing,
                  CAST(sum(nonbinary) AS BIGINT) AS nonbinary, CAST(max(n) AS BIGINT) AS max_k, min(lo) AS lo, max(hi) AS hi
           FROM (SELECT ${sel}scenario_id, sum(value) FILTER (WHERE value = 1) AS k, count(value) AS n, count(*) - count(value) AS missing,
                        count(*) FILTER (WHERE value NOT IN (0, 1)) AS nonbinary, min(value) AS lo, max(value) AS hi
                 FROM (${m.sql}) GROUP BY ALL) ${grp}`,
          m.params,
        )
      ).rows;
      resolved = { ...resolved, kind: await kindFromAggregate(conn, m, rows) };
      if (rows.length === 0 || rows.every((r) => r.n === null || Number(r.n) + Number(r.missing) === 0)) throw dataError('metric.empty', `metric ${m.name} has no observations in this store`);
      const nonbinary = rows.reduce((a, r) => a + Number(r.nonbinary ?? 0), 0);
      if (rows.every((r) => Number(r.nonbinary ?? 0) > 0)) {
        const what = resolved.kind && resolved.kind !== 'binary' ? `is ${resolved.kind}: ${nonbinary} value(s) are not 0 or 1` : `has ${nonbinary} value(s) that are not 0 or 1 (e.g. split judge medians)`;
        throw usageError('metric.notBinary', `metric ${m.name} ${what}; use standoff ci bootstrap --metric ${m.name}${m.reduce ? ` --reduce ${m.reduce}` : ''}`);
      }
    }
    const fields = resolved ? metricFields(resolved) : null;
    const keyOf = (r: Record<string, unknown>) => by.map((c) => String(r[c])).join('\u0000');
    return rows.map((r) => {
      const group: Group = {};
      for (const c of by) group[c] = r[c] as string | number | null;
      const nb = Number(r.nonbinary ?? 0);
      if (nb > 0) {
        // A group whose values are not all 0/1 has no binomial count: no exact interval, and the reason.
        const none: ExactResult = { ...fields, ...orderedInterval(clopperPearson(0, 0, { level: opts.level, sided: opts.sided })), trials: Number(r.n ?? 0), not_measured: Number(r.missing ?? 0), sampling: 'independent', note: notBinaryNote(nb, fields?.metric ?? opts.metric) };
        return by.length ? { group, ...none } : none;
      }
      const ci: ExactResult = { ...fields, ...orderedInterval(clopperPearson(Number(r.k ?? 0), Number(r.n ?? 0), { level: opts.level, sided: opts.sided })) };
      if (resolved) {
        const maxK = Number(r.max_k ?? 0);
        ci.not_measured = Number(r.missing ?? 0);
        if (resolved.def.source === 'scorer' && !resolved.def.reduce) ci.noanswer = noanswer.get(keyOf(r)) ?? 0;
        ci.sampling = 'independent';
        ci.max_per_scenario = maxK;
        const notes = [resolved.note, maxK > 1 ? exactRepeatsNote(resolved.def.name, maxK) : undefined].filter(Boolean);
        if (notes.length) ci.note = notes.join('; ');
      }
      return by.length ? { group, ...ci } : ci;
    });
  });
}

/**
 * A metric's kind (`KIND_SQL`) from per-group counts already read: no measured value → null, no
 * value other than 0/1 → binary, all in [0, 1] → bounded; otherwise (ordinal or continuous, which
 * need the distinct values) one `metricStats` pass.
 */
export async function kindFromAggregate(conn: DuckDBConnection, m: MetricDef, rows: Record<string, unknown>[]): Promise<MetricKind | null> {
  const n = rows.reduce((a, r) => a + Number(r.n ?? 0), 0);
  if (n === 0) return null;
  if (rows.every((r) => Number(r.nonbinary ?? 0) === 0)) return 'binary';
  const lo = rows.reduce((a, r) => (r.lo === null ? a : Math.min(a, Number(r.lo))), Infinity);
  const hi = rows.reduce((a, r) => (r.hi === null ? a : Math.max(a, Number(r.hi))), -Infinity);
  if (lo >= 0 && hi <= 1) return 'bounded';
  return (await metricStats(conn, m)).kind;
}

/* ----------------------------------------------------------------- agreement */

export type { AgreementResult } from './judge-patterns.ts';

/** Builds a raters x units matrix from long-form (unit, rater, value) triples. */
export function longToMatrix(units: string[], raters: string[], values: (number | string | null)[]): (number | string | null)[][] {
  const unitIndex = new Map<string, number>();
  const raterIndex = new Map<string, number>();
  for (const u of [...new Set(units)].sort()) unitIndex.set(u, unitIndex.size);
  for (const r of [...new Set(raters)].sort()) raterIndex.set(r, raterIndex.size);
  const m: (number | string | null)[][] = Array.from({ length: raterIndex.size }, () => new Array(unitIndex.size).fill(null));
  const seen = new Set<string>();
  for (let i = 0; i < units.length; i++) {
    const key = `${raters[i]}\u0000${units[i]}`;
    if (seen.has(key)) throw dataError('input.duplicateRating', `rater "${raters[i]}" rated unit "${units[i]}" twice (row ${i + 1})`);
    seen.add(key);
    m[raterIndex.get(raters[i])!][unitIndex.get(units[i])!] = values[i];
  }
  return m;
}

/** Alpha and its bootstrap interval for a raters x units matrix (each unit counted once). */
export function agreementOf(matrix: (number | string | null)[][], opts: { level: AlphaLevel; ciLevel?: number; seed: number; resamples: number }): AgreementResult {
  return agreementFromCounts(matrix, new Array<number>(matrix[0]?.length ?? 0).fill(1), opts);
}

/**
 * `agreement` over the store: units are episodes, raters are judge models, values the judgments'
 * values (self-excluded verdicts included: they are still the judge's reading; ERROR verdicts have
 * none). The judgments are counted as patterns in SQL (`loadJudgePatterns`), as the report does.
 */
/** How self-exclusion enters `agreement` (printed with it, and in the report's judge section). */
export const AGREEMENT_SELF_EXCLUSION = `${SELF_EXCLUSION_DEFAULT} for medians; alpha compares judges on all their verdicts, self-judgments included`;

export async function agreementFromStore(src: StoreSource, opts: { scorer?: string; level: AlphaLevel; ciLevel?: number; seed: number; resamples: number }): Promise<AgreementResult & { scorer: string; self_exclusion: string }> {
  const scorer = opts.scorer ?? 'reasoning_action_alignment';
  return withStore(src, async (conn) => {
    const p = await loadJudgePatterns(async (sql, params) => (await query(conn, sql, params)).rows, scorer);
    const matrix = patternMatrix(p);
    if (!matrix.some((row) => row.some((v) => v !== null))) throw dataError('agreement.noJudgments', `no judgments with a value for scorer "${scorer}" in this store${await judgedScorersHint(conn)}`);
    return { scorer, ...agreementFromCounts(matrix, p.patterns.map((x) => x.count), opts), self_exclusion: AGREEMENT_SELF_EXCLUSION };
  });
}

/**
 * What to say when the default scorer has no judgments: the judged scorers the store has (with
 * their judgments with a value), and the flag that picks one.
 */
export async function judgedScorersHint(conn: DuckDBConnection): Promise<string> {
  const rows = (await query(conn, `SELECT scorer, count(value) AS n FROM judgments GROUP BY scorer HAVING count(value) > 0 ORDER BY n DESC, scorer`)).rows;
  if (rows.length === 0) return '; the store has no judgments with a value (ingest them with ingest csv --judge-columns, ingest inspect, or standoff run with judges)';
  const list = rows.map((r) => `${JSON.stringify(String(r.scorer))} (${Number(r.n)})`).join(', ');
  return `; judged scorers in this store: ${list}; pass --scorer ${JSON.stringify(String(rows[0]!.scorer))}`;
}

/* -------------------------------------------------------------------- judges */

export interface JudgesResult {
  samples: { sample: string; subject_model: string; median: number | null; judges_used: string[]; judges_excluded: string[]; judges_missing: string[] }[];
  totals: { samples: number; excluded_verdicts: number; samples_with_no_judge: number; missing_verdicts: number; ties: number };
  exclude_by: string;
}

function judgesOf(judges: Judge[], samples: JudgedSample[], scores: (number | null)[][], excludeBy: 'model' | 'family' | 'none'): JudgesResult {
  const r = medianOfJudges({ judges, samples, scores }, { excludeBy });
  // A tie: an even number of remaining judges whose two middle values differ (the median is their mean).
  let ties = 0;
  r.perSample.forEach((s, j) => {
    const used = s.judgesUsed.map((id) => scores[judges.findIndex((x) => x.id === id)][j] as number).sort((a, b) => a - b);
    if (used.length % 2 === 0 && used.length > 0 && used[used.length / 2 - 1] !== used[used.length / 2]) ties++;
  });
  return {
    samples: r.perSample.map((s) => ({
      sample: s.sample,
      subject_model: s.subject_model,
      median: s.median,
      judges_used: s.judgesUsed,
      judges_excluded: s.judgesExcluded,
      judges_missing: s.judgesMissing,
    })),
    totals: {
      samples: r.totals.samples,
      excluded_verdicts: r.totals.excludedVerdicts,
      samples_with_no_judge: r.totals.samplesWithNoJudge,
      missing_verdicts: r.totals.missingVerdicts,
      ties,
    },
    exclude_by: r.excludeBy,
  };
}

/** Builds the judge x sample matrix from long rows. */
function judgeMatrix(rows: { sample: string; subject_model: string; subject_family?: string | null; judge: string; judge_model: string; judge_family?: string | null; value: number | null }[]) {
  const judges = new Map<string, Judge>();
  const samples = new Map<string, JudgedSample>();
  for (const r of rows) {
    // A model without a recorded family is its own family (the runner's convention, runner/config.ts).
    if (!judges.has(r.judge)) judges.set(r.judge, { id: r.judge, model: r.judge_model, family: r.judge_family ?? r.judge_model });
    if (!samples.has(r.sample)) samples.set(r.sample, { id: r.sample, subject_model: r.subject_model, subject_family: r.subject_family ?? r.subject_model });
  }
  const jl = [...judges.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const sl = [...samples.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const ji = new Map(jl.map((j, i) => [j.id, i]));
  const si = new Map(sl.map((s, i) => [s.id, i]));
  const scores: (number | null)[][] = jl.map(() => new Array(sl.length).fill(null));
  const seen = new Set<string>();
  for (const r of rows) {
    const key = `${r.judge}\u0000${r.sample}`;
    if (seen.has(key)) throw dataError('input.duplicateJudgment', `judge "${r.judge}" scored sample "${r.sample}" twice`);
    seen.add(key);
    scores[ji.get(r.judge)!][si.get(r.sample)!] = r.value;
  }
  return { judges: jl, samples: sl, scores };
}

/** `judges --input FILE` with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family). */
export async function judgesFromInput(file: string, opts: { excludeBy?: 'model' | 'family' | 'none'; missing?: 'error' | 'drop'; delimiter?: string } = {}): Promise<JudgesResult> {
  const fam = (c: string): InputColumn[] => [{ name: c, kind: 'text', optional: true, ifPresent: true }];
  const t = await readInputFile(
    file,
    [
      ...['sample', 'subject_model', 'judge', 'judge_model'].map((name): InputColumn => ({ name, kind: 'text' })),
      { name: 'value', kind: 'number', optional: true },
      ...fam('subject_family'),
      ...fam('judge_family'),
    ],
    { missing: opts.missing, delimiter: opts.delimiter },
  );
  const rows = texts(t, 'sample').map((s, i) => ({
    sample: s!,
    subject_model: texts(t, 'subject_model')[i]!,
    subject_family: t.values.subject_family ? (texts(t, 'subject_family')[i] ?? null) : null,
    judge: texts(t, 'judge')[i]!,
    judge_model: texts(t, 'judge_model')[i]!,
    judge_family: t.values.judge_family ? (texts(t, 'judge_family')[i] ?? null) : null,
    value: numbers(t, 'value')[i] ?? null,
  }));
  const m = judgeMatrix(rows);
  return judgesOf(m.judges, m.samples, m.scores, opts.excludeBy ?? SELF_EXCLUSION_DEFAULT);
}

/* `judges` over the store: `withJudgeMedians` in ./judge-medians.ts (verdict patterns, streamed samples). */

/* -------------------------------------------------------------------- probes */

export interface ProbesResult extends ProbeTables {
  /** With `concentration`: the section 5.3 analysis over subject_model (null when no state was read right). */
  concentration?: ConcentrationReport | null;
  /** Grouped by subject_model with two or more subjects: accuracy against error form (Spearman with three or more). */
  accuracy_form?: AccuracyForm;
  /** With `excludeStates`: the headline numbers with all states and without the flagged ones (the tables are without). */
  sensitivity?: ProbeSensitivity;
  /** The composition ladder per subject_model (section 6.1); steps not run have `run: false`. */
  ladder: ProbeLadder;
  level: number;
  seed: number;
  resamples: number;
}

/**
 * `probes [--by COLS]`: the paired-probe tables (`loadProbeTables`, the report's probe section
 * uses it too): distinct states and their answers, the four outcomes with intervals that resample
 * whole states, composition, ambiguous states apart, and sufficiency over the distinct states.
 */
export interface ProbesOptions {
  by?: string[];
  level?: number;
  seed?: number;
  resamples?: number;
  /** Also the error concentration against a permutation null (section 5.3); `resamples` permutations. */
  concentration?: boolean;
  /** k of the concentration (default half the subjects, rounded up). */
  minSubjects?: number;
  /** State ids to leave out (`--exclude-states FILE`, read by the caller): the tables are without them, `sensitivity` compares. */
  excludeStates?: string[];
}

export async function probesFromStore(src: StoreSource, opts: ProbesOptions = {}): Promise<ProbesResult> {
  const by = opts.by ?? ['subject_model'];
  for (const c of by) if (!(PROBE_GROUP_COLUMNS as readonly string[]).includes(c)) throw usageError('metric.unknownColumn', `--by column "${c}" does not exist; use ${PROBE_GROUP_COLUMNS.join(', ')}`);
  const level = opts.level ?? 0.95;
  const seed = opts.seed ?? 20261129;
  const resamples = opts.resamples ?? 10_000;
  return withStore(src, async (conn) => {
    const q = async (sql: string, params?: SqlParams) => (await query(conn, sql, params)).rows;
    const excl = opts.excludeStates !== undefined;
    if (excl) await createExcludedStates(q, opts.excludeStates!);
    const byModel = by.length === 1 && by[0] === 'subject_model';
    // Grouped by subject model, the concentration's (subject, state) pairs are read off the tables' rows (as in the report).
    const collected = opts.concentration && byModel ? new ConcentrationCollector() : undefined;
    const onStateRow = collected ? { onStateRow: (g: readonly Plain[], state: number, facts: boolean, failed: boolean) => collected.add(String(g[0]), state, facts, failed) } : {};
    const t = await loadProbeTables({ conn, q }, { by, level, seed, resamples, excludeStates: excl, ...onStateRow });
    if (t.groups.length === 0) throw dataError('probes.none', 'no probe decisions in this store (run with probes, or ingest probe answers)');
    const sensitivity = excl ? { sensitivity: await loadSensitivity(q, { by, level, seed, resamples }, opts.excludeStates!.length, { kept: t }) } : {};
    const ladder = { ladder: await loadProbeLadder({ conn, q }, { level, seed, resamples, excludeStates: excl }) };
    const form = byModel && t.groups.length >= 2 ? { accuracy_form: accuracyForm(t.groups.map((g) => ({ subject: String(g.group.subject_model), t: g })), { seed, resamples, level }) } : {};
    if (!opts.concentration) return { ...t, level, seed, resamples, ...ladder, ...sensitivity, ...form };
    const concentration = await loadConcentration({ conn, q }, { minSubjects: opts.minSubjects, seed, permutations: resamples, level, excludeStates: excl, collected });
    return { ...t, level, seed, resamples, ...ladder, concentration, ...sensitivity, ...form };
  });
}

export { float64Column };
export { sufficiencyText } from './probe-sufficiency-text.ts';
export { concentrationText } from './probe-concentration.ts';
export { loadExcludedStates } from './probe-sensitivity.ts';
