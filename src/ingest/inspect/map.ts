/**
 * Maps Inspect AI log structures to trace-store rows (`src/schema/tables.ts`).
 *
 * - eval -> one `runs` row (source `inspect`, suite = task name).
 * - sample x epoch -> one `episodes` row, `episode_id` = `<sample id>/<epoch>`.
 * - the sample's final conversation -> `messages` rows: one row per message, except that an
 *   assistant message with several tool calls gives one row per call (its text and reasoning on
 *   the first of them). Text comes from string content or `text` parts; reasoning from
 *   `reasoning` parts (or the legacy `reasoning` field).
 * - each score -> one `scores` row (a dict-valued score gives one row per key, scorer
 *   `<name>/<key>`).
 *
 * The decision fields (`status`, `invalid_reason`, `decision_tool`, `decision_args`,
 * `gathered_evidence`, `log_reads`, `turns`) are computed from the mapped `messages` rows by the
 * same reader the runner's scorers use (`src/scorers/transcript.ts`), so one transcript gets one
 * verdict whichever path stored it: the first assistant turn holding a decision call is the
 * terminal decision; several decision calls in it make the episode `invalid`, none at all makes it
 * `invalid` (`no terminal decision ...`); `gathered_evidence` = a successful read_system_log
 * result strictly before the first decision request (no decision: false). A transcript that is not
 * of this protocol (no information or decision tool called, target not a decision tool or NOANSWER:
 * a generic Inspect task) gets no decision, and `gathered_evidence` and `log_reads` NULL (not
 * measured); so does an errored sample's evidence.
 */
import { type EpisodeRow, type MessageRow, type RunRow, type ScoreRow } from '../../schema/tables.ts';
import { DECISION_TOOLS as SCHEMA_DECISION_TOOLS, INFORMATION_TOOL as SCHEMA_INFORMATION_TOOL } from '../../schema/scenario.ts';
import { analyzeTranscript, countTurns, episodeEvidence, usesLogProtocol } from '../../scorers/transcript.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { maskSecretPatterns } from '../../redact.ts';
import type { InspectHeader, InspectMessage, InspectSample, InspectScore } from './read-eval.ts';
import { inspectReportedMetrics } from './reported.ts';

/** This evaluation's tools (from `src/schema/scenario.ts`). */
export const INFORMATION_TOOL: string = SCHEMA_INFORMATION_TOOL;
export const DECISION_TOOLS: readonly string[] = SCHEMA_DECISION_TOOLS;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/** Keys whose (non-numeric, non-boolean) values are dropped from stored configs. */
const SECRET_KEY = /key|token|secret|password/i;

/**
 * Deep copy without secrets: every key containing `key`, `token`, `secret` or `password` is
 * removed, except when its value is a number, boolean or null (limits such as `max_tokens` are not
 * secrets and are kept); every string left is masked with {@link maskSecrets} (a URL's user-info,
 * `api_key=...`, `Bearer ...`, key-shaped text), wherever it sits (`model_base_url`,
 * `model_args.url`, a nested client option, lm-eval's `model_args` string).
 */
export function stripSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSecrets);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_KEY.test(k) && !(v === null || typeof v === 'number' || typeof v === 'boolean')) continue;
      out[k] = stripSecrets(v);
    }
    return out;
  }
  return typeof value === 'string' ? maskSecrets(value) : value;
}

/**
 * Masks secret-looking text in free-form strings (error messages, config values): the runner's
 * patterns (`src/redact.ts` `maskSecretPatterns`: URL user-info `http://[REDACTED]@host`,
 * `Bearer ...`, `Authorization: ...`, `api_key=...`, key shapes), plus `password=...`.
 */
export function maskSecrets(text: string): string {
  return maskSecretPatterns(text.replace(/((?:password|passwd)["']?\s*[:=]\s*["']?)(?!\[REDACTED\])[^"'\s&,}]+/gi, '$1[REDACTED]'));
}

/** ISO-8601 UTC (`...Z`) from an Inspect timestamp, or null when absent/unparseable. */
export function isoUtc(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

const jsonText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : jsonText(v));

