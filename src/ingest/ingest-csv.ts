/**
 * `standoff ingest csv FILE... [--map MAP.json | --map FILE=MAP.json ...] [flags] [--run-id ID]
 * [--dry-run] [--replace]` as a library.
 *
 * Every file goes through the one CSV reader (src/store/read-csv.ts): its header is read, its
 * mapping resolved (given, or detected and printed) into SQL (`csv/plan.ts`), and DuckDB loads it
 * (`read_csv` with explicit columns, `strict_mode`, `store_rejects`) into a staging table with
 * every cell converted and checked in SQL, while the byte scan hashes the file and locates its
 * lines. Keys are checked across files in SQL. All or nothing: problems are collected (up to
 * `MAX_ERRORS`, each `file: line N, field "x": ...`); only when there is none is the run written,
 * atomically, by `writeRun`, straight from the staging tables (`SqlRows`). On any problem an
 * `IngestError` is thrown (exit 3) and the store is not touched. Format and mapping:
 * `docs/ingest-csv.md`.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { z } from 'zod';
import { RUN_ID_PATTERN, type RunBundle, type RunRow, type TableName } from '../schema/tables.ts';
import { usageError } from '../errors.ts';
import { STANDOFF_VERSION } from '../version.ts';
import { createDb, quoteIdent, quoteLiteral, toPlain } from '../store/duckdb.ts';
import { refuseExistingRun, writeRun, type SqlRows, type WritableRunBundle } from '../store/write-run.ts';
import { readCsvHeader, scanCsvFile, type CsvScan } from '../store/csv-scan.ts';
import { scoreSql } from '../store/csv-values.ts';
import {
  CsvDataError,
  CsvProblems,
  combineCsvProblems,
  csvColumn,
  csvSourceFor,
  describeDialect,
  detectCsvDialect,
  detectIndexColumn,
  headerSplitProblem,
  indexNote,
  readCsvSql,
  rowCountProblem,
  scanProblem,
  writeLineMap,
  type CsvFileProblem,
  type CsvLoad,
  type IndexColumn,
} from '../store/read-csv.ts';
import {
  applyFlags,
  checkMappingColumns,
  compactMapping,
  completeDetection,
  detectMapping,
  manifestSchema,
  mappingSchema,
  type ColumnStats,
  type Mapping,
  type MappingFlags,
  type MappingInput,
  type MappedTable,
  type WideSpec,
  wideMappings,
} from './csv/mapping.ts';
import { literalProblem, resolvePlan, type FilePlan, type KeySource, type OutTable } from './csv/plan.ts';
import { maskSecrets } from './inspect/map.ts';

/** Tables a CSV ingest fills. */
const CSV_TABLES = ['episodes', 'scores', 'judgments', 'probe_answers', 'probe_decisions', 'aggregates'] as const;

/** Problems collected before giving up (the CLI prints them one per line). */
export const MAX_ERRORS = 20;

/** A data error carrying every problem found (`errors`, one line each); `message` summarises. */
export class IngestError extends CsvDataError {}

/** A manifest as written in a JSON file. */
export type ManifestInput = z.input<typeof manifestSchema>;

export interface IngestCsvOptions {
  /** Trace store directory. */
  traces: string;
  /**
   * Mapping for every file: a JSON file path or the mapping itself; or a manifest
   * (`{ "files": { "<csv name>": mapping } }`). Without it, columns are detected per file.
   */
  map?: string | MappingInput | ManifestInput;
  /** A mapping per file: CSV file (as given, or its base name) -> map file path or mapping. */
  maps?: Record<string, string | MappingInput>;
  /** Mapping choices given as flags; they apply to every file and must agree with its map. */
  flags?: MappingFlags;
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
  /** Problems collected before stopping (default 20). */
  maxErrors?: number;
  /** The field delimiter (`--delimiter`); default: detected by DuckDB's sniffer. */
  delimiter?: string;
  /** `--wide`: one column per subject (`--subjects-from-columns`), melted into long rows; needs `flags.item`. */
  wide?: WideSpec;
}

