/**
 * Atomic run writes.
 *
 * A run is written into `<store>/.tmp-<run>-<random>/<table>/run_id=<id>/data.parquet`, fsynced,
 * then renamed into `<store>/<table>/run_id=<id>/`. The `runs` partition is renamed last: it is
 * the commit point. Readers list only runs whose `runs` partition exists, so a crash at any moment
 * leaves either the whole run or nothing visible; leftover `.tmp-*` / `.trash-*` directories and
 * partitions of uncommitted runs are ignored by readers and removed by the next write
 * (`cleanupStore`).
 *
 * One writer at a time (`./lock.ts`): the store lock is held while leftovers are cleaned, while a
 * staging directory is created (with an owner file naming this process), and for the commit.
 * Staging itself runs unlocked, so writers stage side by side and commit one after the other;
 * cleanup removes only staging directories whose owner is dead, and a commit checks that every
 * staged partition is there before it renames anything.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  BIGINT,
  BOOLEAN,
  type DuckDBInstance,
  DOUBLE,
  DuckDBDataChunk,
  INTEGER,
  LIST,
  VARCHAR,
  listValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { z } from 'zod';
import {
  RUN_ID_PATTERN,
  TABLES,
  TABLE_NAMES,
  fileColumns,
  type RunBundle,
  type RunRow,
  type SqlColumn,
  type TableName,
  type TableRows,
} from '../schema/tables.ts';
import { StandoffError, dataError, oneLine, storeError, usageError } from '../errors.ts';
import { createDb, quoteIdent, quoteLiteral, withConnection } from './duckdb.ts';
import { isDirOrphaned, makeOwnedDir, withStoreLock, LOCK_FILE } from './lock.ts';

export interface WriteRunOptions {
  /** Replace an existing run with the same id (otherwise refused). */
  replace?: boolean;
  /**
   * Skip zod validation of rows (only for writers that built rows from validated data, e.g. the
   * CSV ingest and benches). Without it, columnar tables are checked row by row as the row objects
   * they stand for (`columnarRow`).
   */
  trusted?: boolean;
  /** Test hook: called after the temp directory is fully written, before any rename. */
  beforeCommit?: () => void | Promise<void>;
  /** Test hook: called after each table's partition is renamed into place (runs comes last). */
  afterRename?: (table: TableName) => void | Promise<void>;
  /**
   * The database `SqlRows` tables are selected from (its memory limit and temp directory are the
   * caller's; it stays open). Without it, writeRun uses a database of its own.
   */
  db?: DuckDBInstance;
}

export interface WriteRunResult {
  runId: string;
  tables: Partial<Record<TableName, number>>;
  path: string;
}

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

/**
 * A table given as a SELECT over tables of `WriteRunOptions.db` (the CSV ingest's checked
 * staging tables): its columns are the table's file columns (all but run_id), in schema order and
 * with their schema types. Written as is, so only with `trusted` (the caller checked the rows).
 */
export interface SqlRows {
  readonly sql: string;
  /** Number of rows the SELECT gives. */
  readonly length: number;
}

/** A run bundle whose tables (other than `runs`) are arrays of row objects, `ColumnarRows` or `SqlRows`. */
export type WritableRunBundle = { run: RunRow } & {
  [K in Exclude<TableName, 'runs'>]?: TableRows[K][] | ColumnarRows | SqlRows;
};

export function isColumnar(rows: unknown): rows is ColumnarRows {
  return typeof rows === 'object' && rows !== null && !Array.isArray(rows) && typeof (rows as ColumnarRows).columns === 'object';
}

