/**
 * The agent-mode solver (Standoff O1's `one_terminal_decision()`), and the model client it shares
 * with the judges and probe mode.
 *
 * ## Episode
 *
 * The subject sees the situation and the policy (`buildAgentMessages`) and the five tools
 * (`AGENT_TOOLS`), sent with `parallel_tool_calls: false`. Each turn is ONE request and one
 * tool-call batch. At most `max_turns` (3) turns are allowed for log retrieval; the episode stops
 * after the first batch that contains a decision call. A batch is handled in order:
 * - `read_system_log` is served by the verifier (`GET /log` with the episode's own bearer token,
 *   registered fresh for each episode and revoked at its end). A failed read is recorded as a tool
 *   row with `tool_ok = false` and `tool_error`, and the model is told it failed; it is not
 *   evidence. Its arguments are ignored.
 * - a decision call gets the result `Decision recorded: <tool>.` (or, when the batch holds several
 *   decisions, `Not executed: ...`); nothing is executed after the batch.
 * - an unknown tool gets a failed tool result.
 * A turn without any tool call ends the episode (no decision). Validity, the decision and evidence
 * are then read from the recorded rows by `analyzeTranscript` (`scorers.ts`), so the stored
 * transcript is the single source of truth.
 *
 * Every message is recorded as `messages` rows: system, user, each assistant turn (first row:
 * text + reasoning + first tool call; each further tool call of the batch: its own row), and each
 * tool result. `tool_args` is always JSON text: the raw argument string when it is valid JSON,
 * else a JSON string literal holding the raw text (see the documented rule in `scorers.ts`).
 *
 * ## Model client
 *
 * `ModelClient` wraps the `openai` SDK (retries off) with its own retry loop: HTTP 408/409/429/5xx,
 * request timeouts, connection errors, unparseable response bodies and (when `retry_degenerate`)
 * degenerate replies (no choices; empty text and no tool call; tool-call arguments that are not
 * JSON) are retried up to `retries.max` times with exponential backoff and jitter
 * (`min(max_ms, base_ms * 2^n) * U[0.5, 1)`), honouring `retry-after-ms` / `retry-after`. Other
 * 4xx are not retried. When retries run out on a transport failure the call throws a
 * `ModelCallError` (message redacted); on a degenerate reply the last reply is returned as is and
 * scored under the rules. Every attempt holds one slot of a shared limiter (`concurrency`).
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { DecisionTool, Scenario } from '../schema/scenario.ts';
import type { EpisodeRow, MessageRow } from '../schema/tables.ts';
import { createRng, type Rng } from '../stats/rng.ts';
import { readSystemLog, type RegisterOptions, type Verifier } from '../../verifier/server.ts';
import { AGENT_TOOLS, DECISION_TOOLS, INFORMATION_TOOL, buildAgentMessages, buildLogReadFailure, isDecisionTool, messageReasoning, type PromptVariant } from './protocol.ts';
import type { ResolvedModel } from './config.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { nodeFetch } from './http.ts';
import { analyzeTranscript, type TranscriptAnalysis } from './scorers.ts';

// ---------------------------------------------------------------------------------------------
// Limiter
// ---------------------------------------------------------------------------------------------

/** A FIFO counting semaphore. */
export class Limiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(readonly size: number) {
    if (!(size >= 1)) throw new RangeError(`limiter size must be >= 1, got ${size}`);
  }
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw abortError(signal);
    if (this.active < this.size) {
      this.active++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(go);
        if (i >= 0) this.queue.splice(i, 1);
        reject(abortError(signal!));
      };
      this.queue.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }
  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.queue.shift();
      if (next) next(); // hand the slot over
      else this.active--;
    };
  }
  get inFlight(): number {
    return this.active;
  }
}

