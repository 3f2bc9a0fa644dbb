/**
 * The clustered path of `standoff ci bootstrap --metric` over the store (#28): a metric's measured
 * values and integer cluster codes streamed into two Float64Arrays, in the store path's order,
 * with the groups' row ranges, not-measured counts and kind inputs from one aggregate.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachChunk, query, quoteIdent, type SqlParams } from '../store/duckdb.ts';
import { queryArrow } from '../store/arrow.ts';
import type { MetricDef } from '../store/metrics.ts';
import { dataError } from '../errors.ts';
import { checkColumns } from './metrics.ts';
import type { Group } from './ci.ts';

/** A metric's measured values for a clustered interval: values and integer cluster codes in the store path's order, and the groups' row ranges. */
interface CodedMetric {
  values: Float64Array;
  clusters: Float64Array;
  groups: { group: Group; key: string; start: number; end: number }[];
  /** Not-measured rows per group (only groups with some), as `countNotMeasured` returns them. */
  missing: Map<string, number>;
  /** Per group: measured values, values not 0/1, min and max (`kindFromAggregate`). */
  kindRows: Record<string, unknown>[];
}

/**
 * The clustered path's observations without one JS value per row beyond two Float64Arrays:
 * values and cluster codes (a number per distinct cluster id, joined back: equal iff the ids are; the cluster
 * bootstrap numbers clusters by first appearance, so codes resample exactly as the ids do) are
 * streamed in `loadMetric`'s order; the groups (`--by`) come from a small query (#28).
 */
export async function loadCodedMetric(conn: DuckDBConnection, m: MetricDef, by: string[], cluster: string): Promise<CodedMetric> {
  checkColumns(by, '--by');
  const measured = `(SELECT * FROM (${m.sql}) WHERE value IS NOT NULL)`;
  const g = by.map(quoteIdent);
  const order = [...by, 'subject_model', 'scenario_id', 'epoch', 'episode_id'].map(quoteIdent).join(', ');
  // One scan of all the metric's rows per group: measured and not measured, and the kind's inputs (values not 0/1, min, max).
  const heads = await queryArrow(
    conn,
    `SELECT ${g.length ? `${g.join(', ')}, ` : ''}count(value)::BIGINT AS k, (count(*) - count(value))::BIGINT AS missing, count(*) FILTER (WHERE value NOT IN (0, 1))::BIGINT AS nonbinary,
            CAST(min(value) AS DOUBLE) AS lo, CAST(max(value) AS DOUBLE) AS hi FROM (${m.sql}) ${g.length ? `GROUP BY ${g.join(', ')} ORDER BY ${g.join(', ')}` : ''}`,
    m.params,
  );
  const groups: CodedMetric['groups'] = [];
  const missing = new Map<string, number>();
  const kindRows: Record<string, unknown>[] = [];
  let n = 0;
  for (let i = 0; i < heads.numRows; i++) {
    const group: Group = {};
    for (const c of by) group[c] = heads.getChild(c)!.get(i) as string | number | null;
    const k = Number(heads.getChild('k')!.get(i));
    const key = by.map((c) => String(group[c])).join('\u0000');
    const miss = Number(heads.getChild('missing')!.get(i));
    if (miss > 0) missing.set(key, miss);
    kindRows.push({ n: k, nonbinary: Number(heads.getChild('nonbinary')!.get(i)), lo: heads.getChild('lo')!.get(i), hi: heads.getChild('hi')!.get(i) });
    if (k === 0) continue;
    groups.push({ group, key, start: n, end: n + k });
    n += k;
  }
  // A binary metric with a value not 0/1: only then the row number (a sort of every row) that names it.
  if (m.binary && kindRows.some((r) => Number(r.nonbinary) > 0)) {
    const bad = await query(conn, `SELECT value, rn FROM (SELECT value, row_number() OVER (ORDER BY ${order}) AS rn FROM ${measured}) WHERE value NOT IN (0, 1) ORDER BY rn LIMIT 1`, m.params);
    if (bad.rows.length) throw dataError('metric.notBinary', `metric ${m.name} has a non-binary value ${bad.rows[0]!.value} at row ${bad.rows[0]!.rn}`);
  }
  const values = new Float64Array(n);
  const clusters = new Float64Array(n);
  let at = 0;
  // Codes from the distinct clusters joined back (a window over every row does not fit 1 GB at 1e7), numbered once in a temp table.
  const cl = quoteIdent(cluster);
  const ids = `standoff_cluster_ids_${process.pid}`;
  await query(conn, `CREATE OR REPLACE TEMP TABLE ${ids} AS SELECT k, row_number() OVER () AS c FROM (SELECT DISTINCT ${cl} AS k FROM ${measured})`, m.params);
  try {
    // One subject at a time, in the order's own order of subjects, so each join and sort holds one subject's rows (1e7 did not fit 1 GB at once).
    const parts = await subjectParts(conn, m, measured, by, groups);
    const sort = order.split(', ').map((c) => `t.${c}`).join(', ');
    for (const part of parts) {
      const where = part === null ? '' : 'WHERE CAST(t.subject_model AS VARCHAR) = $standoff_part';
      const rowsSql = `SELECT CAST(t.value AS DOUBLE) AS value, ids.c FROM ${measured} t JOIN ${ids} ids ON t.${cl} IS NOT DISTINCT FROM ids.k ${where} ORDER BY ${sort}`;
      const params = part === null ? m.params : ({ ...((m.params ?? {}) as Record<string, unknown>), standoff_part: part } as SqlParams);
      await forEachChunk(conn, rowsSql, params, (cols, rows) => {
        const [V, C] = cols as [number[], (bigint | number)[]];
        for (let i = 0; i < rows; i++, at++) [values[at], clusters[at]] = [V[i]!, Number(C[i])];
      });
    }
  } finally {
    await query(conn, `DROP TABLE IF EXISTS ${ids}`);
  }
  if (at !== n) throw new Error(`loadCodedMetric: streamed ${at} rows, counted ${n}`);
  return { values, clusters, groups, missing, kindRows };
}

/**
 * The partitions of `loadCodedMetric`'s stream: the subjects (text) in ascending order when the
 * groups are none or the subject (the stream's order then starts with the subject, so the parts
 * concatenate to the one stream); else one part (`null`: the whole).
 */
async function subjectParts(conn: DuckDBConnection, m: MetricDef, measured: string, by: string[], groups: CodedMetric['groups']): Promise<(string | null)[]> {
  if (by.length === 1 && by[0] === 'subject_model') {
    const subjects = groups.map((g) => g.group.subject_model);
    return subjects.every((x) => typeof x === 'string') ? (subjects as string[]) : [null];
  }
  if (by.length > 0) return [null];
  const rows = (await query(conn, `SELECT CAST(subject_model AS VARCHAR) AS p FROM (SELECT DISTINCT subject_model FROM ${measured}) ORDER BY subject_model`, m.params)).rows;
  return rows.length > 0 && rows.every((r) => typeof r.p === 'string') ? rows.map((r) => r.p as string) : [null];
}

