/**
 * The episode sets behind the counts of `reports/index.html`: each count the report shows that
 * opens a list of episodes (a cell of the grounded-vs-lucky table, a subject's invalid or errored
 * episodes, an invalid/error reason, a subject's judge disagreements) is one {@link EpisodeSetDef}
 * whose SQL over the store's own tables *is* its definition. The same SQL, with its values bound
 * as parameters (never interpolated), lists the episodes; the page shows it with the values
 * written in, ready for `standoff sql`.
 *
 * The sets come from the typed report results (`ReportResults`): each carries the count the
 * report printed, and the loader (`load-episodes.ts`) checks that its SQL finds exactly as many
 * episodes, so a count and the list it opens cannot drift apart.
 */
import { quoteLiteral } from '../../store/duckdb.ts';
import type { ReportResults } from '../report-results.ts';
import type { GenericSections } from '../generic.ts';
import { ALIGNMENT_FROM, metricSql, scorerMetric, scorerMetricName } from '../../analysis/metrics.ts';
import { METRIC_LABEL, type MainMetric } from '../sections/context.ts';
import { DIM_LABEL, SLICE_DIMENSIONS, type SliceDimension } from '../sections/slices.ts';
import { uniqueEpisodeRuns } from '../sections/summary.ts';
import type { SCORER_NAMES } from '../../schema/tables.ts';
import { buildFourCellSets, buildGenericJudgePairSets, buildO1FourCellSets, buildStandoffJudgePairSets } from './pair-sets.ts';

export type { SubjectSource, SetParam, EpisodeSetDef, GenericSubjectSource } from './set-types.ts';
import type { SubjectSource, EpisodeSetDef, GenericSubjectSource } from './set-types.ts';

/** Every set query returns run_id, episode_id, scenario_id, epoch, in this order. */
const ORDER = 'ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id';
/** The same order over a set query's output columns. */
export const SET_ORDER = 'ORDER BY run_id, scenario_id, epoch, episode_id';

/**
 * A set query without its closing ORDER BY (every set's SQL ends with {@link ORDER}, shown so
 * `standoff sql` lists in page order): the loader wraps it and orders outside, by the same keys,
 * only the rows it keeps. DuckDB runs an ORDER BY inside a subquery, a full sort of every member
 * (250,000 episodes of a subject at 1e6), before the outer LIMIT.
 */
export function withoutOrder(sql: string): string {
  const end = sql.trimEnd();
  return end.endsWith(ORDER) ? end.slice(0, -ORDER.length).trimEnd() : sql;
}

/** Policy-action episodes (section 3's base: non-ambiguous, not errored, measured), by evidence and correctness. */
const GROUNDED_SQL = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id
WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND e.status <> 'error' AND s.value IS NOT NULL
  AND e.run_id = $run AND e.subject_model = $model AND e.gathered_evidence = $gathered AND (s.value = 1) = $correct
${ORDER}`;

/** {@link GROUNDED_SQL} for every row of `p` (run, model, gathered, correct) in one pass. */
const GROUNDED_BATCH = `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id
JOIN p ON e.run_id = p.run AND e.subject_model = p.model AND e.gathered_evidence = p.gathered AND (s.value = 1) = p.correct
WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND e.status <> 'error' AND s.value IS NOT NULL`;

/** Episodes of a subject with a status (section 8; `invalid` is also section 2's "Invalid episodes"). */
const STATUS_SQL = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e
WHERE e.run_id = $run AND e.subject_model = $model AND e.status = $status
${ORDER}`;

/** {@link STATUS_SQL} for every row of `p` (run, model, status). */
const STATUS_BATCH = `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN p ON e.run_id = p.run AND e.subject_model = p.model AND e.status = p.status`;

