/**
 * The HTTP transport of the model client: a `fetch` for the openai SDK built on `node:http` /
 * `node:https` with keep-alive agents.
 *
 * Why: Node's global `fetch` (undici + web streams) costs about a millisecond of CPU per request
 * more than `node:http` for the small JSON bodies of chat completions, which is most of the
 * runner's own per-request cost against a fast endpoint. The SDK is unchanged: it still builds the
 * request, classifies errors and parses the reply; only the bytes move differently.
 *
 * Behaviour, as the SDK expects from `fetch`:
 * - resolves with a `Response` once the whole body is read (chat completions are not streamed;
 *   the SDK's timeout therefore covers the body too); `gzip`, `deflate` and `br` bodies are decoded;
 * - rejects with the signal's reason (an `AbortError`) when `init.signal` aborts, and with
 *   `TypeError('fetch failed', { cause })` on a network error, like undici;
 * - anything it does not handle itself (a `Request` object, a streamed or form body, a
 *   non-http(s) URL, `redirect: 'manual' | 'error'`, a redirect response) goes to the global
 *   `fetch`, unchanged.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose `Response` must have a null body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function headersOf(h: RequestInit['headers']): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  if (!h) return out;
  const hs = h instanceof Headers ? h : new Headers(h);
  hs.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/** A `fetch` on `node:http`/`node:https` (see the module comment). */
export function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  const simpleBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (typeof input !== 'string' && !(input instanceof URL)) return fetch(input, init);
  const url = typeof input === 'string' ? new URL(input) : input;
  if (!simpleBody || (url.protocol !== 'http:' && url.protocol !== 'https:') || (init.redirect !== undefined && init.redirect !== 'follow')) {
    return fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const headers = headersOf(init.headers);
  if (body !== undefined && body !== null && headers['content-length'] === undefined) {
    headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  }

  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const fail = (err: unknown) => settle(() => reject(new TypeError('fetch failed', { cause: err })));
    const onAbort = () => {
      settle(() => reject(abortReason(signal!)));
      req.destroy();
    };
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: init.method ?? 'GET', headers, agent: agents[url.protocol as 'http:' | 'https:'] }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        // Redirects are rare for model endpoints: let the platform fetch follow them.
        res.resume();
        settle(() => resolve(fetch(input, init)));
        return;
      }
      if (status < 200 || status > 599) {
        res.resume();
        fail(new Error(`unexpected HTTP status ${status}`));
        return;
      }
      const enc = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
      let stream: Readable = res;
      if (enc === 'gzip' || enc === 'x-gzip') stream = res.pipe(createGunzip());
      else if (enc === 'deflate') stream = res.pipe(createInflate());
      else if (enc === 'br') stream = res.pipe(createBrotliDecompress());
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', fail);
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(new Error('the connection closed before the response was complete'));
      });
      stream.on('end', () => {
        const h = new Headers();
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) h.append(raw[i], raw[i + 1]);
        const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        settle(() => resolve(new Response(NULL_BODY.has(status) ? null : buf, { status, statusText: res.statusMessage ?? '', headers: h })));
      });
    });
    req.on('error', fail);
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body ?? undefined);
  });
}
