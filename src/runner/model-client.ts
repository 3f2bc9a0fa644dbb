/**
 * The model client the agent solver (`solver.ts`) shares with the judges and probe mode.
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
import { createRng, type Rng } from '../stats/rng.ts';
import { AGENT_TOOLS, messageReasoning } from './protocol.ts';
import type { ResolvedModel } from './config.ts';
import type { Redactor } from '../redact.ts';
import { nodeFetch } from '../net/http.ts';
import { RequestParams, captureErrorBodies, chatCompletionsUrl, describeRequestError, refusedParam, type ParamAdjustment, type SentParam } from './endpoint.ts';

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
    const resample = ctx.resample === true && this.opts.retryDegenerate && ctx.degenerate !== undefined;
    // attempt: HTTP attempts that count against retries.max (transport failures and resamples); http: attempts made.
    const st: CallState = { discarded: [], usage: null, attempt: 0, http: 0, refusals: 0 };
    for (;;) {
      if (ctx.signal?.aborted) throw abortError(ctx.signal);
      const { body, sent } = this.body(req, req.seed === undefined ? undefined : resampleSeed(req.seed, st.discarded.length));
      const release = await this.opts.limiter.acquire(ctx.signal);
      this.opts.onAttempt?.(this.spec.model);
      st.http++;
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
        await this.failed(err, sent, st, ctx);
        continue;
      }
      link.dispose();
      release();
      const kept = this.reply(completion, st, ctx);
      if (kept.degenerate === null || !resample || st.attempt >= this.opts.retries.max) return kept;
      const bad = kept.degenerate;
      st.discarded.push({ message: kept.message, choice: kept.choice, reason: bad, sample: st.discarded.length + 1 });
      st.attempt++;
      const delay = backoffMs(st.attempt - 1, this.opts.retries, ctx.rng);
      this.opts.onRetry?.({ model: this.spec.model, attempt: st.attempt, kind: `degenerate reply: ${bad}`, delayMs: delay });
      await sleep(delay, ctx.signal);
    }
  }

  /**
   * A failed attempt: resolves when the request is to be sent again (a refused parameter changed
   * for the run, or a retryable failure after its backoff); throws `ModelCallError` when it is
   * not retryable or retries ran out, an AbortError when aborted.
   */
  private async failed(err: unknown, sent: SentParam[], st: CallState, ctx: ChatContext): Promise<void> {
    const { retries, redactor } = this.opts;
    if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
    const rawBody = this.errorBodies.bodyOf((err as { headers?: unknown }).headers);
    const description = redactor.text(describeRequestError(err, this.url, { rawBody, timeoutMs: this.opts.timeoutMs }));
    // A parameter the endpoint does not accept: change it once for the run and resend at once.
    const refused = refusedParam(err, sent, rawBody);
    if (refused !== null && st.refusals < sent.length) {
      const r = this.params.refuse(refused, description.replace(/ \(POST [^)]*\)$/, ''));
      if (r.retry) {
        st.refusals++;
        if (r.adjustment) this.opts.onAdjust?.(r.adjustment);
        return;
      }
    }
    const c = classifyError(err);
    const retryable = c.retryable && (ctx.retryConnection !== false || (c.kind !== 'connection error' && c.kind !== 'timeout'));
    const msg = `${this.spec.model}: ${description}`;
    if (!retryable || st.attempt >= retries.max) {
      const tail = retryable ? ` (gave up after ${st.http} attempts)` : '';
      throw new ModelCallError(`${msg}${tail}`, st.http, c.kind, `${description}${tail}`);
    }
    st.attempt++;
    const delay = c.retryAfterMs ?? backoffMs(st.attempt - 1, retries, ctx.rng);
    this.opts.onRetry?.({ model: this.spec.model, attempt: st.attempt, kind: c.kind, delayMs: delay });
    await sleep(delay, ctx.signal);
  }

  /** A received reply as a `ChatResult` (its usage added to the call's); `degenerate` says whether to resample it. */
  private reply(completion: ChatCompletion, st: CallState, ctx: ChatContext): ChatResult {
    const choice = completion?.choices?.[0];
    const replyUsage = completion?.usage
      ? { prompt_tokens: completion.usage.prompt_tokens ?? 0, completion_tokens: completion.usage.completion_tokens ?? 0 }
      : null;
    st.usage = sumUsage(st.usage, replyUsage);
    const finishReason = typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
    const truncated = finishReason === 'length';
    // A reply cut off at the token limit is its own outcome: never resampled, never "degenerate".
    const bad = truncated ? null : ctx.degenerate ? ctx.degenerate(choice) : choice ? null : 'no choices in the reply';
    const empty: ChatMessage = { role: 'assistant', content: '', refusal: null } as ChatMessage;
    return {
      message: choice?.message ?? empty,
      choice: choice ?? ({ index: 0, message: empty, finish_reason: 'stop', logprobs: null } as ChatChoice),
      usage: st.usage,
      attempts: st.http,
      sample: st.discarded.length + 1,
      discarded: st.discarded,
      finishReason,
      truncated,
      degenerate: bad,
    };
  }
}

/** What one `chat` call has used so far. */
interface CallState {
  discarded: DiscardedReply[];
  usage: ChatResult['usage'];
  attempt: number;
  http: number;
  refusals: number;
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
