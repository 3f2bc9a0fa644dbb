/**
 * CSV dialect names, without I/O (the CLI parses `--delimiter` with them before loading DuckDB);
 * detection is `detectCsvDialect` in read-csv.ts.
 */
/** The delimiters a CSV file may use (DuckDB's sniffer tries the same four). */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export const DELIMITER_NAMES: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** A delimiter as people name it: `','` (comma), `tab`. */
export const showDelimiter = (d: string) => (d === '\t' ? 'tab' : `'${d}' (${DELIMITER_NAMES[d] ?? 'custom'})`);

/**
 * `--delimiter C`: one of `,` `;` `|`, a tab (`\t`, `tab`), or the names comma, semicolon,
 * pipe; null when `value` is none of these.
 */
export function parseDelimiter(value: string): string | null {
  const v = value.trim().toLowerCase();
  const byName: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', '\\t': '\t', pipe: '|' };
  if (byName[v] !== undefined) return byName[v];
  if (value === '\t') return '\t';
  return (CSV_DELIMITERS as readonly string[]).includes(v) ? v : null;
}

