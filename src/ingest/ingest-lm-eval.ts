/**
 * `standoff ingest lm-eval DIR` as a library: lm-evaluation-harness output (`results_*.json` and
 * `samples_<task>_*.jsonl`, as `EvaluationTracker` writes them) -> one run per (results file,
 * task) in the trace store, plus the reconciliation of every reported aggregate with its value
 * recomputed from the samples. The mapping and why: `src/ingest/lm-eval/index.ts`.
 *
 * All-or-nothing across every file found: the results files are parsed and paired with their
 * samples files first, then each samples file streams into its own `RunWriter` (staged in a temp
 * directory, nothing visible; one task at a time, so one staging database is open at a time); the
 * runs are committed together only when every file was read clean. Problems are collected (up to
 * `maxProblems`, default 20), each a one-line data error (`ingest.<problem>`, exit 3) naming the
 * file, line and field; when there are several each is reported on its own line. Run ids that
 * already exist are refused (store error) unless `replace`.
 *
 * Reconciliation never fails the ingest: a reported number that differs from its recomputed value
 * beyond the tolerance is stored as reported (`runs.config.reported_metrics`) and returned with
 * status `FLAG` (the CLI prints the comparison and a warning).
 */
import { existsSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { RUN_ID_PATTERN, TABLE_NAMES, type TableName } from '../schema/tables.ts';
import { StandoffError, usageError } from '../errors.ts';
import { cleanupStore } from '../store/write-run.ts';
import { RunWriter } from '../store/run-writer.ts';
import { IngestProblems } from './ingest-inspect.ts';
import { planLmEval, scanLmEvalTask, type LmEvalRowSink, type ScannedTask } from './lm-eval/index.ts';
import { TOLERANCE, reconcileResults, type ReconcileRow, type TaskTallies } from './lm-eval/reconcile.ts';
import { modelNameOf } from './lm-eval/results.ts';
import { terminalLine } from '../escape.ts';

export interface IngestLmEvalOptions {
  /** Trace store directory. */
  traces: string;
  /** Run id for a single task; with several tasks, each run is `<runId>.<task>`. Default: `lm-eval-<task>-<hash>`. */
  runId?: string;
  /** Replace runs that already exist. */
  replace?: boolean;
  /** Validate, reconcile and report what would be written; write nothing. */
  dryRun?: boolean;
  /** Stop after this many problems (default 20). */
  maxProblems?: number;
  /** Where problem lines go when there are several (default: stderr). */
  report?: (line: string) => void;
}

export interface IngestedLmEvalRun {
  runId: string;
  task: string;
  model: string;
  resultsFile: string;
  samplesFile: string;
  /** Documents (episodes). */
  docs: number;
  scorers: string[];
  /** Row counts per table (what was, or with `dryRun` would be, written). */
  tables: Partial<Record<TableName, number>>;
  written: boolean;
}

export interface IngestLmEvalSummary {
  traces: string;
  dryRun: boolean;
  runs: IngestedLmEvalRun[];
  /** Every reported aggregate beside its recomputed value (see `src/ingest/lm-eval/reconcile.ts`). */
  reconciliation: ReconcileRow[];
  /** Rows with status `FLAG`. */
  flagged: number;
  tolerance: { abs: number; rel: number };
}

export async function ingestLmEval(path: string, opts: IngestLmEvalOptions): Promise<IngestLmEvalSummary> {
  if (opts.runId !== undefined && !RUN_ID_PATTERN.test(opts.runId)) {
    throw usageError('ingest.badRunId', `run id "${opts.runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  }
  const max = opts.maxProblems ?? 20;
  const report = opts.report ?? ((line: string) => process.stderr.write(`${terminalLine(line)}\n`));
  const plan = planLmEval(path);
  const planned = plan.outputs.flatMap((o) => o.tasks.map((t) => ({ o, t })));
  if (opts.runId !== undefined) {
    for (const { t } of planned) t.runId = planned.length === 1 ? opts.runId : `${opts.runId}.${t.task}`;
    const ids = planned.map(({ t }) => t.runId);
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup !== undefined) throw usageError('ingest.runIdCollision', `--run-id ${opts.runId} gives two runs the id "${dup}" (the same task in several results files); ingest those results files one at a time`);
    if (ids.some((id) => !RUN_ID_PATTERN.test(id))) throw usageError('ingest.badRunId', `--run-id ${opts.runId} with a task name gives an invalid run id (at most 128 letters, digits, dots, dashes or underscores)`);
  }
  const problems: StandoffError[] = [...plan.problems];
  const writers: RunWriter[] = [];
  const scanned: ScannedTask[] = [];
  let truncated = false;
  const storeExisted = existsSync(opts.traces);
  let committed = 0;
  if (!opts.dryRun) await cleanupStore(opts.traces);
  try {
    for (const { o, t } of planned) {
      if (problems.length >= max) {
        truncated = true;
        break;
      }
      let writer: RunWriter | null = null;
      const sink: LmEvalRowSink = {
        begin: async (runId) => {
          if (opts.dryRun || problems.length > 0) return;
          writer = await RunWriter.open(opts.traces, runId, { replace: opts.replace, trusted: true });
          writers.push(writer);
        },
        rows: async (unit, rows) => {
          if (!writer || problems.length > 0) return;
          await writer.append('episodes', rows.episodes, unit);
          await writer.append('messages', rows.messages, unit);
          await writer.append('scores', rows.scores, unit);
        },
        end: async (run, rank) => {
          if (writer && problems.length === 0) await writer.finish(run, rank);
        },
      };
      const model = modelNameOf(o.results, basename(dirname(o.output.resultsFile)));
      const r = await scanLmEvalTask(o, t, model, sink, { maxProblems: max - problems.length });
      problems.push(...r.problems);
      if (r.truncated) truncated = true;
      if (r.task) scanned.push(r.task);
    }
    if (problems.length > 0) {
      const list = problems.slice(0, max);
      if (list.length > 1 || truncated) for (const p of list) report(p.message);
      throw new IngestProblems(list, truncated || problems.length > max);
    }

    const reconciliation: ReconcileRow[] = [];
    for (const o of plan.outputs) {
      const mine = scanned.filter((s) => s.resultsFile === o.output.resultsFile);
      const tallies = new Map<string, TaskTallies>(mine.map((s) => [s.task, s.tallies]));
      const docs = new Map<string, number>(mine.map((s) => [s.task, s.docs]));
      reconciliation.push(...reconcileResults(o.results, o.tasks.map((t) => t.task), tallies, docs));
    }
    const summary: IngestLmEvalSummary = {
      traces: opts.traces,
      dryRun: opts.dryRun === true,
      runs: scanned.map((s) => ({
        runId: s.runId,
        task: s.task,
        model: s.model,
        resultsFile: s.resultsFile,
        samplesFile: s.samplesFile,
        docs: s.docs,
        scorers: s.scorers,
        tables: s.counts,
        written: false,
      })),
      reconciliation,
      flagged: reconciliation.filter((r) => r.status === 'FLAG').length,
      tolerance: { ...TOLERANCE },
    };
    if (opts.dryRun) return summary;

    // Commit: one atomic run per task, after every file was read clean.
    for (let i = 0; i < writers.length; i++) {
      const res = await writers[i]!.commit();
      committed++;
      // Table counts in schema order (runs first), as before the commit.
      summary.runs[i]!.tables = Object.fromEntries(TABLE_NAMES.filter((t) => res.tables[t] !== undefined).map((t) => [t, res.tables[t]]));
      summary.runs[i]!.written = true;
    }
    return summary;
  } finally {
    for (const w of writers) await w.abort();
    // A store directory this ingest created for runs it then dropped goes too (rmdir: only if empty).
    if (!storeExisted && committed === 0) await rmdir(opts.traces).catch(() => undefined);
  }
}