/** Episodes with a status and reason (section 8's reason table; the reason as section 8 words it). */
const REASON_SQL = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e
WHERE e.status = $status AND coalesce(CASE WHEN e.status = 'invalid' THEN e.invalid_reason ELSE e.error END, '(no reason recorded)') = $reason
${ORDER}`;

/** {@link REASON_SQL} for every row of `p` (status, reason). */
const REASON_BATCH = `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e
JOIN p ON e.status = p.status AND coalesce(CASE WHEN e.status = 'invalid' THEN e.invalid_reason ELSE e.error END, '(no reason recorded)') = p.reason`;

/**
 * Judged episodes whose eligible verdicts (not excluded as self, not ERROR) differ (section 6's
 * "Eligible judges disagree"): a judge's value on an episode is its max, as in the judge patterns.
 */
const DISAGREE_SQL = `WITH e AS (SELECT run_id, episode_id, scenario_id, epoch FROM episodes WHERE run_id = $run AND subject_model = $model),
j AS (SELECT j.run_id, j.episode_id, j.judge_model, max(j.value) AS v, bool_or(j.excluded_self) AS x FROM judgments j
  SEMI JOIN e ON j.run_id = e.run_id AND j.episode_id = e.episode_id WHERE j.run_id = $run AND j.scorer = $scorer GROUP BY ALL)
SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM e JOIN j ON j.run_id = e.run_id AND j.episode_id = e.episode_id
WHERE NOT j.x AND j.v IS NOT NULL
GROUP BY e.run_id, e.episode_id, e.scenario_id, e.epoch HAVING count(DISTINCT j.v) > 1
${ORDER}`;

/** A subject's "eligible judges disagree" set ({@link DISAGREE_SQL}; in parts for the judge batch). */
export function disagreeSet(subject: string, s: SubjectSource, scorer: string, count: number): EpisodeSetDef {
  const params = { run: s.run_id, model: s.subject_model, scorer };
  return { key: disagreeKey(subject), title: `${subject} · eligible judges disagree`, count, sql: DISAGREE_SQL, params, judge: { scorer, subject: { run: s.run_id, model: s.subject_model } } };
}

/** Every episode of a subject (section 2's samples). */
const ALL_SQL = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e
WHERE e.run_id = $run AND e.subject_model = $model
${ORDER}`;

/** {@link ALL_SQL} for every row of `p` (run, model). */
const ALL_BATCH = `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN p ON e.run_id = p.run AND e.subject_model = p.model`;

/** A rate's denominator (section 2): the subject's episodes on which the metric was measured. */
const metricMeasuredSql = (m: MainMetric) => `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM ${metricSql(m)} o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL
${ORDER}`;

/**
 * {@link metricMeasuredSql} without its join back to episodes, for a run whose episode ids are
 * unique (the gate's `unique_episodes` passed): the metric's rows already carry the episode's own
 * run, id, scenario and epoch (`metricSql` reads them from \`episodes e\`), so each row meets exactly
 * the episode row it came from and the join changes nothing. At 1e7 the join costs ~1 s of CPU a set.
 */
const metricMeasuredDirectSql = (m: MainMetric) => `SELECT o.run_id, o.episode_id, o.scenario_id, o.epoch FROM ${metricSql(m)} o
WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL`;

/**
 * {@link metricMeasuredDirectSql} of the alignment metric without its window. The metric's value is
 * the score where some valid episode of the subject (run, model: the window's partition) has a
 * score, else NULL for the whole subject; so its measured rows are the subject's scored rows when
 * such an episode exists (an EXISTS that stops at the first one), and none otherwise. The same rows,
 * read narrow: at 1e7 the window held each subject's 2.5M rows with all the metric's columns
 * (~400 MB) beside the join's hash table, the episode browser's peak of memory.
 */
export const ALIGNMENT_MEASURED_DIRECT_SQL = `WITH a AS NOT MATERIALIZED (SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch, e.status = 'valid' AS valid, s.value
  ${ALIGNMENT_FROM} AND e.run_id = $run AND e.subject_model = $model)
SELECT run_id, episode_id, scenario_id, epoch FROM a WHERE value IS NOT NULL AND EXISTS (SELECT 1 FROM a WHERE valid AND value IS NOT NULL)`;

/** {@link metricMeasuredDirectSql} for every row of `p` (run, model). */
const metricMeasuredDirectBatch = (m: MainMetric) => `SELECT p.set_idx, o.run_id, o.episode_id, o.scenario_id, o.epoch FROM ${metricSql(m)} o
JOIN p ON o.run_id = p.run AND o.subject_model = p.model WHERE o.value IS NOT NULL`;

/** {@link metricMeasuredSql} for every row of `p` (run, model). */
const metricMeasuredBatch = (m: MainMetric) => `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM ${metricSql(m)} o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
JOIN p ON o.run_id = p.run AND o.subject_model = p.model WHERE o.value IS NOT NULL`;

