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
import type { z } from 'zod';
import type { StandoffError } from '../../errors.ts';
import {
  RUN_ID_PATTERN,
  TABLES,
  type EpisodeRow,
  type MessageRow,
  type RunBundle,
  type RunRow,
  type ScoreRow,
  type TableName,
} from '../../schema/tables.ts';
import { mapRun, mapSample, episodeIdOf } from './map.ts';
import type { ZipLimits } from './zip.ts';
import { naturalCompare, openInspectLog, problem, sha256File, type InspectHeader } from './read-eval.ts';

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
}

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
  rows(unit: number, mapped: MappedSample): Promise<void>;
  end(run: RunRow, rank: Int32Array): Promise<void>;
}

type MappedSample = ReturnType<typeof mapSample>;

/** What `scanInspectLog` found: the run and its counts when clean, else the problems. */
export interface InspectScan {
  log: Omit<LoadedInspectLog, 'bundle'> & { run: RunRow; counts: Partial<Record<TableName, number>> } | null;
  problems: StandoffError[];
  truncated: boolean;
}

/**
 * Reads, maps and validates one Inspect log, sending rows to `sink` as it goes (so a log of any
 * size needs memory for one sample at a time, plus a key per sample). Never throws for bad input:
 * it returns problems (the sink then has had `begin` and maybe some `rows`, but no `end`).
 */
export async function scanInspectLog(path: string, sink: InspectRowSink, opts: LoadInspectOptions = {}): Promise<InspectScan> {
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

    const keys: { id: string; epoch: number }[] = [];
    const seen = new Map<string, string>();
    let maxEpoch: number | null = null;
    let errored = 0;
    const counts = { episodes: 0, messages: 0, scores: 0 };
    const sums = new Map<string, { sum: number; n: number }>();
    const validate = (table: TableName, rows: readonly object[], member: string): boolean => {
      const schema = TABLES[table] as z.ZodObject;
      for (let i = 0; i < rows.length; i++) {
        const r = schema.safeParse(rows[i]);
        if (!r.success) {
          const issue = r.error.issues[0]!;
          problems.push(problem('invalidRow', path, member, `${table} row ${i + 1}: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`));
          return false;
        }
      }
      return true;
    };

    let truncated = false;
    for (const item of reader.samples()) {
      if (problems.length >= max) {
        truncated = true;
        break;
      }
      if (item.error) {
        problems.push(item.error);
        continue;
      }
      const sample = item.sample;
      const episodeId = episodeIdOf(sample);
      const earlier = seen.get(episodeId);
      if (earlier !== undefined) {
        problems.push(problem('duplicateSample', path, item.member, `sample ${sample.id} epoch ${sample.epoch} also appears in ${earlier}`));
        continue;
      }
      seen.set(episodeId, item.member);
      if (!header) continue; // header problem already recorded: keep checking the samples only
      const mapped = mapSample(runId, model, sample);
      if (
        !validate('episodes', [mapped.episode], item.member) ||
        !validate('messages', mapped.messages, item.member) ||
        !validate('scores', mapped.scores, item.member)
      ) {
        continue;
      }
      if (mapped.episode.status === 'error') errored++;
      maxEpoch = Math.max(maxEpoch ?? 0, sample.epoch);
      counts.episodes++;
      counts.messages += mapped.messages.length;
      counts.scores += mapped.scores.length;
      for (const sc of mapped.scores) {
        const acc = sums.get(sc.scorer) ?? { sum: 0, n: 0 };
        if (sc.value !== null) {
          acc.sum += sc.value;
          acc.n++;
        }
        sums.set(sc.scorer, acc);
      }
      // Rows go on only while the file is clean: after a problem the run will not be written.
      if (problems.length === 0) await sink.rows(keys.length, mapped);
      keys.push({ id: String(sample.id), epoch: sample.epoch });
    }
    if (!header || problems.length > 0) return { log: null, problems: problems.slice(0, max), truncated };

    const order = Array.from(keys.keys()).sort((a, b) => naturalCompare(keys[a]!.id, keys[b]!.id) || keys[a]!.epoch - keys[b]!.epoch);
    const rank = new Int32Array(keys.length);
    order.forEach((unit, i) => (rank[unit] = i));
    const run = mapRun(header, {
      runId,
      fileName: basename(path),
      sha256,
      format: reader.format,
      rebuiltFromJournal: reader.rebuiltFromJournal,
      maxEpoch,
      samples: keys.length,
      erroredSamples: errored,
    });
    if (!validate('runs', [run], reader.headerMember)) return { log: null, problems, truncated };
    await sink.end(run, rank);

    const scorerMeans: LoadedInspectLog['scorerMeans'] = {};
    for (const k of [...sums.keys()].sort()) {
      const v = sums.get(k)!;
      scorerMeans[k] = { mean: v.n > 0 ? v.sum / v.n : null, n: v.n };
    }
    const completed = header.results?.completed_samples;
    const tableCounts: Partial<Record<TableName, number>> = { runs: 1, episodes: counts.episodes };
    if (counts.messages > 0) tableCounts.messages = counts.messages;
    if (counts.scores > 0) tableCounts.scores = counts.scores;
    return {
      log: {
        file: path,
        format: reader.format,
        sha256,
        model,
        rebuiltFromJournal: reader.rebuiltFromJournal,
        run,
        counts: tableCounts,
        expectedSamples: reader.rebuiltFromJournal || typeof completed !== 'number' ? null : completed,
        scorerMeans,
      },
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
      rows: async (unit, mapped) => {
        units[unit] = mapped;
      },
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
    opts,
  );
  if (!scan.log) return { log: null, problems: scan.problems, truncated: scan.truncated };
  const { run: _run, counts: _counts, ...rest } = scan.log;
  return { log: { ...rest, bundle }, problems: scan.problems, truncated: scan.truncated };
}
