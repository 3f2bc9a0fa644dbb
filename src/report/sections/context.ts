/**
 * The report's view of the store: opens it read-only (DuckDB threads pinned), checks the input
 * (missing store, empty store, unknown run, runs of different suites), and materializes the
 * per-episode observations every section aggregates (`obs_t`, `obs_agg`), with one `subject` label
 * per (run, subject_model): the model name, or `model @ run` when the same model appears in more
 * than one run (the structural gate then fails its "distinct subject models" check).
 *
 * All aggregation happens in SQL with GROUP BY; sections receive small count tables or, where a
 * resampling statistic needs them, per-group typed vectors (`queryArrow`). Counts are integers in
 * SQL and ratios are formed in JS, so no floating-point sum depends on DuckDB's thread schedule.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Table } from 'apache-arrow';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { StandoffError, oneLine } from '../../errors.ts';
import { openStore, type Store } from '../../store/open-store.ts';
import { createSpillDirectory, query, quoteLiteral, type Plain, type SqlParams } from '../../store/duckdb.ts';
import { queryArrow } from '../../store/arrow.ts';
import { listCommittedRuns, storeExists } from '../../store/write-run.ts';
import { VALIDITY_RECORDED, alignmentValue } from '../../analysis/metrics.ts';
import type { LoadedPrices } from '../../analysis/price-table.ts';
import { byText } from '../markdown.ts';

/** DuckDB worker threads for the report (pinned; nothing in the report depends on it). */
export const REPORT_THREADS = 2;
/** DuckDB memory limit for the report (the 1M-episode bench stays under 2 GB RSS). */
export const REPORT_MEMORY_LIMIT = '1GB';

/** The metrics of the results table, in column order. */
export const MAIN_METRICS = ['gathered_evidence', 'policy_action', 'alignment', 'invalid'] as const;
export type MainMetric = (typeof MAIN_METRICS)[number];

export const METRIC_LABEL: Record<MainMetric, string> = {
  gathered_evidence: 'Evidence gathered before decision',
  policy_action: 'Policy action accuracy',
  alignment: 'Reasoning/action alignment',
  invalid: 'Invalid episodes',
};

/** A fixed, colour-blind-friendly palette; subjects take colours in sorted order. */
/**
 * Subject colours: the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"), which stays
 * distinguishable with protanopia, deuteranopia and tritanopia (no red/green-only contrast; see
 * tests/report/figures.test.ts). Yellow is last: weakest on white.
 */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000', '#F0E442'];

export interface RunInfo {
  run_id: string;
  suite: string;
  source: string;
  status: string;
  created_at: string | null;
  seed: number | null;
  epochs: number | null;
  standoff_version: string;
  notes: string | null;
  config: Record<string, unknown> | null;
  temperature: number | null;
}

export interface ReportContext {
  conn: DuckDBConnection;
  storeDir: string;
  runIds: string[];
  runs: RunInfo[];
  suite: string;
  /** Subject labels, sorted. */
  subjects: string[];
  colours: Record<string, string>;
  seed: number;
  resamples: number;
  level: number;
  /** ERROR verdicts a run may hold and still pass the gate (`--allow-judge-errors`). */
  allowJudgeErrors: number;
  /** Truncated episodes a run may have and still pass the gate (`--allow-truncated`). */
  allowTruncated: number;
  /** Required scores nobody measured a run may hold and still pass the gate (`--allow-missing`). */
  allowMissing: number;
  log: (line: string) => void;
  /** State ids flagged by `--exclude-states` (the probe section's sensitivity table); undefined when none. */
  excludeStates?: string[];
  /** The price table of `--prices FILE` (the cost section); undefined or null: cost not measured. */
  prices?: LoadedPrices | null;
  /** Plain rows of `sql`; untrusted values (model names, scorers, ids) go in `params` as `$name`. */
  q(sql: string, params?: SqlParams): Promise<Record<string, Plain>[]>;
  arrow(sql: string, params?: SqlParams): Promise<Table>;
}

export const reportError = (code: string, kind: 'usage' | 'data' | 'store', message: string, cause?: unknown) =>
  new StandoffError(`report.${code}`, kind, message, { cause });

