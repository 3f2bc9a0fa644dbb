/**
 * lm-evaluation-harness `samples_<task>_<date_id>.jsonl` lines -> trace-store rows (pure; the
 * streaming read is `scanLmEvalTask` in `./index.ts`).
 *
 * What a line is (lm_eval `evaluator.py`, the `log_samples` branch, and `result_schema.SampleResult`):
 * the harness loops over the task's filters, and for each filter over the documents, calling
 * `task.process_results(doc, filtered responses)` once per (document, filter). Each call gives one
 * line: `doc_id`, `doc`, `target`, `arguments`, `resps` (the raw responses: requests x repeats),
 * `filtered_resps`, `filter`, `metrics` (the metric names), `doc_hash`, `prompt_hash`,
 * `target_hash`, and one key per metric holding that document's value. A task with the filters
 * `strict-match` and `flexible-extract` therefore logs every document twice. Files written before
 * lm-eval 0.4.4 lack `filter` and `metrics`; their lines come in the same order, so the k-th line
 * of a document belongs to the k-th filter of the task's `filter_list`, and the metrics are the
 * task's reported metrics present on the line.
 *
 * Repeats (`repeats: N`, e.g. self-consistency) are not epochs: the N responses of a document are
 * reduced by the filter (`take_first`, `majority_vote`) before `process_results`, which scores the
 * document once. There is no per-repeat score to store, so every document is epoch 1 and the
 * repeats are kept as the assistant messages.
 *
 * Per-sample values are numbers (`acc`, `exact_match`), booleans, or for corpus-level metrics
 * (`f1`, `bleu`, `mcc`, custom aggregations) the items the aggregation consumes (a
 * `[gold, pred]` pair, a list): those have no per-sample score and give no score row.
 */
import type { EpisodeRow, MessageRow, ScoreRow } from '../../schema/tables.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The fields of a line the ingest uses. */
export interface SampleLine {
  /** `doc_id` as text (the episode's item). */
  docId: string;
  /** `filter`, or null for files written before lm-eval 0.4.4. */
  filter: string | null;
  /** `metrics` (the names of the metric keys), or null for files written before lm-eval 0.4.4. */
  metrics: string[] | null;
  raw: Json;
}

/** Checks the shape of a parsed line; returns the problem text (naming the field) or the line. */
export function parseSampleLine(value: unknown): SampleLine | string {
  if (!isObject(value)) return 'not a JSON object';
  const id = value.doc_id;
  if (id === undefined || id === null) return 'field "doc_id": missing';
  if (!(typeof id === 'number' && Number.isSafeInteger(id)) && !(typeof id === 'string' && id !== '')) {
    return `field "doc_id": expected an integer or a non-empty string, got ${JSON.stringify(id)}`;
  }
  const filter = value.filter;
  if (filter !== undefined && (typeof filter !== 'string' || filter === '')) return `field "filter": expected a non-empty string, got ${JSON.stringify(filter)}`;
  const metrics = value.metrics;
  if (metrics !== undefined && (!Array.isArray(metrics) || metrics.some((m) => typeof m !== 'string'))) return 'field "metrics": expected a list of metric names';
  if (Array.isArray(metrics)) {
    for (const m of metrics as string[]) if (!(m in value)) return `field "${m}": listed in "metrics" but missing`;
  }
  return { docId: String(id), filter: typeof filter === 'string' ? filter : null, metrics: (metrics as string[] | undefined) ?? null, raw: value };
}

