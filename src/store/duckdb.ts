/**
 * A thin typed layer over @duckdb/node-api: instance creation with extension downloads off and
 * a pinned thread count, value conversion (BIGINT -> number, TIMESTAMP -> ISO string), and
 * quoting helpers. Connections are closed by the caller in `finally` (see `withConnection`).
 */
import { DuckDBInstance, DuckDBTypeId, JSDuckDBValueConverter, type DuckDBConnection, type DuckDBDataChunk, type DuckDBResultReader } from '@duckdb/node-api';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DbOptions {
  /** DuckDB worker threads; pinned so results that depend on it are reproducible. Default 2. */
  threads?: number;
  /** Memory limit, e.g. '2GB'. */
  memoryLimit?: string;
}

/** Creates an in-memory DuckDB with autoinstall/autoload of extensions off (parquet and json are built in). */
export async function createDb(opts: DbOptions = {}): Promise<DuckDBInstance> {
  const config: Record<string, string> = {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: String(opts.threads ?? 2),
  };
  if (opts.memoryLimit) config.memory_limit = opts.memoryLimit;
  return DuckDBInstance.create(':memory:', config);
}

export async function withConnection<T>(db: DuckDBInstance, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const conn = await db.connect();
  try {
    return await fn(conn);
  } finally {
    conn.closeSync();
  }
}

/** Quotes an identifier for SQL ("a""b"). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Quotes a string literal for SQL ('it''s'); used only where DuckDB takes no parameter (paths in
 * COPY / read_parquet / SET). DuckDB's parser ends a literal at a NUL byte, so a value holding NUL
 * becomes an expression joining the parts with `chr(0)` (valid wherever an expression is; a
 * file path cannot hold NUL).
 */
export function quoteLiteral(value: string): string {
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  if (!value.includes('\u0000')) return q(value);
  return `(${value.split('\u0000').map(q).join(' || chr(0) || ')})`;
}

export type Plain = string | number | boolean | null | Plain[] | { [k: string]: Plain };

/**
 * Converts a JS value from DuckDB (`getRowObjectsJS`) to plain JSON-safe data: BIGINT becomes a
 * number when it is a safe integer and a decimal string otherwise; Date becomes an ISO string.
 */
export function toPlain(value: unknown): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map(toPlain);
  if (typeof value === 'object') {
    if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
    const out: Record<string, Plain> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toPlain(v);
    return out;
  }
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  return String(value);
}

export interface QueryResult {
  columns: string[];
  types: string[];
  rows: Record<string, Plain>[];
}

/** Materializes a result as plain rows. */
export function toQueryResult(result: DuckDBResultReader): QueryResult {
  const columns = result.columnNames();
  const types = result.columnTypes().map((t) => t.toString());
  const rows = result.getRowObjectsJS().map((r) => {
    const o: Record<string, Plain> = {};
    for (const c of columns) o[c] = toPlain(r[c]);
    return o;
  });
  return { columns, types, rows };
}

/** Named parameters of a statement (`$name` in the SQL): how untrusted values reach a query. */
export type SqlParams = Record<string, string | number | boolean | null>;

/** Runs SQL with bound parameters and returns plain rows. */
export async function query(
  conn: DuckDBConnection,
  sql: string,
  params?: SqlParams | (string | number | boolean | null)[],
): Promise<QueryResult> {
  const result = params ? await conn.runAndReadAll(sql, params as never) : await conn.runAndReadAll(sql);
  return toQueryResult(result);
}

/**
 * Streams a result a chunk (~2,048 rows) at a time: `fn` receives the chunk's columns as JS
 * values (BIGINT as bigint, DOUBLE as number, NULL as null) and its row count. Nothing but the
 * current chunk is held, so a result of millions of rows costs the memory of one chunk; callers
 * fold each chunk into per-group or per-cluster totals.
 */
export async function forEachChunk(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | undefined,
  fn: (columns: unknown[][], rows: number) => void | Promise<void>,
): Promise<number> {
  const result = params ? await conn.stream(sql, params as never) : await conn.stream(sql);
  let rows = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    await fn(chunk.convertColumns(JSDuckDBValueConverter) as unknown[][], chunk.rowCount);
    rows += chunk.rowCount;
  }
  return rows;
}

