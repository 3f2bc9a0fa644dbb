/**
 * The report over a store that is not a Standoff suite (a CSV, Inspect logs, lm-eval output):
 * every scorer in `scores` is a metric (`metrics.ts`), and the sections are generic. Standoff's
 * own sections (evidence gathered, policy action, alignment, grounded vs lucky, probes) are
 * absent: nothing of theirs was measured, and a quantity not measured is never shown as 0.
 *
 * Sections (per suite when the store holds several; each run's suite is `runs.suite`):
 * - results per subject x scorer: binary scorers get the exact Clopper-Pearson interval and, where
 *   epochs repeat items, the cluster bootstrap over items; other kinds the cluster (or plain, when
 *   no item repeats) bootstrap of the mean (`metricRates`, as `standoff ci exact|bootstrap`);
 * - pairwise paired comparisons per scorer (pairs on item x epoch, clustered on item when epochs
 *   repeat it; `comparePaired`, as `standoff ci paired`), Holm over every comparison, MDE;
 * - judges and agreement per judged scorer, when judgments exist (Krippendorff's alpha at the
 *   measurement level of the judges' values' kind; `agreementFromCounts`, as `standoff agreement`);
 * - slices by metadata: episode columns domain / decision_type / variant where set, sample
 *   metadata keys with 2-12 levels (fewer levels than items), and every `--slice COL`;
 * - reconciliation: the metrics the log reported itself (`runs.config.reported_metrics`) beside
 *   Standoff's recomputed mean of the scorer (after the log's epoch reducer), flagged on a difference;
 * - invalid and errored samples.
 *
 * Scorer names and metadata keys never enter SQL text: every scorer is read at once from the
 * tables and split in JS, and metadata keys are read as data (`json_keys`, `->>`).
 */
import { cltStandardError } from '../stats/index.ts';
import { query } from '../store/duckdb.ts';
import { withinTolerance } from '../ingest/lm-eval/reconcile.ts';
import type { ReportedMetric } from '../ingest/reported-metrics.ts';
import { fmtCount, fmtCountOf, byText } from './markdown.ts';
import { KIND_SQL, ORDINAL_MAX_LEVELS, REDUCERS, SCORER_ROWS, reduceMetric, scorerMetric, scorerMetricName, type MetricKind, type Reducer } from '../analysis/metrics.ts';
import { metricRates, type Interval, type Rate } from '../analysis/rates.ts';
import type { Plain } from '../store/duckdb.ts';
import { ADJUST_LABEL, ADJUST_METHODS, pairwiseOf, type Adjust, type Comparison, type PairFamily, type PairwiseSection } from './sections/pairwise.ts';
import { judgedScorers, type JudgesSection } from './sections/judges.ts';
import type { UniqueRuns } from '../analysis/judge-patterns.ts';
import type { ReportContext } from './sections/context.ts';

export interface ScorerInfo {
  suite: string;
  scorer: string;
  /** Its metric name (`standoff ci --metric`): the scorer's, or `score:NAME` when a built-in has that name. */
  metric: string;
  kind: MetricKind | null;
  /** Why the report reads it as that kind (the evidence: values, or what the log declares). */
  kind_reason: string;
}

export interface ScorerResult {
  suite: string;
  scorer: string;
  subject: string;
  kind: MetricKind | null;
  /** Measured observations, their sum, their mean. */
  n: number;
  sum: number;
  estimate: number | null;
  /** NULL values (not measured) and NOANSWER samples: in no denominator. */
  not_measured: number;
  noanswer: number;
  clusters: number;
  max_per_item: number;
  /** Clopper-Pearson (binary only; treats observations as independent). */
  exact: Interval | null;
  /** Bootstrap over items (whole items with their epochs resampled). */
  bootstrap: Interval | null;
}

/** A pairwise comparison of the core sections (`sections/pairwise.ts`, the one implementation). */
export type GenericComparison = Comparison;
export type { Adjust };
export { ADJUST_LABEL, ADJUST_METHODS };

