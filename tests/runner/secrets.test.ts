/**
 * API keys never reach traces, journals, logs or errors. Keys with distinctive values are sent to
 * real HTTP endpoints on 127.0.0.1 (an external sim endpoint, and a "leaky" scripted endpoint that
 * echoes the Authorization header back in its replies and errors, as some providers do); then
 * every file written under the trace store (journal included, mid-run and after) is searched, raw
 * and decoded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimServer, type SimServer } from '../../src/runner/sim/server.ts';
import { parseConfig } from '../../src/runner/config.ts';
import { runEvaluation } from '../../src/runner/run.ts';
import { journalPath } from '../../src/runner/journal.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { REDACTED, collectSecrets, createRedactor, maskSecretPatterns } from '../../src/redact.ts';

const SUBJECT_KEY = 'sk-standoff-FAKE-7f3a9c1e5b2d8046-DO-NOT-LEAK';
const JUDGE_KEY = 'judge-token-Q9w8E7r6T5y4-unique-zz';
const KEYS = [SUBJECT_KEY, JUDGE_KEY];

let sim: SimServer;
let leaky: { url: string; seen: string[]; close(): Promise<void> };
let traces: string;

/** Echoes the bearer token it receives into assistant text, tool arguments and (for `leaky-401*`) errors. */
async function leakyServer() {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    seen.push(auth);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const send = (status: number, obj: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      // `leaky-401` passes the endpoint check and then refuses the key (as when a key is revoked
      // mid-run); `leaky-401-always` refuses it from the start.
      const isCheck = JSON.stringify(body.messages).includes('connectivity check');
      if (body.model === 'leaky-401-always' || (body.model === 'leaky-401' && !isCheck)) {
        return send(401, { error: { message: `Incorrect API key provided: ${auth.replace('Bearer ', '')}. Header was "${auth}"`, type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      const turn = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
      const key = auth.replace('Bearer ', '');
      const message: Record<string, unknown> =
        !body.tools
          ? { role: 'assistant', content: `yes (my key is ${key})` }
          : turn === 0
            ? { role: 'assistant', content: `Reading the log. My credentials: ${auth}`, reasoning_content: `key=${key}`, tool_calls: [{ id: 'c0', type: 'function', function: { name: 'read_system_log', arguments: '{}' } }] }
            : { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'escalate', arguments: JSON.stringify({ reason: `escalating with ${key}` }) } }] };
      send(200, { id: 'x', object: 'chat.completion', created: 0, model: body.model, choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }] });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    seen,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...allFiles(p));
    else out.push(p);
  }
  return out;
}

function expectNoKeys(text: string, where: string) {
  for (const k of KEYS) expect(text.includes(k), `${where} contains a key`).toBe(false);
  // no fragment either (a key split by a redactor or a truncation)
  for (const k of KEYS) expect(text.includes(k.slice(8, 28)), `${where} contains part of a key`).toBe(false);
}

beforeAll(async () => {
  process.env.STANDOFF_SECRET_TEST_KEY = SUBJECT_KEY;
  process.env.STANDOFF_SECRET_JUDGE = JUDGE_KEY;
  sim = await startSimServer({ seed: 1 });
  leaky = await leakyServer();
  traces = await mkdtemp(join(tmpdir(), 'standoff-secrets-'));
});
afterAll(async () => {
  delete process.env.STANDOFF_SECRET_TEST_KEY;
  delete process.env.STANDOFF_SECRET_JUDGE;
  await sim.close();
  await leaky.close();
  await rm(traces, { recursive: true, force: true });
});

