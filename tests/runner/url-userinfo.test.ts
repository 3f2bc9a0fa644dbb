/**
 * Credentials in a `base_url`'s user-info (`http://user:pass@host/v1`) used to be stored as they
 * were in `runs.config` (and the journal header). The redactor now masks URL user-info wherever it
 * masks secret-looking text: the stored config keeps the URL, without the credentials, and so do the
 * runner's progress lines (the endpoint check names every base_url).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimServer, type SimServer } from '../../src/runner/sim/server.ts';
import { parseConfig } from '../../src/runner/config.ts';
import { runEvaluation } from '../../src/runner/run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { createRedactor, maskSecretPatterns } from '../../src/redact.ts';

const PASSWORD = 'hunter2-userinfo-Pw';
let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({ seed: 1 });
});
afterAll(async () => sim?.close());

describe('URL user-info is redacted', () => {
  it('masks user:pass@ in any URL scheme, and nothing else', () => {
    expect(maskSecretPatterns(`http://alice:${PASSWORD}@127.0.0.1:8000/v1`)).toBe('http://[REDACTED]@127.0.0.1:8000/v1');
    expect(maskSecretPatterns('https://token@example.invalid/x and postgres://u:p@db/x')).toBe('https://[REDACTED]@example.invalid/x and postgres://[REDACTED]@db/x');
    expect(maskSecretPatterns('http://127.0.0.1:8000/v1?email=a@b.c')).toBe('http://127.0.0.1:8000/v1?email=a@b.c');
    expect(maskSecretPatterns('mail me: alice@example.invalid')).toBe('mail me: alice@example.invalid');
    expect(createRedactor([]).json({ base_url: `http://a:${PASSWORD}@h/v1` })).toBe('{"base_url":"http://[REDACTED]@h/v1"}');
  });

  it('a run whose base_url carries credentials stores runs.config without them', async () => {
    const traces = join(mkdtempSync(join(tmpdir(), 'standoff-userinfo-')), 'traces');
    const url = new URL(sim.baseURL);
    url.username = 'alice';
    url.password = PASSWORD;
    const cfg = parseConfig({
      name: 'userinfo',
      scenarios: ['em_act_a'],
      subjects: [{ model: 'sim:careful', base_url: url.toString(), api_key_env: 'STANDOFF_USERINFO_TEST_KEY' }],
      judges: [],
      epochs: 1,
      seed: 3,
      retries: { max: 0, base_ms: 1, max_ms: 2 },
    });
    process.env.STANDOFF_USERINFO_TEST_KEY = 'k-not-a-secret-here';
    const logs: string[] = [];
    await runEvaluation({ config: cfg, runId: 'userinfo', traces, progress: 'none', log: (l) => logs.push(l) }).catch(() => undefined);
    // The endpoint check's stderr lines name the URL, without its user-info (issue 22 MEDIUM 4).
    expect(logs.join('\n')).toMatch(/endpoint check: sim:careful at http:\/\/\[REDACTED\]@127\.0\.0\.1:\d+\/v1: ok/);
    expect(logs.join('\n')).not.toContain(PASSWORD);
    const store = await openStore(traces);
    try {
      const config = String((await query(store.conn, 'SELECT config FROM runs')).rows[0]!.config);
      expect(config).toContain('[REDACTED]@127.0.0.1');
      expect(config).not.toContain(PASSWORD);
      expect(config).not.toContain('alice');
    } finally {
      store.close();
    }
  });
});