/** One judged scorer (`sections/judges.ts`, the one judges implementation). */
export type GenericJudges = JudgesSection;

export interface GenericSlice {
  dimension: string;
  level: string;
  suite: string;
  scorer: string;
  subject: string;
  n: number;
  estimate: number | null;
  interval: Interval;
}

export interface Reconciliation {
  run_id: string;
  task: string;
  metric: string;
  filter: string | null;
  scorer: string | null;
  reducer: string | null;
  reported: number | null;
  recomputed: number | null;
  n: number | null;
  diff: number | null;
  reported_stderr: number | null;
  recomputed_stderr: number | null;
  status: 'ok' | 'FLAG' | 'not recomputed' | 'checked at ingest';
  note: string;
}

/** A metric the log computed over the whole corpus (lm-eval f1, bleu ...): one number, no per-sample values. */
export interface CorpusMetric {
  suite: string;
  subject: string;
  run_id: string;
  metric: string;
  filter: string | null;
  value: number | null;
  stderr: number | null;
}

export interface GenericSections {
  suites: string[];
  scorers: ScorerInfo[];
  results: ScorerResult[];
  /** Corpus-level metrics: in the results, with no per-sample interval. */
  corpus: CorpusMetric[];
  pairwise: PairwiseSection;
  judges: GenericJudges[];
  slices: { dimensions: string[]; rows: GenericSlice[] };
  reconciliation: Reconciliation[];
  samples: { suite: string; subject: string; samples: number; invalid: number; errored: number; reasons: { status: string; reason: string; count: number }[] }[];
}

/** Reported metrics whose value is the mean of the per-sample scores (after the epoch reducer). */
const MEAN_METRICS = new Set(['accuracy', 'mean', 'acc', 'acc_norm', 'exact_match']);

const materializedCore = new WeakSet<ReportContext>();

/**
 * Per-(suite, subject) labels: the model, or `model @ run` where a suite has the model in several
 * runs (`g_subject`), and every scorer's observations (`g_obs`), once per context: the core
 * sections read them, whichever of them a suite composes.
 */
export async function prepareCore(ctx: ReportContext): Promise<void> {
  if (materializedCore.has(ctx)) return;
  materializedCore.add(ctx);
  await ctx.conn.run(`CREATE TEMP TABLE g_subject AS
    SELECT x.run_id, x.subject_model, r.suite,
           CASE WHEN count(*) OVER (PARTITION BY r.suite, x.subject_model) > 1 THEN x.subject_model || ' @ ' || x.run_id ELSE x.subject_model END AS subject
    FROM (SELECT DISTINCT run_id, subject_model FROM episodes) x JOIN runs r USING (run_id)`);
  await ctx.conn.run(`CREATE TEMP TABLE g_obs AS
    SELECT g.suite, o.scorer, g.subject, o.run_id, o.episode_id, o.scenario_id, o.epoch, o.value, o.noanswer
    FROM (${SCORER_ROWS}) o JOIN g_subject g USING (run_id, subject_model)`);
}

/** The core results section's value: the tasks, their scorers (with kinds), each subject's result per scorer, corpus-level metrics. */
export type CoreResults = Pick<GenericSections, 'suites' | 'scorers' | 'results' | 'corpus'>;

/** The core sections' values by their keys in the report (`suites/core.ts`). */
export interface CoreValues {
  results: CoreResults;
  pairwise: PairwiseSection;
  judges: GenericJudges[];
  slices: GenericSections['slices'];
  reconciliation: Reconciliation[];
  samples: GenericSections['samples'];
}

/**
 * results.json's `generic`: the core sections' values. A suite may compose a subset of the core
 * sections; the fields of a core section it does not compose are null (absent: nothing was
 * computed, never a fabricated zero or empty table).
 */
