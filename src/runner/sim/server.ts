/**
 * The simulated OpenAI-compatible endpoint, on 127.0.0.1 only, so runs and tests work offline
 * through the real HTTP path and the real `openai` client.
 *
 * Routes (anything else: 404 in the OpenAI error format):
 * - `POST /v1/chat/completions` — the chat completions wire format: `choices[0].message` with
 *   `content`, `reasoning_content` (subject reasoning), `tool_calls` (`type: "function"`,
 *   `function.arguments` a JSON string), `finish_reason` (`tool_calls` | `stop`), `usage`
 *   (prompt/completion/total tokens, `completion_tokens_details.reasoning_tokens`), and
 *   `choices[0].logprobs.content` when the request sets `logprobs: true` (probe-mode decision
 *   question: one token per option word, `top_logprobs` over the four options).
 *   Streaming is not supported (400).
 * - `GET /v1/models`, `GET /v1/models/<id>` — the sim profiles; `owned_by` is the family.
 *
 * Any API key is accepted. Model names and fault suffixes: see `profiles.ts`. Replies: see
 * `behavior.ts` (deterministic in (seed, model, request content); never in arrival order).
 *
 * Fault state is the only state: attempts are counted per (full model name, request key), so
 * `429@first2` fails the first two attempts of EACH distinct request and then lets it through,
 * independently of other requests in flight.
 *
 * Threads: `startSimServer` runs the endpoint in a worker thread by default (`worker.ts`, one
 * worker per process shared by every endpoint, listening on 127.0.0.1 and posting its port
 * back), so a run's client work and the sim's JSON/hashing work overlap on two cores. The
 * counters behind `stats()` live in shared memory, so `stats()` stays synchronous. `thread:
 * 'main'` runs it in the calling thread instead (`standoff sim serve` does). The replies are the
 * same either way: they are a pure function of (seed, model, request content).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { packagePath, workerUrl } from '../../paths.ts';
import type { Scenario } from '../../schema/scenario.ts';
import { loadScenarios } from '../scenarios.ts';
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

/** `<repo>/scenarios`, located from this file (not the working directory). */
export const DEFAULT_SCENARIOS_DIR = packagePath('scenarios');

export interface SimServerOptions {
  /** Port on 127.0.0.1 (default 0 = ephemeral). */
  port?: number;
  /** Seed of every simulated choice (default 0). */
  seed?: number;
  /**
   * Latency of every answer, in ms (default 0): the reply is sent this long after the request
   * arrived. The sim computes its reply inside that window (as a real model does), so a client
   * sees `latencyMs` per request, not `latencyMs` plus the sim's own work.
   */
  latencyMs?: number;
  /** Scenarios the sim recognises (default: `loadScenarios(scenariosDir)`). */
  scenarios?: readonly Scenario[];
  /** Directory to load scenarios from when `scenarios` is not given (default `<repo>/scenarios`). */
  scenariosDir?: string;
  /** Fault rules applied to every request (or to `models`), in addition to model-name suffixes. */
  faults?: SimFaultRule[];
  /** Delay announced by 429 replies (default 1000 ms; `retry-after` in whole seconds, rounded up). */
  retryAfterMs?: number;
  /** Where subject reasoning goes in the reply message (default `reasoning_content`). */
  reasoningIn?: 'reasoning_content' | 'content' | 'both';
  /**
   * Where the endpoint runs: `worker` (default) in a worker thread of this process, so the sim's
   * JSON and hashing work runs on another core than the client that calls it; `main` in the
   * calling thread. Replies are identical either way (they depend only on seed, model and
   * request content).
   */
  thread?: 'worker' | 'main';
}

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

export interface SimServer {
  /** `http://127.0.0.1:<port>/v1` — pass as `baseURL` to the openai client. */
  baseURL: string;
  port: number;
  seed: number;
  stats(): SimStats;
  close(): Promise<void>;
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

// ---------------------------------------------------------------------------------------------
// The endpoint itself (runs in whichever thread calls `listenSimEndpoint`)
// ---------------------------------------------------------------------------------------------

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

/** Validates options and loads the default scenarios (in the calling thread, so errors surface there). */
export function resolveSimConfig(options: SimServerOptions = {}): SimEndpointConfig {
  const seed = options.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`sim seed must be an integer in [0, 2^32), got ${seed}`);
  const latencyMs = options.latencyMs ?? 0;
  if (!(latencyMs >= 0)) throw new RangeError(`latencyMs must be >= 0, got ${latencyMs}`);
  const scenarios = [...(options.scenarios ?? loadScenarios(options.scenariosDir ?? DEFAULT_SCENARIOS_DIR))];
  return {
    port: options.port ?? 0,
    seed,
    latencyMs,
    scenarios,
    faults: (options.faults ?? []).map((f) => ({ ...f, ...(f.models ? { models: [...f.models] } : {}) })),
    ...(options.retryAfterMs !== undefined ? { retryAfterMs: options.retryAfterMs } : {}),
    ...(options.reasoningIn !== undefined ? { reasoningIn: options.reasoningIn } : {}),
  };
}