export interface IngestFileSummary {
  file: string;
  sha256: string;
  bytes: number;
  table: MappedTable;
  /** Data records read (header excluded). */
  rows: number;
  /** The mapping was detected (no map for this file). */
  detected: boolean;
  /** The mapping used for this file. */
  mapping: Mapping;
  /** Header columns kept in `episodes.metadata`. */
  metadataColumns: string[];
  /** Header columns the mapping does not use at all. */
  ignoredColumns: string[];
  /** Unmapped columns filled with their documented default (column -> default). */
  defaults: Record<string, string>;
  /** How the file was read: `delimiter ';' (semicolon, detected), quote '"', BOM, CRLF`. */
  dialect: string;
  /** An unnamed first column skipped as a row index (pandas or R), or null. */
  indexColumn: IndexColumn | null;
  /** Notes to print (the skipped index column, the wide melt). */
  notes: string[];
  /** A wide file: the item column and the subject columns melted into long rows. */
  wide?: { item: string; epoch?: string; subjects: string[]; scorer: string };
}

export interface IngestCsvSummary {
  runId: string;
  dryRun: boolean;
  /** The run was written to the store. */
  written: boolean;
  store: string;
  /** The mapping used (of the first file; `files[i].mapping` when they differ). */
  mapping: Mapping;
  /** The mapping as printed and stored in `runs.config` (compact JSON). */
  mappingJson: string;
  files: IngestFileSummary[];
  /** Rows per table, `runs` included. */
  tables: Partial<Record<TableName, number>>;
  run: RunRow;
}

/** A checked run still in its staging database: `bundle` selects from it; `close` drops it. */
interface PreparedRun {
  bundle: WritableRunBundle;
  summary: IngestCsvSummary;
  db: DuckDBInstance;
  close(): Promise<void>;
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

const q = quoteIdent;

/** Reads and validates a map file or object: a mapping, or a manifest. Problems go to `problems`. */
async function loadMap(
  map: string | MappingInput | ManifestInput,
  problems: CsvProblems,
): Promise<{ name: string; mapping?: Mapping; manifest?: Record<string, Mapping> } | null> {
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
      problems.add({ file: name, line: 0, field: null, code: 'badMap', message: `not valid JSON: ${(e as Error).message}` });
      return null;
    }
  }
  const isManifest = typeof data === 'object' && data !== null && 'files' in data && !('table' in data);
  const schema = isManifest ? manifestSchema : mappingSchema;
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.add({ file: name, line: 0, field: null, code: 'badMap', message: `${issue.path.join('.') || '(top level)'}: ${issue.message.toLowerCase()}` });
    }
    return null;
  }
  const check = (m: Mapping, prefix: string) => {
    const list = checkMappingColumns(m);
    for (const p of list) problems.add({ file: name, line: 0, field: null, code: p.startsWith('columns.') ? 'unknownColumn' : 'badMap', message: `${prefix}${p}` });
    return list.length === 0;
  };
  if (isManifest) {
    const files = (parsed.data as z.infer<typeof manifestSchema>).files;
    let ok = true;
    for (const [f, m] of Object.entries(files)) ok = check(m, `files.${f}.`) && ok;
    return ok ? { name, manifest: files } : null;
  }
  return check(parsed.data as Mapping, '') ? { name, mapping: parsed.data as Mapping } : null;
}

/** The key of `file` in a per-file map table: as given, else its base name. */
function mapKeyOf(file: string, keys: Iterable<string>): string | undefined {
  const list = [...keys];
  return list.find((k) => k === file) ?? list.find((k) => basename(k) === basename(file) && resolve(k) === resolve(file)) ?? list.find((k) => k === basename(file));
}

