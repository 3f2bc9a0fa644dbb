/**
 * lm-evaluation-harness output -> runs in the trace store: planning (which results file and task
 * becomes which run) and the streaming scan of one task's samples file. The writing, the
 * all-or-nothing policy across files and the CLI summary live in `src/ingest/ingest-lm-eval.ts`.
 *
 * Mapping (why: see `./samples.ts` for the samples lines, `./results.ts` for the results file):
 * - one run per (results file, leaf task): `runs.source` `lm-eval`, `suite` = the task, config =
 *   model, harness settings and the task's config, `reported_metrics` = the task's and its groups'
 *   aggregates as reported. Groups have no samples of their own, so no run: their reported numbers
 *   ride with each member task's run (`group: true`) and are reconciled at ingest.
 * - one episode per document: `scenario_id` = `doc_id`, `episode_id` = `<doc_id>/1`, epoch 1
 *   (repeats are reduced before scoring: no per-repeat score), `metadata` = the doc's scalar fields
 *   plus lm-eval's target and hashes; the Standoff-protocol columns lm-eval does not measure
 *   (`target`, `gathered_evidence`, `log_reads`, `turns`, tokens, latency) are NULL.
 * - one score row per (document, filter, metric) with a number: scorer `<metric>` under the filter
 *   `none`, else `<metric>/<filter>` (`exact_match/strict-match`); `answer` = the filtered response
 *   of a generated answer. Corpus-level metrics (per-sample values that are not numbers) give no row.
 * - generated answers give messages: the prompt (user) and each raw response (assistant).
 */
import { createReadStream, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { z } from 'zod';
import { StandoffError, dataError, oneLine } from '../../errors.ts';
import { TABLES, type EpisodeRow, type MessageRow, type RunRow, type ScoreRow, type TableName } from '../../schema/tables.ts';
import { JsonTooDeep, isTooDeep, naturalCompare, parseJsonTolerant } from '../inspect/read-eval.ts';
import { findLmEvalOutputs, type LmEvalOutput } from './layout.ts';
import { MetricTally, tallyKey, type TaskTallies } from './reconcile.ts';
import { aggregationOf, filterNamesOf, outputTypeOf, parseLmEvalResults, reportedEntries, reportedMetricsFor, scorerName, type LmEvalResults } from './results.ts';
import { defaultLmEvalRunId, mapLmEvalRun } from './run.ts';
import { mapEpisode, mapMessages, mapScore, parseSampleLine, sampleNumber, scoredAnswer, type SampleLine } from './samples.ts';

export { findLmEvalOutputs } from './layout.ts';
export { parseLmEvalResults } from './results.ts';
export { reconcileResults, reconciliationTable, TOLERANCE, type ReconcileRow } from './reconcile.ts';

/** One task of one results file, to become one run. */
export interface PlannedTask {
  task: string;
  samplesFile: string;
  runId: string;
}

export interface PlannedOutput {
  output: LmEvalOutput;
  results: LmEvalResults;
  resultsSha256: string;
  tasks: PlannedTask[];
}

export interface LmEvalPlan {
  outputs: PlannedOutput[];
  problems: StandoffError[];
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/**
 * Finds and parses the results files under `path`, pairs each leaf task with its samples file and
 * gives it a run id (`runIdFor`, default `defaultLmEvalRunId`). Problems (an unreadable results
 * file, a samples file whose task the results do not list, a task without a samples file) are
 * collected, not thrown; a path without any results file throws.
 */
export function planLmEval(path: string, runIdFor?: (task: string, results: LmEvalResults) => string): LmEvalPlan {
  const layout = findLmEvalOutputs(path);
  const problems = [...layout.problems];
  const outputs: PlannedOutput[] = [];
  for (const output of layout.outputs) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(output.resultsFile);
    } catch (err) {
      problems.push(dataError('ingest.unreadable', `${output.resultsFile}: cannot read: ${(err as Error).message}`));
      continue;
    }
    let results: LmEvalResults;
    try {
      results = parseLmEvalResults(bytes.toString('utf8'), output.resultsFile);
    } catch (err) {
      if (!(err instanceof StandoffError)) throw err;
      problems.push(err);
      continue;
    }
    const known = new Set(results.tasks);
    const tasks: PlannedTask[] = [];
    for (const s of output.samples) {
      if (!known.has(s.task)) {
        const list = results.tasks.length > 0 ? results.tasks.join(', ') : 'none';
        problems.push(dataError('ingest.unknownTask', `${s.file}: task "${s.task}" is not a task of ${output.resultsFile} (its tasks: ${list})`));
        continue;
      }
      tasks.push({ task: s.task, samplesFile: s.file, runId: '' });
    }
    for (const t of results.tasks) {
      if (!output.samples.some((s) => s.task === t)) {
        problems.push(dataError('ingest.noSamples', `${output.resultsFile}: task "${t}" has no samples file (samples_${t}_${output.dateId}.jsonl; run lm_eval with --log_samples)`));
      }
    }
    const planned: PlannedOutput = { output, results, resultsSha256: sha256(bytes), tasks };
    for (const t of tasks) t.runId = runIdFor ? runIdFor(t.task, results) : defaultLmEvalRunId(t.task, planned.resultsSha256);
    outputs.push(planned);
  }
  return { outputs, problems };
}