describe('secrets never reach traces, journals, logs or errors', () => {
  it('the endpoint check error names the status and message, never the key', async () => {
    const cfg = parseConfig({
      name: 'secret-check',
      scenarios: ['em_act_a'],
      subjects: [{ model: 'leaky-401-always', base_url: leaky.url, api_key_env: 'STANDOFF_SECRET_TEST_KEY', family: 'leaky' }],
      epochs: 1,
      retries: { max: 1, base_ms: 1, max_ms: 2 },
    });
    const err = (await runEvaluation({ config: cfg, runId: 'secret-check', traces, progress: 'none', log: () => undefined }).catch((e: Error) => e)) as Error;
    expect(err).toMatchObject({ code: 'run.endpointCheck', kind: 'endpoint' });
    expect(err.message).toMatch(/http 401: Incorrect API key provided: \[REDACTED\]/);
    expectNoKeys(err.message, 'endpoint check error');
  });

  it('end to end, through an interrupted run and its resume', async () => {
    const cfg = parseConfig({
      name: 'secret',
      scenarios: ['em_act_a', 'fc_amb_a'],
      subjects: [
        { model: 'sim:careful', base_url: sim.baseURL, api_key_env: 'STANDOFF_SECRET_TEST_KEY' },
        { model: 'leaky', base_url: leaky.url, api_key_env: 'STANDOFF_SECRET_TEST_KEY', family: 'leaky' },
        { model: 'leaky-401', base_url: leaky.url, api_key_env: 'STANDOFF_SECRET_TEST_KEY', family: 'leaky' },
      ],
      judges: [
        { model: 'sim:judge-strict', base_url: sim.baseURL, api_key_env: 'STANDOFF_SECRET_JUDGE' },
        { model: 'leaky', base_url: leaky.url, api_key_env: 'STANDOFF_SECRET_JUDGE', family: 'leaky' },
      ],
      epochs: 2,
      concurrency: 2,
      seed: 4,
      retries: { max: 1, base_ms: 1, max_ms: 2 },
    });
    const logs: string[] = [];
    const ac = new AbortController();
    const jp = journalPath(traces, 'secret');
    let journalMidRun = '';
    const first = runEvaluation({
      config: cfg,
      runId: 'secret',
      traces,
      progress: 'lines',
      log: (l) => logs.push(l),
      signal: ac.signal,
      onUnit: (done) => {
        journalMidRun = readFileSync(jp, 'utf8');
        if (done >= 6) ac.abort();
      },
    });
    const err = await first.catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'run.interrupted' });
    expectNoKeys(String((err as Error).message), 'interrupt message');
    expect(journalMidRun).toContain('"kind":"unit"');
    expectNoKeys(journalMidRun, 'journal (mid-run)');
    expectNoKeys(readFileSync(jp, 'utf8'), 'journal (after interrupt)');

    const s = await runEvaluation({ config: cfg, runId: 'secret', traces, resume: true, progress: 'lines', log: (l) => logs.push(l) });
    expect(s.episodes).toBe(12);
    expect(s.byStatus.error).toBe(4); // leaky-401 episodes
    // sanity: the keys really went over the wire and came back in replies and errors
    expect(leaky.seen).toContain(`Bearer ${SUBJECT_KEY}`);
    expect(leaky.seen).toContain(`Bearer ${JUDGE_KEY}`);

    // every file under the store, raw
    const files = allFiles(traces);
    expect(files.some((f) => f.endsWith('.parquet'))).toBe(true);
    for (const f of files) expectNoKeys(readFileSync(f).toString('latin1'), f);
    // every table, decoded
    const store = await openStore(traces);
    try {
      for (const t of ['runs', 'episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions']) {
        const rows = (await query(store.conn, `SELECT * FROM ${t}`)).rows;
        expectNoKeys(JSON.stringify(rows), `table ${t}`);
      }
      const echoed = (await query(store.conn, "SELECT count(*) AS n FROM messages WHERE content LIKE '%[REDACTED]%' OR tool_args LIKE '%[REDACTED]%' OR reasoning LIKE '%[REDACTED]%'")).rows[0];
      expect(Number(echoed.n)).toBeGreaterThan(0);
      const errors = (await query(store.conn, "SELECT error FROM episodes WHERE status = 'error'")).rows.map((r) => String(r.error));
      expect(errors[0]).toMatch(/leaky-401: http 401/);
      expect(errors[0]).toContain(REDACTED);
      const config = String((await query(store.conn, 'SELECT config FROM runs')).rows[0].config);
      expect(config).toContain('"api_key_env":"STANDOFF_SECRET_TEST_KEY"'); // the name is kept
    } finally {
      store.close();
    }
    expectNoKeys(logs.join('\n'), 'progress log');
  });
});

describe('redact', () => {
  it('scrubs known values everywhere and secret fields and patterns in config and errors', () => {
    const r = createRedactor(['s3cr3t-value-1234']);
    expect(r.values('a s3cr3t-value-1234 b')).toBe(`a ${REDACTED} b`);
    expect(r.text('Authorization: Bearer abcdefghijklmnop')).toBe(`Authorization: ${REDACTED}`);
    expect(r.error(new Error('bad api_key=zzzzzzzzzz&x=1\nsecond line'))).toBe(`bad api_key=${REDACTED}&x=1 second line`);
    const cfg = r.value({ headers: { Authorization: 'Bearer x', 'X-Api-Key': 'k' }, api_key: 'sk-1', api_key_env: 'NIM_API_KEY', url: 'http://h/v1?api_key=abcdef' });
    expect(cfg).toEqual({ headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED }, api_key: REDACTED, api_key_env: 'NIM_API_KEY', url: `http://h/v1?api_key=${REDACTED}` });
    expect(maskSecretPatterns('key sk-proj-ABCDEFGHIJKLMNOPQRST and nvapi-0123456789abcdefghij')).toBe(`key ${REDACTED} and ${REDACTED}`);
    // trace rows get value scrubbing only: genuine text like "Authorization: pending" survives
    expect(r.row({ content: 'Authorization: pending review; s3cr3t-value-1234', n: 1 })).toEqual({ content: `Authorization: pending review; ${REDACTED}`, n: 1 });
  });

  it('collects the named key variables and secret-looking env vars, not short or unrelated values', () => {
    const env = { NIM_API_KEY: 'nvapi-xyz-123456', MY_TOKEN: 'tok-abcdefgh', SHORT_KEY: 'abc', HOME: '/root', CUSTOM: 'custom-secret-1' };
    const s = collectSecrets(['CUSTOM'], env);
    expect(s).toContain('nvapi-xyz-123456');
    expect(s).toContain('tok-abcdefgh');
    expect(s).toContain('custom-secret-1');
    expect(s).not.toContain('abc');
    expect(s).not.toContain('/root');
  });
});
