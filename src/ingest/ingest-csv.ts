/**
 * `standoff ingest csv FILE... [--map MAP.json | --map FILE=MAP.json ...] [flags] [--run-id ID]
 * [--dry-run] [--replace]` as a library.
 *
 * Every file goes through the one CSV reader (src/store/read-csv.ts): its header is read, its
 * mapping resolved (given, or detected and printed) into SQL (`csv/plan.ts`), and DuckDB loads it
 * (`read_csv` with explicit columns, `strict_mode`, `store_rejects`) into a staging table with
 * every cell converted and checked in SQL, while the byte scan hashes the file and locates its
 * lines. Keys are checked across files in SQL. All or nothing: problems are collected (up to
 * `MAX_ERRORS`, each `file: line N, field "x": ...`); only when there is none is the run written,
 * atomically, by `writeRun`, straight from the staging tables (`SqlRows`). On any problem an
 * `IngestError` is thrown (exit 3) and the store is not touched. Format and mapping:
 * `docs/ingest-csv.md`.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { RUN_ID_PATTERN, type RunBundle, type RunRow, type TableName } from '../schema/tables.ts';
import { usageError } from '../errors.ts';
import { createDb, quoteIdent, quoteLiteral, toPlain } from '../store/duckdb.ts';
import { refuseExistingRun, writeRun, type SqlRows, type WritableRunBundle } from '../store/write-run.ts';
import { readCsvHeader, scanCsvFile, type CsvHead, type CsvScan } from '../store/csv-scan.ts';
import { scoreSql } from '../store/csv-values.ts';
import {
  CsvDataError,
  CsvProblems,
  combineCsvProblems,
  csvColumn,
  csvSourceFor,
  describeDialect,
  detectCsvDialect,
  detectIndexColumn,
  headerSplitProblem,
  indexNote,
  readCsvSql,
  rowCountProblem,
  scanProblem,
  writeLineMap,
  type CsvDialect,
  type CsvFileProblem,
  type CsvLoad,
  type IndexColumn,
} from '../store/read-csv.ts';
import {
  completeDetection,
  detectMapping,
  type ColumnStats,
  type Mapping,
  type MappingFlags,
  type MappingInput,
  type MappedTable,
  type WideSpec,
  wideMappings,
} from './csv/mapping.ts';
import { literalProblem, resolvePlan, type FilePlan, type KeySource, type OutTable } from './csv/plan.ts';
import { resolveFileMaps, type FileMaps, type ManifestInput } from './csv/file-maps.ts';
import { csvRunRow, mappingJsonOf } from './csv/run-row.ts';

/** Tables a CSV ingest fills. */
const CSV_TABLES = ['episodes', 'scores', 'judgments', 'probe_answers', 'probe_decisions', 'aggregates'] as const;

/** Problems collected before giving up (the CLI prints them one per line). */
export const MAX_ERRORS = 20;

/** A data error carrying every problem found (`errors`, one line each); `message` summarises. */
export class IngestError extends CsvDataError {}

export type { ManifestInput };

export interface IngestCsvOptions {
  /** Trace store directory. */
  traces: string;
  /**
   * Mapping for every file: a JSON file path or the mapping itself; or a manifest
   * (`{ "files": { "<csv name>": mapping } }`). Without it, columns are detected per file.
   */
  map?: string | MappingInput | ManifestInput;
  /** A mapping per file: CSV file (as given, or its base name) -> map file path or mapping. */
  maps?: Record<string, string | MappingInput>;
  /** Mapping choices given as flags; they apply to every file and must agree with its map. */
  flags?: MappingFlags;
  /** Run id (default `csv-<UTC timestamp>-<8 hex of the files' SHA-256>`). */
  runId?: string;
  /** Check everything and return the summary, write nothing. */
  dryRun?: boolean;
  /** Replace an existing run with the same id. */
  replace?: boolean;
  /** `runs.suite` (default: the map's suite, else the first file name without extension). */
  suite?: string;
  /** Ingest time (default now); for tests. */
  now?: Date;
  /** Problems collected before stopping (default 20). */
  maxErrors?: number;
  /** The field delimiter (`--delimiter`); default: detected by DuckDB's sniffer. */
  delimiter?: string;
  /** `--wide`: one column per subject (`--subjects-from-columns`), melted into long rows; needs `flags.item`. */
  wide?: WideSpec;
}

