/**
 * Reads a user's CSV or Parquet file for `standoff ci|agreement|judges --input FILE`. A CSV goes
 * through Standoff's one CSV reader (src/store/read-csv.ts: DuckDB `read_csv` with explicit
 * columns, `strict_mode` and `store_rejects`, next to the byte scan), the same as `ingest csv`;
 * cells are converted in SQL by the same rules (src/store/csv-values.ts). Every problem is one line
 * naming the file, the line (a Parquet file: the row) and the column, as `ingest csv` prints
 * them; DuckDB's own messages (the sniffer's dump) never reach the user.
 *
 * Empty cells: a column read as `optional` keeps them (null: a missing rating); in any other
 * column an empty cell is an error naming `--missing`, or, with `missing: 'drop'`, drops the row.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createDb, quoteIdent, quoteLiteral, withConnection } from '../store/duckdb.ts';
import { ANALYSIS_DB } from '../store/open-store.ts';
import { dataError, storeError, usageError } from '../errors.ts';
import { readCsvHeader, scanCsvFile, type CsvScan } from '../store/csv-scan.ts';
import { convertSql, describeProblem, scoreSql, show, type ValueKind } from '../store/csv-values.ts';
import { CsvProblems, combineCsvProblems, csvColumn, csvSourceFor, detectCsvDialect, headerSplitProblem, readCsvSql, rowCountProblem, scanProblem, type CsvFileProblem } from '../store/read-csv.ts';

/** What to do with a row that has an empty cell in a column that needs a value. */
export type MissingPolicy = 'error' | 'drop';

/** How a column is read. `binary`: 0/1 (also true/false, yes/no, C/I); N/NOANSWER is missing. */
export type InputKind = 'text' | 'number' | 'binary';

export interface InputColumn {
  name: string;
  kind: InputKind;
  /** Empty cells stay null (the row is kept); otherwise they follow the missing policy. */
  optional?: boolean;
  /** The flag that named the column, for messages (`--value`). */
  flag?: string;
  /** Read only if the file has it (its values are then absent). */
  ifPresent?: boolean;
}

export interface InputTable {
  file: string;
  /** Every column of the file. */
  columns: string[];
  /** Rows read (after dropping). */
  rows: number;
  /** Rows dropped for an empty cell (`missing: 'drop'`). */
  dropped: number;
  /** Column -> values (text columns: strings; number and binary columns: numbers), null for empty optional cells. */
  values: Record<string, (string | number | null)[]>;
  /** The line (Parquet: row) of each row read, for messages. */
  lines: number[];
  /** `line`, or `row` for Parquet. */
  unit: 'line' | 'row';
}

/** Most problems listed in one error. */
const MAX_PROBLEMS = 20;

const missingMessage = 'empty value (pass --missing drop to skip the rows that have one)';

/** Reads the columns `wanted` of `file` (see the module comment). Throws a one-line data error (exit 3). */
/** How an --input file is read: empty cells, the CSV delimiter (default: detected), a wide melt. */
export interface InputReadOptions {
  missing?: MissingPolicy;
  /** `--delimiter`: the CSV field delimiter (default: DuckDB's sniffer). */
  delimiter?: string;
  /**
   * `--wide --subjects-from-columns COLS|'*'`: one column per subject, melted into the columns
   * `subject` (the column's name) and `value` (its cell), one row per (row, subject column);
   * `*` is every named column the command does not use otherwise.
   */
  wide?: { subjects: string[] | '*' };
}

