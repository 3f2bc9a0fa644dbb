/**
 * Standoff's one CSV reader: DuckDB's `read_csv` with explicit columns (every column VARCHAR,
 * named `c0`, `c1`, ... after the header read by `csv-scan.ts`), `strict_mode`, and
 * `store_rejects` (`reject_errors` / `reject_scans` under per-scan names), run next to the byte
 * scan of `csv-scan.ts`. Used by `standoff ingest csv` (src/ingest/ingest-csv.ts) and by every
 * `--input` file (src/analysis/input-file.ts). Cell conversion is SQL (`csv-values.ts`).
 *
 * Problems are collected as `CsvFileProblem`s (file, physical line, field, code, message) from
 * three sources: the scan (quotes, line endings, UTF-8, field size), DuckDB's rejects (ragged rows,
 * records over the size limit; their DuckDB line is translated to the physical line through the
 * scan's `LineMap`), and SQL checks over the loaded rows (a row's line comes from `rowLines`).
 * `CsvProblems` keeps them in file and line order, capped, and makes the one-line error.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { StandoffError } from '../errors.ts';
import { quoteIdent, quoteLiteral } from './duckdb.ts';
import type { CsvHead, CsvProblem, CsvScan } from './csv-scan.ts';
import { CSV_DELIMITERS, DELIMITER_NAMES, showDelimiter } from './csv-dialect.ts';

/** Largest record DuckDB reads, in bytes (fields are limited to 1 MiB by the scan). */
export const MAX_RECORD_BYTES = 8 * 1024 * 1024;
/** Rejected records DuckDB keeps per scan (more than any error list shows). */
const REJECTS_LIMIT = 1000;

/** Column name of the i-th CSV column in the relation `readCsvSql` gives. */
export const csvColumn = (i: number) => `c${i}`;

/**
 * The `read_csv(...)` call for a file of `width` columns (after `skip` blank lines and the header),
 * every column VARCHAR (`c0`..) unless `types` gives the i-th column's DuckDB type (a typed read:
 * `--from-aggregates`); with `rejects`, rejected rows (also cells of the wrong type) go to `<rejects>_errors`.
 */
export function readCsvSql(file: string, width: number, skip: number, rejects: string | null, delimiter = ',', types: readonly string[] = []): string {
  const columns = `{${Array.from({ length: width }, (_, i) => `${quoteLiteral(csvColumn(i))}: ${quoteLiteral(types[i] ?? 'VARCHAR')}`).join(', ')}}`;
  const opts = [
    'auto_detect = false',
    'header = true',
    `skip = ${skip}`,
    `delim = ${quoteLiteral(delimiter)}`,
    `quote = '"'`,
    `escape = '"'`,
    'strict_mode = true',
    'null_padding = false',
    `max_line_size = ${MAX_RECORD_BYTES}`,
    `buffer_size = ${4 * MAX_RECORD_BYTES}`,
    `columns = ${columns}`,
  ];
  if (rejects) {
    opts.push('store_rejects = true', `rejects_table = ${quoteLiteral(`${rejects}_errors`)}`, `rejects_scan = ${quoteLiteral(`${rejects}_scans`)}`, `rejects_limit = ${REJECTS_LIMIT}`);
  }
  return `read_csv(${quoteLiteral(file)}, ${opts.join(', ')})`;
}

/** One problem of one file, ready to print. */
export interface CsvFileProblem {
  file: string;
  /** Physical line (header = 1; a record spanning lines is at its first line). 0: the whole file. */
  line: number;
  /** Column name (or `column N`), or null for the whole record. */
  field: string | null;
  /** Problem code without its prefix (`badType`, `raggedRow`, ...). */
  code: string;
  message: string;
  /** Order within a line (the column's position). */
  order?: number;
  /** Order of the file among the files of one command. */
  fileIndex?: number;
  /** `row` for a file without lines (Parquet: the row number, from 1). */
  unit?: 'line' | 'row';
}

/** The name of the i-th field of a record under `header` (`column N` past its end). */
export const fieldName = (header: readonly string[], i: number | null) => (i === null ? null : i < header.length ? header[i]! : `column ${i + 1}`);