export function isSqlRows(rows: unknown): rows is SqlRows {
  return typeof rows === 'object' && rows !== null && !Array.isArray(rows) && typeof (rows as SqlRows).sql === 'string';
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

function columnOf(table: TableName, rows: ColumnarRows, name: string): ColumnData {
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

const rowCount = (rows: readonly object[] | ColumnarRows | SqlRows | undefined): number => (rows === undefined ? 0 : rows.length);

export const partitionDir = (store: string, table: TableName, runId: string) =>
  join(store, table, `run_id=${runId}`);

/** True when the run is committed in the store (its `runs` partition has its file). */
export const isRunCommitted = (store: string, runId: string): boolean =>
  existsSync(join(partitionDir(store, 'runs', runId), 'data.parquet'));

/** Throws `store.runExists` when the run is committed and `replace` is not set (`storeDir` as the user gave it). */
export function refuseExistingRun(storeDir: string, runId: string, replace: boolean | undefined): void {
  if (!replace && isRunCommitted(resolve(storeDir), runId)) {
    throw storeError('store.runExists', `run "${runId}" already exists in ${storeDir}; pass --replace to overwrite it`);
  }
}

/** A failed write as a one-line store error (a StandoffError passes through unchanged). */
export function writeFailed(runId: string, storeDir: string, err: unknown, what = 'write'): StandoffError {
  if (err instanceof StandoffError) return err;
  return storeError('store.writeFailed', `could not ${what} run "${runId}" ${what === 'stage' ? 'in' : 'to'} ${storeDir}: ${(err as Error).message.split('\n')[0]}`, err);
}

/** The SELECT list that turns a staging table's columns into the file's (TIMESTAMP staged as text). */
export function fileSelectList(cols: readonly SqlColumn[]): string {
  return cols
    .map((c) => (c.type === 'TIMESTAMP' ? `CAST(${quoteIdent(c.name)} AS TIMESTAMP) AS ${quoteIdent(c.name)}` : quoteIdent(c.name)))
    .join(', ');
}

/** Run ids whose `runs` partition is committed. */
export async function listCommittedRuns(store: string): Promise<string[]> {
  const dir = join(store, 'runs');
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    if (!name.startsWith('run_id=')) continue;
    if (existsSync(join(dir, name, 'data.parquet'))) out.push(name.slice('run_id='.length));
  }
  return out.sort();
}

/**
 * Removes leftovers of crashed writes: staging directories (`.tmp-*`) whose owner process is dead,
 * `.trash-*` directories, and partitions that belong to no committed run. Takes the store lock.
 */
export async function cleanupStore(store: string): Promise<string[]> {
  if (!(await isDirectory(store))) return [];
  return withStoreLock(store, () => cleanupLocked(store));
}

/** `cleanupStore` for a caller that holds the store lock. */
async function cleanupLocked(store: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(store)) {
    const path = join(store, name);
    // A .trash-* directory exists only during a commit, which holds the lock: this one crashed.
    const leftover = name.startsWith('.trash-') || (name.startsWith('.tmp-') && (await isDirOrphaned(path)));
    // Stale lock files moved aside by a breaker that died before removing them.
    const staleLock = name.startsWith(`${LOCK_FILE}.stale-`);
    if (leftover || staleLock) {
      await rm(path, { recursive: true, force: true });
      removed.push(name);
    }
  }
  const committed = new Set(await listCommittedRuns(store));
  for (const table of TABLE_NAMES) {
    const dir = join(store, table);
    if (!existsSync(dir)) continue;
    for (const name of await readdir(dir)) {
      if (name.startsWith('run_id=') && !committed.has(name.slice(7))) {
        await rm(join(dir, name), { recursive: true, force: true });
        removed.push(join(table, name));
      }
    }
  }
  return removed;
}

/**
 * Creates a staging directory `<store>/.tmp-<tag>` owned by this process, under the store lock
 * (so a concurrent cleanup never sees it without its owner). With `cleanup`, leftovers of crashed
 * writes are removed first, under the same lock. Refuses a committed run unless `replace`.
 */
export async function createStaging(
  storeDir: string,
  runId: string,
  opts: { replace?: boolean; cleanup?: boolean } = {},
): Promise<{ tag: string; tmp: string }> {
  const store = resolve(storeDir);
  if (!(await storeExists(storeDir))) await mkdir(store, { recursive: true });
  const tag = `${runId}-${randomBytes(6).toString('hex')}`;
  const tmp = join(store, `.tmp-${tag}`);
  await withStoreLock(storeDir, async () => {
    refuseExistingRun(storeDir, runId, opts.replace);
    if (opts.cleanup) await cleanupLocked(store);
    await makeOwnedDir(tmp);
  });
  return { tag, tmp };
}

