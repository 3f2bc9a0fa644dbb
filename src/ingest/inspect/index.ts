/**
 * Inspect AI log -> one run bundle, validated but not written (the writing, the all-or-nothing
 * policy across files and the CLI summary live in `src/ingest/ingest-inspect.ts`).
 *
 * One log file is one run. Samples are read one at a time, mapped and handed to a sink
 * (`scanInspectLog`: the ingest streams them into a `RunWriter`; `loadInspectLog` keeps them in
 * memory, for small logs and tests). Every row is checked against its zod table schema here, so a problem is reported
 * with the file, the zip member and the field, and the later write can skip re-validation.
 */
import { basename } from 'node:path';
import type { StandoffError } from '../../errors.ts';
import {
  RUN_ID_PATTERN,
  type EpisodeRow,
  type MessageRow,
  type RunBundle,
  type RunRow,
  type ScoreRow,
  type TableName,
} from '../../schema/tables.ts';
import { mapRun, type MappedSample } from './map.ts';
import type { ZipLimits } from './zip.ts';
import type { InspectPool } from './pool.ts';
import { processUnit, validateRows, type StagedBlock, type UnitContext, type UnitFacts, type UnitResult, type UnitSample } from './unit.ts';
import { naturalCompare, openInspectLog, problem, sha256File, type InspectHeader, type InspectLogReader } from './read-eval.ts';

export { parseJsonTolerant, openInspectLog, sha256File } from './read-eval.ts';
export { ZipReader, ZipError } from './zip.ts';
export { mapScoreValue, decisionFacts, stripSecrets } from './map.ts';

export interface LoadedInspectLog {
  /** The path as given. */
  file: string;
  format: 'eval' | 'json';
  sha256: string;
  /** The model under evaluation (`eval.model`). */
  model: string;
  rebuiltFromJournal: boolean;
  bundle: RunBundle & { episodes: EpisodeRow[]; messages: MessageRow[]; scores: ScoreRow[] };
  /** `results.completed_samples` from the header (null for a rebuilt header or when absent). */
  expectedSamples: number | null;
  /** Mean of the numeric score values per scorer, recomputed from the samples. */
  scorerMeans: Record<string, { mean: number | null; n: number }>;
}

export interface LoadInspectOptions {
  /** Run id to use instead of the derived one. */
  runId?: string;
  /** Stop collecting after this many problems (default 20). */
  maxProblems?: number;
  /** Caps on inflated `.eval` members (default `DEFAULT_ZIP_LIMITS`: 256 MiB, ratio 1000). */
  zipLimits?: ZipLimits;
  /** Worker threads that read a `.eval` log's units, started when first asked for (default: none, all in this thread). */
  pool?: () => InspectPool;
  /** Logs with fewer sample units than this are read in this thread (default {@link PARALLEL_MIN_UNITS}). */
  parallelMinUnits?: number;
}

/**
 * What the scan hands its sink: the mapped rows (`keepMapped`); rows for a run writer (`stage`):
 * staged as JSON lines when workers read the log, else the mapped rows.
 */
interface ScanOutput {
  keepMapped?: boolean;
  stage?: boolean;
}

/** Below this many sample units a log is read in the calling thread (starting workers costs more). */
export const PARALLEL_MIN_UNITS = 256;

export interface LoadInspectResult {
  log: LoadedInspectLog | null;
  problems: StandoffError[];
  /** Collection stopped at `maxProblems` with samples left unchecked. */
  truncated: boolean;
}

/**
 * Default run id: `inspect-<inspect run id>-<first 8 hex of the file's SHA-256>` (the same file
 * always gets the same id; two tasks of one Inspect run, which share its run id, do not collide).
 */
