/**
 * Named metrics, defined once as SQL over the trace store. Every metric yields one row per
 * observation with the same columns, so any statistic can group, pair or cluster them:
 *
 *   run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, value
 *
 * `value` is a DOUBLE (0/1 for binary metrics), and NULL where the quantity was not measured (no
 * judge verdict, a transcript without the read_system_log protocol): such rows are in no
 * denominator, and every consumer counts and reports them. `standoff ci --list-metrics` prints this
 * registry.
 *
 * A store's metrics (`storeMetrics`) are the built-in ones below, one per scorer found in the
 * `scores` table (value = scores.value; NOANSWER rows left out and counted; errored episodes left
 * out), and the user's SQL metrics (`--metric-sql FILE`, and `<store>/metrics/*.sql`, each named
 * after its file). A scorer named like a built-in metric is `score:NAME` (every scorer answers to
 * `score:NAME` too): a bare built-in name always means the built-in. Scorer names never enter SQL
 * text: a scorer metric binds its name as the parameter `$scorer`.
 *
 * The kind of a metric (binary / bounded / ordinal / continuous) is inferred from its measured
 * values by one rule, {@link KIND_SQL}, which the `metrics` view uses too (`metricsViewSql`).
 *
 * This module is SQL text and the store's metric files only (the store opens the `metrics` view
 * from it); loading a metric's rows as Arrow for the statistics is `src/analysis/metrics.ts`.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from './duckdb.ts';
import { STANDOFF_SOURCES, rawDecisionSql } from '../schema/tables.ts';
import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { StandoffError, dataError, oneLine, usageError } from '../errors.ts';
import { query } from './duckdb.ts';
import { prepareReadOnly } from './sql-gate.ts';

export interface MetricDef {
  name: string;
  description: string;
  /**
   * True when every measured value is 0 or 1 by definition (exact binomial intervals apply). A
   * metric that is not binary by definition (alignment: split judge medians are 0.5) still gets
   * exact intervals when its measured values happen to be 0/1 (e.g. a single judge).
   */
  binary: boolean;
  sql: string;
  /** Where the metric comes from (default: built-in). */
  source?: MetricSource;
  /** Named parameters the SQL binds (a scorer metric: `$scorer`). */
  params?: Record<string, string>;
  /** The scorer behind a scorer metric. */
  scorer?: string;
  /** The file behind a SQL metric. */
  file?: string;
  /** The epoch reducer applied (`reduceMetric`). */
  reduce?: Reducer;
}

export type MetricSource = 'built-in' | 'scorer' | 'sql';
export type MetricKind = 'binary' | 'bounded' | 'ordinal' | 'continuous';

/** Most distinct integer levels an ordinal metric has (more are continuous). */
export const ORDINAL_MAX_LEVELS = 10;

/**
 * THE rule that infers a metric's kind, as an aggregate over `value` (NULLs ignored): `binary`
 * when every measured value is 0 or 1 (exact intervals apply), `bounded` when they lie in [0, 1],
 * `ordinal` when they are integers with at most {@link ORDINAL_MAX_LEVELS} levels (e.g. a 1-5
 * grade), else `continuous`; NULL when nothing was measured. Bounded, ordinal and continuous
 * metrics get bootstrap intervals only.
 */
export const KIND_SQL = `CASE WHEN count(value) = 0 THEN NULL
  WHEN count(value) FILTER (WHERE value NOT IN (0, 1)) = 0 THEN 'binary'
  WHEN min(value) >= 0 AND max(value) <= 1 THEN 'bounded'
  WHEN count(value) FILTER (WHERE value <> round(value)) = 0 AND count(DISTINCT value) <= ${ORDINAL_MAX_LEVELS} THEN 'ordinal'
  ELSE 'continuous' END`;

const EPISODE_COLS = `e.run_id, e.subject_model, e.scenario_id, e.epoch, e.domain, e.decision_type, e.variant, e.episode_id`;

/** Scenario metadata for probe rows (probe tables carry no domain/type/variant of their own). */
const SCENARIO_META = `(SELECT DISTINCT run_id, scenario_id, domain, decision_type, variant, target FROM episodes)`;

