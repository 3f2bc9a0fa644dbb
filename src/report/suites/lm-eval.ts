/**
 * The lm-evaluation-harness suite: the core sections (`core.ts`) and, on top, one section of its
 * own, "Tasks and groups", through the one suite interface (`suite.ts`). Recognised by the data:
 * every run's source is `lm-eval` (what `standoff ingest lm-eval` writes).
 *
 * - Tasks: one row per task and model (a run): the harness's task version, output type, shots
 *   and filters, the groups the task belongs to, and its documents three ways: stored here (the
 *   samples file's), evaluated (`n_samples.effective`, after `--limit`) and in the split
 *   (`n_samples.original`), so a trimmed or limited run shows as such.
 * - Groups: each group the harness aggregated, once, with its subtasks and models. Its values
 *   appear once in the report, in the core "Reported vs recomputed" table (a row per group,
 *   model, metric and filter; `standoff ingest lm-eval` recomputes them from the subtasks and
 *   flags a difference), to which this section refers. The per-task results and intervals are the core's.
 *
 * Everything comes from `runs.config` as the ingest stored it and from the stored samples; no
 * statistic is computed here.
 */
import { cell, fixed, fmtCount, table, byText } from '../markdown.ts';
import { assembleGeneric, type GenericValues } from '../generic.ts';
import { corePartNumber, genericContents } from '../generic-render.ts';
import type { ReportContext } from '../sections/context.ts';
import type { ReportSuite, SuiteSection } from '../suite.ts';
import { coreSuite } from './core.ts';

export interface LmEvalTask {
  task: string;
  run_id: string;
  model: string;
  version: string | null;
  output_type: string | null;
  n_shot: number | null;
  filters: string[];
  groups: string[];
  /** Documents stored (distinct items of the run's samples). */
  stored: number;
  /** `n_samples.effective`: documents the harness evaluated (after --limit); null when not logged. */
  evaluated: number | null;
  /** `n_samples.original`: documents in the task's split; null when not logged. */
  in_split: number | null;
  lm_eval_version: string | null;
}

/**
 * A group the harness aggregated, once, with its subtasks and the models that ran them. Its
 * reported values are not here: each appears once, in the core "Reported vs recomputed" table
 * (`generic.reconciliation`, a row per group, model, metric and filter).
 */
export interface LmEvalGroup {
  group: string;
  subtasks: string[];
  models: string[];
}

export interface LmEvalSection {
  tasks: LmEvalTask[];
  groups: LmEvalGroup[];
}

/** The fields of a reported metric (`runs.config.reported_metrics`, written by the ingest) that this section reads. */
interface Reported {
  task: string;
  metric: string;
  filter: string | null;
  value: number | null;
  stderr: number | null;
  group?: true;
  subtasks?: string[];
}

const str = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** The tasks and groups of the store's lm-eval runs. */
export async function lmEvalSection(ctx: ReportContext): Promise<LmEvalSection> {
  const rows = await ctx.q(`SELECT run_id, min(subject_model) AS model, CAST(count(DISTINCT scenario_id) AS BIGINT) AS stored FROM episodes GROUP BY run_id ORDER BY run_id`);
  const byRun = new Map(rows.map((r) => [String(r.run_id), { model: String(r.model), stored: Number(r.stored) }]));
  const tasks: LmEvalTask[] = [];
  const groups = new Map<string, LmEvalGroup>();
  for (const run of ctx.runs) {
    const c = (run.config ?? {}) as Record<string, unknown>;
    const n = (c.n_samples ?? {}) as Record<string, unknown>;
    const r = byRun.get(run.run_id) ?? { model: str(c.model_name) ?? '(no samples)', stored: 0 };
    tasks.push({
      task: run.suite,
      run_id: run.run_id,
      model: r.model,
      version: str(c.task_version),
      output_type: str(c.output_type),
      n_shot: int(c.n_shot),
      filters: strings(c.filters),
      groups: strings(c.groups),
      stored: r.stored,
      evaluated: int(n.effective),
      in_split: int(n.original),
      lm_eval_version: str(c.lm_eval_version) ?? (str(c.git_hash) === null ? null : `git ${str(c.git_hash)}`),
    });
    const reported = (Array.isArray(c.reported_metrics) ? c.reported_metrics : []) as Reported[];
    for (const m of reported.filter((x) => x.group)) {
      // A group's aggregate is in every subtask run's log: the group once, with every model that ran it.
      const g = groups.get(m.task) ?? { group: m.task, subtasks: [], models: [] };
      groups.set(m.task, g);
      g.subtasks = [...new Set([...g.subtasks, ...(m.subtasks ?? [])])].sort(byText);
      if (!g.models.includes(r.model)) g.models = [...g.models, r.model].sort(byText);
    }
  }
  tasks.sort((a, b) => byText(a.task, b.task) || byText(a.model, b.model) || byText(a.run_id, b.run_id));
  const g = [...groups.values()].sort((a, b) => byText(a.group, b.group));
  return { tasks, groups: g };
}

