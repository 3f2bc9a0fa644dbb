/**
 * `standoff ingest inspect PATH...` as a library: Inspect AI logs (`.eval`, `.json`) -> runs in
 * the trace store, one run per log file.
 *
 * All-or-nothing: every file is read, mapped and validated before anything becomes visible. Problems
 * are collected (up to `maxProblems`, default 20) so every bad file and member shows at once; each
 * is a one-line data error (`ingest.<problem>`, exit 3) naming the file and zip member (and the
 * field). When there are several, each is reported on its own line and one summarizing error is
 * thrown; the store is left untouched. Run ids that already exist are refused (store error, as
 * each file's run id becomes known) unless `replace`.
 *
 * Memory does not grow with the log: each file streams its rows, sample by sample, into a
 * `RunWriter` (DuckDB staging tables capped at 512 MB that spill to the run's temp directory); the
 * runs become visible only when every file was read clean, one atomic commit per run.
 *
 * Directories given as paths are expanded to the `.eval` files under them (recursively).
 */
import { existsSync, statSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_ID_PATTERN, type TableName } from '../schema/tables.ts';
import { StandoffError, dataError, usageError } from '../errors.ts';
import { cleanupStore } from '../store/write-run.ts';
import { RunWriter } from '../store/run-writer.ts';
import { scanInspectLog, type InspectRowSink, type InspectScan } from './inspect/index.ts';
import type { ZipLimits } from './inspect/zip.ts';
import { terminalLine } from '../escape.ts';
import { loadDirTree } from './load-dir-tree.ts';

type ScannedLog = NonNullable<InspectScan['log']>;

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
  /** Caps on inflated `.eval` members (zip-bomb guard; default 256 MiB and ratio 1000). */
  zipLimits?: ZipLimits;
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
    // Symlinks followed, each directory once; an unresolvable .eval entry is a data error naming it.
    const found: string[] = [];
    for (const [dir, names] of loadDirTree(p, { relevant: (n) => n.toLowerCase().endsWith('.eval') })) {
      for (const name of names) if (name.toLowerCase().endsWith('.eval')) found.push(join(dir, name));
    }
    if (found.length === 0) throw usageError('ingest.noLogs', `${p}: no .eval files in this directory`);
    for (const f of found) out.push(f);
  }
  return out;
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
  const report = opts.report ?? ((line: string) => process.stderr.write(`${terminalLine(line)}\n`));

  // Existing runs are refused up front (the ids are known only per file, so again as each opens).
  // Each file streams into its own RunWriter (staged in a temp directory, nothing visible); the
  // runs are committed together only when every file is clean, else every writer is aborted.
  const problems: StandoffError[] = [];
  const logs: ScannedLog[] = [];
  const writers: RunWriter[] = [];
  let truncated = false;
  const storeExisted = existsSync(opts.traces);
  let committed = 0;
  if (!opts.dryRun) await cleanupStore(opts.traces);
  try {
    for (const file of files) {
      if (problems.length >= max) {
        truncated = true;
        break;
      }
      let writer: RunWriter | null = null;
      const sink: InspectRowSink = {
        begin: async (runId) => {
          if (opts.dryRun || problems.length > 0) return;
          if (logs.some((l) => l.run.run_id === runId)) return; // reported as a duplicate run below
          writer = await RunWriter.open(opts.traces, runId, { replace: opts.replace, trusted: true });
          writers.push(writer);
        },
        rows: async (unit, m) => {
          if (!writer || problems.length > 0) return;
          await writer.append('episodes', [m.episode], unit);
          await writer.append('messages', m.messages, unit);
          await writer.append('scores', m.scores, unit);
        },
        end: async (run, rank) => {
          if (writer && problems.length === 0) await writer.finish(run, rank);
        },
      };
      const r = await scanInspectLog(file, sink, { runId: opts.runId, maxProblems: max - problems.length, zipLimits: opts.zipLimits });
      problems.push(...r.problems);
      if (r.truncated) truncated = true;
      if (r.log) {
        const other = logs.find((l) => l.run.run_id === r.log!.run.run_id);
        if (other) {
          problems.push(dataError('ingest.duplicateRun', `${r.log.file}: maps to run "${r.log.run.run_id}", like ${other.file} (the same log given twice?)`));
        }
        logs.push(r.log);
      }
    }
    if (problems.length > 0) {
      const list = problems.slice(0, max);
      if (list.length > 1 || truncated) for (const p of list) report(p.message);
      throw new IngestProblems(list, truncated || problems.length > max);
    }

    const summary: IngestInspectSummary = {
      traces: opts.traces,
      dryRun: opts.dryRun === true,
      runs: logs.map((log) => ({
        runId: log.run.run_id,
        file: log.file,
        format: log.format,
        sha256: log.sha256,
        suite: log.run.suite,
        model: log.model,
        status: log.run.status,
        rebuiltFromJournal: log.rebuiltFromJournal,
        samples: log.counts.episodes ?? 0,
        expectedSamples: log.expectedSamples,
        tables: log.counts,
        scorerMeans: log.scorerMeans,
        written: false,
      })),
    };
    if (opts.dryRun) return summary;

    // Commit: one atomic run per file, after every file was read clean.
    for (let i = 0; i < writers.length; i++) {
      const res = await writers[i]!.commit();
      committed++;
      summary.runs[i]!.tables = res.tables;
      summary.runs[i]!.written = true;
    }
    return summary;
  } finally {
    for (const w of writers) await w.abort();
    // A store directory this ingest created for runs it then dropped goes too (rmdir: only if empty).
    if (!storeExisted && committed === 0) await rmdir(opts.traces).catch(() => undefined);
  }
}
