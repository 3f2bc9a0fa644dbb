/**
 * Read side of the trace store: a DuckDB instance in which every table is a view over the
 * Parquet files of committed runs (uncommitted partitions and temp directories are invisible).
 * With `sandbox: true` (what `standoff sql`, notebooks and SQL metrics use), the instance is then
 * locked: it may open only the Parquet files its views read (`allowed_paths`; no directory, no
 * spill directory), external access is off, logging and profiling are fixed off and settings are
 * locked, so a query cannot read elsewhere, ATTACH, INSTALL, change settings or create a file.
 * Which statements run at all is the query gate's work (`sql-gate.ts`): only plain reads.
 */
import { existsSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { TABLE_NAMES, sqlColumns, type SqlColumn, type TableName } from '../schema/tables.ts';
import { oneLine, storeError, usageError } from '../errors.ts';
import { createDb, createSpillDirectory, quoteIdent, quoteLiteral } from './duckdb.ts';
import { listCommittedRuns, partitionDir, storeExists } from './write-run.ts';
import { metricsViewSql, sqlMetricFromFile, storeMetricFiles } from './metrics.ts';

export interface OpenStoreOptions {
  /** Restrict to these run ids (each must exist). */
  runs?: string[];
  /** Lock the instance down after creating the views (ad-hoc SQL). */
  sandbox?: boolean;
  /** Fail when the store holds no runs. */
  requireRuns?: boolean;
  threads?: number;
  /** DuckDB memory limit (e.g. '1GB') when not `bounded`; default DuckDB's (80% of RAM). */
  memoryLimit?: string;
  /**
   * DuckDB's memory limit and a private spill directory (`ANALYSIS_DB`): what the report and the
   * statistics commands open the store with, so a query at 1e7 spills instead of taking 80% of RAM.
   */
  bounded?: boolean;
}

import { ANALYSIS_DB } from './analysis-db.ts';

export { ANALYSIS_DB };

/** A fresh spill directory for one DuckDB instance (the caller removes it); stale ones of dead processes are removed (`createSpillDirectory`). */
export function spillDirectory(): string {
  return createSpillDirectory();
}

export interface Store {
  dir: string;
  runIds: string[];
  db: DuckDBInstance;
  conn: DuckDBConnection;
  close(): void;
}

async function partitionFiles(store: string, table: TableName, runIds: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const id of runIds) {
    const dir = partitionDir(store, table, id);
    if (!existsSync(dir)) continue;
    for (const f of (await readdir(dir)).sort()) if (f.endsWith('.parquet')) files.push(join(dir, f));
  }
  return files;
}

/**
 * SQL of the view for one table: typed, in schema column order, empty when there are no files.
 * A nullable column that none of the files holds (a store written before the column was added)
 * reads as NULL: not measured. A missing non-nullable column is an error (`store.unreadable`).
 */
function viewSql(table: TableName, files: string[], present: Set<string>): string {
  const cols = sqlColumns(table);
  const nullCol = (c: SqlColumn) => `CAST(NULL AS ${c.type}) AS ${quoteIdent(c.name)}`;
  if (files.length === 0) return `SELECT ${cols.map(nullCol).join(', ')} WHERE false`;
  const list = `[${files.map(quoteLiteral).join(', ')}]`;
  const select = cols.map((c) => {
    if (c.name === 'run_id' || present.has(c.name)) return `CAST(${quoteIdent(c.name)} AS ${c.type}) AS ${quoteIdent(c.name)}`;
    if (c.nullable) return nullCol(c);
    throw new Error(`${table} files have no column "${c.name}"`);
  });
  return `SELECT ${select.join(', ')} FROM read_parquet(${list}, hive_partitioning = true, hive_types = {'run_id': VARCHAR}, union_by_name = true)`;
}

/** Column names present in any of the files (Parquet footers only). */
async function fileColumnNames(conn: DuckDBConnection, files: string[]): Promise<Set<string>> {
  if (files.length === 0) return new Set();
  const reader = await conn.runAndReadAll(
    `SELECT DISTINCT name FROM parquet_schema([${files.map(quoteLiteral).join(', ')}])`,
  );
  return new Set(reader.getRowObjects().map((r) => String(r.name)));
}

