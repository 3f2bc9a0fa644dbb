/**
 * What the runner knows about real OpenAI-compatible endpoints beyond the wire format: which
 * request parameters an endpoint accepts (and the one-time fallback when it refuses one), and how
 * a failed request is described to the user (status, the provider's own message, the URL; one
 * line; never an HTML page).
 *
 * ## Request parameters (`RequestParams`)
 *
 * Each model starts from its config: the token cap is sent as `max_tokens_param` (`max_tokens` or
 * `max_completion_tokens`), and `omit_params` are never sent. When an endpoint still answers 400
 * (or 422) naming one of the parameters the request carried as unsupported ({@link refusedParam}),
 * the client changes that parameter ONCE for the rest of the run and resends at once:
 * - the cap switches spelling (`max_tokens` -> `max_completion_tokens`, or back);
 * - `temperature`, `parallel_tool_calls`, `seed`, `logprobs` (with `top_logprobs`) are omitted.
 * A second refusal of the same parameter is an error (the request fails as usual). Every change is
 * handed to `onAdjust` (the run prints one notice and records it in `runs.config`).
 *
 * Documented refusals this is built on (the test endpoint in `tests/helpers/fake-provider.ts`
 * reproduces each, with its source):
 * - OpenAI reasoning models (o1, o3, o4-mini, gpt-5): 400 `{"error": {"message": "Unsupported
 *   parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'
 *   instead.", "param": "max_tokens", "code": "unsupported_parameter"}}`, and `code:
 *   "unsupported_value"` for `temperature` other than 1; o4-mini also refuses
 *   `parallel_tool_calls` (openai-openapi: `max_tokens` "is not compatible with o-series models").
 * - Gateways that refuse `parallel_tool_calls` outright ("parallel_tool_calls=False is not supported
 *   on this backend", stdapi-ai/stdapi.ai#90), and FastAPI servers that forbid unknown fields
 *   (422 `{"detail": [{"type": "extra_forbidden", "loc": ["body", "<param>"], "msg": "Extra inputs
 *   are not permitted"}]}`).
 * A 400 that names a parameter without saying it is unsupported (vLLM's "'max_tokens' or
 * 'max_completion_tokens' is too large: ...") is NOT a refusal: it fails like any other 400.
 */
import OpenAI from 'openai';
import type { MaxTokensParam, OmittableParam, ResolvedModel } from './config.ts';

// ---------------------------------------------------------------------------------------------
// Request parameters
// ---------------------------------------------------------------------------------------------

/** A change made to a model's request parameters after its endpoint refused one. */
export interface ParamAdjustment {
  model: string;
  base_url: string | null;
  /** The parameter the endpoint refused, as sent. */
  param: string;
  /** What the client does from now on. */
  action: 'omitted' | 'sent as max_completion_tokens' | 'sent as max_tokens';
  /** The endpoint's answer (status and message, one line). */
  reason: string;
}

/** The optional parameters a request may carry, as body field names. */
export type SentParam = MaxTokensParam | Exclude<OmittableParam, 'max_tokens'> | 'top_logprobs';

const CAP_SPELLINGS: readonly string[] = ['max_tokens', 'max_completion_tokens'];

/** The group a body field belongs to (both cap spellings are one parameter; top_logprobs goes with logprobs). */
function groupOf(param: SentParam): OmittableParam {
  if (CAP_SPELLINGS.includes(param)) return 'max_tokens';
  if (param === 'top_logprobs') return 'logprobs';
  return param as OmittableParam;
}

/**
 * The request parameters of one model endpoint for a run, shared by every request to it. Starts
 * from the config and changes at most once per parameter (see the module comment).
 */
export class RequestParams {
  maxTokensParam: MaxTokensParam;
  readonly omit: Set<OmittableParam>;
  readonly adjustments: ParamAdjustment[] = [];
  private readonly changed = new Set<OmittableParam>();
  constructor(private readonly spec: Pick<ResolvedModel, 'model' | 'base_url'> & Partial<Pick<ResolvedModel, 'max_tokens_param' | 'omit_params'>>) {
    this.maxTokensParam = spec.max_tokens_param ?? 'max_tokens';
    this.omit = new Set(spec.omit_params ?? []);
  }

  /** Whether a body field is sent under the current parameters. */
  sends(param: SentParam): boolean {
    if (this.omit.has(groupOf(param))) return false;
    return CAP_SPELLINGS.includes(param) ? param === this.maxTokensParam : true;
  }

