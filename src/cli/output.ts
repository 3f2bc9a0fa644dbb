/**
 * How commands print results. A command prints through {@link printResult}, {@link printTable},
 * {@link printSummary} or {@link printText}, never by writing results to process.stdout itself:
 * the CLI's sink writes to stdout; a notebook's `standoff` block (src/cli/notebook-blocks.ts)
 * runs the same command with its own sink and gets the tables as data. Diagnostics still go to
 * stderr directly.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { formatResult, type Format } from '../store/format.ts';
import { terminalLine, terminalText } from '../escape.ts';
import type { Plain, QueryResult } from '../store/duckdb.ts';

export interface ResultSink {
  /** A result table, in the command's `--format`. */
  table(result: QueryResult, format: Format): void;
  /** Text that is part of the result (already formatted; ends with a newline). */
  text(text: string): void;
  /**
   * Markdown that a Standoff renderer built with its own escaping (e.g. `compare --format
   * markdown`): a notebook keeps its structure; elsewhere it is text.
   */
  markdown?(markdown: string): void;
  /** Let errors propagate to the caller instead of printing them and setting the exit code. */
  rethrow?: boolean;
}

/** Text results reach the terminal through `terminalText` (JSON keeps its meaning: `\u202E` is JSON's own escape). */
const STDOUT: ResultSink = {
  table: (r, format) => process.stdout.write(formatResult(r, format)),
  text: (t) => process.stdout.write(terminalText(t)),
};

const sinks = new AsyncLocalStorage<ResultSink>();

/** The sink of the command running now: stdout, unless a caller set one with {@link withSink}. */
export const currentSink = (): ResultSink => sinks.getStore() ?? STDOUT;

/** Runs `fn` (a whole command) with results going to `sink`. */
export const withSink = <T>(sink: ResultSink, fn: () => Promise<T>): Promise<T> => sinks.run(sink, fn);

/** Flattens nested result objects into table columns (`a.b`); arrays become JSON text. */
export function flattenRow(obj: Record<string, unknown>, prefix = '', out: Record<string, Plain> = {}): Record<string, Plain> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flattenRow(v as Record<string, unknown>, key, out);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else out[key] = (v ?? null) as Plain;
  }
  return out;
}

/** Objects (or one object) as a result table; `columns` picks and orders columns. */
export function toResultTable(items: unknown, columns?: string[]): QueryResult {
  const list = (Array.isArray(items) ? items : [items]).map((r) => flattenRow(r as Record<string, unknown>));
  const cols = columns ?? [...new Set(list.flatMap((r) => Object.keys(r)))];
  return { columns: cols, types: [], rows: list.map((r) => Object.fromEntries(cols.map((c) => [c, r[c] ?? null]))) };
}

/** A result (object or array of objects): the documented JSON object with `json`, else a table of flattened rows. */
export function printResult(result: unknown, format: Format, columns?: string[]): void {
  if (format === 'json') return printText(JSON.stringify(result, null, 2) + '\n');
  printTable(toResultTable(result, columns), format);
}

/** A query result in the given format. */
export const printTable = (result: QueryResult, format: Format): void => currentSink().table(result, format);

/**
 * Part of a result the command encoded itself, a chunk at a time (`encoderFor`): written to stdout
 * as a table's encoding is, or with `asText` as {@link printText} writes (control characters made
 * visible), waiting for the pipe to drain; another sink gets it as text.
 */
export async function printEncoded(text: string, asText = false): Promise<void> {
  const sink = currentSink();
  if (sink !== STDOUT) return sink.text(text);
  const out = asText ? terminalText(text) : text;
  if (out !== '' && !process.stdout.write(out)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

/** Text that belongs to the result. */
export const printText = (text: string): void => currentSink().text(text);

/** Markdown built by a Standoff renderer that escaped every outside value itself ({@link ResultSink.markdown}). */
export const printMarkdown = (markdown: string): void => {
  const sink = currentSink();
  if (sink.markdown) sink.markdown(markdown);
  else sink.text(markdown);
};

/**
 * The summary of a command that did something (run, ingest, validate): readable `lines` for
 * `table`, the summary object for `json`, and `rows` (default: the summary as one flattened row)
 * for `csv` and `markdown`.
 */
export function printSummary(summary: unknown, format: Format, lines: string[], rows?: unknown[]): void {
  if (format === 'table') return printText(lines.map((l) => terminalLine(l)).join('\n') + '\n');
  if (format === 'json') return printResult(summary, 'json');
  printTable(toResultTable(rows ?? [summary]), format);
}