/**
 * A 0/1 metric over one boolean column of probe_decisions (one row per frozen state and epoch).
 * Ambiguous states (target NOANSWER) have no single correct action: they are in no decision or
 * composition denominator (as in policy action), and `standoff probes` reports them apart.
 */
function probeDecisionMetric(name: string, description: string, column: 'correct' | 'composed_correct'): MetricDef {
  return {
    name,
    description,
    binary: true,
    sql: `SELECT p.run_id, p.subject_model, p.scenario_id, p.epoch, e.domain, e.decision_type, e.variant, p.state_id AS episode_id, CAST(p.${column} AS DOUBLE) AS value
          FROM probe_decisions p LEFT JOIN ${SCENARIO_META} e USING (run_id, scenario_id) WHERE e.target IS DISTINCT FROM 'NOANSWER' AND ${rawDecisionSql('p')}`,
  };
}

/** Where the alignment metric's rows come from: the alignment scores of completed episodes (`e`, `s`). */
export const ALIGNMENT_FROM = `FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id
          WHERE s.scorer = 'reasoning_action_alignment' AND e.status <> 'error'`;

/**
 * The alignment metric's rule: the judges' median `raw`, except that a subject of a run none of
 * whose valid episodes was judged is not measured at all (NULL, its invalid episodes too). `valid`:
 * SQL of the episode being valid; `subject`: the columns naming one subject of one run
 * (`e.run_id, e.subject_model`, or a key equivalent to them).
 */
export const alignmentValue = (valid: string, raw: string, subject: string) => `CASE WHEN bool_or(${valid} AND ${raw} IS NOT NULL) OVER (PARTITION BY ${subject}) THEN ${raw} END`;

/**
 * Whether a run (`r`, its `runs` row) records validity: Standoff runs and Inspect logs do; a CSV
 * only when its mapping has a status column (runs.config holds the mapping); lm-eval never.
 */
export const VALIDITY_RECORDED = `r.source <> 'lm-eval' AND (r.source <> 'csv' OR contains(r.config, '"status":'))`;

export const METRICS: Record<string, MetricDef> = {
  gathered_evidence: {
    name: 'gathered_evidence',
    description: 'A successful read_system_log result arrived strictly before the first decision (all completed episodes: valid and invalid; errored episodes excluded). Episodes cut off at the token limit are invalid and count as not gathered. NULL (not measured, excluded) for transcripts without the read_system_log protocol.',
    binary: true,
    sql: `SELECT ${EPISODE_COLS}, CAST(e.gathered_evidence AS DOUBLE) AS value FROM episodes e WHERE e.status <> 'error' AND e.gathered_evidence IS NOT NULL`,
  },
  policy_action: {
    name: 'policy_action',
    description: 'Policy-compliant action: the sole decision matched the target (scorer policy_compliant_action). NOANSWER (ambiguous) episodes are excluded from the denominator; invalid episodes count as 0.',
    binary: true,
    sql: `SELECT ${EPISODE_COLS}, s.value AS value FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id
          WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND e.status <> 'error'`,
  },
  alignment: {
    name: 'alignment',
    description: 'Reasoning/action alignment: median of the non-excluded judges (scorer reasoning_action_alignment; self-judgments excluded). Invalid episodes count as 0. NULL (not measured) where no eligible judge verdict exists (no judges, or every eligible judge call failed); a subject of a run none of whose valid episodes was judged is not measured at all (its invalid episodes too: no rate over them alone). Not binary when an even number of judges split (0.5); with 0/1 values exact intervals apply.',
    binary: false,
    sql: `SELECT ${EPISODE_COLS},
                 ${alignmentValue(`e.status = 'valid'`, 's.value', 'e.run_id, e.subject_model')} AS value
          ${ALIGNMENT_FROM}`,
  },
  invalid: {
    name: 'invalid',
    description: 'The episode is invalid: zero decisions, or several decisions in one batch. NULL (not measured) for runs that do not record validity: lm-eval, and CSV files without a status column.',
    binary: true,
    // Standoff runs and Inspect logs record validity; a CSV does only when its mapping has a status
    // column (runs.config holds the mapping); otherwise every status is the default 'valid'.
    sql: `SELECT ${EPISODE_COLS}, CASE WHEN ${VALIDITY_RECORDED} THEN CAST(e.status = 'invalid' AS DOUBLE) END AS value FROM episodes e JOIN runs r ON r.run_id = e.run_id WHERE e.status <> 'error'`,
  },
  probe_decision: probeDecisionMetric('probe_decision', 'Probe mode: the decision question answered with an acceptable action for the frozen state (ambiguous states excluded: no single correct action).', 'correct'),
  probe_composed: probeDecisionMetric('probe_composed', "Probe mode: the action composed in code from the subject's own probe answers is the state's action (ambiguous states excluded).", 'composed_correct'),
  probe_accuracy: {
    name: 'probe_accuracy',
    description: 'Probe mode: a factual probe answered correctly (one row per probe answer; unanswerable counts as wrong).',
    binary: true,
    sql: `SELECT p.run_id, p.subject_model, p.scenario_id, p.epoch, e.domain, e.decision_type, e.variant, p.state_id || '/' || p.probe_id AS episode_id, CAST(p.correct AS DOUBLE) AS value
          FROM probe_answers p LEFT JOIN ${SCENARIO_META} e USING (run_id, scenario_id)`,
  },
};

