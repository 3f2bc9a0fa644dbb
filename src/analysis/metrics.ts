/**
 * The metrics as the statistics load them: a metric's measured rows as Arrow (typed columns) and
 * its not-measured counts. The registry itself (the SQL of every metric, scorer metrics, SQL
 * metric files, kinds, epoch reducers, the `metrics` view) is `src/store/metrics.ts`, which the
 * store opens its `metrics` view from; it is re-exported here by name.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Table } from 'apache-arrow';
import { queryArrow } from '../store/arrow.ts';
import { quoteIdent } from '../store/duckdb.ts';
import { dataError } from '../errors.ts';
import { checkColumns, getMetric, type MetricDef } from '../store/metrics.ts';

export { type MetricDef, type MetricSource, type MetricKind, ORDINAL_MAX_LEVELS, KIND_SQL, METRICS, METRIC_COLUMNS, type MetricColumn, GROUPABLE, getMetric, checkColumns, metricSql, metricSqlWith, ALIGNMENT_FROM, alignmentValue, VALIDITY_RECORDED, SCORER_ROWS, scorerMetricName, scorerMetric, isStandoffStore, METRICS_DIR, sqlMetricFromFile, storeMetricFiles, type MetricRegistry, storeMetrics, metricStats, countNoanswer, REDUCERS, type Reducer, reduceMetric, baseMetricsSql, metricsViewSql } from '../store/metrics.ts';

/**
 * Loads a metric's MEASURED rows as Arrow (typed columns), sorted by the group columns then
 * scenario, epoch and episode, so downstream resampling is deterministic. Rows whose value was not
 * measured (NULL) are left out: count them with `countNotMeasured`.
 */
export async function loadMetric(conn: DuckDBConnection, metric: string | MetricDef, groupBy: string[] = [], columns?: string[]): Promise<Table> {
  const m = typeof metric === 'string' ? getMetric(metric) : metric;
  checkColumns(groupBy, '--by');
  const order = [...groupBy, 'subject_model', 'scenario_id', 'epoch', 'episode_id'].map(quoteIdent).join(', ');
  // `columns`: only these (with the group columns and value) are read into memory, not every column of the metric.
  const select = columns ? [...new Set([...groupBy, ...columns, 'value'])].map(quoteIdent).join(', ') : '*';
  const table = await queryArrow(conn, `SELECT ${select} FROM (${m.sql}) WHERE value IS NOT NULL ORDER BY ${order}`, m.params);
  if (m.binary) {
    const v = table.getChild('value')!;
    for (let i = 0; i < v.length; i++) {
      const x = v.get(i);
      if (x !== 0 && x !== 1) throw dataError('metric.notBinary', `metric ${m.name} has a non-binary value ${x} at row ${i + 1}`);
    }
  }
  return table;
}

/** Rows of a metric whose value was not measured (NULL), per group (key: the group values joined by NUL). */
export async function countNotMeasured(conn: DuckDBConnection, metric: string | MetricDef, groupBy: string[] = []): Promise<Map<string, number>> {
  const m = typeof metric === 'string' ? getMetric(metric) : metric;
  checkColumns(groupBy, '--by');
  const keys = groupBy.map(quoteIdent);
  const table = await queryArrow(
    conn,
    `SELECT ${keys.length ? `${keys.join(', ')}, ` : ''}CAST(count(*) AS INTEGER) AS n FROM (${m.sql}) WHERE value IS NULL ${keys.length ? `GROUP BY ${keys.join(', ')}` : ''}`,
    m.params,
  );
  const out = new Map<string, number>();
  for (let i = 0; i < table.numRows; i++) out.set(groupBy.map((c) => String(table.getChild(c)!.get(i))).join('\u0000'), Number(table.getChild('n')!.get(i)));
  return out;
}