export interface SimEndpoint {
  port: number;
  close(): Promise<void>;
}

/** Starts the HTTP endpoint in the current thread; counters are updated with `Atomics`. */
export async function listenSimEndpoint(cfg: SimEndpointConfig, counters: SimCounters): Promise<SimEndpoint> {
  const counts = counters.counts;
  const { seed, latencyMs } = cfg;
  const index: ScenarioIndex = buildScenarioIndex(cfg.scenarios);
  const serverFaults = cfg.faults;
  const defaultRetryAfterMs = cfg.retryAfterMs ?? 1000;

  const attempts = new Map<string, number>();
  const models = new Map<string, ParsedSimModel>();
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed || res.writableEnded) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
  const reject = (res: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null) => {
    Atomics.add(counts, C_REJECTED, 1);
    send(res, status, errorBody(message, type, code, param));
  };

  /**
   * Arms the latency timer now and returns `release(fn)`: `fn` runs when the timer has fired and
   * `release` has been called, whichever comes last. Arming before the reply is computed keeps the
   * sim's own work inside the latency (timers count from the event loop's clock at arming time).
   */
  const gate = (ms: number) => {
    let fired = ms <= 0;
    let pending: (() => void) | null = null;
    if (!fired) {
      const t = setTimeout(() => {
        timers.delete(t);
        fired = true;
        pending?.();
      }, ms);
      timers.add(t);
    }
    return (fn: () => void) => {
      if (fired) fn();
      else pending = fn;
    };
  };

  const chooseFault = (model: ParsedSimModel, key: string, attempt: number): FaultDecision | null => {
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
  };

  /** Parsed model names are pure functions of the name: parse each distinct name once. */
  const modelOf = (name: string): ParsedSimModel => {
    let m = models.get(name);
    if (!m) {
      m = parseSimModel(name);
      models.set(name, m);
    }
    return m;
  };

  const completion = (res: ServerResponse, body: Record<string, unknown>, arrived: number) => {
    if (body.stream === true) return reject(res, 400, 'the sim endpoint does not support streaming; send stream: false', 'invalid_request_error', 'stream_unsupported');
    if (typeof body.model !== 'string' || body.model === '') return reject(res, 400, 'you must provide a model parameter', 'invalid_request_error', null);
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return reject(res, 400, "'messages' must be a non-empty array", 'invalid_request_error', null);
    }
    let model: ParsedSimModel;
    try {
      model = modelOf(body.model);
    } catch (e) {
      if (e instanceof SimModelError) {
        return reject(res, e.status, e.message, 'invalid_request_error', e.code);
      }
      throw e;
    }
    // Parameters this model refuses (`+unsupported=`), as OpenAI's reasoning models do.
    const refused = model.unsupported.find((p) => body[p] !== undefined);
    if (refused !== undefined) {
      return reject(res, 400, `Unsupported parameter: '${refused}' is not supported with this model.`, 'invalid_request_error', 'unsupported_parameter', refused);
    }
    const release = gate(latencyMs - (performance.now() - arrived));
    const key = requestKey(seed, model, body);
    const attemptKey = `${body.model}\u0000${key}`;
    const attempt = attempts.get(attemptKey) ?? 0;
    attempts.set(attemptKey, attempt + 1);
    const fault = chooseFault(model, key, attempt);
    if (fault) Atomics.add(counts, C_FAULTS + FAULT_SLOT.get(fault.kind)!, 1);

    if (fault?.kind === 'timeout') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return; // never answered
    }
    // The reply is computed now and sent `latencyMs` after the request arrived: the sim's own work
    // runs inside the simulated latency, as a real model's does (it is not added on top).
    const answer = (status: number, payload: unknown, headers?: Record<string, string>) => {
      Atomics.add(counters.answerUs, 0, BigInt(Math.round((performance.now() - arrived) * 1000)));
      send(res, status, payload, headers);
    };
    if (fault?.kind === '429') {
      const ms = model.retryAfterMs ?? defaultRetryAfterMs;
      const headers: Record<string, string> = { 'retry-after': String(Math.max(0, Math.ceil(ms / 1000))) };
      if (model.retryAfterMs !== null || cfg.retryAfterMs !== undefined) headers['retry-after-ms'] = String(ms);
      const body429 = errorBody('Rate limit reached for requests (simulated). Please retry after the delay in retry-after.', 'rate_limit_exceeded', 'rate_limit_exceeded');
      return release(() => answer(429, body429, headers));
    }
    if (fault?.kind === '500') {
      return release(() => answer(500, errorBody('The server had an error while processing your request (simulated).', 'server_error', null)));
    }
    let reply: SimReply;
    if (fault?.kind === 'empty') {
      reply = { mode: 'chat', content: '', reasoning: null, toolCalls: [], finishReason: 'stop', logprobs: null, scenarioId: null, debug: {} };
    } else {
      reply = simReply({ seed, model, body, index, requestKey: key, reasoningIn: cfg.reasoningIn });
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
    let reasoningTokens = estimateTokens(reply.reasoning ?? '');
    let completionTokens =
      estimateTokens(reply.content ?? '') + reasoningTokens + reply.toolCalls.reduce((a, c) => a + estimateTokens(c.name + c.arguments) + 3, 0);
    // The token cap (`max_completion_tokens`, else `max_tokens`) counts reasoning tokens too: a reply
    // that does not fit is cut off where the cap falls, the way a reasoning model that runs out of
    // tokens answers (vLLM's serving_chat.py: `finish_reason: "length"`, no content, no tool call,
    // the reasoning so far). The `length` fault cuts a reply off at half its length.
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
    const out = {
      id: `chatcmpl-sim${sha256Hex(key, 'id').slice(0, 24)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      system_fingerprint: `sim-${seed}`,
      choices: [
        {
          index: 0,
          message,
          logprobs: reply.logprobs ? { content: reply.logprobs, refusal: null } : null,
          finish_reason: reply.finishReason,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        completion_tokens_details: { reasoning_tokens: reasoningTokens },
      },
    };
    const mode = reply.mode;
    release(() => {
      Atomics.add(counts, C_MODES + MODE_SLOT[mode], 1);
      answer(200, out);
    });
  };

  const modelEntry = (id: string) => ({ id, object: 'model', created: 0, owned_by: SIM_MODELS[id].family });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now();
    Atomics.add(counts, C_REQUESTS, 1);
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      try {
        if (path === '/v1/chat/completions') {
          if (req.method !== 'POST') return reject(res, 405, 'use POST for /v1/chat/completions', 'invalid_request_error', 'method_not_allowed');
          let body: unknown;
          try {
            body = JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'));
          } catch {
            return reject(res, 400, 'the request body is not valid JSON', 'invalid_request_error', 'invalid_json');
          }
          if (body === null || typeof body !== 'object' || Array.isArray(body)) {
            return reject(res, 400, 'the request body must be a JSON object', 'invalid_request_error', 'invalid_json');
          }
          return completion(res, body as Record<string, unknown>, arrived);
        }
        if (path === '/v1/models' && req.method === 'GET') {
          return send(res, 200, { object: 'list', data: Object.keys(SIM_MODELS).map(modelEntry) });
        }
        const m = /^\/v1\/models\/(.+)$/.exec(path);
        if (m && req.method === 'GET') {
          const id = decodeURIComponent(m[1]);
          if (Object.hasOwn(SIM_MODELS, id)) return send(res, 200, modelEntry(id));
          return reject(res, 404, `the model \`${id}\` does not exist`, 'invalid_request_error', 'model_not_found');
        }
        return reject(res, 404, `unknown route ${req.method} ${path || '/'}`, 'invalid_request_error', 'not_found');
      } catch (e) {
        send(res, 500, errorBody(`sim bug: ${(e as Error).message}`, 'server_error', null));
      }
    });
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
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const r of held) r.destroy();
      const done = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The worker thread host: one worker per process, started on first use, serving every endpoint
