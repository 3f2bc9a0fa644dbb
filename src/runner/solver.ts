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
 * ## Model client
 *
 * `ModelClient` wraps the `openai` SDK (retries off) with its own retry loop: HTTP 408/409/429/5xx,
 * request timeouts, connection errors and unparseable response bodies are retried up to
 * `retries.max` times with exponential backoff and jitter (`min(max_ms, base_ms * 2^n) * U[0.5,
 * 1)`), honouring `retry-after-ms` / `retry-after`. Other 4xx are not retried, except a 400 that
 * refuses a request parameter: it is changed once for the run (`RequestParams`, `endpoint.ts`) and
 * the request is resent at once. When retries run out the call throws a `ModelCallError` whose
 * message is one redacted line: the status, the provider's own message and the URL. Every attempt
 * holds one slot of a shared limiter (`concurrency`).
 */
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { DecisionTool, Scenario } from '../schema/scenario.ts';
import type { EpisodeRow, MessageRow } from '../schema/tables.ts';
import { createRng, type Rng } from '../stats/rng.ts';
import { readSystemLog, type RegisterOptions, type Verifier } from '../../verifier/server.ts';
import { AGENT_TOOLS, DECISION_TOOLS, INFORMATION_TOOL, buildAgentMessages, buildLogReadFailure, isDecisionTool, messageReasoning, type PromptVariant } from './protocol.ts';
import type { ResolvedModel } from './config.ts';
import { createRedactor, type Redactor } from '../redact.ts';
import { nodeFetch } from '../net/http.ts';
import { RequestParams, captureErrorBodies, chatCompletionsUrl, describeRequestError, refusedParam, type ParamAdjustment, type SentParam } from './endpoint.ts';
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
    // 501 Not Implemented and 505 HTTP Version Not Supported are answers, not transient failures.
    const retryable = status === 408 || status === 409 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
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
    /** The failure without the model name: `http 401: <provider message> (POST <url>)`. */
    readonly description: string = message,
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
export type ChatChoice = ChatCompletion['choices'][number];

/** A reply the client discarded and resampled (`retry_degenerate`). */
export interface DiscardedReply {
  message: ChatMessage;
  choice: ChatChoice;
  /** Why it was discarded. */
  reason: string;
  /** Which sample of the request it was (1 = the first). */
  sample: number;
}

export interface ChatResult {
  message: ChatMessage;
  choice: ChatChoice;
  /** Tokens of every reply received for this request, discarded ones included (null when the endpoint reports none). */
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** HTTP attempts used (1 = first try). */
  attempts: number;
  /** Which sample the kept reply is (1 + `discarded.length`). */
  sample: number;
  /** Replies discarded before this one (empty unless the request resamples degenerate replies). */
  discarded: DiscardedReply[];
  /** The endpoint's `finish_reason`, as sent (null when absent). */
  finishReason: string | null;
  /** The reply was cut off at the token limit (`finish_reason = length`); such replies are never resampled. */
  truncated: boolean;
  /** Set when the reply is degenerate and was kept anyway (no resampling, or resamples ran out). */
  degenerate: string | null;
}

/** Returns a reason when a reply should be treated as degenerate, else null. */
export type DegenerateCheck = (choice: ChatChoice | undefined) => string | null;

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

/** The request seed of resample `n` (0 = the first sample, which keeps the request's own seed). */
export const resampleSeed = (seed: number, n: number): number => (n === 0 ? seed : unitSeed(seed, 'resample', n));

