/**
 * Reads the sides of `standoff compare` from their stores: each side's metric values (the store's
 * metric registry, `--reduce` applied as `ci paired` does), with each run's suite as the task.
 * Stores open sandboxed, as every statistics command's.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { withStore, resolveMetric } from '../analysis/ci.ts';
import type { Reducer } from '../analysis/metrics.ts';
import { query } from '../store/duckdb.ts';
import { dataError, usageError } from '../errors.ts';
import { buildSide, parseSideRef, type MetricRow, type Side, type SideRef } from './side.ts';
import { compareSides, type CompareSettings, type CompareSummary } from './compare.ts';

/**
 * The metric's measured rows of a store (optionally only one run's or one subject's), with the
 * task (the run's suite) of each. Columns come straight from DuckDB (no Arrow, no row objects on
 * the DuckDB side); the side's filter is a bound parameter.
 */
export async function loadMetricRows(conn: DuckDBConnection, traces: string, metric: string, reduce?: Reducer, side?: SideRef): Promise<MetricRow[]> {
  const resolved = await resolveMetric(conn, { traces }, { metric, reduce });
  const m = resolved.def;
  const where = side ? ` AND m.${side.kind === 'run' ? 'run_id' : 'subject_model'} = $decide_side` : '';
  const params = { ...(m.params ?? {}), ...(side ? { decide_side: side.value } : {}) };
  const run = async (sql: string) => (Object.keys(params).length ? conn.runAndReadAll(sql, params) : conn.runAndReadAll(sql));
  // The few (run, subject, suite) combinations once, then each row's combination as a small integer.
  const base = `SELECT m.*, dense_rank() OVER (ORDER BY m.run_id, m.subject_model) - 1 AS decide_code FROM (${m.sql}) m WHERE m.value IS NOT NULL${where}`;
  const combos = (await run(`SELECT DISTINCT b.decide_code, b.run_id, b.subject_model, coalesce(r.suite, '(no suite)') AS suite FROM (${base}) b LEFT JOIN runs r USING (run_id) ORDER BY 1`)).getRowObjectsJS();
  const cols = (await run(`SELECT CAST(decide_code AS INTEGER), CAST(scenario_id AS VARCHAR), CAST(epoch AS INTEGER), CAST(value AS DOUBLE) FROM (${base}) ORDER BY subject_model, scenario_id, epoch, episode_id`)).getColumnsJS();
  if (cols.length < 4 || !cols[3]) return []; // no rows: DuckDB gives no column vectors
  const [code, scen, ep, val] = cols as [number[], string[], (number | null)[], number[]];
  const who = combos.map((c) => ({ run_id: String(c.run_id), subject_model: String(c.subject_model), suite: String(c.suite) }));
  const out: MetricRow[] = new Array(val.length);
  for (let i = 0; i < val.length; i++) {
    const c = who[code[i]];
    out[i] = { run_id: c.run_id, subject_model: c.subject_model, suite: c.suite, scenario_id: scen[i], epoch: ep[i], value: val[i] };
  }
  return out;
}

/** The sides [baseline, candidate] of every metric, read from one or two stores. */
export async function loadSides(o: { baseline: SideRef; candidate: SideRef; traces: string; baselineTraces?: string; metrics: string[]; reduce?: Reducer }): Promise<[Side, Side][]> {
  const read = async (ref: SideRef, traces: string): Promise<Side[]> =>
    withStore({ traces, ...(ref.kind === 'run' ? { runs: [ref.value] } : {}) }, async (conn) => {
      const out: Side[] = [];
      for (const m of o.metrics) {
        const rows = await loadMetricRows(conn, traces, m, o.reduce, ref);
        if (ref.kind === 'subject' && rows.length === 0) {
          const names = (await query(conn, 'SELECT DISTINCT subject_model FROM episodes ORDER BY 1')).rows.map((r) => String(r.subject_model));
          throw dataError('compare.noSubject', `${ref.label} has no ${m} values in ${traces} (subjects: ${names.join(', ') || 'none'})`);
        }
        out.push(buildSide(ref, m, rows, traces));
      }
      return out;
    });
  const base = await read(o.baseline, o.baselineTraces ?? o.traces);
  const cand = await read(o.candidate, o.traces);
  return base.map((b, i) => [b, cand[i]]);
}

export interface CompareOptions extends CompareSettings {
  baseline: string;
  candidate: string;
  traces: string;
  baselineTraces?: string;
  metrics: string[];
  reduce?: Reducer;
}

/** `standoff compare`: the sides read from their stores, then `compareSides`. */
export async function loadComparison(o: CompareOptions): Promise<CompareSummary & { baseline: SideInfo; candidate: SideInfo }> {
  if (!o.metrics.length) throw usageError('compare.missingArg', 'give --metric NAME (repeatable; see standoff ci --list-metrics)');
  const baseline = parseSideRef('--baseline', o.baseline);
  const candidate = parseSideRef('--candidate', o.candidate);
  const bt = o.baselineTraces ?? o.traces;
  if (baseline.label === candidate.label && bt === o.traces) throw usageError('compare.sameSides', `--baseline and --candidate are both ${baseline.label} in ${o.traces}`);
  const sides = await loadSides({ ...o, baseline, candidate });
  const info = (s: Side, traces: string): SideInfo => ({ ref: s.ref.label, traces, subjects: s.subjects, runs: s.runs });
  return { baseline: info(sides[0][0], bt), candidate: info(sides[0][1], o.traces), ...compareSides(sides, o) };
}

export interface SideInfo {
  ref: string;
  traces: string;
  subjects: string[];
  runs: string[];
}