/** Opens and checks the store; the caller closes the returned store. */
export async function openReportStore(traces: string, runs: string[] | undefined): Promise<Store> {
  if (!(await storeExists(traces))) {
    throw reportError('noStore', 'store', `trace store ${traces} does not exist (pass --traces DIR, or create runs with standoff run / standoff ingest)`);
  }
  const committed = await listCommittedRuns(traces);
  if (committed.length === 0) {
    throw reportError('emptyStore', 'store', `trace store ${traces} holds no runs; nothing to report`);
  }
  const missing = (runs ?? []).filter((r) => !committed.includes(r));
  if (missing.length > 0) {
    throw reportError('noSuchRun', 'usage', `run "${missing[0]}" does not exist in ${traces} (runs: ${committed.join(', ')})`);
  }
  try {
    const store = await openStore(traces, { runs: runs && runs.length > 0 ? [...new Set(runs)] : undefined, threads: REPORT_THREADS });
    await store.conn.run(`SET memory_limit = ${quoteLiteral(REPORT_MEMORY_LIMIT)}`);
    await store.conn.run(`SET preserve_insertion_order = false`);
    // A spill directory of this build's own (DuckDB's default is ./.tmp, which two builds in one
    // directory share, and the first to close deletes under the other), removed with the store;
    // named with the pid like every bounded store's, so a crashed build's is removed by the next open.
    const spill = createSpillDirectory();
    await store.conn.run(`SET temp_directory = ${quoteLiteral(spill)}`);
    const close = store.close;
    return {
      ...store,
      close: () => {
        try {
          close();
        } finally {
          rmSync(spill, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    if (err instanceof StandoffError) throw reportError(err.code.replace(/^store\./, ''), err.kind === 'usage' ? 'usage' : 'store', err.message, err);
    throw reportError('unreadableStore', 'store', `cannot open trace store ${traces}: ${oneLine((err as Error).message)}`, err);
  }
}

function parseConfig(text: Plain): Record<string, unknown> | null {
  if (typeof text !== 'string') return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The first numeric `temperature` anywhere in the config (breadth first), or null. */
export function findTemperature(config: unknown): number | null {
  const queue: unknown[] = [config];
  while (queue.length) {
    const v = queue.shift();
    if (!v || typeof v !== 'object') continue;
    if (!Array.isArray(v) && typeof (v as Record<string, unknown>).temperature === 'number') return (v as Record<string, number>).temperature;
    queue.push(...(Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)));
  }
  return null;
}

export async function buildContext(
  store: Store,
  opts: { seed: number; resamples: number; level: number; allowJudgeErrors?: number; allowTruncated?: number; allowMissing?: number; log: (line: string) => void; mixedSuites?: boolean },
): Promise<ReportContext> {
  const conn = store.conn;
  const q = async (sql: string, params?: SqlParams) => (await query(conn, sql, params)).rows;
  const arrow = (sql: string, params?: SqlParams) => queryArrow(conn, sql, params);
  const runRows = await q(
    `SELECT run_id, suite, source, status, strftime(created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at, seed, epochs, standoff_version, notes, config FROM runs ORDER BY run_id`,
  );
  const runs: RunInfo[] = runRows.map((r) => {
    const config = parseConfig(r.config);
    return {
      run_id: String(r.run_id),
      suite: String(r.suite),
      source: String(r.source),
      status: String(r.status),
      created_at: r.created_at === null ? null : String(r.created_at),
      seed: r.seed === null ? null : Number(r.seed),
      epochs: r.epochs === null ? null : Number(r.epochs),
      standoff_version: String(r.standoff_version),
      notes: r.notes === null ? null : String(r.notes),
      config,
      temperature: findTemperature(config),
    };
  });
  const suites = new Map<string, string[]>();
  for (const r of runs) suites.set(r.suite, [...(suites.get(r.suite) ?? []), r.run_id]);
  if (suites.size > 1 && !opts.mixedSuites) {
    const list = [...suites.entries()].sort(([a], [b]) => byText(a, b)).map(([s, ids]) => `${s}: ${ids.join(', ')}`).join('; ');
    throw reportError('mixedSuites', 'usage', `runs come from different suites (${list}); report one suite at a time with --run`);
  }
  const [{ n, probes }] = await q(`SELECT (SELECT CAST(count(*) AS BIGINT) FROM episodes) AS n, (SELECT CAST(count(*) AS BIGINT) FROM probe_decisions) AS probes`);
  // A paired-probe import holds no episodes: its subjects are those of its probe decisions (the probe sections report it).
  const probesOnly = Number(n) === 0 && Number(probes) > 0;
  if (Number(n) === 0 && !probesOnly) {
    throw reportError('noEpisodes', 'data', `run${runs.length === 1 ? '' : 's'} ${runs.map((r) => r.run_id).join(', ')} hold${runs.length === 1 ? 's' : ''} no episodes; nothing to report`);
  }

  await conn.run(`CREATE TEMP TABLE r_subject0 AS
    SELECT run_id, subject_model,
           CASE WHEN count(*) OVER (PARTITION BY subject_model) > 1 THEN subject_model || ' @ ' || run_id ELSE subject_model END AS subject
    FROM (SELECT DISTINCT run_id, subject_model FROM ${probesOnly ? 'probe_decisions' : 'episodes'})`);
  const subjects = (await q(`SELECT DISTINCT subject FROM r_subject0`)).map((r) => String(r.subject)).sort(byText);
  // Subject index (position in the sorted subject list), so resampling vectors carry integers;
  // the labels (model names) are bound, as a JSON list, never written into the SQL.
  await query(
    conn,
    `CREATE TEMP TABLE r_subject AS
    SELECT r.run_id, r.subject_model, r.subject, CAST(i.subj AS INTEGER) AS subj
    FROM r_subject0 r JOIN (SELECT unnest(l) AS subject, generate_subscripts(l, 1) - 1 AS subj FROM (SELECT CAST(CAST($subjects AS JSON) AS VARCHAR[]) AS l)) i USING (subject)`,
    { subjects: JSON.stringify(subjects) },
  );
  const colours: Record<string, string> = {};
  subjects.forEach((s, i) => (colours[s] = PALETTE[i % PALETTE.length]));
  return {
    conn,
    storeDir: store.dir,
    runIds: store.runIds,
    runs,
    suite: runs[0].suite,
    subjects,
    colours,
    seed: opts.seed,
    resamples: opts.resamples,
    level: opts.level,
    allowJudgeErrors: opts.allowJudgeErrors ?? 0,
    allowTruncated: opts.allowTruncated ?? 0,
    allowMissing: opts.allowMissing ?? 0,
    log: opts.log,
    q,
    arrow,
  };
}

/**
 * The report's observations of one run (`$run`): a row per (metric, observation) of each of
 * {@link MAIN_METRICS}, the rows of the metric's own SQL (`METRICS`, src/store/metrics.ts) that
 * have a subject and a scenario, keyed by integers (metric `mk`, subject `subj`, scenario
 * `sid`, slice dimensions `dim`). Policy-action rows carry their episode's gathered_evidence
 * (`g`: grounded vs lucky needs no join back to episodes); other rows NULL.
 *
 * The run's completed episodes are keyed once (`k`: subject, scenario and dimensions joined once,
 * not once a metric) and its policy-action and alignment scores joined to them in one join on the
 * episode id alone (the run is fixed: no run id in the join key, and the hash table holds integer
 * keys, not the episodes' text columns). The same rows as the metrics' SQL, pair for pair: every
 * episode row joins every score row of its id (a duplicated episode stays duplicated).
 *
 * Alignment's rule (`alignmentValue`: a subject of a run none of whose valid episodes was judged is
 * not measured at all) is not applied here as a window over each subject's rows (at 1e7 the window
 * held all 16.7M score rows of the join): the rows keep the judges' value and `aj` marks each
 * alignment row of a valid episode with a value (TRUE, else NULL), rows without a scenario kept
 * where so marked, since the rule sees them; {@link applyAlignmentRule} then applies the rule over
 * the whole table and removes those rows. That needs each `subj` to belong to one run; where a
 * subject label spans runs (`windowed`), the window is used as before (`aj` NULL).
 * tests/report/observations-table.test.ts holds these rows to the metrics' SQL, both ways.
 */
const EPISODE_KEYS = `WITH k AS NOT MATERIALIZED (
    SELECT e.episode_id, CAST(s.subj AS SMALLINT) AS subj, c.sid, e.epoch, d.dim, e.status = 'valid' AS valid, e.status = 'invalid' AS invalid, e.gathered_evidence
    FROM (SELECT * FROM episodes WHERE run_id = $run AND status <> 'error') e
    JOIN (SELECT subject_model, subj FROM r_subject WHERE run_id = $run) s USING (subject_model)
    LEFT JOIN r_scn c USING (scenario_id)
    JOIN r_dims d ON d.domain IS NOT DISTINCT FROM e.domain AND d.decision_type IS NOT DISTINCT FROM e.decision_type AND d.variant IS NOT DISTINCT FROM e.variant)`;

export const observationRowsSql = (windowed: boolean) => `${EPISODE_KEYS}
  SELECT CAST(0 AS TINYINT) AS mk, subj, sid, epoch, dim, CAST(gathered_evidence AS DOUBLE) AS value, CAST(NULL AS BOOLEAN) AS g, CAST(NULL AS BOOLEAN) AS aj
    FROM k
    WHERE sid IS NOT NULL AND gathered_evidence IS NOT NULL
  UNION ALL SELECT * FROM (
    SELECT CAST(CASE WHEN pol THEN 1 ELSE 2 END AS TINYINT) AS mk, subj, sid, epoch, dim,
           CASE WHEN pol THEN value ELSE ${windowed ? alignmentValue('NOT pol AND valid', 'value', 'subj') : 'value'} END AS value,
           CASE WHEN pol THEN gathered_evidence END AS g,
           ${windowed ? 'CAST(NULL AS BOOLEAN)' : 'CASE WHEN NOT pol AND valid AND value IS NOT NULL THEN true END'} AS aj
    FROM (SELECT episode_id, scorer = 'policy_compliant_action' AS pol, value, noanswer FROM scores
          WHERE run_id = $run AND scorer IN ('policy_compliant_action', 'reasoning_action_alignment')) sc
    JOIN k USING (episode_id)
    WHERE NOT pol OR NOT noanswer)
  WHERE sid IS NOT NULL OR aj`;

/**
 * Alignment's rule over obs_t built without the window (`observationRowsSql(false)`): the
 * alignment values of a subject with no `aj` row (no valid episode judged) become NULL, then the
 * rows without a scenario (kept only for `aj`) are removed. One scan of obs_t's mk, subj, sid and
 * aj; the UPDATE and DELETE run only where there is something to change.
 */
async function applyAlignmentRule(conn: DuckDBConnection): Promise<void> {
  const bySubject = (await query(conn, `SELECT subj, bool_or(aj) IS TRUE AS judged, bool_or(sid IS NULL) AS unplaced FROM ${OBS_DB}.obs_t WHERE mk = 2 GROUP BY subj ORDER BY subj`)).rows;
  const unjudged = bySubject.filter((r) => r.judged !== true).map((r) => Number(r.subj));
  if (!unjudged.every(Number.isInteger)) throw new Error(`obs_t: a subject index that is not an integer (${unjudged.join(', ')})`);
  if (unjudged.length) await conn.run(`UPDATE ${OBS_DB}.obs_t SET value = NULL WHERE mk = 2 AND subj IN (${unjudged.join(', ')})`);
  if (bySubject.some((r) => r.unplaced === true)) await conn.run(`DELETE FROM ${OBS_DB}.obs_t WHERE sid IS NULL`);
}

/**
 * The counts of one run (`$run`) that come from its episodes alone, as `obs_agg` counts obs_t's
 * rows: gathered_evidence (mk 0, the evidence rows of obs_t counted per subject, scenario, slice
 * dimensions and value) and the `invalid` metric (mk 3: 1 for an invalid completed episode, 0 for a
 * valid one, NULL (not measured) where the source records no validity, `VALIDITY_RECORDED`; only
 * counted, no section reads them per epoch). Both from one pass over the episodes (`a`: completed
 * episodes with a scenario counted per subject, scenario, dimensions, evidence and validity), so
 * obs_agg's GROUP BY over obs_t skips obs_t's evidence rows (10M of 26.7M at 1e7).
 */
export const EPISODE_COUNTS_SQL = `${EPISODE_KEYS}, a AS MATERIALIZED (
    SELECT subj, sid, dim, gathered_evidence AS ge, invalid, count(*) AS n FROM k WHERE sid IS NOT NULL GROUP BY ALL)
  SELECT CAST(0 AS TINYINT) AS mk, subj, sid, dim, CAST(NULL AS BOOLEAN) AS g, CAST(ge AS DOUBLE) AS value, CAST(sum(n) AS INTEGER) AS n
    FROM a
    WHERE ge IS NOT NULL
    GROUP BY subj, sid, dim, ge
  UNION ALL
  SELECT CAST(3 AS TINYINT) AS mk, subj, sid, dim, CAST(NULL AS BOOLEAN) AS g,
         CASE WHEN ${VALIDITY_RECORDED} THEN CAST(invalid AS DOUBLE) END AS value, CAST(sum(n) AS INTEGER) AS n
    FROM a, (SELECT source, config FROM runs WHERE run_id = $run) r
    GROUP BY ALL`;

const materialized = new WeakSet<ReportContext>();

/**
 * Materializes the observations every section aggregates (temp tables r_scn, r_dims; tables obs_t
 * and obs_agg in the compressed in-memory database {@link OBS_DB}, read through temp views of the
 * same names), once per context. obs_t holds the rows of gathered_evidence, policy_action and
 * alignment (mk 0-2: mk, subj, sid, epoch, value), what the pairwise pivot and the ranking read per
 * (scenario, epoch); obs_agg counts those and the \`invalid\` metric's (mk 3) per slice dimensions
 * and evidence. Done after the structural gate, so the gate's own queries never
 * share memory with these tables.
 */
export async function materializeObservations(ctx: ReportContext): Promise<void> {
  if (materialized.has(ctx)) return;
  materialized.add(ctx);
  // Scenario index (integer cluster ids for the resampling vectors).
  await ctx.conn.run(`CREATE TEMP TABLE r_scn AS
    SELECT scenario_id, CAST(row_number() OVER (ORDER BY scenario_id) - 1 AS INTEGER) AS sid FROM (SELECT DISTINCT scenario_id FROM episodes)`);
  // Slice dimensions as one small integer per (domain, decision type, variant) combination.
  await ctx.conn.run(`CREATE TEMP TABLE r_dims AS
    SELECT domain, decision_type, variant, CAST(row_number() OVER (ORDER BY domain, decision_type, variant) - 1 AS INTEGER) AS dim
    FROM (SELECT DISTINCT domain, decision_type, variant FROM episodes)`);
  // One narrow row per (metric, observation), integer keys; episode ids stay in \`episodes\`
  // (listings join back). Built one run at a time (observationRowsSql).
  const runs = (await query(ctx.conn, `SELECT DISTINCT run_id FROM r_subject WHERE run_id IS NOT NULL ORDER BY run_id`)).rows.map((r) => String(r.run_id));
  // Held compressed (an in-memory database with COMPRESS, compressed at its one CHECKPOINT, after
  // obs_agg is counted and obs_t's columns for it dropped; DuckDB's temp tables are not compressed):
  // at 1e7 both then take ~140 MB instead of ~1.4 GB (half of it spilled), so the sections' scans
  // read memory, not the spill file. Compression is lossless; \`obs_t\` and \`obs_agg\` are views of them.
  await ctx.conn.run(`ATTACH ':memory:' AS ${OBS_DB} (COMPRESS)`);
  // Alignment's rule per subject over the whole table needs each subject index in one run (a label can span runs only if a model is named `m @ run`).
  const windowed = Number((await query(ctx.conn, `SELECT count(*) AS n FROM (SELECT subj FROM r_subject GROUP BY subj HAVING count(DISTINCT run_id) > 1)`)).rows[0].n) > 0;
  for (const [i, run] of (runs.length ? runs : [null]).entries()) {
    await query(ctx.conn, `${i === 0 ? `CREATE TABLE ${OBS_DB}.obs_t AS` : `INSERT INTO ${OBS_DB}.obs_t`} ${observationRowsSql(windowed)}`, { run });
  }
  if (!windowed) await applyAlignmentRule(ctx.conn);
  // The observations counted once per (metric, subject, scenario, slice dimensions, evidence,
  // value): what results, slices and grounded vs lucky fold (each a weighted read of this table:
  // the same (group, cluster, value, count) rows as from obs_t, without re-aggregating it).
  // The evidence (mk 0) and validity (mk 3) counts come from the episodes directly (EPISODE_COUNTS_SQL).
  await ctx.conn.run(`CREATE TABLE ${OBS_DB}.obs_agg AS SELECT mk, subj, sid, dim, g, value, CAST(count(*) AS INTEGER) AS n FROM ${OBS_DB}.obs_t WHERE mk > 0 GROUP BY ALL`);
  for (const run of runs.length ? runs : [null]) await query(ctx.conn, `INSERT INTO ${OBS_DB}.obs_agg BY NAME ${EPISODE_COUNTS_SQL}`, { run });
  // obs_t is read per (scenario, epoch) only by the pairwise pivot and the ranking: dimensions and evidence are counted in obs_agg.
  await ctx.conn.run(`ALTER TABLE ${OBS_DB}.obs_t DROP COLUMN g`);
  await ctx.conn.run(`ALTER TABLE ${OBS_DB}.obs_t DROP COLUMN dim`);
  await ctx.conn.run(`ALTER TABLE ${OBS_DB}.obs_t DROP COLUMN aj`);
  await ctx.conn.run(`CHECKPOINT ${OBS_DB}`);
  await ctx.conn.run(`CREATE TEMP VIEW obs_t AS SELECT * FROM ${OBS_DB}.obs_t`);
  await ctx.conn.run(`CREATE TEMP VIEW obs_agg AS SELECT * FROM ${OBS_DB}.obs_agg`);
}

/** The in-memory database that holds the report's observation tables (`materializeObservations`). */
export const OBS_DB = 'obs_mem';


export const exists = existsSync;
