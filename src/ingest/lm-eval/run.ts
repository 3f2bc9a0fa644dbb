/**
 * The `runs` row of one (results file, task): source `lm-eval`, suite = the task name (one run per
 * task, as an Inspect log is one task), the run configuration without secrets, and the reported
 * aggregates under `reported_metrics` (`src/ingest/reported-metrics.ts`).
 */
import { basename } from 'node:path';
import { RUN_ID_PATTERN, type RunRow } from '../../schema/tables.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { maskSecrets, stripSecrets } from '../inspect/map.ts';
import type { ReportedMetric } from '../reported-metrics.ts';
import { createdAtOf, filterNamesOf, groupsOf, outputTypeOf, taskConfig, type LmEvalResults } from './results.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const pick = (o: unknown, key: string): unknown => (isObject(o) ? o[key] : undefined);

/**
 * Default run id: `lm-eval-<task>-<first 8 hex of the results file's SHA-256>` (the same files
 * always give the same id; the tasks of one results file, and one task evaluated in two results
 * files, do not collide).
 */
export function defaultLmEvalRunId(task: string, resultsSha256: string): string {
  const t = task.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 100);
  const id = t ? `lm-eval-${t}-${resultsSha256.slice(0, 8)}` : `lm-eval-${resultsSha256.slice(0, 16)}`;
  return RUN_ID_PATTERN.test(id) ? id : `lm-eval-${resultsSha256.slice(0, 16)}`;
}

/** The stored run configuration: model and harness settings, the task's config, no secrets. */
export function lmEvalRunConfig(r: LmEvalResults, task: string, reported: ReportedMetric[], files: { results: string; samples: string }): Json {
  const raw = r.raw;
  const config = isObject(raw.config) ? { ...raw.config } : undefined;
  if (config && typeof config.model_args === 'string') config.model_args = maskSecrets(config.model_args);
  const cfg = taskConfig(r, task);
  const out: Json = {
    harness: 'lm-evaluation-harness',
    lm_eval_version: raw.lm_eval_version,
    git_hash: raw.git_hash,
    transformers_version: raw.transformers_version,
    model_name: raw.model_name,
    model_source: raw.model_source,
    config,
    task,
    task_version: pick(raw.versions, task),
    n_shot: pick(raw['n-shot'], task),
    n_samples: pick(raw['n-samples'], task),
    higher_is_better: pick(raw.higher_is_better, task),
    task_hash: pick(raw.task_hashes, task),
    output_type: outputTypeOf(r, task),
    filters: filterNamesOf(r, task),
    repeats: cfg?.repeats,
    groups: groupsOf(r, task),
    task_config: cfg ?? undefined,
    system_instruction_sha: raw.system_instruction_sha,
    chat_template_sha: raw.chat_template_sha,
    fewshot_as_multiturn: raw.fewshot_as_multiturn,
    date: raw.date,
    total_evaluation_time_seconds: raw.total_evaluation_time_seconds,
    results_file: basename(files.results),
    samples_file: basename(files.samples),
    reported_metrics: reported,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined || out[k] === null) delete out[k];
  return stripSecrets(out) as Json;
}

export interface LmEvalRunFacts {
  runId: string;
  task: string;
  dateId: string;
  resultsFile: string;
  resultsSha256: string;
  samplesFile: string;
  samplesSha256: string;
  docs: number;
  reported: ReportedMetric[];
}

export function mapLmEvalRun(r: LmEvalResults, f: LmEvalRunFacts): RunRow {
  const raw = r.raw;
  const version = typeof raw.lm_eval_version === 'string' ? `lm-eval ${raw.lm_eval_version}` : 'lm-eval';
  const seed = pick(raw.config, 'random_seed');
  const limit = pick(raw.config, 'limit');
  const groups = groupsOf(r, f.task);
  const notes = [
    `${version} results ${basename(f.resultsFile)}`,
    `task ${f.task}${outputTypeOf(r, f.task) ? ` (${outputTypeOf(r, f.task)})` : ''}, ${f.docs} documents, filters ${filterNamesOf(r, f.task).join(', ')}`,
  ];
  if (typeof limit === 'number') notes.push(`limit ${limit}`);
  if (groups.length > 0) notes.push(`in group${groups.length === 1 ? '' : 's'} ${groups.join(', ')}`);
  return {
    run_id: f.runId,
    created_at: createdAtOf(r, f.dateId) ?? new Date().toISOString(),
    source: 'lm-eval',
    suite: f.task,
    status: 'success',
    config: JSON.stringify(lmEvalRunConfig(r, f.task, f.reported, { results: f.resultsFile, samples: f.samplesFile })),
    seed: typeof seed === 'number' && Number.isSafeInteger(seed) ? seed : null,
    epochs: 1,
    standoff_version: STANDOFF_VERSION,
    source_file: `${basename(f.resultsFile)};${basename(f.samplesFile)}`,
    source_sha256: `${f.resultsSha256};${f.samplesSha256}`,
    notes: notes.join('; ').replace(/\s*\n\s*/g, ' '),
  };
}
