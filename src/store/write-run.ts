/**
 * Atomic run writes.
 *
 * A run is written into `<store>/.tmp-<run>-<random>/<table>/run_id=<id>/data.parquet`, fsynced,
 * then renamed into `<store>/<table>/run_id=<id>/`. The `runs` partition is renamed last: it is
 * the commit point. Readers list only runs whose `runs` partition exists, so a crash at any moment
 * leaves either the whole run or nothing visible; leftover `.tmp-*` / `.trash-*` directories and
 * partitions of uncommitted runs are ignored by readers and removed by the next write
 * (`cleanupStore`). A store has one writer at a time.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LIST, VARCHAR, listValue, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import {
  RUN_ID_PATTERN,
  TABLES,
  TABLE_NAMES,
  fileColumns,
  type RunBundle,
  type SqlColumn,
  type TableName,
} from '../schema/tables.ts';
import { dataError, storeError, usageError } from '../errors.ts';
import { createDb, quoteIdent, quoteLiteral, withConnection } from './duckdb.ts';

export interface WriteRunOptions {
  /** Replace an existing run with the same id (otherwise refused). */
  replace?: boolean;
  /** Skip zod validation of rows (only for writers that built rows from validated data, e.g. benches). */
  trusted?: boolean;
  /** Test hook: called after the temp directory is fully written, before any rename. */
  beforeCommit?: () => void | Promise<void>;
  /** Test hook: called after each table's partition is renamed into place (runs comes last). */
  afterRename?: (table: TableName) => void | Promise<void>;
}

export interface WriteRunResult {
  runId: string;
  tables: Partial<Record<TableName, number>>;
  path: string;
}

export const partitionDir = (store: string, table: TableName, runId: string) =>
  join(store, table, `run_id=${runId}`);

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

/** Removes temp/trash directories and partitions that belong to no committed run. */
export async function cleanupStore(store: string): Promise<string[]> {
  const removed: string[] = [];
  if (!existsSync(store)) return removed;
  for (const name of await readdir(store)) {
    if (name.startsWith('.tmp-') || name.startsWith('.trash-')) {
      await rm(join(store, name), { recursive: true, force: true });
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

function validateRows(bundle: RunBundle): void {
  const check = (table: TableName, rows: unknown[]) => {
    const schema = TABLES[table] as z.ZodObject;
    for (let i = 0; i < rows.length; i++) {
      const r = schema.safeParse(rows[i]);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        throw dataError(
          'store.invalidRow',
          `${table} row ${i + 1}: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`,
        );
      }
      if ((rows[i] as { run_id: string }).run_id !== bundle.run.run_id) {
        throw dataError('store.runIdMismatch', `${table} row ${i + 1}: run_id "${(rows[i] as { run_id: string }).run_id}" differs from the run "${bundle.run.run_id}"`);
      }
    }
  };
  check('runs', [bundle.run]);
  for (const t of TABLE_NAMES) if (t !== 'runs' && bundle[t]) check(t, bundle[t] as unknown[]);
}

const stagingType = (c: SqlColumn) => (c.type === 'TIMESTAMP' ? 'VARCHAR' : c.type);

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
async function writeTableParquet(conn: DuckDBConnection, table: TableName, rows: readonly object[], file: string) {
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
  const select = cols
    .map((c) => (c.type === 'TIMESTAMP' ? `CAST(${quoteIdent(c.name)} AS TIMESTAMP) AS ${quoteIdent(c.name)}` : quoteIdent(c.name)))
    .join(', ');
  await conn.run(
    `COPY (SELECT ${select} FROM ${quoteIdent(staging)}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`,
  );
  await conn.run(`DROP TABLE ${quoteIdent(staging)}`);
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Writes a whole run atomically (see the module comment). Validates every row against the zod
 * schema first; refuses an existing run id unless `replace`.
 */
export async function writeRun(storeDir: string, bundle: RunBundle, opts: WriteRunOptions = {}): Promise<WriteRunResult> {
  const store = resolve(storeDir);
  const runId = bundle.run.run_id;
  if (!RUN_ID_PATTERN.test(runId)) {
    throw usageError('store.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  }
  if (!opts.trusted) validateRows(bundle);
  await mkdir(store, { recursive: true });
  const exists = existsSync(join(partitionDir(store, 'runs', runId), 'data.parquet'));
  if (exists && !opts.replace) {
    throw storeError('store.runExists', `run "${runId}" already exists in ${storeDir}; pass --replace to overwrite it`);
  }
  await cleanupStore(store);

  const tag = `${runId}-${randomBytes(6).toString('hex')}`;
  const tmp = join(store, `.tmp-${tag}`);
  const counts: Partial<Record<TableName, number>> = {};
  try {
    // A memory cap with a spill directory inside the temp dir keeps large runs (1M+ rows) bounded.
    const db = await createDb({ threads: 2, memoryLimit: '512MB' });
    try {
      await withConnection(db, async (conn) => {
        await mkdir(join(tmp, '.spill'), { recursive: true });
        await conn.run(`SET temp_directory = ${quoteLiteral(join(tmp, '.spill'))}`);
        for (const table of TABLE_NAMES) {
          const rows = table === 'runs' ? [bundle.run] : ((bundle[table] as object[] | undefined) ?? []);
          if (rows.length === 0) continue;
          const dir = partitionDir(tmp, table, runId);
          await mkdir(dir, { recursive: true });
          const file = join(dir, 'data.parquet');
          await writeTableParquet(conn, table, rows, file);
          await fsyncPath(file);
          counts[table] = rows.length;
        }
      });
    } finally {
      db.closeSync();
    }
    await opts.beforeCommit?.();

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
      const staged = partitionDir(tmp, table, runId);
      if (existsSync(staged)) {
        await mkdir(join(store, table), { recursive: true });
        await rename(staged, target);
        await opts.afterRename?.(table);
      }
    }
    await fsyncPath(join(store, 'runs'));
    await rm(trash, { recursive: true, force: true });
  } catch (err) {
    // Leave the store as it was: the temp directory never became visible.
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    if (err instanceof Error && err.name === 'StandoffError') throw err;
    throw storeError('store.writeFailed', `could not write run "${runId}" to ${storeDir}: ${(err as Error).message.split('\n')[0]}`, err);
  }
  await rm(tmp, { recursive: true, force: true });
  return { runId, tables: counts, path: store };
}

/** Deletes a committed run (runs partition first, so it disappears atomically). */
export async function deleteRun(storeDir: string, runId: string): Promise<void> {
  const store = resolve(storeDir);
  const runsPart = partitionDir(store, 'runs', runId);
  if (!existsSync(runsPart)) throw usageError('store.noSuchRun', `run "${runId}" does not exist in ${storeDir}`);
  await rm(runsPart, { recursive: true, force: true });
  await cleanupStore(store);
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