export type GenericValues = { [K in keyof GenericSections]: GenericSections[K] | null };

const orNull = <T>(x: unknown): T | null => (x === undefined ? null : (x as T));

/** results.json's `generic` from the core sections' values (by key); a core section not computed is null. */
export function assembleGeneric(v: Readonly<Record<string, unknown>>): GenericValues {
  const c = v as Partial<CoreValues>;
  const r = orNull<CoreResults>(c.results);
  return {
    suites: r?.suites ?? null,
    scorers: r?.scorers ?? null,
    results: r?.results ?? null,
    corpus: r?.corpus ?? null,
    pairwise: orNull(c.pairwise),
    judges: orNull(c.judges),
    slices: orNull(c.slices),
    reconciliation: orNull(c.reconciliation),
    samples: orNull(c.samples),
  };
}

/**
 * The core values for readers that walk rows (figures, the sample browser's sets and links): a
 * section the suite does not compose has no rows to draw or link. Never written to results.json.
 */
export function rowsOf(g: GenericValues): GenericSections {
  return {
    suites: g.suites ?? [...new Set((g.samples ?? []).map((s) => s.suite))],
    scorers: g.scorers ?? [],
    results: g.results ?? [],
    corpus: g.corpus ?? [],
    pairwise: g.pairwise ?? { comparisons: [], power: 0.8, alpha: 0.05, adjust: 'holm', family: 'task x scorer', note: 'not composed by this suite' },
    judges: g.judges ?? [],
    slices: g.slices ?? { dimensions: [], rows: [] },
    reconciliation: g.reconciliation ?? [],
    samples: g.samples ?? [],
  };
}

/** A group's labels: the task, the scorer (or metric) and the subject. */
export interface CellLabels {
  suite: string;
  scorer: string;
  subject: string;
}

/**
 * Where the one results computation ({@link computeResults}) reads its observations: the core
 * sections' every scorer of the store ({@link GENERIC_SOURCE}), or a suite's own metrics (the
 * Standoff O1 suite's four: `sections/results.ts`).
 */
export interface ObservationSource {
  /** Creates the temp tables `rows` reads (once, before anything else). */
  prepare(ctx: ReportContext): Promise<void>;
  /**
   * SQL of the observations, a row per sample and scorer: group keys `suite`, `scorer`, `subject`
   * (any type: integer keys keep a large store's aggregation cheap; `label` names them), `cluster`
   * (the item, whose epochs are resampled together), `value` (NULL: not measured) and `noanswer`
   * (BOOLEAN: a sample with no single correct answer, in no denominator and counted).
   */
  rows: string;
  /** A column of `rows` holding how many samples the row stands for (rows counted in SQL beforehand); default: a row is one sample. */
  weight?: string;
  /** The labels of a row's group keys. */
  label(keys: Record<string, Plain>, ctx: ReportContext): CellLabels;
  /** The scorers per task, in column order, with their kinds and why. */
  scorers(ctx: ReportContext): Promise<ScorerInfo[]>;
  /**
   * Each task's subjects in row order (each gets a result per scorer, measured or not) and, where a
   * completed sample without a row for a scorer was not measured on it, the completed samples.
   */
  subjects(ctx: ReportContext): Promise<{ suite: string; subject: string; completed?: number }[]>;
}

/** One subject's result on one scorer: its rate (null: no row at all), NOANSWER samples, completed samples without a row. */
export interface ResultCell {
  info: ScorerInfo;
  subject: string;
  rate: Rate | null;
  noanswer: number;
  unscored: number;
}

const cellKey = (l: CellLabels) => `${l.suite}\u0000${l.scorer}\u0000${l.subject}`;

/**
 * The ONE results computation of every report: per task x scorer x subject, the rate or mean with
 * the exact interval (0/1 values) and the bootstrap over items, whole items with their epochs
 * resampled (`metricRates`, as `standoff ci exact|bootstrap`); NULL values and completed samples
 * without a row are not measured, NOANSWER samples are left out; both in no denominator, counted.
 */