export interface IngestFileSummary {
  file: string;
  sha256: string;
  bytes: number;
  table: MappedTable;
  /** Data records read (header excluded). */
  rows: number;
  /** The mapping was detected (no map for this file). */
  detected: boolean;
  /** The mapping used for this file. */
  mapping: Mapping;
  /** Header columns kept in `episodes.metadata`. */
  metadataColumns: string[];
  /** Header columns the mapping does not use at all. */
  ignoredColumns: string[];
  /** Unmapped columns filled with their documented default (column -> default). */
  defaults: Record<string, string>;
  /** How the file was read: `delimiter ';' (semicolon, detected), quote '"', BOM, CRLF`. */
  dialect: string;
  /** An unnamed first column skipped as a row index (pandas or R), or null. */
  indexColumn: IndexColumn | null;
  /** Notes to print (the skipped index column, the wide melt). */
  notes: string[];
  /** A wide file: the item column and the subject columns melted into long rows. */
  wide?: { item: string; epoch?: string; subjects: string[]; scorer: string };
}

export interface IngestCsvSummary {
  runId: string;
  dryRun: boolean;
  /** The run was written to the store. */
  written: boolean;
  store: string;
  /** The mapping used (of the first file; `files[i].mapping` when they differ). */
  mapping: Mapping;
  /** The mapping as printed and stored in `runs.config` (compact JSON). */
  mappingJson: string;
  files: IngestFileSummary[];
  /** Rows per table, `runs` included. */
  tables: Partial<Record<TableName, number>>;
  run: RunRow;
}