/** The section's number: after the core sections (run summary, then `genericContents`). */
const numberOf = (g: GenericValues) => genericContents(g, 2).length + 2;
const TITLE = 'Tasks and groups';
const count = (x: number | null) => (x === null ? 'not logged' : fmtCount(x));

/** `reconciliation`: the number of the core "Reported vs recomputed" section (null: not in this report), where the groups' values are. */
export function renderLmEval(v: LmEvalSection, n: number, reconciliation: number | null = null): string {
  const out: string[] = [`## ${n}. ${TITLE}\n`];
  out.push(
    `The lm-evaluation-harness's own description of each task (\`runs.config\`, as \`standoff ingest lm-eval\` stored it). Documents three ways: *stored*, the samples file's (what every number of this report is computed from); *evaluated*, the harness's \`n_samples.effective\` (after \`--limit\`); *in split*, \`n_samples.original\`. Per-task results and intervals are in section 2.\n`,
  );
  out.push(
    table(
      ['Task', 'Groups', 'Model', 'Version', 'Output type', 'Shots', 'Filters', 'Stored', 'Evaluated', 'In split', 'Harness'],
      v.tasks.map((t) => [
        cell(t.task), t.groups.length ? t.groups.map(cell).join(', ') : '—', cell(t.model), cell(t.version ?? '—'), cell(t.output_type ?? '—'), t.n_shot === null ? '—' : fmtCount(t.n_shot),
        t.filters.length ? t.filters.map(cell).join(', ') : '—', fmtCount(t.stored), count(t.evaluated), count(t.in_split), t.lm_eval_version === null ? '—' : cell(t.lm_eval_version),
      ]),
      ['l', 'l', 'l', 'l', 'l', 'r', 'l', 'r', 'r', 'r', 'l'],
    ),
  );
  const short = v.tasks.filter((t) => t.evaluated !== null && t.stored < t.evaluated);
  if (short.length) out.push(short.map((t) => `- ${cell(t.task)}, ${cell(t.model)}: ${fmtCount(t.stored)} of the ${fmtCount(t.evaluated!)} documents the harness evaluated are stored (the samples file holds fewer lines): the harness's reported numbers and this report's differ in their base.`).join('\n') + '\n');
  if (v.groups.length === 0) {
    out.push('No task belongs to a group the harness aggregated.\n');
    return out.join('\n');
  }
  const where = reconciliation === null ? 'in `results.json` (`generic.reconciliation`)' : `in section ${reconciliation} ([Reported vs recomputed](#${reconciliation}-reported-vs-recomputed)), once per group, model, metric and filter`;
  out.push(
    `### Groups\n\nEach group the harness aggregated over its subtasks. Its reported values are ${where}: \`standoff ingest lm-eval\` recomputes each from the subtasks and flags a difference; a metric with no per-sample values (a corpus-level F1) has no interval.\n`,
  );
  out.push(table(['Group', 'Subtasks', 'Models'], v.groups.map((x) => [cell(x.group), x.subtasks.map(cell).join(', ') || '—', x.models.map(cell).join(', ')]), ['l', 'l', 'l']));
  return out.join('\n');
}

/** The lm-eval section, on top of the core. */
export const lmEvalTasksSection: SuiteSection<LmEvalSection> = {
  key: 'lm_eval',
  step: 'lm-eval tasks and groups',
  compute: ({ ctx }) => lmEvalSection(ctx),
  // `all` holds the section values by key (the core's six sections), or a results.json with `generic`.
  render: (v, i) => {
    const g = (i.all.generic as GenericValues | undefined) ?? assembleGeneric(i.all);
    return renderLmEval(v, numberOf(g), corePartNumber('reconciliation', g));
  },
};

type CoreResults = ReturnType<typeof coreSuite.results>;

/** The core's contents with this section's entry before the method notes. */
function withContents(doc: string, n: number): string {
  return doc.replace(`\n${n}. [Method notes](#method-notes)\n`, `\n${n}. [${TITLE}](#${n}-${TITLE.toLowerCase().replace(/ /g, '-')})\n${n + 1}. [Method notes](#method-notes)\n`);
}

/** Every run is an lm-evaluation-harness run: the core, and the tasks and groups on top. */
export const lmEvalSuite: ReportSuite<CoreResults & { lm_eval?: LmEvalSection }> = {
  ...coreSuite,
  id: 'lm-eval',
  recognise: (f) => f.sources.length > 0 && f.sources.every((s) => s === 'lm-eval'),
  sections: () => [...coreSuite.sections(), lmEvalTasksSection],
  results: (ctx, v, slices) => ({ ...coreSuite.results(ctx, v, slices), lm_eval: v.lm_eval as LmEvalSection }),
  document: (ctx, r, rendered) => withContents(coreSuite.document(ctx, r, rendered), numberOf(r.generic)),
};
