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
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import type { Scenario } from '../../schema/scenario.ts';
import { loadScenarios } from '../scenarios.ts';
import { buildScenarioIndex, requestKey, sha256Hex, simReply, u, type ScenarioIndex, type SimReply } from './behavior.ts';
import {
  SIM_MODELS,
  SimModelError,
  parseSimModel,
  type ParsedSimModel,
  type SimFaultKind,
  type SimFaultRule,
} from './profiles.ts';

/** `<repo>/scenarios`, located from this file (not the working directory). */
export const DEFAULT_SCENARIOS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scenarios');

export interface SimServerOptions {
  /** Port on 127.0.0.1 (default 0 = ephemeral). */
  port?: number;
  /** Seed of every simulated choice (default 0). */
  seed?: number;
  /** Delay before every answer, in ms (default 0). */
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
}

export interface SimStats {
  requests: number;
  /** Answered chat completions, by mode. */
  completions: Record<string, number>;
  /** Injected faults, by kind. */
  faults: Record<string, number>;
  /** Requests rejected with 4xx (bad JSON, unknown model, bad route...). */
  rejected: number;
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

function errorBody(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

function estimateTokens(s: string): number {
  return s.length === 0 ? 0 : Math.ceil(s.length / 4);
}

/** Starts the sim endpoint; resolves once listening. */
export async function startSimServer(options: SimServerOptions = {}): Promise<SimServer> {
  const seed = options.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`sim seed must be an integer in [0, 2^32), got ${seed}`);
  const latencyMs = options.latencyMs ?? 0;
  if (!(latencyMs >= 0)) throw new RangeError(`latencyMs must be >= 0, got ${latencyMs}`);
  const scenarios = options.scenarios ?? loadScenarios(options.scenariosDir ?? DEFAULT_SCENARIOS_DIR);
  const index: ScenarioIndex = buildScenarioIndex(scenarios);
  const serverFaults = (options.faults ?? []).map((f) => ({ ...f }));
  const defaultRetryAfterMs = options.retryAfterMs ?? 1000;

  const attempts = new Map<string, number>();
  const stats: SimStats = { requests: 0, completions: {}, faults: {}, rejected: 0 };
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
  const reject = (res: ServerResponse, status: number, message: string, type: string, code: string | null) => {
    stats.rejected++;
    send(res, status, errorBody(message, type, code));
  };

  const later = (ms: number, fn: () => void) => {
    if (ms <= 0) return fn();
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const chooseFault = (model: ParsedSimModel, key: string, attempt: number): FaultDecision | null => {
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

  const completion = (res: ServerResponse, body: Record<string, unknown>) => {
    if (body.stream === true) return reject(res, 400, 'the sim endpoint does not support streaming; send stream: false', 'invalid_request_error', 'stream_unsupported');
    if (typeof body.model !== 'string' || body.model === '') return reject(res, 400, 'you must provide a model parameter', 'invalid_request_error', null);
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return reject(res, 400, "'messages' must be a non-empty array", 'invalid_request_error', null);
    }
    let model: ParsedSimModel;
    try {
      model = parseSimModel(body.model);
    } catch (e) {
      if (e instanceof SimModelError) {
        return reject(res, e.status, e.message, 'invalid_request_error', e.code);
      }
      throw e;
    }
    const key = requestKey(seed, model, body);
    const attemptKey = `${body.model}\u0000${key}`;
    const attempt = attempts.get(attemptKey) ?? 0;
    attempts.set(attemptKey, attempt + 1);
    const fault = chooseFault(model, key, attempt);
    if (fault) stats.faults[fault.kind] = (stats.faults[fault.kind] ?? 0) + 1;

    if (fault?.kind === 'timeout') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return; // never answered
    }
    later(latencyMs, () => {
      if (fault?.kind === '429') {
        const ms = model.retryAfterMs ?? defaultRetryAfterMs;
        const headers: Record<string, string> = { 'retry-after': String(Math.max(0, Math.ceil(ms / 1000))) };
        if (model.retryAfterMs !== null || options.retryAfterMs !== undefined) headers['retry-after-ms'] = String(ms);
        return send(res, 429, errorBody('Rate limit reached for requests (simulated). Please retry after the delay in retry-after.', 'rate_limit_exceeded', 'rate_limit_exceeded'), headers);
      }
      if (fault?.kind === '500') {
        return send(res, 500, errorBody('The server had an error while processing your request (simulated).', 'server_error', null));
      }
      let reply: SimReply;
      if (fault?.kind === 'empty') {
        reply = { mode: 'chat', content: '', reasoning: null, toolCalls: [], finishReason: 'stop', logprobs: null, scenarioId: null, debug: {} };
      } else {
        reply = simReply({ seed, model, body, index, requestKey: key, reasoningIn: options.reasoningIn });
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
      stats.completions[reply.mode] = (stats.completions[reply.mode] ?? 0) + 1;
      const promptText = JSON.stringify(body.messages) + (body.tools ? JSON.stringify(body.tools) : '');
      const reasoningTokens = estimateTokens(reply.reasoning ?? '');
      const completionTokens =
        estimateTokens(reply.content ?? '') + reasoningTokens + reply.toolCalls.reduce((a, c) => a + estimateTokens(c.name + c.arguments) + 3, 0);
      const promptTokens = estimateTokens(promptText);
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: reply.toolCalls.length > 0 && reply.content === null ? null : (reply.content ?? ''),
        refusal: null,
        annotations: [],
      };
      if (reply.reasoning !== null) message.reasoning_content = reply.reasoning;
      if (reply.toolCalls.length > 0) {
        message.tool_calls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      }
      send(res, 200, {
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
      });
    });
  };

  const modelEntry = (id: string) => ({ id, object: 'model', created: 0, owned_by: SIM_MODELS[id].family });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
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
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return reject(res, 400, 'the request body is not valid JSON', 'invalid_request_error', 'invalid_json');
          }
          if (body === null || typeof body !== 'object' || Array.isArray(body)) {
            return reject(res, 400, 'the request body must be a JSON object', 'invalid_request_error', 'invalid_json');
          }
          return completion(res, body as Record<string, unknown>);
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
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', rejectPromise);
      resolvePromise();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    seed,
    stats: () => ({ ...stats, completions: { ...stats.completions }, faults: { ...stats.faults } }),
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

export interface ServeSimOptions extends SimServerOptions {
  print?: (line: string) => void;
  /** Stop when this aborts (default: on SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/** `standoff sim serve`: runs the sim endpoint until SIGINT/SIGTERM; resolves with its counters. */
export async function serveSim(opts: ServeSimOptions = {}): Promise<SimStats> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const sim = await startSimServer(opts);
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
