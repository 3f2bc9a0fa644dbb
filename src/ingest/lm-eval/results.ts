/**
 * Reads an lm-evaluation-harness `results_*.json` (the aggregated results `EvaluationTracker`
 * writes) into the facts the ingest needs: the leaf tasks and groups, each task's reported
 * `"<metric>,<filter>"` aggregates, its filters and aggregation functions, the model and the date.
 * Pure functions of the parsed JSON, except `parseLmEvalResults`'s JSON parse of the given text.
 *
 * Layout (lm_eval `evaluator_utils.py`, `result_schema.py`): `results` holds one entry per task
 * *and* per group (`{alias, name?, sample_len?, "acc,none": 0.5, "acc_stderr,none": 0.01, ...}`);
 * `group_subtasks` maps every task to `[]` and every group to its children (tasks or groups);
 * `configs[task]` is the task's YAML config (`output_type`, `metric_list` with `aggregation`,
 * `filter_list`, `repeats`); `n-samples[task]` = `{original, effective}`.
 */
import { dataError, type StandoffError } from '../../errors.ts';
import { JsonTooDeep, isTooDeep, parseJsonTolerant } from '../inspect/read-eval.ts';
import { finiteOrNull, type ReportedMetric } from '../reported-metrics.ts';

type Json = Record<string, unknown>;