/** A checked run still in its staging database: `bundle` selects from it; `close` drops it. */
interface PreparedRun {
  bundle: WritableRunBundle;
  summary: IngestCsvSummary;
  db: DuckDBInstance;
  close(): Promise<void>;
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

const q = quoteIdent;

/** What each numeric-looking candidate column holds (one pass over the file in DuckDB). */
async function columnStats(conn: DuckDBConnection, file: string, header: string[], skip: number, candidates: string[], tag: string, delimiter: string): Promise<Record<string, ColumnStats>> {
  const parts: string[] = [];
  candidates.forEach((c, i) => {
    const sc = scoreSql(q(csvColumn(header.indexOf(c))));
    parts.push(
      `count(*) FILTER (WHERE ${sc.present}) AS p${i}`,
      `count(*) FILTER (WHERE ${sc.present} AND (${sc.why}) IS NULL) AS n${i}`,
      `count(*) FILTER (WHERE ${sc.present} AND (${sc.why}) IS NULL AND (${sc.value}) IS NOT NULL AND (${sc.value}) NOT IN (0, 1)) AS b${i}`,
    );
  });
  const r = await conn.runAndReadAll(`SELECT ${parts.join(', ')} FROM ${readCsvSql(file, header.length, skip, tag, delimiter)}`);
  const row = r.getRowObjectsJS()[0]!;
  const out: Record<string, ColumnStats> = {};
  candidates.forEach((c, i) => (out[c] = { present: Number(row[`p${i}`]), numeric: Number(row[`n${i}`]), nonBinary: Number(row[`b${i}`]) }));
  return out;
}

interface LoadedFile {
  plan: FilePlan;
  scan: CsvScan;
  load: CsvLoad;
  detected: boolean;
  counts: Record<string, number>;
}

/** Loads one file into its staging table and collects its problems (see the module comment). */
async function loadFile(
  conn: DuckDBConnection,
  plan: FilePlan,
  source: string,
  delimiter: string,
  skip: number,
  problems: CsvProblems,
  limit: number,
): Promise<{ scan: CsvScan; load: CsvLoad; counts: Record<string, number> | null }> {
  const { file, fileIndex, header } = plan;
  const tag = `rej_${plan.stage}`;
  let loadError: string | null = null;
  const [scan] = await Promise.all([
    scanCsvFile(file, delimiter),
    conn.run(plan.stageSql(readCsvSql(source, header.length, skip, tag, delimiter))).catch((e: Error) => {
      loadError = e.message;
    }),
  ]);
  const load = await combineCsvProblems(loadError === null ? conn : null, file, header, scan, loadError === null ? tag : null, fileIndex);
  problems.addAll(load.problems);
  if (loadError !== null) {
    if (!scan.fatal) problems.add({ file, fileIndex, line: 0, field: null, code: 'badCsv', message: `DuckDB could not read the file: ${String(loadError).split('\n')[0]}` });
    return { scan, load, counts: null };
  }
  if (scan.records <= 1 && load.problems.length === 0) {
    problems.add({ file, fileIndex, line: 2, field: null, code: 'noRows', message: 'no data rows after the header' });
  }
  const counts = Object.fromEntries(
    Object.entries((await conn.runAndReadAll(plan.countsSql)).getRowObjectsJS()[0]!).map(([k, v]) => [k, v === null ? 0 : Number(v)]),
  );
  const short = rowCountProblem(file, scan, load, counts.n ?? 0, fileIndex);
  if (short) {
    problems.add(short);
    return { scan, load, counts: null };
  }
  if ((counts.bad ?? 0) > 0) {
    // The error path: the raw cells of the bad rows, to say what is wrong with them.
    const raw = `raw_${plan.stage}`;
    const cols = plan.sourceColumns.map((i) => q(csvColumn(i))).join(', ') || '1 AS "__none"';
    await conn.run(`CREATE OR REPLACE TABLE ${q(raw)} AS SELECT ${cols} FROM ${readCsvSql(source, header.length, skip, `${tag}_again`, delimiter)}`);
    const rows = (await conn.runAndReadAll(plan.explainSql(raw, limit))).getRowObjectsJS();
    for (const row of rows) {
      const r = Number(row.__row);
      if (load.recordOf(r) >= load.placeableUntil) continue;
      problems.addAll(plan.describeRow(row as Record<string, unknown>, load.lineOf(r)));
    }
    await conn.run(`DROP TABLE ${q(raw)}`);
  }
  return { scan, load, counts };
}

/**
 * How many keys repeat the 64-bit hash of the key before them (0: no duplicate key; a hash
 * collision only costs the exact query of `checkKeys`, which then finds nothing). The hashes
 * sorted, each compared with the one before: a sort spills under the memory limit (count(DISTINCT)
 * would not) and costs a quarter less CPU than GROUP BY h HAVING count(*) > 1 (1e7 rows: 2.2
 * against 2.9 s); one thread, which spends 0.2 s less CPU than two on it. When every source staged
 * its key's hash during the load (`keyHashSql`), those are sorted (1e7 rows: 1.1 s against 2.0 s
 * for hashing the joined ids again); if any row could not stage one, the joined ids are hashed.
 */
async function repeatedKeyHashes(conn: DuckDBConnection, sources: { key: KeySource }[], union: string): Promise<number> {
  const count = async (hashes: string) => {
    const sql = `SELECT count(*) FILTER (WHERE h = p) AS d, count(*) FILTER (WHERE h IS NULL) AS u FROM (SELECT h, lag(h) OVER (ORDER BY h) AS p FROM (${hashes}))`;
    const row = (await conn.runAndReadAll(sql)).getRowObjectsJS()[0]!;
    return { repeated: Number(row.d), unhashed: Number(row.u) };
  };
  await conn.run('SET threads = 1');
  try {
    const staged = sources.map((s) => s.key.staged);
    if (staged.every((x) => x !== undefined)) {
      const r = await count(staged.join(' UNION ALL '));
      if (r.unhashed === 0) return r.repeated;
    }
    return (await count(`SELECT hash(k) AS h FROM (${union})`)).repeated;
  } finally {
    await conn.run('SET threads = 2');
  }
}

/** Duplicate keys of one table across every file (a cheap count first; details only when there are some). */
async function checkKeys(conn: DuckDBConnection, sources: { key: KeySource; file: LoadedFile }[], problems: CsvProblems, files: string[], limit: number): Promise<void> {
  if (sources.length === 0) return;
  const union = sources.map((s, i) => `SELECT ${s.file.plan.fileIndex} AS f, ${i} AS src, r, k FROM (${s.key.sql})`).join(' UNION ALL ');
  if ((await repeatedKeyHashes(conn, sources, union)) === 0) return;
  const rows = (
    await conn.runAndReadAll(
      `SELECT f, src, r, k, ff, fr FROM (SELECT f, src, r, k, first_value(f) OVER w AS ff, first_value(r) OVER w AS fr, row_number() OVER w AS n FROM (${union}) WINDOW w AS (PARTITION BY k ORDER BY f, r, src)) WHERE n > 1 ORDER BY f, r, src LIMIT ${limit}`,
    )
  ).getRowObjectsJS();
  const byIndex = new Map(sources.map((s) => [s.file.plan.fileIndex, s.file]));
  for (const row of rows) {
    const src = sources[Number(row.src)]!;
    const f = Number(row.f);
    const ff = Number(row.ff);
    const line = byIndex.get(f)!.load.lineOf(Number(row.r));
    const first = byIndex.get(ff)!.load.lineOf(Number(row.fr));
    const where = ff === f ? `line ${first}` : `line ${first} of ${files[ff]}`;
    const key = String(row.k).replace(/\u0000/g, ' | ');
    const shown = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
    problems.add({ file: files[f]!, fileIndex: f, line, field: src.key.field, code: 'duplicateKey', message: `duplicate ${src.key.what} ${shown} (first on ${where})`, order: -1 });
  }
}

/** Usage errors before anything is read: no files, a bad run id, a missing file, a file given twice. */
async function checkCsvArgs(files: string[], opts: IngestCsvOptions): Promise<void> {
  if (files.length === 0) throw usageError('ingest.noFiles', 'no CSV files given');
  if (opts.runId !== undefined && !RUN_ID_PATTERN.test(opts.runId)) {
    throw usageError('ingest.badRunId', `run id "${opts.runId}" must be 1-128 letters, digits, dots, dashes or underscores, starting with a letter or digit`);
  }
  for (const f of files) {
    let st;
    try {
      st = await stat(f);
    } catch {
      throw usageError('ingest.noSuchFile', `CSV file ${f} does not exist`);
    }
    if (!st.isFile()) throw usageError('ingest.noSuchFile', `${f} is not a file`);
  }
  if (new Set(files.map((f) => resolve(f))).size !== files.length) throw usageError('ingest.sameFile', 'a CSV file is given twice');
  if (opts.runId !== undefined) refuseExistingRun(opts.traces, opts.runId, opts.replace);
}

/** The staging database of one ingest, in a temp directory; `close` drops both. */
async function openStaging(): Promise<{ dir: string; db: DuckDBInstance; conn: DuckDBConnection; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'standoff-ingest-csv-'));
  const db = await createDb({ threads: 2, memoryLimit: '512MB' });
  const conn = await db.connect();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    conn.closeSync();
    db.closeSync();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await conn.run(`SET temp_directory = ${quoteLiteral(dir)}`);
    await conn.run(`SET preserve_insertion_order = true`);
  } catch (e) {
    await close();
    throw e;
  }
  return { dir, db, conn, close };
}