function validateRows(bundle: WritableRunBundle): void {
  const check = (table: TableName, n: number, rowAt: (i: number) => unknown) => {
    const schema = TABLES[table] as z.ZodObject;
    for (let i = 0; i < n; i++) {
      const row = rowAt(i);
      const r = schema.safeParse(row);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        throw dataError(
          'store.invalidRow',
          `${table} row ${i + 1}: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`,
        );
      }
      if ((row as { run_id: string }).run_id !== bundle.run.run_id) {
        throw dataError('store.runIdMismatch', `${table} row ${i + 1}: run_id "${(row as { run_id: string }).run_id}" differs from the run "${bundle.run.run_id}"`);
      }
    }
  };
  check('runs', 1, () => bundle.run);
  for (const t of TABLE_NAMES) {
    if (t === 'runs') continue;
    const rows = bundle[t] as unknown[] | ColumnarRows | SqlRows | undefined;
    if (rows === undefined) continue;
    if (isSqlRows(rows)) throw new Error(`${t}: SqlRows are written only with trusted (the caller checks them)`);
    if (isColumnar(rows)) check(t, rows.length, (i) => columnarRow(t, rows, bundle.run.run_id, i));
    else check(t, rows.length, (i) => rows[i]);
  }
}

export const stagingType = (c: SqlColumn) => (c.type === 'TIMESTAMP' ? 'VARCHAR' : c.type);

function appendValue(ap: DuckDBAppender, c: SqlColumn, v: unknown): void {
  if (v === null || v === undefined) return ap.appendNull();
  switch (c.type) {
    case 'VARCHAR':
    case 'TIMESTAMP':
      return ap.appendVarchar(String(v));
    case 'INTEGER':
      return ap.appendInteger(v as number);
    case 'BIGINT':
      return ap.appendBigInt(BigInt(v as number));
    case 'DOUBLE':
      return ap.appendDouble(v as number);
    case 'BOOLEAN':
      return ap.appendBoolean(v as boolean);
    case 'VARCHAR[]':
      return ap.appendList(listValue((v as string[]).map(String)), LIST(VARCHAR));
    default:
      throw new Error(`no appender for type ${c.type}`);
  }
}