export interface LmEvalResults {
  /** The path as found. */
  file: string;
  raw: Json;
  /** `results`: one entry per task and per group. */
  entries: Map<string, Json>;
  /** Groups (from `group_subtasks`, entries with children) -> children, in file order. */
  groups: Map<string, string[]>;
  /** Leaf tasks: every task named in `results` or `group_subtasks` that is not a group. */
  tasks: string[];
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Keys of a `results` entry that are not `"<metric>,<filter>"` aggregates. */
const NON_METRIC_KEYS = new Set(['alias', 'name', 'sample_len', 'samples', 'sample_count', 'n-samples']);

/** Parses a results file; throws a one-line data error naming the file and field when it is not one. */
export function parseLmEvalResults(text: string, file: string): LmEvalResults {
  let raw: unknown;
  try {
    raw = parseJsonTolerant(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw dataError('ingest.badJson', `${file}: ${err instanceof RangeError ? new JsonTooDeep().message : `not valid JSON: ${(err as Error).message}`}`);
  }
  if (isTooDeep(raw)) throw dataError('ingest.badJson', `${file}: ${new JsonTooDeep().message}`);
  if (!isObject(raw)) throw dataError('ingest.badResults', `${file}: not an lm-eval results file (a JSON object is expected)`);
  if (!isObject(raw.results)) throw dataError('ingest.badResults', `${file}: field "results": missing or not an object (not an lm-eval results file?)`);
  const entries = new Map<string, Json>();
  for (const [name, entry] of Object.entries(raw.results)) {
    if (!isObject(entry)) throw dataError('ingest.badResults', `${file}: field "results.${name}": not an object`);
    entries.set(name, entry);
  }
  // Older files list every task in group_subtasks (tasks with []); newer ones only the groups.
  const groups = new Map<string, string[]>();
  const listed: string[] = [];
  if (raw.group_subtasks !== undefined && raw.group_subtasks !== null) {
    if (!isObject(raw.group_subtasks)) throw dataError('ingest.badResults', `${file}: field "group_subtasks": not an object`);
    for (const [name, children] of Object.entries(raw.group_subtasks)) {
      if (!Array.isArray(children) || children.some((c) => typeof c !== 'string')) {
        throw dataError('ingest.badResults', `${file}: field "group_subtasks.${name}": not a list of task names`);
      }
      if (children.length > 0) groups.set(name, children as string[]);
      else listed.push(name);
    }
  }
  const tasks = [...new Set([...entries.keys(), ...listed, ...[...groups.values()].flat()])].filter((t) => !groups.has(t));
  return { file, raw, entries, groups, tasks };
}

/** The filters a task's samples are logged under, in the harness's order (`filter_list` names, else `none`). */
export function filterNamesOf(r: LmEvalResults, task: string): string[] {
  const cfg = taskConfig(r, task);
  const list = cfg?.filter_list;
  if (!Array.isArray(list) || list.length === 0) return ['none'];
  const names = list.map((f) => (isObject(f) && typeof f.name === 'string' ? f.name : null));
  return names.every((n): n is string => n !== null) ? names : ['none'];
}

export function taskConfig(r: LmEvalResults, task: string): Json | null {
  const cfg = isObject(r.raw.configs) ? r.raw.configs[task] : undefined;
  return isObject(cfg) ? cfg : null;
}

/** `output_type` of the task (`multiple_choice`, `generate_until`, `loglikelihood`, ...), when the config says. */
export function outputTypeOf(r: LmEvalResults, task: string): string | null {
  const t = taskConfig(r, task)?.output_type;
  return typeof t === 'string' ? t : null;
}

/**
 * The harness's default aggregation of its registered metrics (lm_eval `api/metrics.py`,
 * `@register_metric(..., aggregation=...)`); a metric it does not know is aggregated with `mean`
 * (`_compute_task_aggregations`: "No aggregation function defined ... Using mean").
 */
const DEFAULT_AGGREGATION: Record<string, string> = {
  brier_score: 'brier_score',
  perplexity: 'perplexity',
  word_perplexity: 'weighted_perplexity',
  byte_perplexity: 'weighted_perplexity',
  bits_per_byte: 'bits_per_byte',
  bypass: 'bypass',
  mcc: 'matthews_corrcoef',
  f1: 'f1',
  bleu: 'bleu',
  chrf: 'chrf',
  ter: 'ter',
};

/**
 * How the harness aggregated a task's metric: the `aggregation` of its `metric_list` entry (a
 * registered name, or the source of a Python function), else the registered default, else `mean`.
 */
export function aggregationOf(r: LmEvalResults, task: string, metric: string): string {
  const list = taskConfig(r, task)?.metric_list;
  if (Array.isArray(list)) {
    for (const m of list) {
      if (isObject(m) && m.metric === metric && typeof m.aggregation === 'string') return m.aggregation;
    }
  }
  return DEFAULT_AGGREGATION[metric] ?? 'mean';
}

/** `"<metric>,<filter>"` keys of an entry, split; `_stderr` keys are the stderr of their metric, not metrics. */
export function metricKeysOf(entry: Json): { key: string; metric: string; filter: string }[] {
  const out: { key: string; metric: string; filter: string }[] = [];
  for (const key of Object.keys(entry)) {
    if (NON_METRIC_KEYS.has(key)) continue;
    const comma = key.indexOf(',');
    if (comma <= 0) continue;
    const metric = key.slice(0, comma);
    if (metric.endsWith('_stderr')) continue;
    out.push({ key, metric, filter: key.slice(comma + 1) });
  }
  return out;
}

/** The Standoff scorer of an lm-eval metric under a filter: `acc` (filter `none`), `exact_match/strict-match`. */
export const scorerName = (metric: string, filter: string): string => (filter === 'none' ? metric : `${metric}/${filter}`);

/** A reported number: finite numbers kept, NaN kept as NaN (so a NaN aggregate can be compared), anything else null. */
function reportedNumber(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

export interface ReportedEntry {
  metric: string;
  filter: string;
  /** As reported; NaN when the harness wrote NaN; null when not a number (`"N/A"`). */
  value: number | null;
  stderr: number | null;
}

/** The `"<metric>,<filter>"` aggregates of one `results` entry (task or group), in file order. */
export function reportedEntries(r: LmEvalResults, name: string): ReportedEntry[] {
  const entry = r.entries.get(name);
  if (!entry) return [];
  return metricKeysOf(entry).map(({ key, metric, filter }) => ({
    metric,
    filter,
    value: reportedNumber(entry[key]),
    stderr: reportedNumber(entry[`${metric}_stderr,${filter}`]),
  }));
}

/** Leaf tasks under a group, depth first in `group_subtasks` order (a task listed twice counts once). */
export function leafTasksOf(r: LmEvalResults, group: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (name: string, depth: number) => {
    if (depth > 64 || seen.has(name)) return;
    seen.add(name);
    const children = r.groups.get(name);
    if (!children) {
      out.push(name);
      return;
    }
    for (const c of children) walk(c, depth + 1);
  };
  for (const c of r.groups.get(group) ?? []) walk(c, 1);
  return out;
}

/** Groups that contain a task (directly or through subgroups), nearest first. */
export function groupsOf(r: LmEvalResults, task: string): string[] {
  const out: string[] = [];
  const walk = (name: string) => {
    for (const [g, children] of r.groups) {
      if (children.includes(name) && !out.includes(g)) {
        out.push(g);
        walk(g);
      }
    }
  };
  walk(task);
  return out;
}

/**
 * The reported metrics stored with a task's run (`runs.config.reported_metrics`): the task's own,
 * then those of every group containing it (`group: true`, with the group's leaf tasks).
 * `scorerFor` gives the Standoff scorer of a (metric, filter) of the task, or null.
 */
export function reportedMetricsFor(r: LmEvalResults, task: string, scorerFor: (metric: string, filter: string) => string | null): ReportedMetric[] {
  const out: ReportedMetric[] = [];
  for (const e of reportedEntries(r, task)) {
    out.push({ task, metric: e.metric, filter: e.filter, value: finiteOrNull(e.value), stderr: finiteOrNull(e.stderr), scorer: scorerFor(e.metric, e.filter) });
  }
  for (const g of groupsOf(r, task)) {
    const subtasks = leafTasksOf(r, g);
    for (const e of reportedEntries(r, g)) {
      out.push({
        task: g,
        metric: e.metric,
        filter: e.filter,
        value: finiteOrNull(e.value),
        stderr: finiteOrNull(e.stderr),
        scorer: scorerFor(e.metric, e.filter),
        group: true,
        subtasks,
      });
    }
  }
  return out;
}

/** `n-samples[task].effective`: how many documents the harness says it evaluated. */
export function effectiveSamplesOf(r: LmEvalResults, task: string): number | null {
  const ns = isObject(r.raw['n-samples']) ? r.raw['n-samples'][task] : undefined;
  return isObject(ns) && typeof ns.effective === 'number' ? ns.effective : null;
}

/** Model-name prefixes of `model_args`, in the harness's order (`GeneralConfigTracker._get_model_name`). */
const MODEL_ARG_KEYS = ['peft', 'delta', 'pretrained', 'model', 'path', 'engine'];

/**
 * The model under evaluation: `model_name` (written since lm-eval 0.4.3), else the model argument
 * `EvaluationTracker` would use (`pretrained=`, `model=`, ... of `config.model_args`), else
 * `config.model` (the model type, e.g. `hf`), else `fallback`.
 */
export function modelNameOf(r: LmEvalResults, fallback: string): string {
  const raw = r.raw;
  if (typeof raw.model_name === 'string' && raw.model_name !== '') return raw.model_name;
  const cfg = isObject(raw.config) ? raw.config : {};
  const args = cfg.model_args;
  for (const key of MODEL_ARG_KEYS) {
    if (isObject(args) && args[key] !== undefined && args[key] !== null && args[key] !== '') return String(args[key]);
    if (typeof args === 'string' && args.includes(`${key}=`)) {
      const v = args.split(`${key}=`)[1]!.split(',')[0]!;
      if (v !== '') return v;
    }
  }
  if (typeof cfg.model === 'string' && cfg.model !== '') return cfg.model;
  return fallback;
}

/**
 * When the evaluation started, as ISO-8601 UTC: the results' `date` (a UNIX time), else the date
 * in the file name (`results_2024-05-01T12-00-00.123456.json`, local time of the machine that ran
 * it, read as UTC), else null.
 */
export function createdAtOf(r: LmEvalResults, dateId: string): string | null {
  const d = r.raw.date;
  if (typeof d === 'number' && Number.isFinite(d) && d > 0) return new Date(Math.round(d * 1000)).toISOString();
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(\.\d+)?$/.exec(dateId);
  if (!m) return null;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}${m[5] ? m[5].slice(0, 4) : ''}Z`);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** A results problem as the one-line error the ingest collects. */
export const resultsProblem = (code: string, file: string, text: string): StandoffError => dataError(`ingest.${code}`, `${file}: ${text}`);