export async function openStore(storeDir: string, opts: OpenStoreOptions = {}): Promise<Store> {
  const dir = resolve(storeDir);
  if (!(await storeExists(storeDir))) {
    throw storeError('store.missing', `trace store ${storeDir} does not exist (pass --traces DIR, or create runs with standoff run / standoff ingest)`);
  }
  let runIds = await listCommittedRuns(dir);
  if (opts.runs && opts.runs.length > 0) {
    const missing = opts.runs.filter((r) => !runIds.includes(r));
    if (missing.length > 0) {
      throw usageError('store.noSuchRun', `run "${missing[0]}" does not exist in ${storeDir} (runs: ${runIds.join(', ') || 'none'})`);
    }
    runIds = [...opts.runs].sort();
  }
  if (opts.requireRuns && runIds.length === 0) {
    throw storeError('store.empty', `trace store ${storeDir} holds no runs`);
  }
  const db = await createDb(opts.bounded ? { threads: opts.threads ?? ANALYSIS_DB.threads, memoryLimit: ANALYSIS_DB.memoryLimit } : { threads: opts.threads ?? 2, memoryLimit: opts.memoryLimit });
  const conn = await db.connect();
  const readable: string[] = [];
  const spill = opts.bounded ? spillDirectory() : null;
  const removeSpill = () => {
    if (spill) rmSync(spill, { recursive: true, force: true });
  };
  try {
    if (spill) await conn.run(`SET temp_directory = ${quoteLiteral(spill)}`);
    for (const table of TABLE_NAMES) {
      const files = await partitionFiles(dir, table, runIds);
      readable.push(...files);
      const present = await fileColumnNames(conn, files);
      await conn.run(`CREATE VIEW ${quoteIdent(table)} AS ${viewSql(table, files, present)}`);
    }
    // The long `metrics` view (every metric of the store, with its kind): the built-in and scorer
    // metrics; for user SQL (standoff sql, notebooks) also the store's SQL metric files, each
    // checked against that view first, in the locked instance. A file that fails the check is left out
    // (\`standoff ci --list-metrics\` names its problem), so \`standoff sql\` still opens to debug it;
    // other commands never read those files (ci reads them itself).
    await conn.run(`CREATE VIEW metrics AS ${metricsViewSql()}`);
    if (opts.sandbox) {
      // Locked first: a metric file is user SQL, checked and bound in the locked instance.
      await lockDown(conn, readable, spill);
      const sqlMetrics = [];
      for (const f of await storeMetricFiles(dir)) {
        try {
          sqlMetrics.push(await sqlMetricFromFile(conn, f));
        } catch (err) {
          if (!(err instanceof Error && err.name === 'StandoffError')) throw err;
        }
      }
      if (sqlMetrics.length) await conn.run(`CREATE OR REPLACE VIEW metrics AS ${metricsViewSql(sqlMetrics)}`);
    }
  } catch (err) {
    conn.closeSync();
    db.closeSync();
    removeSpill();
    if (err instanceof Error && err.name === 'StandoffError') throw err;
    throw storeError('store.unreadable', `cannot open trace store ${storeDir}: ${oneLine((err as Error).message)}`, err);
  }
  return {
    dir,
    runIds,
    db,
    conn,
    close() {
      conn.closeSync();
      db.closeSync();
      removeSpill();
    },
  };
}

/**
 * The settings, in the order that makes them stick (see DuckDB's securing guide). The instance may
 * open exactly the Parquet files the views read (`allowed_paths`) and no directory, so no statement,
 * gate or not, can create a file or a directory anywhere, the store included (a log directory, a
 * profile, a CSV next to a partition). The spill directory goes first: DuckDB would add it to the
 * allowed directories: without a spill directory a query that needs more memory than the limit
 * fails instead of spilling. A bounded store (`bounded`) keeps its own fresh, private spill
 * directory (made by `spillDirectory`, removed on close); the query gate admits only plain reads,
 * so the one directory a query could then reach holds DuckDB's own spill files of this process.
 * Logging and profiling are fixed off and in memory before the configuration is locked.
 */
async function lockDown(conn: DuckDBConnection, files: string[], spill: string | null): Promise<void> {
  if (!spill) await conn.run("SET temp_directory = ''");
  await conn.run(`SET allowed_paths = [${files.map(quoteLiteral).join(', ')}]`);
  await conn.run('SET allowed_directories = []');
  await conn.run('SET enable_logging = false');
  await conn.run("SET logging_storage = 'memory'");
  await conn.run("SET profiling_output = ''");
  await conn.run('SET enable_external_access = false');
  await conn.run('SET lock_configuration = true');
}
