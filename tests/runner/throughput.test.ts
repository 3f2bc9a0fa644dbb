/**
 * The runner's fast paths: the sim endpoint in a worker thread (same replies as in the calling
 * thread, synchronous stats, latency measured from arrival), the node:http transport of the model
 * client, and the journal's group commit (one sync per batch, each append resolved only after the
 * sync covering it; a unit counts only once it is durable).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimServer } from '../../src/runner/sim/server.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';
import { AGENT_TOOLS, buildAgentMessages, buildDecisionQuestionMessages, buildProbeMessages } from '../../src/runner/protocol.ts';
import { nodeFetch } from '../../src/net/http.ts';
import { openJournal, readJournal, type JournalHeader, type JournalUnit } from '../../src/runner/journal.ts';
import { parseConfig } from '../../src/runner/config.ts';
import { runEvaluation } from '../../src/runner/run.ts';

const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'standoff-fast-'));
  dirs.push(d);
  return d;
};
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) s.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const SCENARIOS = loadScenarios('scenarios');

describe('sim endpoint threads', () => {
  it('a worker-thread endpoint answers exactly like an in-thread one (replies, faults, stats)', async () => {
    const w = await startSimServer({ seed: 4, scenarios: SCENARIOS });
    const m = await startSimServer({ seed: 4, scenarios: SCENARIOS, thread: 'main' });
    try {
      const ask = async (baseURL: string) => {
        const c = new OpenAI({ baseURL, apiKey: 'x', maxRetries: 0, timeout: 10_000 });
        const out: unknown[] = [];
        for (const [i, s] of SCENARIOS.slice(0, 6).entries()) {
          const r = await c.chat.completions.create({ model: 'sim:hasty', messages: buildAgentMessages(s), tools: AGENT_TOOLS, seed: i });
          out.push({ ...r, created: 0 });
          const d = await c.chat.completions.create({ model: 'sim:careful', messages: buildDecisionQuestionMessages(s), seed: i, logprobs: true, top_logprobs: 4 });
          out.push({ ...d, created: 0 });
          const p = await c.chat.completions.create({ model: 'sim:thorough', messages: buildProbeMessages(s, s.probes[0]), seed: i });
          out.push({ ...p, created: 0 });
          // a fault that clears on the second attempt: attempt counting is per endpoint
          const f = await c.chat.completions
            .create({ model: 'sim:careful+faults=500@first1', messages: buildAgentMessages(s), tools: AGENT_TOOLS, seed: i })
            .then(() => 'ok', (e: { status?: number }) => `status ${e.status}`);
          out.push(f);
        }
        return out;
      };
      const [a, b] = [await ask(w.baseURL), await ask(m.baseURL)];
      expect(a).toEqual(b);
      expect(a.filter((x) => x === 'status 500')).toHaveLength(6);
      const [sw, sm] = [w.stats(), m.stats()];
      expect({ ...sw, answerMs: 0 }).toEqual({ ...sm, answerMs: 0 });
      expect(sw).toMatchObject({ requests: 24, completions: { agent: 6, probe_decision: 6, probe: 6 }, faults: { '500': 6 }, rejected: 0 });
    } finally {
      await Promise.all([w.close(), m.close()]);
    }
  });

  it('latency counts from arrival (the sim works inside it); answerMs sums it; close frees the port', async () => {
    const sim = await startSimServer({ seed: 1, scenarios: SCENARIOS, latencyMs: 120 });
    const c = new OpenAI({ baseURL: sim.baseURL, apiKey: 'x', maxRetries: 0, timeout: 10_000 });
    const t0 = performance.now();
    await Promise.all(SCENARIOS.slice(0, 4).map((s) => c.chat.completions.create({ model: 'sim:careful', messages: buildAgentMessages(s), tools: AGENT_TOOLS, seed: 1 })));
    const wall = performance.now() - t0;
    // Semantics, not speed: each reply is held for the latency. Timers may fire a little early
    // against performance.now(), so allow a few milliseconds of slack.
    const SLACK = 5;
    expect(wall).toBeGreaterThanOrEqual(120 - SLACK);
    const st = sim.stats();
    expect(st.completions.agent).toBe(4);
    expect(st.answerMs).toBeGreaterThanOrEqual(4 * (120 - SLACK));
    expect(st.answerMs).toBeLessThan(4 * wall + 1);
    await sim.close();
    await expect(fetch(`${sim.baseURL}/models`)).rejects.toThrow();
  });

  it('rejects bad options in the calling thread, and a taken port as a listen error', async () => {
    await expect(startSimServer({ seed: -1, scenarios: SCENARIOS })).rejects.toThrow(RangeError);
    const a = await startSimServer({ seed: 1, scenarios: SCENARIOS });
    try {
      await expect(startSimServer({ seed: 1, scenarios: SCENARIOS, port: a.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await a.close();
    }
  });
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('nodeFetch (the model client transport)', () => {
  it('sends method, headers and body; returns status, headers and body', async () => {
    const url = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.stringify({ method: req.method, auth: req.headers.authorization, len: req.headers['content-length'], got: Buffer.concat(chunks).toString() });
        res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'r1' });
        res.end(body);
      });
    });
    const r = await nodeFetch(`${url}/v1/x`, { method: 'POST', headers: new Headers({ authorization: 'Bearer k', 'content-type': 'application/json' }), body: '{"a":"é"}' });
    expect(r.status).toBe(201);
    expect(r.ok).toBe(true);
    expect(r.headers.get('x-request-id')).toBe('r1');
    expect(await r.json()).toEqual({ method: 'POST', auth: 'Bearer k', len: '10', got: '{"a":"é"}' });
  });

  it('decodes gzip bodies; 204 has a null body; redirects are followed', async () => {
    const url = await listen((req, res) => {
      if (req.url === '/gz') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ ok: true })));
      } else if (req.url === '/none') {
        res.writeHead(204);
        res.end();
      } else if (req.url === '/moved') {
        res.writeHead(307, { location: '/gz' });
        res.end();
      }
    });
    expect(await (await nodeFetch(`${url}/gz`)).json()).toEqual({ ok: true });
    const none = await nodeFetch(`${url}/none`);
    expect(none.status).toBe(204);
    expect(none.body).toBeNull();
    expect(await (await nodeFetch(`${url}/moved`)).json()).toEqual({ ok: true });
  });

  it('aborts with an AbortError; network failures are TypeError("fetch failed") with the cause', async () => {
    const url = await listen(() => undefined); // never answers
    const ac = new AbortController();
    const p = nodeFetch(`${url}/hang`, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });

    const cut = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.destroy(), 20);
    });
    await expect(nodeFetch(`${cut}/x`)).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed' });

    const closed = await listen(() => undefined);
    servers.at(-1)!.close();
    await new Promise((r) => setTimeout(r, 20));
    await expect(nodeFetch(`${closed}/x`)).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNREFUSED' } });
  });

  it('the SDK classifies its failures as with the platform fetch (timeout, 429 with retry-after)', async () => {
    const url = await listen((req, res) => {
      if (req.url?.endsWith('/chat/completions') && req.headers['x-case'] === 'slow') return; // never answers
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after-ms': '250' });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_exceeded', param: null, code: null } }));
    });
    const c = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0, timeout: 200, fetch: nodeFetch });
    const req = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(c.chat.completions.create(req, { headers: { 'x-case': 'slow' } })).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    const e = await c.chat.completions.create(req).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after-ms')).toBe('250');
  });
});

const header = (runId: string): JournalHeader => ({ kind: 'header', version: 1, run_id: runId, created_at: new Date(0).toISOString(), config_hash: 'h', total: 0, config: {} });
const unit = (i: number): JournalUnit =>
  ({ kind: 'unit', episode_id: `e${i}`, episode: { episode_id: `e${i}` }, messages: [], scores: [], judgments: [], probe_answers: [], probe_decisions: [] }) as unknown as JournalUnit;

describe('journal group commit', () => {
  it('appends that arrive during a sync are written and synced as one batch, each resolved after its own sync', async () => {
    const path = join(await tmp(), 'j.jsonl');
    const j = await openJournal(path, header('g'));
    const resolvedOrder: number[] = [];
    const onDisk: boolean[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        j.append(unit(i)).then(() => {
          resolvedOrder.push(i);
          onDisk.push(readFileSync(path, 'utf8').includes(`"episode_id":"e${i}"`));
        }),
      ),
    );
    expect(resolvedOrder).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(onDisk.every(Boolean)).toBe(true);
    expect(j.appended).toBe(50);
    // the first append starts a sync at once; the other 49 arrive while it is in flight
    expect(j.syncs).toBe(2);
    await j.close();
    const back = await readJournal(path);
    expect([...back.units.keys()]).toEqual(Array.from({ length: 50 }, (_, i) => `e${i}`));
    await expect(j.append(unit(99))).rejects.toThrow(/closed/);
  });

  it('a run counts a unit only once the journal holds it, and reports its syncs', async () => {
    for (const concurrency of [1, 8]) {
      const traces = await tmp();
      const seen: Array<{ done: number; lines: number }> = [];
      const cfg = parseConfig({
        name: 'gc',
        scenarios: ['em_act_a', 'ct_esc_b', 'fc_amb_a'],
        subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }],
        judges: [{ model: 'sim:judge-strict' }],
        epochs: 2,
        concurrency,
        seed: 3,
      });
      const s = await runEvaluation({
        config: cfg,
        runId: `gc${concurrency}`,
        traces,
        progress: 'none',
        log: () => undefined,
        onUnit: (done) => {
          const text = readFileSync(join(traces, '.journal', `gc${concurrency}.jsonl`), 'utf8');
          seen.push({ done, lines: text.split('\n').filter((l) => l.includes('"kind":"unit"')).length });
        },
      });
      expect(s.episodes).toBe(18);
      expect(seen.map((x) => x.done)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
      for (const x of seen) expect(x.lines).toBeGreaterThanOrEqual(x.done);
      expect(s.journalSyncs).toBeGreaterThanOrEqual(1);
      expect(s.journalSyncs).toBeLessThanOrEqual(18);
      if (concurrency === 1) expect(s.journalSyncs).toBe(18);
      expect(s.sim?.requests).toBe(s.requests);
    }
  });
});
