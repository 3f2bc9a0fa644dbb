/**
 * The verifier: a small HTTP service on 127.0.0.1 that serves each episode's system log, and only
 * to that episode. It replaces the seed's Docker "verifier container" (Python ThreadingHTTPServer,
 * `GET /log`) without Docker: isolation comes from unguessable per-episode bearer tokens instead of
 * a private Compose network.
 *
 * Protocol (the only route):
 *
 *     GET /log
 *     Authorization: Bearer <token>
 *
 * - `200 text/plain` with the registered log text.
 * - The token travels ONLY in the `Authorization: Bearer` header. Tokens in the query string
 *   (`?token=`) are not accepted (they end up in logs and proxies); such a request gets 401.
 * - Errors are JSON `{"error": "..."}` with these statuses, checked in this order:
 *   - 404 any path other than `/log` (the query string is ignored);
 *   - 405 any method other than GET on `/log` (with `Allow: GET`);
 *   - 401 missing or malformed `Authorization` header, or a token that was never issued
 *     (with `WWW-Authenticate: Bearer`);
 *   - 403 a token that was issued but has since been unregistered or has expired (`ttlMs`).
 *
 * Tokens are `crypto.randomBytes(32)` in base64url (256 bits). One token = one episode; any number
 * of episodes may be registered at once (concurrent runs), each sees only its own log.
 *
 * Fault injection (so a failed read can be exercised; per the seed a failed read is not evidence):
 * `register(log, { fault })` with `fault` one of
 * - `http500`  500 with a JSON error body;
 * - `timeout`  the request is held open and never answered (until the client aborts or the
 *              server closes);
 * - `empty`    200 with an empty body (the client helper reports it as a failed read);
 * - `drop`     the TCP connection is destroyed without any response.
 * By default every read of that token faults; `faultFirst: n` faults only the first n reads (then
 * the log is served), and `faultRate: p` faults each read with probability p drawn
 * deterministically from (`seed`, `label`, read index), so runs reproduce. A server-wide default
 * (`startVerifier({ faults })`) applies to registrations without their own `fault`.
 *
 * Every request is counted; per token: reads attempted, served, faulted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { nodeFetch } from '../src/net/http.ts';

export const VERIFIER_FAULTS = ['http500', 'timeout', 'empty', 'drop'] as const;
export type VerifierFault = (typeof VERIFIER_FAULTS)[number];

export interface FaultSpec {
  /** The fault to inject. */
  fault: VerifierFault;
  /** Probability in [0, 1] that a given read faults (default 1 unless `faultFirst` is set). */
  faultRate?: number;
  /** Only the first N reads of the token fault; later reads are served normally. */
  faultFirst?: number;
  /** Seed for the per-read fault draw in rate mode (default 0). */
  seed?: number;
}

export interface RegisterOptions extends Partial<FaultSpec> {
  /** Human label (e.g. the episode id): shown in stats and used in the seeded fault draw. */
  label?: string;
  /** The token expires this many milliseconds after registration (403 afterwards). */
  ttlMs?: number;
}

export interface Registration {
  token: string;
  /** Full URL of the log endpoint, `http://127.0.0.1:<port>/log`. */
  url: string;
}

export interface TokenStats {
  label: string | null;
  /** Authorised GET /log requests (served + faulted). */
  reads: number;
  /** Reads answered 200 with the log. */
  served: number;
  /** Reads that got an injected fault. */
  faulted: number;
  /** Still registered and unexpired. */
  active: boolean;
}

export interface VerifierStats {
  /** Every HTTP request received. */
  requests: number;
  /** Requests rejected with 4xx, by status code. */
  rejected: Record<string, number>;
  /** Per-token counters (kept after unregister). */
  tokens: Record<string, TokenStats>;
}

export interface StartVerifierOptions {
  /** Port on 127.0.0.1 (default 0 = ephemeral). */
  port?: number;
  /** Default fault for registrations that do not name one. */
  faults?: FaultSpec;
}

export interface Verifier {
  /** Base URL `http://127.0.0.1:<port>`. */
  url: string;
  /** The log endpoint URL (`<url>/log`). */
  logUrl: string;
  port: number;
  register(log: string, options?: RegisterOptions): Registration;
  /** Revokes the token; returns false when it was not active. Later reads get 403. */
  unregister(token: string): boolean;
  stats(): VerifierStats;
  close(): Promise<void>;
}

interface Entry {
  log: string;
  label: string | null;
  index: number;
  expiresAt: number | null;
  fault: FaultSpec | null;
  stats: TokenStats;
}

