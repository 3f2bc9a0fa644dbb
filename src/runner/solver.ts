/**
 * The agent-mode solver (Standoff O1's `one_terminal_decision()`), and the model client it shares
 * with the judges and probe mode.
 *
 * ## Episode
 *
 * The subject sees the situation and the policy (`buildAgentMessages`) and the five tools
 * (`AGENT_TOOLS`), sent with `parallel_tool_calls: false` (unless the model's config omits it, or
 * its endpoint refused it: the scoring rules do not change, several decisions in one batch still
 * make the episode invalid). Each turn is ONE request and one tool-call batch. At most `max_turns`
 * (3) turns are allowed for log retrieval; the episode stops after the first batch that contains a
 * decision call. A batch is handled in order:
 * - `read_system_log` is served by the verifier (`GET /log` with the episode's own bearer token,
 *   registered fresh for each episode and revoked at its end). A failed read is recorded as a tool
 *   row with `tool_ok = false` and `tool_error`, and the model is told it failed; it is not
 *   evidence. Its arguments are ignored.
 * - a decision call gets the result `Decision recorded: <tool>.` (or, when the batch holds several
 *   decisions, `Not executed: ...`); nothing is executed after the batch.
 * - an unknown tool gets a failed tool result.
 * A turn without any tool call ends the episode (no decision). So does a reply cut off at the token
 * limit (`finish_reason = length`): nothing in it is executed, and the episode is `invalid` with
 * the reason `truncated (finish_reason=length)` and `truncated = true` (its scores are not
 * measured). Validity, the decision and evidence are then read from the recorded rows by
 * `analyzeTranscript` (`scorers.ts`), so the stored transcript is the single source of truth.
 *
 * Every message is recorded as `messages` rows: system, user, each assistant turn (first row:
 * text + reasoning + first tool call; each further tool call of the batch: its own row; every row
 * carries the reply's `finish_reason` and `attempt`), and each tool result. `tool_args` is always
 * JSON text: the raw argument string when it is valid JSON, else a JSON string literal holding the
 * raw text (see the documented rule in `scorers.ts`). A tool-call id that is empty, missing or
 * repeated in its batch (llama.cpp servers sent `""` before ggml-org/llama.cpp#12292) is replaced
 * by a generated one (`call_standoff_<turn>_<i>`), which the tool result answers; the endpoint's
 * id is kept in `original_tool_call_id`.
 *
 * Nothing is resampled unless `retry_degenerate` is on; then a degenerate reply (no choices; empty
 * text and no tool call; tool-call arguments that are not JSON) is resampled with a new request
 * seed per attempt, and every discarded reply is stored before the kept one (`discarded = true`,
 * its `attempt`), ignored by the scorers and judges; tokens cover every attempt and
 * `episodes.attempts` counts them.
 *
 *
 * The model client (`ModelClient`, retries, the limiter, seeds) is in `model-client.ts`, re-exported here.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { DecisionTool, Scenario } from '../schema/scenario.ts';
import type { EpisodeRow, MessageRow } from '../schema/tables.ts';
import type { Rng } from '../stats/rng.ts';
import { readSystemLog, type RegisterOptions, type Verifier } from '../../verifier/server.ts';
import { AGENT_TOOLS, DECISION_TOOLS, INFORMATION_TOOL, buildAgentMessages, buildLogReadFailure, isDecisionTool, messageReasoning, type PromptVariant } from './protocol.ts';
import type { ResolvedModel } from './config.ts';
import { createRedactor, type Redactor } from '../redact.ts';
import { analyzeTranscript, type TranscriptAnalysis } from './scorers.ts';
import { ModelCallError, abortError, agentDegenerate, isAbort, linkedSignal, type ChatMessage, type ChatResult, type ModelClient } from './model-client.ts';

export {
  Limiter,
  MAX_RETRY_AFTER_MS,
  ModelCallError,
  ModelClient,
  PREFLIGHT_PROMPT,
  abortError,
  agentDegenerate,
  backoffMs,
  checkEndpoint,
  classifyError,
  isAbort,
  linkedSignal,
  resampleSeed,
  retryAfterMs,
  sleep,
  textDegenerate,
  unitRng,
  unitSeed,
  type ChatChoice,
  type ChatContext,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type Classified,
  type DegenerateCheck,
  type DiscardedReply,
  type ModelClientOptions,
  type RetryPolicy,
} from './model-client.ts';

// ---------------------------------------------------------------------------------------------
// Episode
// ---------------------------------------------------------------------------------------------

/** Stored `tool_args`: the raw string when it is valid JSON (`''` -> `{}`), else a JSON string literal of it. */
export function storedToolArgs(raw: string | null | undefined): string {
  if (typeof raw !== 'string' || raw.trim() === '') return '{}';
  try {
    JSON.parse(raw);
    return raw;
  } catch {
    return JSON.stringify(raw);
  }
}