/** What every file's staging shares. */
interface StageContext {
  conn: DuckDBConnection;
  dir: string;
  files: string[];
  maps: FileMaps;
  opts: IngestCsvOptions;
  flags: MappingFlags;
  problems: CsvProblems;
  limit: number;
  loaded: LoadedFile[];
  summaries: IngestFileSummary[];
}

/** A file's dialect, header, DuckDB source and row-index column; null (with a problem) when the header cannot be used. */
interface FileHead {
  dialect: CsvDialect;
  head: CsvHead;
  header: string[];
  source: string;
  index: IndexColumn | null;
}

async function readFileHead(ctx: StageContext, fi: number): Promise<FileHead | null> {
  const { conn, problems } = ctx;
  const file = ctx.files[fi]!;
  const dialect = await detectCsvDialect(conn, file, ctx.opts.delimiter);
  const head = await readCsvHeader(file, dialect.delimiter);
  if (head.problems.length > 0) {
    problems.addAll(head.problems.map((p) => scanProblem(file, [], p, fi)));
    return null;
  }
  if (head.header === null) {
    problems.add({ file, fileIndex: fi, line: 1, field: null, code: 'emptyFile', message: 'file is empty (expected a header line and data rows)' });
    return null;
  }
  const header = head.header;
  const split = headerSplitProblem(file, header, dialect, fi);
  if (split) {
    problems.add(split);
    return null;
  }
  const source = await csvSourceFor(file, head, ctx.dir, `source_${fi}`);
  const index = await detectIndexColumn(conn, source, header, head.skip, dialect.delimiter, `index_${fi}`);
  return { dialect, head, header, source, index };
}