/** Column types whose vector item is already the value `forEachChunk` gives (a number, boolean, string or bigint). */
const RAW_TYPES: ReadonlySet<DuckDBTypeId> = new Set([
  DuckDBTypeId.BOOLEAN, DuckDBTypeId.TINYINT, DuckDBTypeId.SMALLINT, DuckDBTypeId.INTEGER, DuckDBTypeId.BIGINT, DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT, DuckDBTypeId.UINTEGER, DuckDBTypeId.UBIGINT, DuckDBTypeId.FLOAT, DuckDBTypeId.DOUBLE, DuckDBTypeId.VARCHAR,
]);

/**
 * `forEachChunk` without copying each chunk into arrays of JS values first: `fn` receives, per
 * column, a reader of row `i`'s value (the same value `forEachChunk` gives: read straight from the
 * vector for numbers, booleans, strings and BIGINTs, converted as there for any other type).
 * For hot loops over millions of rows that read each value once.
 */
export async function forEachRow(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | undefined,
  fn: (columns: ((i: number) => unknown)[], rows: number) => void,
): Promise<number> {
  return forEachDataChunk(conn, sql, params, (chunk, rows) => fn(columnReaders(chunk), rows));
}

/** Per column of a chunk, a reader of row `i`'s value (`forEachRow`'s readers). */
export function columnReaders(chunk: DuckDBDataChunk): ((i: number) => unknown)[] {
  return Array.from({ length: chunk.columnCount }, (_, c) => {
    const v = chunk.getColumnVector(c);
    if (RAW_TYPES.has(v.type.typeId)) return (i: number) => v.getItem(i) as unknown;
    const values = chunk.convertColumnValues(c, JSDuckDBValueConverter);
    return (i: number) => values[i] as unknown;
  });
}

/** Streams a result's chunks as DuckDB gives them (`fn`: the chunk and its row count; the chunk is not valid after the call). */
export async function forEachDataChunk(conn: DuckDBConnection, sql: string, params: SqlParams | undefined, fn: (chunk: DuckDBDataChunk, rows: number) => void): Promise<number> {
  const result = params ? await conn.stream(sql, params as never) : await conn.stream(sql);
  let rows = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    fn(chunk, chunk.rowCount);
    rows += chunk.rowCount;
  }
  return rows;
}

/** Column types read as numbers by `forEachNumberChunk` straight from the vector's typed array. */
const TYPED_NUMBER_TYPES: ReadonlySet<DuckDBTypeId> = new Set([
  DuckDBTypeId.TINYINT, DuckDBTypeId.SMALLINT, DuckDBTypeId.INTEGER, DuckDBTypeId.UTINYINT, DuckDBTypeId.USMALLINT, DuckDBTypeId.UINTEGER,
  DuckDBTypeId.FLOAT, DuckDBTypeId.DOUBLE,
]);

/** What `@duckdb/node-api` keeps in a numeric vector: its items and its validity bits (not part of its typed API: checked before use). */
interface VectorInternals {
  items?: unknown;
  validity?: { data?: unknown; offset?: unknown };
}

const isNumberArray = (x: unknown): x is Float64Array | Float32Array | Int32Array | Int16Array | Int8Array | Uint32Array | Uint16Array | Uint8Array =>
  x instanceof Float64Array || x instanceof Float32Array || x instanceof Int32Array || x instanceof Int16Array || x instanceof Int8Array ||
  x instanceof Uint32Array || x instanceof Uint16Array || x instanceof Uint8Array;

/**
 * Copies column `c` of a chunk into `out[0..rows)` as numbers, NULL as NaN: for the numeric types
 * of {@link TYPED_NUMBER_TYPES}, from the vector's items and validity words (no value object and
 * no BigInt test per row); for any other type (or another layout of the vector), value by value
 * through `getItem` (`Number(x)`, so BIGINT and BOOLEAN read as numbers). `nulls`, if given,
 * marks the NULL rows (1); returns how many there are.
 */