function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.map((p) => (p && typeof p === 'object' && typeof p.text === 'string' ? p.text : '')).filter((s) => s !== '');
    return parts.length ? parts.join('\n') : null;
  }
  return null;
}

export interface EpisodeContext {
  runId: string;
  episodeId: string;
  subject: ResolvedModel;
  scenario: Scenario;
  epoch: number;
  client: ModelClient;
  verifier: Pick<Verifier, 'register' | 'unregister'>;
  /** Options for this episode's verifier registration (tests inject read faults here). */
  register?: RegisterOptions;
  logReadTimeoutMs: number;
  maxTurns: number;
  /** Request `seed` sent to the endpoint (varies by epoch). */
  requestSeed: number;
  rng: Rng;
  signal?: AbortSignal;
  redactor?: Redactor;
  /** Agent prompt variant (default neutral: nothing tells the agent to read the log). */
  prompt?: PromptVariant;
}

export interface EpisodeResult {
  episode: EpisodeRow;
  messages: MessageRow[];
  analysis: TranscriptAnalysis;
}

export const DECISION_RESULT = (tool: string) => `Decision recorded: ${tool}. The episode is over.`;
export const MULTI_DECISION_RESULT = (n: number) => `Not executed: ${n} decision calls in one batch; only one decision is allowed. The episode is invalid.`;

/** One tool call of a reply, with the id the runner uses (and the endpoint's, when it had to be replaced). */
interface ReplyCall {
  id: string;
  original: string | null;
  name: string;
  raw: string;
}

/**
 * The tool calls of a reply. An id that is empty, missing, or already used in this episode is
 * replaced by `call_standoff_<turn>_<i>` (made unique), and the endpoint's id is kept as `original`
 * (`""` when it was missing).
 */
export function replyCalls(msg: ChatMessage, turn: number | string, used: Set<string>): ReplyCall[] {
  return (msg.tool_calls ?? []).map((c, i) => {
    const given = (c as { id?: unknown }).id;
    let id = typeof given === 'string' ? given : '';
    let original: string | null = null;
    if (id.trim() === '' || used.has(id)) {
      original = id;
      let k = 0;
      do id = `call_standoff_${turn}_${i}${k++ ? `_${k}` : ''}`;
      while (used.has(id));
    }
    used.add(id);
    return {
      id,
      original,
      name: c.type === 'function' ? c.function.name : ((c as { custom?: { name?: string } }).custom?.name ?? '(unnamed)'),
      raw: c.type === 'function' ? c.function.arguments : ((c as { custom?: { input?: string } }).custom?.input ?? ''),
    };
  });
}

/** The transcript of one episode as `messages` rows, in order (`seq`). */
class Transcript {
  readonly rows: MessageRow[] = [];
  constructor(
    private readonly runId: string,
    private readonly episodeId: string,
  ) {}

  push(r: Partial<MessageRow> & Pick<MessageRow, 'role'>): void {
    this.rows.push({
      run_id: this.runId,
      episode_id: this.episodeId,
      seq: this.rows.length,
      content: null,
      reasoning: null,
      tool_call_id: null,
      tool_name: null,
      tool_args: null,
      tool_ok: null,
      tool_error: null,
      ...r,
    });
  }

