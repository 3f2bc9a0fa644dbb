/**
 * The typed reader of `--from-aggregates` files (src/analysis/ci-aggregates.ts): DuckDB reads the
 * CSV or Parquet file straight into typed columns (a CSV through the one CSV reader's `read_csv`
 * call, `readCsvSql`, with explicit columns and types, `strict_mode` and `store_rejects`: DOUBLE
 * for the numbers, VARCHAR for the names), checks every row in SQL, and the caller aggregates in
 * SQL and streams per-cluster rows. No cell becomes a JavaScript value on the way, so a file of
 * millions of clusters costs DuckDB's scan, not one JS value per cell (docs/scale.md).
 *
 * Errors are one line naming the file, the line (Parquet: the row) and the column (exit 3), as
 * `--input` files report them: DuckDB's rejects (a cell that is not a number, a ragged row) and the
 * byte scan's problems go through `combineCsvProblems`; a row that fails a check (a count that is
 * not an integer >= 0, a sum that is not finite, the caller's checks) is placed by its line. The
 * byte scan of the whole file (`scanCsvFile`) runs only when there is a problem to place.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createDb, quoteIdent, quoteLiteral, withConnection } from '../store/duckdb.ts';
import { ANALYSIS_DB } from '../store/open-store.ts';
import { dataError, storeError, usageError } from '../errors.ts';
import { readCsvHeader, scanCsvFile, type CsvHead } from '../store/csv-scan.ts';
import { show } from '../store/csv-values.ts';
import { CsvProblems, combineCsvProblems, csvColumn, csvSourceFor, detectCsvDialect, headerSplitProblem, readCsvSql, scanProblem } from '../store/read-csv.ts';

/** One column of an aggregate file. */
export interface AggColumn {
  name: string;
  /** `text`: VARCHAR; `number`: DOUBLE, finite; `count`: DOUBLE, an integer >= 0. */
  kind: 'text' | 'number' | 'count';
  /** Read only if the file has it (otherwise a missing column is an error). */
  ifPresent?: boolean;
  /** Empty cells are NULL (group columns); otherwise an empty cell is an error. */
  nullable?: boolean;
  /** The flag that named the column, for messages. */
  flag?: string;
}

/** A row check beyond the column's kind: `bad` is SQL over the table's columns, true for a bad row. */
export interface AggCheck {
  /** A column the check reads that a file may lack (the check is skipped then). */
  needs?: string;
  /** The column the message names. */
  column: (v: Record<string, number | null>) => string;
  bad: string;
  what: (v: Record<string, number | null>) => string;
}

/** The loaded file: table `agg` (the columns as named, rows in file order: `rowid`). */
export interface AggFile {
  conn: DuckDBConnection;
  file: string;
  /** The columns read (those with `ifPresent` only when the file has them). */
  present: Set<string>;
}

/** A data error naming the file, a line (Parquet: row) and a column. */
const badValue = (file: string, where: string, col: string, what: string) => dataError('aggregates.badValue', `${file}: ${where}: column "${col}": ${what}`);

const num = (x: unknown): number | null => (x === null || x === undefined ? null : Number(x));

/**
 * Reads `file` (CSV or Parquet) into table `agg` with the `columns` it has, checks every row
 * (`checks` after the columns' own), and calls `fn`. Throws a one-line data error (exit 3).
 */
export async function withAggregateFile<T>(file: string, columns: AggColumn[], checks: AggCheck[], opts: { delimiter?: string }, fn: (f: AggFile) => Promise<T>): Promise<T> {
  const path = resolve(file);
  if (!existsSync(path)) throw storeError('input.missing', `input file ${file} does not exist`);
  const ext = extname(path).toLowerCase();
  if (ext !== '.parquet' && ext !== '.csv' && ext !== '.txt') throw usageError('input.badExtension', `input file ${file}: extension must be .csv or .parquet`);
  const db = await createDb({ ...ANALYSIS_DB });
  const tmp = await mkdtemp(join(tmpdir(), 'standoff-aggregates-'));
  try {
    return await withConnection(db, async (conn) => {
      await conn.run(`SET temp_directory = ${quoteLiteral(join(tmp, 'spill'))}`);
      const loaded = ext === '.parquet' ? await loadParquet(conn, file, path, columns) : await loadCsv(conn, file, path, columns, tmp, opts.delimiter);
      const present = new Set(loaded.columns);
      const used = columns.filter((c) => present.has(c.name));
      const rows = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM agg')).getRowObjectsJS()[0]!.n);
      if (rows === 0) throw dataError('input.empty', `${file}: no data rows`);
      const failed = await firstBadRow(conn, used, checks);
      if (failed) throw badValue(file, await loaded.where(failed.row), failed.column, failed.what);
      return await fn({ conn, file, present });
    });
  } finally {
    db.closeSync();
    await rm(tmp, { recursive: true, force: true });
  }
}

