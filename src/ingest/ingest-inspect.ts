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
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_ID_PATTERN, type TableName } from '../schema/tables.ts';
import { dataError, usageError } from '../errors.ts';
import { StagedRuns } from './staged-runs.ts';
import { scanInspectLog, type InspectRowSink, type InspectScan } from './inspect/index.ts';
import type { ZipLimits } from './inspect/zip.ts';
import { loadDirTree } from './load-dir-tree.ts';
import { InspectPool } from './inspect/pool.ts';

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
  /**
   * Worker threads that read, map, check and stage a `.eval` log's samples while this thread
   * writes (default 0: everything in this thread, which measured faster on 2 cores). The store is
   * the same for any number.
   */
  workers?: number;
  /** Logs with fewer sample units are read in this thread (default 256). */
  parallelMinUnits?: number;
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

export { IngestProblems } from './ingest-problems.ts';

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

/** Usage errors before anything is read: `--run-id` with several files, or not a valid id. */
function checkInspectArgs(files: string[], runId: string | undefined): void {
  if (runId === undefined) return;
  if (files.length !== 1) {
    throw usageError('ingest.runIdWithSeveralFiles', `--run-id names one run, but ${files.length} log files were given (one run per file; drop --run-id to derive ids)`);
  }
  if (!RUN_ID_PATTERN.test(runId)) throw usageError('ingest.badRunId', `run id "${runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
}

/** The summary of a run read clean (not yet written). */
function runSummary(log: ScannedLog): IngestedRunSummary {
  return {
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
  };
}

/** Reads every file, streaming each into its own writer; a log that maps to a run another log already took is a problem. */
async function scanLogs(files: string[], staged: StagedRuns, opts: IngestInspectOptions, pool?: () => InspectPool): Promise<ScannedLog[]> {
  const logs: ScannedLog[] = [];
  for (const file of files) {
    if (staged.full()) break;
    // A duplicate run is reported below, not opened twice.
    const sink = staged.sink((runId) => logs.some((l) => l.run.run_id === runId));
    const rows: InspectRowSink = {
      begin: sink.begin,
      rows: async (unit, s) => {
        if (s.staged) await sink.stagedRows(unit, s.staged);
        else if (s.mapped) await sink.rows(unit, { episodes: [s.mapped.episode], messages: s.mapped.messages, scores: s.mapped.scores });
      },
      block: sink.stagedBlock,
      end: sink.end,
    };
    const r = await scanInspectLog(file, rows, {
      runId: opts.runId,
      maxProblems: staged.max - staged.problems.length,
      zipLimits: opts.zipLimits,
      stage: opts.dryRun !== true, // a dry run writes nothing: no rows staged
      pool,
      parallelMinUnits: opts.parallelMinUnits,
    });
    staged.add(r.problems, r.truncated);
    if (!r.log) continue;
    const other = logs.find((l) => l.run.run_id === r.log!.run.run_id);
    if (other) staged.add([dataError('ingest.duplicateRun', `${r.log.file}: maps to run "${r.log.run.run_id}", like ${other.file} (the same log given twice?)`)], false);
    logs.push(r.log);
  }
  return logs;
}

export async function ingestInspect(paths: string[], opts: IngestInspectOptions): Promise<IngestInspectSummary> {
  if (paths.length === 0) throw usageError('ingest.noPaths', 'no inspect log given (pass one or more .eval or .json files)');
  const files = expandPaths(paths);
  checkInspectArgs(files, opts.runId);
  // Existing runs are refused as each file's run id becomes known. Each file streams into its own
  // RunWriter (staged in a temp directory, nothing visible); the runs are committed together only
  // when every file is clean, else every writer is aborted.
  const staged = await StagedRuns.start(opts);
  // Worker threads, started when the first log large enough to use them is read.
  const threads = opts.workers ?? 0;
  let started = null as InspectPool | null;
  try {
    const logs = await scanLogs(files, staged, opts, threads > 0 ? () => (started ??= InspectPool.start(threads)) : undefined);
    staged.throwIfProblems();
    const summary: IngestInspectSummary = { traces: opts.traces, dryRun: opts.dryRun === true, runs: logs.map(runSummary) };
    if (opts.dryRun) return summary;
    // Commit: one atomic run per file, after every file was read clean.
    await staged.commitAll((i, res) => {
      summary.runs[i]!.tables = res.tables;
      summary.runs[i]!.written = true;
    });
    return summary;
  } finally {
    await started?.close();
    await staged.close();
  }
}
