/**
 * Columnar input of a run write (`writeRun` in `./write-run.ts`): how a table given by columns
 * stands for row objects (`columnValue`, `columnarRow`), and how it is written (`ColumnarWriter`).
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  INTEGER,
  LIST,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { fileColumns, type TableName } from '../schema/tables.ts';
import { quoteIdent, quoteLiteral } from './duckdb.ts';

/**
 * Columnar input: a table of a bundle may be given as `ColumnarRows` instead of an array of row
 * objects (the CSV ingest holds a million rows as a few typed arrays, not a million objects).
 * Each column says how its values are held; every kind stands for exactly the values a row object
 * would hold (`columnValue`), and is written to the same Parquet values as those rows would be.
 */
export type ColumnData =
  /** The same value in every row. */
  | { readonly kind: 'const'; readonly value: string | number | boolean | null }
  /** One JS value per row, as in row objects (null or undefined is NULL). */
  | { readonly kind: 'values'; readonly values: ArrayLike<unknown> }
  /** Integers (for INTEGER, BIGINT or DOUBLE columns); `nulls[i] === 1` marks a NULL. */
  | { readonly kind: 'int32'; readonly data: Int32Array; readonly nulls?: Uint8Array }
  /** Numbers (for DOUBLE columns, or BIGINT columns holding safe integers). */
  | { readonly kind: 'float64'; readonly data: Float64Array; readonly nulls?: Uint8Array }
  /** Booleans: 0 false, 1 true. */
  | { readonly kind: 'bool'; readonly data: Uint8Array; readonly nulls?: Uint8Array }
  /** Text (VARCHAR, or TIMESTAMP as ISO text) by dictionary: `dict[codes[i]]`; a negative code is NULL. */
  | { readonly kind: 'dict'; readonly codes: Int32Array; readonly dict: readonly string[] }
  /**
   * Text: the parts' values joined with `sep`, exactly as `[a, b, c].join(sep)` (a NULL part is
   * ''). Parts are text, integer or boolean columns (not float64: number formatting differs).
   */
  | { readonly kind: 'join'; readonly sep: string; readonly parts: readonly ColumnData[] };

/** A table given by columns (see `ColumnData`). */
export interface ColumnarRows {
  readonly length: number;
  /** Every file column of the table (all but run_id), by name. */
  readonly columns: Readonly<Record<string, ColumnData>>;
}

export function isColumnar(rows: unknown): rows is ColumnarRows {
  return typeof rows === 'object' && rows !== null && !Array.isArray(rows) && typeof (rows as ColumnarRows).columns === 'object';
}

/** The value row `i` of a column stands for, as a row object would hold it. */
export function columnValue(c: ColumnData, i: number): unknown {
  switch (c.kind) {
    case 'const':
      return c.value;
    case 'values': {
      const v = c.values[i];
      return v === undefined ? null : v;
    }
    case 'int32':
    case 'float64':
      return c.nulls !== undefined && c.nulls[i] === 1 ? null : c.data[i]!;
    case 'bool':
      return c.nulls !== undefined && c.nulls[i] === 1 ? null : c.data[i] === 1;
    case 'dict': {
      const k = c.codes[i]!;
      return k < 0 ? null : c.dict[k]!;
    }
    case 'join':
      return c.parts.map((p) => columnValue(p, i)).join(c.sep);
  }
}

export function columnOf(table: TableName, rows: ColumnarRows, name: string): ColumnData {
  const c = rows.columns[name];
  if (c === undefined) throw new Error(`columnar ${table} rows have no column "${name}"`);
  return c;
}

/** Row `i` of a columnar table as a row object (run_id first, then the columns in schema order). */
export function columnarRow(table: TableName, rows: ColumnarRows, runId: string, i: number): Record<string, unknown> {
  const r: Record<string, unknown> = { run_id: runId };
  for (const c of fileColumns(table)) r[c.name] = columnValue(columnOf(table, rows, c.name), i);
  return r;
}