/** Writes rows of one table to a Parquet file through a DuckDB staging table. */
export async function writeTableParquet(conn: DuckDBConnection, table: TableName, rows: readonly object[], file: string) {
  const cols = fileColumns(table);
  const staging = `stage_${table}`;
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdent(staging)} (${cols.map((c) => `${quoteIdent(c.name)} ${stagingType(c)}`).join(', ')})`);
  const ap = await conn.createAppender(staging);
  try {
    for (const row of rows) {
      const r = row as Record<string, unknown>;
      for (const c of cols) appendValue(ap, c, r[c.name]);
      ap.endRow();
    }
    ap.flushSync();
  } finally {
    ap.closeSync();
  }
  await conn.run(
    `COPY (SELECT ${fileSelectList(cols)} FROM ${quoteIdent(staging)}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`,
  );
  await conn.run(`DROP TABLE ${quoteIdent(staging)}`);
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
class ColumnarWriter {
  private readonly groups = new Map<number, { name: string; staged: StagedColumn[]; stagedBy: Map<object, Map<string, string>> }>();
  private readonly vars: { name: string; value: DuckDBValue; type: DuckDBType }[] = [];
  private readonly dictVars = new Map<readonly string[], string>();

  private variable(value: DuckDBValue, type: DuckDBType): string {
    const name = `standoff_v${this.vars.length}`;
    this.vars.push({ name, value, type });
    return `getvariable(${quoteLiteral(name)})`;
  }

  /** A dictionary as a VARCHAR[] variable (one per dictionary). */
  private dictVariable(dict: readonly string[]): string {
    let v = this.dictVars.get(dict);
    if (v === undefined) this.dictVars.set(dict, (v = this.variable(listValue([...dict]), LIST(VARCHAR))));
    return v;
  }

  /** The SELECT (without COPY) that gives the table's rows; registers what it needs staged. */
  plan(table: TableName, rows: ColumnarRows): string {
    const n = rows.length;
    let group = this.groups.get(n);
    const needGroup = () => {
      if (!group) this.groups.set(n, (group = { name: `stage_${this.groups.size}`, staged: [], stagedBy: new Map() }));
      return group;
    };
    /** The staging column holding `source` as `type` (each source is staged once per type). */
    const stage = (source: object, type: string, fill: () => StagedColumn['fill']): string => {
      const g = needGroup();
      let byType = g.stagedBy.get(source);
      if (!byType) g.stagedBy.set(source, (byType = new Map()));
      let name = byType.get(type);
      if (name === undefined) {
        name = `s${g.staged.length}`;
        byType.set(type, name);
        g.staged.push({ name, type, fill: fill() });
      }
      return quoteIdent(name);
    };
    const typed = (src: Int32Array | Float64Array | Uint8Array, type: 'INTEGER' | 'DOUBLE') =>
      stage(src, type, () => (v, off, m) => bulkFill(v, src, off, m));
    const check = (len: number) => {
      if (len < n) throw new Error(`${table}: a column has ${len} values for ${n} rows`);
    };
    /** `x`, or NULL where `nulls[i] === 1`. */
    const withNulls = (x: string, nulls: Uint8Array | undefined): string => {
      if (nulls === undefined) return x;
      check(nulls.length);
      if (nulls.subarray(0, n).indexOf(1) < 0) return x;
      return `CASE WHEN ${typed(nulls, 'INTEGER')} = 1 THEN NULL ELSE ${x} END`;
    };
    const bad = (d: ColumnData, type: string): never => {
      throw new Error(`${table}: a ${d.kind} column cannot hold ${type} values`);
    };
    /** SQL for the values of `d` as `type` (VARCHAR, INTEGER, BIGINT, DOUBLE or BOOLEAN). */
    const expr = (d: ColumnData, type: string): string => {
      switch (d.kind) {
        case 'const': {
          const v = d.value;
          if (v === null) return `CAST(NULL AS ${type})`;
          let value: DuckDBValue;
          if (type === 'VARCHAR') value = String(v);
          else if (type === 'BOOLEAN' && typeof v === 'boolean') value = v;
          else if (type === 'BIGINT' && typeof v === 'number') value = BigInt(v);
          else if ((type === 'INTEGER' || type === 'DOUBLE') && typeof v === 'number') value = v;
          else return bad(d, type);
          return `CAST(${this.variable(value, STAGE_TYPES[type]!)} AS ${type})`;
        }
        case 'values':
          check(d.values.length);
          return stage(d, type, () => valuesFill(d.values, type));
        case 'int32': {
          check(d.data.length);
          if (type !== 'INTEGER' && type !== 'BIGINT' && type !== 'DOUBLE' && type !== 'VARCHAR') return bad(d, type);
          const x = typed(d.data, 'INTEGER');
          return withNulls(type === 'INTEGER' ? x : `CAST(${x} AS ${type})`, d.nulls);
        }
        case 'float64': {
          check(d.data.length);
          if (type === 'DOUBLE') return withNulls(typed(d.data, 'DOUBLE'), d.nulls);
          if (type !== 'BIGINT') return bad(d, type);
          for (let i = 0; i < n; i++) {
            if (!Number.isSafeInteger(d.data[i]) && d.nulls?.[i] !== 1) throw new Error(`${table}: ${d.data[i]} is not a safe integer for a BIGINT column`);
          }
          return withNulls(`CAST(${typed(d.data, 'DOUBLE')} AS BIGINT)`, d.nulls);
        }
        case 'bool': {
          check(d.data.length);
          if (type !== 'BOOLEAN' && type !== 'VARCHAR') return bad(d, type);
          const x = `(${typed(d.data, 'INTEGER')} = 1)`;
          return withNulls(type === 'BOOLEAN' ? x : `CAST(${x} AS VARCHAR)`, d.nulls);
        }
        case 'dict': {
          check(d.codes.length);
          if (type !== 'VARCHAR') return bad(d, type);
          const size = d.dict.length;
          for (let i = 0; i < n; i++) {
            const k = d.codes[i]!;
            if (k < -1 || k >= size) throw new Error(`${table}: dictionary code ${k} out of range (-1 to ${size - 1})`);
          }
          // Lists are 1-based and [0] is NULL: code -1 is NULL.
          return `${this.dictVariable(d.dict)}[${typed(d.codes, 'INTEGER')} + 1]`;
        }
        case 'join': {
          if (type !== 'VARCHAR') return bad(d, type);
          if (d.parts.length === 0) return `CAST('' AS VARCHAR)`;
          const sep = this.variable(d.sep, VARCHAR);
          // concat() skips NULLs, as join() writes null as ''.
          return `concat(${d.parts.map((p) => expr(p, 'VARCHAR')).join(`, ${sep}, `)})`;
        }
      }
    };
    const select = fileColumns(table)
      .map((c) => {
        const d = columnOf(table, rows, c.name);
        let e: string;
        if (c.type === 'TIMESTAMP') e = `CAST(${expr(d, 'VARCHAR')} AS TIMESTAMP)`;
        else if (c.type in STAGE_TYPES) e = expr(d, c.type);
        else if (d.kind === 'const' && d.value === null) e = `CAST(NULL AS ${c.type})`;
        else throw new Error(`${table}.${c.name}: columnar input does not support ${c.type} columns`);
        return `${e} AS ${quoteIdent(c.name)}`;
      })
      .join(', ');
    return `SELECT ${select} FROM ${group ? quoteIdent(group.name) : `range(${n})`}`;
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

export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The commit of a run whose partitions are fully written (and fsynced) under `tmp`, under the
 * store lock: refuses a run committed meanwhile (unless `replace`), checks that the partition of
 * every table in `tables` is staged (else `store.stagingLost`, nothing renamed), uncommits an old
 * run of the same id first (its `runs` partition), swaps the other partitions in, then renames the
 * new `runs` partition into place, the commit point. Shared by `writeRun` and `RunWriter`.
 */
export async function commitStaged(
  storeDir: string,
  tmp: string,
  tag: string,
  runId: string,
  opts: { tables: readonly TableName[]; replace?: boolean; afterRename?: (table: TableName) => void | Promise<void> },
): Promise<void> {
  const store = resolve(storeDir);
  await withStoreLock(storeDir, async (lock) => {
    refuseExistingRun(storeDir, runId, opts.replace);
    const expected = new Set<TableName>([...opts.tables, 'runs']);
    for (const table of expected) {
      const file = join(partitionDir(tmp, table, runId), 'data.parquet');
      if (!existsSync(file)) {
        throw storeError('store.stagingLost', `cannot commit run "${runId}" to ${storeDir}: its staged ${table} partition (${file}) is missing; nothing was committed`);
      }
    }
    await lock.verify();
    const exists = isRunCommitted(store, runId);
    // Commit: uncommit the old run first (its runs partition), swap the others, then commit runs.
    const trash = join(store, `.trash-${tag}`);
    const order = [...TABLE_NAMES.filter((t) => t !== 'runs'), 'runs' as const];
    if (exists) {
      await mkdir(join(trash, 'runs'), { recursive: true });
      await rename(partitionDir(store, 'runs', runId), partitionDir(trash, 'runs', runId));
    }
    for (const table of order) {
      const target = partitionDir(store, table, runId);
      if (existsSync(target)) {
        await mkdir(join(trash, table), { recursive: true });
        await rename(target, partitionDir(trash, table, runId));
      }
      if (expected.has(table)) {
        await mkdir(join(store, table), { recursive: true });
        await rename(partitionDir(tmp, table, runId), target);
        await opts.afterRename?.(table);
      }
    }
    await fsyncPath(join(store, 'runs'));
    await rm(trash, { recursive: true, force: true });
  });
}

/**
 * Writes a whole run atomically (see the module comment). Tables are arrays of row objects or
 * `ColumnarRows` (written to the same Parquet values). Validates every row against the zod schema
 * first (unless `trusted`); refuses an existing run id unless `replace`.
 */
export async function writeRun(storeDir: string, bundle: RunBundle | WritableRunBundle, opts: WriteRunOptions = {}): Promise<WriteRunResult> {
  const store = resolve(storeDir);
  const runId = bundle.run.run_id;
  if (!RUN_ID_PATTERN.test(runId)) {
    throw usageError('store.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  }
  if (!opts.trusted) validateRows(bundle);
  const { tag, tmp } = await createStaging(storeDir, runId, { replace: opts.replace, cleanup: true });
  const counts: Partial<Record<TableName, number>> = {};
  try {
    // A memory cap with a spill directory inside the temp dir keeps large runs (1M+ rows) bounded.
    const db = opts.db ?? (await createDb({ threads: 2, memoryLimit: '512MB' }));
    try {
      await withConnection(db, async (conn) => {
        await mkdir(tmp, { recursive: true });
        if (!opts.db) {
          await mkdir(join(tmp, '.spill'), { recursive: true });
          await conn.run(`SET temp_directory = ${quoteLiteral(join(tmp, '.spill'))}`);
        }
        // Columnar tables: planned (and checked) first, staged together, then one COPY each.
        const columnar = new ColumnarWriter();
        const planned = new Map<TableName, string>();
        const selects = new Map<TableName, string>();
        for (const table of TABLE_NAMES) {
          const rows = table === 'runs' ? undefined : bundle[table];
          if (isColumnar(rows) && rows.length > 0) planned.set(table, columnar.plan(table, rows));
          if (isSqlRows(rows) && rows.length > 0) {
            if (!opts.db) throw new Error(`${table}: SqlRows need the database they select from (WriteRunOptions.db)`);
            selects.set(table, `SELECT ${fileSelectList(fileColumns(table))} FROM (${rows.sql})`);
          }
        }
        if (planned.size > 0) await columnar.stage(conn);
        const fileOf = async (table: TableName) => {
          const dir = partitionDir(tmp, table, runId);
          await mkdir(dir, { recursive: true });
          return join(dir, 'data.parquet');
        };
        // Row tables one after the other on this connection...
        for (const table of TABLE_NAMES) {
          const rows = table === 'runs' ? [bundle.run] : (bundle[table] as object[] | ColumnarRows | SqlRows | undefined);
          if (rowCount(rows) === 0 || planned.has(table) || selects.has(table)) continue;
          const file = await fileOf(table);
          await writeTableParquet(conn, table, rows as object[], file);
          await fsyncPath(file);
        }
        // ...columnar tables at once, a connection each (a single Parquet COPY leaves DuckDB's
        // threads idle part of the time). Every job is awaited before the database closes.
        const jobs = [...planned, ...selects].map(async ([table, select]) => {
          const file = await fileOf(table);
          await withConnection(db, async (c) => {
            if (planned.has(table)) await columnar.setVariables(c);
            // SqlRows are the large ones (CSV ingest): ZSTD's fastest level.
            await c.run(`COPY (${select}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd${selects.has(table) ? ', COMPRESSION_LEVEL 1' : ''})`);
          });
          await fsyncPath(file);
        });
        const failed = (await Promise.allSettled(jobs)).find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
        if (planned.size > 0) await columnar.cleanup(conn);
        for (const table of TABLE_NAMES) {
          const n = rowCount(table === 'runs' ? [bundle.run] : (bundle[table] as object[] | ColumnarRows | SqlRows | undefined));
          if (n > 0) counts[table] = n;
        }
      });
    } finally {
      if (!opts.db) db.closeSync();
    }
    await opts.beforeCommit?.();

    const tables = (Object.keys(counts) as TableName[]).filter((t) => t !== 'runs');
    await commitStaged(storeDir, tmp, tag, runId, { tables, replace: opts.replace, afterRename: opts.afterRename });
  } catch (err) {
    // Leave the store as it was: the temp directory never became visible.
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw writeFailed(runId, storeDir, err);
  }
  await rm(tmp, { recursive: true, force: true });
  return { runId, tables: counts, path: store };
}

/** Deletes a committed run (runs partition first, so it disappears atomically). */
export async function deleteRun(storeDir: string, runId: string): Promise<void> {
  const store = resolve(storeDir);
  const runsPart = partitionDir(store, 'runs', runId);
  if (!existsSync(runsPart)) throw usageError('store.noSuchRun', `run "${runId}" does not exist in ${storeDir}`);
  await withStoreLock(store, async () => {
    await rm(runsPart, { recursive: true, force: true });
    await cleanupLocked(store);
  });
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Whether the trace store `storeDir` exists; `store.notDirectory` (exit 4) when the path, or a
 * directory on the way to it, is something else (a regular file), the same for every command.
 */
export async function storeExists(storeDir: string): Promise<boolean> {
  try {
    if ((await stat(storeDir)).isDirectory()) return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'ENOTDIR') throw storeError('store.unreadable', `cannot open the trace store ${storeDir}: ${oneLine((err as Error).message)}`, err);
  }
  throw storeError('store.notDirectory', `trace store ${storeDir} is not a directory (a file is in the way): pass --traces DIR`);
}