/** How the loader answers a measured set: without the join back to episodes where the run's episode ids are unique (the batch of such runs' sets too). */
const measuredQueries = (m: MainMetric, unique: boolean) => (unique ? { direct: m === 'alignment' ? ALIGNMENT_MEASURED_DIRECT_SQL : metricMeasuredDirectSql(m), batch: metricMeasuredDirectBatch(m) } : { batch: metricMeasuredBatch(m) });

/** The scorer whose value a list of a rate's episodes shows. */
const METRIC_SCORER: Record<(typeof LINKED_METRICS)[number], (typeof SCORER_NAMES)[number]> = { gathered_evidence: 'gathered_evidence', policy_action: 'policy_compliant_action', alignment: 'reasoning_action_alignment' };

/** The rates of section 2 whose cells open their measured episodes. */
export const LINKED_METRICS = ['gathered_evidence', 'policy_action', 'alignment'] as const;

const GROUNDED_CELLS = [
  ['gathered_correct', true, true, 'gathered evidence, correct action'],
  ['gathered_incorrect', true, false, 'gathered evidence, incorrect action'],
  ['not_gathered_correct', false, true, 'no evidence, correct action (lucky)'],
  ['not_gathered_incorrect', false, false, 'no evidence, incorrect action'],
] as const;

export type GroundedCell = (typeof GROUNDED_CELLS)[number][0];

export const allKey = (subject: string) => `all/${subject}`;
export const metricKey = (subject: string, metric: MainMetric) => `measured/${metric}/${subject}`;
export const groundedKey = (subject: string, cell: GroundedCell) => `grounded/${subject}/${cell}`;
export const statusKey = (subject: string, status: 'invalid' | 'error') => `${status}/${subject}`;
export const reasonKey = (status: string, reason: string) => `reason/${status}/${reason}`;
export const disagreeKey = (subject: string) => `disagree/${subject}`;
/** A slice cell of section 4 (JSON parts: a slice value may hold any character). */
export const sliceKey = (dimension: string, value: string, metric: MainMetric, subject: string) => `slice:${JSON.stringify([dimension, value, metric, subject])}`;

/**
 * A slice cell's trials (section 4): the subject's episodes in the slice on which the metric was
 * measured, the slice value as section 4 groups it (NULL as `(none)`). `dim` is one of
 * SLICE_DIMENSIONS (a column name, never data).
 */
const sliceSql = (m: MainMetric, dim: SliceDimension) => `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM ${metricSql(m)} o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL AND coalesce(o.${dim}, '(none)') = $slice
${ORDER}`;

/** {@link sliceSql} for every row of `p` (run, model, slice). */
const sliceBatch = (m: MainMetric, dim: SliceDimension) => `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM ${metricSql(m)} o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
JOIN p ON o.run_id = p.run AND o.subject_model = p.model AND coalesce(o.${dim}, '(none)') = p.slice WHERE o.value IS NOT NULL`;

/** The sets of section 4's cells: one per dimension, value, metric and subject with trials. */
function buildSliceSets(r: ReportResults, src: (subject: string) => SubjectSource | undefined): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  for (const x of r.slices.rows) {
    const s = src(x.subject);
    if (!s || !x.measured || x.trials === 0 || !(SLICE_DIMENSIONS as readonly string[]).includes(x.dimension)) continue;
    const title = `${x.subject} · ${DIM_LABEL[x.dimension]} ${x.value} · ${METRIC_LABEL[x.metric]}: the ${x.trials} measured episode${x.trials === 1 ? '' : 's'}`;
    const params = { run: s.run_id, model: s.subject_model, slice: x.value };
    sets.push({ key: sliceKey(x.dimension, x.value, x.metric, x.subject), title, count: x.trials, shows: x.trials, sql: sliceSql(x.metric, x.dimension), batch: sliceBatch(x.metric, x.dimension), params, scorer: METRIC_SCORER[x.metric as (typeof LINKED_METRICS)[number]] });
  }
  return sets;
}