export async function computeResults(ctx: ReportContext, src: ObservationSource): Promise<{ scorers: ScorerInfo[]; cells: ResultCell[] }> {
  await src.prepare(ctx);
  const scorers = await src.scorers(ctx);
  const w = src.weight ? `, ${src.weight}` : '';
  const rates = await metricRates(ctx, `SELECT suite, scorer, subject, cluster, value${w} FROM (${src.rows}) WHERE NOT noanswer`, ['suite', 'scorer', 'subject'], 'cluster', {
    level: ctx.level,
    seed: ctx.seed,
    resamples: ctx.resamples,
    clusterLabel: 'scenario_id',
    weight: src.weight,
  });
  const rateBy = new Map(rates.map((r) => [cellKey(src.label(r.group, ctx)), r]));
  const n = src.weight ? `sum(${src.weight})` : 'count(*)';
  const counts = async (where: string) => new Map((await ctx.q(`SELECT suite, scorer, subject, CAST(${n} AS BIGINT) AS n FROM (${src.rows}) ${where} GROUP BY ALL`)).map((r) => [cellKey(src.label(r, ctx)), Number(r.n)]));
  const noans = await counts('WHERE noanswer');
  const subjects = await src.subjects(ctx);
  // A completed sample without a row for a scorer its task has was not measured on it.
  const rowsBy = subjects.some((s) => s.completed !== undefined) ? await counts('') : new Map<string, number>();
  const cells: ResultCell[] = [];
  for (const info of scorers) {
    for (const s of subjects.filter((x) => x.suite === info.suite)) {
      const key = cellKey({ suite: info.suite, scorer: info.scorer, subject: s.subject });
      const unscored = s.completed === undefined ? 0 : Math.max(0, s.completed - (rowsBy.get(key) ?? 0));
      cells.push({ info, subject: s.subject, rate: rateBy.get(key) ?? null, noanswer: noans.get(key) ?? 0, unscored });
    }
  }
  return { scorers, cells };
}

/** The core sections' observations: every scorer in `scores` is a metric, its kind from evidence. */
export const GENERIC_SOURCE: ObservationSource = {
  prepare: prepareCore,
  rows: `SELECT suite, scorer, subject, scenario_id AS cluster, value, noanswer FROM g_obs`,
  label: (k) => ({ suite: String(k.suite), scorer: String(k.scorer), subject: String(k.subject) }),
  async scorers(ctx) {
    const declared = declaredBinary(ctx);
    const rows = await ctx.q(`SELECT suite, scorer, ${KIND_SQL} AS kind, list(DISTINCT value ORDER BY value) FILTER (WHERE value IN (0, 1)) AS levels01 FROM g_obs WHERE NOT noanswer GROUP BY ALL ORDER BY suite, scorer`);
    return rows.map((r) => ({
      suite: String(r.suite),
      scorer: String(r.scorer),
      metric: scorerMetricName(String(r.scorer)),
      ...kindFromEvidence((r.kind as MetricKind | null) ?? null, ((r.levels01 as number[] | null) ?? []).map(Number), declared.get(`${r.suite}\u0000${r.scorer}`)),
    }));
  },
  async subjects(ctx) {
    const rows = await ctx.q(`SELECT g.suite, g.subject, CAST(count(*) AS BIGINT) AS n FROM episodes e JOIN g_subject g USING (run_id, subject_model) WHERE e.status <> 'error' GROUP BY ALL ORDER BY g.suite, g.subject`);
    return rows.map((r) => ({ suite: String(r.suite), subject: String(r.subject), completed: Number(r.n) }));
  },
};

