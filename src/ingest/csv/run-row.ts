/**
 * The `runs` row of a CSV ingest (pure): the mapping as stored in `runs.config` (one compact
 * mapping, or one per file when they differ), the notes (how the mapping was found, defaults, the
 * map's notes and each file's notes), the suite and epochs. Secrets a map's constants or notes may
 * carry are masked.
 */
import { basename, extname } from 'node:path';
import type { RunRow } from '../../schema/tables.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { maskSecrets } from '../inspect/map.ts';
import { compactMapping, type Mapping, type MappedTable } from './mapping.ts';

/** What the run row needs of each file's summary. */
export interface CsvFileFacts {
  file: string;
  sha256: string;
  table: MappedTable;
  detected: boolean;
  mapping: Mapping;
  defaults: Record<string, string>;
  notes: string[];
  wide?: { item: string; epoch?: string; subjects: string[]; scorer: string };
}

/** The mapping as printed and stored: one compact mapping, or `{ mappings: [...] }` per file when they differ. */
export function mappingJsonOf(summaries: readonly CsvFileFacts[]): string {
  const compact = (s: CsvFileFacts) => (s.wide ? { table: 'episodes', wide: s.wide } : compactMapping(s.mapping));
  const distinct = new Set(summaries.map((s) => JSON.stringify(compact(s))));
  return distinct.size === 1
    ? JSON.stringify(compact(summaries[0]!))
    : JSON.stringify({ mappings: summaries.map((s) => ({ file: basename(s.file), ...compact(s) })) });
}

/** `runs.notes`: how the mapping was found, the defaults used, the maps' notes and each file's notes. */
export function csvRunNotes(files: readonly string[], summaries: readonly CsvFileFacts[], mapNames: readonly string[]): string {
  const defaults = new Map<string, string>();
  for (const s of summaries) for (const [k, v] of Object.entries(s.defaults)) defaults.set(`${s.table}.${k}`, v);
  const anyDetected = summaries.some((s) => s.detected);
  const how = anyDetected
    ? mapNames.length > 0
      ? `mapping from ${mapNames.join(', ')} and detected from the header`
      : 'mapping detected from the header'
    : `mapping from ${mapNames.join(', ')}`;
  const noteParts = [`CSV ingest of ${files.length} file${files.length === 1 ? '' : 's'}; ${how}`];
  if (defaults.size > 0) noteParts.push(`defaults: ${[...defaults].map(([k, v]) => `${k}=${v}`).join(', ')}`);
  for (const n of new Set(summaries.map((s) => s.mapping.notes).filter((n): n is string => !!n))) noteParts.push(n);
  for (const s of summaries) for (const n of s.notes) noteParts.push(`${basename(s.file)}: ${n}`);
  return noteParts.join('; ');
}

/** The run row of a CSV ingest (see the module comment). */
export function csvRunRow(input: {
  runId: string;
  now: Date;
  files: readonly string[];
  summaries: readonly CsvFileFacts[];
  mapNames: readonly string[];
  mappingJson: string;
  maxEpoch: number;
  suite?: string;
}): RunRow {
  const { summaries } = input;
  const first = summaries[0]!;
  const suiteFromFile = basename(first.file, extname(first.file)) || 'csv';
  return {
    run_id: input.runId,
    created_at: input.now.toISOString(),
    source: 'csv',
    suite: input.suite ?? summaries.find((s) => s.mapping.suite)?.mapping.suite ?? suiteFromFile,
    status: 'success',
    config: maskSecrets(input.mappingJson), // no URL user-info or key a map's constants or notes may carry
    seed: null,
    epochs: input.maxEpoch > 0 ? input.maxEpoch : null,
    standoff_version: STANDOFF_VERSION,
    source_file: input.files.map((f) => basename(f)).join(';'),
    source_sha256: summaries.map((s) => s.sha256).join(';'),
    notes: maskSecrets(csvRunNotes(input.files, summaries, input.mapNames)),
  };
}
