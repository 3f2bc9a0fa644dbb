/**
 * How `RunWriter` (`./run-writer.ts`) stages a row: one JSON object of the table's staged
 * columns. Its own module, free of DuckDB, so a worker thread can stage rows
 * (`src/ingest/inspect/worker.ts`) without loading the database.
 */
import type { SqlColumn } from '../schema/tables.ts';

/** A row as the writer stages it: JSON of exactly the table's staged columns, and its characters of text. */
export interface StagedRow {
  json: string;
  chars: number;
}

/**
 * One JSON object per row, with exactly the staged columns (text made well-formed UTF-16, as
 * DuckDB's appender would turn a lone surrogate into U+FFFD); `chars` counts the text (to size
 * row groups).
 */
export function stagedRow(cols: readonly SqlColumn[], r: Record<string, unknown>): StagedRow {
  const o: Record<string, unknown> = {};
  let chars = 0;
  for (const c of cols) {
    let v = r[c.name];
    if (typeof v === 'string') {
      chars += v.length;
      if (!v.isWellFormed()) v = v.toWellFormed();
    } else if (v === undefined) v = null;
    o[c.name] = v;
  }
  return { json: JSON.stringify(o), chars };
}