/** The core results section's value from the computed cells: a row per task x scorer x subject. */
export async function coreResultsOf(ctx: ReportContext, computed: { scorers: ScorerInfo[]; cells: ResultCell[] }): Promise<CoreResults> {
  const results: ScorerResult[] = computed.cells.map(({ info, subject, rate: r, noanswer, unscored }) => ({
    suite: info.suite,
    scorer: info.scorer,
    subject,
    kind: info.kind,
    n: r?.trials ?? 0,
    sum: r?.successes ?? 0,
    estimate: r?.estimate ?? null,
    not_measured: (r?.not_measured ?? 0) + unscored,
    noanswer,
    clusters: r?.clusters ?? 0,
    max_per_item: r?.max_per_cluster ?? 0,
    // Exact (Clopper-Pearson) only for a binary scorer: a 0.0 of a continuous score is no rate.
    exact: info.kind === 'binary' ? (r?.exact ?? null) : null,
    bootstrap: r?.cluster ?? null,
  }));
  const suites = [...new Set(ctx.runs.map((r) => r.suite))].sort(byText);
  return { suites, scorers: computed.scorers, results, corpus: await corpusMetrics(ctx) };
}

/** Results per task x scorer x subject (and the temp tables g_subject, g_obs the later core sections read). */
export const coreResults = async (ctx: ReportContext): Promise<CoreResults> => coreResultsOf(ctx, await computeResults(ctx, GENERIC_SOURCE));

/** Pairwise comparisons per task x scorer (`results`: the core results section's value). */
export async function corePairwise(ctx: ReportContext, results: CoreResults | undefined, adjust: Adjust): Promise<PairwiseSection> {
  await prepareCore(ctx);
  // A suite without the core results section: the scorers (and kinds) as the results would read them.
  const scorers = results?.scorers ?? (await GENERIC_SOURCE.scorers(ctx));
  return pairwiseOf(await genericPairFamilies(ctx, scorers), { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, adjust });
}

/** Judges and agreement of every judged scorer, with the core subjects' labels. */
export async function coreJudges(ctx: ReportContext, uniqueRuns?: UniqueRuns): Promise<GenericJudges[]> {
  await prepareCore(ctx);
  return judgedScorers(ctx, { expr: 'g.subject', join: 'JOIN g_subject g ON g.run_id = e.run_id AND g.subject_model = e.subject_model', subjects: [] }, uniqueRuns);
}

/**
 * The pairwise families of the core sections: per task x scorer, each subject's value on each
 * item x epoch (rows in text order of item and epoch), clustered on the item where epochs repeat it.
 */
async function genericPairFamilies(ctx: ReportContext, scorers: ScorerInfo[]): Promise<PairFamily[]> {
  const obs = await ctx.q(`SELECT suite, scorer, subject, scenario_id, epoch, value FROM g_obs WHERE NOT noanswer AND value IS NOT NULL ORDER BY suite, scorer, subject, scenario_id, epoch`);
  const groups = new Map<string, Map<string, Map<string, { v: number; item: string }>>>();
  for (const r of obs) {
    const g = `${r.suite}\u0000${r.scorer}`;
    if (!groups.has(g)) groups.set(g, new Map());
    const bySubject = groups.get(g)!;
    const s = String(r.subject);
    if (!bySubject.has(s)) bySubject.set(s, new Map());
    bySubject.get(s)!.set(`${r.scenario_id}\u0000${r.epoch}`, { v: Number(r.value), item: String(r.scenario_id) });
  }
  const out: PairFamily[] = [];
  for (const info of scorers) {
    const bySubject = groups.get(`${info.suite}\u0000${info.scorer}`);
    if (!bySubject) continue;
    const subjects = [...bySubject.keys()].sort(byText);
    const item = new Map<string, string>();
    for (const m of bySubject.values()) for (const [k, x] of m) item.set(k, x.item);
    const keys = [...item.keys()].sort(byText);
    out.push({
      suite: info.suite, scorer: info.scorer, metric: info.metric, kind: info.kind, label: info.metric, subjects, clusterWhen: 'repeated',
      clusters: keys.map((k) => item.get(k)!),
      cols: subjects.map((s) => Float64Array.from(keys, (k) => bySubject.get(s)!.get(k)?.v ?? Number.NaN)),
    });
  }
  return out;
}