/** Where `scanLmEvalTask` sends the rows of each document, as `scanInspectLog` does (`src/ingest/inspect/index.ts`). */
export interface LmEvalRowSink {
  begin(runId: string): Promise<void>;
  /** Rows of one line; `unit` numbers documents in order of first appearance (a document's lines may be far apart). */
  rows(unit: number, rows: { episodes: EpisodeRow[]; messages: MessageRow[]; scores: ScoreRow[] }): Promise<void>;
  /** When the file was read clean: the run row and each unit's rank in doc_id order. */
  end(run: RunRow, rank: Int32Array): Promise<void>;
}

export interface ScannedTask {
  runId: string;
  task: string;
  model: string;
  resultsFile: string;
  samplesFile: string;
  samplesSha256: string;
  /** Distinct documents. */
  docs: number;
  /** Scorers with at least one score row. */
  scorers: string[];
  counts: Partial<Record<TableName, number>>;
  tallies: TaskTallies;
  run: RunRow;
}

export interface TaskScan {
  task: ScannedTask | null;
  problems: StandoffError[];
  truncated: boolean;
}

function validator(file: string, problems: StandoffError[]) {
  return (table: TableName, rows: readonly object[], line: number): boolean => {
    const schema = TABLES[table] as z.ZodObject;
    for (let i = 0; i < rows.length; i++) {
      const r = schema.safeParse(rows[i]);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        problems.push(dataError('ingest.invalidRow', `${file}: line ${line}: ${table} row: field "${issue.path.join('.')}": ${issue.message.toLowerCase()}`));
        return false;
      }
    }
    return true;
  };
}

/** Longest samples line read, in bytes (`STANDOFF_MAX_LINE_BYTES` overrides): lm-eval writes one sample per line. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

/** A longer line could not be held as one string anyway (V8's limit, 2^29 - 24 characters). */
const MAX_STRING = 2 ** 29 - 24;

function maxLineBytes(): number {
  const env = Number(process.env.STANDOFF_MAX_LINE_BYTES);
  return Number.isInteger(env) && env > 0 ? Math.min(env, MAX_STRING) : DEFAULT_MAX_LINE_BYTES;
}

/** A samples file read as a stream: hashed as it goes, a line past the cap refused before it is held whole. */
interface SamplesStream {
  input: ReturnType<typeof createReadStream>;
  hash: ReturnType<typeof createHash>;
  /** Settles when the file was read to its end (or failed). */
  done: Promise<void>;
}

function openSamplesStream(file: string): SamplesStream {
  const hash = createHash('sha256');
  const input = createReadStream(file);
  const maxLine = maxLineBytes();
  let lineBytes = 0; // bytes of the line being read so far
  let linesSeen = 0;
  let tooLong: StandoffError | null = null;
  input.on('data', (chunk) => {
    const b = chunk as Buffer;
    hash.update(b);
    // A line must fit in a string (V8 stops near 512 MiB): refuse one past the cap before it is read whole.
    for (let at = 0; ; ) {
      const nl = b.indexOf(10, at);
      lineBytes += (nl < 0 ? b.length : nl) - at;
      if (lineBytes > maxLine && !tooLong) {
        tooLong = dataError('ingest.lineTooLong', `${file}: line ${linesSeen + 1}: longer than ${maxLine} bytes (STANDOFF_MAX_LINE_BYTES sets the cap; default ${DEFAULT_MAX_LINE_BYTES}): not one sample per line?`);
        input.destroy(tooLong);
        return;
      }
      if (nl < 0) break;
      linesSeen++;
      lineBytes = 0;
      at = nl + 1;
    }
  });
  const done = new Promise<void>((resolve, reject) => {
    input.on('end', resolve);
    input.on('error', reject);
  });
  done.catch(() => undefined); // awaited when the file is read to its end; an error also ends the loop
  return { input, hash, done };
}

