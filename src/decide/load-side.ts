/**
 * Reads the sides of `standoff compare` from their stores: each side's metric values (the store's
 * metric registry, `--reduce` applied as `ci paired` does), with each run's suite as the task.
 * Stores open sandboxed, as every statistics command's.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { withStore, resolveMetric } from '../report/ci.ts';
import { loadMetric, type Reducer } from '../report/metrics.ts';
import { float64Column } from '../store/arrow.ts';
import { query } from '../store/duckdb.ts';
import { dataError, usageError } from '../errors.ts';
import { buildSide, parseSideRef, type MetricRow, type Side, type SideRef } from './side.ts';
import { compareSides, type CompareSettings, type CompareSummary } from './compare.ts';

/** run_id -> suite (the task) of the store's runs. */
async function suites(conn: DuckDBConnection): Promise<Map<string, string>> {
  const r = await query(conn, 'SELECT run_id, suite FROM runs');
  return new Map(r.rows.map((row) => [String(row.run_id), row.suite === null ? '(no suite)' : String(row.suite)]));
}

/** The metric's measured rows of a store, with the task of each. */
export async function loadMetricRows(conn: DuckDBConnection, traces: string, metric: string, reduce?: Reducer): Promise<MetricRow[]> {
  const resolved = await resolveMetric(conn, { traces }, { metric, reduce });
  const table = await loadMetric(conn, resolved.def);
  const suite = await suites(conn);
  const run = table.getChild('run_id')!;
  const subj = table.getChild('subject_model')!;
  const scen = table.getChild('scenario_id')!;
  const ep = table.getChild('epoch')!;
  const val = float64Column(table, 'value');
  const out: MetricRow[] = [];
  for (let i = 0; i < table.numRows; i++) {
    const e = ep.get(i);
    const r = String(run.get(i));
    out.push({ run_id: r, subject_model: String(subj.get(i)), suite: suite.get(r) ?? '(no suite)', scenario_id: String(scen.get(i)), epoch: e === null ? null : Number(e), value: val[i] });
  }
  return out;
}

/** The sides [baseline, candidate] of every metric, read from one or two stores. */
export async function loadSides(o: { baseline: SideRef; candidate: SideRef; traces: string; baselineTraces?: string; metrics: string[]; reduce?: Reducer }): Promise<[Side, Side][]> {
  const read = async (ref: SideRef, traces: string): Promise<Side[]> =>
    withStore({ traces, ...(ref.kind === 'run' ? { runs: [ref.value] } : {}) }, async (conn) => {
      const out: Side[] = [];
      for (const m of o.metrics) {
        const rows = await loadMetricRows(conn, traces, m, o.reduce);
        if (ref.kind === 'subject' && !rows.some((r) => r.subject_model === ref.value)) {
          const names = [...new Set(rows.map((r) => r.subject_model))].sort();
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