export function abortError(signal?: AbortSignal): Error {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * A child signal that aborts with `parent`, plus `dispose()` to detach it. Hand the child to APIs
 * that add listeners and never remove them (the openai SDK does so per request), so listeners
 * never pile up on a long-lived run signal.
 */
export function linkedSignal(parent?: AbortSignal): { signal: AbortSignal | undefined; dispose(): void } {
  if (!parent) return { signal: undefined, dispose: () => undefined };
  const ac = new AbortController();
  if (parent.aborted) {
    ac.abort(parent.reason);
    return { signal: ac.signal, dispose: () => undefined };
  }
  const on = () => ac.abort(parent.reason);
  parent.addEventListener('abort', on, { once: true });
  return { signal: ac.signal, dispose: () => parent.removeEventListener('abort', on) };
}

export const isAbort = (err: unknown): boolean =>
  err instanceof Error && (err.name === 'AbortError' || err instanceof OpenAI.APIUserAbortError);

/** Sleeps `ms`, rejecting early when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------
// Retries
// ---------------------------------------------------------------------------------------------

export interface RetryPolicy {
  max: number;
  base_ms: number;
  max_ms: number;
}

/** Longest retry-after we honour (a server asking for more is waited on for this long). */
export const MAX_RETRY_AFTER_MS = 600_000;

/** Milliseconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date); null if absent. */
export function retryAfterMs(headers: Headers | Record<string, string> | undefined | null, now = Date.now()): number | null {
  if (!headers) return null;
  const get = (k: string): string | null =>
    typeof (headers as Headers).get === 'function' ? (headers as Headers).get(k) : ((headers as Record<string, string>)[k] ?? null);
  const ms = get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.min(MAX_RETRY_AFTER_MS, Number(ms));
  const ra = get('retry-after');
  if (ra === null || ra.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Math.min(MAX_RETRY_AFTER_MS, Number(ra) * 1000);
  const date = Date.parse(ra);
  if (Number.isFinite(date)) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - now));
  return null;
}

/** Backoff before retry number `n` (0-based): exponential with jitter in [0.5, 1). */
export function backoffMs(n: number, policy: RetryPolicy, rng: Rng): number {
  const cap = Math.min(policy.max_ms, policy.base_ms * 2 ** Math.min(n, 30));
  return cap * (0.5 + 0.5 * rng.uniform());
}

export interface Classified {
  retryable: boolean;
  /** Short label: `http 429`, `timeout`, `connection`, `malformed response`, `http 400`, ... */
  kind: string;
  retryAfterMs: number | null;
}

/** Decides whether a thrown error is transient. */
export function classifyError(err: unknown): Classified {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { retryable: true, kind: 'timeout', retryAfterMs: null };
  if (err instanceof OpenAI.APIUserAbortError) return { retryable: false, kind: 'aborted', retryAfterMs: null };
  if (err instanceof OpenAI.APIConnectionError) return { retryable: true, kind: 'connection error', retryAfterMs: null };
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return { retryable, kind: `http ${status}`, retryAfterMs: retryable ? retryAfterMs(err.headers) : null };
  }
  if (err instanceof SyntaxError) return { retryable: true, kind: 'malformed response', retryAfterMs: null };
  const e = err as { name?: string; code?: string } | null;
  if (e && (e.name === 'TimeoutError' || e.code === 'ETIMEDOUT' || e.code === 'UND_ERR_HEADERS_TIMEOUT')) {
    return { retryable: true, kind: 'timeout', retryAfterMs: null };
  }
  if (e && typeof e.code === 'string' && /^(ECONNRESET|ECONNREFUSED|EPIPE|EAI_AGAIN|UND_ERR_SOCKET)$/.test(e.code)) {
    return { retryable: true, kind: 'connection error', retryAfterMs: null };
  }
  return { retryable: false, kind: 'error', retryAfterMs: null };
}

/** A model call that failed for good (after retries, or not retryable). Message is redacted. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    readonly kind: string,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

// ---------------------------------------------------------------------------------------------
// Model client
// ---------------------------------------------------------------------------------------------

export interface ChatRequest {
  messages: ChatCompletionMessageParam[];
  tools?: typeof AGENT_TOOLS;
  parallel_tool_calls?: boolean;
  temperature?: number;
  max_tokens?: number;
  seed?: number;
  logprobs?: boolean;
  top_logprobs?: number;
}

export type ChatMessage = ChatCompletion['choices'][number]['message'];

export interface ChatResult {
  message: ChatMessage;
  choice: ChatCompletion['choices'][number];
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** Attempts used (1 = first try). */
  attempts: number;
  /** Set when the reply is degenerate and retries ran out (the reply is returned anyway). */
  degenerate: string | null;
}

