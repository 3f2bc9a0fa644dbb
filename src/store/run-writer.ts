/**
 * A streaming, atomic run writer: for runs too large to hold as row objects (a 1 GB Inspect log).
 *
 * Appended rows are held (as JSON lines) until about 4 MB of a table has gathered, then written
 * as a staging part in the run's temp directory, which DuckDB converts to Parquet in the
 * background while the caller reads on; memory holds one batch per table, not the run. (JSON
 * keeps every value the schema allows, except that -0 becomes 0 and a lone surrogate U+FFFD, as
 * DuckDB's appender does to the latter.) `finish` streams each table's parts, in order, into its
 * Parquet file (rows in append order, or by unit rank: then DuckDB sorts, under `memoryLimit`,
 * default 512 MB, spilling to the temp directory; a table whose rows never left the DuckDB table
 * they were appended to is written from that table, with no part file); `commit` renames the partitions into the store
 * exactly as `writeRun` does (`commitStaged`: `runs` last, the commit point). Until `commit`
 * nothing is visible; `abort` (or a crash) leaves only a `.tmp-*` directory that readers ignore
 * and the next write removes.
 *
 * Several writers may be open on one store at once, in one process (one per input file of an
 * ingest, committed together at the end) or in several; `open` and `commit` take the store lock
 * (`./lock.ts`) for the moment they change the store, and the temp directory carries an owner
 * file, so another writer's cleanup leaves it alone while this process lives. `open` does not
 * clean the store: call `cleanupStore` once before opening writers.
 *
 * @example
 * const w = await RunWriter.open('traces', 'inspect-abc');
 * await w.append('episodes', [episode], 0);
 * await w.finish(run);
 * await w.commit();
 */
import { writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { z } from 'zod';
import { RUN_ID_PATTERN, TABLES, TABLE_NAMES, fileColumns, type RunRow, type SqlColumn, type TableName } from '../schema/tables.ts';
import { dataError, usageError } from '../errors.ts';
import { createDb, quoteIdent, quoteLiteral } from './duckdb.ts';
import { stagedRow, type StagedRow } from './staged-row.ts';
import { appendable, appendRow } from './stage-appender.ts';

export { stagedRow, type StagedRow } from './staged-row.ts';
import {
  commitStaged,
  createStaging,
  fileSelectList,
  fsyncPath,
  partitionDir,
  stagingType,
  writeFailed,
  writeTableParquet,
  type WriteRunResult,
} from './write-run.ts';

export interface RunWriterOptions {
  /** Replace an existing run with the same id (otherwise refused at `open` and again at `commit`). */
  replace?: boolean;
  /** Skip the zod check of appended rows (for callers that validated them already). */
  trusted?: boolean;
  /** DuckDB memory cap (a sort by rank spills to the temp directory beyond it). */
  memoryLimit?: string;
  /**
   * DuckDB threads (default 1: DuckDB converts parts on one core while the caller reads on the
   * other; on 2 cores this is as fast as 2 threads and peaks lower).
   */
  threads?: number;
}

/** Largest Parquet row group in bytes of text the writer aims for (row groups of big text are shorter). */
const ROW_GROUP_TEXT_BYTES = 8 * 1024 * 1024;
const MAX_ROW_GROUP = 16_384;
const MIN_ROW_GROUP = 16;
/** Text (plus a little per row) a table gathers before it is written as a staging part. */
const PART_BYTES = 4 * 1024 * 1024;

interface Stage {
  table: TableName;
  cols: SqlColumn[];
  /** Rows not yet in a part, as JSON lines. */
  pending: string[];
  pendingBytes: number;
  /** Longest JSON line so far (DuckDB's JSON reader needs to be told). */
  longest: number;
  /** Staging part files, in append order. */
  parts: string[];
  /** Rows appended. */
  rows: number;
  /** Characters of text appended (to size row groups). */
  textChars: number;
  /** The appender's column writers (null: the table is staged as JSON lines only). */
  puts: ReturnType<typeof appendable>;
  /** The part being appended to in DuckDB, if any: its table, appender and size so far. */
  appending: { table: string; ap: DuckDBAppender; bytes: number } | null;
}

function isIdentity(rank: ArrayLike<number>): boolean {
  for (let u = 0; u < rank.length; u++) if (rank[u] !== u) return false;
  return true;
}

type State = 'open' | 'finished' | 'committed' | 'aborted';

export class RunWriter {
  private readonly stages = new Map<TableName, Stage>();
  private state: State = 'open';
  /** The part conversion DuckDB is running, if any. */
  private converting: Promise<unknown> | null = null;
  private counts: Partial<Record<TableName, number>> = {};
  /** The connection parts are appended on (the first one converts parts meanwhile). */
  private apConn: DuckDBConnection | null = null;

  private constructor(
    readonly store: string,
    readonly runId: string,
    private readonly tag: string,
    private readonly tmp: string,
    private readonly opts: RunWriterOptions,
    private db: DuckDBInstance | null,
    private conn: DuckDBConnection | null,
  ) {}

  /** Creates the temp directory and the staging database; refuses an existing run unless `replace`. */
  static async open(storeDir: string, runId: string, opts: RunWriterOptions = {}): Promise<RunWriter> {
    const store = resolve(storeDir);
    if (!RUN_ID_PATTERN.test(runId)) {
      throw usageError('store.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
    }
    const { tag, tmp } = await createStaging(storeDir, runId, { replace: opts.replace });
    await mkdir(join(tmp, '.spill'), { recursive: true });
    await mkdir(join(tmp, '.parts'), { recursive: true });
    let db: DuckDBInstance | null = null;
    try {
      db = await createDb({ threads: opts.threads ?? 1, memoryLimit: opts.memoryLimit ?? '512MB' });
      const conn = await db.connect();
      await conn.run(`SET temp_directory = ${quoteLiteral(join(tmp, '.spill'))}`);
      return new RunWriter(store, runId, tag, tmp, opts, db, conn);
    } catch (err) {
      db?.closeSync();
      await rm(tmp, { recursive: true, force: true });
      throw writeFailed(runId, storeDir, err, 'start writing');
    }
  }

  private check(what: string): DuckDBConnection {
    if (this.state !== 'open' || this.conn === null) throw new Error(`RunWriter.${what} after the writer was ${this.state}`);
    return this.conn;
  }

  private stage(table: TableName): Stage {
    let s = this.stages.get(table);
    if (!s) {
      const cols = fileColumns(table);
      s = { table, cols, pending: [], pendingBytes: 0, longest: 0, parts: [], rows: 0, textChars: 0, puts: appendable(cols), appending: null };
      this.stages.set(table, s);
    }
    return s;
  }

  /**
   * Appends rows of one table. `unit` groups rows that belong together (an episode and its
   * messages): `finish` can order units by rank; rows keep their append order within a unit.
   * Rows are checked against the table's zod schema unless the writer is `trusted`.
   */
  async append(table: TableName, rows: readonly object[], unit = 0): Promise<void> {
    if (table === 'runs') throw new Error('RunWriter.append: the runs row is given to finish()');
    this.check('append');
    if (rows.length === 0) return;
    if (!this.opts.trusted) {
      const schema = TABLES[table] as z.ZodObject;
      for (let i = 0; i < rows.length; i++) {
        const r = schema.safeParse(rows[i]);
        if (!r.success) {
          const issue = r.error.issues[0]!;
          throw dataError('store.invalidRow', `${table} row ${i + 1} of unit ${unit}: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`);
        }
        if ((rows[i] as { run_id?: string }).run_id !== this.runId) {
          throw dataError('store.runIdMismatch', `${table} row ${i + 1} of unit ${unit}: run_id "${(rows[i] as { run_id?: string }).run_id}" differs from the run "${this.runId}"`);
        }
      }
    }
    const s = this.stage(table);
    if (s.puts) return this.appendRows(s, rows, unit);
    for (const row of rows) if (this.push(s, stagedRow(s.cols, row as Record<string, unknown>), unit)) await this.writePart(s);
  }

  /** Appends rows through DuckDB's appender into the stage's current part (see `./stage-appender.ts`). */
  private async appendRows(s: Stage, rows: readonly object[], unit: number): Promise<void> {
    if (s.pending.length > 0) await this.writePart(s); // JSON lines staged earlier go first
    const a = s.appending ?? (await this.startPart(s));
    try {
      for (const row of rows) {
        const chars = appendRow(a.ap, s.cols, s.puts!, row as Record<string, unknown>, unit, s.rows++);
        s.textChars += chars;
        a.bytes += chars + 8 * s.cols.length;
      }
    } catch (err) {
      // A value DuckDB refuses (an INTEGER beyond 32 bits): the run cannot be written.
      throw writeFailed(this.runId, this.store, err, 'stage');
    }
    if (a.bytes >= PART_BYTES) await this.writePart(s);
  }

  /** A new DuckDB table for the stage's next part, with an appender on the writer's second connection. */
  private async startPart(s: Stage): Promise<NonNullable<Stage['appending']>> {
    this.check('append');
    try {
      this.apConn ??= await this.db!.connect();
      const table = `part_${s.table}_${s.parts.length}`;
      const cols = [...s.cols.map((c) => `${quoteIdent(c.name)} ${stagingType(c)}`), '"_unit" INTEGER', '"_seq" INTEGER'];
      await this.apConn.run(`CREATE TABLE ${quoteIdent(table)} (${cols.join(', ')})`);
      s.appending = { table, ap: await this.apConn.createAppender(table), bytes: 0 };
      return s.appending;
    } catch (err) {
      throw writeFailed(this.runId, this.store, err, 'stage');
    }
  }

  /**
   * Appends rows already turned into staged JSON by {@link stagedRow} (with this table's
   * `fileColumns`), e.g. in a worker thread: the same bytes as `append` of the rows. Never checked.
   */
  async appendStaged(table: TableName, rows: readonly StagedRow[], unit = 0): Promise<void> {
    if (table === 'runs') throw new Error('RunWriter.appendStaged: the runs row is given to finish()');
    this.check('append');
    if (rows.length === 0) return;
    const s = this.stage(table);
    if (s.appending) await this.writePart(s); // rows appended earlier go first
    for (const r of rows) if (this.push(s, r, unit)) await this.writePart(s);
  }

  /**
   * Appends a block of staged lines built elsewhere (a worker thread: `src/ingest/inspect/unit.ts`),
   * each a {@link StagedRow}'s JSON with `"_unit"` and `"_seq"` added as its last two keys, joined
   * by newlines; `_seq` need only order the rows within their unit. `rows`, `chars` and `longest`
   * describe the block as `push` would have counted them.
   */
  async appendBlock(table: TableName, block: { text: string; rows: number; chars: number; longest: number }): Promise<void> {
    if (table === 'runs') throw new Error('RunWriter.appendBlock: the runs row is given to finish()');
    this.check('append');
    if (block.rows === 0) return;
    const s = this.stage(table);
    if (s.appending) await this.writePart(s); // rows appended earlier go first
    s.pending.push(block.text);
    s.rows += block.rows;
    s.textChars += block.chars;
    if (block.longest > s.longest) s.longest = block.longest;
    s.pendingBytes += block.text.length + 1;
    if (s.pendingBytes >= PART_BYTES) await this.writePart(s);
  }

  /** Adds one staged row with its unit and sequence number (as the last two keys); true when a part is due. */
  private push(s: Stage, r: StagedRow, unit: number): boolean {
    const tail = `"_unit":${unit},"_seq":${s.rows++}}`;
    const line = r.json.length > 2 ? `${r.json.slice(0, -1)},${tail}` : `{${tail}`;
    s.pending.push(line);
    if (line.length > s.longest) s.longest = line.length;
    s.textChars += r.chars;
    s.pendingBytes += line.length + 1;
    return s.pendingBytes >= PART_BYTES;
  }

  /**
   * Writes a table's pending rows as a Parquet part: DuckDB converts them in the background (its
   * thread works while this one reads on); one conversion at a time. The rows are a DuckDB table
   * filled by the appender, or JSON lines written to a file.
   */
  private async writePart(s: Stage): Promise<void> {
    if (s.pending.length === 0 && !s.appending) return;
    const conn = this.check('append');
    try {
      if (this.converting) await this.converting;
      const base = join(this.tmp, '.parts', `${s.table}-${String(s.parts.length).padStart(6, '0')}`);
      const job = s.appending ? this.convertTable(conn, s.appending, base) : this.convertLines(conn, s, base);
      job.catch(() => undefined); // awaited later; this only keeps an early failure from going unhandled
      this.converting = job;
      s.parts.push(`${base}.parquet`);
      s.appending = null;
      s.pending = [];
      s.pendingBytes = 0;
    } catch (err) {
      this.converting = null; // it failed: nothing left to wait for
      throw writeFailed(this.runId, this.store, err, 'stage');
    }
  }

  /** Closes the stage's appender (its rows go into its table, which stays) and returns the table's quoted name. */
  private closeAppending(s: Stage): string {
    const part = s.appending!;
    part.ap.closeSync(); // flushes the rows into the table
    s.appending = null;
    return quoteIdent(part.table);
  }

  /** Closes the part's appender and has DuckDB copy its table to `<base>.parquet`, then drop it. */
  private convertTable(conn: DuckDBConnection, part: NonNullable<Stage['appending']>, base: string): Promise<unknown> {
    part.ap.closeSync(); // flushes the rows into the table
    const table = quoteIdent(part.table);
    return conn.run(`COPY ${table} TO ${quoteLiteral(`${base}.parquet`)} (FORMAT parquet, COMPRESSION snappy)`).then(() => conn.run(`DROP TABLE ${table}`));
  }

  /** Writes the stage's JSON lines to `<base>.jsonl` and has DuckDB convert them to `<base>.parquet`. */
  private convertLines(conn: DuckDBConnection, s: Stage, base: string): Promise<unknown> {
    writeFileSync(`${base}.jsonl`, s.pending.join('\n') + '\n');
    const columns = `{${[...s.cols.map((c) => `${quoteLiteral(c.name)}: ${quoteLiteral(stagingType(c))}`), `'_unit': 'INTEGER'`, `'_seq': 'INTEGER'`].join(', ')}}`;
    const maxObject = Math.max(16 * 1024 * 1024, 4 * s.longest);
    return conn
      .run(
        `COPY (SELECT * FROM read_json(${quoteLiteral(`${base}.jsonl`)}, format = 'newline_delimited', records = true, auto_detect = false, columns = ${columns}, maximum_object_size = ${maxObject})) TO ${quoteLiteral(`${base}.parquet`)} (FORMAT parquet, COMPRESSION snappy)`,
      )
      .then(() => rm(`${base}.jsonl`, { force: true }));
  }

  /** Rows appended so far, per table. */
  rowCounts(): Partial<Record<TableName, number>> {
    const out: Partial<Record<TableName, number>> = {};
    for (const [t, s] of this.stages) if (s.rows > 0) out[t] = s.rows;
    return out;
  }

  /**
   * Writes every table's Parquet file into the temp directory, with the `runs` row. Rows are
   * written in append order, unless `rank` gives the units another order (units without a rank
   * go by their unit number); rows of a unit keep their append order. That reorder is a DuckDB
   * sort, which needs memory for large runs: callers that can append in order should. Closes the
   * staging database.
   */
  async finish(run: RunRow, rank?: ArrayLike<number>): Promise<void> {
    const conn = this.check('finish');
    if (run.run_id !== this.runId) throw new Error(`RunWriter.finish: run_id "${run.run_id}" differs from the writer's "${this.runId}"`);
    try {
      // A table whose rows all sit in the part being appended is written from it straight: no part file.
      const whole = new Map<TableName, string>();
      for (const s of this.stages.values()) {
        if (s.appending && s.parts.length === 0) whole.set(s.table, this.closeAppending(s));
        else await this.writePart(s);
      }
      if (this.converting) await this.converting;
      // Units that arrived in rank order need no sort: the parts are read in order.
      let order = '';
      let join_ = '';
      if (rank !== undefined && !isIdentity(rank) && this.stages.size > 0) {
        await conn.run('CREATE TABLE "stage_rank" ("_unit" INTEGER, "_rank" INTEGER)');
        const ap = await conn.createAppender('stage_rank');
        try {
          for (let u = 0; u < rank.length; u++) {
            ap.appendInteger(u);
            ap.appendInteger(rank[u]!);
            ap.endRow();
          }
          ap.flushSync();
        } finally {
          ap.closeSync();
        }
        join_ = ' LEFT JOIN "stage_rank" USING ("_unit")';
        order = ' ORDER BY coalesce("_rank", "_unit"), "_unit", "_seq"';
      }
      const fileOf = async (table: TableName) => {
        const dir = partitionDir(this.tmp, table, this.runId);
        await mkdir(dir, { recursive: true });
        return join(dir, 'data.parquet');
      };
      for (const table of TABLE_NAMES) {
        const s = this.stages.get(table);
        if (!s || s.rows === 0) continue;
        const avg = s.textChars / s.rows;
        const group = Math.max(MIN_ROW_GROUP, Math.min(MAX_ROW_GROUP, Math.floor(ROW_GROUP_TEXT_BYTES / Math.max(avg, 1))));
        const file = await fileOf(table);
        const from = whole.get(table) ?? `read_parquet([${s.parts.map(quoteLiteral).join(', ')}])`;
        await conn.run(
          `COPY (SELECT ${fileSelectList(s.cols)} FROM ${from}${join_}${order}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${group})`,
        );
        await fsyncPath(file);
        this.counts[table] = s.rows;
      }
      const runsFile = await fileOf('runs');
      await writeTableParquet(conn, 'runs', [run], runsFile);
      await fsyncPath(runsFile);
      this.counts.runs = 1;
    } catch (err) {
      await this.abort();
      throw writeFailed(this.runId, this.store, err);
    }
    this.close();
    await rm(join(this.tmp, '.spill'), { recursive: true, force: true });
    await rm(join(this.tmp, '.parts'), { recursive: true, force: true });
    this.state = 'finished';
  }

  /** Makes the run visible (atomically; see `commitStaged`). Refuses a run that appeared meanwhile unless `replace`. */
  async commit(): Promise<WriteRunResult> {
    if (this.state !== 'finished') throw new Error(`RunWriter.commit before finish (writer is ${this.state})`);
    try {
      const tables = (Object.keys(this.counts) as TableName[]).filter((t) => t !== 'runs');
      await commitStaged(this.store, this.tmp, this.tag, this.runId, { tables, replace: this.opts.replace });
    } catch (err) {
      await this.abort();
      throw writeFailed(this.runId, this.store, err);
    }
    await rm(this.tmp, { recursive: true, force: true });
    this.state = 'committed';
    return { runId: this.runId, tables: { ...this.counts }, path: this.store };
  }

  /** Drops everything staged (safe to call more than once, and after a failure). */
  async abort(): Promise<void> {
    if (this.state === 'committed' || this.state === 'aborted') return;
    if (this.converting) await this.converting.catch(() => undefined);
    this.close();
    this.state = 'aborted';
    await rm(this.tmp, { recursive: true, force: true }).catch(() => undefined);
  }

  private close(): void {
    for (const st of this.stages.values()) {
      try {
        st.appending?.ap.closeSync();
      } catch {
        // closing after a failure: the database goes next anyway
      }
      st.appending = null;
    }
    this.apConn?.closeSync();
    this.apConn = null;
    this.conn?.closeSync();
    this.conn = null;
    this.db?.closeSync();
    this.db = null;
  }
}