/** The text of a problem: `FILE: line N, field "x": message`. */
export function formatProblem(p: CsvFileProblem): string {
  if (p.line <= 0) return `${p.file}: ${p.message}`;
  const at = `${p.unit ?? 'line'} ${p.line}`;
  const where = p.field === null ? at : `${at}, field ${JSON.stringify(p.field)}`;
  return `${p.file}: ${where}: ${p.message}`;
}

/** A data error carrying every problem found (`errors`, one line each); `message` summarises. */
export class CsvDataError extends StandoffError {
  readonly errors: string[];
  constructor(code: string, message: string, errors: string[]) {
    super(code, 'data', message);
    this.errors = errors;
  }
}

/** The problems of one command, in file, line and column order, capped at `limit`. */
export class CsvProblems {
  readonly list: CsvFileProblem[] = [];
  constructor(
    readonly limit: number,
    /** Prefix of the error codes (`ingest`, `input`). */
    readonly prefix: string,
  ) {}

  add(p: CsvFileProblem): void {
    this.list.push(p);
  }

  addAll(ps: Iterable<CsvFileProblem>): void {
    for (const p of ps) this.list.push(p);
  }

  get size(): number {
    return this.list.length;
  }

  /** The problems to show: sorted, at most `limit`; `truncated` when there were more. */
  shown(): { problems: CsvFileProblem[]; truncated: boolean } {
    const sorted = [...this.list].sort(
      (a, b) => (a.fileIndex ?? 0) - (b.fileIndex ?? 0) || a.line - b.line || (a.order ?? 0) - (b.order ?? 0),
    );
    return { problems: sorted.slice(0, this.limit), truncated: sorted.length > this.limit };
  }

  /** The error (exit 3) for the problems: the first one's code, every problem listed, a one-line summary. */
  toError<E extends CsvDataError>(make: (code: string, message: string, errors: string[]) => E = (c, m, e) => new CsvDataError(c, m, e) as E): E {
    const { problems, truncated } = this.shown();
    const errors = problems.map(formatProblem);
    const first = problems[0]!;
    const files = new Set(problems.map((p) => p.file));
    const n = problems.length;
    const count = truncated ? `${n}+ errors (stopped after ${n})` : `${n} errors`;
    let message: string;
    if (n === 1 && !truncated) message = errors[0]!;
    else if (files.size === 1) message = `${first.file}: ${count}; first: ${errors[0]!.slice(first.file.length + 2)}`;
    else message = `${count} in ${files.size} files; first: ${errors[0]}`;
    return make(`${this.prefix}.${first.code}`, message, errors);
  }
}

/** A scan problem as a file problem. */
export function scanProblem(file: string, header: readonly string[], p: CsvProblem, fileIndex = 0): CsvFileProblem {
  return { file, fileIndex, line: p.line, field: fieldName(header, p.field), code: p.code, message: p.message, order: p.field ?? -1 };
}

interface Reject {
  line: number;
  column: number | null;
  type: string;
  message: string;
}

/** What DuckDB rejected, and how loaded rows map back to records and lines. */
export interface CsvLoad {
  /** Records DuckDB rejected (sorted; record 0 is the header). */
  rejected: number[];
  /** Problems from the scan and from DuckDB's rejects, without duplicates. */
  problems: CsvFileProblem[];
  /** Rows after this record cannot be placed (DuckDB's reject list was full); Infinity otherwise. */
  placeableUntil: number;
  /** The record of loaded row `row` (0-based, in file order). */
  recordOf(row: number): number;
  /** The physical line of loaded row `row`. */
  lineOf(row: number): number;
}