/** Returns a reason when a reply should be treated as degenerate, else null. */
export type DegenerateCheck = (choice: ChatCompletion['choices'][number] | undefined) => string | null;

/** Degenerate agent reply: no choice, empty text and no tool call, or tool-call args that are not JSON. */
export const agentDegenerate: DegenerateCheck = (choice) => {
  if (!choice?.message) return 'no choices in the reply';
  const m = choice.message;
  const calls = m.tool_calls ?? [];
  if (calls.length === 0 && (typeof m.content !== 'string' || m.content.trim() === '') && !messageReasoning(m)) return 'empty reply';
  for (const c of calls) {
    const args = c.type === 'function' ? c.function.arguments : '';
    if (args.trim() === '') continue;
    try {
      JSON.parse(args);
    } catch {
      return `tool-call arguments are not valid JSON (${c.type === 'function' ? c.function.name : c.type})`;
    }
  }
  return null;
};

/** Degenerate text reply (judges, probes): no choice or empty text. */
export const textDegenerate: DegenerateCheck = (choice) => {
  if (!choice?.message) return 'no choices in the reply';
  const c = choice.message.content;
  if (typeof c !== 'string' || c.trim() === '') return 'empty reply';
  return null;
};

export interface ModelClientOptions {
  baseURL: string;
  /** The key value (never stored; redacted from every error). */
  apiKey: string;
  retries: RetryPolicy;
  timeoutMs: number;
  limiter: Limiter;
  redactor: Redactor;
  retryDegenerate: boolean;
  /** Called before each HTTP attempt (for counters). */
  onAttempt?: (model: string) => void;
  /** Called after each failed attempt that will be retried (for progress/diagnostics). */
  onRetry?: (info: { model: string; attempt: number; kind: string; delayMs: number }) => void;
  /** HTTP transport handed to the SDK (default {@link nodeFetch}; the global `fetch` also works). */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export class ModelClient {
  readonly spec: ResolvedModel;
  private readonly sdk: OpenAI;
  private readonly opts: ModelClientOptions;
  constructor(spec: ResolvedModel, opts: ModelClientOptions) {
    this.spec = spec;
    this.opts = opts;
    this.sdk = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey, maxRetries: 0, timeout: opts.timeoutMs, fetch: opts.fetch ?? nodeFetch });
  }

  /**
   * One chat completion with retries. `rng` draws the jitter; `degenerate` classifies replies.
   * Throws `ModelCallError` (redacted) or an AbortError when `signal` aborts.
   */
  async chat(req: ChatRequest, ctx: { signal?: AbortSignal; rng: Rng; degenerate?: DegenerateCheck }): Promise<ChatResult> {
    const { retries, limiter, redactor } = this.opts;
    const body = {
      model: this.spec.model,
      messages: req.messages,
      ...(req.tools ? { tools: req.tools } : {}),
      ...(req.parallel_tool_calls !== undefined ? { parallel_tool_calls: req.parallel_tool_calls } : {}),
      temperature: req.temperature ?? this.spec.temperature,
      max_tokens: req.max_tokens ?? this.spec.max_tokens,
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      ...(req.logprobs ? { logprobs: true, ...(req.top_logprobs ? { top_logprobs: req.top_logprobs } : {}) } : {}),
    };
    let lastDegenerate: ChatResult | null = null;
    for (let attempt = 0; ; attempt++) {
      if (ctx.signal?.aborted) throw abortError(ctx.signal);
      const release = await limiter.acquire(ctx.signal);
      this.opts.onAttempt?.(this.spec.model);
      let completion: ChatCompletion;
      const link = linkedSignal(ctx.signal);
      try {
        completion = (await this.sdk.chat.completions.create(body as Parameters<OpenAI['chat']['completions']['create']>[0], {
          signal: link.signal,
          timeout: this.opts.timeoutMs,
          maxRetries: 0,
        })) as ChatCompletion;
      } catch (err) {
        link.dispose();
        release();
        if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
        const c = classifyError(err);
        const msg = `${this.spec.model}: ${c.kind === 'error' ? '' : `${c.kind}: `}${redactor.error(err)}`;
        if (!c.retryable || attempt >= retries.max) {
          throw new ModelCallError(
            c.retryable ? `${msg} (gave up after ${attempt + 1} attempts)` : msg,
            attempt + 1,
            c.kind,
          );
        }
        const delay = c.retryAfterMs ?? backoffMs(attempt, retries, ctx.rng);
        this.opts.onRetry?.({ model: this.spec.model, attempt: attempt + 1, kind: c.kind, delayMs: delay });
        await sleep(delay, ctx.signal);
        continue;
      }
      link.dispose();
      release();
      const choice = completion?.choices?.[0];
      const usage = completion?.usage
        ? { prompt_tokens: completion.usage.prompt_tokens ?? 0, completion_tokens: completion.usage.completion_tokens ?? 0 }
        : null;
      const bad = ctx.degenerate ? ctx.degenerate(choice) : choice ? null : 'no choices in the reply';
      if (bad === null) {
        return { message: choice!.message, choice: choice!, usage, attempts: attempt + 1, degenerate: null };
      }
      const empty: ChatMessage = { role: 'assistant', content: '', refusal: null } as ChatMessage;
      lastDegenerate = {
        message: choice?.message ?? empty,
        choice: choice ?? ({ index: 0, message: empty, finish_reason: 'stop', logprobs: null } as ChatCompletion['choices'][number]),
        usage,
        attempts: attempt + 1,
        degenerate: bad,
      };
      if (!this.opts.retryDegenerate || attempt >= retries.max) return lastDegenerate;
      const delay = backoffMs(attempt, retries, ctx.rng);
      this.opts.onRetry?.({ model: this.spec.model, attempt: attempt + 1, kind: `degenerate reply: ${bad}`, delayMs: delay });
      await sleep(delay, ctx.signal);
    }
  }
}

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

