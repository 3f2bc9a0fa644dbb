/**
 * Ad-hoc SQL over the trace store (`standoff sql`): read-only and sandboxed. Only SELECT-type
 * statements (SELECT, DESCRIBE, SHOW, SUMMARIZE, PRAGMA reads, EXPLAIN) are executed; the
 * DuckDB instance is locked to the store directory (plus the directory of `--out`), with external
 * access off and configuration locked. Output files are written to a temp path, then renamed.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { StatementType, type DuckDBConnection, type DuckDBResultReader } from '@duckdb/node-api';
import { tableToIPC } from 'apache-arrow';
import { StandoffError, dataError, oneLine, storeError, usageError } from '../errors.ts';
import { quoteLiteral, toQueryResult, type QueryResult } from './duckdb.ts';
import { openStore, outputDir, type Store } from './open-store.ts';
import { resultToArrow } from './arrow.ts';
import { formatResult, toCsv, toJson, type Format } from './format.ts';

export const OUT_EXTENSIONS = ['.csv', '.json', '.parquet', '.arrow'] as const;

const READ_ONLY_TYPES = new Set<number>([StatementType.SELECT, StatementType.EXPLAIN]);

/** Maps a DuckDB error to a StandoffError with a stable code and exit kind; DuckDB's message kept. */
export function classifySqlError(err: unknown): StandoffError {
  if (err instanceof StandoffError) return err;
  const msg = oneLine((err as Error)?.message ?? String(err)).replace(/^Failed to extract statements: /, '');
  if (/Parser Error/i.test(msg)) return usageError('sql.syntax', `sql syntax error: ${msg}`, err);
  if (/Catalog Error/i.test(msg)) return usageError('sql.unknownName', `sql: ${msg}`, err);
  if (/Binder Error/i.test(msg)) return usageError('sql.binder', `sql: ${msg}`, err);
  if (/Permission Error|configuration has been locked|disabled by configuration/i.test(msg))
    return usageError('sql.forbidden', `sql refused: ${msg}`, err);
  if (/IO Error|parquet|magic bytes|No magic|Invalid Input Error: .*file/i.test(msg))
    return storeError('store.corrupt', `store read failed: ${msg}`, err);
  return dataError('sql.failed', `sql failed: ${msg}`, err);
}

/** Executes one or more statements (all must be read-only); returns the last result. */
export async function executeReadOnly(conn: DuckDBConnection, sql: string): Promise<QueryResult & { arrow: () => ReturnType<typeof resultToArrow> }> {
  try {
    const extracted = await conn.extractStatements(sql);
    if (extracted.count === 0) throw usageError('sql.empty', 'sql: no statement given');
    let last: DuckDBResultReader | undefined;
    for (let i = 0; i < extracted.count; i++) {
      const prepared = await extracted.prepare(i);
      if (!READ_ONLY_TYPES.has(prepared.statementType)) {
        throw usageError('sql.notReadOnly', `sql refused: statement ${i + 1} is a ${StatementType[prepared.statementType] ?? 'non-select'} statement; standoff sql is read-only (select, describe, show, summarize, explain)`);
      }
      last = await prepared.runAndReadAll();
    }
    const result = last!;
    return { ...toQueryResult(result), arrow: () => resultToArrow(result) };
  } catch (err) {
    throw classifySqlError(err);
  }
}

export interface RunSqlOptions {
  format?: Format;
  out?: string;
  runs?: string[];
}

/** Opens the store sandboxed; `out` (if any) makes its directory writable for the COPY. */
export async function openSandboxedStore(traces: string, out?: string, runs?: string[]): Promise<Store> {
  return openStore(traces, { sandbox: true, requireRuns: true, writableDirs: out ? [outputDir(out)] : [], runs });
}

/** Writes a result to `out` by extension, atomically (temp file + rename). */
export async function writeResult(conn: DuckDBConnection, sql: string, result: QueryResult & { arrow: () => ReturnType<typeof resultToArrow> }, out: string): Promise<void> {
  const ext = extname(out).toLowerCase();
  if (!(OUT_EXTENSIONS as readonly string[]).includes(ext)) {
    throw usageError('sql.badOut', `--out ${out}: extension must be one of ${OUT_EXTENSIONS.join(', ')}`);
  }
  const target = resolve(out);
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    if (ext === '.csv') await writeFile(tmp, toCsv(result));
    else if (ext === '.json') await writeFile(tmp, toJson(result));
    else if (ext === '.arrow') await writeFile(tmp, tableToIPC(result.arrow(), 'file'));
    else {
      const statements = await conn.extractStatements(sql);
      const lastSql = sql.trim().replace(/;\s*$/, '');
      if (statements.count !== 1) throw usageError('sql.badOut', '--out .parquet takes a single select statement');
      await conn.run(`COPY (${lastSql}) TO ${quoteLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
    }
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof StandoffError) throw err;
    const msg = oneLine((err as Error).message);
    throw storeError('sql.outFailed', `cannot write ${out}: ${msg}`, err);
  }
}

/** The whole of `standoff sql "<query>"`: returns the text to print (empty when written to --out). */
export async function runSql(traces: string, sql: string, opts: RunSqlOptions = {}): Promise<{ text: string; rows: number }> {
  const store = await openSandboxedStore(traces, opts.out, opts.runs);
  try {
    const result = await executeReadOnly(store.conn, sql);
    if (opts.out) {
      await writeResult(store.conn, sql, result, opts.out);
      return { text: '', rows: result.rows.length };
    }
    return { text: formatResult(result, opts.format ?? 'table'), rows: result.rows.length };
  } finally {
    store.close();
  }
}
