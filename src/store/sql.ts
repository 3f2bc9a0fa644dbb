/**
 * Ad-hoc SQL over the trace store (`standoff sql`, its REPL, notebooks' `sql` blocks): read-only
 * and sandboxed.
 *
 * Every query passes the one query gate (`sql-gate.ts`: DuckDB's parser decides; only plain reads,
 * no EXPLAIN ANALYZE, no COPY / EXPORT / ATTACH / SET / CREATE, no function that writes or runs
 * other SQL) and runs in a DuckDB instance locked to the store (`open-store.ts`: external access
 * off, only the views' Parquet files may be opened, no directory, no spill directory, logging and
 * profiling fixed, configuration locked).
 *
 * Results stream: the last statement's rows are fetched a chunk at a time and either encoded to
 * the output stream (`format.ts`; the table format keeps its first `maxRows` rows and counts the
 * rest) or written by the tool to `--out` (`result-out.ts`; never by DuckDB's `COPY`). Memory does
 * not grow with the row count.
 */
import { once } from 'node:events';
import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import { StandoffError, dataError, oneLine, storeError, usageError } from '../errors.ts';
import { toQueryResult, type QueryResult } from './duckdb.ts';
import { openStore, type Store } from './open-store.ts';
import { encoderFor, type Format, type FormatOptions } from './format.ts';
import { prepareReadOnly } from './sql-gate.ts';
import { checkOutPath, chunkRows, writeResultFile } from './result-out.ts';

export { OUT_EXTENSIONS } from './result-out.ts';

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

/**
 * Runs user SQL through the gate and returns the last statement's result, streaming (nothing of
 * it fetched yet). Earlier statements of a batch are run to the end and their rows dropped.
 */
export async function streamReadOnly(conn: DuckDBConnection, sql: string): Promise<DuckDBResult> {
  try {
    const prepared = await prepareReadOnly(conn, sql);
    for (let i = 0; i < prepared.length - 1; i++) {
      const r = await prepared[i]!.stream();
      while ((await r.fetchChunk())?.rowCount) {
        /* drain */
      }
    }
    return await prepared[prepared.length - 1]!.stream();
  } catch (err) {
    throw classifySqlError(err);
  }
}

/** Runs user SQL through the gate and materializes the last result (notebooks, tests). */
export async function executeReadOnly(conn: DuckDBConnection, sql: string): Promise<QueryResult> {
  try {
    const prepared = await prepareReadOnly(conn, sql);
    for (let i = 0; i < prepared.length - 1; i++) await prepared[i]!.run();
    const result = await prepared[prepared.length - 1]!.runAndReadAll();
    return toQueryResult(result);
  } catch (err) {
    throw classifySqlError(err);
  }
}

/** Opens the store for user SQL: views over committed runs, then the sandbox locked down. */
export async function openSandboxedStore(traces: string, runs?: string[]): Promise<Store> {
  return openStore(traces, { sandbox: true, requireRuns: true, runs });
}

async function put(sink: NodeJS.WritableStream, text: string): Promise<void> {
  if (text !== '' && !sink.write(text)) await once(sink, 'drain');
}

/**
 * Encodes a streaming result to `sink` in `format`, a chunk at a time; returns the row count.
 * Errors while fetching (the query failing part way) are classified like the query's own.
 */
export async function writeFormatted(result: DuckDBResult, format: Format, sink: NodeJS.WritableStream, opts: FormatOptions = {}): Promise<number> {
  const names = result.deduplicatedColumnNames();
  const enc = encoderFor(format, names, opts);
  let rows = 0;
  let text = enc.head();
  try {
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      rows += chunk.rowCount;
      text += enc.rows(chunkRows(chunk, names));
      if (text.length >= 1 << 16) {
        await put(sink, text);
        text = '';
      }
    }
  } catch (err) {
    throw classifySqlError(err);
  }
  await put(sink, text + enc.tail(rows));
  return rows;
}

export interface RunSqlOptions extends FormatOptions {
  format?: Format;
  /** Write the result to this file (`.csv`, `.json`, `.parquet`, `.arrow`) instead of `stdout`. */
  out?: string;
  runs?: string[];
  /** Where the formatted result goes (default process.stdout). */
  stdout?: NodeJS.WritableStream;
}

/** The whole of `standoff sql "<query>"`: prints the result (or writes `out`); returns the row count. */
export async function runSql(traces: string, sql: string, opts: RunSqlOptions = {}): Promise<{ rows: number }> {
  const store = await openSandboxedStore(traces, opts.runs);
  try {
    const ext = opts.out !== undefined ? await checkOutPath(opts.out, store.dir) : null;
    const result = await streamReadOnly(store.conn, sql);
    if (opts.out !== undefined && ext !== null) {
      try {
        return { rows: await writeResultFile(result, opts.out, ext, { csvSafe: opts.csvSafe }) };
      } catch (err) {
        throw classifySqlError(err);
      }
    }
    return { rows: await writeFormatted(result, opts.format ?? 'table', opts.stdout ?? process.stdout, opts) };
  } finally {
    store.close();
  }
}