export function copyNumberColumn(chunk: DuckDBDataChunk, c: number, rows: number, out: Float64Array, nulls?: Uint8Array): number {
  const v = chunk.getColumnVector(c);
  const raw = v as unknown as VectorInternals;
  const items = raw.items;
  const bits = raw.validity?.data;
  const fast = TYPED_NUMBER_TYPES.has(v.type.typeId) && isNumberArray(items) && items.length >= rows && raw.validity?.offset === 0 && (bits === null || bits instanceof BigUint64Array);
  let missing = 0;
  if (!fast) {
    for (let i = 0; i < rows; i++) {
      const x = v.getItem(i);
      out[i] = x === null ? Number.NaN : Number(x);
      if (x === null) missing++;
      if (nulls) nulls[i] = x === null ? 1 : 0;
    }
    return missing;
  }
  if (bits === null) {
    out.set(items.subarray(0, rows));
    nulls?.fill(0, 0, rows);
    return 0;
  }
  // Validity bit i of the 64-bit words, read as little-endian 32-bit words.
  const words = new Uint32Array(bits.buffer, bits.byteOffset, bits.length * 2);
  for (let i = 0; i < rows; i++) {
    const valid = (words[i >>> 5] >>> (i & 31)) & 1;
    out[i] = valid ? items[i] : Number.NaN;
    missing += 1 - valid;
    if (nulls) nulls[i] = 1 - valid;
  }
  return missing;
}

/** Whether every column of the chunk is of a type `copyNumberColumn` reads straight from its typed array. */
export function numericChunk(chunk: DuckDBDataChunk): boolean {
  for (let c = 0; c < chunk.columnCount; c++) if (!TYPED_NUMBER_TYPES.has(chunk.getColumnVector(c).type.typeId)) return false;
  return true;
}

/**
 * Streams a numeric result a chunk at a time into typed columns: `fn` receives one Float64Array
 * per column (NULL as NaN; reused from chunk to chunk: copy what must outlive the call) and the
 * chunk's row count. For hot loops over millions of rows of numbers (`copyNumberColumn`).
 */
export async function forEachNumberChunk(
  conn: DuckDBConnection,
  sql: string,
  params: SqlParams | undefined,
  fn: (columns: Float64Array[], rows: number) => void,
): Promise<number> {
  const result = params ? await conn.stream(sql, params as never) : await conn.stream(sql);
  let rows = 0;
  let cols: Float64Array[] = [];
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const n = chunk.rowCount;
    if (cols.length !== chunk.columnCount || cols[0].length < n) cols = Array.from({ length: chunk.columnCount }, () => new Float64Array(Math.max(n, 2048)));
    for (let c = 0; c < cols.length; c++) copyNumberColumn(chunk, c, n, cols[c]);
    fn(cols, n);
    rows += n;
  }
  return rows;
}

/** Spill directories are named `standoff-spill-<pid>-<random>`: the owning process is in the name. */
export const SPILL_PREFIX = 'standoff-spill-';
const SPILL_NAME = /^standoff-spill-(\d+)-[^/]+$/;

/** Whether process `pid` exists (signal 0 only checks; EPERM means it exists but is not ours). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the spill directories under `dir` whose owning process no longer exists (a process that
 * crashed or was killed never ran its `close()`); returns their names. Directories of live
 * processes, of this process, and names without a pid (older versions) are left alone; a directory
 * that cannot be removed (another user's) is skipped.
 */
export function removeStaleSpillDirectories(dir: string = tmpdir(), alive: (pid: number) => boolean = processAlive): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = SPILL_NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || !Number.isSafeInteger(pid) || pid <= 0 || alive(pid)) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Not ours to remove (permissions): leave it.
    }
  }
  return removed;
}

/**
 * A fresh, private spill directory for one DuckDB instance under `dir` (the OS temp directory),
 * named after this process; stale ones left by dead processes are removed first. The caller
 * removes the new one when it closes the instance.
 */
export function createSpillDirectory(dir: string = tmpdir()): string {
  removeStaleSpillDirectories(dir);
  return mkdtempSync(join(dir, `${SPILL_PREFIX}${process.pid}-`));
}