/** What each numeric-looking candidate column holds (one pass over the file in DuckDB). */
async function columnStats(conn: DuckDBConnection, file: string, header: string[], skip: number, candidates: string[], tag: string, delimiter: string): Promise<Record<string, ColumnStats>> {
  const parts: string[] = [];
  candidates.forEach((c, i) => {
    const sc = scoreSql(q(csvColumn(header.indexOf(c))));
    parts.push(
      `count(*) FILTER (WHERE ${sc.present}) AS p${i}`,
      `count(*) FILTER (WHERE ${sc.present} AND (${sc.why}) IS NULL) AS n${i}`,
      `count(*) FILTER (WHERE ${sc.present} AND (${sc.why}) IS NULL AND (${sc.value}) IS NOT NULL AND (${sc.value}) NOT IN (0, 1)) AS b${i}`,
    );
  });
  const r = await conn.runAndReadAll(`SELECT ${parts.join(', ')} FROM ${readCsvSql(file, header.length, skip, tag, delimiter)}`);
  const row = r.getRowObjectsJS()[0]!;
  const out: Record<string, ColumnStats> = {};
  candidates.forEach((c, i) => (out[c] = { present: Number(row[`p${i}`]), numeric: Number(row[`n${i}`]), nonBinary: Number(row[`b${i}`]) }));
  return out;
}

interface LoadedFile {
  plan: FilePlan;
  scan: CsvScan;
  load: CsvLoad;
  detected: boolean;
  counts: Record<string, number>;
}