/** Reads DuckDB's rejects of a scan (see `readCsvSql`). */
async function readRejects(conn: DuckDBConnection, rejects: string): Promise<Reject[]> {
  const r = await conn.runAndReadAll(
    `SELECT CAST(line AS BIGINT) AS line, column_name AS col, error_type::VARCHAR AS type, error_message AS msg FROM ${quoteIdent(`${rejects}_errors`)} ORDER BY line, column_idx`,
  );
  return r.getRowObjectsJS().map((x) => ({
    line: Number(x.line),
    // Columns are named c0, c1, ... (see readCsvSql).
    column: typeof x.col === 'string' && /^c\d+$/.test(x.col) ? Number(x.col.slice(1)) : null,
    type: String(x.type),
    message: String(x.msg ?? ''),
  }));
}

/**
 * Combines the scan and DuckDB's rejects of one loaded file (`rejects` names the scan's reject
 * tables; null when the load failed as a whole). Scan problems win over DuckDB's for the same
 * record (they say more); after a fatal scan problem nothing later is kept.
 */
export async function combineCsvProblems(
  conn: DuckDBConnection | null,
  file: string,
  header: readonly string[],
  scan: CsvScan,
  rejects: string | null,
  fileIndex = 0,
): Promise<CsvLoad> {
  const problems: CsvFileProblem[] = scan.problems.filter((p) => p.record > 0).map((p) => scanProblem(file, header, p, fileIndex));
  const flagged = new Set(scan.problems.map((p) => p.record));
  const rejectedSet = new Set<number>();
  const list = conn && rejects ? await readRejects(conn, rejects) : [];
  const width = header.length;
  for (const r of list) {
    const record = scan.lines.recordAtDuckLine(r.line, scan.records);
    if (record === null) continue;
    rejectedSet.add(record);
    if (flagged.has(record)) continue;
    flagged.add(record);
    const line = scan.lines.physLine(record);
    const found = /Found: (\d+)/.exec(r.message);
    const base = { file, fileIndex, line };
    if (r.type === 'MISSING COLUMNS' || r.type === 'TOO MANY COLUMNS') {
      const n = found ? Number(found[1]) : null;
      const idx = n !== null ? (n < width ? n : width) : r.column;
      problems.push({ ...base, field: fieldName(header, idx), order: idx ?? -1, code: 'raggedRow', message: `expected ${width} fields (as in the header), found ${n ?? '?'}` });
    } else if (r.type === 'LINE SIZE OVER MAXIMUM') {
      problems.push({ ...base, field: null, order: -1, code: 'recordTooLarge', message: `record longer than the limit of ${MAX_RECORD_BYTES} bytes` });
    } else {
      const code = r.type === 'INVALID ENCODING' || r.type === 'INVALID UNICODE' ? 'notUtf8' : r.type === 'UNQUOTED VALUE' ? 'badQuote' : 'badCsv';
      const col = r.column;
      problems.push({ ...base, field: fieldName(header, col), order: col ?? -1, code, message: r.message.replace(/\s*\n\s*/g, ' ').trim() || r.type.toLowerCase() });
    }
  }
  const rejected = [...rejectedSet].sort((a, b) => a - b);
  let placeableUntil = Infinity;
  if (list.length >= REJECTS_LIMIT && rejected.length > 0) placeableUntil = rejected[rejected.length - 1]!;
  if (scan.fatal) placeableUntil = Math.min(placeableUntil, scan.fatal.record);
  const kept = scan.fatal ? problems.filter((p) => p.line <= scan.fatal!.line) : problems;
  const recordOf = (row: number): number => {
    let k = row + 1;
    for (const x of rejected) {
      if (x <= k) k++;
      else break;
    }
    return k;
  };
  return { rejected, problems: kept, placeableUntil, recordOf, lineOf: (row) => scan.lines.physLine(recordOf(row)) };
}

/**
 * Line numbers of rows in SQL: a `(record, line)` table of the scan's line map entries, so that
 * `rowLineSql` can give each loaded row its physical line (used for `aggregates.source_row`).
 */
export async function writeLineMap(conn: DuckDBConnection, table: string, scan: CsvScan): Promise<void> {
  const entries = scan.lines.entries();
  await conn.run(`CREATE OR REPLACE TABLE ${quoteIdent(table)} (record BIGINT, line BIGINT)`);
  if (entries.length > 0) {
    await conn.run(`INSERT INTO ${quoteIdent(table)} VALUES ${entries.map((e) => `(${e.record}, ${e.line})`).join(', ')}`);
  }
}