/** Uniform [0,1) from a hash, so fault draws depend only on their inputs (not on arrival order). */
export function hashUniform(...parts: Array<string | number>): number {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  return (h.readUInt32BE(0) * 2 ** 21 + (h.readUInt32BE(4) >>> 11)) / 2 ** 53;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

function validateFault(spec: Partial<FaultSpec>, where: string): FaultSpec | null {
  if (spec.fault === undefined) {
    if (spec.faultRate !== undefined || spec.faultFirst !== undefined) {
      throw new TypeError(`${where}: faultRate/faultFirst need a fault kind (${VERIFIER_FAULTS.join(', ')})`);
    }
    return null;
  }
  if (!(VERIFIER_FAULTS as readonly string[]).includes(spec.fault)) {
    throw new TypeError(`${where}: unknown fault "${spec.fault}" (expected ${VERIFIER_FAULTS.join(', ')})`);
  }
  if (spec.faultRate !== undefined && !(spec.faultRate >= 0 && spec.faultRate <= 1)) {
    throw new RangeError(`${where}: faultRate must be in [0, 1], got ${spec.faultRate}`);
  }
  if (spec.faultFirst !== undefined && !(Number.isInteger(spec.faultFirst) && spec.faultFirst >= 0)) {
    throw new RangeError(`${where}: faultFirst must be a non-negative integer, got ${spec.faultFirst}`);
  }
  return { fault: spec.fault, faultRate: spec.faultRate, faultFirst: spec.faultFirst, seed: spec.seed ?? 0 };
}

/** Starts the verifier on 127.0.0.1 and resolves once it is listening. */
export async function startVerifier(options: StartVerifierOptions = {}): Promise<Verifier> {
  const defaultFault = options.faults ? validateFault(options.faults, 'startVerifier') : null;
  const entries = new Map<string, Entry>();
  const revoked = new Map<string, TokenStats>();
  const rejected: Record<string, number> = {};
  let requests = 0;
  let registrations = 0;
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();

  const reject = (res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) => {
    rejected[String(status)] = (rejected[String(status)] ?? 0) + 1;
    sendJson(res, status, { error }, headers);
  };

  const shouldFault = (entry: Entry, readIndex: number): boolean => {
    const f = entry.fault;
    if (!f) return false;
    if (f.faultFirst !== undefined && readIndex >= f.faultFirst) return false;
    const rate = f.faultRate ?? 1;
    if (rate >= 1) return true;
    if (rate <= 0) return false;
    return hashUniform('verifier-fault', f.seed ?? 0, entry.label ?? `#${entry.index}`, readIndex) < rate;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    requests++;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/log') return reject(res, 404, 'not found: the only route is GET /log');
    if (req.method !== 'GET') return reject(res, 405, 'method not allowed: use GET', { allow: 'GET' });
    const auth = req.headers.authorization;
    const challenge = { 'www-authenticate': 'Bearer realm="standoff-verifier"' };
    if (!auth) return reject(res, 401, 'missing token: send Authorization: Bearer <token>', challenge);
    const m = /^Bearer ([A-Za-z0-9_-]{16,128})$/.exec(auth);
    if (!m) return reject(res, 401, 'malformed Authorization header: expected Bearer <token>', challenge);
    const token = m[1];
    const entry = entries.get(token);
    if (!entry) {
      if (revoked.has(token)) return reject(res, 403, 'token revoked: the episode is no longer registered');
      return reject(res, 401, 'unknown token', challenge);
    }
    if (entry.expiresAt !== null && Date.now() >= entry.expiresAt) {
      entries.delete(token);
      entry.stats.active = false;
      revoked.set(token, entry.stats);
      return reject(res, 403, 'token expired');
    }
    const readIndex = entry.stats.reads++;
    if (shouldFault(entry, readIndex)) {
      entry.stats.faulted++;
      switch (entry.fault!.fault) {
        case 'http500':
          return sendJson(res, 500, { error: 'injected fault: internal server error' });
        case 'empty':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 0, 'cache-control': 'no-store' });
          return void res.end();
        case 'drop':
          return void req.socket.destroy();
        case 'timeout':
          held.add(res);
          res.on('close', () => held.delete(res));
          return; // never answered
      }
    }
    entry.stats.served++;
    const body = Buffer.from(entry.log, 'utf8');
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
    });
    res.end(body);
  };

  const server: Server = createServer((req, res) => {
    // Drain any request body so keep-alive connections stay usable, then answer.
    req.on('error', () => undefined);
    req.resume();
    try {
      handle(req, res);
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: `verifier bug: ${(err as Error).message}` });
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const logUrl = `${url}/log`;
  let closed = false;

  return {
    url,
    logUrl,
    port,
    register(log: string, opts: RegisterOptions = {}): Registration {
      if (closed) throw new Error('verifier is closed');
      if (typeof log !== 'string') throw new TypeError('register: log must be a string');
      const own = validateFault(opts, 'register');
      if (opts.ttlMs !== undefined && !(opts.ttlMs > 0)) throw new RangeError(`register: ttlMs must be > 0, got ${opts.ttlMs}`);
      const token = randomBytes(32).toString('base64url');
      const stats: TokenStats = { label: opts.label ?? null, reads: 0, served: 0, faulted: 0, active: true };
      entries.set(token, {
        log,
        label: opts.label ?? null,
        index: registrations++,
        expiresAt: opts.ttlMs !== undefined ? Date.now() + opts.ttlMs : null,
        fault: own ?? defaultFault,
        stats,
      });
      return { token, url: logUrl };
    },
    unregister(token: string): boolean {
      const entry = entries.get(token);
      if (!entry) return false;
      entries.delete(token);
      entry.stats.active = false;
      revoked.set(token, entry.stats);
      return true;
    },
    stats(): VerifierStats {
      const tokens: Record<string, TokenStats> = {};
      for (const [t, s] of revoked) tokens[t] = { ...s };
      for (const [t, e] of entries) {
        const expired = e.expiresAt !== null && Date.now() >= e.expiresAt;
        tokens[t] = { ...e.stats, active: !expired };
      }
      return { requests, rejected: { ...rejected }, tokens };
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const res of held) res.destroy();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}

export interface ReadResult {
  ok: boolean;
  /** The log text (only when ok). */
  text?: string;
  /** Why the read failed (only when not ok). */
  error?: string;
  /** HTTP status, when a response arrived. */
  status?: number;
}

/**
 * Client helper used by the `read_system_log` tool: fetches the log for one episode. Never throws;
 * a non-200 status, an empty body, a dropped connection or a timeout all give `{ ok: false }`
 * (a failed read is not evidence).
 */
export async function readSystemLog(
  url: string,
  token: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ReadResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const signals = [AbortSignal.timeout(timeoutMs)];
  if (options.signal) signals.push(options.signal);
  try {
    // node:http transport (keep-alive): ~1 ms less CPU per read than the global fetch.
    const res = await nodeFetch(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.any(signals),
    });
    const text = await res.text();
    if (res.status !== 200) {
      let msg = text;
      try {
        const parsed = JSON.parse(text) as { error?: unknown };
        if (typeof parsed.error === 'string') msg = parsed.error;
      } catch {
        /* not JSON */
      }
      return { ok: false, status: res.status, error: `verifier returned HTTP ${res.status}${msg ? `: ${msg}` : ''}` };
    }
    if (text.trim() === '') return { ok: false, status: 200, error: 'verifier returned an empty log' };
    return { ok: true, status: 200, text };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError') return { ok: false, error: `timed out after ${timeoutMs} ms` };
    if (e.name === 'AbortError') return { ok: false, error: 'aborted' };
    const cause = e.cause?.code ?? e.cause?.message;
    return { ok: false, error: `connection failed: ${e.message}${cause ? ` (${cause})` : ''}` };
  }
}