/** Every episode set the report's counts point at, in page order. */
export function buildEpisodeSets(r: ReportResults, sources: SubjectSource[]): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  const src = (subject: string) => sources.find((s) => s.subject === subject);
  const unique = uniqueEpisodeRuns(r.gate ? { gate: r.gate } : undefined);
  for (const x of r.results.subjects) {
    const s = src(x.subject);
    if (!s) continue;
    sets.push({ key: allKey(x.subject), title: `${x.subject} · every episode`, count: x.samples, sql: ALL_SQL, batch: ALL_BATCH, params: { run: s.run_id, model: s.subject_model } });
    for (const m of LINKED_METRICS) {
      const t = x.metrics[m].trials;
      sets.push({ key: metricKey(x.subject, m), title: `${x.subject} · ${METRIC_LABEL[m]}: the ${t} measured episode${t === 1 ? '' : 's'}`, count: t, sql: metricMeasuredSql(m), params: { run: s.run_id, model: s.subject_model }, scorer: METRIC_SCORER[m], ...measuredQueries(m, unique.get(s.run_id) === true) });
    }
  }
  for (const g of r.grounded.subjects) {
    const s = src(g.subject);
    if (!s) continue;
    for (const [cell, gathered, correct, label] of GROUNDED_CELLS) {
      sets.push({ key: groundedKey(g.subject, cell), title: `${g.subject} · ${label}`, count: g.table[cell], sql: GROUNDED_SQL, batch: GROUNDED_BATCH, params: { run: s.run_id, model: s.subject_model, gathered, correct }, scorer: 'policy_compliant_action' });
    }
  }
  for (const e of r.episodes.subjects) {
    const s = src(e.subject);
    if (!s) continue;
    sets.push({ key: statusKey(e.subject, 'invalid'), title: `${e.subject} · invalid episodes`, count: e.invalid, sql: STATUS_SQL, batch: STATUS_BATCH, params: { run: s.run_id, model: s.subject_model, status: 'invalid' } });
    sets.push({ key: statusKey(e.subject, 'error'), title: `${e.subject} · errored episodes`, count: e.errored, sql: STATUS_SQL, batch: STATUS_BATCH, params: { run: s.run_id, model: s.subject_model, status: 'error' } });
  }
  for (const x of r.episodes.reasons) {
    sets.push({ key: reasonKey(x.status, x.reason), title: `${x.status} · ${x.reason}`, count: x.count, sql: REASON_SQL, batch: REASON_BATCH, params: { status: x.status, reason: x.reason } });
  }
  if (r.judges.available) {
    for (const p of r.judges.per_subject) {
      const s = src(p.subject);
      if (!s) continue;
      sets.push(disagreeSet(p.subject, s, r.judges.scorer, p.disagreements));
    }
  }
  const scorerOf = (m: string) => METRIC_SCORER[m as (typeof LINKED_METRICS)[number]] ?? m;
  return [...sets, ...buildStandoffJudgePairSets(r), ...buildO1FourCellSets(r, sources, scorerOf), ...buildSliceSets(r, src)];
}

export const genericAllKey = (suite: string, subject: string) => `all/${suite}/${subject}`;
export const genericScorerKey = (suite: string, subject: string, scorer: string) => `measured/${suite}/${scorer}/${subject}`;

/** A scorer's rate denominator (the generic section 2): the subject's samples on which it was measured, NOANSWER and errored samples out. */
const scorerMeasuredSql = (scorer: string) => `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM (${scorerMetric(scorer).sql}) o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL
${ORDER}`;
export const genericStatusKey = (suite: string, subject: string, status: 'invalid' | 'error') => `${status}/${suite}/${subject}`;

/**
 * The sets of a report over a store that is not a Standoff suite (CSV, Inspect, lm-eval; the
 * generic sections): per suite and subject, every sample (the samples table's count), its invalid
 * and its errored samples; per status and reason, the samples that have it. The same definitions
 * as the Standoff report's (`ALL_SQL`, `STATUS_SQL`, `REASON_SQL`), so the loader's count check
 * holds them to the numbers the report printed.
 */