/** A per-sample metric value: a number (booleans as 1/0; NaN and infinities kept), or `null` when it is not a scalar. */
export function sampleNumber(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

/** Doc fields kept as episode metadata: scalars, strings up to this many characters. */
const META_TEXT_MAX = 200;

/**
 * Episode metadata: the doc's scalar fields (numbers, booleans, strings of at most 200 characters;
 * nested values and long texts are left out), then lm-eval's `target`, `doc_hash`, `prompt_hash`
 * and `target_hash` (under `lm_eval_<name>` when the doc has a field of that name). Keys sorted.
 */
export function sampleMetadata(raw: Json): string | null {
  const meta: Record<string, unknown> = {};
  if (isObject(raw.doc)) {
    for (const [k, v] of Object.entries(raw.doc)) {
      if (typeof v === 'number' ? Number.isFinite(v) : typeof v === 'boolean' || (typeof v === 'string' && v.length <= META_TEXT_MAX)) meta[k] = v;
    }
  }
  for (const k of ['target', 'doc_hash', 'prompt_hash', 'target_hash']) {
    const v = raw[k];
    if (v === undefined || v === null) continue;
    meta[k in meta ? `lm_eval_${k}` : k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  const keys = Object.keys(meta).sort();
  if (keys.length === 0) return null;
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, meta[k]])));
}

/** `<doc_id>/1`: lm-eval scores each document once (see the module comment on repeats). */
export const episodeIdOf = (docId: string) => `${docId}/1`;

/** The episode row of a document. Standoff-protocol columns lm-eval does not measure are null. */
export function mapEpisode(runId: string, model: string, line: SampleLine): EpisodeRow {
  return {
    run_id: runId,
    episode_id: episodeIdOf(line.docId),
    subject_model: model,
    subject_family: null,
    scenario_id: line.docId,
    domain: null,
    decision_type: null,
    variant: null,
    epoch: 1,
    target: null,
    status: 'valid',
    invalid_reason: null,
    decision_tool: null,
    decision_args: null,
    gathered_evidence: null,
    log_reads: null,
    turns: null,
    input_tokens: null,
    output_tokens: null,
    latency_ms: null,
    started_at: null,
    error: null,
    metadata: sampleMetadata(line.raw),
  };
}

/**
 * The transcript of a generated answer: the prompt (`arguments.gen_args_0.arg_0`) as the user
 * message and each raw response of the first request (one per repeat) as an assistant message.
 * Empty for log-likelihood tasks, whose "responses" are scores of given continuations, and for
 * lines whose `arguments` is not an object (files written before lm-eval 0.4.4 logged its repr).
 */
export function mapMessages(runId: string, line: SampleLine): MessageRow[] {
  const args = line.raw.arguments;
  const first = isObject(args) ? args.gen_args_0 : undefined;
  const prompt = isObject(first) ? first.arg_0 : undefined;
  const resps = Array.isArray(line.raw.resps) ? line.raw.resps[0] : undefined;
  if (typeof prompt !== 'string' || !Array.isArray(resps) || resps.some((r) => typeof r !== 'string')) return [];
  const episodeId = episodeIdOf(line.docId);
  const row = (seq: number, role: 'user' | 'assistant', content: string): MessageRow => ({
    run_id: runId,
    episode_id: episodeId,
    seq,
    role,
    content,
    reasoning: null,
    tool_call_id: null,
    tool_name: null,
    tool_args: null,
    tool_ok: null,
    tool_error: null,
  });
  return [row(0, 'user', prompt), ...(resps as string[]).map((r, i) => row(i + 1, 'assistant', r))];
}

/** What was scored: the filtered response of a generated answer (`filtered_resps[0]`, a string); null otherwise. */
export function scoredAnswer(line: SampleLine): string | null {
  const f = line.raw.filtered_resps;
  return Array.isArray(f) && typeof f[0] === 'string' ? f[0] : null;
}

/** One score row of a (document, filter, metric): value null with the reason when the number is NaN or infinite. */
export function mapScore(runId: string, line: SampleLine, scorer: string, value: number, answer: string | null): ScoreRow {
  const finite = Number.isFinite(value);
  return {
    run_id: runId,
    episode_id: episodeIdOf(line.docId),
    scorer,
    value: finite ? value : null,
    answer,
    noanswer: false,
    explanation: finite ? null : `lm-eval value ${String(value)}`,
  };
}
