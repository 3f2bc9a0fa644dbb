/**
 * Renderers for query results: aligned text table, CSV (RFC 4180), JSON (array of row objects,
 * BIGINT already converted to numbers) and GitHub Markdown.
 *
 * Each format is an encoder fed rows in batches (`encoderFor`), so `standoff sql` streams a result
 * of any size with memory independent of its row count; `formatResult` is the same encoder over a
 * materialized result. The table keeps only its first `maxRows` rows (default
 * {@link DEFAULT_MAX_ROWS}) and then says how many more there were, as the DuckDB CLI does.
 *
 * Untrusted text (`src/escape.ts`): the table makes control and bidi characters visible and puts
 * a row on one line; Markdown escapes every cell; CSV prefixes formula-leading text cells with `'`
 * when `csvSafe` is on; JSON is data and is not altered.
 */
import type { Plain, QueryResult } from './duckdb.ts';
import { csvSafe as neutralize, escapeMarkdown, terminalLine } from '../escape.ts';

export const FORMATS = ['table', 'csv', 'json', 'markdown'] as const;
export type Format = (typeof FORMATS)[number];

/** Rows the table format shows before it summarises the rest. */
export const DEFAULT_MAX_ROWS = 40;

export interface FormatOptions {
  /** Table format: rows shown (default {@link DEFAULT_MAX_ROWS}). */
  maxRows?: number;
  /** CSV: prefix text cells that start like a formula with `'` (see `src/escape.ts`). */
  csvSafe?: boolean;
}

/** Text of one cell; numbers keep full precision in csv/json, and are shown with up to 6 significant decimals in tables. */
export function cellText(v: Plain, forDisplay = false): string {
  if (v === null) return forDisplay ? 'NULL' : '';
  if (typeof v === 'number') {
    if (!forDisplay || Number.isInteger(v)) return String(v);
    return String(Number(v.toPrecision(6)));
  }
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return JSON.stringify(v);
}

/** A streaming renderer: `head` once, `rows` per batch, `tail` with the total row count. */
export interface Encoder {
  head(): string;
  rows(rows: readonly Record<string, Plain>[]): string;
  tail(total: number): string;
}

const isNumericColumn = (rows: readonly Record<string, Plain>[], c: string) =>
  rows.some((row) => typeof row[c] === 'number') && rows.every((row) => row[c] === null || row[c] === undefined || typeof row[c] === 'number');

function renderTable(columns: readonly string[], shown: readonly Record<string, Plain>[], total: number): string {
  const header = columns.map((h) => terminalLine(h));
  const body = shown.map((row) => columns.map((c) => terminalLine(cellText(row[c] ?? null, true))));
  const numeric = columns.map((c) => isNumericColumn(shown, c));
  const widths = header.map((h, i) => {
    let w = [...h].length;
    for (const b of body) w = Math.max(w, [...b[i]!].length);
    return w;
  });
  const pad = (s: string, i: number) => (numeric[i] ? s.padStart(widths[i]! + s.length - [...s].length) : s.padEnd(widths[i]! + s.length - [...s].length));
  const lines = [
    header.map((h, i) => pad(h, i)).join('  ').trimEnd(),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map((b) => b.map((s, i) => pad(s, i)).join('  ').trimEnd()),
  ];
  const more = total - shown.length;
  if (more > 0) lines.push(`... ${more} more row${more === 1 ? '' : 's'}`);
  lines.push(`(${total} row${total === 1 ? '' : 's'}${more > 0 ? `, ${shown.length} shown` : ''})`);
  return lines.join('\n') + '\n';
}

/** The table keeps the first `maxRows` rows and renders at the end (widths need them all). */
function tableEncoder(columns: readonly string[], maxRows: number): Encoder {
  const shown: Record<string, Plain>[] = [];
  return {
    head: () => '',
    rows(rows) {
      for (const r of rows) {
        if (shown.length >= maxRows) break;
        shown.push(r);
      }
      return '';
    },
    tail: (total) => renderTable(columns, shown, total),
  };
}

const CSV_QUOTED = /[",\r\n]|^\s|\s$/;
const csvField = (s: string) => (CSV_QUOTED.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** One CSV cell as the csv encoder writes it (`safe`: formula-like text neutralized, `csvSafe`). */
export function csvCell(v: Plain, safe = false): string {
  const s = cellText(v);
  return csvField(safe && typeof v !== 'number' && typeof v !== 'boolean' && v !== null ? neutralize(s) : s);
}

function csvEncoder(columns: readonly string[], safe: boolean): Encoder {
  const cell = (v: Plain) => csvCell(v, safe);
  return {
    head: () => columns.map((c) => csvField(safe ? neutralize(c) : c)).join(',') + '\n',
    rows: (rows) => rows.map((row) => columns.map((c) => cell(row[c] ?? null)).join(',') + '\n').join(''),
    tail: () => '',
  };
}

/** `JSON.stringify(rows, null, 2)`, written a batch at a time. */
function jsonEncoder(): Encoder {
  let first = true;
  return {
    head: () => '',
    rows(rows) {
      let out = '';
      for (const row of rows) {
        out += `${first ? '[\n' : ',\n'}  ${JSON.stringify(row, null, 2).replace(/\n/g, '\n  ')}`;
        first = false;
      }
      return out;
    },
    tail: () => (first ? '[]\n' : '\n]\n'),
  };
}

const mdCell = (s: string) => escapeMarkdown(s, '<br>');

/** Markdown: numeric columns right-aligned (by `numeric`, or by the first batch's values). */
function markdownEncoder(columns: readonly string[], numeric?: readonly boolean[]): Encoder {
  let started = false;
  const headFor = (align: readonly boolean[]) =>
    `| ${columns.map((c) => mdCell(c)).join(' | ')} |\n| ${align.map((n) => (n ? '---:' : '---')).join(' | ')} |\n`;
  return {
    head: () => '',
    rows(rows) {
      let out = '';
      if (!started) {
        started = true;
        out += headFor(numeric ?? columns.map((c) => isNumericColumn(rows, c)));
      }
      return out + rows.map((row) => `| ${columns.map((c) => mdCell(cellText(row[c] ?? null, true))).join(' | ')} |\n`).join('');
    },
    tail: () => (started ? '' : headFor(numeric ?? columns.map(() => false))),
  };
}

/** The encoder of a format. `numeric` (Markdown alignment) defaults to what the values show. */
export function encoderFor(format: Format, columns: readonly string[], opts: FormatOptions & { numeric?: readonly boolean[] } = {}): Encoder {
  switch (format) {
    case 'table':
      return tableEncoder(columns, opts.maxRows ?? DEFAULT_MAX_ROWS);
    case 'csv':
      return csvEncoder(columns, opts.csvSafe === true);
    case 'json':
      return jsonEncoder();
    case 'markdown':
      return markdownEncoder(columns, opts.numeric);
  }
}

/** A whole materialized result in one format. */
export function formatResult(r: QueryResult, format: Format, opts: FormatOptions = {}): string {
  const enc = encoderFor(format, r.columns, { maxRows: Number.MAX_SAFE_INTEGER, ...opts });
  return enc.head() + enc.rows(r.rows) + enc.tail(r.rows.length);
}

export const toTable = (r: QueryResult, maxRows = Number.MAX_SAFE_INTEGER) => formatResult(r, 'table', { maxRows });
export const toCsv = (r: QueryResult, csvSafe = false) => formatResult(r, 'csv', { csvSafe });
export const toJson = (r: QueryResult) => formatResult(r, 'json');
export const toMarkdown = (r: QueryResult) => formatResult(r, 'markdown');