interface Loaded {
  columns: string[];
  /** `line N` (CSV) or `row N` (Parquet) of the table's row `row` (0-based rowid). */
  where(row: number): Promise<string>;
}

function checkColumns(file: string, have: string[], columns: AggColumn[]): AggColumn[] {
  for (const c of columns) {
    if (!c.ifPresent && !have.includes(c.name)) throw dataError('input.missingColumn', `${file}: column "${c.name}"${c.flag ? ` (${c.flag})` : ''} does not exist (columns: ${have.join(', ')})`);
  }
  return columns.filter((c) => have.includes(c.name));
}

const typeOf = (c: AggColumn) => (c.kind === 'text' ? 'VARCHAR' : 'DOUBLE');

async function loadCsv(conn: DuckDBConnection, file: string, path: string, columns: AggColumn[], tmp: string, delimiter?: string): Promise<Loaded> {
  const problems = new CsvProblems(20, 'input');
  const dialect = await detectCsvDialect(conn, path, delimiter);
  const head: CsvHead = await readCsvHeader(path, dialect.delimiter);
  if (head.problems.length > 0) {
    problems.addAll(head.problems.map((p) => scanProblem(file, [], p)));
    throw problems.toError();
  }
  if (head.header === null) throw dataError('input.empty', `${file}: the file is empty`);
  const header = head.header;
  const split = headerSplitProblem(file, header, dialect);
  if (split) {
    problems.add(split);
    throw problems.toError();
  }
  const used = checkColumns(file, header, columns);
  const types = header.map((h) => {
    const c = used.find((u) => u.name === h);
    return c ? typeOf(c) : 'VARCHAR';
  });
  const select = used.map((c) => `${quoteIdent(csvColumn(header.indexOf(c.name)))} AS ${quoteIdent(c.name)}`).join(', ');
  const from = readCsvSql(await csvSourceFor(path, head, tmp, 'source'), header.length, head.skip, 'rejects', dialect.delimiter, types);
  let loadError: string | null = null;
  await conn.run(`CREATE TABLE agg AS SELECT ${select} FROM ${from}`).catch((e: Error) => {
    loadError = e.message;
  });
  const rejected = loadError === null ? Number((await conn.runAndReadAll('SELECT count(*) AS n FROM rejects_errors')).getRowObjectsJS()[0]!.n) : 0;
  // Lines are placed by the byte scan, read only when there is something to place.
  let lines: Awaited<ReturnType<typeof combineCsvProblems>> | null = null;
  const placed = async () => (lines ??= await combineCsvProblems(loadError === null ? conn : null, file, header, await scanCsvFile(path, dialect.delimiter), loadError === null ? 'rejects' : null));
  if (loadError !== null || rejected > 0) {
    const load = await placed();
    problems.addAll(load.problems.map((p) => ({ ...p, message: typedMessage(p.message) })));
    if (problems.size === 0) problems.add({ file, line: 0, field: null, code: 'badCsv', message: `DuckDB could not read the file: ${String(loadError ?? 'rejected rows').split('\n')[0]}` });
    throw problems.toError();
  }
  return { columns: header, where: async (row) => `line ${(await placed()).lineOf(row)}` };
}

/** DuckDB's message for a cell of the wrong type, as the reader words it. */
function typedMessage(message: string): string {
  const m = /Could not convert string "(.*)" to 'DOUBLE'/s.exec(message) ?? /Could not convert string '(.*)' to DOUBLE/s.exec(message);
  return m ? `expected a number, got ${show(m[1]!)}` : message;
}

