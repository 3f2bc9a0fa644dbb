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
import { basename, dirname } from 'node:path';
import { RUN_ID_PATTERN, TABLE_NAMES, type TableName } from '../schema/tables.ts';
import { usageError } from '../errors.ts';
import { StagedRuns } from './staged-runs.ts';
import { planLmEval, scanLmEvalTask, type LmEvalPlan, type ScannedTask } from './lm-eval/index.ts';
import { TOLERANCE, reconcileResults, type ReconcileRow, type TaskTallies } from './lm-eval/reconcile.ts';
import { modelNameOf } from './lm-eval/results.ts';

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

/** `--run-id` given: each task's run id (`<runId>.<task>` with several), refused when two collide or one is not valid. */
function applyRunId(planned: { t: { task: string; runId: string } }[], runId: string | undefined): void {
  if (runId === undefined) return;
  for (const { t } of planned) t.runId = planned.length === 1 ? runId : `${runId}.${t.task}`;
  const ids = planned.map(({ t }) => t.runId);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) throw usageError('ingest.runIdCollision', `--run-id ${runId} gives two runs the id "${dup}" (the same task in several results files); ingest those results files one at a time`);
  if (ids.some((id) => !RUN_ID_PATTERN.test(id))) throw usageError('ingest.badRunId', `--run-id ${runId} with a task name gives an invalid run id (at most 128 letters, digits, dots, dashes or underscores)`);
}

/** Every reported aggregate of every results file beside its value recomputed from the samples. */
function reconcileAll(plan: LmEvalPlan, scanned: ScannedTask[]): ReconcileRow[] {
  const reconciliation: ReconcileRow[] = [];
  for (const o of plan.outputs) {
    const mine = scanned.filter((s) => s.resultsFile === o.output.resultsFile);
    const tallies = new Map<string, TaskTallies>(mine.map((s) => [s.task, s.tallies]));
    const docs = new Map<string, number>(mine.map((s) => [s.task, s.docs]));
    reconciliation.push(...reconcileResults(o.results, o.tasks.map((t) => t.task), tallies, docs));
  }
  return reconciliation;
}

const runSummary = (s: ScannedTask): IngestedLmEvalRun => ({
  runId: s.runId,
  task: s.task,
  model: s.model,
  resultsFile: s.resultsFile,
  samplesFile: s.samplesFile,
  docs: s.docs,
  scorers: s.scorers,
  tables: s.counts,
  written: false,
});

export async function ingestLmEval(path: string, opts: IngestLmEvalOptions): Promise<IngestLmEvalSummary> {
  if (opts.runId !== undefined && !RUN_ID_PATTERN.test(opts.runId)) {
    throw usageError('ingest.badRunId', `run id "${opts.runId}" must be 1-128 letters, digits, dots, dashes or underscores`);
  }
  const plan = planLmEval(path);
  const planned = plan.outputs.flatMap((o) => o.tasks.map((t) => ({ o, t })));
  applyRunId(planned, opts.runId);
  const staged = await StagedRuns.start(opts);
  staged.add(plan.problems, false);
  try {
    const scanned: ScannedTask[] = [];
    for (const { o, t } of planned) {
      if (staged.full()) break;
      const model = modelNameOf(o.results, basename(dirname(o.output.resultsFile)));
      const r = await scanLmEvalTask(o, t, model, staged.sink(), { maxProblems: staged.max - staged.problems.length });
      staged.add(r.problems, r.truncated);
      if (r.task) scanned.push(r.task);
    }
    staged.throwIfProblems();
    const reconciliation = reconcileAll(plan, scanned);
    const summary: IngestLmEvalSummary = {
      traces: opts.traces,
      dryRun: opts.dryRun === true,
      runs: scanned.map(runSummary),
      reconciliation,
      flagged: reconciliation.filter((r) => r.status === 'FLAG').length,
      tolerance: { ...TOLERANCE },
    };
    if (opts.dryRun) return summary;
    // Commit: one atomic run per task, after every file was read clean; table counts in schema
    // order (runs first), as before the commit.
    await staged.commitAll((i, res) => {
      summary.runs[i]!.tables = Object.fromEntries(TABLE_NAMES.filter((t) => res.tables[t] !== undefined).map((t) => [t, res.tables[t]]));
      summary.runs[i]!.written = true;
    });
    return summary;
  } finally {
    await staged.close();
  }
}