/** Detection: the mapping from the header's names, completed from the candidate columns' values. */
async function detectFileMapping(ctx: StageContext, fi: number, h: FileHead): Promise<Mapping | null> {
  const { header } = h;
  const d = detectMapping(h.index ? header.slice(1) : header, ctx.flags);
  // An unnamed column is never a scorer (resolvePlan refuses it).
  const candidates = d.candidates.filter((c) => c.trim() !== '' && header.indexOf(c) === header.lastIndexOf(c));
  if (candidates.length > 0 || d.mapping.judges) {
    // The values of the candidates, and of the scores when the judged scorer is to be found.
    const scored = d.mapping.judges && !d.mapping.judges.scorer ? d.mapping.scores.map((x) => x.column) : [];
    const peek = [...new Set([...candidates, ...scored])].filter((c) => header.includes(c));
    const stats = peek.length > 0 ? await columnStats(ctx.conn, h.source, header, h.head.skip, peek, `peek_${fi}`, h.dialect.delimiter).catch(() => ({})) : {};
    const why = completeDetection({ ...d, candidates }, stats, ctx.flags);
    if (why) {
      ctx.problems.add({ file: ctx.files[fi]!, fileIndex: fi, line: 1, field: null, code: 'noJudgedScorer', message: why });
      return null;
    }
  }
  return d.mapping;
}

/** The mappings of one file: one per subject column of a wide file, its map, or detected. */
async function fileMappings(ctx: StageContext, fi: number, h: FileHead): Promise<Mapping[] | null> {
  if (ctx.opts.wide) {
    const w = wideMappings(h.index ? h.header.slice(1) : h.header, ctx.opts.wide, ctx.flags);
    if ('problem' in w) {
      ctx.problems.add({ file: ctx.files[fi]!, fileIndex: fi, line: 1, field: w.field, code: 'badWide', message: w.problem });
      return null;
    }
    return w.mappings;
  }
  const given = ctx.maps.mapOf[fi];
  if (given !== null && given !== undefined) return [given];
  const detected = await detectFileMapping(ctx, fi, h);
  return detected ? [detected] : null;
}

/** A plan's constants and value-map entries, checked once (line 1); false when one is bad. */
async function checkLiterals(ctx: StageContext, plan: FilePlan): Promise<boolean> {
  if (plan.literalChecks.length === 0) return true;
  const r = (await ctx.conn.runAndReadAll(`SELECT ${plan.literalChecks.map((c, i) => `(${c.why}) AS w${i}`).join(', ')}`)).getRowObjectsJS()[0]!;
  let ok = true;
  plan.literalChecks.forEach((c, i) => {
    const reason = r[`w${i}`];
    if (reason !== null && reason !== undefined) {
      ok = false;
      ctx.problems.add(literalProblem(plan.file, plan.fileIndex, c, String(reason)));
    }
  });
  return ok;
}

