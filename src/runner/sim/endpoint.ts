/**
 * The sim endpoint's HTTP server (runs in whichever thread calls `listenSimEndpoint`; see
 * `server.ts` for the threads and `behavior.ts` for the replies): one handler per route, the fault
 * rules, the latency gate, the token accounting and cap, and the shared counters.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Scenario } from '../../schema/scenario.ts';
import { buildScenarioIndex, requestKey, sha256Hex, simReply, u, type ScenarioIndex, type SimMode, type SimReply } from './behavior.ts';
import {
  SIM_FAULT_KINDS,
  SIM_MODELS,
  SimModelError,
  parseSimModel,
  type ParsedSimModel,
  type SimFaultKind,
  type SimFaultRule,
} from './profiles.ts';

export interface SimStats {
  requests: number;
  /** Answered chat completions, by mode. */
  completions: Record<string, number>;
  /** Injected faults, by kind. */
  faults: Record<string, number>;
  /** Requests rejected with 4xx (bad JSON, unknown model, bad route...). */
  rejected: number;
  /**
   * Time the endpoint held the chat completion requests it answered (including injected 429 and
   * 500 replies), summed from each request's arrival to its reply, in ms: the model's share of a
   * client's wall time (the latency, timer slack, and any sim work that overran the latency).
   */
  answerMs: number;
}


interface FaultDecision {
  kind: SimFaultKind;
}

function errorBody(message: string, type: string, code: string | null, param: string | null = null) {
  return { error: { message, type, param, code } };
}

function estimateTokens(s: string): number {
  return s.length === 0 ? 0 : Math.ceil(s.length / 4);
}


// ---------------------------------------------------------------------------------------------
// Counters: Int32 counts and one BigInt64 sum of microseconds, in one buffer (shared memory when
// the endpoint runs in a worker), so `stats()` stays synchronous and is up to date as soon as a
// reply has been sent.
// ---------------------------------------------------------------------------------------------

const MODE_SLOT: Record<SimMode, number> = { agent: 0, probe_decision: 1, probe: 2, judge: 3, chat: 4 };
const MODES = Object.keys(MODE_SLOT) as SimMode[];
const C_REQUESTS = 0;
const C_REJECTED = 1;
const C_MODES = 2;
const C_FAULTS = C_MODES + MODES.length;
const N_COUNTS = C_FAULTS + SIM_FAULT_KINDS.length;
const FAULT_SLOT = new Map<SimFaultKind, number>(SIM_FAULT_KINDS.map((k, i) => [k, i]));
/** Byte offset of the BigInt64 answer-time sum (µs), 8-aligned after the Int32 counts. */
const ANSWER_US_OFFSET = Math.ceil((N_COUNTS * 4) / 8) * 8;
/** Bytes of an endpoint's counters buffer. */
export const SIM_COUNTERS_BYTES = ANSWER_US_OFFSET + 8;

export interface SimCounters {
  counts: Int32Array;
  answerUs: BigInt64Array;
}

/** Views over a counters buffer of {@link SIM_COUNTERS_BYTES} bytes. */
export function simCounters(buf: ArrayBufferLike): SimCounters {
  return { counts: new Int32Array(buf, 0, N_COUNTS), answerUs: new BigInt64Array(buf, ANSWER_US_OFFSET, 1) };
}

/** Reads the counters into the public stats shape (kinds never seen are absent). */
export function readSimStats(c: SimCounters): SimStats {
  const completions: Record<string, number> = {};
  const faults: Record<string, number> = {};
  for (const m of MODES) {
    const n = Atomics.load(c.counts, C_MODES + MODE_SLOT[m]);
    if (n > 0) completions[m] = n;
  }
  SIM_FAULT_KINDS.forEach((k, i) => {
    const n = Atomics.load(c.counts, C_FAULTS + i);
    if (n > 0) faults[k] = n;
  });
  return {
    requests: Atomics.load(c.counts, C_REQUESTS),
    completions,
    faults,
    rejected: Atomics.load(c.counts, C_REJECTED),
    answerMs: Number(Atomics.load(c.answerUs, 0)) / 1000,
  };
}


/** Validated options with defaults applied; structured-cloneable (it is posted to the worker). */
export interface SimEndpointConfig {
  port: number;
  seed: number;
  latencyMs: number;
  scenarios: Scenario[];
  faults: SimFaultRule[];
  /** As given (undefined: not given, which changes the 429 headers). */
  retryAfterMs?: number;
  reasoningIn?: 'reasoning_content' | 'content' | 'both';
}