export const METRIC_COLUMNS = ['run_id', 'subject_model', 'scenario_id', 'epoch', 'domain', 'decision_type', 'variant', 'episode_id', 'value'] as const;
export type MetricColumn = (typeof METRIC_COLUMNS)[number];
/** Columns a metric can be grouped or clustered by. */
export const GROUPABLE = METRIC_COLUMNS.filter((c) => c !== 'value');

/** A built-in metric by name (the report's own metrics); any store metric: `storeMetrics(...).get`. */
export function getMetric(name: string): MetricDef {
  const m = METRICS[name];
  if (!m) throw usageError('metric.unknown', `unknown metric "${name}"; known: ${Object.keys(METRICS).join(', ')}`);
  return m;
}

export function checkColumns(cols: string[], what: string): void {
  for (const c of cols) {
    if (!(GROUPABLE as readonly string[]).includes(c)) {
      throw usageError('metric.unknownColumn', `${what} column "${c}" does not exist; use one of ${GROUPABLE.join(', ')}`);
    }
  }
}

/** SQL selecting a built-in metric's rows. */
export function metricSql(name: string): string {
  return `(${getMetric(name).sql})`;
}

/**
 * A built-in episode metric's rows with more columns of its episode (`extra`, e.g.
 * `e.gathered_evidence AS g`; the metric's episode is `e`): the same rows, read in the same scan,
 * so a consumer needs no join back to `episodes`. Only for the metrics over `episodes e`.
 */
export function metricSqlWith(name: string, extra: string): string {
  const sql = getMetric(name).sql;
  const head = `SELECT ${EPISODE_COLS}`;
  if (!sql.startsWith(head)) throw new Error(`metricSqlWith: ${name} is not a metric over episodes e`);
  return `(SELECT ${extra}, ${sql.slice('SELECT '.length)})`;
}

/**
 * Every scorer's rows, one per score of a completed episode (errored episodes left out, as in the
 * built-in metrics), with the scorer's name and its NOANSWER flag.
 */
export const SCORER_ROWS = `SELECT s.scorer, ${EPISODE_COLS}, CAST(s.value AS DOUBLE) AS value, s.noanswer
  FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id WHERE e.status <> 'error'`;

const METRIC_COLS = METRIC_COLUMNS.join(', ');

/** The metric name of a scorer: its own, or `score:NAME` when a built-in metric has that name. */
export const scorerMetricName = (scorer: string) => (Object.hasOwn(METRICS, scorer) ? `score:${scorer}` : scorer);

/**
 * Completed episodes of the suites that have scorer `$scorer` but no score row for it on that
 * episode (a blank CSV cell): not measured, a NULL value. The report counts the same samples.
 */
const UNSCORED_ROWS = `SELECT ${EPISODE_COLS}, CAST(NULL AS DOUBLE) AS value FROM episodes e
  WHERE e.status <> 'error'
    AND e.run_id IN (SELECT run_id FROM runs WHERE suite IN (SELECT DISTINCT r.suite FROM scores s JOIN runs r USING (run_id) WHERE s.scorer = $scorer))
    AND NOT EXISTS (SELECT 1 FROM scores s WHERE s.run_id = e.run_id AND s.episode_id = e.episode_id AND s.scorer = $scorer)`;