/** Metrics whose reporting declares a 0/1 scorer: Inspect's accuracy over C/I, lm-eval's acc, acc_norm, exact_match. */
const BINARY_METRICS = new Set(['accuracy', 'acc', 'acc_norm', 'exact_match']);

/** (suite, scorer) -> the metric by which the log declares the scorer 0/1. */
function declaredBinary(ctx: ReportContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const run of ctx.runs) {
    const reported = (run.config?.reported_metrics ?? null) as ReportedMetric[] | null;
    if (!Array.isArray(reported)) continue;
    for (const m of reported) if (m.scorer && !m.group && BINARY_METRICS.has(m.metric)) out.set(`${run.suite}\u0000${m.scorer}`, m.metric);
  }
  return out;
}

/**
 * A scorer's kind from evidence: binary when the log declares it (`declaredBy`) or its values hold
 * both 0 and 1; values that are all 0 (or all 1) with no declaration are `bounded` (a continuous
 * score that happened to be 0 is no rate); else the values' kind (`KIND_SQL`).
 */
export function kindFromEvidence(valuesKind: MetricKind | null, levels01: number[], declaredBy: string | undefined): { kind: MetricKind | null; kind_reason: string } {
  if (valuesKind === null) return { kind: null, kind_reason: 'no value measured' };
  if (valuesKind === 'binary') {
    if (declaredBy) return { kind: 'binary', kind_reason: `the log reports ${declaredBy} for it` };
    if (levels01.length === 2) return { kind: 'binary', kind_reason: 'its values hold both 0 and 1' };
    return { kind: 'bounded', kind_reason: `every value is ${levels01[0]} and the log does not declare it 0/1: not read as a rate` };
  }
  const why: Record<Exclude<MetricKind, 'binary'>, string> = {
    bounded: 'values in [0, 1], not only 0 and 1',
    ordinal: `integers with at most ${ORDINAL_MAX_LEVELS} levels`,
    continuous: 'values that are neither 0/1, in [0, 1], nor few integers',
  };
  return { kind: valuesKind, kind_reason: why[valuesKind] };
}

/** Corpus-level metrics the logs report (no per-sample scorer, not a group), per run's subject. */
async function corpusMetrics(ctx: ReportContext): Promise<CorpusMetric[]> {
  const subjects = await ctx.q(`SELECT DISTINCT suite, run_id, subject FROM g_subject ORDER BY suite, run_id, subject`);
  const out: CorpusMetric[] = [];
  for (const run of ctx.runs) {
    const reported = (run.config?.reported_metrics ?? null) as ReportedMetric[] | null;
    if (!Array.isArray(reported)) continue;
    for (const m of reported) {
      if (m.scorer || m.group) continue;
      for (const s of subjects.filter((x) => x.run_id === run.run_id)) {
        out.push({ suite: run.suite, subject: String(s.subject), run_id: run.run_id, metric: m.metric, filter: m.filter, value: m.value, stderr: m.stderr });
      }
    }
  }
  return out.sort((a, b) => byText(a.suite, b.suite) || byText(a.metric, b.metric) || byText(a.filter ?? '', b.filter ?? '') || byText(a.subject, b.subject));
}

/**
 * The log's own reported metrics beside Standoff's recomputed values: the mean of the scorer's
 * per-sample values after the log's epoch reducer (`reduceMetric`, as `ci --reduce`), and its
 * standard error (`cltStandardError`, n - 1: Inspect's `stderr` and lm-eval's `mean_stderr`)
 * where the log reports one. The scorer name is a bound parameter.
 */