export interface SimEndpoint {
  port: number;
  close(): Promise<void>;
}

/** What the handlers of one endpoint share: its config, counters and the little state it keeps. */
interface EndpointState {
  cfg: SimEndpointConfig;
  counters: SimCounters;
  index: ScenarioIndex;
  /** Attempts per (full model name, request key): the only state faults depend on. */
  attempts: Map<string, number>;
  /** Parsed model names are pure functions of the name: each distinct name is parsed once. */
  models: Map<string, ParsedSimModel>;
  /** Requests held open by the `timeout` fault (destroyed at close). */
  held: Set<ServerResponse>;
  timers: Set<NodeJS.Timeout>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function reject(st: EndpointState, res: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null): void {
  Atomics.add(st.counters.counts, C_REJECTED, 1);
  send(res, status, errorBody(message, type, code, param));
}

/**
 * Arms the latency timer now and returns `release(fn)`: `fn` runs when the timer has fired and
 * `release` has been called, whichever comes last. Arming before the reply is computed keeps the
 * sim's own work inside the latency (timers count from the event loop's clock at arming time).
 */
function gate(st: EndpointState, ms: number): (fn: () => void) => void {
  let fired = ms <= 0;
  let pending: (() => void) | null = null;
  if (!fired) {
    const t = setTimeout(() => {
      st.timers.delete(t);
      fired = true;
      pending?.();
    }, ms);
    st.timers.add(t);
  }
  return (fn: () => void) => {
    if (fired) fn();
    else pending = fn;
  };
}

function chooseFault(st: EndpointState, model: ParsedSimModel, key: string, attempt: number): FaultDecision | null {
  const serverFaults = st.cfg.faults;
  if (model.faults.length === 0 && serverFaults.length === 0) return null;
  const rules = [...model.faults, ...serverFaults.filter((f) => !f.models || f.models.includes(model.base))];
  for (const [i, rule] of rules.entries()) {
    if (rule.first !== undefined) {
      if (attempt < rule.first && (rule.rate === undefined || u(key, `fault:${i}:${rule.kind}:${attempt}`) < rule.rate)) return { kind: rule.kind };
      continue;
    }
    const rate = rule.rate ?? 1;
    if (rate >= 1 || u(key, `fault:${i}:${rule.kind}:${attempt}`) < rate) return { kind: rule.kind };
  }
  return null;
}

function modelOf(st: EndpointState, name: string): ParsedSimModel {
  let m = st.models.get(name);
  if (!m) {
    m = parseSimModel(name);
    st.models.set(name, m);
  }
  return m;
}

/** The request's model, or null after rejecting a request the endpoint does not serve. */
function acceptCompletion(st: EndpointState, res: ServerResponse, body: Record<string, unknown>): ParsedSimModel | null {
  const no = (status: number, message: string, code: string | null, param: string | null = null) => {
    reject(st, res, status, message, 'invalid_request_error', code, param);
    return null;
  };
  if (body.stream === true) return no(400, 'the sim endpoint does not support streaming; send stream: false', 'stream_unsupported');
  if (typeof body.model !== 'string' || body.model === '') return no(400, 'you must provide a model parameter', null);
  if (!Array.isArray(body.messages) || body.messages.length === 0) return no(400, "'messages' must be a non-empty array", null);
  let model: ParsedSimModel;
  try {
    model = modelOf(st, body.model);
  } catch (e) {
    if (e instanceof SimModelError) return no(e.status, e.message, e.code);
    throw e;
  }
  // Parameters this model refuses (`+unsupported=`), as OpenAI's reasoning models do.
  const refused = model.unsupported.find((p) => body[p] !== undefined);
  if (refused !== undefined) return no(400, `Unsupported parameter: '${refused}' is not supported with this model.`, 'unsupported_parameter', refused);
  return model;
}

/** The sim's reply to a request, with the reply faults (`empty`, `malformed`, `emptyid`) applied. */
function faultedReply(st: EndpointState, model: ParsedSimModel, body: Record<string, unknown>, key: string, fault: FaultDecision | null): SimReply {
  let reply: SimReply;
  if (fault?.kind === 'empty') {
    reply = { mode: 'chat', content: '', reasoning: null, toolCalls: [], finishReason: 'stop', logprobs: null, scenarioId: null, debug: {} };
  } else {
    reply = simReply({ seed: st.cfg.seed, model, body, index: st.index, requestKey: key, reasoningIn: st.cfg.reasoningIn });
    if (fault?.kind === 'malformed') {
      if (reply.toolCalls.length > 0) {
        reply = {
          ...reply,
          toolCalls: reply.toolCalls.map((c) => ({ ...c, arguments: c.arguments.length > 2 ? c.arguments.slice(0, Math.max(1, c.arguments.length - 7)) : '{"reason": ' })),
        };
      } else {
        reply = { ...reply, content: '{"answer": "' };
      }
    }
  }
  if (fault?.kind === 'emptyid') reply = { ...reply, toolCalls: reply.toolCalls.map((c) => ({ ...c, id: '' })) };
  return reply;
}

/**
 * The reply under the token cap (`max_completion_tokens`, else `max_tokens`), which counts
 * reasoning tokens too: a reply that does not fit is cut off where the cap falls, the way a
 * reasoning model that runs out of tokens answers (vLLM's serving_chat.py: `finish_reason:
 * "length"`, no content, no tool call, the reasoning so far). The `length` fault cuts a reply off
 * at half its length.
 */
function cappedReply(reply: SimReply, body: Record<string, unknown>, fault: FaultDecision | null): { reply: SimReply; reasoningTokens: number; completionTokens: number } {
  let reasoningTokens = estimateTokens(reply.reasoning ?? '');
  let completionTokens = estimateTokens(reply.content ?? '') + reasoningTokens + reply.toolCalls.reduce((a, c) => a + estimateTokens(c.name + c.arguments) + 3, 0);
  const capField = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : body.max_tokens;
  const cap = fault?.kind === 'length' ? Math.max(1, Math.floor(completionTokens / 2)) : typeof capField === 'number' && capField >= 1 ? Math.floor(capField) : Infinity;
  if (completionTokens > cap) {
    // A reasoning model is cut off in its reasoning (no content yet); another one mid-text.
    reply =
      reply.reasoning !== null
        ? { ...reply, content: null, reasoning: reply.reasoning.slice(0, cap * 4), toolCalls: [], finishReason: 'length', logprobs: null }
        : { ...reply, content: (reply.content ?? '').slice(0, cap * 4), toolCalls: [], finishReason: 'length', logprobs: null };
    reasoningTokens = Math.min(reasoningTokens, cap);
    completionTokens = cap;
  }
  return { reply, reasoningTokens, completionTokens };
}

/** The chat completion body (OpenAI's wire format) of a reply. */
function completionBody(st: EndpointState, body: Record<string, unknown>, key: string, r: ReturnType<typeof cappedReply>): Record<string, unknown> {
  const { reply } = r;
  const promptTokens = estimateTokens(JSON.stringify(body.messages) + (body.tools ? JSON.stringify(body.tools) : ''));
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: (reply.toolCalls.length > 0 || reply.finishReason === 'length') && reply.content === null ? null : (reply.content ?? ''),
    refusal: null,
    annotations: [],
  };
  if (reply.reasoning !== null) message.reasoning_content = reply.reasoning;
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: `chatcmpl-sim${sha256Hex(key, 'id').slice(0, 24)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: `sim-${st.cfg.seed}`,
    choices: [{ index: 0, message, logprobs: reply.logprobs ? { content: reply.logprobs, refusal: null } : null, finish_reason: reply.finishReason }],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: r.completionTokens,
      total_tokens: promptTokens + r.completionTokens,
      completion_tokens_details: { reasoning_tokens: r.reasoningTokens },
    },
  };
}

/** `POST /v1/chat/completions` with a parsed JSON object body. */
function completion(st: EndpointState, res: ServerResponse, body: Record<string, unknown>, arrived: number): void {
  const { cfg, counters } = st;
  const model = acceptCompletion(st, res, body);
  if (!model) return;
  const release = gate(st, cfg.latencyMs - (performance.now() - arrived));
  const key = requestKey(cfg.seed, model, body);
  const attemptKey = `${body.model as string}\u0000${key}`;
  const attempt = st.attempts.get(attemptKey) ?? 0;
  st.attempts.set(attemptKey, attempt + 1);
  const fault = chooseFault(st, model, key, attempt);
  if (fault) Atomics.add(counters.counts, C_FAULTS + FAULT_SLOT.get(fault.kind)!, 1);
  if (fault?.kind === 'timeout') {
    st.held.add(res);
    res.on('close', () => st.held.delete(res));
    return; // never answered
  }
  // The reply is computed now and sent `latencyMs` after the request arrived: the sim's own work
  // runs inside the simulated latency, as a real model's does (it is not added on top).
  const answer = (status: number, payload: unknown, headers?: Record<string, string>) => {
    Atomics.add(counters.answerUs, 0, BigInt(Math.round((performance.now() - arrived) * 1000)));
    send(res, status, payload, headers);
  };
  if (fault?.kind === '429') {
    const ms = model.retryAfterMs ?? cfg.retryAfterMs ?? 1000;
    const headers: Record<string, string> = { 'retry-after': String(Math.max(0, Math.ceil(ms / 1000))) };
    if (model.retryAfterMs !== null || cfg.retryAfterMs !== undefined) headers['retry-after-ms'] = String(ms);
    const body429 = errorBody('Rate limit reached for requests (simulated). Please retry after the delay in retry-after.', 'rate_limit_exceeded', 'rate_limit_exceeded');
    return release(() => answer(429, body429, headers));
  }
  if (fault?.kind === '500') {
    return release(() => answer(500, errorBody('The server had an error while processing your request (simulated).', 'server_error', null)));
  }
  const capped = cappedReply(faultedReply(st, model, body, key, fault), body, fault);
  const out = completionBody(st, body, key, capped);
  const mode = capped.reply.mode;
  release(() => {
    Atomics.add(counters.counts, C_MODES + MODE_SLOT[mode], 1);
    answer(200, out);
  });
}

/** The completions route: POST with a JSON object body. */
function routeCompletions(st: EndpointState, req: IncomingMessage, res: ServerResponse, raw: Buffer, arrived: number): void {
  if (req.method !== 'POST') return reject(st, res, 405, 'use POST for /v1/chat/completions', 'invalid_request_error', 'method_not_allowed');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return reject(st, res, 400, 'the request body is not valid JSON', 'invalid_request_error', 'invalid_json');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return reject(st, res, 400, 'the request body must be a JSON object', 'invalid_request_error', 'invalid_json');
  }
  completion(st, res, body as Record<string, unknown>, arrived);
}

const modelEntry = (id: string) => ({ id, object: 'model', created: 0, owned_by: SIM_MODELS[id].family });

/** `GET /v1/models` and `GET /v1/models/<id>`; false when the request is neither. */
function routeModels(st: EndpointState, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  if (req.method !== 'GET') return false;
  if (path === '/v1/models') {
    send(res, 200, { object: 'list', data: Object.keys(SIM_MODELS).map(modelEntry) });
    return true;
  }
  const m = /^\/v1\/models\/(.+)$/.exec(path);
  if (!m) return false;
  const id = decodeURIComponent(m[1]!);
  if (Object.hasOwn(SIM_MODELS, id)) send(res, 200, modelEntry(id));
  else reject(st, res, 404, `the model \`${id}\` does not exist`, 'invalid_request_error', 'model_not_found');
  return true;
}