// started with `thread: 'worker'`. It is unref'ed while idle, so it never keeps the process alive.
// ---------------------------------------------------------------------------------------------

/** Messages to the worker. */
export type SimWorkerRequest =
  | { type: 'start'; id: number; config: SimEndpointConfig; counters: SharedArrayBuffer }
  | { type: 'close'; id: number };

/** Messages from the worker. */
export type SimWorkerReply =
  | { id: number; ok: true; port?: number }
  | { id: number; ok: false; error: { name: string; message: string; code?: string } };

interface SimHost {
  worker: Worker;
  calls: Map<number, { resolve: (r: SimWorkerReply & { ok: true }) => void; reject: (e: Error) => void }>;
  nextId: number;
  dead: boolean;
}

let simHost: SimHost | null = null;
// The worker's compiled entry is dist/workers/sim-worker.js (WORKERS in scripts/build.mjs); from the
// sources it is the boot file next to this module. New worker threads follow this pattern (src/paths.ts).
const WORKER_ENTRY = workerUrl('sim-worker', new URL('./worker-boot.mjs', import.meta.url));

function hostRefresh(h: SimHost) {
  if (h.calls.size > 0) h.worker.ref();
  else h.worker.unref();
}

function getSimHost(): SimHost {
  if (simHost && !simHost.dead) return simHost;
  // execArgv []: the boot file registers the TypeScript loader itself (the parent's loader flags,
  // if any, are not needed and would register it twice).
  const worker = new Worker(WORKER_ENTRY, { execArgv: [], stdout: false, stderr: false });
  const h: SimHost = { worker, calls: new Map(), nextId: 1, dead: false };
  worker.on('message', (m: SimWorkerReply) => {
    const c = h.calls.get(m.id);
    if (!c) return;
    h.calls.delete(m.id);
    hostRefresh(h);
    if (m.ok) c.resolve(m);
    else c.reject(Object.assign(new Error(m.error.message), { name: m.error.name, ...(m.error.code ? { code: m.error.code } : {}) }));
  });
  const fail = (err: Error) => {
    if (h.dead) return;
    h.dead = true;
    if (simHost === h) simHost = null;
    for (const c of h.calls.values()) c.reject(err);
    h.calls.clear();
  };
  worker.on('error', (e) => fail(e instanceof Error ? e : new Error(String(e))));
  worker.on('exit', (code) => fail(new Error(`the sim worker thread exited (code ${code})`)));
  worker.unref();
  simHost = h;
  return h;
}