  /**
   * The endpoint refused `param` (a field the request carried). Returns `retry` with the
   * adjustment made now (null when another request already made it), or `fail` when the parameter
   * was adjusted before and is refused again.
   */
  refuse(param: SentParam, reason: string): { retry: true; adjustment: ParamAdjustment | null } | { retry: false } {
    if (!this.sends(param)) return { retry: true, adjustment: null }; // a concurrent request already changed it
    const group = groupOf(param);
    if (this.changed.has(group)) return { retry: false };
    this.changed.add(group);
    let action: ParamAdjustment['action'];
    if (group === 'max_tokens') {
      this.maxTokensParam = this.maxTokensParam === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
      action = `sent as ${this.maxTokensParam}`;
    } else {
      this.omit.add(group);
      action = 'omitted';
    }
    const adjustment: ParamAdjustment = { model: this.spec.model, base_url: this.spec.base_url, param, action, reason };
    this.adjustments.push(adjustment);
    return { retry: true, adjustment };
  }
}

/** Words with which endpoints say a parameter is not accepted. */
const REFUSAL =
  /unsupported|not supported|unrecognized|unrecognised|unknown (?:parameter|field|argument|key|name)|not permitted|not allowed|extra (?:inputs?|fields?|arguments?)|no longer supported|not available for this model/i;

const fieldPattern = (p: string) => new RegExp(`(^|[^A-Za-z0-9_])${p}([^A-Za-z0-9_]|$)`);

/**
 * The parameter a 400/422 answer refuses, among the fields the request carried (`sent`), or null
 * when the answer is not such a refusal. Reads the OpenAI error object's `param` and `code` when
 * present (`unsupported_parameter`, `unsupported_value`), else the message: it must say the field
 * is unsupported (or unknown, or not permitted) and name exactly one of the sent fields.
 */
export function refusedParam(err: unknown, sent: readonly SentParam[], rawBody?: string | null): SentParam | null {
  if (!(err instanceof OpenAI.APIError) || (err.status !== 400 && err.status !== 422)) return null;
  const e = (err.error && typeof err.error === 'object' ? err.error : {}) as { param?: unknown; code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : (rawBody ?? err.message ?? '');
  const code = typeof e.code === 'string' ? e.code : '';
  if (typeof e.param === 'string' && (sent as readonly string[]).includes(e.param)) {
    if (/^unsupported_(parameter|value)$/.test(code) || REFUSAL.test(message)) return e.param as SentParam;
  }
  if (!REFUSAL.test(message)) return null;
  const hits = sent.filter((p) => fieldPattern(p).test(message));
  return hits.length === 1 ? hits[0] : null;
}

// ---------------------------------------------------------------------------------------------
// Error text
// ---------------------------------------------------------------------------------------------

/** Longest provider message kept in an error line. */
export const MAX_PROVIDER_MESSAGE = 300;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const cut = (s: string, n = MAX_PROVIDER_MESSAGE) => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

/** True when a body looks like an HTML page (a proxy, a web server, a non-API app). */
export function isHtml(text: string): boolean {
  return /^\s*<(!doctype\s+html|html|head|body|title)\b/i.test(text) || /<\/(html|body|head)>/i.test(text);
}

/** The readable text of an HTML page: its title, then its text without tags, scripts or styles. */
export function htmlText(text: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
  const body = text
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#x?27;|&#39;/g, "'")
    .replace(/&amp;/g, '&');
  const t = oneLine(title ?? '');
  const b = oneLine(body);
  return t && !b.startsWith(t) ? `${t}: ${b}` : b || t;
}

/** The message of a JSON error body in any of the shapes providers use, with its code when it adds something. */
function jsonErrorMessage(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return typeof body === 'string' ? body : null;
  const o = body as Record<string, unknown>;
  const err = o.error;
  let msg: string | null = null;
  let code: unknown = o.code;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    msg = typeof e.message === 'string' ? e.message : null;
    code = e.code ?? e.type;
  } else if (typeof err === 'string') msg = err; // Ollama's native API, some proxies
  if (msg === null && typeof o.message === 'string') msg = o.message; // vLLM before 0.6: {"object":"error","message":...}
  if (msg === null && typeof o.detail === 'string') msg = o.detail; // FastAPI
  if (msg === null && Array.isArray(o.detail)) {
    msg = o.detail
      .map((d) => (d && typeof d === 'object' ? `${(d as { msg?: unknown }).msg ?? ''}${Array.isArray((d as { loc?: unknown }).loc) ? ` (${((d as { loc: unknown[] }).loc).join('.')})` : ''}` : String(d)))
      .join('; ');
  }
  if (msg === null) return null;
  if (typeof code === 'string' && code !== '' && !/^\d+$/.test(code) && !msg.includes(code)) msg = `${msg} (${code})`;
  return msg;
}

/** The provider's own words from an error body (JSON error object, plain text, or an HTML page). */
export function providerMessage(rawBody: string | null | undefined, fallback: string): string {
  const raw = (rawBody ?? '').trim();
  if (raw === '') return cut(oneLine(fallback)) || 'no body';
  try {
    const m = jsonErrorMessage(JSON.parse(raw));
    if (m !== null) return cut(oneLine(m));
  } catch {
    /* not JSON */
  }
  if (isHtml(raw)) return cut(`HTML page, not an API error: ${htmlText(raw)}`);
  return cut(oneLine(raw));
}