/** Dispatches a request whose body has been read to its route (404 for any other). */
function route(st: EndpointState, req: IncomingMessage, res: ServerResponse, chunks: Buffer[], arrived: number): void {
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
  try {
    if (path === '/v1/chat/completions') return routeCompletions(st, req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), arrived);
    if (routeModels(st, req, res, path)) return;
    reject(st, res, 404, `unknown route ${req.method} ${path || '/'}`, 'invalid_request_error', 'not_found');
  } catch (e) {
    send(res, 500, errorBody(`sim bug: ${(e as Error).message}`, 'server_error', null));
  }
}

/** Starts the HTTP endpoint in the current thread; counters are updated with `Atomics`. */
export async function listenSimEndpoint(cfg: SimEndpointConfig, counters: SimCounters): Promise<SimEndpoint> {
  const st: EndpointState = { cfg, counters, index: buildScenarioIndex(cfg.scenarios), attempts: new Map(), models: new Map(), held: new Set(), timers: new Set() };
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now();
    Atomics.add(counters.counts, C_REQUESTS, 1);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => route(st, req, res, chunks, arrived));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolvePromise, rejectPromise) => {
    server.once('error', rejectPromise);
    server.listen(cfg.port, '127.0.0.1', () => {
      server.off('error', rejectPromise);
      resolvePromise();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    port,
    async close() {
      if (closed) return;
      closed = true;
      for (const t of st.timers) clearTimeout(t);
      st.timers.clear();
      for (const r of st.held) r.destroy();
      const done = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}