export function defaultRunId(header: InspectHeader, sha256: string): string {
  const raw = (header.eval.run_id ?? '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 96);
  const id = raw ? `inspect-${raw}-${sha256.slice(0, 8)}` : `inspect-${sha256.slice(0, 16)}`;
  return RUN_ID_PATTERN.test(id) ? id : `inspect-${sha256.slice(0, 16)}`;
}

/**
 * Where `scanInspectLog` sends the rows of each valid sample. `begin` is called once with the run
 * id before the first rows (not at all when the file cannot be read); `rows` once per sample
 * (`unit` counts samples in reading order), only while no problem has been found; `end` with the
 * run row and each unit's rank in the run's order (by sample id, numbers numerically, then epoch)
 * when the whole file is clean.
 */
export interface InspectRowSink {
  begin(runId: string): Promise<void>;
  /** A valid unit: its rows `mapped` (with `keepMapped`) and `staged` (with `stage`). */
  rows(unit: number, sample: UnitSample): Promise<void>;
  /** Staged lines of units already given to `rows` without their rows (a worker staged them). */
  block(block: StagedBlock): Promise<void>;
  end(run: RunRow, rank: Int32Array): Promise<void>;
}


/** What `scanInspectLog` found: the run and its counts when clean, else the problems. */
export interface InspectScan {
  log: Omit<LoadedInspectLog, 'bundle'> & { run: RunRow; counts: Partial<Record<TableName, number>> } | null;
  problems: StandoffError[];
  truncated: boolean;
}

/** What a scan gathers while it reads a log's samples. */
interface ScanTally {
  /** Sample id and epoch of each unit, in reading order. */
  keys: { id: string; epoch: number }[];
  /** Episode id -> the member it came from (duplicates are problems). */
  seen: Map<string, string>;
  maxEpoch: number | null;
  errored: number;
  counts: { episodes: number; messages: number; scores: number };
  /** Numeric score values per scorer. */
  sums: Map<string, { sum: number; n: number }>;
}

/** Counts a valid sample's rows and score values into the tally. */
function tallySample(t: ScanTally, facts: UnitFacts, epoch: number): void {
  if (facts.errored) t.errored++;
  t.maxEpoch = Math.max(t.maxEpoch ?? 0, epoch);
  t.counts.episodes++;
  t.counts.messages += facts.messages;
  t.counts.scores += facts.scores.length;
  for (const [scorer, value] of facts.scores) {
    const acc = t.sums.get(scorer) ?? { sum: 0, n: 0 };
    if (value !== null) {
      acc.sum += value;
      acc.n++;
    }
    t.sums.set(scorer, acc);
  }
}

/** The unit results of a log read in this thread, in unit order. */
function* unitsInThread(reader: InspectLogReader, ctx: UnitContext): Generator<UnitResult> {
  for (const item of reader.samples()) yield processUnit(item, ctx);
}

/**
 * Goes through every sample unit's result, in unit order: duplicates, shape and rows checked,
 * rows sent to `sink` while the file is clean. Stops at `max` problems (returns true: truncated).
 */
async function scanSamples(
  units: Iterable<UnitResult> | AsyncIterable<UnitResult | { block: StagedBlock }>,
  ctx: { header: boolean; path: string; sink: InspectRowSink; problems: StandoffError[]; max: number },
  t: ScanTally,
): Promise<boolean> {
  const { problems } = ctx;
  for await (const item of units) {
    if (problems.length >= ctx.max) return true;
    if ('block' in item) {
      // A worker's staged lines of the units just read: written only while the file is clean.
      if (problems.length === 0 && ctx.header) await ctx.sink.block(item.block);
      continue;
    }
    if (item.error) {
      problems.push(item.error);
      continue;
    }
    const episodeId = `${item.id}/${item.epoch}`; // episodeIdOf
    const earlier = t.seen.get(episodeId);
    if (earlier !== undefined) {
      problems.push(problem('duplicateSample', ctx.path, item.member, `sample ${item.id} epoch ${item.epoch} also appears in ${earlier}`));
      continue;
    }
    t.seen.set(episodeId, item.member);
    if (!ctx.header) continue; // header problem already recorded: keep checking the samples only
    if (item.invalid) {
      problems.push(item.invalid);
      continue;
    }
    tallySample(t, item.facts!, item.epoch);
    // Rows go on only while the file is clean: after a problem the run will not be written.
    if (problems.length === 0) await ctx.sink.rows(t.keys.length, item);
    t.keys.push({ id: String(item.id), epoch: item.epoch });
  }
  return false;
}

/** Each unit's rank in the run's order (by sample id, numbers numerically, then epoch). */
export function unitRanks(keys: readonly { id: string; epoch: number }[]): Int32Array {
  const compare = (a: number, b: number) => naturalCompare(keys[a]!.id, keys[b]!.id) || keys[a]!.epoch - keys[b]!.epoch;
  const rank = new Int32Array(keys.length);
  // Units read in the run's order (as `.eval` samples are listed): the stable sort would keep them as they are.
  let inOrder = true;
  for (let u = 1; u < keys.length && inOrder; u++) inOrder = compare(u - 1, u) <= 0;
  if (inOrder) {
    for (let u = 0; u < keys.length; u++) rank[u] = u;
    return rank;
  }
  const order = Array.from(keys.keys()).sort(compare);
  order.forEach((unit, i) => (rank[unit] = i));
  return rank;
}

/** The scan's summary of a clean log: row counts per table and the mean of each scorer's numeric values. */
function scanSummary(t: ScanTally): { counts: Partial<Record<TableName, number>>; scorerMeans: LoadedInspectLog['scorerMeans'] } {
  const scorerMeans: LoadedInspectLog['scorerMeans'] = {};
  for (const k of [...t.sums.keys()].sort()) {
    const v = t.sums.get(k)!;
    scorerMeans[k] = { mean: v.n > 0 ? v.sum / v.n : null, n: v.n };
  }
  const counts: Partial<Record<TableName, number>> = { runs: 1, episodes: t.counts.episodes };
  if (t.counts.messages > 0) counts.messages = t.counts.messages;
  if (t.counts.scores > 0) counts.scores = t.counts.scores;
  return { counts, scorerMeans };
}

/**
 * Reads, maps and validates one Inspect log, sending rows to `sink` as it goes (so a log of any
 * size needs memory for one sample at a time, plus a key per sample). Never throws for bad input:
 * it returns problems (the sink then has had `begin` and maybe some `rows`, but no `end`).
 */
export async function scanInspectLog(path: string, sink: InspectRowSink, opts: LoadInspectOptions & ScanOutput = {}): Promise<InspectScan> {
  const max = opts.maxProblems ?? 20;
  const opened = openInspectLog(path, opts.zipLimits);
  const problems = [...opened.problems];
  const reader = opened.reader;
  if (!reader) return { log: null, problems, truncated: false };
  try {
    const header = reader.header;
    const sha256 = await sha256File(path);
    const runId = opts.runId ?? (header ? defaultRunId(header, sha256) : 'unknown');
    const model = header?.eval.model ?? '';
    if (header && problems.length === 0) await sink.begin(runId);
    const t: ScanTally = { keys: [], seen: new Map(), maxEpoch: null, errored: 0, counts: { episodes: 0, messages: 0, scores: 0 }, sums: new Map() };
    const pool = opts.pool;
    const parallel = pool !== undefined && reader.format === 'eval' && reader.sampleUnits >= (opts.parallelMinUnits ?? PARALLEL_MIN_UNITS);
    // Rows for a writer: staged as JSON lines by workers; read in this thread, the mapped rows go to the writer's appender.
    const stage = opts.stage === true;
    const ctx: UnitContext = { file: path, runId, model, map: header !== null, keepMapped: opts.keepMapped === true || (stage && !parallel), stage: stage && parallel };
    const units = parallel ? pool().scan(path, opts.zipLimits, reader.sampleUnits, ctx) : unitsInThread(reader, ctx);
    const truncated = await scanSamples(units, { header: header !== null, path, sink, problems, max }, t);
    if (!header || problems.length > 0) return { log: null, problems: problems.slice(0, max), truncated };

    const run = mapRun(header, {
      runId,
      fileName: basename(path),
      sha256,
      format: reader.format,
      rebuiltFromJournal: reader.rebuiltFromJournal,
      maxEpoch: t.maxEpoch,
      samples: t.keys.length,
      erroredSamples: t.errored,
    });
    if (!validateRows(path, problems, 'runs', [run], reader.headerMember)) return { log: null, problems, truncated };
    await sink.end(run, unitRanks(t.keys));
    const { counts, scorerMeans } = scanSummary(t);
    const completed = header.results?.completed_samples;
    const expectedSamples = reader.rebuiltFromJournal || typeof completed !== 'number' ? null : completed;
    return {
      log: { file: path, format: reader.format, sha256, model, rebuiltFromJournal: reader.rebuiltFromJournal, run, counts, expectedSamples, scorerMeans },
      problems,
      truncated,
    };
  } finally {
    reader.close();
  }
}

/** Reads, maps and validates one Inspect log into memory (rows in the run's order). Never throws for bad input: it returns problems. */
export async function loadInspectLog(path: string, opts: LoadInspectOptions = {}): Promise<LoadInspectResult> {
  const units: MappedSample[] = [];
  const bundle: LoadedInspectLog['bundle'] = { run: null as unknown as RunRow, episodes: [], messages: [], scores: [] };
  const scan = await scanInspectLog(
    path,
    {
      begin: async () => undefined,
      rows: async (unit, sample) => {
        units[unit] = sample.mapped!;
      },
      block: async () => undefined, // keepMapped: units are read in this thread
      end: async (run, rank) => {
        const ordered: MappedSample[] = new Array(units.length);
        for (let u = 0; u < units.length; u++) ordered[rank[u]!] = units[u]!;
        bundle.run = run;
        for (const m of ordered) {
          bundle.episodes.push(m.episode);
          for (const x of m.messages) bundle.messages.push(x);
          for (const x of m.scores) bundle.scores.push(x);
        }
      },
    },
    { ...opts, keepMapped: true },
  );
  if (!scan.log) return { log: null, problems: scan.problems, truncated: scan.truncated };
  const { run: _run, counts: _counts, ...rest } = scan.log;
  return { log: { ...rest, bundle }, problems: scan.problems, truncated: scan.truncated };
}
