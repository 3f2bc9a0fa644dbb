/**
 * `standoff ingest inspect PATH...` as a library: Inspect AI logs (`.eval`, `.json`) -> runs in
 * the trace store, one run per log file.
 *
 * All-or-nothing: every file is read, mapped and validated before anything is written. Problems
 * are collected (up to `maxProblems`, default 20) so every bad file and member shows at once; each
 * is a one-line data error (`ingest.<problem>`, exit 3) naming the file and zip member (and the
 * field). When there are several, each is reported on its own line and one summarizing error is
 * thrown; the store is left untouched. Run ids that already exist are refused (store error) before
 * the first write unless `replace`.
 *
 * Directories given as paths are expanded to the `.eval` files under them (recursively).
 */
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_ID_PATTERN, type TableName } from '../schema/tables.ts';
import { StandoffError, dataError, storeError, usageError } from '../errors.ts';
import { partitionDir, writeRun } from '../store/write-run.ts';
import { loadInspectLog, type LoadedInspectLog } from './inspect/index.ts';

export interface IngestInspectOptions {
  /** Trace store directory. */
  traces: string;
  /** Run id (only with a single input file). Default: derived from the Inspect run id and file hash. */
  runId?: string;
  /** Replace runs that already exist. */
  replace?: boolean;
  /** Validate and report what would be written; write nothing. */
  dryRun?: boolean;
  /** Stop after this many problems (default 20). */
  maxProblems?: number;
  /** Where problem lines go when there are several, one per line (default: stderr). The thrown
   * {@link IngestProblems} carries them too (`errors`), for callers that print them themselves. */
  report?: (line: string) => void;
}

export interface IngestedRunSummary {
  runId: string;
  file: string;
  format: 'eval' | 'json';
  sha256: string;
  suite: string;
  model: string;
  status: string;
  rebuiltFromJournal: boolean;
  /** Episodes (sample x epoch) mapped. */
  samples: number;
  /** `results.completed_samples` from the header, when it has one. */
  expectedSamples: number | null;
  /** Row counts per table (what was, or with `dryRun` would be, written). */
  tables: Partial<Record<TableName, number>>;
  scorerMeans: Record<string, { mean: number | null; n: number }>;
  written: boolean;
}

export interface IngestInspectSummary {
  traces: string;
  dryRun: boolean;
  runs: IngestedRunSummary[];
}

/**
 * The error an ingest with problems throws (exit 3): `problems` holds every collected problem,
 * `errors` their one-line messages; `message` is the problem itself when there is one, else a
 * summary naming the first. Its code is the first problem's code.
 */
export class IngestProblems extends StandoffError {
  readonly problems: StandoffError[];
  readonly errors: string[];
  constructor(problems: StandoffError[], truncated: boolean) {
    const first = problems[0]!;
    const files = new Set(problems.map((p) => p.message.split(': ')[0]));
    const n = problems.length;
    const count = truncated ? `${n}+ problems (stopped after ${n})` : `${n} problems`;
    const message =
      n === 1 && !truncated
        ? first.message
        : `${count} in ${files.size} input file${files.size === 1 ? '' : 's'}; nothing was written; first: ${first.message}`;
    super(first.code, 'data', message);
    this.problems = problems;
    this.errors = problems.map((p) => p.message);
  }
}

function expandPaths(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let isDir = false;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      // missing: reported by the reader
    }
    if (!isDir) {
      out.push(p);
      continue;
    }
    const found: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d).sort()) {
        const full = join(d, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (name.toLowerCase().endsWith('.eval')) found.push(full);
      }
    };
    walk(p);
    if (found.length === 0) throw usageError('ingest.noLogs', `${p}: no .eval files in this directory`);
    out.push(...found);
  }
  return out;
}

function tableCounts(log: LoadedInspectLog): Partial<Record<TableName, number>> {
  const b = log.bundle;
  const counts: Partial<Record<TableName, number>> = { runs: 1, episodes: b.episodes.length };
  if (b.messages.length > 0) counts.messages = b.messages.length;
  if (b.scores.length > 0) counts.scores = b.scores.length;
  return counts;
}

export async function ingestInspect(paths: string[], opts: IngestInspectOptions): Promise<IngestInspectSummary> {
  if (paths.length === 0) throw usageError('ingest.noPaths', 'no inspect log given (pass one or more .eval or .json files)');
  const files = expandPaths(paths);
  if (opts.runId !== undefined) {
    if (files.length !== 1) {
      throw usageError('ingest.runIdWithSeveralFiles', `--run-id names one run, but ${files.length} log files were given (one run per file; drop --run-id to derive ids)`);
    }
    if (!RUN_ID_PATTERN.test(opts.runId)) {
      throw usageError('ingest.badRunId', `run id "${opts.runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
    }
  }
  const max = opts.maxProblems ?? 20;
  const report = opts.report ?? ((line: string) => process.stderr.write(`${line}\n`));

  // 1. Read, map and validate everything.
  const problems: StandoffError[] = [];
  const logs: LoadedInspectLog[] = [];
  let truncated = false;
  for (const file of files) {
    if (problems.length >= max) {
      truncated = true;
      break;
    }
    const r = await loadInspectLog(file, { runId: opts.runId, maxProblems: max - problems.length });
    problems.push(...r.problems);
    if (r.truncated) truncated = true;
    if (r.log) logs.push(r.log);
  }
  const byRun = new Map<string, string>();
  for (const log of logs) {
    const id = log.bundle.run.run_id;
    const other = byRun.get(id);
    if (other !== undefined) {
      problems.push(dataError('ingest.duplicateRun', `${log.file}: maps to run "${id}", like ${other} (the same log given twice?)`));
    }
    byRun.set(id, log.file);
  }
  if (problems.length > 0) {
    const list = problems.slice(0, max);
    if (list.length > 1 || truncated) for (const p of list) report(p.message);
    throw new IngestProblems(list, truncated || problems.length > max);
  }

  const summary: IngestInspectSummary = {
    traces: opts.traces,
    dryRun: opts.dryRun === true,
    runs: logs.map((log) => {
      const run = log.bundle.run;
      return {
        runId: run.run_id,
        file: log.file,
        format: log.format,
        sha256: log.sha256,
        suite: run.suite,
        model: log.model,
        status: run.status,
        rebuiltFromJournal: log.rebuiltFromJournal,
        samples: log.bundle.episodes.length,
        expectedSamples: log.expectedSamples,
        tables: tableCounts(log),
        scorerMeans: log.scorerMeans,
        written: false,
      };
    }),
  };
  if (opts.dryRun) return summary;

  // 2. Refuse existing runs before the first write (unless replacing).
  if (!opts.replace) {
    for (const log of logs) {
      const id = log.bundle.run.run_id;
      if (existsSync(join(partitionDir(opts.traces, 'runs', id), 'data.parquet'))) {
        throw storeError('store.runExists', `run "${id}" (from ${log.file}) already exists in ${opts.traces}; pass --replace to overwrite it`);
      }
    }
  }

  // 3. Write: one atomic run per file (rows were validated above).
  for (let i = 0; i < logs.length; i++) {
    const res = await writeRun(opts.traces, logs[i]!.bundle, { replace: opts.replace, trusted: true });
    summary.runs[i]!.tables = res.tables;
    summary.runs[i]!.written = true;
  }
  return summary;
}