export interface ModelClientOptions {
  baseURL: string;
  /** The key value (never stored; redacted from every error). */
  apiKey: string;
  retries: RetryPolicy;
  timeoutMs: number;
  limiter: Limiter;
  redactor: Redactor;
  /** Resample degenerate replies of requests that ask for it (`retry_degenerate`). */
  retryDegenerate: boolean;
  /** This endpoint's request parameters, shared by every client of the same model (default: from the spec). */
  params?: RequestParams;
  /** Called when the endpoint refused a parameter and the client changed it for the rest of the run. */
  onAdjust?: (adjustment: ParamAdjustment) => void;
  /** Called before each HTTP attempt (for counters). */
  onAttempt?: (model: string) => void;
  /** Called after each failed attempt that will be retried (for progress/diagnostics). */
  onRetry?: (info: { model: string; attempt: number; kind: string; delayMs: number }) => void;
  /** HTTP transport handed to the SDK (default {@link nodeFetch}; the global `fetch` also works). */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface ChatContext {
  signal?: AbortSignal;
  rng: Rng;
  degenerate?: DegenerateCheck;
  /** Resample a degenerate reply when the client's `retryDegenerate` is on (agent turns only; default false). */
  resample?: boolean;
  /** Retry connection errors and timeouts (default true; the endpoint check turns it off to stop at once). */
  retryConnection?: boolean;
}

const sumUsage = (a: ChatResult['usage'], b: ChatResult['usage']): ChatResult['usage'] =>
  a === null ? b : b === null ? a : { prompt_tokens: a.prompt_tokens + b.prompt_tokens, completion_tokens: a.completion_tokens + b.completion_tokens };

export class ModelClient {
  readonly spec: ResolvedModel;
  readonly params: RequestParams;
  /** `<base_url>/chat/completions`: named in every error. */
  readonly url: string;
  private readonly sdk: OpenAI;
  private readonly opts: ModelClientOptions;
  private readonly errorBodies: ReturnType<typeof captureErrorBodies>;
  constructor(spec: ResolvedModel, opts: ModelClientOptions) {
    this.spec = spec;
    this.opts = opts;
    this.params = opts.params ?? new RequestParams(spec);
    this.url = chatCompletionsUrl(opts.baseURL);
    this.errorBodies = captureErrorBodies(opts.fetch ?? nodeFetch);
    this.sdk = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey, maxRetries: 0, timeout: opts.timeoutMs, fetch: this.errorBodies.fetch });
  }

  /** The request body under the current parameters, and the optional fields it carries. */
  private body(req: ChatRequest, seed: number | undefined): { body: Record<string, unknown>; sent: SentParam[] } {
    const p = this.params;
    const body: Record<string, unknown> = { model: this.spec.model, messages: req.messages };
    const sent: SentParam[] = [];
    const put = (k: SentParam, v: unknown) => {
      if (v === undefined || !p.sends(k)) return;
      body[k] = v;
      sent.push(k);
    };
    if (req.tools) body.tools = req.tools;
    if (req.tools) put('parallel_tool_calls', req.parallel_tool_calls);
    put('temperature', req.temperature ?? this.spec.temperature);
    put(p.maxTokensParam, req.max_tokens ?? this.spec.max_tokens);
    put('seed', seed);
    if (req.logprobs) {
      put('logprobs', true);
      if (p.sends('logprobs')) put('top_logprobs', req.top_logprobs);
    }
    return { body, sent };
  }

  /**
   * One chat completion with retries. `rng` draws the jitter; `degenerate` classifies replies.
   * Throws `ModelCallError` (redacted, one line: status, the provider's message, the URL) or an
   * AbortError when `signal` aborts.
   */
  async chat(req: ChatRequest, ctx: ChatContext): Promise<ChatResult> {
    const { retries, limiter, redactor } = this.opts;
    const resample = ctx.resample === true && this.opts.retryDegenerate && ctx.degenerate !== undefined;
    const discarded: DiscardedReply[] = [];
    let usage: ChatResult['usage'] = null;
    let attempt = 0; // HTTP attempts that count against retries.max (transport failures and resamples)
    let http = 0; // HTTP attempts made
    let refusals = 0;
    for (;;) {
      if (ctx.signal?.aborted) throw abortError(ctx.signal);
      const { body, sent } = this.body(req, req.seed === undefined ? undefined : resampleSeed(req.seed, discarded.length));
      const release = await limiter.acquire(ctx.signal);
      this.opts.onAttempt?.(this.spec.model);
      http++;
      let completion: ChatCompletion;
      const link = linkedSignal(ctx.signal);
      try {
        completion = (await this.sdk.chat.completions.create(body as unknown as Parameters<OpenAI['chat']['completions']['create']>[0], {
          signal: link.signal,
          timeout: this.opts.timeoutMs,
          maxRetries: 0,
        })) as ChatCompletion;
      } catch (err) {
        link.dispose();
        release();
        if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
        const rawBody = this.errorBodies.bodyOf((err as { headers?: unknown }).headers);
        const description = redactor.text(describeRequestError(err, this.url, { rawBody, timeoutMs: this.opts.timeoutMs }));
        // A parameter the endpoint does not accept: change it once for the run and resend at once.
        const refused = refusedParam(err, sent, rawBody);
        if (refused !== null && refusals < sent.length) {
          const r = this.params.refuse(refused, description.replace(/ \(POST [^)]*\)$/, ''));
          if (r.retry) {
            refusals++;
            if (r.adjustment) this.opts.onAdjust?.(r.adjustment);
            continue;
          }
        }
        const c = classifyError(err);
        const retryable = c.retryable && (ctx.retryConnection !== false || (c.kind !== 'connection error' && c.kind !== 'timeout'));
        const msg = `${this.spec.model}: ${description}`;
        if (!retryable || attempt >= retries.max) {
          const tail = retryable ? ` (gave up after ${http} attempts)` : '';
          throw new ModelCallError(`${msg}${tail}`, http, c.kind, `${description}${tail}`);
        }
        attempt++;
        const delay = c.retryAfterMs ?? backoffMs(attempt - 1, retries, ctx.rng);
        this.opts.onRetry?.({ model: this.spec.model, attempt, kind: c.kind, delayMs: delay });
        await sleep(delay, ctx.signal);
        continue;
      }
      link.dispose();
      release();
      const choice = completion?.choices?.[0];
      const replyUsage = completion?.usage
        ? { prompt_tokens: completion.usage.prompt_tokens ?? 0, completion_tokens: completion.usage.completion_tokens ?? 0 }
        : null;
      usage = sumUsage(usage, replyUsage);
      const finishReason = typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
      const truncated = finishReason === 'length';
      // A reply cut off at the token limit is its own outcome: never resampled, never "degenerate".
      const bad = truncated ? null : ctx.degenerate ? ctx.degenerate(choice) : choice ? null : 'no choices in the reply';
      const empty: ChatMessage = { role: 'assistant', content: '', refusal: null } as ChatMessage;
      const kept: ChatResult = {
        message: choice?.message ?? empty,
        choice: choice ?? ({ index: 0, message: empty, finish_reason: 'stop', logprobs: null } as ChatChoice),
        usage,
        attempts: http,
        sample: discarded.length + 1,
        discarded,
        finishReason,
        truncated,
        degenerate: bad,
      };
      if (bad === null || !resample || attempt >= retries.max) return kept;
      discarded.push({ message: kept.message, choice: kept.choice, reason: bad, sample: discarded.length + 1 });
      attempt++;
      const delay = backoffMs(attempt - 1, retries, ctx.rng);
      this.opts.onRetry?.({ model: this.spec.model, attempt, kind: `degenerate reply: ${bad}`, delayMs: delay });
      await sleep(delay, ctx.signal);
    }
  }
}

