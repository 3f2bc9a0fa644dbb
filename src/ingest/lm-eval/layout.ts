/**
 * Finds lm-evaluation-harness output under a directory: each results file with the samples files
 * of the same evaluation.
 *
 * `EvaluationTracker` (lm_eval `loggers/evaluation_tracker.py`) writes, for `--output_path DIR`,
 * `DIR/<model_name_sanitized>/results_<date_id>.json` and, with `--log_samples`, one
 * `samples_<task>_<date_id>.jsonl` per task next to it, where `date_id` is the start time
 * (`datetime.now().isoformat()` with `:` replaced by `-`). When `--output_path` names a `.json`
 * file, the results go to `<stem>_<date_id>.json` in that file's directory and the samples beside
 * it. So the files of one evaluation are the ones in one directory sharing a `date_id`, which is
 * what follows the last `_` of the name (`lm_eval.utils.get_file_datetime`), and a samples file's
 * task is what lies between `samples_` and that `_` (`get_file_task_name`).
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { dataError, type StandoffError } from '../../errors.ts';
import { loadDirTree } from '../load-dir-tree.ts';

export interface LmEvalOutput {
  /** The results file. */
  resultsFile: string;
  /** Its `date_id`. */
  dateId: string;
  /** The samples files of the same evaluation, by task name (sorted). */
  samples: { task: string; file: string }[];
}

export interface LmEvalLayout {
  outputs: LmEvalOutput[];
  /** Samples files with no results file of their evaluation. */
  problems: StandoffError[];
}

const SAMPLES = /^samples_(.+)_([^_]+)\.jsonl$/;
const RESULTS = /^results_([^_]+)\.json$/;
/** Any `<stem>_<date_id>.json`: a results file when samples files share its `date_id`. */
const STEM_RESULTS = /^.+_([^_]+)\.json$/;

function outputsOfDir(dir: string, files: string[], only?: string): { outputs: LmEvalOutput[]; problems: StandoffError[] } {
  const samplesByDate = new Map<string, { task: string; file: string }[]>();
  for (const name of files) {
    const m = SAMPLES.exec(name);
    if (!m) continue;
    const list = samplesByDate.get(m[2]!) ?? [];
    list.push({ task: m[1]!, file: join(dir, name) });
    samplesByDate.set(m[2]!, list);
  }
  const outputs: LmEvalOutput[] = [];
  const claimed = new Set<string>();
  const resultsDates = new Set(files.map((n) => RESULTS.exec(n)?.[1]).filter((d) => d !== undefined));
  /** The date_id of a results file name: `results_<d>.json`, or `<stem>_<d>.json` when samples share `d` and no `results_<d>.json` exists. */
  const dateOf = (name: string): string | undefined => {
    const d = RESULTS.exec(name)?.[1];
    if (d !== undefined) return d;
    const stem = STEM_RESULTS.exec(name)?.[1];
    if (stem === undefined) return undefined;
    return only !== undefined || (samplesByDate.has(stem) && !resultsDates.has(stem)) ? stem : undefined;
  };
  for (const name of files) {
    if (only !== undefined && name !== only) continue;
    if (SAMPLES.test(name)) continue;
    const dateId = dateOf(name);
    if (dateId === undefined) continue;
    const samples = (samplesByDate.get(dateId) ?? []).sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
    outputs.push({ resultsFile: join(dir, name), dateId, samples });
    claimed.add(dateId);
  }
  const problems: StandoffError[] = [];
  if (only === undefined) {
    for (const [dateId, list] of samplesByDate) {
      if (claimed.has(dateId)) continue;
      for (const s of list) {
        problems.push(dataError('ingest.orphanSamples', `${s.file}: no results file of this evaluation next to it (expected results_${dateId}.json in the same directory)`));
      }
    }
  }
  return { outputs, problems };
}

/**
 * The evaluations under `path`: a directory (searched recursively; hidden entries skipped) or one
 * results file. Throws a data error when `path` does not exist or holds no results file.
 */
export function findLmEvalOutputs(path: string): LmEvalLayout {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw dataError('ingest.notFound', `${path}: no such file or directory`);
  }
  if (st.isFile()) {
    const dir = dirname(path);
    const files = readdirSync(dir).sort();
    const r = outputsOfDir(dir, files, basename(path));
    if (r.outputs.length === 0) throw dataError('ingest.noResults', `${path}: not an lm-eval results file name (results_<date>.json or <name>_<date>.json)`);
    return { outputs: r.outputs.map((o) => ({ ...o, resultsFile: path })), problems: [] };
  }
  // Hidden entries skipped; symlinks followed, each directory once (a cycle ends); an unresolvable .json/.jsonl is a data error naming it.
  const byDir = loadDirTree(path, { skipHidden: true, relevant: (n) => /\.jsonl?$/.test(n) });
  const outputs: LmEvalOutput[] = [];
  const problems: StandoffError[] = [];
  for (const [dir, files] of byDir) {
    const r = outputsOfDir(dir, files);
    for (const x of r.outputs) outputs.push(x);
    for (const x of r.problems) problems.push(x);
  }
  if (outputs.length === 0) {
    throw dataError('ingest.noResults', `${path}: no lm-eval results file (results_<date>.json) in this directory or below it`);
  }
  return { outputs, problems };
}