export async function reconcile(ctx: ReportContext): Promise<Reconciliation[]> {
  const out: Reconciliation[] = [];
  const modelOf = new Map((await ctx.q(`SELECT run_id, min(subject_model) AS m FROM episodes GROUP BY run_id`)).map((r) => [String(r.run_id), String(r.m)]));
  const groupsSeen = new Set<string>();
  for (const run of ctx.runs) {
    const reported = (run.config?.reported_metrics ?? null) as ReportedMetric[] | null;
    if (!Array.isArray(reported)) continue;
    for (const m of reported) {
      // A group's aggregate is in every subtask run's log: shown once per model.
      const groupKey = JSON.stringify([m.task, m.metric, m.filter, modelOf.get(run.run_id) ?? '', m.value]);
      if (m.group && groupsSeen.has(groupKey)) continue;
      if (m.group) groupsSeen.add(groupKey);
      const row: Reconciliation = { run_id: run.run_id, task: m.task, metric: m.metric, filter: m.filter, scorer: m.scorer, reducer: m.reducer ?? null, reported: m.value, recomputed: null, n: null, diff: null, reported_stderr: m.stderr, recomputed_stderr: null, status: 'not recomputed', note: '' };
      out.push(row);
      if (m.group) {
        row.status = 'checked at ingest';
        row.note = `group aggregate over ${m.subtasks?.length ?? 'its'} subtasks, recomputed from them at ingest (standoff ingest lm-eval flags a difference)`;
        continue;
      }
      if (!m.scorer) {
        row.note = 'no per-sample scores for it';
        continue;
      }
      if (!MEAN_METRICS.has(m.metric)) {
        row.note = `metric ${m.metric} is not recomputed (only means: ${[...MEAN_METRICS].join(', ')})`;
        continue;
      }
      const reducer = (m.reducer ?? 'mean') as Reducer;
      if (!(REDUCERS as readonly string[]).includes(reducer)) {
        row.note = `epoch reducer ${m.reducer} is not recomputed`;
        continue;
      }
      const def = reduceMetric(scorerMetric(m.scorer), reducer);
      const { rows } = await query(ctx.conn, `SELECT value FROM (${def.sql}) WHERE run_id = $run AND value IS NOT NULL ORDER BY scenario_id`, { ...def.params, run: run.run_id });
      if (rows.length === 0) {
        row.note = 'no per-sample scores for it';
        continue;
      }
      const values = Float64Array.from(rows, (r) => Number(r.value));
      row.n = values.length;
      row.recomputed = values.reduce((a, b) => a + b, 0) / values.length;
      row.recomputed_stderr = values.length > 1 ? cltStandardError(values, { ddof: 1 }) : null;
      const [{ epochs }] = (await query(ctx.conn, `SELECT CAST(count(*) AS BIGINT) AS epochs FROM (${scorerMetric(m.scorer).sql}) WHERE run_id = $run AND value IS NOT NULL`, { scorer: m.scorer, run: run.run_id })).rows;
      row.note = `mean over ${fmtCountOf(values.length, 'sample')}${Number(epochs) > values.length ? ` after the ${reducer} epoch reducer` : ''}`;
      if (m.value === null) {
        row.status = 'FLAG';
        row.note += '; the log reports no number';
        continue;
      }
      row.diff = row.recomputed - m.value;
      const stderrOk = row.recomputed_stderr === null || m.stderr === null || withinTolerance(row.recomputed_stderr, m.stderr);
      row.status = withinTolerance(row.recomputed, m.value) && stderrOk ? 'ok' : 'FLAG';
      if (!stderrOk) row.note += '; stderr differs';
    }
  }
  return out;
}

/** The rows of a suite's "Results per subject and scorer" table, in order (index.html links its cells by this order). */
export function resultSubjects(g: GenericSections, suite: string): string[] {
  return [...new Set(g.results.filter((r) => r.suite === suite).map((r) => r.subject))].sort(byText);
}