/** The summary of a staged file (from its first plan). */
function fileSummary(ctx: StageContext, h: FileHead, lf: LoadedFile, mappings: Mapping[]): IngestFileSummary {
  const { plan, scan } = lf;
  const { opts, flags } = ctx;
  const mapping = mappings[0]!;
  const notes = h.index ? [indexNote(h.index)] : [];
  if (opts.wide) notes.push(`wide: one subject per column (${mappings.map((m) => m.constants.subject_model).join(', ')}), scorer ${mapping.scores[0]!.scorer}`);
  return {
    file: plan.file,
    sha256: scan.sha256,
    bytes: scan.bytes,
    table: plan.table,
    rows: Math.max(0, scan.records - 1),
    detected: lf.detected,
    mapping,
    metadataColumns: plan.metadataColumns,
    ignoredColumns: opts.wide ? plan.ignoredColumns.filter((c) => !mappings.some((m) => m.constants.subject_model === c)) : plan.ignoredColumns,
    defaults: plan.defaultsUsed,
    dialect: describeDialect(h.dialect, h.head),
    indexColumn: h.index,
    notes,
    wide: opts.wide ? { item: flags.item!, epoch: flags.epoch, subjects: mappings.map((m) => String(m.constants.subject_model)), scorer: mapping.scores[0]!.scorer } : undefined,
  };
}

/** Reads one file: its header, mappings and plans, each loaded into a staging table with its problems collected. */
async function stageFile(ctx: StageContext, fi: number): Promise<void> {
  const file = ctx.files[fi]!;
  const h = await readFileHead(ctx, fi);
  if (!h) return;
  const detected = ctx.maps.mapOf[fi] === null;
  const mappings = await fileMappings(ctx, fi, h);
  if (!mappings) return;
  // One plan per mapping: a wide file has one per subject column, over the same file.
  for (const [j, mapping] of mappings.entries()) {
    const tag = ctx.opts.wide ? `${fi}_${j}` : undefined;
    const { plan, problems: planProblems } = resolvePlan(mapping, h.header, { file, fileIndex: fi, detected, indexColumn: h.index ? 0 : undefined, tag });
    ctx.problems.addAll(planProblems);
    if (!plan || !(await checkLiterals(ctx, plan))) continue;
    const { scan, load, counts } = await loadFile(ctx.conn, plan, h.source, h.dialect.delimiter, h.head.skip, ctx.problems, ctx.limit + 1);
    if (counts === null) continue;
    const lf: LoadedFile = { plan, scan, load, detected, counts };
    ctx.loaded.push(lf);
    if (plan.table === 'aggregates') await writeLineMap(ctx.conn, `lines_${fi}`, scan);
    if (j === 0) ctx.summaries.push(fileSummary(ctx, h, lf, mappings));
  }
}

/** Keys across files, table by table. */
async function checkKeysAcrossFiles(ctx: StageContext): Promise<void> {
  const byTable = new Map<string, { key: KeySource; file: LoadedFile }[]>();
  for (const f of ctx.loaded) for (const key of f.plan.keys) (byTable.get(key.table) ?? byTable.set(key.table, []).get(key.table)!).push({ key, file: f });
  for (const sources of byTable.values()) await checkKeys(ctx.conn, sources, ctx.problems, ctx.files, ctx.limit + 1);
}

/** The run's tables as SELECTs over the staging tables (one UNION ALL per table), with their row counts. */
function stagedBundle(loaded: LoadedFile[], run: RunRow): { bundle: WritableRunBundle; tables: Partial<Record<TableName, number>> } {
  const bundle: WritableRunBundle = { run };
  const tables: Partial<Record<TableName, number>> = { runs: 1 };
  for (const t of CSV_TABLES) {
    const selects = loaded.flatMap((f) => f.plan.outputs(`lines_${f.plan.fileIndex}`)[t as OutTable] ?? []);
    const length = loaded.reduce((n, f) => n + (f.counts[t] ?? 0), 0);
    if (selects.length === 0 || length === 0) continue;
    const rows: SqlRows = { sql: selects.join(' UNION ALL '), length };
    (bundle as Record<string, unknown>)[t] = rows;
    tables[t] = length;
  }
  return { bundle, tables };
}

/**
 * Parses and checks every file into a staging database; throws IngestError on any problem. The
 * phases: the arguments, what the user said (maps merged with flags: `csv/file-maps.ts`), each
 * file staged (header, detection, plan, load: `stageFile`), keys across files, then the run row
 * (`csv/run-row.ts`) and the tables as SELECTs over the stage.
 */