/**
 * Runs one agent episode. Never throws for model or tool failures (an exhausted model call gives
 * status `error`); throws only an AbortError when `signal` aborts.
 */
export async function runEpisode(ctx: EpisodeContext): Promise<EpisodeResult> {
  const { runId, episodeId, subject, scenario } = ctx;
  const redactor = ctx.redactor ?? createRedactor([]);
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  const rows: MessageRow[] = [];
  const push = (r: Partial<MessageRow> & Pick<MessageRow, 'role'>) => {
    rows.push({
      run_id: runId,
      episode_id: episodeId,
      seq: rows.length,
      content: null,
      reasoning: null,
      tool_call_id: null,
      tool_name: null,
      tool_args: null,
      tool_ok: null,
      tool_error: null,
      ...r,
    });
  };
  const chat: ChatCompletionMessageParam[] = buildAgentMessages(scenario, ctx.prompt);
  for (const m of chat) push({ role: m.role as 'system' | 'user', content: contentText(m.content) });

  const reg = ctx.verifier.register(scenario.log, { label: episodeId, ...(ctx.register ?? {}) });
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
  let error: string | null = null;
  try {
    for (let turn = 1; turn <= ctx.maxTurns; turn++) {
      const res = await ctx.client.chat(
        { messages: chat, tools: AGENT_TOOLS, parallel_tool_calls: false, seed: ctx.requestSeed },
        { signal: ctx.signal, rng: ctx.rng, degenerate: agentDegenerate },
      );
      if (res.usage) {
        inputTokens = (inputTokens ?? 0) + res.usage.prompt_tokens;
        outputTokens = (outputTokens ?? 0) + res.usage.completion_tokens;
      }
      const msg = res.message;
      const text = contentText(msg.content);
      const reasoning = messageReasoning(msg);
      const calls = (msg.tool_calls ?? []).map((c, i) => ({
        id: c.id ?? `call_${turn}_${i}`,
        name: c.type === 'function' ? c.function.name : ((c as { custom?: { name?: string } }).custom?.name ?? '(unnamed)'),
        raw: c.type === 'function' ? c.function.arguments : ((c as { custom?: { input?: string } }).custom?.input ?? ''),
      }));
      if (calls.length === 0) {
        push({ role: 'assistant', content: text, reasoning });
        break; // a turn without a tool call ends the episode: no decision
      }
      calls.forEach((c, i) =>
        push({
          role: 'assistant',
          content: i === 0 ? text : null,
          reasoning: i === 0 ? reasoning : null,
          tool_call_id: c.id,
          tool_name: c.name,
          tool_args: storedToolArgs(c.raw),
        }),
      );
      chat.push({
        role: 'assistant',
        content: text,
        tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.raw } })),
      });
      const nDecisions = calls.filter((c) => isDecisionTool(c.name)).length;
      for (const c of calls) {
        let content: string;
        let ok: boolean;
        let toolError: string | null = null;
        if (c.name === INFORMATION_TOOL) {
          const link = linkedSignal(ctx.signal);
          const r = await readSystemLog(reg.url, reg.token, { timeoutMs: ctx.logReadTimeoutMs, signal: link.signal }).finally(link.dispose);
          if (ctx.signal?.aborted) throw abortError(ctx.signal);
          ok = r.ok;
          if (r.ok) content = r.text!;
          else {
            toolError = redactor.text(r.error ?? 'read failed');
            content = buildLogReadFailure(toolError);
          }
        } else if (isDecisionTool(c.name)) {
          ok = nDecisions === 1;
          content = ok ? DECISION_RESULT(c.name) : MULTI_DECISION_RESULT(nDecisions);
          if (!ok) toolError = 'several decisions in one batch';
        } else {
          ok = false;
          toolError = `unknown tool "${c.name}"`;
          content = `ERROR: unknown tool "${c.name}". Available tools: ${[INFORMATION_TOOL, ...DECISION_TOOLS].join(', ')}.`;
        }
        push({ role: 'tool', content, tool_call_id: c.id, tool_name: c.name, tool_ok: ok, tool_error: toolError });
        chat.push({ role: 'tool', tool_call_id: c.id, content });
      }
      if (nDecisions > 0) break; // stop at the first decision batch
    }
  } catch (err) {
    if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
    error = err instanceof ModelCallError ? err.message : `${subject.model}: ${redactor.error(err)}`;
  } finally {
    ctx.verifier.unregister(reg.token);
  }

  const analysis = analyzeTranscript(rows);
  const episode: EpisodeRow = {
    run_id: runId,
    episode_id: episodeId,
    subject_model: subject.model,
    subject_family: subject.family,
    scenario_id: scenario.scenario_id,
    domain: scenario.domain,
    decision_type: scenario.decision_type,
    variant: scenario.variant,
    epoch: ctx.epoch,
    target: scenario.target,
    status: error !== null ? 'error' : analysis.status,
    invalid_reason: error !== null ? null : analysis.invalid_reason,
    decision_tool: error !== null ? null : (analysis.decision_tool as DecisionTool | null),
    decision_args: error !== null ? null : analysis.decision_args,
    gathered_evidence: error !== null ? null : analysis.gathered_evidence, // errored: not measured
    log_reads: analysis.log_reads,
    turns: analysis.turns,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    latency_ms: Date.now() - started,
    started_at: startedAt,
    error: error !== null ? redactor.text(error) : null,
    metadata: null,
  };
  return { episode, messages: rows, analysis };
}

/** A deterministic per-unit rng/seed from the run seed and the unit's identity. */
export function unitSeed(runSeed: number, ...parts: Array<string | number>): number {
  // FNV-1a over the parts, mixed with the run seed; stable across platforms.
  let h = 0x811c9dc5 ^ (runSeed >>> 0);
  const s = parts.join('\u0000');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

export const unitRng = (runSeed: number, ...parts: Array<string | number>): Rng => createRng(unitSeed(runSeed, ...parts));