  /** The rows of one assistant reply: its text and reasoning on the first, one row per tool call. */
  pushReply(msg: ChatMessage, calls: ReplyCall[], extra: Pick<MessageRow, 'finish_reason' | 'discarded' | 'attempt'>): void {
    const text = contentText(msg.content);
    const reasoning = messageReasoning(msg);
    if (calls.length === 0) return this.push({ role: 'assistant', content: text, reasoning, ...extra, original_tool_call_id: null });
    calls.forEach((c, i) =>
      this.push({
        role: 'assistant',
        content: i === 0 ? text : null,
        reasoning: i === 0 ? reasoning : null,
        tool_call_id: c.id,
        tool_name: c.name,
        tool_args: storedToolArgs(c.raw),
        ...extra,
        original_tool_call_id: c.original,
      }),
    );
  }
}

/** What an episode accumulates over its turns. */
interface EpisodeState {
  transcript: Transcript;
  chat: ChatCompletionMessageParam[];
  usedIds: Set<string>;
  inputTokens: number | null;
  outputTokens: number | null;
  discardedReplies: number;
}

/** The result of one tool call of a batch: what the model is told, and whether it succeeded. */
async function toolResult(ctx: EpisodeContext, reg: { url: string; token: string }, c: ReplyCall, nDecisions: number, redactor: Redactor): Promise<{ content: string; ok: boolean; toolError: string | null }> {
  if (c.name === INFORMATION_TOOL) {
    const link = linkedSignal(ctx.signal);
    const r = await readSystemLog(reg.url, reg.token, { timeoutMs: ctx.logReadTimeoutMs, signal: link.signal }).finally(link.dispose);
    if (ctx.signal?.aborted) throw abortError(ctx.signal);
    if (r.ok) return { content: r.text!, ok: true, toolError: null };
    const toolError = redactor.text(r.error ?? 'read failed');
    return { content: buildLogReadFailure(toolError), ok: false, toolError };
  }
  if (isDecisionTool(c.name)) {
    const ok = nDecisions === 1;
    return { content: ok ? DECISION_RESULT(c.name) : MULTI_DECISION_RESULT(nDecisions), ok, toolError: ok ? null : 'several decisions in one batch' };
  }
  return {
    content: `ERROR: unknown tool "${c.name}". Available tools: ${[INFORMATION_TOOL, ...DECISION_TOOLS].join(', ')}.`,
    ok: false,
    toolError: `unknown tool "${c.name}"`,
  };
}

/** Records a turn's reply (discarded samples first, for the record: never sent back, never executed, ignored by the scorers). */
function recordReply(st: EpisodeState, res: ChatResult, turn: number): ReplyCall[] {
  if (res.usage) {
    st.inputTokens = (st.inputTokens ?? 0) + res.usage.prompt_tokens;
    st.outputTokens = (st.outputTokens ?? 0) + res.usage.completion_tokens;
  }
  for (const d of res.discarded) {
    st.transcript.pushReply(d.message, replyCalls(d.message, `${turn}_discarded${d.sample}`, st.usedIds), {
      finish_reason: typeof d.choice.finish_reason === 'string' ? d.choice.finish_reason : null,
      discarded: true,
      attempt: d.sample,
    });
  }
  st.discardedReplies += res.discarded.length;
  const calls = replyCalls(res.message, turn, st.usedIds);
  st.transcript.pushReply(res.message, calls, { finish_reason: res.finishReason, discarded: false, attempt: res.sample });
  return calls;
}

