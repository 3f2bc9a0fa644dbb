/**
 * Reads a user's CSV or Parquet file for `standoff ci|agreement|judges --input FILE`. Values come
 * in as text (CSV: `all_varchar`) and are validated here, per row and column, with errors that name
 * the file, the line and the column — DuckDB's sniffer is used only to split fields, never to
 * decide what is valid.
 */
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { createDb, quoteIdent, quoteLiteral, withConnection } from '../store/duckdb.ts';
import { dataError, oneLine, storeError, usageError } from '../errors.ts';

export interface InputTable {
  file: string;
  columns: string[];
  /** Column name -> raw text values (null for empty/NULL). Row i of the file is line i + 2 (header is line 1) for CSV. */
  data: Record<string, (string | null)[]>;
  rows: number;
}

export async function readInputFile(file: string, required: string[]): Promise<InputTable> {
  const path = resolve(file);
  if (!existsSync(path)) throw storeError('input.missing', `input file ${file} does not exist`);
  const ext = extname(path).toLowerCase();
  let source: string;
  if (ext === '.parquet') source = `read_parquet(${quoteLiteral(path)})`;
  else if (ext === '.csv' || ext === '.tsv' || ext === '.txt')
    source = `read_csv(${quoteLiteral(path)}, header = true, all_varchar = true, auto_detect = true, strict_mode = true, null_padding = false)`;
  else throw usageError('input.badExtension', `input file ${file}: extension must be .csv or .parquet`);
  const db = await createDb({ threads: 1 });
  try {
    return await withConnection(db, async (conn) => {
      let reader;
      try {
        reader = await conn.runAndReadAll(`SELECT * FROM ${source}`);
      } catch (err) {
        throw dataError('input.unreadable', `input file ${file}: ${oneLine((err as Error).message)}`, err);
      }
      const columns = reader.columnNames();
      for (const c of required) {
        if (!columns.includes(c)) {
          throw dataError('input.missingColumn', `input file ${file}: column "${c}" does not exist (columns: ${columns.join(', ')})`);
        }
      }
      const raw = reader.getColumnsObjectJS();
      const data: Record<string, (string | null)[]> = {};
      for (const c of columns) data[c] = (raw[c] as unknown[]).map((v) => (v === null || v === undefined ? null : String(v)));
      const rows = reader.currentRowCount;
      if (rows === 0) throw dataError('input.empty', `input file ${file}: no data rows`);
      return { file, columns, data, rows };
    });
  } finally {
    db.closeSync();
  }
}

/** Line number of data row i in a CSV with a header (for messages). */
export const lineOf = (i: number) => i + 2;

/** Parses a numeric column, naming the file, line and column of the first bad value. */
export function numericColumn(t: InputTable, column: string, opts: { allowNull?: boolean } = {}): Float64Array {
  const values = t.data[column];
  if (!values) throw dataError('input.missingColumn', `input file ${t.file}: column "${column}" does not exist (columns: ${t.columns.join(', ')})`);
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const s = values[i];
    if (s === null || s.trim() === '') {
      if (opts.allowNull) {
        out[i] = Number.NaN;
        continue;
      }
      throw dataError('input.missingValue', `input file ${t.file}: line ${lineOf(i)}, column "${column}": empty value`);
    }
    const v = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(s) ? Number(s) : Number.NaN;
    if (!Number.isFinite(v)) {
      throw dataError('input.notNumeric', `input file ${t.file}: line ${lineOf(i)}, column "${column}": "${s.slice(0, 40)}" is not a finite number`);
    }
    out[i] = v;
  }
  return out;
}

export function textColumn(t: InputTable, column: string): string[] {
  const values = t.data[column];
  if (!values) throw dataError('input.missingColumn', `input file ${t.file}: column "${column}" does not exist (columns: ${t.columns.join(', ')})`);
  return values.map((v, i) => {
    if (v === null || v === '') throw dataError('input.missingValue', `input file ${t.file}: line ${lineOf(i)}, column "${column}": empty value`);
    return v;
  });
}

export { quoteIdent };
