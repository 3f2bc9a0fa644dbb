/**
 * `standoff sql --out FILE`: the tool writes the file itself, after the query, streaming the
 * result a batch at a time, so memory does not grow with the row count and the query's DuckDB
 * instance never gets a writable directory (no `COPY` from the sandbox).
 *
 * - `.csv`, `.json`: encoded batch by batch (`format.ts`) into the file; CSV is formula-safe by
 *   default (`csvSafe`, see `src/escape.ts`).
 * - `.arrow`: Arrow IPC file, one record batch per 65,536 rows.
 * - `.parquet`: the result's chunks are appended to a table of a private, file-backed DuckDB
 *   database in the output's temp directory (memory-capped: it spills to that file), which then
 *   writes the Parquet file. That instance runs no user SQL and may reach only its temp directory.
 *
 * Every format is written into `<dir>/.<name>.tmp-<pid>-<random>/` first and renamed into place,
 * so a failed or interrupted write leaves the target as it was (temp directories of dead
 * processes are removed by the next `--out` into the same directory). A target inside the trace
 * store is refused (`sql.outInStore`, exit 2).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DuckDBInstance, JSDuckDBValueConverter, type DuckDBDataChunk, type DuckDBResult } from '@duckdb/node-api';
import { StandoffError, oneLine, storeError, usageError } from '../errors.ts';
import { quoteIdent, quoteLiteral, toPlain, type Plain } from './duckdb.ts';
import { encoderFor } from './format.ts';
import { isOwnerAlive } from './lock.ts';

export const OUT_EXTENSIONS = ['.csv', '.json', '.parquet', '.arrow'] as const;
export type OutExtension = (typeof OUT_EXTENSIONS)[number];

const ARROW_BATCH_ROWS = 65_536;

const inside = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);

/**
 * Checks an `--out` path before the query runs: a known extension (`sql.badOut`, exit 2), a
 * directory that exists (`sql.outFailed`, exit 4), and a place outside the store, symlinks
 * resolved (`sql.outInStore`, exit 2). Returns the extension.
 */
export async function checkOutPath(out: string, storeDir: string): Promise<OutExtension> {
  const ext = extname(out).toLowerCase();
  if (!(OUT_EXTENSIONS as readonly string[]).includes(ext)) {
    throw usageError('sql.badOut', `--out ${out}: extension must be one of ${OUT_EXTENSIONS.join(', ')}`);
  }
  const target = resolve(out);
  let dir: string;
  try {
    dir = await realpath(dirname(target));
  } catch (err) {
    throw storeError('sql.outFailed', `cannot write ${out}: ${oneLine((err as Error).message)}`, err);
  }
  const store = await realpath(storeDir);
  const real = await realpath(target).catch(() => join(dir, basename(target)));
  if (inside(dir, store) || inside(real, store)) {
    throw usageError('sql.outInStore', `--out ${out} is inside the trace store ${storeDir}: the store holds only runs; write the result elsewhere`);
  }
  const s = await stat(target).catch(() => null);
  if (s?.isDirectory()) throw usageError('sql.badOut', `--out ${out} is a directory; give a file name`);
  return ext as OutExtension;
}

/** Rows of a chunk as plain objects keyed by `names`. */
export function chunkRows(chunk: DuckDBDataChunk, names: readonly string[]): Record<string, Plain>[] {
  const rows = chunk.convertRows(JSDuckDBValueConverter);
  return rows.map((r) => {
    const o: Record<string, Plain> = {};
    for (let i = 0; i < names.length; i++) o[names[i]!] = toPlain(r[i]);
    return o;
  });
}

async function put(stream: WriteStream, text: string): Promise<void> {
  if (text !== '' && !stream.write(text)) await once(stream, 'drain');
}

async function closeStream(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'close');
}

/** Removes temp directories of earlier `--out` writes of this target whose process is gone. */
async function removeStale(dir: string, name: string): Promise<void> {
  const prefix = `.${name}.tmp-`;
  for (const e of await readdir(dir).catch(() => [] as string[])) {
    if (!e.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(e.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || isOwnerAlive({ pid, host: hostname(), proc_start: null })) continue;
    await rm(join(dir, e), { recursive: true, force: true });
  }
}

async function writeText(result: DuckDBResult, file: string, ext: '.csv' | '.json', names: readonly string[], csvSafe: boolean): Promise<number> {
  const stream = createWriteStream(file);
  const failed = once(stream, 'error').then(([e]) => Promise.reject(e));
  failed.catch(() => undefined);
  const enc = encoderFor(ext === '.csv' ? 'csv' : 'json', names, { csvSafe });
  let rows = 0;
  await Promise.race([
    (async () => {
      await put(stream, enc.head());
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        rows += chunk.rowCount;
        await put(stream, enc.rows(chunkRows(chunk, names)));
      }
      await put(stream, enc.tail(rows));
      await closeStream(stream);
    })(),
    failed,
  ]);
  return rows;
}