export interface ServeVerifierOptions extends StartVerifierOptions {
  /** Logs to register at startup, by label (e.g. scenario id -> log text). */
  logs?: Record<string, string>;
  /** Where to print the startup banner and tokens (default console.log). */
  print?: (line: string) => void;
  /** Stop when this aborts (default: on SIGINT/SIGTERM). */
  signal?: AbortSignal;
}

/**
 * `standoff verifier serve`: starts the verifier, registers `logs` (one token each, printed with a
 * ready-to-run curl line), and runs until SIGINT/SIGTERM (or `signal` aborts). Resolves with the
 * final counters after closing.
 */
export async function serveVerifier(opts: ServeVerifierOptions = {}): Promise<VerifierStats> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const v = await startVerifier({ port: opts.port, faults: opts.faults });
  print(`verifier listening on ${v.url} (GET /log, Authorization: Bearer <token>)`);
  for (const [label, log] of Object.entries(opts.logs ?? {})) {
    const { token } = v.register(log, { label });
    print(`${label}\t${token}\tcurl -s -H 'Authorization: Bearer ${token}' ${v.logUrl}`);
  }
  print('press Ctrl-C to stop');
  await new Promise<void>((resolve) => {
    if (opts.signal) {
      if (opts.signal.aborted) return resolve();
      opts.signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const stats = v.stats();
  await v.close();
  const reads = Object.values(stats.tokens).reduce((a, t) => a + t.reads, 0);
  print(`verifier stopped: ${stats.requests} requests, ${reads} authorised reads`);
  return stats;
}