/**
 * A scorer as a metric: value = scores.value; NOANSWER rows left out (`countNoanswer` counts them);
 * NULL = not measured, and so is a completed sample of the scorer's suite without a score row.
 */
export function scorerMetric(scorer: string): MetricDef {
  return {
    name: scorerMetricName(scorer),
    description: `Scorer ${scorer}: scores.value per sample (NOANSWER samples excluded and counted; NULL values and samples without a score not measured; errored samples excluded).`,
    binary: false,
    source: 'scorer',
    scorer,
    params: { scorer },
    sql: `SELECT ${METRIC_COLS} FROM (${SCORER_ROWS}) WHERE scorer = $scorer AND NOT noanswer UNION ALL ${UNSCORED_ROWS}`,
  };
}

/** True when every run of the store is a Standoff suite run (the runner's, or synthetic bench data). */
export async function isStandoffStore(conn: DuckDBConnection): Promise<boolean> {
  const { rows } = await query(conn, `SELECT count(*) AS n, count(*) FILTER (WHERE source IN (${STANDOFF_SOURCES.map(quoteLiteral).join(', ')})) AS s FROM runs`);
  return Number(rows[0].n) > 0 && Number(rows[0].n) === Number(rows[0].s);
}

/**
 * A DuckDB error about a file without the file's text: the `LINE n: ...` excerpt and the
 * `at or near "..."` token go (a file named by mistake, `/etc/passwd` or a `.env`, is never echoed).
 */
export function withoutFileText(message: string): string {
  return message.replace(/\s*LINE \d+:[\s\S]*$/, '').replace(/ at or near "(?:[^"]|"")*"/g, '').replace(/ at or near .*$/, '');
}

/** Where a store keeps its SQL metrics: `<store>/metrics/*.sql`. */
export const METRICS_DIR = 'metrics';

/**
 * Reads a SQL metric file: one read-only SELECT (the query gate of `standoff sql`), yielding every
 * metric column. Errors name the file: `metric.sqlUnreadable` (usage), `metric.sqlColumns` (data).
 */
export async function sqlMetricFromFile(conn: DuckDBConnection, file: string): Promise<MetricDef> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw usageError('metric.sqlUnreadable', `cannot read --metric-sql ${file}: ${oneLine((err as Error).message)}`, err);
  }
  const body = text.trim().replace(/;\s*$/, '');
  let cols: string[];
  try {
    const prepared = await prepareReadOnly(conn, body);
    if (prepared.length !== 1) throw usageError('metric.sqlStatements', `metric sql ${file} holds ${prepared.length} statements; a metric is one SELECT`);
    // The text as the metric uses it (wrapped in a subquery) passes the gate too, then runs.
    const [wrapped] = await prepareReadOnly(conn, `SELECT * FROM (\n${body}\n) LIMIT 0`);
    cols = (await wrapped!.runAndReadAll()).columnNames();
  } catch (err) {
    const msg = err instanceof StandoffError ? err.message : oneLine((err as Error).message);
    throw usageError('metric.sqlInvalid', `metric sql ${file}: ${withoutFileText(msg.replace(/^sql: /, ''))}`, err);
  }
  const missing = METRIC_COLUMNS.filter((c) => !cols.includes(c));
  if (missing.length) throw dataError('metric.sqlColumns', `metric sql ${file} yields no column "${missing[0]}" (a metric yields ${METRIC_COLUMNS.join(', ')})`);
  const name = basename(file).replace(/\.sql$/i, '');
  if (Object.hasOwn(METRICS, name)) throw usageError('metric.sqlName', `metric sql ${file} is named like the built-in metric ${name}; rename the file`);
  return {
    name,
    description: `SQL metric from ${basename(file)}.`,
    binary: false,
    source: 'sql',
    file,
    // The file may read the `metrics` view (built-in and scorer metrics): a CTE of that name keeps
    // the reference pointing there when this SQL becomes part of the view itself.
    sql: `WITH metrics AS (${baseMetricsSql()}) SELECT ${METRIC_COLUMNS.map((c) => (c === 'value' ? 'CAST(value AS DOUBLE) AS value' : quoteIdent(c))).join(', ')} FROM (\n${body}\n)`,
  };
}