/** Every row of a columnar table as row objects. */
export function materializeRows(table: TableName, rows: ColumnarRows, runId: string): Record<string, unknown>[] {
  const cols = fileColumns(table).map((c) => [c.name, columnOf(table, rows, c.name)] as const);
  const out: Record<string, unknown>[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r: Record<string, unknown> = { run_id: runId };
    for (const [name, c] of cols) r[name] = columnValue(c, i);
    out[i] = r;
  }
  return out;
}

/** DuckDB types of staging columns (the vectors a data chunk is filled through). */
const STAGE_TYPES: Record<string, DuckDBType> = { VARCHAR, INTEGER, BIGINT, DOUBLE, BOOLEAN };

type Vector = { setItem(i: number, v: DuckDBValue | null): void };

interface StagedColumn {
  name: string;
  /** Staging type: a key of STAGE_TYPES. */
  type: string;
  /** Fills `vector` (of a new data chunk) with rows [off, off + n). */
  fill: (vector: Vector, off: number, n: number) => void;
}

/**
 * Copies `src[off, off + n)` into a new INTEGER or DOUBLE vector of n items. The vector's own
 * typed array is written in one go when it is there (as in @duckdb/node-api 1.5: `items`, what
 * `setItem` writes and `flush` copies); otherwise item by item through `setItem`. No NULLs here:
 * nulls are staged as a column of their own.
 */
function bulkFill(vector: Vector, src: Int32Array | Float64Array | Uint8Array, off: number, n: number): void {
  const items = (vector as { items?: unknown }).items;
  if (src instanceof Uint8Array) {
    if (items instanceof Int32Array && items.length === n) {
      for (let i = 0; i < n; i++) items[i] = src[off + i]!;
    } else for (let i = 0; i < n; i++) vector.setItem(i, src[off + i]!);
    return;
  }
  if ((items instanceof Int32Array || items instanceof Float64Array) && items.constructor === src.constructor && items.length === n) {
    items.set(src.subarray(off, off + n));
  } else for (let i = 0; i < n; i++) vector.setItem(i, src[off + i]!);
}

/** Fills a staging column of `type` from a 'values' column, with the conversions of the row appender (`appendValue`). */
function valuesFill(values: ArrayLike<unknown>, type: string): StagedColumn['fill'] {
  const conv: (x: unknown) => DuckDBValue =
    type === 'VARCHAR' ? (x) => String(x) : type === 'BIGINT' ? (x) => BigInt(x as number) : (x) => x as DuckDBValue;
  return (v, off, n) => {
    for (let i = 0; i < n; i++) {
      const x = values[off + i];
      v.setItem(i, x === null || x === undefined ? null : conv(x));
    }
  };
}

/**
 * How columnar tables are written: the varying columns go through data chunks into DuckDB staging
 * tables (dictionary codes and typed arrays, NULL flags as columns of their own; one staging table
 * per row count, so tables of the same length share the arrays they have in common), constants and
 * dictionaries through bound session variables, and one COPY per table builds every column with
 * its schema type. `plan` every table, `stage` once, then run each table's COPY.
 */
export class ColumnarWriter {
  private readonly groups = new Map<number, StageGroup>();
  private readonly vars: { name: string; value: DuckDBValue; type: DuckDBType }[] = [];
  private readonly dictVars = new Map<readonly string[], string>();

  variable(value: DuckDBValue, type: DuckDBType): string {
    const name = `standoff_v${this.vars.length}`;
    this.vars.push({ name, value, type });
    return `getvariable(${quoteLiteral(name)})`;
  }

  /** A dictionary as a VARCHAR[] variable (one per dictionary). */
  dictVariable(dict: readonly string[]): string {
    let v = this.dictVars.get(dict);
    if (v === undefined) this.dictVars.set(dict, (v = this.variable(listValue([...dict]), LIST(VARCHAR))));
    return v;
  }

