/**
 * Inspect AI log -> one run bundle, validated but not written (the writing, the all-or-nothing
 * policy across files and the CLI summary live in `src/ingest/ingest-inspect.ts`).
 *
 * One log file is one run. Samples are read one at a time and mapped immediately; only the rows
 * accumulate. Every row is checked against its zod table schema here, so a problem is reported
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
  type ScoreRow,
  type TableName,
} from '../../schema/tables.ts';
import { mapRun, mapSample, episodeIdOf } from './map.ts';
import { openInspectLog, problem, sha256File, type InspectHeader } from './read-eval.ts';

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

function naturalCompare(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (a !== '' && b !== '' && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Reads, maps and validates one Inspect log. Never throws for bad input: it returns problems. */
export async function loadInspectLog(path: string, opts: LoadInspectOptions = {}): Promise<LoadInspectResult> {
  const max = opts.maxProblems ?? 20;
  const opened = openInspectLog(path);
  const problems = [...opened.problems];
  const reader = opened.reader;
  if (!reader) return { log: null, problems, truncated: false };
  try {
    const header = reader.header;
    const sha256 = await sha256File(path);
    const runId = opts.runId ?? (header ? defaultRunId(header, sha256) : 'unknown');
    const model = header?.eval.model ?? '';

    type Group = { id: string; epoch: number; mapped: ReturnType<typeof mapSample> };
    const groups: Group[] = [];
    const seen = new Map<string, string>();
    let maxEpoch: number | null = null;
    let errored = 0;
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
      groups.push({ id: String(sample.id), epoch: sample.epoch, mapped });
    }
    if (!header || problems.length > 0) return { log: null, problems: problems.slice(0, max), truncated };

    groups.sort((a, b) => naturalCompare(a.id, b.id) || a.epoch - b.epoch);
    const run = mapRun(header, {
      runId,
      fileName: basename(path),
      sha256,
      format: reader.format,
      rebuiltFromJournal: reader.rebuiltFromJournal,
      maxEpoch,
      samples: groups.length,
      erroredSamples: errored,
    });
    if (!validate('runs', [run], reader.headerMember)) return { log: null, problems, truncated };

    const episodes: EpisodeRow[] = [];
    const messages: MessageRow[] = [];
    const scores: ScoreRow[] = [];
    const sums = new Map<string, { sum: number; n: number; rows: number }>();
    for (const g of groups) {
      episodes.push(g.mapped.episode);
      for (const m of g.mapped.messages) messages.push(m);
      for (const s of g.mapped.scores) {
        scores.push(s);
        const acc = sums.get(s.scorer) ?? { sum: 0, n: 0, rows: 0 };
        acc.rows++;
        if (s.value !== null) {
          acc.sum += s.value;
          acc.n++;
        }
        sums.set(s.scorer, acc);
      }
    }
    const scorerMeans: LoadedInspectLog['scorerMeans'] = {};
    for (const [k, v] of sums) scorerMeans[k] = { mean: v.n > 0 ? v.sum / v.n : null, n: v.n };
    const completed = header.results?.completed_samples;
    return {
      log: {
        file: path,
        format: reader.format,
        sha256,
        model,
        rebuiltFromJournal: reader.rebuiltFromJournal,
        bundle: { run, episodes, messages, scores },
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
