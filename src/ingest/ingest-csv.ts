/**
 * `standoff ingest csv FILE... [--map MAP.json] [--run-id ID] [--dry-run] [--replace]` as a library.
 *
 * All or nothing: every file is parsed and every row checked first (problems are collected, up to
 * `MAX_ERRORS`); only when all of it is clean is one run written, atomically, through `writeRun`
 * (trusted: the rows were checked here, at least as strictly as the zod schema). The checked
 * values are kept by column (`csv/columns.ts`), not as row objects, and handed to `writeRun` as
 * `ColumnarRows`; `buildCsvRun` gives the same rows as objects. On any problem an `IngestError` is
 * thrown (exit 3) and the store is not touched. Format and mapping: `docs/ingest-csv.md`.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { RUN_ID_PATTERN, type RunBundle, type RunRow, type TableName } from '../schema/tables.ts';
import { StandoffError, usageError } from '../errors.ts';
import { STANDOFF_VERSION } from '../version.ts';
import { materializeRows, refuseExistingRun, writeRun, type ColumnarRows, type WritableRunBundle } from '../store/write-run.ts';
import { MAX_FIELD_CHARS, parseCsvFile } from './csv/parse-csv.ts';
import {
  checkMappingColumns,
  compactMapping,
  detectMapping,
  mappingSchema,
  type Mapping,
  type MappingInput,
  type MappedTable,
} from './csv/mapping.ts';
import { RunRows, createRecordHandler, resolveMapping, type RecordHandler, type ResolvedMapping } from './csv/rows.ts';

/** Tables a CSV ingest fills. */
const CSV_TABLES = ['episodes', 'scores', 'judgments', 'probe_answers', 'aggregates'] as const;
type CsvTable = (typeof CSV_TABLES)[number];

/** Problems collected before giving up (the CLI prints them one per line). */
export const MAX_ERRORS = 20;

/** A data error carrying every problem found (`errors`, one line each); `message` summarises. */
export class IngestError extends StandoffError {
  readonly errors: string[];
  constructor(code: string, message: string, errors: string[]) {
    super(code, 'data', message);
    this.errors = errors;
  }
}

export interface IngestCsvOptions {
  /** Trace store directory. */
  traces: string;
  /** Mapping: a JSON file path, or the mapping itself. Without it, columns are detected per file. */
  map?: string | MappingInput;
  /** Run id (default `csv-<UTC timestamp>-<8 hex of the files' SHA-256>`). */
  runId?: string;
  /** Check everything and return the summary, write nothing. */
  dryRun?: boolean;
  /** Replace an existing run with the same id. */
  replace?: boolean;
  /** `runs.suite` (default: the map's suite, else the first file name without extension). */
  suite?: string;
  /** Ingest time (default now); for tests. */
  now?: Date;
  /** Largest field in characters (default 1 MiB). */
  maxFieldChars?: number;
  /** Problems collected before stopping (default 20). */
  maxErrors?: number;
}

export interface IngestFileSummary {
  file: string;
  sha256: string;
  bytes: number;
  table: MappedTable;
  /** Data rows read (header excluded). */
  rows: number;
  /** The mapping was detected from the header (no --map). */
  detected: boolean;
  /** The mapping used for this file. */
  mapping: Mapping;
  /** Header columns the mapping does not use. */
  ignoredColumns: string[];
  /** Unmapped columns filled with their documented default (column -> default). */
  defaults: Record<string, string>;
}

export interface IngestCsvSummary {
  runId: string;
  dryRun: boolean;
  /** The run was written to the store. */
  written: boolean;
  store: string;
  /** The mapping used (of the first file; `files[i].mapping` when detection differs per file). */
  mapping: Mapping;
  /** The mapping as printed and stored in `runs.config` (compact JSON). */
  mappingJson: string;
  files: IngestFileSummary[];
  /** Rows per table, `runs` included. */
  tables: Partial<Record<TableName, number>>;
  run: RunRow;
}

/** Problems of one ingest, with a cap. */
class Problems {
  readonly list: { code: string; text: string; file: string }[] = [];
  truncated = false;
  constructor(readonly limit: number) {}
  add(file: string, line: number, field: string | null, code: string, message: string): boolean {
    if (this.list.length >= this.limit) {
      this.truncated = true;
      return false;
    }
    const where = field === null ? `line ${line}` : `line ${line}, field ${JSON.stringify(field)}`;
    this.list.push({ code, file, text: `${file}: ${where}: ${message}` });
    return true; // keep going: one more problem tells whether the list is complete
  }
  /** An error with no line (map file problems). */
  addRaw(file: string, code: string, text: string): void {
    if (this.list.length >= this.limit) {
      this.truncated = true;
      return;
    }
    this.list.push({ code, file, text: `${file}: ${text}` });
  }
  count(file: string): number {
    return this.list.filter((p) => p.file === file).length;
  }
  toError(): IngestError {
    const errors = this.list.map((p) => p.text);
    const first = this.list[0]!;
    const files = new Set(this.list.map((p) => p.file));
    const n = this.list.length;
    const count = this.truncated ? `${n}+ errors (stopped after ${n})` : `${n} errors`;
    let message: string;
    if (n === 1 && !this.truncated) message = first.text;
    else if (files.size === 1) message = `${first.file}: ${count}; first: ${first.text.slice(first.file.length + 2)}`;
    else message = `${count} in ${files.size} files; first: ${first.text}`;
    return new IngestError(first.code, message, errors);
  }
}