/** Text and reasoning of an Inspect message's content. */
export function messageText(m: InspectMessage): { text: string | null; reasoning: string | null } {
  let text: string | null = null;
  const reasoning: string[] = [];
  if (typeof m.content === 'string') text = m.content;
  else if (Array.isArray(m.content)) {
    const texts: string[] = [];
    for (const part of m.content as Array<Record<string, unknown>>) {
      if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
      else if (part.type === 'reasoning') {
        const r = part.redacted === true ? part.summary : (part.reasoning ?? part.summary);
        if (typeof r === 'string' && r !== '') reasoning.push(r);
      }
    }
    text = texts.length > 0 ? texts.join('\n') : null;
  }
  if (typeof m.reasoning === 'string' && m.reasoning !== '') reasoning.unshift(m.reasoning);
  return { text, reasoning: reasoning.length > 0 ? reasoning.join('\n') : null };
}

// ---------------------------------------------------------------------------------------------
// Scores
// ---------------------------------------------------------------------------------------------

export interface MappedValue {
  value: number | null;
  noanswer: boolean;
  /** The original value as text when it has no numeric meaning (kept in `answer`). */
  unmapped: string | null;
}

/**
 * Inspect score value -> number: `C`/`I`/`P`/`N` -> 1/0/0.5/null (N sets noanswer), finite numbers
 * kept, booleans 1/0; any other value (other strings, NaN/Infinity, lists, null) -> null with its
 * text form kept.
 */
export function mapScoreValue(v: unknown): MappedValue {
  if (typeof v === 'number') {
    return Number.isFinite(v) ? { value: v, noanswer: false, unmapped: null } : { value: null, noanswer: false, unmapped: String(v) };
  }
  if (typeof v === 'boolean') return { value: v ? 1 : 0, noanswer: false, unmapped: null };
  if (v === 'C') return { value: 1, noanswer: false, unmapped: null };
  if (v === 'I') return { value: 0, noanswer: false, unmapped: null };
  if (v === 'P') return { value: 0.5, noanswer: false, unmapped: null };
  if (v === 'N') return { value: null, noanswer: true, unmapped: null };
  if (v === null || v === undefined) return { value: null, noanswer: false, unmapped: null };
  return { value: null, noanswer: false, unmapped: jsonText(v) };
}

export function mapScores(runId: string, episodeId: string, scores: Record<string, InspectScore> | null | undefined): ScoreRow[] {
  const rows: ScoreRow[] = [];
  for (const [name, score] of Object.entries(scores ?? {})) {
    const answer = strOrNull(score.answer);
    const explanation = strOrNull(score.explanation);
    const push = (scorer: string, raw: unknown) => {
      const m = mapScoreValue(raw);
      let rowAnswer = answer;
      let rowExplanation = explanation;
      if (m.unmapped !== null) {
        // The unmapped value goes to `answer`; the score's own answer (if any) is kept in the explanation.
        rowAnswer = m.unmapped;
        if (answer !== null && answer !== m.unmapped) rowExplanation = `answer: ${answer}${explanation !== null ? `\n${explanation}` : ''}`;
      }
      rows.push({ run_id: runId, episode_id: episodeId, scorer, value: m.value, answer: rowAnswer, noanswer: m.noanswer, explanation: rowExplanation });
    };
    const value = score.value;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) push(`${name}/${k}`, v);
    } else push(name, value);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Transcript
// ---------------------------------------------------------------------------------------------

export interface DecisionFacts {
  /** The transcript uses this evaluation's read_system_log protocol. */
  shaped: boolean;
  decisionTool: string | null;
  decisionArgs: string | null;
  invalidReason: string | null;
  /** Null when not measured (not this protocol). */
  gatheredEvidence: boolean | null;
  /** Null when not measured (not this protocol). */
  logReads: number | null;
  /** Assistant turns (maximal runs of assistant messages). */
  turns: number;
}

/**
 * Decision facts of a transcript's mapped `messages` rows, read by the shared transcript reader
 * (`analyzeTranscript`, the runner's definition). `target` (the sample's target) also marks a
 * transcript as this evaluation's when it is a decision tool or NOANSWER, so a sample whose model
 * never called a tool still counts as `no terminal decision`.
 */
export function decisionFactsOfRows(rows: readonly MessageRow[], target?: unknown): DecisionFacts {
  if (!usesLogProtocol(rows, target)) {
    // Only the turns are read: counted without the full analysis (most Inspect logs are not this protocol).
    return { shaped: false, decisionTool: null, decisionArgs: null, invalidReason: null, gatheredEvidence: null, logReads: null, turns: countTurns(rows) };
  }
  const a = analyzeTranscript(rows);
  return {
    shaped: true,
    decisionTool: a.decision_tool,
    decisionArgs: a.decision_args,
    invalidReason: a.invalid_reason,
    gatheredEvidence: episodeEvidence(rows, { errored: false, target, analysis: a }),
    logReads: a.log_reads,
    turns: a.turns,
  };
}