/**
 * SQL for the physical line of a row whose record index is `record` (an expression), given the
 * line map table `table` (written by `writeLineMap`).
 */
export function recordLineSql(record: string, table: string): string {
  return `(SELECT m.line + (${record} - m.record) FROM ${quoteIdent(table)} m WHERE m.record <= ${record} ORDER BY m.record DESC LIMIT 1)`;
}

/**
 * The file DuckDB reads for `file`: the file itself, or, when a quoted header field holds a line
 * break, a copy in `dir` whose header is plain names (`c0,c1,...`) on one line, with the same
 * blank lines before it and the same bytes after it (so DuckDB's line numbers do not move).
 * DuckDB 1.5's strict reader returns no rows at all, without an error, from a CRLF file whose
 * header has a quoted line feed (as Python's `csv` module and Excel write them); the byte scan
 * still reads and hashes the original.
 */
export async function csvSourceFor(file: string, head: CsvHead, dir: string, tag: string): Promise<string> {
  if (!head.multiline || head.header === null || head.headerEnd < 0) return file;
  const copy = join(dir, `${tag}.csv`);
  const out = createWriteStream(copy);
  const names = head.header.map((_, i) => csvColumn(i)).join(head.delimiter);
  out.write(`${head.eol.repeat(head.skip)}${names}${head.eol}`);
  await pipeline(createReadStream(file, { start: head.headerEnd }), out);
  return copy;
}

/**
 * The check that DuckDB read every record the scan counted: a load without problems must hold
 * one row per data record. A different count (a reader bug, as in `csvSourceFor`) is a problem,
 * never an empty or short run.
 */
export function rowCountProblem(file: string, scan: CsvScan, load: CsvLoad, loaded: number, fileIndex = 0): CsvFileProblem | null {
  if (scan.fatal || load.problems.length > 0) return null;
  const expected = Math.max(0, scan.records - 1);
  if (loaded === expected) return null;
  return {
    file,
    fileIndex,
    line: 0,
    field: null,
    code: 'rowCount',
    message: `DuckDB read ${loaded} rows but the file holds ${expected} records after the header; nothing was read (please report this file)`,
  };
}

/** The dialect a CSV file is read with: its delimiter, and whether it was detected or given. */
export interface CsvDialect {
  delimiter: string;
  /** `given` (--delimiter), `detected` (DuckDB's sniffer), or `default` (the sniffer could not tell: a comma). */
  how: 'given' | 'detected' | 'default';
}

/**
 * The file's delimiter: `given` when set, else DuckDB's sniffer (`sniff_csv`, not strict, so a
 * file it cannot fully parse still gets its delimiter), else a comma. The quote is always `"`
 * (doubled inside a field), as RFC 4180, pandas, R and Excel write it.
 */
export async function detectCsvDialect(conn: DuckDBConnection, file: string, given?: string): Promise<CsvDialect> {
  if (given !== undefined) return { delimiter: given, how: 'given' };
  const counts = await headerDelimiterCounts(file);
  try {
    const r = await conn.runAndReadAll(`SELECT Delimiter AS d FROM sniff_csv(${quoteLiteral(file)}, strict_mode = false)`);
    const d = String(r.getRowObjectsJS()[0]?.d ?? '');
    // The sniffer's pick must split the header: on a ragged comma file it may choose '|' (one
    // column is "consistent"), which would hide the ragged rows behind a missing column.
    if ((CSV_DELIMITERS as readonly string[]).includes(d) && (counts.get(d)! > 0 || ![...counts.values()].some((n) => n > 0))) return { delimiter: d, how: 'detected' };
  } catch {
    // The sniffer gave up; the header decides, and the byte scan says what is wrong, if anything.
  }
  // The delimiter the header holds most of (a comma on ties or when it holds none).
  const best = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a), [',', counts.get(',')!] as [string, number]);
  return best[1] > 0 ? { delimiter: best[0], how: 'detected' } : { delimiter: ',', how: 'default' };
}