export function buildGenericEpisodeSets(g: GenericSections, sources: GenericSubjectSource[]): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  const several = g.suites.length > 1;
  for (const x of g.samples) {
    const s = sources.find((o) => o.suite === x.suite && o.subject === x.subject);
    if (!s) continue;
    const who = several ? `${x.suite} · ${x.subject}` : x.subject;
    const params = { run: s.run_id, model: s.subject_model };
    sets.push({ key: genericAllKey(x.suite, x.subject), title: `${who} · every sample`, count: x.samples, sql: ALL_SQL, params });
    for (const r of g.results.filter((o) => o.suite === x.suite && o.subject === x.subject && o.n > 0)) {
      const name = scorerMetricName(r.scorer);
      sets.push({ key: genericScorerKey(x.suite, x.subject, r.scorer), title: `${who} · ${name}: the ${r.n} measured sample${r.n === 1 ? '' : 's'}`, count: r.n, sql: scorerMeasuredSql(r.scorer), params: { ...params, scorer: r.scorer } });
    }
    if (x.invalid > 0) sets.push({ key: genericStatusKey(x.suite, x.subject, 'invalid'), title: `${who} · invalid samples`, count: x.invalid, sql: STATUS_SQL, params: { ...params, status: 'invalid' } });
    if (x.errored > 0) sets.push({ key: genericStatusKey(x.suite, x.subject, 'error'), title: `${who} · errored samples`, count: x.errored, sql: STATUS_SQL, params: { ...params, status: 'error' } });
  }
  return [...sets, ...buildFourCellSets(g, sources), ...buildGenericJudgePairSets(g), ...buildGenericSliceSets(g, sources)];
}

/** Slice rows of a generic report whose cells index.html links (in table order): each costs one query at build time. */
export const GENERIC_SLICE_LINKED = 300;

export const genericSliceKey = (dimension: string, level: string, suite: string, scorer: string, subject: string) => `slice:${JSON.stringify([dimension, level, suite, scorer, subject])}`;

/**
 * A generic slice row's samples: the subject's samples in the slice level on which the scorer was
 * measured (NOANSWER and errored samples out), the level as the slices section reads it: the
 * episode column (domain, decision_type, variant) or the scalar metadata key (`metadata.KEY`).
 * The dimension and level are bound parameters.
 */
const genericSliceSql = (scorer: string) => `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM (${scorerMetric(scorer).sql}) o JOIN episodes e ON e.run_id = o.run_id AND e.episode_id = o.episode_id
WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL AND $level = CASE $dim WHEN 'domain' THEN e.domain WHEN 'decision_type' THEN e.decision_type WHEN 'variant' THEN e.variant
  ELSE CASE WHEN starts_with($dim, 'metadata.') AND json_type(e.metadata::JSON) = 'OBJECT' AND json_type((e.metadata::JSON) -> substr($dim, 10)) IN ('VARCHAR', 'BOOLEAN', 'BIGINT', 'UBIGINT', 'INTEGER')
    THEN (e.metadata::JSON) ->> substr($dim, 10) END END
${ORDER}`;

/** The sets of the generic slices tables (the first GENERIC_SLICE_LINKED rows with samples): a row's n and value open its samples. */
function buildGenericSliceSets(g: GenericSections, sources: GenericSubjectSource[]): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  const several = g.suites.length > 1;
  for (const x of g.slices.rows.filter((r) => r.n > 0).slice(0, GENERIC_SLICE_LINKED)) {
    const s = sources.find((o) => o.suite === x.suite && o.subject === x.subject);
    if (!s) continue;
    const title = `${several ? `${x.suite} · ` : ''}${x.subject} · ${x.dimension} = ${x.level} · ${scorerMetricName(x.scorer)}: the ${x.n} measured sample${x.n === 1 ? '' : 's'}`;
    const params = { run: s.run_id, model: s.subject_model, scorer: x.scorer, dim: x.dimension, level: x.level };
    sets.push({ key: genericSliceKey(x.dimension, x.level, x.suite, x.scorer, x.subject), title, count: x.n, shows: x.n, sql: genericSliceSql(x.scorer), params });
  }
  return sets;
}

/** The set's SQL with its values written in (quoted), for `standoff sql`. */
export function toStandaloneSql(set: Pick<EpisodeSetDef, 'sql' | 'params'>): string {
  return set.sql.replace(/\$([a-z]+)/g, (whole, name: string) => {
    const v = set.params[name];
    if (v === undefined) return whole;
    return typeof v === 'boolean' ? String(v) : quoteLiteral(v);
  });
}

/** A shell command that runs `sql` with `standoff sql` (single-quoted for sh). */
export function toSqlCommand(sql: string): string {
  return `standoff sql '${sql.replace(/\s+/g, ' ').trim().replace(/'/g, `'\\''`)}'`;
}