/** What a task's scan keeps while it reads (memory: a key per document and per (document, filter)). */
interface TaskState {
  p: PlannedOutput;
  t: PlannedTask;
  model: string;
  file: string;
  sink: LmEvalRowSink;
  problems: StandoffError[];
  validate: ReturnType<typeof validator>;
  filters: string[];
  generative: boolean;
  reported: ReturnType<typeof reportedEntries>;
  tallies: TaskTallies;
  /** doc_id -> unit. */
  docs: Map<string, number>;
  /** doc_id \0 filter -> line. */
  lineOf: Map<string, number>;
  /** doc_id -> lines so far (files without "filter"). */
  occurrences: Map<string, number>;
  scorers: Set<string>;
  counts: { episodes: number; messages: number; scores: number };
  begun: boolean;
}

/** A line's problem, naming the file and line. */
const lineProblem = (st: TaskState, line: number, text: string, code = 'badSample') =>
  st.problems.push(dataError(`ingest.${code}`, `${st.file}: line ${line}: ${oneLine(text)}`));

/** One line parsed and shaped as a sample, or null with its problem. */
function parseTaskLine(st: TaskState, text: string, lineNo: number): SampleLine | null {
  let value: unknown;
  try {
    value = parseJsonTolerant(text);
  } catch (err) {
    lineProblem(st, lineNo, err instanceof RangeError ? new JsonTooDeep().message : `not valid JSON: ${(err as Error).message}`, 'badJson');
    return null;
  }
  if (isTooDeep(value)) {
    lineProblem(st, lineNo, new JsonTooDeep().message, 'badJson');
    return null;
  }
  const line = parseSampleLine(value);
  if (typeof line === 'string') {
    lineProblem(st, lineNo, line);
    return null;
  }
  return line;
}

/** The filter a line scores (given, or the k-th of the task's filters), or null when its (doc, filter) is a duplicate. */
function claimFilter(st: TaskState, line: SampleLine, lineNo: number): string | null {
  const k = st.occurrences.get(line.docId) ?? 0;
  st.occurrences.set(line.docId, k + 1);
  const filter = line.filter ?? st.filters[k];
  if (filter === undefined) {
    const n = st.filters.length;
    lineProblem(st, lineNo, `doc_id ${line.docId} appears ${k + 1} times, but the task has ${n} filter${n === 1 ? '' : 's'} (${st.filters.join(', ')}): a duplicated doc_id`, 'duplicateDoc');
    return null;
  }
  const key = `${line.docId}\u0000${filter}`;
  const earlier = st.lineOf.get(key);
  if (earlier !== undefined) {
    lineProblem(st, lineNo, `doc_id ${line.docId} with filter "${filter}" also on line ${earlier}: a duplicated doc_id`, 'duplicateDoc');
    return null;
  }
  st.lineOf.set(key, lineNo);
  return filter;
}

/** A line's rows: the episode (and messages) on a document's first line, a score per metric with a number; metric values tallied. */
function lineRows(st: TaskState, line: SampleLine, filter: string): { unit: number; rows: { episodes: EpisodeRow[]; messages: MessageRow[]; scores: ScoreRow[] } } {
  const { t } = st;
  let unit = st.docs.get(line.docId);
  const rows = { episodes: [] as EpisodeRow[], messages: [] as MessageRow[], scores: [] as ScoreRow[] };
  if (unit === undefined) {
    unit = st.docs.size;
    st.docs.set(line.docId, unit);
    rows.episodes.push(mapEpisode(t.runId, st.model, line));
    if (st.generative) rows.messages.push(...mapMessages(t.runId, line));
  }
  const names = line.metrics ?? st.reported.filter((e) => e.filter === filter && e.metric in line.raw).map((e) => e.metric);
  const answer = scoredAnswer(line);
  for (const m of names) {
    const v = sampleNumber(line.raw[m]);
    const tk = tallyKey(m, filter);
    let tally = st.tallies.get(tk);
    if (!tally) st.tallies.set(tk, (tally = new MetricTally(aggregationOf(st.p.results, t.task, m) === 'median')));
    tally.add(v);
    if (v === null) continue;
    const scorer = scorerName(m, filter);
    st.scorers.add(scorer);
    rows.scores.push(mapScore(t.runId, line, scorer, v, answer));
  }
  return { unit, rows };
}