async function loadParquet(conn: DuckDBConnection, file: string, path: string, columns: AggColumn[]): Promise<Loaded> {
  const src = `read_parquet(${quoteLiteral(path)})`;
  const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`).catch((e: Error) => {
    throw dataError('input.unreadable', `${file}: not a readable Parquet file (${e.message.split('\n')[0]})`, e);
  });
  const types = new Map(described.getRowObjectsJS().map((r) => [String(r.column_name), String(r.column_type)]));
  const have = [...types.keys()];
  const used = checkColumns(file, have, columns);
  // A number stored as text: TRY_CAST gives NULL where the text is not a number; such a cell is named.
  const cast = (c: AggColumn) => (c.kind === 'text' ? `CAST(${quoteIdent(c.name)} AS VARCHAR)` : `TRY_CAST(${quoteIdent(c.name)} AS DOUBLE)`);
  await conn.run(`CREATE TABLE agg AS SELECT ${used.map((c) => `${cast(c)} AS ${quoteIdent(c.name)}`).join(', ')} FROM ${src}`);
  // Only columns not stored as numbers can hold a cell that is not one.
  const numeric = used.filter((c) => c.kind !== 'text' && !/^(DOUBLE|FLOAT|REAL|DECIMAL.*|(U?(BIG|SMALL|TINY|HUGE)?INT(EGER)?))$/.test(types.get(c.name)!));
  if (numeric.length > 0) {
    const r = await conn.runAndReadAll(
      `SELECT * FROM (SELECT row_number() OVER () AS r, ${numeric.map((c, i) => `CASE WHEN ${quoteIdent(c.name)} IS NOT NULL AND ${cast(c)} IS NULL THEN CAST(${quoteIdent(c.name)} AS VARCHAR) END AS x${i}`).join(', ')} FROM ${src}) WHERE ${numeric.map((_, i) => `x${i} IS NOT NULL`).join(' OR ')} ORDER BY r LIMIT 1`,
    );
    const row = r.getRowObjectsJS()[0];
    if (row) {
      const i = numeric.findIndex((_, j) => row[`x${j}`] !== null);
      throw badValue(file, `row ${Number(row.r)}`, numeric[i]!.name, `expected a number, got ${show(String(row[`x${i}`]))}`);
    }
  }
  return { columns: have, where: async (row) => `row ${row + 1}` };
}

/** The columns' own checks, then `checks`, over every row; the first bad row (file order) and why. */
async function firstBadRow(conn: DuckDBConnection, used: AggColumn[], checks: AggCheck[]): Promise<{ row: number; column: string; what: string } | null> {
  const tests: { bad: string; column: (v: Record<string, number | null>) => string; what: (v: Record<string, number | null>) => string }[] = [];
  for (const c of used) {
    const x = quoteIdent(c.name);
    const name = () => c.name;
    if (!c.nullable) tests.push({ bad: `${x} IS NULL`, column: name, what: () => 'empty value' });
    if (c.kind === 'count') tests.push({ bad: `(NOT isfinite(${x}) OR ${x} <> trunc(${x}) OR ${x} < 0)`, column: name, what: (v) => `expected a count (an integer >= 0), got ${v[c.name]}` });
    if (c.kind === 'number') tests.push({ bad: `NOT isfinite(${x})`, column: name, what: (v) => `expected a finite number, got ${v[c.name]}` });
  }
  const have = new Set(used.map((c) => c.name));
  tests.push(...checks.filter((c) => !c.needs || have.has(c.needs)));
  if (tests.length === 0) return null;
  const numbers = used.filter((c) => c.kind !== 'text');
  const flags = tests.map((t, i) => `coalesce(${t.bad}, false) AS b${i}`).join(', ');
  const values = numbers.map((c) => `, ${quoteIdent(c.name)}`).join('');
  const r = await conn.runAndReadAll(`SELECT rowid AS r, ${flags}${values} FROM agg WHERE ${tests.map((t) => `coalesce(${t.bad}, false)`).join(' OR ')} ORDER BY rowid LIMIT 1`);
  const row = r.getRowObjectsJS()[0];
  if (!row) return null;
  const v = Object.fromEntries(numbers.map((c) => [c.name, num(row[c.name])]));
  const t = tests[tests.findIndex((_, i) => row[`b${i}`] === true)]!;
  return { row: Number(row.r), column: t.column(v), what: t.what(v) };
}