function hostCall(h: SimHost, msg: SimWorkerRequest): Promise<SimWorkerReply & { ok: true }> {
  if (h.dead) return Promise.reject(new Error('the sim worker thread is not running'));
  return new Promise((resolve, reject) => {
    h.calls.set(msg.id, { resolve, reject });
    hostRefresh(h);
    h.worker.postMessage(msg);
  });
}

/** Starts the sim endpoint; resolves once listening. */
export async function startSimServer(options: SimServerOptions = {}): Promise<SimServer> {
  const cfg = resolveSimConfig(options);
  const wrap = (port: number, counters: SimCounters, close: () => Promise<void>): SimServer => {
    let closing: Promise<void> | null = null;
    return {
      baseURL: `http://127.0.0.1:${port}/v1`,
      port,
      seed: cfg.seed,
      stats: () => readSimStats(counters),
      close: () => (closing ??= close()),
    };
  };
  if (options.thread === 'main') {
    const counters = simCounters(new ArrayBuffer(SIM_COUNTERS_BYTES));
    const ep = await listenSimEndpoint(cfg, counters);
    return wrap(ep.port, counters, () => ep.close());
  }
  const h = getSimHost();
  const sab = new SharedArrayBuffer(SIM_COUNTERS_BYTES);
  const id = h.nextId++;
  const r = await hostCall(h, { type: 'start', id, config: cfg, counters: sab });
  return wrap(r.port!, simCounters(sab), async () => {
    if (h.dead) return; // the worker is gone, and its sockets with it
    // The start call is settled, so its id is free again: the close call reuses it.
    await hostCall(h, { type: 'close', id }).catch(() => undefined);
  });
}

export interface ServeSimOptions extends SimServerOptions {
  print?: (line: string) => void;
  /** Stop when this aborts (default: on SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/** `standoff sim serve`: runs the sim endpoint until SIGINT/SIGTERM; resolves with its counters. */
export async function serveSim(opts: ServeSimOptions = {}): Promise<SimStats> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const sim = await startSimServer({ thread: 'main', ...opts });
  print(`sim endpoint listening on ${sim.baseURL} (seed ${sim.seed})`);
  for (const [id, p] of Object.entries(SIM_MODELS)) print(`  ${id.padEnd(18)} ${p.kind.padEnd(7)} ${p.family.padEnd(16)} ${p.description}`);
  print('model suffixes: +faults=429@first2,500@0.1,timeout,malformed,empty  +<param>=<value>  +retryAfterMs=<n>');
  print('press Ctrl-C to stop');
  await new Promise<void>((resolveStop) => {
    if (opts.signal) {
      if (opts.signal.aborted) return resolveStop();
      opts.signal.addEventListener('abort', () => resolveStop(), { once: true });
      return;
    }
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const stats = sim.stats();
  await sim.close();
  print(`sim endpoint stopped: ${stats.requests} requests`);
  return stats;
}