async function writeArrow(result: DuckDBResult, file: string, names: readonly string[]): Promise<number> {
  // Arrow (~140 modules) loads only for `--out .arrow`: every other `standoff sql` starts without it.
  const [{ RecordBatchFileWriter }, { columnsToArrow }] = await Promise.all([import('apache-arrow'), import('./arrow.ts')]);
  const types = result.columnTypes().map((t) => t.toString());
  const writer = new RecordBatchFileWriter();
  const stream = createWriteStream(file);
  const piped = new Promise<void>((ok, fail) => {
    writer.toNodeStream().on('error', fail).pipe(stream).on('error', fail).on('close', () => ok());
  });
  piped.catch(() => undefined);
  let columns: unknown[][] = names.map(() => []);
  let held = 0;
  let rows = 0;
  let wrote = false;
  const flush = async () => {
    // Batch by batch: writing a whole Table would finish the writer (RecordBatchWriter.writeAll).
    for (const batch of columnsToArrow(names, types, columns).batches) writer.write(batch);
    wrote = true;
    columns = names.map(() => []);
    held = 0;
    await new Promise((r) => setImmediate(r)); // let the file stream drain
  };
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const cols = chunk.convertColumns(JSDuckDBValueConverter);
    for (let i = 0; i < names.length; i++) for (const v of cols[i]!) columns[i]!.push(v);
    held += chunk.rowCount;
    rows += chunk.rowCount;
    if (held >= ARROW_BATCH_ROWS) await flush();
  }
  if (held > 0 || !wrote) await flush();
  writer.finish();
  await piped;
  return rows;
}

async function writeParquet(result: DuckDBResult, file: string, work: string, names: readonly string[]): Promise<number> {
  const db = await DuckDBInstance.create(join(work, 'stage.duckdb'), {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '2',
    memory_limit: '256MB',
    temp_directory: join(work, 'spill'),
  });
  try {
    const conn = await db.connect();
    try {
      await conn.run(`SET allowed_directories = [${quoteLiteral(work + sep)}]`);
      await conn.run('SET enable_external_access = false');
      await conn.run('SET lock_configuration = true');
      // Column types as DuckDB prints them (it quotes names and values inside them).
      const types = result.columnTypes().map((t) => t.toString());
      await conn.run(`CREATE TABLE result (${names.map((n, i) => `${quoteIdent(n)} ${types[i]}`).join(', ')})`);
      const ap = await conn.createAppender('result');
      let rows = 0;
      try {
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
          ap.appendDataChunk(chunk);
          rows += chunk.rowCount;
        }
        ap.flushSync();
      } finally {
        ap.closeSync();
      }
      try {
        await conn.run(`COPY result TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
      } catch (err) {
        throw Object.assign(new Error(oneLine((err as Error).message)), { code: 'EPARQUET' });
      }
      return rows;
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
}

/**
 * Streams a query result into `out` (already checked by {@link checkOutPath}); returns the row
 * count. Failures are `sql.outFailed` (exit 4) and leave `out` as it was.
 */
export async function writeResultFile(result: DuckDBResult, out: string, ext: OutExtension, opts: { csvSafe?: boolean } = {}): Promise<number> {
  const target = resolve(out);
  const dir = dirname(target);
  const name = basename(target);
  await removeStale(dir, name);
  const work = join(dir, `.${name}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const names = result.deduplicatedColumnNames();
  try {
    await mkdir(work);
    const file = join(work, name);
    let rows: number;
    if (ext === '.csv' || ext === '.json') rows = await writeText(result, file, ext, names, opts.csvSafe ?? ext === '.csv');
    else if (ext === '.arrow') rows = await writeArrow(result, file, names);
    else rows = await writeParquet(result, file, work, names);
    await rename(file, target);
    return rows;
  } catch (err) {
    if (err instanceof StandoffError) throw err;
    // Errors of the query itself (DuckDB's, while fetching) go back to the caller to classify;
    // file-system errors (ENOSPC, EACCES, ...) and the Parquet writer's are the output's.
    const code = (err as NodeJS.ErrnoException)?.code;
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw err;
    throw storeError('sql.outFailed', `cannot write ${out}: ${oneLine((err as Error).message ?? String(err))}`, err);
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}