/** `CODE address:port` (or `CODE host`) of the first error in a cause chain that has a system error code. */
export function networkCause(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 8 && e && typeof e === 'object'; i++) {
    const x = e as { code?: unknown; address?: unknown; port?: unknown; hostname?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof x.code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(x.code)) {
      const where =
        typeof x.address === 'string' ? ` ${x.address}${x.port !== undefined ? `:${String(x.port)}` : ''}` : typeof x.hostname === 'string' ? ` ${x.hostname}` : '';
      return `${x.code}${where}`;
    }
    // AggregateError (happy eyeballs tries several addresses): take the first.
    e = x.cause ?? (Array.isArray(x.errors) ? x.errors[0] : undefined);
  }
  return null;
}

/** The deepest message of a cause chain. */
function innermostMessage(err: unknown): string {
  let e: unknown = err;
  let msg = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 8 && e && typeof e === 'object'; i++) {
    const x = e as { message?: unknown; cause?: unknown };
    if (typeof x.message === 'string' && x.message !== '') msg = x.message;
    e = x.cause;
  }
  return msg;
}

/**
 * One line describing a failed model request: `http 401: <provider message>`, `connection error:
 * ECONNREFUSED 127.0.0.1:9`, `timeout: no answer within 120000 ms`, ... followed by
 * `(POST <url>)`. `rawBody` is the error response's body when it was captured
 * ({@link captureErrorBodies}).
 */
export function describeRequestError(err: unknown, url: string, opts: { rawBody?: string | null; timeoutMs?: number } = {}): string {
  let what: string;
  if (err instanceof OpenAI.APIConnectionTimeoutError) what = `timeout: no answer within ${opts.timeoutMs ?? '?'} ms`;
  else if (err instanceof OpenAI.APIConnectionError) what = `connection error: ${networkCause(err) ?? cut(oneLine(innermostMessage(err)))}`;
  else if (err instanceof OpenAI.APIError && err.status !== undefined) {
    what = `http ${err.status}: ${providerMessage(opts.rawBody, err.message.replace(/^\d{3}\s+/, ''))}`;
  } else if (err instanceof SyntaxError) what = `malformed response: the body is not JSON (${cut(oneLine(err.message), 160)})`;
  else {
    const net = networkCause(err);
    what = net ? `connection error: ${net}` : cut(oneLine(innermostMessage(err)));
  }
  return `${what} (POST ${url})`;
}

/** `<base_url>/chat/completions`, as the SDK builds it. */
export const chatCompletionsUrl = (baseURL: string) => `${baseURL.replace(/\/+$/, '')}/chat/completions`;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Wraps a `fetch` so that the body of every error response (status >= 400) stays readable after
 * the SDK has consumed it: `bodyOf(err.headers)` returns it (the SDK hands the response's own
 * `Headers` object to the error it throws). The SDK keeps only a parsed `error` field, which loses
 * the message of bodies in other shapes (vLLM's older `{"object": "error", "message": ...}`,
 * FastAPI's `{"detail": ...}`, HTML pages).
 */
export function captureErrorBodies(base: Fetch): { fetch: Fetch; bodyOf(headers: unknown): string | null } {
  const bodies = new WeakMap<object, string>();
  return {
    fetch: async (input, init) => {
      const res = await base(input, init);
      if (res.status < 400) return res;
      const text = await res.text().catch(() => '');
      const copy = new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
      bodies.set(copy.headers, text);
      return copy;
    },
    bodyOf: (headers) => (headers && typeof headers === 'object' ? (bodies.get(headers) ?? null) : null),
  };
}

/** What a reply cut off at the token limit is recorded as (judges, probes). */
export const truncatedText = (spec: Pick<ResolvedModel, 'max_tokens'>) =>
  `reply cut off at the token limit (finish_reason=length, max_tokens ${spec.max_tokens}); raise max_tokens`;

/** A hint for the usual causes of a failed endpoint check, by what failed. */
export function endpointHint(description: string, spec: Pick<ResolvedModel, 'model' | 'api_key_env'>): string | null {
  if (/^http 40[13]\b/.test(description)) return spec.api_key_env ? `check the key in ${spec.api_key_env}` : 'the endpoint wants a key: name its variable in api_key_env';
  if (/^http 404\b/.test(description)) return `check the model name "${spec.model}" and that base_url ends in /v1`;
  if (/^http 405\b|^http 501\b|HTML page/.test(description)) return 'base_url does not point to an OpenAI-compatible API (it should end in /v1)';
  if (/ECONNREFUSED/.test(description)) return 'is the server running, and on that port?';
  if (/ENOTFOUND|EAI_AGAIN/.test(description)) return 'check the host name in base_url';
  return null;
}