/** Loads one file into its staging table and collects its problems (see the module comment). */
async function loadFile(
  conn: DuckDBConnection,
  plan: FilePlan,
  source: string,
  delimiter: string,
  skip: number,
  problems: CsvProblems,
  limit: number,
): Promise<{ scan: CsvScan; load: CsvLoad; counts: Record<string, number> | null }> {
  const { file, fileIndex, header } = plan;
  const tag = `rej_${plan.stage}`;
  let loadError: string | null = null;
  const [scan] = await Promise.all([
    scanCsvFile(file, delimiter),
    conn.run(plan.stageSql(readCsvSql(source, header.length, skip, tag, delimiter))).catch((e: Error) => {
      loadError = e.message;
    }),
  ]);
  const load = await combineCsvProblems(loadError === null ? conn : null, file, header, scan, loadError === null ? tag : null, fileIndex);
  problems.addAll(load.problems);
  if (loadError !== null) {
    if (!scan.fatal) problems.add({ file, fileIndex, line: 0, field: null, code: 'badCsv', message: `DuckDB could not read the file: ${String(loadError).split('\n')[0]}` });
    return { scan, load, counts: null };
  }
  if (scan.records <= 1 && load.problems.length === 0) {
    problems.add({ file, fileIndex, line: 2, field: null, code: 'noRows', message: 'no data rows after the header' });
  }
  const counts = Object.fromEntries(
    Object.entries((await conn.runAndReadAll(plan.countsSql)).getRowObjectsJS()[0]!).map(([k, v]) => [k, v === null ? 0 : Number(v)]),
  );
  const short = rowCountProblem(file, scan, load, counts.n ?? 0, fileIndex);
  if (short) {
    problems.add(short);
    return { scan, load, counts: null };
  }
  const bad = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${q(plan.stage)} WHERE "__bad"`)).getRowObjectsJS()[0]!.n);
  if (bad > 0) {
    // The error path: the raw cells of the bad rows, to say what is wrong with them.
    const raw = `raw_${plan.stage}`;
    const cols = plan.sourceColumns.map((i) => q(csvColumn(i))).join(', ') || '1 AS "__none"';
    await conn.run(`CREATE OR REPLACE TABLE ${q(raw)} AS SELECT ${cols} FROM ${readCsvSql(source, header.length, skip, `${tag}_again`, delimiter)}`);
    const rows = (await conn.runAndReadAll(plan.explainSql(raw, limit))).getRowObjectsJS();
    for (const row of rows) {
      const r = Number(row.__row);
      if (load.recordOf(r) >= load.placeableUntil) continue;
      problems.addAll(plan.describeRow(row as Record<string, unknown>, load.lineOf(r)));
    }
    await conn.run(`DROP TABLE ${q(raw)}`);
  }
  return { scan, load, counts };
}

/** Duplicate keys of one table across every file (a cheap count first; details only when there are some). */
async function checkKeys(conn: DuckDBConnection, sources: { key: KeySource; file: LoadedFile }[], problems: CsvProblems, files: string[], limit: number): Promise<void> {
  if (sources.length === 0) return;
  const union = sources.map((s, i) => `SELECT ${s.file.plan.fileIndex} AS f, ${i} AS src, r, k FROM (${s.key.sql})`).join(' UNION ALL ');
  // Repeated 64-bit hashes first (a hash collision only costs the exact query below, which finds
  // nothing); a GROUP BY, which spills under the memory limit, where count(DISTINCT) would not.
  const d = await conn.runAndReadAll(`SELECT count(*) AS d FROM (SELECT hash(k) AS h FROM (${union}) GROUP BY h HAVING count(*) > 1)`);
  if (Number(d.getRowObjectsJS()[0]!.d) === 0) return;
  const rows = (
    await conn.runAndReadAll(
      `SELECT f, src, r, k, ff, fr FROM (SELECT f, src, r, k, first_value(f) OVER w AS ff, first_value(r) OVER w AS fr, row_number() OVER w AS n FROM (${union}) WINDOW w AS (PARTITION BY k ORDER BY f, r, src)) WHERE n > 1 ORDER BY f, r, src LIMIT ${limit}`,
    )
  ).getRowObjectsJS();
  const byIndex = new Map(sources.map((s) => [s.file.plan.fileIndex, s.file]));
  for (const row of rows) {
    const src = sources[Number(row.src)]!;
    const f = Number(row.f);
    const ff = Number(row.ff);
    const line = byIndex.get(f)!.load.lineOf(Number(row.r));
    const first = byIndex.get(ff)!.load.lineOf(Number(row.fr));
    const where = ff === f ? `line ${first}` : `line ${first} of ${files[ff]}`;
    const key = String(row.k).replace(/\u0000/g, ' | ');
    const shown = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
    problems.add({ file: files[f]!, fileIndex: f, line, field: src.key.field, code: 'duplicateKey', message: `duplicate ${src.key.what} ${shown} (first on ${where})`, order: -1 });
  }
}

/** Parses and checks every file into a staging database; throws IngestError on any problem. */
async function prepareCsvRun(files: string[], opts: IngestCsvOptions): Promise<PreparedRun> {
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
  if (new Set(files.map((f) => resolve(f))).size !== files.length) throw usageError('ingest.sameFile', 'a CSV file is given twice');
  const store = resolve(opts.traces);
  if (opts.runId !== undefined) refuseExistingRun(opts.traces, opts.runId, opts.replace);
  const now = opts.now ?? new Date();
  const limit = opts.maxErrors ?? MAX_ERRORS;
  const problems = new CsvProblems(limit, 'ingest');
  const flags = opts.flags ?? {};

  // The map of each file: one for all, a manifest, or one per file.
  const mapOf: (Mapping | null)[] = files.map(() => null);
  const mapName: (string | null)[] = files.map(() => null);
  if (opts.map !== undefined) {
    const loaded = await loadMap(opts.map, problems);
    if (!loaded) throw problems.toError((c, m, e) => new IngestError(c, m, e));
    if (loaded.mapping) files.forEach((_, i) => ((mapOf[i] = structuredClone(loaded.mapping!)), (mapName[i] = loaded.name)));
    if (loaded.manifest) {
      const keys = Object.keys(loaded.manifest);
      for (const k of keys) {
        if (!files.some((f) => mapKeyOf(f, [k]) === k)) throw usageError('ingest.badManifest', `${loaded.name}: files.${k} is not one of the CSV files given (${files.join(', ')})`);
      }
      files.forEach((f, i) => {
        const k = mapKeyOf(f, keys);
        if (k !== undefined) {
          mapOf[i] = structuredClone(loaded.manifest![k]!);
          mapName[i] = loaded.name;
        }
      });
    }
  }
  for (const [key, m] of Object.entries(opts.maps ?? {})) {
    const i = files.findIndex((f) => mapKeyOf(f, [key]) === key);
    if (i < 0) throw usageError('ingest.badMapFile', `--map ${key}=...: ${key} is not one of the CSV files given (${files.join(', ')})`);
    if (mapOf[i] !== null) throw usageError('ingest.mapTwice', `${files[i]} has two maps (${mapName[i]} and ${typeof m === 'string' ? m : 'another'}); give one`);
    const loaded = await loadMap(m, problems);
    if (!loaded) continue;
    if (!loaded.mapping) throw usageError('ingest.badMapFile', `--map ${key}=${String(m)}: a per-file map must be a mapping, not a manifest`);
    mapOf[i] = loaded.mapping;
    mapName[i] = loaded.name;
  }
  if (problems.size > 0) throw problems.toError((c, m, e) => new IngestError(c, m, e));
  if (opts.wide && mapOf.some((m) => m !== null)) throw usageError('ingest.conflict', '--wide builds the mapping from --item and --subjects-from-columns; it does not go with --map');
  for (let i = 0; i < files.length; i++) {
    const m = mapOf[i];
    if (m === null) continue;
    const conflicts = applyFlags(m, flags);
    if (conflicts.length > 0) throw usageError('ingest.conflict', `${files[i]}: ${conflicts[0]}`);
  }

  const dir = await mkdtemp(join(tmpdir(), 'standoff-ingest-csv-'));
  const db = await createDb({ threads: 2, memoryLimit: '512MB' });
  const conn = await db.connect();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    conn.closeSync();
    db.closeSync();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await conn.run(`SET temp_directory = ${quoteLiteral(dir)}`);
    await conn.run(`SET preserve_insertion_order = true`);
    const loaded: LoadedFile[] = [];
    const summaries: IngestFileSummary[] = [];
    for (let fi = 0; fi < files.length; fi++) {
      const file = files[fi]!;
      const dialect = await detectCsvDialect(conn, file, opts.delimiter);
      const head = await readCsvHeader(file, dialect.delimiter);
      if (head.problems.length > 0) {
        problems.addAll(head.problems.map((p) => scanProblem(file, [], p, fi)));
        continue;
      }
      if (head.header === null) {
        problems.add({ file, fileIndex: fi, line: 1, field: null, code: 'emptyFile', message: 'file is empty (expected a header line and data rows)' });
        continue;
      }
      const header = head.header;
      const split = headerSplitProblem(file, header, dialect, fi);
      if (split) {
        problems.add(split);
        continue;
      }
      const source = await csvSourceFor(file, head, dir, `source_${fi}`);
      const index = await detectIndexColumn(conn, source, header, head.skip, dialect.delimiter, `index_${fi}`);
      let mappings: Mapping[];
      const detected = mapOf[fi] === null;
      if (opts.wide) {
        const w = wideMappings(index ? header.slice(1) : header, opts.wide, flags);
        if ('problem' in w) {
          problems.add({ file, fileIndex: fi, line: 1, field: w.field, code: 'badWide', message: w.problem });
          continue;
        }
        mappings = w.mappings;
      } else if (mapOf[fi] !== null) mappings = [mapOf[fi]!];
      else {
        const d = detectMapping(index ? header.slice(1) : header, flags);
        // An unnamed column is never a scorer (resolvePlan refuses it).
        const candidates = d.candidates.filter((c) => c.trim() !== '' && header.indexOf(c) === header.lastIndexOf(c));
        if (candidates.length > 0 || d.mapping.judges) {
          // The values of the candidates, and of the scores when the judged scorer is to be found.
          const scored = d.mapping.judges && !d.mapping.judges.scorer ? d.mapping.scores.map((x) => x.column) : [];
          const peek = [...new Set([...candidates, ...scored])].filter((c) => header.includes(c));
          const stats = peek.length > 0 ? await columnStats(conn, source, header, head.skip, peek, `peek_${fi}`, dialect.delimiter).catch(() => ({})) : {};
          const why = completeDetection({ ...d, candidates }, stats, flags);
          if (why) {
            problems.add({ file, fileIndex: fi, line: 1, field: null, code: 'noJudgedScorer', message: why });
            continue;
          }
        }
        mappings = [d.mapping];
      }
      // One plan per mapping: a wide file has one per subject column, over the same file.
      for (const [j, mapping] of mappings.entries()) {
        const tag = opts.wide ? `${fi}_${j}` : undefined;
        const { plan, problems: planProblems } = resolvePlan(mapping, header, { file, fileIndex: fi, detected, indexColumn: index ? 0 : undefined, tag });
        problems.addAll(planProblems);
        if (!plan) continue;
        if (plan.literalChecks.length > 0) {
          const r = (await conn.runAndReadAll(`SELECT ${plan.literalChecks.map((c, i) => `(${c.why}) AS w${i}`).join(', ')}`)).getRowObjectsJS()[0]!;
          let bad = false;
          plan.literalChecks.forEach((c, i) => {
            const reason = r[`w${i}`];
            if (reason !== null && reason !== undefined) {
              bad = true;
              problems.add(literalProblem(file, fi, c, String(reason)));
            }
          });
          if (bad) continue;
        }
        const { scan, load, counts } = await loadFile(conn, plan, source, dialect.delimiter, head.skip, problems, limit + 1);
        if (counts === null) continue;
        const lf: LoadedFile = { plan, scan, load, detected, counts };
        loaded.push(lf);
        if (plan.table === 'aggregates') await writeLineMap(conn, `lines_${fi}`, scan);
        if (j > 0) continue;
        const notes = index ? [indexNote(index)] : [];
        if (opts.wide) notes.push(`wide: one subject per column (${mappings.map((m) => m.constants.subject_model).join(', ')}), scorer ${mapping.scores[0]!.scorer}`);
        summaries.push({
          file,
          sha256: scan.sha256,
          bytes: scan.bytes,
          table: plan.table,
          rows: Math.max(0, scan.records - 1),
          detected,
          mapping,
          metadataColumns: plan.metadataColumns,
          ignoredColumns: opts.wide ? plan.ignoredColumns.filter((c) => !mappings.some((m) => m.constants.subject_model === c)) : plan.ignoredColumns,
          defaults: plan.defaultsUsed,
          dialect: describeDialect(dialect, head),
          indexColumn: index,
          notes,
          wide: opts.wide ? { item: flags.item!, epoch: flags.epoch, subjects: mappings.map((m) => String(m.constants.subject_model)), scorer: mapping.scores[0]!.scorer } : undefined,
        });
      }
    }
    // Keys across files.
    const byTable = new Map<string, { key: KeySource; file: LoadedFile }[]>();
    for (const f of loaded) for (const key of f.plan.keys) (byTable.get(key.table) ?? byTable.set(key.table, []).get(key.table)!).push({ key, file: f });
    for (const sources of byTable.values()) await checkKeys(conn, sources, problems, files, limit + 1);
    if (problems.size > 0) throw problems.toError((c, m, e) => new IngestError(c, m, e));

    // The run.
    const hashes = summaries.map((s) => s.sha256);
    const runId = opts.runId ?? `csv-${timestamp(now)}-${createHash('sha256').update(hashes.join(';')).digest('hex').slice(0, 8)}`;
    if (opts.runId === undefined) refuseExistingRun(opts.traces, runId, opts.replace);
    const first = summaries[0]!;
    const compact = (s: IngestFileSummary) => (s.wide ? { table: 'episodes', wide: s.wide } : compactMapping(s.mapping));
    const distinct = new Set(summaries.map((s) => JSON.stringify(compact(s))));
    const mappingJson =
      distinct.size === 1
        ? JSON.stringify(compact(first))
        : JSON.stringify({ mappings: summaries.map((s) => ({ file: basename(s.file), ...compact(s) })) });
    const defaults = new Map<string, string>();
    for (const s of summaries) for (const [k, v] of Object.entries(s.defaults)) defaults.set(`${s.table}.${k}`, v);
    const anyDetected = summaries.some((s) => s.detected);
    const mapNames = [...new Set(mapName.filter((n): n is string => n !== null))];
    const how = anyDetected
      ? mapNames.length > 0
        ? `mapping from ${mapNames.join(', ')} and detected from the header`
        : 'mapping detected from the header'
      : `mapping from ${mapNames.join(', ')}`;
    const noteParts = [`CSV ingest of ${files.length} file${files.length === 1 ? '' : 's'}; ${how}`];
    if (defaults.size > 0) noteParts.push(`defaults: ${[...defaults].map(([k, v]) => `${k}=${v}`).join(', ')}`);
    for (const n of new Set(summaries.map((s) => s.mapping.notes).filter((n): n is string => !!n))) noteParts.push(n);
    for (const s of summaries) for (const n of s.notes) noteParts.push(`${basename(s.file)}: ${n}`);
    const suiteFromFile = basename(first.file, extname(first.file)) || 'csv';
    const maxEpoch = Math.max(0, ...loaded.map((f) => f.counts.max_epoch ?? 0));
    const run: RunRow = {
      run_id: runId,
      created_at: now.toISOString(),
      source: 'csv',
      suite: opts.suite ?? summaries.find((s) => s.mapping.suite)?.mapping.suite ?? suiteFromFile,
      status: 'success',
      config: maskSecrets(mappingJson), // no URL user-info or key a map's constants or notes may carry
      seed: null,
      epochs: maxEpoch > 0 ? maxEpoch : null,
      standoff_version: STANDOFF_VERSION,
      source_file: files.map((f) => basename(f)).join(';'),
      source_sha256: hashes.join(';'),
      notes: maskSecrets(noteParts.join('; ')),
    };
    const bundle: WritableRunBundle = { run };
    const tables: Partial<Record<TableName, number>> = { runs: 1 };
    for (const t of CSV_TABLES) {
      const selects = loaded.flatMap((f) => f.plan.outputs(`lines_${f.plan.fileIndex}`)[t as OutTable] ?? []);
      const length = loaded.reduce((n, f) => n + (f.counts[t] ?? 0), 0);
      if (selects.length === 0 || length === 0) continue;
      const rows: SqlRows = { sql: selects.join(' UNION ALL '), length };
      (bundle as Record<string, unknown>)[t] = rows;
      tables[t] = length;
    }
    const summary: IngestCsvSummary = { runId, dryRun: opts.dryRun === true, written: false, store, mapping: first.mapping, mappingJson, files: summaries, tables, run };
    return { bundle, summary, db, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * Parses and checks every file; returns the run as row objects, without writing (for tests and
 * small files: every row comes into JS). Throws IngestError on any problem.
 */
export async function buildCsvRun(files: string[], opts: IngestCsvOptions): Promise<{ bundle: RunBundle; summary: IngestCsvSummary }> {
  const p = await prepareCsvRun(files, opts);
  try {
    const out: Record<string, unknown> = { run: p.bundle.run };
    const conn = await p.db.connect();
    try {
      for (const t of CSV_TABLES) {
        const rows = p.bundle[t] as SqlRows | undefined;
        if (!rows) continue;
        // Timestamps as ISO text to the microsecond (as the schema's row objects hold them).
        const inner = `SELECT ${quoteLiteral(p.summary.runId)} AS run_id, * FROM (${rows.sql})`;
        const sql = t === 'episodes' ? `SELECT * REPLACE (strftime(started_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS started_at) FROM (${inner})` : inner;
        const r = await conn.runAndReadAll(sql);
        out[t] = r.getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, toPlain(v)])));
      }
    } finally {
      conn.closeSync();
    }
    return { bundle: out as RunBundle, summary: p.summary };
  } finally {
    await p.close();
  }
}

/**
 * Ingests CSV files as one run (see the module comment). Returns the summary, including the
 * mapping used so the CLI can print it; with `dryRun`, checks everything and writes nothing.
 */
export async function ingestCsv(files: string[], opts: IngestCsvOptions): Promise<IngestCsvSummary> {
  const p = await prepareCsvRun(files, opts);
  try {
    if (opts.dryRun) return p.summary;
    // The tables are written side by side, one DuckDB thread each: an order-preserving COPY over
    // two threads spends more CPU and memory than it gains (the rows keep the file's order).
    const conn = await p.db.connect();
    try {
      await conn.run('SET threads = 1');
    } finally {
      conn.closeSync();
    }
    await writeRun(opts.traces, p.bundle, { replace: opts.replace, trusted: true, db: p.db });
    p.summary.written = true;
    return p.summary;
  } finally {
    await p.close();
  }
}

export type { CsvFileProblem };
