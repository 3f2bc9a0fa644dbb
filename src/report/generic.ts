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
import { benjaminiHochberg, clopperPearson, cltStandardError, holm } from '../stats/index.ts';
import { query } from '../store/duckdb.ts';
import { withinTolerance } from '../ingest/lm-eval/reconcile.ts';
import type { ReportedMetric } from '../ingest/reported-metrics.ts';
import { cell, code, fixed, fmtCount, numInterval, pct, pctInterval, pp, ppInterval, pValue, rateCell, table, byText } from './markdown.ts';
import { KIND_SQL, ORDINAL_MAX_LEVELS, REDUCERS, SCORER_ROWS, reduceMetric, scorerMetric, scorerMetricName, type MetricKind, type Reducer } from '../analysis/metrics.ts';
import { metricRates, type Interval } from '../analysis/rates.ts';
import { MDE_POWER, tryComparePaired } from '../analysis/paired-comparison.ts';
import { agreementFromCounts, loadJudgePatterns, patternMatrix, type AgreementResult } from '../analysis/judge-patterns.ts';
import type { ReportContext } from './sections/context.ts';
import { fourCellCounts, renderFourCells, type FourCellCounts } from './four-cell.ts';
import type { AlphaLevel } from '../stats/index.ts';

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

export interface GenericComparison {
  suite: string;
  scorer: string;
  kind: MetricKind | null;
  a: string;
  b: string;
  pairs: number;
  clusters: number | null;
  sampling: 'clustered' | 'independent' | null;
  mean_a: number | null;
  mean_b: number | null;
  difference: number | null;
  lower: number | null;
  upper: number | null;
  se: number | null;
  correlation: number | null;
  p_value: number | null;
  /** Holm within the comparison's family (its task and scorer). */
  p_holm: number | null;
  /** Adjusted by the report's `--adjust` method within the family (null with `none`). */
  p_adjusted: number | null;
  mde: number | null;
  note?: string;
  /** Binary scorers: both right, only A, only B, both wrong over the pairs (`four-cell.ts`). */
  four_cell?: FourCellCounts | null;
}

/** Multiple-comparison adjustment of the pairwise p-values (`--adjust`). */
export type Adjust = 'holm' | 'bh' | 'none';
export const ADJUST_METHODS: readonly Adjust[] = ['holm', 'bh', 'none'];
export const ADJUST_LABEL: Record<Adjust, string> = { holm: 'Holm', bh: 'Benjamini-Hochberg', none: 'none' };

export interface GenericJudges {
  scorer: string;
  kind: MetricKind | null;
  judges: { judge: string; values: number; errors: number }[];
  agreement: AgreementResult | null;
  /** Each judge's mean and its bias against the panel: mean(judge - panel median) over the samples it graded. */
  bias: { judge: string; n: number; mean: number; bias: number }[];
  /** Judge pairs: samples both graded, and on how many they gave the same value. */
  pairs: { a: string; b: string; n: number; agree: number }[];
  /** Per subject: the mean over its samples of the panel median. */
  subjects: { subject: string; n: number; median_mean: number }[];
}

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
  pairwise: {
    comparisons: GenericComparison[];
    power: number;
    alpha: number;
    adjust: Adjust;
    /** The family each adjustment runs within: the comparisons of one task (suite) and one scorer. */
    family: 'task x scorer';
  };
  judges: GenericJudges[];
  slices: { dimensions: string[]; rows: GenericSlice[] };
  reconciliation: Reconciliation[];
  samples: { suite: string; subject: string; samples: number; invalid: number; errored: number; reasons: { status: string; reason: string; count: number }[] }[];
}

/** Reported metrics whose value is the mean of the per-sample scores (after the epoch reducer). */
const MEAN_METRICS = new Set(['accuracy', 'mean', 'acc', 'acc_norm', 'exact_match']);
const MAX_SLICE_LEVELS = 12;

/** Per-(suite, subject) labels: the model, or `model @ run` where a suite has the model in several runs. */
async function materialize(ctx: ReportContext): Promise<void> {
  await ctx.conn.run(`CREATE TEMP TABLE g_subject AS
    SELECT x.run_id, x.subject_model, r.suite,
           CASE WHEN count(*) OVER (PARTITION BY r.suite, x.subject_model) > 1 THEN x.subject_model || ' @ ' || x.run_id ELSE x.subject_model END AS subject
    FROM (SELECT DISTINCT run_id, subject_model FROM episodes) x JOIN runs r USING (run_id)`);
  await ctx.conn.run(`CREATE TEMP TABLE g_obs AS
    SELECT g.suite, o.scorer, g.subject, o.run_id, o.episode_id, o.scenario_id, o.epoch, o.value, o.noanswer
    FROM (${SCORER_ROWS}) o JOIN g_subject g USING (run_id, subject_model)`);
}