  /** The SELECT (without COPY) that gives the table's rows; registers what it needs staged. */
  plan(table: TableName, rows: ColumnarRows): string {
    const p = new TablePlan(this, table, rows.length, this.groups.get(rows.length) ?? null);
    const select = fileColumns(table)
      .map((c) => {
        const d = columnOf(table, rows, c.name);
        let e: string;
        if (c.type === 'TIMESTAMP') e = `CAST(${p.expr(d, 'VARCHAR')} AS TIMESTAMP)`;
        else if (c.type in STAGE_TYPES) e = p.expr(d, c.type);
        else if (d.kind === 'const' && d.value === null) e = `CAST(NULL AS ${c.type})`;
        else throw new Error(`${table}.${c.name}: columnar input does not support ${c.type} columns`);
        return `${e} AS ${quoteIdent(c.name)}`;
      })
      .join(', ');
    return `SELECT ${select} FROM ${p.group ? quoteIdent(p.group.name) : `range(${rows.length})`}`;
  }

  /** The staging group of tables with `n` rows (created on first use). */
  groupOf(n: number): StageGroup {
    let g = this.groups.get(n);
    if (!g) this.groups.set(n, (g = { name: `stage_${this.groups.size}`, staged: [], stagedBy: new Map() }));
    return g;
  }

  /** Sets the (session) variables the SELECTs use on a connection. */
  async setVariables(conn: DuckDBConnection): Promise<void> {
    for (const v of this.vars) await conn.run(`SET VARIABLE ${quoteIdent(v.name)} = $1`, [v.value], [v.type]);
  }

  /** Fills the staging tables (plain tables of the in-memory database: every connection sees them). */
  async stage(conn: DuckDBConnection): Promise<void> {
    for (const [n, g] of this.groups) {
      await conn.run(`CREATE OR REPLACE TABLE ${quoteIdent(g.name)} (${g.staged.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ')})`);
      const ap = await conn.createAppender(g.name);
      try {
        const types = g.staged.map((c) => STAGE_TYPES[c.type]!);
        const size = 2048;
        for (let off = 0; off < n; off += size) {
          const m = Math.min(size, n - off);
          const chunk = DuckDBDataChunk.create(types, m);
          for (let k = 0; k < g.staged.length; k++) {
            const vector = chunk.getColumnVector(k);
            g.staged[k]!.fill(vector as never, off, m);
            vector.flush();
          }
          ap.appendDataChunk(chunk);
        }
        ap.flushSync();
      } finally {
        ap.closeSync();
      }
    }
  }

  /** Drops the staging tables. */
  async cleanup(conn: DuckDBConnection): Promise<void> {
    for (const g of this.groups.values()) await conn.run(`DROP TABLE IF EXISTS ${quoteIdent(g.name)}`);
  }
}

/** Tables with the same row count share a staging table (and the arrays they have in common). */
interface StageGroup {
  name: string;
  staged: StagedColumn[];
  /** Source array -> staging type -> staging column name: each source is staged once per type. */
  stagedBy: Map<object, Map<string, string>>;
}

/** The SQL for one columnar table's columns, registering what it stages with the writer. */
class TablePlan {
  constructor(
    private readonly w: ColumnarWriter,
    private readonly table: string,
    private readonly n: number,
    /** The staging group of this row count, once there is one (else the table's rows come from `range(n)`). */
    public group: StageGroup | null,
  ) {}

  /** The staging column holding `source` as `type` (each source is staged once per type). */
  private stage(source: object, type: string, fill: () => StagedColumn['fill']): string {
    const g = (this.group ??= this.w.groupOf(this.n));
    let byType = g.stagedBy.get(source);
    if (!byType) g.stagedBy.set(source, (byType = new Map()));
    let name = byType.get(type);
    if (name === undefined) {
      name = `s${g.staged.length}`;
      byType.set(type, name);
      g.staged.push({ name, type, fill: fill() });
    }
    return quoteIdent(name);
  }

  private typed(src: Int32Array | Float64Array | Uint8Array, type: 'INTEGER' | 'DOUBLE'): string {
    return this.stage(src, type, () => (v, off, m) => bulkFill(v, src, off, m));
  }

  private check(len: number): void {
    if (len < this.n) throw new Error(`${this.table}: a column has ${len} values for ${this.n} rows`);
  }

