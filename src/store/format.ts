/**
 * Pure renderers for query results: aligned text table, CSV (RFC 4180), JSON (array of row
 * objects, BIGINT already converted to numbers) and GitHub Markdown.
 */
import type { Plain, QueryResult } from './duckdb.ts';

export const FORMATS = ['table', 'csv', 'json', 'markdown'] as const;
export type Format = (typeof FORMATS)[number];

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

export function toTable(r: QueryResult): string {
  const header = r.columns;
  const body = r.rows.map((row) => header.map((c) => cellText(row[c] ?? null, true).replace(/\s*\n\s*/g, ' ')));
  const numeric = header.map((c) => r.rows.some((row) => typeof row[c] === 'number') && r.rows.every((row) => row[c] === null || typeof row[c] === 'number'));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => [...b[i]].length)));
  const pad = (s: string, i: number) => (numeric[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]));
  const lines = [
    header.map((h, i) => pad(h, i)).join('  ').trimEnd(),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map((b) => b.map((s, i) => pad(s, i)).join('  ').trimEnd()),
  ];
  lines.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return lines.join('\n') + '\n';
}

const csvField = (s: string) => (/[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function toCsv(r: QueryResult): string {
  const lines = [r.columns.map(csvField).join(',')];
  for (const row of r.rows) lines.push(r.columns.map((c) => csvField(cellText(row[c] ?? null))).join(','));
  return lines.join('\n') + '\n';
}

export function toJson(r: QueryResult): string {
  return JSON.stringify(r.rows, null, 2) + '\n';
}

const mdCell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');

export function toMarkdown(r: QueryResult): string {
  const numeric = r.columns.map((c) => r.rows.some((row) => typeof row[c] === 'number') && r.rows.every((row) => row[c] === null || typeof row[c] === 'number'));
  const lines = [
    `| ${r.columns.map(mdCell).join(' | ')} |`,
    `| ${numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`,
    ...r.rows.map((row) => `| ${r.columns.map((c) => mdCell(cellText(row[c] ?? null, true))).join(' | ')} |`),
  ];
  return lines.join('\n') + '\n';
}

export function formatResult(r: QueryResult, format: Format): string {
  switch (format) {
    case 'table':
      return toTable(r);
    case 'csv':
      return toCsv(r);
    case 'json':
      return toJson(r);
    case 'markdown':
      return toMarkdown(r);
  }
}
