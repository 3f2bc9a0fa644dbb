/**
 * Small temp tables the probe decisions' queries join (the ladder, calibration), each in place
 * while `fn` runs and dropped afterwards:
 *
 *   withSubjectKeys(q, table, subject?, fn): integer keys for the decisions' subjects and runs, so
 *     the queries group and sort on integers instead of strings (at 1e7 episodes, 10M decisions).
 *     One row per (run_id, subject_model) of probe_decisions with its subject label (`subject`),
 *     `ix`: the label's dense rank (0-based), `run_ix`: the run id's dense rank. Both ranks follow
 *     DuckDB's ORDER BY on the strings (NULLs last), so ORDER BY ix, run_ix gives the rows of
 *     ORDER BY subject, run_id in the same order, and GROUP BY run_ix, ix the groups of GROUP BY
 *     run_id, subject. `fn` gets the label of each ix.
 *   withEpisodeTargets(q, table, columns, fn): `SELECT DISTINCT run_id, scenario_id, <columns>,
 *     target FROM episodes` (one row per scenario of a run in a Standoff store), which the
 *     decisions join to leave out ambiguous (NOANSWER) states. Written inline as a subquery, the
 *     same join had DuckDB build its hash table on the 10M decisions, payload strings included
 *     (at 1e7: 17.8 s CPU for calibration, 8.1 s with the table); a table of known size is built
 *     on, and the decisions stream through it.
 */
import type { Plain, SqlParams } from '../store/duckdb.ts';

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

/** The subject label of decision `d` (an expression) and the join it needs; default `d.subject_model`. */
export type SubjectExpr = { expr: string; join: string };

const keysSql = (table: string, subject: SubjectExpr | undefined) => `
  CREATE OR REPLACE TEMP TABLE ${table} AS
  SELECT run_id, subject_model, subject,
         CAST(dense_rank() OVER (ORDER BY subject) AS INTEGER) - 1 AS ix,
         CAST(dense_rank() OVER (ORDER BY run_id) AS INTEGER) AS run_ix
  FROM (SELECT d.run_id, d.subject_model, ${subject?.expr ?? 'd.subject_model'} AS subject
        FROM (SELECT DISTINCT run_id, subject_model FROM probe_decisions) d ${subject?.join ?? ''})`;

export async function withSubjectKeys<T>(q: Q, table: string, subject: SubjectExpr | undefined, fn: (labels: Map<number, Plain>) => Promise<T>): Promise<T> {
  await q(keysSql(table, subject));
  try {
    const labels = new Map<number, Plain>();
    for (const r of await q(`SELECT DISTINCT ix, subject FROM ${table}`)) labels.set(Number(r.ix), r.subject);
    return await fn(labels);
  } finally {
    await q(`DROP TABLE IF EXISTS ${table}`);
  }
}

/** The rows of `withEpisodeTargets`' table, as a query (for a caller that reads them once, inline). */
export const episodeTargetsSql = (columns: readonly string[]): string => `SELECT DISTINCT run_id, scenario_id, ${[...columns, 'target'].join(', ')} FROM episodes`;

export async function withEpisodeTargets<T>(q: Q, table: string, columns: readonly string[], fn: () => Promise<T>): Promise<T> {
  await q(`CREATE OR REPLACE TEMP TABLE ${table} AS ${episodeTargetsSql(columns)}`);
  try {
    return await fn();
  } finally {
    await q(`DROP TABLE IF EXISTS ${table}`);
  }
}
