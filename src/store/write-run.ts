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
import { ColumnarWriter, columnarRow, isColumnar, type ColumnarRows } from './columnar.ts';

export { columnValue, columnarRow, isColumnar, materializeRows, type ColumnData, type ColumnarRows } from './columnar.ts';

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

export function isSqlRows(rows: unknown): rows is SqlRows {
  return typeof rows === 'object' && rows !== null && !Array.isArray(rows) && typeof (rows as SqlRows).sql === 'string';
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