/** Decision facts of an Inspect conversation (mapped to `messages` rows first; see `decisionFactsOfRows`). */
export function decisionFacts(messages: readonly InspectMessage[], target?: unknown): DecisionFacts {
  return decisionFactsOfRows(mapMessages('r', 'e', messages), target);
}

/** Messages rows of one transcript. */
export function mapMessages(runId: string, episodeId: string, messages: readonly InspectMessage[]): MessageRow[] {
  const rows: MessageRow[] = [];
  const callNames = new Map<string, string>();
  // One object literal shape for every row (keeps the hot path monomorphic).
  const row = (
    role: MessageRow['role'],
    content: string | null,
    reasoning: string | null,
    toolCallId: string | null = null,
    toolName: string | null = null,
    toolArgs: string | null = null,
    toolOk: boolean | null = null,
    toolError: string | null = null,
  ): MessageRow => ({
    run_id: runId,
    episode_id: episodeId,
    seq: rows.length,
    role,
    content,
    reasoning,
    tool_call_id: toolCallId,
    tool_name: toolName,
    tool_args: toolArgs,
    tool_ok: toolOk,
    tool_error: toolError,
  });
  for (const m of messages) {
    const { text, reasoning } = messageText(m);
    const calls = m.role === 'assistant' ? m.tool_calls : null;
    if (calls && calls.length > 0) {
      for (let k = 0; k < calls.length; k++) {
        const c = calls[k]!;
        if (c.id) callNames.set(c.id, c.function);
        rows.push(row('assistant', k === 0 ? text : null, k === 0 ? reasoning : null, c.id ?? null, c.function, JSON.stringify(c.arguments ?? {})));
      }
    } else if (m.role === 'tool') {
      const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : null;
      const err = m.error ? m.error.message || m.error.type || 'tool error' : null;
      const name = m.function ?? (id ? (callNames.get(id) ?? null) : null);
      rows.push(row('tool', text, null, id, name, null, !m.error, err));
    } else {
      rows.push(row(m.role, text, reasoning));
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Episodes
// ---------------------------------------------------------------------------------------------

export interface MappedSample {
  episode: EpisodeRow;
  messages: MessageRow[];
  scores: ScoreRow[];
}

const metaText = (meta: Record<string, unknown> | null | undefined, key: string): string | null => {
  const v = meta?.[key];
  return typeof v === 'string' && v !== '' ? v : null;
};

/** Sample metadata as JSON text (null when absent or empty); keys sorted for byte-stable output. */
function metadataJson(meta: Record<string, unknown> | null | undefined): string | null {
  if (!meta || typeof meta !== 'object' || Object.keys(meta).length === 0) return null;
  const sorted = Object.fromEntries(Object.keys(meta).sort().map((k) => [k, meta[k]]));
  return JSON.stringify(sorted);
}

function tokens(sample: InspectSample, model: string): { input: number | null; output: number | null } {
  const usage = sample.model_usage ?? {};
  const picked = usage[model] ? [usage[model]!] : Object.values(usage);
  if (picked.length === 0) return { input: null, output: null };
  const sum = (k: 'input_tokens' | 'output_tokens') => {
    let total = 0;
    let any = false;
    for (const u of picked) {
      const v = u[k];
      if (typeof v === 'number' && Number.isFinite(v)) {
        total += v;
        any = true;
      }
    }
    return any ? Math.round(total) : null;
  };
  return { input: sum('input_tokens'), output: sum('output_tokens') };
}

export const episodeIdOf = (sample: Pick<InspectSample, 'id' | 'epoch'>) => `${sample.id}/${sample.epoch}`;

export function mapSample(runId: string, model: string, sample: InspectSample): MappedSample {
  const episodeId = episodeIdOf(sample);
  const messages = sample.messages ?? [];
  const rows = mapMessages(runId, episodeId, messages);
  const facts = decisionFactsOfRows(rows, sample.target);
  const tok = tokens(sample, model);
  const errored = !!sample.error;
  const target = sample.target;
  const episode: EpisodeRow = {
    run_id: runId,
    episode_id: episodeId,
    subject_model: model,
    subject_family: null,
    scenario_id: String(sample.id),
    domain: metaText(sample.metadata, 'domain'),
    decision_type: metaText(sample.metadata, 'decision_type'),
    variant: metaText(sample.metadata, 'variant'),
    epoch: sample.epoch,
    target: Array.isArray(target) ? target.join(', ') : (target ?? ''),
    status: errored ? 'error' : facts.invalidReason ? 'invalid' : 'valid',
    invalid_reason: errored ? null : facts.invalidReason,
    decision_tool: errored ? null : facts.decisionTool,
    decision_args: errored ? null : facts.decisionArgs,
    gathered_evidence: errored ? null : facts.gatheredEvidence,
    log_reads: facts.logReads,
    turns: messages.reduce((n, m) => n + (m.role === 'assistant' ? 1 : 0), 0),
    input_tokens: tok.input,
    output_tokens: tok.output,
    latency_ms: typeof sample.total_time === 'number' && Number.isFinite(sample.total_time) ? sample.total_time * 1000 : null,
    started_at: isoUtc(sample.started_at),
    error: errored ? maskSecrets(sample.error!.message) : null,
    metadata: metadataJson(sample.metadata),
  };
  return { episode, messages: rows, scores: mapScores(runId, episodeId, sample.scores) };
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

const RUN_STATUS: Record<string, RunRow['status']> = { success: 'success', error: 'error', cancelled: 'cancelled', started: 'partial' };

/** The stored run configuration: eval config, model, task and its arguments, plan; no secrets. */
export function runConfig(header: InspectHeader): Record<string, unknown> {
  const e = header.eval as Record<string, unknown>;
  const dataset = e.dataset && typeof e.dataset === 'object' ? { ...(e.dataset as Record<string, unknown>) } : undefined;
  if (dataset) delete dataset.sample_ids; // can be as long as the dataset
  const pick: Record<string, unknown> = {
    task: e.task,
    task_version: e.task_version,
    task_file: e.task_file,
    task_registry_name: e.task_registry_name,
    task_args: e.task_args,
    solver: e.solver,
    solver_args: e.solver_args,
    model: e.model,
    model_base_url: e.model_base_url,
    model_args: e.model_args,
    model_generate_config: e.model_generate_config,
    model_roles: e.model_roles,
    config: e.config,
    dataset,
    plan: header.plan ?? undefined,
    tags: e.tags,
    revision: e.revision,
    packages: e.packages,
    inspect_run_id: e.run_id,
    inspect_eval_id: e.eval_id,
    reported_metrics: inspectReportedMetrics(header), // the header's own aggregates, for reconciliation
  };
  for (const k of Object.keys(pick)) if (pick[k] === undefined || pick[k] === null) delete pick[k];
  return stripSecrets(pick) as Record<string, unknown>;
}

export interface RunFacts {
  runId: string;
  fileName: string;
  sha256: string;
  format: 'eval' | 'json';
  rebuiltFromJournal: boolean;
  /** Highest epoch seen among the samples (when the config does not say). */
  maxEpoch: number | null;
  samples: number;
  erroredSamples: number;
}

export function mapRun(header: InspectHeader, facts: RunFacts): RunRow {
  const e = header.eval;
  const cfgEpochs = e.config?.epochs;
  const seed = (e as Record<string, unknown>).model_generate_config as Record<string, unknown> | undefined;
  const inspectVersion = e.packages?.inspect_ai;
  const notes = [
    `inspect ${facts.format} log${header.version ? ` v${header.version}` : ''}${typeof inspectVersion === 'string' ? ` (inspect_ai ${inspectVersion})` : ''}`,
    `task ${e.task}, eval status ${header.status ?? 'unknown'}, ${facts.samples} sample${facts.samples === 1 ? '' : 's'}`,
  ];
  if (facts.erroredSamples > 0) notes.push(`${facts.erroredSamples} errored`);
  if (facts.rebuiltFromJournal) {
    notes.push('header rebuilt from _journal/start.json (no header.json: crashed or unfinished eval); results from the sample members');
  }
  if (header.error?.message) notes.push(`eval error: ${maskSecrets(header.error.message)}`);
  return {
    run_id: facts.runId,
    created_at: isoUtc(e.created)!,
    source: 'inspect',
    suite: e.task,
    status: facts.rebuiltFromJournal ? 'partial' : (RUN_STATUS[header.status ?? 'started'] ?? 'partial'),
    config: JSON.stringify(runConfig(header)),
    seed: typeof seed?.seed === 'number' && Number.isSafeInteger(seed.seed) ? seed.seed : null,
    epochs: typeof cfgEpochs === 'number' && Number.isInteger(cfgEpochs) ? cfgEpochs : facts.maxEpoch,
    standoff_version: STANDOFF_VERSION,
    source_file: facts.fileName,
    source_sha256: facts.sha256,
    notes: notes.join('; ').replace(/\s*\n\s*/g, ' '),
  };
}
