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
 *
 * The endpoint itself (routes, faults, replies, counters) is in `endpoint.ts`.
 */
import { Worker } from 'node:worker_threads';
import { packagePath, workerUrl } from '../../paths.ts';
import type { Scenario } from '../../schema/scenario.ts';
import { loadScenarios } from '../scenarios.ts';
import { SIM_COUNTERS_BYTES, listenSimEndpoint, readSimStats, simCounters, type SimCounters, type SimEndpointConfig, type SimStats } from './endpoint.ts';
import { SIM_MODELS, type SimFaultRule } from './profiles.ts';

export { SIM_COUNTERS_BYTES, listenSimEndpoint, readSimStats, simCounters, type SimCounters, type SimEndpoint, type SimEndpointConfig, type SimStats } from './endpoint.ts';

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

export interface SimServer {
  /** `http://127.0.0.1:<port>/v1` — pass as `baseURL` to the openai client. */
  baseURL: string;
  port: number;
  seed: number;
  stats(): SimStats;
  close(): Promise<void>;
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