/** Reads the lines: each checked, its rows validated and sent to the sink while the file is clean. Returns the last line number and whether it stopped at `max` problems. */
async function readTaskLines(st: TaskState, s: SamplesStream, max: number): Promise<{ lineNo: number; truncated: boolean }> {
  const rl = createInterface({ input: s.input, crlfDelay: Infinity });
  let lineNo = 0;
  let truncated = false;
  try {
    for await (const rawLine of rl) {
      lineNo++;
      const text = lineNo === 1 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
      if (text.trim() === '') continue;
      if (st.problems.length >= max) {
        truncated = true;
        break;
      }
      const line = parseTaskLine(st, text, lineNo);
      const filter = line && claimFilter(st, line, lineNo);
      if (!line || filter === null) continue;
      if (!st.begun && st.problems.length === 0) {
        await st.sink.begin(st.t.runId);
        st.begun = true;
      }
      const { unit, rows } = lineRows(st, line, filter);
      if (!st.validate('episodes', rows.episodes, lineNo) || !st.validate('messages', rows.messages, lineNo) || !st.validate('scores', rows.scores, lineNo)) continue;
      st.counts.episodes += rows.episodes.length;
      st.counts.messages += rows.messages.length;
      st.counts.scores += rows.scores.length;
      if (st.problems.length === 0) await st.sink.rows(unit, rows);
    }
    if (!truncated) await s.done;
  } catch (err) {
    // A file that cannot be read is a problem of the input; anything else (the sink's store
    // errors, such as a run that already exists) goes to the caller as it is.
    if (err instanceof StandoffError && err.code === 'ingest.lineTooLong') st.problems.push(err);
    else if (err instanceof StandoffError || typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    else st.problems.push(dataError('ingest.unreadable', `${st.file}: cannot read: ${(err as Error).message}`));
  } finally {
    rl.close();
    s.input.destroy();
  }
  return { lineNo, truncated };
}

/** Each document's rank in doc_id order (numbers numerically). */
export function docRanks(docs: Map<string, number>): Int32Array {
  const ids = [...docs.keys()];
  const order = ids.map((_, u) => u).sort((a, b) => naturalCompare(ids[a]!, ids[b]!));
  const rank = new Int32Array(ids.length);
  order.forEach((unit, i) => (rank[unit] = i));
  return rank;
}

/** The run of a task read clean: its row (reported metrics named by the scorers that exist), validated, sent to the sink's `end`. */
async function finishTask(st: TaskState, samplesSha256: string, lineNo: number, truncated: boolean): Promise<TaskScan> {
  const { p, t, file, scorers, counts } = st;
  const r = p.results;
  const scorerFor = (metric: string, filter: string) => (scorers.has(scorerName(metric, filter)) ? scorerName(metric, filter) : null);
  const run = mapLmEvalRun(r, {
    runId: t.runId,
    task: t.task,
    dateId: p.output.dateId,
    resultsFile: p.output.resultsFile,
    resultsSha256: p.resultsSha256,
    samplesFile: file,
    samplesSha256,
    docs: st.docs.size,
    reported: reportedMetricsFor(r, t.task, scorerFor),
  });
  if (!st.validate('runs', [run], lineNo)) return { task: null, problems: st.problems, truncated };
  await st.sink.end(run, docRanks(st.docs));
  const tableCounts: Partial<Record<TableName, number>> = { runs: 1, episodes: counts.episodes };
  if (counts.messages > 0) tableCounts.messages = counts.messages;
  if (counts.scores > 0) tableCounts.scores = counts.scores;
  const task: ScannedTask = {
    runId: t.runId,
    task: t.task,
    model: st.model,
    resultsFile: p.output.resultsFile,
    samplesFile: file,
    samplesSha256,
    docs: st.docs.size,
    scorers: [...scorers].sort(),
    counts: tableCounts,
    tallies: st.tallies,
    run,
  };
  return { task, problems: st.problems, truncated };
}

/**
 * Streams one task's samples file (memory: a key per document and per (document, filter), not the
 * file), checks every line and sends its rows to `sink` while the file is clean. Never throws for
 * bad input: it returns the problems, each naming the file, line and field.
 */
export async function scanLmEvalTask(p: PlannedOutput, t: PlannedTask, model: string, sink: LmEvalRowSink, opts: { maxProblems?: number } = {}): Promise<TaskScan> {
  const max = opts.maxProblems ?? 20;
  const file = t.samplesFile;
  const problems: StandoffError[] = [];
  const st: TaskState = {
    p,
    t,
    model,
    file,
    sink,
    problems,
    validate: validator(file, problems),
    filters: filterNamesOf(p.results, t.task),
    generative: outputTypeOf(p.results, t.task) === 'generate_until',
    reported: reportedEntries(p.results, t.task),
    tallies: new Map(),
    docs: new Map(),
    lineOf: new Map(),
    occurrences: new Map(),
    scorers: new Set(),
    counts: { episodes: 0, messages: 0, scores: 0 },
    begun: false,
  };
  const stream = openSamplesStream(file);
  const { lineNo, truncated } = await readTaskLines(st, stream, max);
  if (problems.length === 0 && st.docs.size === 0) problems.push(dataError('ingest.emptySamples', `${file}: no sample lines`));
  if (problems.length > 0) return { task: null, problems: problems.slice(0, max), truncated };
  return finishTask(st, stream.hash.digest('hex'), lineNo, truncated);
}
