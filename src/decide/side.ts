/**
 * One side of a comparison: `run:ID` or `subject:NAME`, the metric's values per task (the run's
 * suite) and item (scenario x epoch, or scenario after `--reduce`), with each item's cluster (its
 * scenario). Pure: `buildSide` takes the metric rows a loader read (`loadSide` in load-side.ts).
 */
import { dataError, usageError } from '../errors.ts';

export interface SideRef {
  kind: 'run' | 'subject';
  value: string;
  /** As the user wrote it (`run:ID`). */
  label: string;
}

/** Parses `run:ID` or `subject:NAME` (the flag is named in the error). */
export function parseSideRef(flag: string, s: string | undefined): SideRef {
  const m = s === undefined ? null : /^(run|subject):(.+)$/s.exec(s);
  if (!m) throw usageError('compare.badSide', `${flag} must be run:ID or subject:NAME, got ${s === undefined ? 'nothing' : JSON.stringify(s)}`);
  return { kind: m[1] as 'run' | 'subject', value: m[2], label: s! };
}

export interface TaskValues {
  /** item key -> value */
  values: Map<string, number>;
  /** item key -> cluster id (the scenario) */
  cluster: Map<string, string>;
}

export interface Side {
  ref: SideRef;
  metric: string;
  subjects: string[];
  runs: string[];
  /** task (runs.suite) -> values */
  tasks: Map<string, TaskValues>;
}

export interface MetricRow {
  run_id: string;
  subject_model: string;
  suite: string;
  scenario_id: string;
  epoch: number | null;
  value: number;
}

/** Item key: scenario and epoch (an epoch NULL after --reduce). */
export const itemKey = (scenario: string, epoch: number | null) => `${scenario}\u0000${epoch ?? ''}`;

/** The side's rows grouped by task and item; two values for one item (several runs of a subject) is an error. */
export function buildSide(ref: SideRef, metric: string, rows: Iterable<MetricRow>, store: string): Side {
  const tasks = new Map<string, TaskValues>();
  const subjects = new Set<string>();
  const runs = new Set<string>();
  for (const r of rows) {
    if ((ref.kind === 'run' ? r.run_id : r.subject_model) !== ref.value) continue;
    subjects.add(r.subject_model);
    runs.add(r.run_id);
    let t = tasks.get(r.suite);
    if (!t) tasks.set(r.suite, (t = { values: new Map(), cluster: new Map() }));
    const k = itemKey(r.scenario_id, r.epoch);
    if (t.values.has(k)) {
      const what = ref.kind === 'run' ? `run ${r.run_id}` : `subject "${r.subject_model}"`;
      throw dataError('compare.duplicateItem', `${what} has two ${metric} values for item ${r.scenario_id}${r.epoch === null ? '' : ` epoch ${r.epoch}`} in task ${r.suite} of ${store} (several runs or subjects?): name one with run:ID`);
    }
    t.values.set(k, r.value);
    t.cluster.set(k, r.scenario_id);
  }
  if (tasks.size === 0) throw dataError('compare.emptySide', `${ref.label} has no measured ${metric} values in ${store}`);
  return { ref, metric, subjects: [...subjects].sort(), runs: [...runs].sort(), tasks };
}

/**
 * Which tasks of the two sides are compared: by name; when each side holds exactly one task they
 * are compared whatever their names (an lm-eval task against a CSV's suite). Returns [label,
 * baseline task, candidate task] and the tasks found on one side only.
 */
export function matchTasks(base: Side, cand: Side): { pairs: [string, string, string][]; onlyBaseline: string[]; onlyCandidate: string[] } {
  const b = [...base.tasks.keys()].sort();
  const c = [...cand.tasks.keys()].sort();
  if (b.length === 1 && c.length === 1) return { pairs: [[b[0] === c[0] ? b[0] : `${b[0]} / ${c[0]}`, b[0], c[0]]], onlyBaseline: [], onlyCandidate: [] };
  return {
    pairs: b.filter((t) => cand.tasks.has(t)).map((t) => [t, t, t]),
    onlyBaseline: b.filter((t) => !cand.tasks.has(t)),
    onlyCandidate: c.filter((t) => !base.tasks.has(t)),
  };
}