export async function genericSections(ctx: ReportContext, opts: { slices?: string[]; adjust?: Adjust } = {}): Promise<GenericSections> {
  const adjust = opts.adjust ?? 'holm';
  await materialize(ctx);
  const o = { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples };
  const suites = [...new Set(ctx.runs.map((r) => r.suite))].sort(byText);
  const declared = declaredBinary(ctx);
  const scorers: ScorerInfo[] = (
    await ctx.q(`SELECT suite, scorer, ${KIND_SQL} AS kind, list(DISTINCT value ORDER BY value) FILTER (WHERE value IN (0, 1)) AS levels01 FROM g_obs WHERE NOT noanswer GROUP BY ALL ORDER BY suite, scorer`)
  ).map((r) => ({
    suite: String(r.suite),
    scorer: String(r.scorer),
    metric: scorerMetricName(String(r.scorer)),
    ...kindFromEvidence((r.kind as MetricKind | null) ?? null, ((r.levels01 as number[] | null) ?? []).map(Number), declared.get(`${r.suite}\u0000${r.scorer}`)),
  }));

  // Results: exact where 0/1, the bootstrap over items always (it is the honest one when epochs repeat).
  const rates = await metricRates(ctx, `SELECT suite, scorer, subject, scenario_id, value FROM g_obs WHERE NOT noanswer`, ['suite', 'scorer', 'subject'], 'scenario_id', { ...o, clusterLabel: 'scenario_id' });
  const noans = new Map((await ctx.q(`SELECT suite, scorer, subject, CAST(count(*) AS BIGINT) AS n FROM g_obs WHERE noanswer GROUP BY ALL`)).map((r) => [`${r.suite}\u0000${r.scorer}\u0000${r.subject}`, Number(r.n)]));
  // A completed sample without a score row for a scorer its suite has was not measured on it.
  const rowsBy = new Map((await ctx.q(`SELECT suite, scorer, subject, CAST(count(*) AS BIGINT) AS n FROM g_obs GROUP BY ALL`)).map((r) => [`${r.suite}\u0000${r.scorer}\u0000${r.subject}`, Number(r.n)]));
  const completed = await ctx.q(`SELECT g.suite, g.subject, CAST(count(*) AS BIGINT) AS n FROM episodes e JOIN g_subject g USING (run_id, subject_model) WHERE e.status <> 'error' GROUP BY ALL ORDER BY g.suite, g.subject`);
  const rateBy = new Map(rates.map((r) => [`${r.group.suite}\u0000${r.group.scorer}\u0000${r.group.subject}`, r]));
  const results: ScorerResult[] = [];
  for (const info of scorers) {
    for (const c of completed.filter((x) => x.suite === info.suite)) {
      const subject = String(c.subject);
      const key = `${info.suite}\u0000${info.scorer}\u0000${subject}`;
      const r = rateBy.get(key);
      const noRow = Number(c.n) - (rowsBy.get(key) ?? 0);
      results.push({
        suite: info.suite,
        scorer: info.scorer,
        subject,
        kind: info.kind,
        n: r?.trials ?? 0,
        sum: r?.successes ?? 0,
        estimate: r?.estimate ?? null,
        not_measured: (r?.not_measured ?? 0) + Math.max(0, noRow),
        noanswer: noans.get(key) ?? 0,
        clusters: r?.clusters ?? 0,
        max_per_item: r?.max_per_cluster ?? 0,
        // Exact (Clopper-Pearson) only for a binary scorer: a 0.0 of a continuous score is no rate.
        exact: info.kind === 'binary' ? (r?.exact ?? null) : null,
        bootstrap: r?.cluster ?? null,
      });
    }
  }

  // Pairwise: every pair of subjects of a suite, per scorer, paired on item x epoch.
  const alpha = Number((1 - ctx.level).toPrecision(12));
  const comparisons: GenericComparison[] = [];
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
  for (const info of scorers) {
    const bySubject = groups.get(`${info.suite}\u0000${info.scorer}`);
    if (!bySubject) continue;
    const subjects = [...bySubject.keys()].sort(byText);
    for (let i = 0; i < subjects.length; i++) {
      for (let j = i + 1; j < subjects.length; j++) {
        const A = bySubject.get(subjects[i])!;
        const B = bySubject.get(subjects[j])!;
        const keys = [...A.keys()].filter((k) => B.has(k)).sort(byText);
        const base: GenericComparison = { suite: info.suite, scorer: info.scorer, kind: info.kind, a: subjects[i], b: subjects[j], pairs: keys.length, clusters: null, sampling: null, mean_a: null, mean_b: null, difference: null, lower: null, upper: null, se: null, correlation: null, p_value: null, p_holm: null, p_adjusted: null, mde: null };
        const items = keys.map((k) => A.get(k)!.item);
        const repeated = new Set(items).size < items.length;
        const va = Float64Array.from(keys, (k) => A.get(k)!.v);
        const vb = Float64Array.from(keys, (k) => B.get(k)!.v);
        if (info.kind === 'binary') base.four_cell = fourCellCounts(keys, va, vb);
        const r = tryComparePaired(va, vb, repeated ? items : null, repeated ? 'scenario_id' : null, o);
        if (!('n' in r)) {
          comparisons.push({ ...base, note: keys.length === 0 ? 'no shared items' : r.note });
          continue;
        }
        comparisons.push({
          ...base,
          clusters: r.clusters ?? null,
          sampling: r.sampling,
          mean_a: r.mean_a,
          mean_b: r.mean_b,
          difference: r.mean_diff,
          lower: r.lower,
          upper: r.upper,
          se: r.se,
          correlation: r.correlation,
          p_value: r.p_value,
          mde: r.mde,
          ...(r.note ? { note: r.note } : {}),
        });
      }
    }
  }
  // Each family (one task's comparisons on one scorer) is adjusted on its own: unrelated scorers
  // and tasks do not dilute each other.
  for (const fam of new Set(comparisons.map((c) => `${c.suite}\u0000${c.scorer}`))) {
    const mine = comparisons.filter((c) => `${c.suite}\u0000${c.scorer}` === fam);
    const h = holm(mine.map((c) => c.p_value));
    const a = adjust === 'bh' ? benjaminiHochberg(mine.map((c) => c.p_value)) : adjust === 'holm' ? h : mine.map(() => null);
    mine.forEach((c, i) => {
      c.p_holm = h[i];
      c.p_adjusted = a[i];
    });
  }

  return {
    suites,
    scorers,
    results,
    corpus: await corpusMetrics(ctx),
    pairwise: { comparisons, power: MDE_POWER, alpha, adjust, family: 'task x scorer' },
    judges: await judgesOf(ctx),
    slices: await slicesOf(ctx, opts.slices ?? []),
    reconciliation: await reconcile(ctx),
    samples: await samplesOf(ctx),
  };
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

const MEASURE: Record<MetricKind, AlphaLevel> = { binary: 'nominal', ordinal: 'ordinal', bounded: 'interval', continuous: 'interval' };

async function judgesOf(ctx: ReportContext): Promise<GenericJudges[]> {
  const scorers = await ctx.q(`SELECT scorer, ${KIND_SQL} AS kind FROM judgments GROUP BY scorer ORDER BY scorer`);
  const out: GenericJudges[] = [];
  for (const s of scorers) {
    const scorer = String(s.scorer);
    const kind = (s.kind as MetricKind | null) ?? null;
    const p = await loadJudgePatterns(ctx.q, scorer);
    const per = p.judges.map((judge, j) => ({ judge, values: p.patterns.reduce((a, x) => a + (x.cells[j].present && x.cells[j].value !== null ? x.count : 0), 0), errors: p.verdicts[j].error }));
    const matrix = patternMatrix(p);
    const agreement = kind && matrix.some((row) => row.some((v) => v !== null)) ? agreementFromCounts(matrix, p.patterns.map((x) => x.count), { level: MEASURE[kind], ciLevel: ctx.level, seed: ctx.seed, resamples: ctx.resamples }) : null;
    out.push({ scorer, kind, judges: per, agreement, ...(await judgePanel(ctx, scorer)) });
  }
  return out;
}

/**
 * Judge bias, pair agreement and per-subject panel medians of one judged scorer, over the
 * measured values (ERROR verdicts and self-judgments left out). The scorer is bound.
 */
async function judgePanel(ctx: ReportContext, scorer: string): Promise<Pick<GenericJudges, 'bias' | 'pairs' | 'subjects'>> {
  const j = `j AS (SELECT judge_model, run_id, episode_id, value FROM judgments WHERE scorer = $scorer AND value IS NOT NULL AND NOT excluded_self),
    med AS (SELECT run_id, episode_id, median(value) AS m FROM j GROUP BY ALL)`;
  const p = { scorer };
  const bias = await ctx.q(`WITH ${j} SELECT judge_model, CAST(count(*) AS BIGINT) AS n, avg(value) AS mean, avg(value - m) AS bias FROM j JOIN med USING (run_id, episode_id) GROUP BY ALL ORDER BY judge_model`, p);
  const pairs = await ctx.q(
    `WITH ${j} SELECT a.judge_model AS a, b.judge_model AS b, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE a.value = b.value) AS BIGINT) AS agree
     FROM j a JOIN j b ON a.run_id = b.run_id AND a.episode_id = b.episode_id AND a.judge_model < b.judge_model GROUP BY ALL ORDER BY a, b`,
    p,
  );
  const subjects = await ctx.q(
    `WITH ${j} SELECT g.subject, CAST(count(*) AS BIGINT) AS n, avg(med.m) AS median_mean FROM med JOIN episodes e USING (run_id, episode_id) JOIN g_subject g USING (run_id, subject_model) GROUP BY ALL ORDER BY g.subject`,
    p,
  );
  return {
    bias: bias.map((r) => ({ judge: String(r.judge_model), n: Number(r.n), mean: Number(r.mean), bias: Number(r.bias) })),
    pairs: pairs.map((r) => ({ a: String(r.a), b: String(r.b), n: Number(r.n), agree: Number(r.agree) })),
    subjects: subjects.map((r) => ({ subject: String(r.subject), n: Number(r.n), median_mean: Number(r.median_mean) })),
  };
}

/** Slice dimensions: set episode columns, metadata keys with 2-12 levels (fewer than the items), and --slice. */
async function slicesOf(ctx: ReportContext, forced: string[]): Promise<GenericSections['slices']> {
  await ctx.conn.run(`CREATE TEMP TABLE g_dim AS
    SELECT run_id, episode_id, 'domain' AS dim, domain AS level FROM episodes WHERE domain IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'decision_type', decision_type FROM episodes WHERE decision_type IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'variant', variant FROM episodes WHERE variant IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'metadata.' || k, (metadata::JSON) ->> k FROM (SELECT run_id, episode_id, metadata, unnest(json_keys(metadata::JSON)) AS k FROM episodes WHERE json_type(metadata::JSON) = 'OBJECT')
      WHERE json_type((metadata::JSON) -> k) IN ('VARCHAR', 'BOOLEAN', 'BIGINT', 'UBIGINT', 'INTEGER')`);
  const dims = await ctx.q(`SELECT d.dim, CAST(count(DISTINCT d.level) AS BIGINT) AS levels, CAST(count(DISTINCT e.scenario_id) AS BIGINT) AS items, max(length(d.level)) AS longest
    FROM g_dim d JOIN episodes e USING (run_id, episode_id) GROUP BY d.dim ORDER BY d.dim`);
  const want = new Set(forced.map((c) => (dims.some((d) => d.dim === c) ? c : `metadata.${c}`)));
  // Chosen by themselves: 2-12 short levels, with three items or more per level on average (not an id, not free text).
  const auto = (d: (typeof dims)[number]) => Number(d.levels) >= 2 && Number(d.levels) <= MAX_SLICE_LEVELS && Number(d.items) >= 3 * Number(d.levels) && Number(d.longest) <= 64;
  const chosen = dims.filter((d) => want.has(String(d.dim)) || auto(d)).map((d) => String(d.dim));
  const unknown = [...want].filter((d) => !dims.some((x) => x.dim === d));
  if (unknown.length) ctx.log(`--slice ${unknown.map((u) => u.replace(/^metadata\./, '')).join(', ')}: no such episode column or metadata key; not sliced`);
  if (chosen.length === 0) return { dimensions: [], rows: [] };
  // Bound values, not SQL text: the chosen names come from the data (and --slice).
  await ctx.conn.run(`CREATE TEMP TABLE g_chosen (dim VARCHAR)`);
  const stmt = await ctx.conn.prepare(`INSERT INTO g_chosen VALUES ($1)`);
  for (const c of chosen) {
    stmt.bindVarchar(1, c);
    await stmt.run();
  }
  const rates = await metricRates(
    ctx,
    `SELECT d.dim, d.level, o.suite, o.scorer, o.subject, o.scenario_id, o.value FROM g_obs o JOIN g_dim d USING (run_id, episode_id) JOIN g_chosen USING (dim) WHERE NOT o.noanswer`,
    ['dim', 'level', 'suite', 'scorer', 'subject'],
    'scenario_id',
    { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, clusterLabel: 'scenario_id' },
  );
  return {
    dimensions: chosen,
    rows: rates.map((r) => ({ dimension: String(r.group.dim), level: String(r.group.level), suite: String(r.group.suite), scorer: String(r.group.scorer), subject: String(r.group.subject), n: r.trials, estimate: r.estimate, interval: r.interval })),
  };
}

/**
 * The log's own reported metrics beside Standoff's recomputed values: the mean of the scorer's
 * per-sample values after the log's epoch reducer (`reduceMetric`, as `ci --reduce`), and its
 * standard error (`cltStandardError`, n - 1: Inspect's `stderr` and lm-eval's `mean_stderr`)
 * where the log reports one. The scorer name is a bound parameter.
 */
async function reconcile(ctx: ReportContext): Promise<Reconciliation[]> {
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
      row.note = `mean over ${fmtCount(values.length)} samples${Number(epochs) > values.length ? ` after the ${reducer} epoch reducer` : ''}`;
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

async function samplesOf(ctx: ReportContext): Promise<GenericSections['samples']> {
  const rows = await ctx.q(`SELECT g.suite, g.subject, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE e.status = 'invalid') AS BIGINT) AS invalid,
      CAST(count(*) FILTER (WHERE e.status = 'error') AS BIGINT) AS errored FROM episodes e JOIN g_subject g USING (run_id, subject_model) GROUP BY ALL ORDER BY g.suite, g.subject`);
  const reasons = await ctx.q(`SELECT g.suite, g.subject, e.status, coalesce(CASE WHEN e.status = 'invalid' THEN e.invalid_reason ELSE e.error END, '(no reason recorded)') AS reason, CAST(count(*) AS BIGINT) AS n
      FROM episodes e JOIN g_subject g USING (run_id, subject_model) WHERE e.status IN ('invalid', 'error') GROUP BY ALL ORDER BY n DESC, e.status, reason`);
  return rows.map((r) => ({
    suite: String(r.suite),
    subject: String(r.subject),
    samples: Number(r.n),
    invalid: Number(r.invalid),
    errored: Number(r.errored),
    reasons: reasons.filter((x) => x.suite === r.suite && x.subject === r.subject).map((x) => ({ status: String(x.status), reason: String(x.reason), count: Number(x.n) })),
  }));
}

/* ------------------------------------------------------------------ render */

const isBinary = (k: MetricKind | null) => k === 'binary';
const value = (k: MetricKind | null, x: number | null) => (isBinary(k) ? pct(x) : fixed(x, 3));
const interval = (k: MetricKind | null, i: Interval | null) => (i === null ? null : i.lower === null ? `— (${cell(i.note ?? 'not computable')})` : isBinary(k) ? pctInterval(i.lower, i.upper) : numInterval(i.lower, i.upper));

function resultCell(r: ScorerResult | undefined): string {
  if (!r) return 'not measured';
  if (r.n === 0) return `not measured${r.not_measured ? ` (${fmtCount(r.not_measured)} samples)` : ''}`;
  const head = isBinary(r.kind) ? rateCell(r.sum, r.n) : `${fixed(r.estimate, 3)} (n = ${fmtCount(r.n)})`;
  const lines: string[] = [];
  if (r.bootstrap) lines.push(`${r.max_per_item > 1 ? 'cluster' : 'bootstrap'} ${interval(r.kind, r.bootstrap)}`);
  if (r.exact) lines.push(`exact ${interval(r.kind, r.exact)}${r.max_per_item > 1 ? ' (independent)' : ''}`);
  const extra = [r.not_measured ? `${fmtCount(r.not_measured)} not measured` : '', r.noanswer ? `${fmtCount(r.noanswer)} NOANSWER` : ''].filter(Boolean);
  return `${head}${extra.length ? `<br>${extra.join(', ')}` : ''}<br><sub>${lines.join('<br>')}</sub>`;
}

/** The rows of a suite's "Results per subject and scorer" table, in order (index.html links its cells by this order). */
export function resultSubjects(g: GenericSections, suite: string): string[] {
  return [...new Set(g.results.filter((r) => r.suite === suite).map((r) => r.subject))].sort(byText);
}

export function renderGeneric(g: GenericSections, level: number, n0: number): string {
  const L = Math.round(level * 100);
  const out: string[] = [];
  const several = g.suites.length > 1;
  const per = (suite: string) => (several ? `### Suite ${cell(suite)}\n` : '');
  let n = n0;

  out.push(`## ${n}. Results per subject and scorer\n`);
  if (g.scorers.length === 0) out.push('No scores are stored: nothing was measured, so there are no results (the samples are listed in the run summary).\n');
  for (const suite of g.suites) {
    const sc = g.scorers.filter((s) => s.suite === suite);
    if (sc.length === 0) continue;
    out.push(per(suite));
    const subjects = resultSubjects(g, suite);
    out.push(
      table(
        ['Subject model', ...sc.map((s) => `${cell(s.metric)} (${s.kind ?? 'not measured'})`)],
        subjects.map((subject) => [cell(subject), ...sc.map((s) => resultCell(g.results.find((r) => r.suite === suite && r.scorer === s.scorer && r.subject === subject)))]),
        ['l', ...sc.map(() => 'r' as const)],
      ),
    );
  }
  const repeated = g.results.some((r) => r.max_per_item > 1);
  if (g.scorers.length) out.push(
    `Intervals (${L}%). The kind of each scorer (in brackets) is inferred from its values: *binary* (0/1) scorers are rates with the exact two-sided Clopper-Pearson interval (\`standoff ci exact --metric NAME\`), which treats samples as independent; ` +
      `every scorer also gets a percentile bootstrap of its mean over items (\`standoff ci bootstrap --metric NAME --by subject_model\`)` +
      (repeated ? `, which resamples whole items with all their epochs (*cluster*): epochs of one item are correlated, so it is the interval to read where they repeat` : '') +
      `. Not measured (NULL) and NOANSWER samples are in no denominator and are counted. Every number is in \`results.json\` (\`generic.results\`).\n`,
  );
  if (g.scorers.length) out.push(`Kinds, from the evidence: ${g.scorers.map((x) => `${several ? `${cell(x.suite)} ` : ''}${cell(x.metric)} ${x.kind ?? 'not measured'} (${cell(x.kind_reason)})`).join('; ')}.\n`);
  if (g.corpus.length) {
    out.push(`Corpus-level metrics (the log computed each over the whole task: one number, no per-sample values; \`runs.config.reported_metrics\`):\n`);
    out.push(
      table(
        [...(several ? ['Task'] : []), 'Metric', 'Filter', 'Subject model', 'Value', `${L}% interval`],
        g.corpus.map((c) => [...(several ? [cell(c.suite)] : []), cell(c.metric), cell(c.filter ?? '—'), cell(c.subject), fixed(c.value, 4), 'no per-sample interval (corpus-level)']),
        [...(several ? ['l' as const] : []), 'l', 'l', 'l', 'r', 'l'],
      ),
    );
  }

  out.push('<!-- figure:scorer-forest -->\n', '<!-- figure:task-heatmap -->\n');
  n++;
  out.push(`## ${n}. Pairwise subject comparisons per scorer\n`);
  const cmp = g.pairwise.comparisons;
  if (cmp.length === 0) out.push('Fewer than two subjects share a scorer: nothing to compare.\n');
  else {
    const m = cmp.filter((c) => c.p_value !== null).length;
    out.push(
      `mean(A − B) over samples paired on item × epoch (percentage points for binary scorers). ${L}% interval: paired bootstrap (percentile), clustered on the item where epochs repeat it; ` +
        `p: two-sided z-test on the paired SE (cluster-robust CR1 where clustered), ${adjustText(g.pairwise.adjust, cmp)}; MDE: the smallest true difference detected with ${Math.round(g.pairwise.power * 100)}% power at α = ${fixed(g.pairwise.alpha, 2)}. ` +
        `Same numbers as \`standoff ci paired --metric NAME --a A --b B\`.\n`,
    );
    out.push(
      table(
        [...(several ? ['Suite'] : []), 'Scorer', 'A', 'B', 'Pairs', 'A', 'B', 'A − B', `${L}% CI`, 'p', ...(g.pairwise.adjust === 'none' ? [] : [`p (${g.pairwise.adjust === 'bh' ? 'BH' : 'Holm'}, within ${several ? 'task and ' : ''}scorer)`]), 'MDE'],
        cmp.map((c) => {
          const b = isBinary(c.kind);
          const d = (x: number | null) => (b ? pp(x) : x === null ? '—' : (x >= 0 ? '+' : '−') + fixed(Math.abs(x), 3));
          return [
            ...(several ? [cell(c.suite)] : []),
            cell(scorerMetricName(c.scorer)),
            cell(c.a),
            cell(c.b),
            fmtCount(c.pairs),
            value(c.kind, c.mean_a),
            value(c.kind, c.mean_b),
            d(c.difference),
            c.lower === null ? cell(c.note ?? '—') : b ? ppInterval(c.lower, c.upper) : numInterval(c.lower, c.upper),
            pValue(c.p_value),
            ...(g.pairwise.adjust === 'none' ? [] : [pValue(c.p_adjusted)]),
            c.mde === null ? '—' : `±${b ? pp(c.mde).replace('+', '') : fixed(c.mde, 3)}`,
          ];
        }),
        [...(several ? ['l' as const] : []), 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', ...(g.pairwise.adjust === 'none' ? [] : ['r' as const]), 'r'],
      ),
    );
    out.push(renderFourCells(cmp, several, scorerMetricName));
  }

  out.push('<!-- figure:paired-differences -->\n');
  if (g.judges.length) {
    n++;
    out.push(`## ${n}. Judges and agreement\n`);
    for (const j of g.judges) {
      out.push(`Scorer ${code(j.scorer)} (${j.kind ?? 'no values'}): ${j.judges.length} judge${j.judges.length === 1 ? '' : 's'}.\n`);
      out.push(
        table(
          ['Judge', 'Values', 'ERROR (failed call)', 'Mean', 'Bias vs panel median'],
          j.judges.map((x) => {
            const b = j.bias.find((y) => y.judge === x.judge);
            return [cell(x.judge), fmtCount(x.values), fmtCount(x.errors), b ? fixed(b.mean, 3) : '—', b ? `${b.bias >= 0 ? '+' : '−'}${fixed(Math.abs(b.bias), 3)}` : '—'];
          }),
          ['l', 'r', 'r', 'r', 'r'],
        ),
      );
      if (j.pairs.length) {
        out.push(`Judge pairs (same value on a sample both graded; the exact interval treats samples as independent):\n`);
        out.push(table(['Judge A', 'Judge B', 'Samples', 'Same value', `${L}% exact`], j.pairs.map((x) => [cell(x.a), cell(x.b), fmtCount(x.n), rateCell(x.agree, x.n), (() => { const c = clopperPearson(x.agree, x.n, { level }); return pctInterval(c.lower, c.upper); })()]), ['l', 'l', 'r', 'r', 'r']));
      }
      if (j.subjects.length) {
        out.push(`Per subject, the mean of the panel median: ${j.subjects.map((x) => `${cell(x.subject)} ${fixed(x.median_mean, 3)} (n = ${fmtCount(x.n)})`).join('; ')}. Bias: a judge's mean difference from the panel median on the samples it graded (+: more lenient).\n`);
      }
      const a = j.agreement;
      out.push(
        a && a.alpha !== null
          ? `**Krippendorff's alpha (${a.measurement})**: **${fixed(a.alpha, 3)}** ${numInterval(a.lower, a.upper)} (${L}% percentile bootstrap over ${fmtCount(a.units)} samples with two or more values, ${fmtCount(a.resamples)} resamples, seed ${a.seed}; ${code(`standoff agreement --scorer ${j.scorer} --measure ${a.measurement}`)}).\n`
          : `Krippendorff's alpha: not computable (${cell(a?.note ?? 'no values')}).\n`,
      );
    }
  }

  if (g.slices.rows.length) {
    n++;
    out.push(`## ${n}. Slices\n`);
    out.push(`Each cell: the scorer's rate or mean in the slice, with its ${L}% interval (cluster bootstrap over the slice's items where epochs repeat them or values are not 0/1, else exact). Dimensions: ${g.slices.dimensions.map(code).join(', ')}.\n`);
    for (const dim of g.slices.dimensions) {
      const rows = g.slices.rows.filter((r) => r.dimension === dim);
      out.push(`### ${cell(dim)}\n`);
      out.push(
        table(
          ['Level', ...(several ? ['Suite'] : []), 'Scorer', 'Subject model', 'n', 'Value', `${L}%`],
          rows.map((r) => {
            const k = g.scorers.find((s) => s.suite === r.suite && s.scorer === r.scorer)?.kind ?? null;
            return [cell(r.level), ...(several ? [cell(r.suite)] : []), cell(scorerMetricName(r.scorer)), cell(r.subject), fmtCount(r.n), value(k, r.estimate), interval(k, r.interval) ?? '—'];
          }),
          ['l', ...(several ? ['l' as const] : []), 'l', 'l', 'r', 'r', 'r'],
        ),
      );
    }
  }

  if (g.reconciliation.length) {
    n++;
    out.push(`## ${n}. Reported vs recomputed\n`);
    const flagged = g.reconciliation.filter((r) => r.status === 'FLAG').length;
    out.push(`The metrics the log reported about itself (\`runs.config.reported_metrics\`) beside Standoff's value recomputed from the per-sample scores. ${flagged ? `**${flagged} differ** (FLAG).` : 'Every recomputed value matches.'}\n`);
    out.push(
      table(
        ['Run', 'Task', 'Metric', 'Filter', 'Scorer', 'Reported', 'Recomputed', 'Difference', 'Stderr reported / recomputed', 'Status', 'Note'],
        g.reconciliation.map((r) => [
          code(r.run_id), cell(r.task), cell(r.metric), cell(r.filter ?? '—'), cell(r.scorer ?? '—'), fixed(r.reported, 4), fixed(r.recomputed, 4), r.diff === null ? '—' : fixed(r.diff, 6),
          `${fixed(r.reported_stderr, 4)} / ${fixed(r.recomputed_stderr, 4)}`, r.status === 'FLAG' ? '**FLAG**' : r.status, cell(r.note),
        ]),
        ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'l', 'l'],
      ),
    );
  }

  n++;
  out.push(`## ${n}. Invalid and errored samples\n`);
  const bad = g.samples.filter((s) => s.invalid + s.errored > 0);
  if (bad.length === 0) out.push('None: no sample is marked invalid or errored.\n');
  else {
    out.push(table([...(several ? ['Suite'] : []), 'Subject model', 'Samples', 'Invalid', 'Errored'], bad.map((s) => [...(several ? [cell(s.suite)] : []), cell(s.subject), fmtCount(s.samples), fmtCount(s.invalid), fmtCount(s.errored)]), [...(several ? ['l' as const] : []), 'l', 'r', 'r', 'r']));
    out.push(bad.flatMap((s) => s.reasons.map((r) => `- ${cell(s.subject)}: ${r.status}, ${cell(r.reason)} (${fmtCount(r.count)})`)).join('\n') + '\n');
    out.push('Errored samples are in no scorer\'s denominator.\n');
  }
  return out.join('\n');
}

/** Rows of the first screen's compact results table (the full one is section 2). */
export const AT_A_GLANCE_ROWS = 12;

/**
 * The first screen's answer: each subject's estimate and interval per task and scorer, best first
 * within a scorer, at most {@link AT_A_GLANCE_ROWS} rows (the rest: section 2).
 */
export function renderAtAGlance(g: GenericSections, level: number): string {
  const rows = g.results.filter((r) => r.estimate !== null);
  if (rows.length === 0) return '';
  const several = g.suites.length > 1;
  const order = [...rows].sort((a, b) => byText(a.suite, b.suite) || byText(a.scorer, b.scorer) || (b.estimate ?? 0) - (a.estimate ?? 0) || byText(a.subject, b.subject));
  const shown = order.slice(0, AT_A_GLANCE_ROWS);
  const L = Math.round(level * 100);
  const body = table(
    [...(several ? ['Task'] : []), 'Scorer', 'Subject model', 'Estimate', `${L}% interval`, 'n'],
    shown.map((r) => {
      const i = r.bootstrap?.lower != null ? r.bootstrap : r.exact;
      return [...(several ? [cell(r.suite)] : []), cell(scorerMetricName(r.scorer)), cell(r.subject), value(r.kind, r.estimate), interval(r.kind, i) ?? '—', fmtCount(r.n)];
    }),
    [...(several ? ['l' as const] : []), 'l', 'l', 'r', 'r', 'r'],
  );
  const more = order.length > shown.length ? ` (${fmtCount(order.length - shown.length)} more rows in section 2)` : '';
  return `**At a glance**: each subject's estimate with its ${L}% interval (the bootstrap over items, clustered where epochs repeat them; exact Clopper-Pearson where the bootstrap gives none), best first within a scorer${more}.\n\n${body}`;
}

/** What the pairwise table adjusted, and within which family. */
function adjustText(adjust: Adjust, cmp: GenericComparison[]): string {
  if (adjust === 'none') return 'not adjusted for multiple comparisons (--adjust none): read each p on its own';
  const fams = new Map<string, number>();
  for (const c of cmp) if (c.p_value !== null) fams.set(`${c.suite}\u0000${c.scorer}`, (fams.get(`${c.suite}\u0000${c.scorer}`) ?? 0) + 1);
  const sizes = [...new Set(fams.values())].sort((a, b) => a - b);
  return `${ADJUST_LABEL[adjust]}-adjusted within each family of one task and one scorer (${fams.size} famil${fams.size === 1 ? 'y' : 'ies'} of ${sizes.join('/')} comparison${sizes.length === 1 && sizes[0] === 1 ? '' : 's'}; unrelated scorers and tasks do not dilute each other)`;
}

/** How many numbered sections `renderGeneric` writes after `n0 - 1`. */
export function genericContents(g: GenericSections, n0: number): string[] {
  const titles = ['Results per subject and scorer', 'Pairwise subject comparisons per scorer'];
  if (g.judges.length) titles.push('Judges and agreement');
  if (g.slices.rows.length) titles.push('Slices');
  if (g.reconciliation.length) titles.push('Reported vs recomputed');
  titles.push('Invalid and errored samples');
  return titles.map((t, i) => `${n0 + i}. [${t}](#${n0 + i}-${t.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')})`);
}