async function loadMapping(map: string | MappingInput, problems: Problems): Promise<{ mapping: Mapping | null; name: string }> {
  let data: unknown = map;
  let name = 'map';
  if (typeof map === 'string') {
    name = map;
    let text: string;
    try {
      text = await readFile(map, 'utf8');
    } catch (e) {
      throw usageError('ingest.noMap', `cannot read map file ${map}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    try {
      data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch (e) {
      problems.addRaw(name, 'ingest.badMap', `not valid JSON: ${(e as Error).message}`);
      return { mapping: null, name };
    }
  }
  const parsed = mappingSchema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.addRaw(name, 'ingest.badMap', `${issue.path.join('.') || '(top level)'}: ${issue.message.toLowerCase()}`);
    }
    return { mapping: null, name };
  }
  const column = checkMappingColumns(parsed.data);
  for (const p of column) problems.addRaw(name, p.startsWith('columns.') ? 'ingest.unknownColumn' : 'ingest.badMap', p);
  return { mapping: column.length > 0 ? null : parsed.data, name };
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Parses and checks every file; returns the run bundle (row objects) without writing. Throws IngestError on any problem. */
export async function buildCsvRun(
  files: string[],
  opts: IngestCsvOptions,
): Promise<{ bundle: RunBundle; summary: IngestCsvSummary }> {
  const { bundle, summary } = await checkCsvRun(files, opts);
  const runId = bundle.run.run_id;
  const out: Record<string, unknown> = { run: bundle.run };
  for (const [t, rows] of Object.entries(bundle)) {
    if (t !== 'run') out[t] = materializeRows(t as TableName, rows as ColumnarRows, runId);
  }
  return { bundle: out as RunBundle, summary };
}

/**
 * Parses and checks every file; returns the run with its tables by column (`ColumnarRows`, for
 * `writeRun`), without writing. Throws IngestError on any problem.
 */
export async function checkCsvRun(
  files: string[],
  opts: IngestCsvOptions,
): Promise<{ bundle: WritableRunBundle & { [K in CsvTable]?: ColumnarRows }; summary: IngestCsvSummary }> {
  if (files.length === 0) throw usageError('ingest.noFiles', 'no CSV files given');
  if (opts.runId !== undefined && !RUN_ID_PATTERN.test(opts.runId)) {
    throw usageError('ingest.badRunId', `run id "${opts.runId}" must be 1-128 letters, digits, dots, dashes or underscores, starting with a letter or digit`);
  }
  for (const f of files) {
    let st;
    try {
      st = await stat(f);
    } catch {
      throw usageError('ingest.noSuchFile', `CSV file ${f} does not exist`);
    }
    if (!st.isFile()) throw usageError('ingest.noSuchFile', `${f} is not a file`);
  }
  const store = resolve(opts.traces);
  if (opts.runId !== undefined) refuseExistingRun(opts.traces, opts.runId, opts.replace);

  const now = opts.now ?? new Date();
  const problems = new Problems(opts.maxErrors ?? MAX_ERRORS);
  let explicit: Mapping | null = null;
  let mapName: string | null = null;
  if (opts.map !== undefined) {
    const loaded = await loadMapping(opts.map, problems);
    if (!loaded.mapping) throw problems.toError();
    explicit = loaded.mapping;
    mapName = loaded.name;
  }

  // Values are kept by column; the run id is not among them (it is the partition key), so a
  // generated id (which needs the file hashes) is simply chosen at the end.
  const rows = new RunRows();
  const summaries: IngestFileSummary[] = [];
  const hashes: string[] = [];

  for (let fi = 0; fi < files.length; fi++) {
    const file = files[fi]!;
    const hash = createHash('sha256');
    let header: string[] | null = null;
    let headerBroken = false;
    let resolved: ResolvedMapping | null = null;
    let handler: RecordHandler | null = null;
    let detectedIgnored: string[] = [];
    let mapping: Mapping | null = explicit;
    let dataRows = 0;
    const report = (line: number, field: string | null, code: string, message: string) =>
      problems.add(file, line, field, code, message);
    const result = await parseCsvFile(
      file,
      {
        onRecord(fields, line) {
          if (header === null) {
            header = fields.slice();
            if (explicit === null) {
              const d = detectMapping(header);
              mapping = d.mapping;
              detectedIgnored = d.ignored;
            }
            resolved = resolveMapping(mapping!, header, explicit === null, report);
            if (resolved === null) return false;
            handler = createRecordHandler(resolved, rows, fi, files, report);
            return true;
          }
          dataRows++;
          return handler!.onRecord(fields, line);
        },
        onError(e) {
          const field = header === null ? `column ${e.field + 1}` : e.field < header.length ? header[e.field]! : `column ${e.field + 1}`;
          const go = report(e.line, field, `ingest.${e.problem}`, e.message);
          if (header === null) {
            headerBroken = true; // the header record is dropped: nothing after it can be read
            return false;
          }
          return go;
        },
      },
      { onChunk: (c) => hash.update(c), maxFieldChars: opts.maxFieldChars ?? MAX_FIELD_CHARS },
    );
    (handler as RecordHandler | null)?.finish();
    const fileProblems = problems.count(file);
    if (header === null && !headerBroken && fileProblems === 0) {
      problems.add(file, 1, null, 'ingest.emptyFile', 'file is empty (expected a header line and data rows)');
    } else if (header !== null && dataRows === 0 && fileProblems === 0 && !result.stopped) {
      problems.add(file, 2, null, 'ingest.noRows', 'no data rows after the header');
    }
    if (problems.truncated) break;
    const sha = hash.digest('hex');
    hashes.push(sha);
    if (mapping !== null) {
      const r = resolved as ResolvedMapping | null;
      const m: Mapping = mapping;
      const ignored = explicit === null ? detectedIgnored : header !== null ? unusedColumns(m, header) : [];
      summaries.push({
        file,
        sha256: sha,
        bytes: result.bytes,
        table: m.table,
        rows: dataRows,
        detected: explicit === null,
        mapping: m,
        ignoredColumns: ignored,
        defaults: r ? r.defaultsUsed : {},
      });
    }
  }
  if (problems.list.length > 0) throw problems.toError();

  const runId = opts.runId ?? `csv-${timestamp(now)}-${createHash('sha256').update(hashes.join(';')).digest('hex').slice(0, 8)}`;
  if (opts.runId === undefined) refuseExistingRun(opts.traces, runId, opts.replace);

  const first = summaries[0]!;
  const distinct = new Map<string, Mapping>();
  for (const s of summaries) distinct.set(JSON.stringify(compactMapping(s.mapping)), s.mapping);
  const mappingJson =
    distinct.size === 1
      ? JSON.stringify(compactMapping(first.mapping))
      : JSON.stringify({ mappings: summaries.map((s) => ({ file: basename(s.file), ...compactMapping(s.mapping) })) });

  const defaults = new Map<string, string>();
  for (const s of summaries) for (const [k, v] of Object.entries(s.defaults)) defaults.set(`${s.table}.${k}`, v);
  const noteParts = [
    `CSV ingest of ${files.length} file${files.length === 1 ? '' : 's'}; mapping ${explicit ? `from ${mapName}` : 'detected from the header'}`,
  ];
  if (defaults.size > 0) noteParts.push(`defaults: ${[...defaults].map(([k, v]) => `${k}=${v}`).join(', ')}`);
  if (explicit?.notes) noteParts.push(explicit.notes);
  const suiteFromFile = basename(first.file, extname(first.file)) || 'csv';

  const run: RunRow = {
    run_id: runId,
    created_at: now.toISOString(),
    source: 'csv',
    suite: opts.suite ?? explicit?.suite ?? suiteFromFile,
    status: 'success',
    config: mappingJson,
    seed: null,
    epochs: rows.maxEpoch > 0 ? rows.maxEpoch : null,
    standoff_version: STANDOFF_VERSION,
    source_file: files.map((f) => basename(f)).join(';'),
    source_sha256: hashes.join(';'),
    notes: noteParts.join('; '),
  };
  const bundle: WritableRunBundle & { [K in CsvTable]?: ColumnarRows } = { run, ...rows.tables() };
  const tables: Partial<Record<TableName, number>> = { runs: 1 };
  for (const t of CSV_TABLES) if (bundle[t]) tables[t] = bundle[t].length;
  const summary: IngestCsvSummary = {
    runId,
    dryRun: opts.dryRun === true,
    written: false,
    store,
    mapping: first.mapping,
    mappingJson,
    files: summaries,
    tables,
    run,
  };
  return { bundle, summary };
}

function unusedColumns(m: Mapping, header: string[]): string[] {
  const used = new Set<string>(Object.values(m.columns));
  for (const s of m.scores) {
    used.add(s.column);
    if (s.answer) used.add(s.answer);
    if (s.explanation) used.add(s.explanation);
  }
  return header.filter((h) => !used.has(h));
}

/**
 * Ingests CSV files as one run (see the module comment). Returns the summary, including the
 * mapping used so the CLI can print it; with `dryRun`, checks everything and writes nothing.
 */
export async function ingestCsv(files: string[], opts: IngestCsvOptions): Promise<IngestCsvSummary> {
  const { bundle, summary } = await checkCsvRun(files, opts);
  if (opts.dryRun) return summary;
  await writeRun(opts.traces, bundle, { replace: opts.replace, trusted: true });
  summary.written = true;
  return summary;
}