/** How often each delimiter occurs outside quotes in the file's first line (its first 64 KiB). */
async function headerDelimiterCounts(file: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>(CSV_DELIMITERS.map((d) => [d, 0]));
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    let quoted = false;
    for (let i = 0; i < bytesRead; i++) {
      const c = String.fromCharCode(buf[i]!);
      if (c === '"') quoted = !quoted;
      else if (!quoted && c === '\n') break;
      else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
    }
  } finally {
    await fh.close();
  }
  return counts;
}

/** The dialect as the summary prints it: `delimiter ';' (semicolon, detected), BOM, CRLF`. */
export function describeDialect(d: CsvDialect, head: CsvHead): string {
  const how = d.how === 'default' ? 'the default' : d.how === 'given' ? 'given' : 'detected';
  const name = d.delimiter === '\t' ? `tab (${how})` : `'${d.delimiter}' (${DELIMITER_NAMES[d.delimiter] ?? 'custom'}, ${how})`;
  const parts = [`delimiter ${name}`];
  parts.push('quote \'"\'');
  if (head.bom) parts.push('BOM');
  parts.push(head.eol === '\r\n' ? 'CRLF' : 'LF');
  return parts.join(', ');
}

/**
 * A header that did not split: one column that holds another delimiter. The problem names the
 * delimiter tried and the one that looks likely.
 */
export function headerSplitProblem(file: string, header: readonly string[], d: CsvDialect, fileIndex = 0): CsvFileProblem | null {
  if (header.length !== 1) return null;
  const likely = CSV_DELIMITERS.filter((c) => c !== d.delimiter && header[0]!.includes(c));
  if (likely.length === 0) return null;
  const best = likely.sort((a, b) => header[0]!.split(b).length - header[0]!.split(a).length)[0]!;
  const flag = best === '\t' ? 'tab' : `'${best}'`;
  return {
    file,
    fileIndex,
    line: 1,
    field: null,
    code: 'headerNotSplit',
    message: `the header does not split on ${showDelimiter(d.delimiter)}${d.how === 'given' ? ' (--delimiter)' : ''}: it is one column ${JSON.stringify(header[0])}; it looks ${showDelimiter(best)}-separated: pass --delimiter ${flag}`,
  };
}

/** A row index written as the first column: pandas' `to_csv` (0..n-1) or R's `write.csv` (1..n). */
export type IndexColumn = 'pandas' | 'R';

/** The note printed for a skipped index column. */
export const indexNote = (k: IndexColumn) =>
  k === 'pandas' ? "column 1 (unnamed, 0..n-1) skipped as pandas' row index" : "column 1 (unnamed, 1..n) skipped as R's row names";

/**
 * Whether the first column is a row index: no name, and its values are the integers 0..n-1
 * (pandas `to_csv` with its index) or 1..n (R `write.csv`), each once. Rows DuckDB rejects are
 * left out here (they are reported by the load).
 */
export async function detectIndexColumn(conn: DuckDBConnection, source: string, header: readonly string[], skip: number, delimiter: string, tag: string): Promise<IndexColumn | null> {
  if (header.length < 2 || header[0]!.trim() !== '') return null;
  const v = `TRY_CAST(trim(${quoteIdent(csvColumn(0))}) AS BIGINT)`;
  try {
    const r = await conn.runAndReadAll(
      `SELECT count(*) AS n, count(${v}) AS k, count(DISTINCT ${v}) AS d, min(${v}) AS lo, max(${v}) AS hi FROM ${readCsvSql(source, header.length, skip, tag, delimiter)}`,
    );
    const x = r.getRowObjectsJS()[0]!;
    const [n, k, d, lo, hi] = [x.n, x.k, x.d, x.lo, x.hi].map((y) => (y === null ? NaN : Number(y)));
    if (!(n! > 0) || k !== n || d !== n) return null;
    if (lo === 0 && hi === n! - 1) return 'pandas';
    if (lo === 1 && hi === n) return 'R';
  } catch {
    // An unreadable file: the load reports why.
  }
  return null;
}