export async function readInputFile(file: string, wanted: InputColumn[], opts: InputReadOptions = {}): Promise<InputTable> {
  const path = resolve(file);
  if (!existsSync(path)) throw storeError('input.missing', `input file ${file} does not exist`);
  const ext = extname(path).toLowerCase();
  if (ext !== '.parquet' && ext !== '.csv' && ext !== '.txt') throw usageError('input.badExtension', `input file ${file}: extension must be .csv or .parquet`);
  const problems = new CsvProblems(MAX_PROBLEMS, 'input');
  const fail = (): never => {
    throw problems.toError();
  };
  const db = await createDb({ ...ANALYSIS_DB });
  const tmp = await mkdtemp(join(tmpdir(), 'standoff-input-'));
  try {
    return await withConnection(db, async (conn) => {
      await conn.run(`SET temp_directory = ${quoteLiteral(join(tmp, 'spill'))}`);
      let columns: string[];
      let scan: CsvScan;
      const isCsv = ext !== '.parquet';
      if (isCsv) {
        const dialect = await detectCsvDialect(conn, path, opts.delimiter);
        const head = await readCsvHeader(path, dialect.delimiter);
        if (head.problems.length > 0) {
          problems.addAll(head.problems.map((p) => scanProblem(file, [], p)));
          fail();
        }
        if (head.header === null) throw dataError('input.empty', `${file}: the file is empty`);
        const header = head.header;
        const split = headerSplitProblem(file, header, dialect);
        if (split) {
          problems.add(split);
          fail();
        }
        const melt = opts.wide ? wideSubjects(file, header, wanted, opts.wide) : null;
        columns = melt ? [...header.filter((h) => !melt.includes(h)), 'subject', 'value'] : header;
        const expr = (name: string) => quoteIdent(melt && (name === 'subject' || name === 'value') ? name : csvColumn(header.indexOf(name)));
        wanted = present(columns, wanted);
        checkColumns(file, columns, wanted);
        const select = wanted.map((w) => `${expr(w.name)} AS ${quoteIdent(w.name)}`).join(', ');
        let from = readCsvSql(await csvSourceFor(path, head, tmp, 'source'), header.length, head.skip, 'rejects', dialect.delimiter);
        if (melt) {
          const cols = melt.map((m) => `${quoteIdent(csvColumn(header.indexOf(m)))} AS ${quoteLiteral(m)}`).join(', ');
          from = `(SELECT * FROM ${from}) UNPIVOT INCLUDE NULLS ("value" FOR "subject" IN (${cols}))`;
        }
        const k = melt ? melt.length : 1;
        let loadError: string | null = null;
        [scan] = await Promise.all([
          scanCsvFile(path, dialect.delimiter),
          conn.run(`CREATE TABLE input AS SELECT ${select} FROM ${from}`).catch((e: Error) => {
            loadError = e.message;
          }),
        ]);
        const load = await combineCsvProblems(loadError === null ? conn : null, file, columns, scan, loadError === null ? 'rejects' : null);
        problems.addAll(load.problems);
        if (loadError !== null && !scan.fatal) problems.add({ file, line: 0, field: null, code: 'badCsv', message: `DuckDB could not read the file: ${String(loadError).split('\n')[0]}` });
        if (problems.size > 0) fail();
        const loaded = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM input')).getRowObjectsJS()[0]!.n);
        const short = rowCountProblem(file, scan, load, loaded / k);
        if (short) problems.add(short);
        if (problems.size > 0) fail();
        return await convert(conn, file, columns, wanted, 'input', (row) => load.lineOf(Math.floor(row / k)), 'line', opts.missing ?? 'error', problems);
      }
      if (opts.wide) throw usageError('input.wideParquet', `${file}: --wide melts CSV files; reshape a Parquet file with DuckDB or pandas (melt) first`);
      const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(path)})`).catch((e: Error) => {
        throw dataError('input.unreadable', `${file}: not a readable Parquet file (${e.message.split('\n')[0]})`, e);
      });
      columns = described.getRowObjectsJS().map((r) => String(r.column_name));
      wanted = present(columns, wanted);
      checkColumns(file, columns, wanted);
      await conn.run(
        `CREATE TABLE input AS SELECT ${wanted.map((w) => `CAST(${quoteIdent(w.name)} AS VARCHAR) AS ${quoteIdent(w.name)}`).join(', ')} FROM read_parquet(${quoteLiteral(path)})`,
      );
      return await convert(conn, file, columns, wanted, 'input', (row) => row + 1, 'row', opts.missing ?? 'error', problems);
    });
  } finally {
    db.closeSync();
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The subject columns of a wide file (see `InputReadOptions.wide`); a data error when one is not in the header. */
function wideSubjects(file: string, header: string[], wanted: InputColumn[], wide: { subjects: string[] | '*' }): string[] {
  const used = new Set(wanted.map((w) => w.name));
  const list = wide.subjects === '*' ? header.filter((h) => h.trim() !== '' && !used.has(h)) : wide.subjects;
  for (const c of list) {
    if (!header.includes(c)) throw dataError('input.missingColumn', `${file}: column "${c}" (--subjects-from-columns) does not exist (columns: ${header.join(', ')})`);
  }
  if (list.length === 0) throw dataError('input.missingColumn', `${file}: --subjects-from-columns '*' leaves no column (columns: ${header.join(', ')})`);
  return list;
}

const present = (columns: string[], wanted: InputColumn[]) => wanted.filter((w) => !w.ifPresent || columns.includes(w.name));

function checkColumns(file: string, columns: string[], wanted: InputColumn[]): void {
  for (const w of wanted) {
    if (!columns.includes(w.name)) {
      throw dataError('input.missingColumn', `${file}: column "${w.name}"${w.flag ? ` (${w.flag})` : ''} does not exist (columns: ${columns.join(', ')})`);
    }
  }
}

const KIND: Record<InputKind, ValueKind> = { text: 'text', number: 'num', binary: 'score' };

/** Converts the loaded text columns in SQL; problems name the line (`where` = line) or row. */
async function convert(
  conn: DuckDBConnection,
  file: string,
  columns: string[],
  wanted: InputColumn[],
  table: string,
  lineOf: (row: number) => number,
  where: 'line' | 'row',
  missing: MissingPolicy,
  problems: CsvProblems,
): Promise<InputTable> {
  const conv = wanted.map((w) => {
    const x = quoteIdent(w.name);
    if (w.kind === 'binary') {
      const sc = scoreSql(x);
      // 0/1 and the boolean tokens; NOANSWER (N) is missing; anything else is not binary.
      const why = `coalesce(${sc.why}, CASE WHEN ${sc.present} AND (${sc.value}) IS NOT NULL AND (${sc.value}) NOT IN (0, 1) THEN 'notBinary' END)`;
      return { value: `CASE WHEN (${sc.value}) IN (0, 1) THEN ${sc.value} END`, why, empty: `((${sc.value}) IS NULL AND (${why}) IS NULL)` };
    }
    return { ...convertSql(KIND[w.kind], x), empty: `${x} IS NULL` };
  });
  const empty = (i: number) => conv[i]!.empty;
  const needed = wanted.map((w, i) => (w.optional ? null : i)).filter((i): i is number => i !== null);
  const anyEmpty = needed.length ? needed.map(empty).join(' OR ') : 'false';
  const anyBad = conv.map((c) => `(${c.why}) IS NOT NULL`).join(' OR ') || 'false';
  const flagged = missing === 'error' ? `(${anyBad}) OR (${anyEmpty})` : `(${anyBad})`;
  const bad = (await conn.runAndReadAll(`SELECT rowid AS r, ${conv.map((c, i) => `(${c.why}) AS w${i}, ${empty(i)} AS e${i}, ${quoteIdent(wanted[i]!.name)} AS t${i}`).join(', ')} FROM ${table} WHERE ${flagged} ORDER BY rowid LIMIT ${MAX_PROBLEMS + 1}`)).getRowObjectsJS();
  for (const row of bad) {
    const r = Number(row.r);
    const line = lineOf(r);
    wanted.forEach((w, i) => {
      const base: Omit<CsvFileProblem, 'code' | 'message'> = { file, line, field: w.name, order: columns.indexOf(w.name), ...(where === 'row' ? { unit: 'row' } : {}) };
      if (row[`e${i}`] === true && !w.optional && missing === 'error') problems.add({ ...base, code: 'emptyValue', message: missingMessage });
      else if (row[`w${i}`] !== null && row[`w${i}`] !== undefined) {
        const reason = String(row[`w${i}`]);
        const raw = (row[`t${i}`] as string | null) ?? '';
        const d = reason === 'notBinary' ? { code: 'badValue', message: `expected 0 or 1 (or true/false), got ${show(raw)}` } : describeProblem(KIND[w.kind], reason, raw);
        problems.add({ ...base, code: d.code, message: d.message });
      }
    });
  }
  if (problems.size > 0) throw problems.toError();
  const keep = missing === 'drop' ? `WHERE NOT (${anyEmpty})` : '';
  const total = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${table}`)).getRowObjectsJS()[0]!.n);
  const r = await conn.runAndReadAll(`SELECT rowid AS "__row", ${conv.map((c, i) => `${c.value} AS ${quoteIdent(`v${i}`)}`).join(', ')} FROM ${table} ${keep} ORDER BY rowid`);
  const raw = r.getColumnsObjectJS();
  const lines = (raw.__row as unknown[]).map((x) => lineOf(Number(x)));
  const values: Record<string, (string | number | null)[]> = {};
  wanted.forEach((w, i) => (values[w.name] = (raw[`v${i}`] as unknown[]).map((v) => (v === null || v === undefined ? null : typeof v === 'bigint' ? Number(v) : (v as string | number)))));
  const rows = r.currentRowCount;
  if (total === 0) throw dataError('input.empty', `${file}: no data rows`);
  if (rows === 0) throw dataError('input.empty', `${file}: every row has an empty cell (--missing drop dropped all ${total})`);
  return { file, columns, rows, dropped: total - rows, values, lines, unit: where };
}

/** A text column's values (non-null unless the column is optional). */
export const texts = (t: InputTable, name: string) => t.values[name] as (string | null)[];
/** A number or binary column's values. */
export const numbers = (t: InputTable, name: string) => t.values[name] as (number | null)[];

export { quoteIdent };