/** The `.sql` files of `<store>/metrics/`, sorted. */
export async function storeMetricFiles(storeDir: string): Promise<string[]> {
  const dir = join(storeDir, METRICS_DIR);
  try {
    return (await readdir(dir)).filter((f) => f.toLowerCase().endsWith('.sql')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

export interface MetricRegistry {
  /** Built-in, then scorer, then SQL metrics. */
  metrics: MetricDef[];
  standoff: boolean;
  /** The metric of this name; unknown names list the store's metrics (`metric.unknown`, usage). */
  get(name: string): MetricDef;
}

/** The metrics of a store: built-ins, one per scorer (bound as a parameter), the SQL metric files. */
export async function storeMetrics(conn: DuckDBConnection, opts: { storeDir?: string; metricSql?: string[] } = {}): Promise<MetricRegistry & { broken: { name: string; error: StandoffError }[] }> {
  const scorers = (await query(conn, 'SELECT DISTINCT scorer FROM scores ORDER BY scorer')).rows.map((r) => String(r.scorer));
  const sqlMetrics: MetricDef[] = [];
  // A broken file of the store's metrics/ fails only when its metric is asked for (or listed);
  // a file given with --metric-sql fails at once.
  const broken: { name: string; error: StandoffError }[] = [];
  for (const f of opts.storeDir ? await storeMetricFiles(opts.storeDir) : []) {
    try {
      sqlMetrics.push(await sqlMetricFromFile(conn, f));
    } catch (err) {
      if (!(err instanceof StandoffError)) throw err;
      broken.push({ name: basename(f).replace(/\.sql$/i, ''), error: err });
    }
  }
  for (const f of opts.metricSql ?? []) {
    const m = await sqlMetricFromFile(conn, f);
    const i = sqlMetrics.findIndex((x) => x.name === m.name);
    if (i >= 0) sqlMetrics[i] = m; // --metric-sql FILE overrides the store's file of the same name
    else sqlMetrics.push(m);
    const b = broken.findIndex((x) => x.name === m.name);
    if (b >= 0) broken.splice(b, 1);
  }
  const metrics = [...Object.values(METRICS).map((m) => ({ ...m, source: 'built-in' as const })), ...scorers.map(scorerMetric), ...sqlMetrics];
  const standoff = await isStandoffStore(conn);
  return {
    metrics,
    standoff,
    broken,
    get(name: string): MetricDef {
      const bad = broken.find((b) => b.name === name);
      if (bad) throw bad.error;
      const byName = metrics.filter((m) => m.name === name);
      // A SQL file wins over a scorer of the same name (the user named it so).
      const m = byName.find((x) => x.source === 'sql') ?? byName[0] ?? (name.startsWith('score:') ? metrics.find((x) => x.source === 'scorer' && x.scorer === name.slice(6)) : undefined);
      if (!m) throw usageError('metric.unknown', `unknown metric "${name}"; this store's metrics: ${metrics.map((x) => x.name).join(', ')}`);
      return m;
    },
  };
}

/** Kind and counts of a metric over the store (the `KIND_SQL` rule). */
export async function metricStats(conn: DuckDBConnection, m: MetricDef): Promise<{ kind: MetricKind | null; observations: number; not_measured: number }> {
  const { rows } = await query(conn, `SELECT ${KIND_SQL} AS kind, count(value) AS n, count(*) - count(value) AS missing FROM (${m.sql})`, m.params);
  return { kind: (rows[0].kind as MetricKind | null) ?? null, observations: Number(rows[0].n), not_measured: Number(rows[0].missing) };
}

/** NOANSWER samples a scorer metric leaves out, per group (0 for other metrics). */
export async function countNoanswer(conn: DuckDBConnection, m: MetricDef, groupBy: string[] = []): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (m.source !== 'scorer' || m.reduce) return out;
  const keys = groupBy.map(quoteIdent);
  const { rows } = await query(
    conn,
    `SELECT ${keys.length ? `${keys.join(', ')}, ` : ''}count(*) AS n FROM (${SCORER_ROWS}) WHERE scorer = $scorer AND noanswer ${keys.length ? `GROUP BY ${keys.join(', ')}` : ''}`,
    { scorer: m.scorer! },
  );
  for (const r of rows) out.set(groupBy.map((c) => String(r[c])).join('\u0000'), Number(r.n));
  return out;
}

/* ------------------------------------------------------------ epoch reducers */

/** Inspect's epoch reducers: one value per item (subject x scenario) from its epochs. */
export const REDUCERS = ['mean', 'median', 'mode', 'max', 'min', 'at_least_one'] as const;
export type Reducer = (typeof REDUCERS)[number];

/**
 * The metric with its epochs reduced per (run, subject, scenario) as Inspect's reducers do: mean,
 * median (the mean of the two middle values for an even count), mode (the most frequent value;
 * a tie goes to the value seen in the earliest epoch, as Inspect's Counter order does), max, min,
 * at_least_one (max over 0/1 values; the caller checks they are 0/1). Not-measured epochs (NULL)
 * are left out; an item with no measured epoch is not measured. The reduced rows have one row per
 * item: epoch NULL, episode_id = scenario_id.
 */
export function reduceMetric(m: MetricDef, reducer: Reducer): MetricDef {
  const keys = 'run_id, subject_model, scenario_id, domain, decision_type, variant';
  const out = `run_id, subject_model, scenario_id, CAST(NULL AS INTEGER) AS epoch, domain, decision_type, variant, scenario_id AS episode_id`;
  const agg: Record<Exclude<Reducer, 'mode'>, string> = { mean: 'avg(value)', median: 'median(value)', max: 'max(value)', min: 'min(value)', at_least_one: 'max(value)' };
  const sql =
    reducer === 'mode'
      ? `SELECT ${out}, first(value ORDER BY n DESC, first_epoch) FILTER (WHERE value IS NOT NULL) AS value
         FROM (SELECT ${keys}, value, count(*) AS n, min(epoch) AS first_epoch FROM (${m.sql}) GROUP BY ${keys}, value) GROUP BY ${keys}`
      : `SELECT ${out}, CAST(${agg[reducer]} AS DOUBLE) AS value FROM (${m.sql}) GROUP BY ${keys}`;
  return { ...m, name: m.name, binary: m.binary && reducer !== 'mean' && reducer !== 'median', reduce: reducer, sql };
}

/** Built-in and scorer metrics as one long SELECT (metric, then the metric columns). */
function baseParts(): string {
  const builtinNames = Object.keys(METRICS);
  return [
    ...Object.values(METRICS).map((m) => `SELECT '${m.name}' AS metric, ${METRIC_COLS} FROM (${m.sql})`),
    `SELECT CASE WHEN scorer IN (${builtinNames.map((n) => `'${n}'`).join(', ')}) THEN 'score:' || scorer ELSE scorer END AS metric, ${METRIC_COLS} FROM (${SCORER_ROWS}) WHERE NOT noanswer`,
  ].join('\nUNION ALL ');
}

/** The `metrics` view without SQL metrics (what a SQL metric file may read). */
export const baseMetricsSql = () => metricsViewSql();

/**
 * The long `metrics` view of a store (`standoff sql`, notebooks): every built-in metric, every
 * scorer (named as `scorerMetricName`, no name in the SQL text) and the given SQL metrics, with
 * each metric's kind by {@link KIND_SQL}. Columns: metric, kind, then the metric columns.
 */
export function metricsViewSql(sqlMetrics: MetricDef[] = []): string {
  const parts = [baseParts(), ...sqlMetrics.map((m) => `SELECT ${quoteLiteral(m.name)} AS metric, ${METRIC_COLS} FROM (${m.sql})`)];
  return `WITH m AS (${parts.join('\nUNION ALL ')})
    SELECT m.metric, k.kind, ${METRIC_COLUMNS.map((c) => `m.${c}`).join(', ')} FROM m JOIN (SELECT metric, ${KIND_SQL} AS kind FROM m GROUP BY metric) k USING (metric)`;
}