  /** `x`, or NULL where `nulls[i] === 1`. */
  private withNulls(x: string, nulls: Uint8Array | undefined): string {
    if (nulls === undefined) return x;
    this.check(nulls.length);
    if (nulls.subarray(0, this.n).indexOf(1) < 0) return x;
    return `CASE WHEN ${this.typed(nulls, 'INTEGER')} = 1 THEN NULL ELSE ${x} END`;
  }

  private bad(d: ColumnData, type: string): never {
    throw new Error(`${this.table}: a ${d.kind} column cannot hold ${type} values`);
  }

  /** SQL for the values of `d` as `type` (VARCHAR, INTEGER, BIGINT, DOUBLE or BOOLEAN). */
  expr(d: ColumnData, type: string): string {
    switch (d.kind) {
      case 'const':
        return this.constExpr(d, type);
      case 'values':
        this.check(d.values.length);
        return this.stage(d, type, () => valuesFill(d.values, type));
      case 'int32': {
        this.check(d.data.length);
        if (type !== 'INTEGER' && type !== 'BIGINT' && type !== 'DOUBLE' && type !== 'VARCHAR') return this.bad(d, type);
        const x = this.typed(d.data, 'INTEGER');
        return this.withNulls(type === 'INTEGER' ? x : `CAST(${x} AS ${type})`, d.nulls);
      }
      case 'float64':
        return this.float64Expr(d, type);
      case 'bool': {
        this.check(d.data.length);
        if (type !== 'BOOLEAN' && type !== 'VARCHAR') return this.bad(d, type);
        const x = `(${this.typed(d.data, 'INTEGER')} = 1)`;
        return this.withNulls(type === 'BOOLEAN' ? x : `CAST(${x} AS VARCHAR)`, d.nulls);
      }
      case 'dict':
        return this.dictExpr(d, type);
      case 'join': {
        if (type !== 'VARCHAR') return this.bad(d, type);
        if (d.parts.length === 0) return `CAST('' AS VARCHAR)`;
        const sep = this.w.variable(d.sep, VARCHAR);
        // concat() skips NULLs, as join() writes null as ''.
        return `concat(${d.parts.map((p) => this.expr(p, 'VARCHAR')).join(`, ${sep}, `)})`;
      }
    }
  }

  private constExpr(d: Extract<ColumnData, { kind: 'const' }>, type: string): string {
    const v = d.value;
    if (v === null) return `CAST(NULL AS ${type})`;
    let value: DuckDBValue;
    if (type === 'VARCHAR') value = String(v);
    else if (type === 'BOOLEAN' && typeof v === 'boolean') value = v;
    else if (type === 'BIGINT' && typeof v === 'number') value = BigInt(v);
    else if ((type === 'INTEGER' || type === 'DOUBLE') && typeof v === 'number') value = v;
    else return this.bad(d, type);
    return `CAST(${this.w.variable(value, STAGE_TYPES[type]!)} AS ${type})`;
  }

  private float64Expr(d: Extract<ColumnData, { kind: 'float64' }>, type: string): string {
    this.check(d.data.length);
    if (type === 'DOUBLE') return this.withNulls(this.typed(d.data, 'DOUBLE'), d.nulls);
    if (type !== 'BIGINT') return this.bad(d, type);
    for (let i = 0; i < this.n; i++) {
      if (!Number.isSafeInteger(d.data[i]) && d.nulls?.[i] !== 1) throw new Error(`${this.table}: ${d.data[i]} is not a safe integer for a BIGINT column`);
    }
    return this.withNulls(`CAST(${this.typed(d.data, 'DOUBLE')} AS BIGINT)`, d.nulls);
  }

  private dictExpr(d: Extract<ColumnData, { kind: 'dict' }>, type: string): string {
    this.check(d.codes.length);
    if (type !== 'VARCHAR') return this.bad(d, type);
    const size = d.dict.length;
    for (let i = 0; i < this.n; i++) {
      const k = d.codes[i]!;
      if (k < -1 || k >= size) throw new Error(`${this.table}: dictionary code ${k} out of range (-1 to ${size - 1})`);
    }
    // Lists are 1-based and [0] is NULL: code -1 is NULL.
    return `${this.w.dictVariable(d.dict)}[${this.typed(d.codes, 'INTEGER')} + 1]`;
  }
}
