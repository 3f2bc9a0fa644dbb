/**
 * Rerun agreement (the paper's "a rerun of JEV's decisions five days later matched 96.3% of 2,783
 * states"): two runs of the same subject on the same states, paired on (subject, scenario, epoch);
 * a pair matches when both made the same terminal decision (two invalid episodes with no decision
 * match; errored episodes are left out). Exact Clopper-Pearson interval, pairs treated as
 * independent. `standoff rerun --a RUN --b RUN` for two named runs; the report finds every pair of
 * runs in the store that share a subject ({@link findReruns}).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { dataError } from '../errors.ts';
import { query } from '../store/duckdb.ts';
import { clopperPearson } from '../stats/clopper-pearson.ts';
import { withStore, type StoreSource } from './ci.ts';

export interface RerunRow {
  subject_model: string;
  /** Episodes paired on (subject, scenario, epoch) that are completed in both runs. */
  paired: number;
  /** Pairs whose terminal decision (or invalidity) is the same. */
  matched: number;
  agreement: number | null;
  lower: number | null;
  upper: number | null;
}

/** One pair of runs of the same subject, as the report shows it. */
export interface RerunPair extends RerunRow {
  a: string;
  b: string;
  /** Both runs sealed the same states (equal manifest roots); null when a run recorded no manifest. */
  same_states: boolean | null;
}

/** Pairs of completed episodes; `named`: runs $a and $b only, else every pair of distinct runs (a < b). */
function rerunSql(named: boolean): string {
  return `SELECT x.run_id AS a, y.run_id AS b, x.subject_model, CAST(count(*) AS BIGINT) AS paired,
          CAST(count(*) FILTER (WHERE x.decision_tool IS NOT DISTINCT FROM y.decision_tool) AS BIGINT) AS matched
   FROM episodes x JOIN episodes y ON x.subject_model = y.subject_model AND x.scenario_id = y.scenario_id AND x.epoch = y.epoch
   WHERE ${named ? 'x.run_id = $a AND y.run_id = $b' : 'x.run_id < y.run_id'} AND x.status <> 'error' AND y.status <> 'error'
   GROUP BY x.run_id, y.run_id, x.subject_model ORDER BY x.run_id, y.run_id, x.subject_model`;
}

/** Query rows -> agreement rows with exact intervals. */
export function buildRerunRows(rows: Record<string, unknown>[], level: number): (RerunRow & { a: string; b: string })[] {
  return rows.map((r) => {
    const n = Number(r.paired);
    const k = Number(r.matched);
    const ci = clopperPearson(k, n, { level });
    return { a: String(r.a), b: String(r.b), subject_model: String(r.subject_model), paired: n, matched: k, agreement: ci.estimate, lower: ci.lower, upper: ci.upper };
  });
}

export async function rerunAgreement(src: StoreSource & { a: string; b: string }, level = 0.95): Promise<{ a: string; b: string; level: number; subjects: RerunRow[] }> {
  const rows = await withStore({ traces: src.traces, runs: [src.a, src.b] }, async (conn) => (await query(conn, rerunSql(true), { a: src.a, b: src.b })).rows);
  if (rows.length === 0) throw dataError('rerun.noPairs', `runs "${src.a}" and "${src.b}" share no completed (subject, scenario, epoch) episode`);
  return { a: src.a, b: src.b, level, subjects: buildRerunRows(rows, level).map(({ a: _a, b: _b, ...r }) => r) };
}

/** The root of a run's state manifest (`runs.config.state_manifest.root`), or null. */
const manifestRoot = (config: Record<string, unknown> | null | undefined): string | null => {
  const m = config?.state_manifest as { root?: unknown } | undefined;
  return typeof m?.root === 'string' ? m.root : null;
};

/**
 * Every pair of runs in the store that share a subject and completed (scenario, epoch) episodes,
 * with agreement and whether the runs sealed the same states. Empty when no model is in two runs.
 */
export async function findReruns(conn: DuckDBConnection, configs: Readonly<Record<string, Record<string, unknown> | null>>, level: number): Promise<RerunPair[]> {
  // Pairs join episodes of one subject model in two runs: with no model in two runs there are none,
  // and the self-join of every episode (a hash of the whole table at 1e7) is skipped.
  const shared = await query(conn, `SELECT subject_model FROM (SELECT DISTINCT run_id, subject_model FROM episodes WHERE status <> 'error') GROUP BY subject_model HAVING count(*) > 1 LIMIT 1`);
  if (shared.rows.length === 0) return [];
  const rows = buildRerunRows((await query(conn, rerunSql(false))).rows, level);
  return rows.map((r) => {
    const ra = manifestRoot(configs[r.a]);
    const rb = manifestRoot(configs[r.b]);
    return { ...r, same_states: ra === null || rb === null ? null : ra === rb };
  });
}