/** One turn: the request, its reply, and the batch's tool results. Returns whether the episode goes on. */
async function runTurn(ctx: EpisodeContext, st: EpisodeState, reg: { url: string; token: string }, turn: number, redactor: Redactor): Promise<boolean> {
  const res = await ctx.client.chat(
    { messages: st.chat, tools: AGENT_TOOLS, parallel_tool_calls: false, seed: ctx.requestSeed },
    { signal: ctx.signal, rng: ctx.rng, degenerate: agentDegenerate, resample: true },
  );
  const calls = recordReply(st, res, turn);
  // A reply without a tool call ends the episode (no decision); so does a reply cut off at the
  // token limit: its (partial) calls are recorded, none is executed.
  if (calls.length === 0 || res.truncated) return false;
  st.chat.push({
    role: 'assistant',
    content: contentText(res.message.content),
    tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.raw } })),
  });
  const nDecisions = calls.filter((c) => isDecisionTool(c.name)).length;
  for (const c of calls) {
    const { content, ok, toolError } = await toolResult(ctx, reg, c, nDecisions, redactor);
    st.transcript.push({ role: 'tool', content, tool_call_id: c.id, tool_name: c.name, tool_ok: ok, tool_error: toolError });
    st.chat.push({ role: 'tool', tool_call_id: c.id, content });
  }
  return nDecisions === 0; // stop at the first decision batch
}

/** The episode row, read from the recorded transcript (`analyzeTranscript`). */
function episodeRow(ctx: EpisodeContext, st: EpisodeState, analysis: TranscriptAnalysis, error: string | null, started: number, redactor: Redactor): EpisodeRow {
  const { subject, scenario } = ctx;
  const failed = error !== null;
  return {
    run_id: ctx.runId,
    episode_id: ctx.episodeId,
    subject_model: subject.model,
    subject_family: subject.family,
    scenario_id: scenario.scenario_id,
    domain: scenario.domain,
    decision_type: scenario.decision_type,
    variant: scenario.variant,
    epoch: ctx.epoch,
    target: scenario.target,
    status: failed ? 'error' : analysis.status,
    invalid_reason: failed ? null : analysis.invalid_reason,
    decision_tool: failed ? null : (analysis.decision_tool as DecisionTool | null),
    decision_args: failed ? null : analysis.decision_args,
    // Not measured (null) when the episode could not complete or was cut off at the token limit.
    gathered_evidence: failed ? null : analysis.gathered_evidence,
    log_reads: analysis.log_reads,
    turns: analysis.turns,
    input_tokens: st.inputTokens,
    output_tokens: st.outputTokens,
    latency_ms: Date.now() - started,
    started_at: new Date(started).toISOString(),
    error: failed ? redactor.text(error!) : null,
    metadata: null,
    truncated: failed ? null : analysis.truncated,
    attempts: 1 + st.discardedReplies,
  };
}

/**
 * Runs one agent episode. Never throws for model or tool failures (an exhausted model call gives
 * status `error`); throws only an AbortError when `signal` aborts.
 */
export async function runEpisode(ctx: EpisodeContext): Promise<EpisodeResult> {
  const redactor = ctx.redactor ?? createRedactor([]);
  const started = Date.now();
  const st: EpisodeState = { transcript: new Transcript(ctx.runId, ctx.episodeId), chat: buildAgentMessages(ctx.scenario, ctx.prompt), usedIds: new Set(), inputTokens: null, outputTokens: null, discardedReplies: 0 };
  for (const m of st.chat) st.transcript.push({ role: m.role as 'system' | 'user', content: contentText(m.content) });
  const reg = ctx.verifier.register(ctx.scenario.log, { label: ctx.episodeId, ...(ctx.register ?? {}) });
  let error: string | null = null;
  try {
    for (let turn = 1; turn <= ctx.maxTurns; turn++) if (!(await runTurn(ctx, st, reg, turn, redactor))) break;
  } catch (err) {
    if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
    error = err instanceof ModelCallError ? err.message : `${ctx.subject.model}: ${redactor.error(err)}`;
  } finally {
    ctx.verifier.unregister(reg.token);
  }
  const rows = st.transcript.rows;
  const analysis = analyzeTranscript(rows);
  return { episode: episodeRow(ctx, st, analysis, error, started, redactor), messages: rows, analysis };
}
