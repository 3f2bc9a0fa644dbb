/**
 * Columnar hand-off from DuckDB to TypeScript via apache-arrow: numeric columns arrive as typed
 * arrays (`table.getChild('x')!.toArray()` is a Float64Array / Int32Array), not row objects.
 * Also used to write `.arrow` (Arrow IPC file) output for pandas / polars users.
 */
import type { DuckDBConnection, DuckDBResultReader } from '@duckdb/node-api';
import type { SqlParams } from './duckdb.ts';
import {
  Bool,
  Float64,
  Int32,
  Int64,
  Table,
  TimestampMillisecond,
  Utf8,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';

function arrowTypeFor(duckType: string): DataType {
  if (/^(DOUBLE|FLOAT|REAL|DECIMAL)/.test(duckType)) return new Float64();
  if (/^(INTEGER|SMALLINT|TINYINT|USMALLINT|UTINYINT)$/.test(duckType)) return new Int32();
  if (/^(BIGINT|UINTEGER|HUGEINT|UBIGINT)$/.test(duckType)) return new Int64();
  if (duckType === 'BOOLEAN') return new Bool();
  if (duckType.startsWith('TIMESTAMP') || duckType === 'DATE') return new TimestampMillisecond();
  return new Utf8();
}

function convert(values: unknown[], type: DataType): unknown[] {
  if (type instanceof Int64) return values.map((v) => (v === null ? null : BigInt(v as bigint | number)));
  if (type instanceof Float64 || type instanceof Int32) return values.map((v) => (v === null ? null : Number(v)));
  if (type instanceof TimestampMillisecond) return values.map((v) => (v === null ? null : (v as Date).getTime()));
  if (type instanceof Utf8)
    return values.map((v) => (v === null ? null : typeof v === 'string' ? v : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x))));
  return values;
}

/** Arrow table of columns of JS values (as DuckDB's JS converter gives them), by DuckDB type names. */
export function columnsToArrow(names: readonly string[], duckTypes: readonly string[], columns: readonly unknown[][]): Table {
  const vectors: Record<string, Vector> = {};
  names.forEach((name, i) => {
    const type = arrowTypeFor(duckTypes[i]!);
    vectors[name] = vectorFromArray(convert((columns[i] ?? []) as unknown[], type) as never, type); // a result with no rows has no columns
  });
  return new Table(vectors);
}

/** Converts a materialized DuckDB result into an Arrow table (column order and names kept). */
export function resultToArrow(result: DuckDBResultReader): Table {
  return columnsToArrow(result.columnNames(), result.columnTypes().map((t) => t.toString()), result.getColumnsJS());
}

/** Runs SQL and returns an Arrow table. */
export async function queryArrow(conn: DuckDBConnection, sql: string, params?: SqlParams): Promise<Table> {
  const result = params ? await conn.runAndReadAll(sql, params as never) : await conn.runAndReadAll(sql);
  return resultToArrow(result);
}

/** A numeric column as a Float64Array (nulls become NaN; callers that allow nulls filter first in SQL). */
export function float64Column(table: Table, name: string): Float64Array {
  const col = table.getChild(name);
  if (!col) throw new Error(`no column "${name}"`);
  const out = new Float64Array(col.length);
  for (let i = 0; i < col.length; i++) {
    const v = col.get(i);
    out[i] = v === null ? Number.NaN : Number(v);
  }
  return out;
}