async function prepareCsvRun(files: string[], opts: IngestCsvOptions): Promise<PreparedRun> {
  await checkCsvArgs(files, opts);
  const now = opts.now ?? new Date();
  const limit = opts.maxErrors ?? MAX_ERRORS;
  const problems = new CsvProblems(limit, 'ingest');
  const fail = (): never => {
    throw problems.toError((c, m, e) => new IngestError(c, m, e));
  };
  const maps = await resolveFileMaps(files, opts, problems, fail);
  const staging = await openStaging();
  try {
    const ctx: StageContext = { conn: staging.conn, dir: staging.dir, files, maps, opts, flags: opts.flags ?? {}, problems, limit, loaded: [], summaries: [] };
    for (let fi = 0; fi < files.length; fi++) await stageFile(ctx, fi);
    await checkKeysAcrossFiles(ctx);
    if (problems.size > 0) fail();

    const { summaries, loaded } = ctx;
    const hashes = summaries.map((s) => s.sha256);
    const runId = opts.runId ?? `csv-${timestamp(now)}-${createHash('sha256').update(hashes.join(';')).digest('hex').slice(0, 8)}`;
    if (opts.runId === undefined) refuseExistingRun(opts.traces, runId, opts.replace);
    const mappingJson = mappingJsonOf(summaries);
    const mapNames = [...new Set(maps.mapName.filter((n): n is string => n !== null))];
    const maxEpoch = loaded.reduce((m, f) => Math.max(m, f.counts.max_epoch ?? 0), 0);
    const run = csvRunRow({ runId, now, files, summaries, mapNames, mappingJson, maxEpoch, suite: opts.suite });
    const { bundle, tables } = stagedBundle(loaded, run);
    const summary: IngestCsvSummary = { runId, dryRun: opts.dryRun === true, written: false, store: resolve(opts.traces), mapping: summaries[0]!.mapping, mappingJson, files: summaries, tables, run };
    return { bundle, summary, db: staging.db, close: staging.close };
  } catch (e) {
    await staging.close();
    throw e;
  }
}

/**
 * Parses and checks every file; returns the run as row objects, without writing (for tests and
 * small files: every row comes into JS). Throws IngestError on any problem.
 */
export async function buildCsvRun(files: string[], opts: IngestCsvOptions): Promise<{ bundle: RunBundle; summary: IngestCsvSummary }> {
  const p = await prepareCsvRun(files, opts);
  try {
    const out: Record<string, unknown> = { run: p.bundle.run };
    const conn = await p.db.connect();
    try {
      for (const t of CSV_TABLES) {
        const rows = p.bundle[t] as SqlRows | undefined;
        if (!rows) continue;
        // Timestamps as ISO text to the microsecond (as the schema's row objects hold them).
        const inner = `SELECT ${quoteLiteral(p.summary.runId)} AS run_id, * FROM (${rows.sql})`;
        const sql = t === 'episodes' ? `SELECT * REPLACE (strftime(started_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS started_at) FROM (${inner})` : inner;
        const r = await conn.runAndReadAll(sql);
        out[t] = r.getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, toPlain(v)])));
      }
    } finally {
      conn.closeSync();
    }
    return { bundle: out as RunBundle, summary: p.summary };
  } finally {
    await p.close();
  }
}

/**
 * Ingests CSV files as one run (see the module comment). Returns the summary, including the
 * mapping used so the CLI can print it; with `dryRun`, checks everything and writes nothing.
 */
export async function ingestCsv(files: string[], opts: IngestCsvOptions): Promise<IngestCsvSummary> {
  const p = await prepareCsvRun(files, opts);
  try {
    if (opts.dryRun) return p.summary;
    // The tables are written side by side, one DuckDB thread each: an order-preserving COPY over
    // two threads spends more CPU and memory than it gains (the rows keep the file's order).
    const conn = await p.db.connect();
    try {
      await conn.run('SET threads = 1');
    } finally {
      conn.closeSync();
    }
    await writeRun(opts.traces, p.bundle, { replace: opts.replace, trusted: true, db: p.db });
    p.summary.written = true;
    return p.summary;
  } finally {
    await p.close();
  }
}

export type { CsvFileProblem };