/** The text every endpoint check sends (small: the check wants an answer, not a good one). */
export const PREFLIGHT_PROMPT = 'This is a connectivity check before an evaluation run. Reply with the single word OK.';

/**
 * The endpoint check: one small request shaped like the model's real ones (a subject's carries
 * the agent tools and `parallel_tool_calls: false`; every request carries the model's temperature,
 * token cap and a seed), so a refused parameter is found (and adjusted) before the run starts.
 * Connection errors and timeouts are not retried; 429 and 5xx are. Throws `ModelCallError`.
 */
export async function checkEndpoint(client: ModelClient, role: 'subject' | 'judge', ctx: { rng: Rng; signal?: AbortSignal; seed: number }): Promise<ChatResult> {
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: PREFLIGHT_PROMPT }];
  const req: ChatRequest = role === 'subject' ? { messages, tools: AGENT_TOOLS, parallel_tool_calls: false, seed: ctx.seed } : { messages, seed: ctx.seed };
  return client.chat(req, { rng: ctx.rng, signal: ctx.signal, retryConnection: false });
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
  /** The rows of one assistant reply: its text and reasoning on the first, one row per tool call. */
  const pushReply = (msg: ChatMessage, calls: ReplyCall[], extra: Pick<MessageRow, 'finish_reason' | 'discarded' | 'attempt'>) => {
    const text = contentText(msg.content);
    const reasoning = messageReasoning(msg);
    if (calls.length === 0) return push({ role: 'assistant', content: text, reasoning, ...extra, original_tool_call_id: null });
    calls.forEach((c, i) =>
      push({
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
  };
  const chat: ChatCompletionMessageParam[] = buildAgentMessages(scenario, ctx.prompt);
  for (const m of chat) push({ role: m.role as 'system' | 'user', content: contentText(m.content) });

  const reg = ctx.verifier.register(scenario.log, { label: episodeId, ...(ctx.register ?? {}) });
  let inputTokens: number | null = null;
  let outputTokens: number | null = null;
  let error: string | null = null;
  let discardedReplies = 0;
  const usedIds = new Set<string>();
  try {
    for (let turn = 1; turn <= ctx.maxTurns; turn++) {
      const res = await ctx.client.chat(
        { messages: chat, tools: AGENT_TOOLS, parallel_tool_calls: false, seed: ctx.requestSeed },
        { signal: ctx.signal, rng: ctx.rng, degenerate: agentDegenerate, resample: true },
      );
      if (res.usage) {
        inputTokens = (inputTokens ?? 0) + res.usage.prompt_tokens;
        outputTokens = (outputTokens ?? 0) + res.usage.completion_tokens;
      }
      // Discarded samples first, for the record (never sent back, never executed, ignored by the scorers).
      for (const d of res.discarded) {
        pushReply(d.message, replyCalls(d.message, `${turn}_discarded${d.sample}`, usedIds), {
          finish_reason: typeof d.choice.finish_reason === 'string' ? d.choice.finish_reason : null,
          discarded: true,
          attempt: d.sample,
        });
      }
      discardedReplies += res.discarded.length;
      const msg = res.message;
      const calls = replyCalls(msg, turn, usedIds);
      pushReply(msg, calls, { finish_reason: res.finishReason, discarded: false, attempt: res.sample });
      // A reply without a tool call ends the episode (no decision); so does a reply cut off at the
      // token limit: its (partial) calls are recorded, none is executed.
      if (calls.length === 0 || res.truncated) break;
      chat.push({
        role: 'assistant',
        content: contentText(msg.content),
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
  const failed = error !== null;
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
    status: failed ? 'error' : analysis.status,
    invalid_reason: failed ? null : analysis.invalid_reason,
    decision_tool: failed ? null : (analysis.decision_tool as DecisionTool | null),
    decision_args: failed ? null : analysis.decision_args,
    // Not measured (null) when the episode could not complete or was cut off at the token limit.
    gathered_evidence: failed ? null : analysis.gathered_evidence,
    log_reads: analysis.log_reads,
    turns: analysis.turns,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    latency_ms: Date.now() - started,
    started_at: startedAt,
    error: failed ? redactor.text(error!) : null,
    metadata: null,
    truncated: failed ? null : analysis.truncated,
    attempts: 1 + discardedReplies,
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
