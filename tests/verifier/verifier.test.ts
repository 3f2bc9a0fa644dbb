import { afterEach, describe, expect, it } from 'vitest';
import { readSystemLog, serveVerifier, startVerifier, type Verifier } from '../../verifier/index.ts';

const open: Verifier[] = [];
async function verifier(opts: Parameters<typeof startVerifier>[0] = {}): Promise<Verifier> {
  const v = await startVerifier(opts);
  open.push(v);
  return v;
}
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function raw(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not json */
  }
  return { status: res.status, headers: res.headers, text, json: json as { error?: string } | null };
}
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe('verifier: routing and isolation', () => {
  it('binds 127.0.0.1 on an ephemeral port and serves the registered log to its token', async () => {
    const v = await verifier();
    expect(v.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(v.port).toBeGreaterThan(0);
    const { token, url } = v.register('line one\nline two');
    expect(url).toBe(`${v.url}/log`);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    const r = await raw(url, bearer(token));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.text).toBe('line one\nline two');
  });

  it('issues distinct tokens and each episode sees only its own log', async () => {
    const v = await verifier();
    const a = v.register('LOG A');
    const b = v.register('LOG B');
    expect(a.token).not.toBe(b.token);
    expect((await raw(a.url, bearer(a.token))).text).toBe('LOG A');
    expect((await raw(b.url, bearer(b.token))).text).toBe('LOG B');
  });

  it('rejects a missing, malformed, query-string or unknown token with 401 and a JSON error', async () => {
    const v = await verifier();
    const { token, url } = v.register('secret');
    for (const init of [{}, { headers: { authorization: token } }, { headers: { authorization: 'Bearer ' } }, bearer('x'.repeat(43))]) {
      const r = await raw(url, init);
      expect(r.status).toBe(401);
      expect(typeof r.json?.error).toBe('string');
      expect(r.text).not.toContain('secret');
    }
    const q = await raw(`${url}?token=${token}`);
    expect(q.status).toBe(401);
    expect(q.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it("refuses another episode's token after unregister (403) while the live episode still reads", async () => {
    const v = await verifier();
    const a = v.register('LOG A');
    const b = v.register('LOG B');
    expect(v.unregister(a.token)).toBe(true);
    expect(v.unregister(a.token)).toBe(false);
    const r = await raw(a.url, bearer(a.token));
    expect(r.status).toBe(403);
    expect(r.json?.error).toMatch(/revoked/);
    expect(r.text).not.toContain('LOG A');
    expect((await raw(b.url, bearer(b.token))).text).toBe('LOG B');
  });

  it('expires a token after ttlMs (403)', async () => {
    const v = await verifier();
    const { token, url } = v.register('short-lived', { ttlMs: 50 });
    expect((await raw(url, bearer(token))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 80));
    const r = await raw(url, bearer(token));
    expect(r.status).toBe(403);
    expect(r.json?.error).toMatch(/expired/);
    expect(v.stats().tokens[token].active).toBe(false);
  });

  it('answers other methods on /log with 405 and other paths with 404, even with a valid token', async () => {
    const v = await verifier();
    const { token, url } = v.register('L');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD']) {
      const r = await raw(url, { method, ...bearer(token) });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('GET');
    }
    for (const path of ['/', '/log/', '/logs', '/log/../admin', '/LOG', '/v1/log']) {
      const r = await raw(`${v.url}${path}`, bearer(token));
      expect(r.status, path).toBe(404);
      expect(typeof r.json?.error).toBe('string');
    }
    expect(v.stats().tokens[token].reads).toBe(0);
  });
});

describe('verifier: fault injection', () => {
  it('http500: a failed read, reported by the client helper', async () => {
    const v = await verifier();
    const { token, url } = v.register('L', { fault: 'http500' });
    const r = await readSystemLog(url, token, { timeoutMs: 2000 });
    expect(r).toMatchObject({ ok: false, status: 500 });
    expect(r.text).toBeUndefined();
    expect(r.error).toMatch(/HTTP 500/);
  });

  it('timeout: the request is never answered; the client gives up after timeoutMs', async () => {
    const v = await verifier();
    const { token, url } = v.register('L', { fault: 'timeout' });
    const t0 = Date.now();
    const r = await readSystemLog(url, token, { timeoutMs: 150 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/timed out after 150 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('empty: 200 with no body is a failed read', async () => {
    const v = await verifier();
    const { token, url } = v.register('L', { fault: 'empty' });
    expect((await raw(url, bearer(token))).status).toBe(200);
    const r = await readSystemLog(url, token);
    expect(r).toMatchObject({ ok: false, status: 200 });
    expect(r.error).toMatch(/empty/);
  });

  it('drop: the connection is destroyed without a response', async () => {
    const v = await verifier();
    const { token, url } = v.register('L', { fault: 'drop' });
    const r = await readSystemLog(url, token, { timeoutMs: 2000 });
    expect(r.ok).toBe(false);
    expect(r.status).toBeUndefined();
    expect(r.error).toMatch(/connection failed/);
  });

  it('faultFirst: the first N reads fail, then the log is served', async () => {
    const v = await verifier();
    const { token, url } = v.register('THE LOG', { fault: 'http500', faultFirst: 2 });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await readSystemLog(url, token));
    expect(results.map((r) => r.ok)).toEqual([false, false, true, true]);
    expect(results[2].text).toBe('THE LOG');
    expect(v.stats().tokens[token]).toMatchObject({ reads: 4, served: 2, faulted: 2 });
  });

  it('faultRate with a seed: deterministic per (seed, label, read index) and near the rate', async () => {
    const pattern = async (seed: number) => {
      const v = await verifier();
      const { token, url } = v.register('L', { fault: 'http500', faultRate: 0.3, seed, label: 'ep-1' });
      const out: boolean[] = [];
      for (let i = 0; i < 200; i++) out.push((await readSystemLog(url, token)).ok);
      return out;
    };
    const a = await pattern(7);
    const b = await pattern(7);
    const c = await pattern(8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const failures = a.filter((ok) => !ok).length;
    expect(failures).toBeGreaterThan(35);
    expect(failures).toBeLessThan(85);
  });

  it('a server-wide default fault applies to registrations without their own', async () => {
    const v = await verifier({ faults: { fault: 'empty' } });
    const plain = v.register('A');
    const own = v.register('B', { fault: 'http500' });
    expect((await readSystemLog(plain.url, plain.token)).error).toMatch(/empty/);
    expect((await readSystemLog(own.url, own.token)).status).toBe(500);
  });

  it('rejects bad fault options', async () => {
    const v = await verifier();
    expect(() => v.register('L', { fault: 'boom' as never })).toThrow(/unknown fault/);
    expect(() => v.register('L', { faultRate: 0.5 })).toThrow(/need a fault kind/);
    expect(() => v.register('L', { fault: 'http500', faultRate: 2 })).toThrow(/faultRate/);
    await expect(startVerifier({ faults: { fault: 'nope' as never } })).rejects.toThrow(/unknown fault/);
  });

  it('close() does not hang on a held (timeout) request', async () => {
    const v = await startVerifier();
    const { token, url } = v.register('L', { fault: 'timeout' });
    const pending = readSystemLog(url, token, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await v.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect((await pending).ok).toBe(false);
  });
});

describe('verifier: counters', () => {
  it('counts requests, per-token reads/served/faulted, and rejections by status', async () => {
    const v = await verifier();
    const a = v.register('A', { label: 'sim:careful/em_act_a/1' });
    const b = v.register('B', { fault: 'http500', faultFirst: 1 });
    await readSystemLog(a.url, a.token);
    await readSystemLog(a.url, a.token);
    await readSystemLog(b.url, b.token);
    await readSystemLog(b.url, b.token);
    await raw(a.url); // 401
    await raw(`${v.url}/nope`); // 404
    await raw(a.url, { method: 'POST', ...bearer(a.token) }); // 405
    v.unregister(a.token);
    await raw(a.url, bearer(a.token)); // 403
    const s = v.stats();
    expect(s.requests).toBe(8);
    expect(s.rejected).toEqual({ '401': 1, '404': 1, '405': 1, '403': 1 });
    expect(s.tokens[a.token]).toEqual({ label: 'sim:careful/em_act_a/1', reads: 2, served: 2, faulted: 0, active: false });
    expect(s.tokens[b.token]).toEqual({ label: null, reads: 2, served: 1, faulted: 1, active: true });
  });
});

describe('serveVerifier', () => {
  it('registers the given logs, prints tokens, and stops when the signal aborts', async () => {
    const lines: string[] = [];
    const ac = new AbortController();
    const done = serveVerifier({ logs: { em_act_a: 'LOG-A' }, print: (l) => lines.push(l), signal: ac.signal });
    await new Promise((r) => setTimeout(r, 100));
    const row = lines.find((l) => l.startsWith('em_act_a\t'))!;
    expect(row).toBeDefined();
    const [, token] = row.split('\t');
    const url = /(http:\/\/127\.0\.0\.1:\d+\/log)/.exec(lines.join('\n'))![1];
    const r = await readSystemLog(url, token);
    expect(r).toMatchObject({ ok: true, text: 'LOG-A' });
    ac.abort();
    const stats = await done;
    expect(stats.tokens[token].served).toBe(1);
  });
});
