/**
 * `standoff run` against provider-realistic endpoints (`tests/helpers/fake-provider.ts`: real HTTP
 * on 127.0.0.1, each quirk modelled on a documented behaviour of OpenAI, vLLM, Ollama or
 * llama.cpp's server; sources are cited there). One describe block per finding of issue 12.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand, runVerdict, type RunSummary } from '../../src/runner/run.ts';
import { journalPath } from '../../src/runner/journal.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { validateRun } from '../../src/store/validate-run.ts';
import { buildReport } from '../../src/report/build-report.ts';
import { ROOT } from '../helpers/cli.ts';
import { requestKinds, startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../helpers/fake-provider.ts';

const KEY_ENV = 'FAKE_PROVIDER_KEY';
const KEY = 'fake-provider-secret-123456';
process.env[KEY_ENV] = KEY;

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'standoff-provider-'));
  cleanup.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

async function provider(o: FakeProviderOptions): Promise<FakeProvider> {
  const p = await startFakeProvider(o);
  cleanup.push(() => p.close());
  return p;
}

type Model = Record<string, unknown>;

/** A config file for one subject (and optionally one judge) served by `p`. */
async function configFile(dir: string, p: FakeProvider | string, subject: Model, over: Record<string, unknown> = {}, judge?: Model): Promise<string> {
  const base_url = typeof p === 'string' ? p : p.baseURL;
  const cfg = {
    name: 'prov',
    scenarios: ['em_act_a', 'fc_amb_a'],
    subjects: [{ base_url, api_key_env: KEY_ENV, ...subject }],
    judges: judge ? [{ base_url, api_key_env: KEY_ENV, ...judge }] : [],
    epochs: 1,
    concurrency: 4,
    seed: 7,
    retries: { max: 2, base_ms: 1, max_ms: 5 },
    timeouts: { request_ms: 10_000, log_read_ms: 2_000 },
    ...over,
  };
  const file = join(dir, 'standoff.config.json');
  await writeFile(file, JSON.stringify(cfg));
  return file;
}

async function run(config: string, traces: string, extra: Partial<Parameters<typeof runCommand>[0]> = {}) {
  const lines: string[] = [];
  const summary = await runCommand({ config, traces, progress: 'none', log: (l) => lines.push(l), handleSignals: false, ...extra });
  return { summary, lines };
}

async function tables(traces: string, runId: string): Promise<Record<string, Record<string, any>[]>> {
  const s = await openStore(traces, { runs: [runId] });
  try {
    const out: Record<string, Record<string, any>[]> = {};
    for (const t of ['runs', 'episodes', 'messages', 'scores', 'judgments', 'probe_answers']) out[t] = (await query(s.conn, `SELECT * FROM ${t} ORDER BY ALL`)).rows;
    return out;
  } finally {
    s.close();
  }
}

/** The real CLI in a child process (asynchronously: the fake endpoint lives in this process). */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'standoff.js'), ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const gateLine = (s: RunSummary, name: string) => s.gate!.checks.find((c) => c.name === name)!;

// ---------------------------------------------------------------------------------------------
// 1 + 2. Per-model request parameters
// ---------------------------------------------------------------------------------------------

describe('finding 1/2: request parameters a provider refuses', () => {
  it('an OpenAI reasoning model refuses max_tokens, temperature and parallel_tool_calls: each is adjusted once, noticed once, recorded in runs.config', async () => {
    const p = await provider({ flavor: 'openai', models: ['o4-mini'], judges: ['o4-mini-judge'], refuse: ['max_tokens', 'temperature', 'parallel_tool_calls'] });
    const dir = await tmp();
    const { summary, lines } = await run(await configFile(dir, p, { model: 'o4-mini' }, {}, { model: 'o4-mini-judge' }), dir);
    expect(summary.byStatus).toEqual({ valid: 2, invalid: 0, error: 0 });
    expect(summary.gate!.ok).toBe(true);
    // one notice per model and parameter
    const notices = lines.filter((l) => l.includes('notice:'));
    expect(notices).toHaveLength(5);
    expect(notices.filter((l) => l.includes('o4-mini at') && l.includes('refused max_tokens'))).toHaveLength(1);
    expect(notices.find((l) => l.includes('o4-mini at') && l.includes('refused max_tokens'))).toMatch(/sent as max_completion_tokens for the rest of the run/);
    expect(notices.find((l) => l.includes('o4-mini-judge') && l.includes('refused temperature'))).toMatch(/http 400: Unsupported value: 'temperature' does not support 0 with this model.*omitted for the rest of the run/);
    // the refusals happened during the endpoint check; every later request carries the adjusted parameters
    const k = requestKinds(p);
    expect(p.requests.filter((r) => r.status === 400)).toHaveLength(5);
    expect(k.checks.filter((r) => r.status === 400)).toHaveLength(5);
    for (const r of [...k.agent, ...k.probe, ...k.judge]) {
      expect(r.status).toBe(200);
      expect(r.body).not.toHaveProperty('max_tokens');
      expect(r.body).not.toHaveProperty('temperature');
      expect(r.body).not.toHaveProperty('parallel_tool_calls');
      expect(r.body.max_completion_tokens).toBeGreaterThan(0);
    }
    expect(k.judge.length).toBeGreaterThan(0); // reasoning models can serve as judges
    const t = await tables(dir, summary.runId);
    expect(t.judgments.every((j) => j.verdict === 'ALIGNED')).toBe(true);
    const cfg = JSON.parse(t.runs[0].config);
    expect(cfg.request_adjustments.map((a: any) => `${a.model} ${a.param} ${a.action}`).sort()).toEqual([
      'o4-mini max_tokens sent as max_completion_tokens',
      'o4-mini parallel_tool_calls omitted',
      'o4-mini temperature omitted',
      'o4-mini-judge max_tokens sent as max_completion_tokens',
      'o4-mini-judge temperature omitted',
    ]);
    expect(t.runs[0].notes).toMatch(/request parameters adjusted after the endpoint refused them/);
  });

  it('max_tokens_param and omit_params in the config: the refused parameters are never sent, nothing is refused', async () => {
    const p = await provider({ flavor: 'openai', models: ['o4-mini'], refuse: ['max_tokens', 'temperature', 'parallel_tool_calls'] });
    const dir = await tmp();
    const { summary, lines } = await run(
      await configFile(dir, p, { model: 'o4-mini', max_tokens_param: 'max_completion_tokens', omit_params: ['temperature', 'parallel_tool_calls'], max_tokens: 20000 }),
      dir,
    );
    expect(summary.byStatus.valid).toBe(2);
    expect(lines.filter((l) => l.includes('notice:'))).toEqual([]);
    expect(p.requests.every((r) => r.status === 200)).toBe(true);
    expect(p.requests.every((r) => r.body.max_completion_tokens === 20000 && !('temperature' in r.body))).toBe(true);
    expect(JSON.parse((await tables(dir, summary.runId)).runs[0].config).request_adjustments).toEqual([]);
  });

  it('a gateway that refuses parallel_tool_calls (FastAPI 422 extra_forbidden): omitted, and two decisions in one batch stay invalid', async () => {
    const p = await provider({ flavor: 'vllm', refuse: ['parallel_tool_calls'], refuseStyle: 'pydantic', parallelDecisions: true });
    const dir = await tmp();
    const { summary, lines } = await run(await configFile(dir, p, { model: 'fake-model' }), dir);
    expect(lines.filter((l) => l.includes('notice:'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('notice:'))).toMatch(/refused parallel_tool_calls \(http 422: Extra inputs are not permitted \(body\.parallel_tool_calls\)\)/);
    const t = await tables(dir, summary.runId);
    // the model called two decisions in one batch: invalid, neither taken, scored 0 (not repaired)
    expect(t.episodes.map((e) => [e.status, e.invalid_reason, e.decision_tool])).toEqual([
      ['invalid', '2 decisions in one batch (escalate, withdraw)', null],
      ['invalid', '2 decisions in one batch (escalate, withdraw)', null],
    ]);
    const policy = t.scores.filter((s) => s.scorer === 'policy_compliant_action' && !s.noanswer);
    expect(policy.map((s) => s.value)).toEqual([0]);
  });

  it('a 400 that names max_tokens without refusing it (vLLM "too large") is an error, not a fallback', async () => {
    const p = await provider({ flavor: 'vllm', maxModelLen: 4096 });
    const dir = await tmp();
    const err = await run(await configFile(dir, p, { model: 'fake-model' }), dir).catch((e) => e);
    expect(err).toMatchObject({ kind: 'endpoint', code: 'run.endpointCheck' });
    expect(err.message).toMatch(/http 400: 'max_tokens' or 'max_completion_tokens' is too large: 8192\. This model's maximum context length is 4096 tokens/);
    expect(p.requests).toHaveLength(1);
    expect(p.requests[0].body.max_tokens).toBe(8192);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Truncation
// ---------------------------------------------------------------------------------------------

describe('finding 3: a reply cut off at the token limit is its own outcome', () => {
  // gpt-oss-120b on vLLM spends its tokens on reasoning; with a small cap it returns
  // finish_reason "length", content null and only reasoning text.
  const gptOss = { flavor: 'vllm' as const, models: ['openai/gpt-oss-120b'], judges: ['judge'], reasoningTokens: 600 };

  it('episodes: invalid "truncated (finish_reason=length)", truncated flag, finish_reason stored, scored as invalid (incorrect, not gathered); the gate fails unless allowed', async () => {
    const p = await provider(gptOss);
    const dir = await tmp();
    const cfg = await configFile(dir, p, { model: 'openai/gpt-oss-120b', max_tokens: 256 }, {}, { model: 'judge' });
    const { summary, lines } = await run(cfg, dir);
    expect(lines.some((l) => /warning: openai\/gpt-oss-120b was cut off at the token limit answering the endpoint check \(max_tokens 256\)/.test(l))).toBe(true);
    expect(summary.truncated).toBe(2);
    expect(summary.subjects[0]).toMatchObject({ invalid: 2, truncated: 2, error: 0 });
    const t = await tables(dir, summary.runId);
    for (const e of t.episodes) {
      expect(e).toMatchObject({ status: 'invalid', invalid_reason: 'truncated (finish_reason=length)', truncated: true, gathered_evidence: false, attempts: 1 });
    }
    const asst = t.messages.filter((m) => m.role === 'assistant');
    expect(asst.every((m) => m.finish_reason === 'length' && m.content === null && m.reasoning.length > 0)).toBe(true);
    // O1's convention: a trajectory with no valid decision is invalid and incorrect, in every denominator
    for (const s of t.scores.filter((x) => !x.noanswer)) {
      expect(s.value).toBe(0);
      expect(s.explanation).toMatch(/^invalid trajectory.*truncated \(finish_reason=length\)/);
    }
    expect(t.judgments).toEqual([]); // invalid episodes never reach a judge
    // every probe request was sent once: nothing re-sent with an identical body after the cut-off
    const probes = requestKinds(p).probe.map((r) => JSON.stringify(r.body));
    expect(probes.length).toBeGreaterThan(0);
    expect(new Set(probes).size).toBe(probes.length);
    expect(summary.probeTruncated).toBe(probes.length);
    expect(t.probe_answers.every((a) => a.answer === null)).toBe(true);
    // the gate, as `standoff validate` runs it
    expect(summary.gate!.ok).toBe(false);
    expect(gateLine(summary, 'truncated_episodes')).toMatchObject({ ok: false });
    expect(gateLine(summary, 'truncated_episodes').detail).toMatch(/^2 episode\(s\) cut off at the token limit \(finish_reason=length\): openai\/gpt-oss-120b=2/);
    expect(runVerdict(summary)).toMatchObject({ kind: 'data', code: 'validate.failed' });
    const allowed = await validateRun(dir, { runId: summary.runId, allowTruncated: 2 });
    expect(allowed.ok).toBe(true);
    // the report counts them per subject and says what to do
    const out = join(dir, 'report');
    await buildReport({ traces: dir, out, resamples: 200 });
    const md = await import('node:fs/promises').then((f) => f.readFile(join(out, 'REPORT.md'), 'utf8'));
    expect(md).toMatch(/cut off at the token limit/);
    expect(md).toMatch(/Raise `max_tokens` for this subject/);
    const results = JSON.parse(await import('node:fs/promises').then((f) => f.readFile(join(out, 'results.json'), 'utf8')));
    expect(JSON.stringify(results)).toContain('"token_limit":2');
  });

  it('the default max_tokens (8192) leaves room for the same reasoning', async () => {
    const p = await provider(gptOss);
    const dir = await tmp();
    const { summary } = await run(await configFile(dir, p, { model: 'openai/gpt-oss-120b' }, {}, { model: 'judge' }), dir);
    expect(summary.byStatus).toEqual({ valid: 2, invalid: 0, error: 0 });
    expect(summary.truncated).toBe(0);
    expect(requestKinds(p).agent.every((r) => r.body.max_tokens === 8192)).toBe(true);
    expect(requestKinds(p).judge.every((r) => r.body.max_tokens === 4096)).toBe(true);
    expect(summary.gate!.ok).toBe(true);
  });

  it('Ollama: reasoning arrives in `reasoning`, and is stored', async () => {
    const p = await provider({ flavor: 'ollama', models: ['gpt-oss:20b'], reasoningTokens: 40 });
    const dir = await tmp();
    const { summary } = await run(await configFile(dir, p, { model: 'gpt-oss:20b' }), dir);
    const t = await tables(dir, summary.runId);
    const asst = t.messages.filter((m) => m.role === 'assistant');
    expect(asst.length).toBeGreaterThan(0);
    expect(asst.filter((m) => m.content !== null || m.tool_name === 'read_system_log').every((m) => m.reasoning === null || m.reasoning.startsWith('Let me think'))).toBe(true);
    expect(asst.some((m) => (m.reasoning ?? '').startsWith('Let me think'))).toBe(true);
    expect(asst.every((m) => m.finish_reason === 'tool_calls')).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Failing runs fail
// ---------------------------------------------------------------------------------------------

describe('finding 5: runs that fail say so', () => {
  it('a dead endpoint: the endpoint check stops at once with the URL and ECONNREFUSED; nothing is written', async () => {
    const dir = await tmp();
    const t0 = Date.now();
    const err = await run(await configFile(dir, 'http://127.0.0.1:9/v1', { model: 'gpt-x' }, { retries: { max: 4, base_ms: 2000, max_ms: 30000 } }), dir).catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(1500); // not retried
    expect(err).toMatchObject({ kind: 'endpoint', code: 'run.endpointCheck', exitCode: 5 });
    expect(err.message).toBe(
      'endpoint check failed for subject "gpt-x": connection error: ECONNREFUSED 127.0.0.1:9 (POST http://127.0.0.1:9/v1/chat/completions); is the server running, and on that port? (nothing was run)',
    );
    expect(existsSync(journalPath(dir, 'prov-s7'))).toBe(false);
    expect((await readdir(dir)).filter((n) => n !== 'standoff.config.json')).toEqual([]);
  });

  it('401 and 404 (OpenAI, vLLM and Ollama formats): the status, the provider message and the URL, one line', async () => {
    const cases: Array<[FakeProviderOptions, Model, RegExp]> = [
      [{ flavor: 'openai', apiKey: 'another-key' }, { model: 'fake-model' }, /^endpoint check failed for subject "fake-model": http 401: Incorrect API key provided: sk-wrong\. .* \(invalid_api_key\) \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\); check the key in FAKE_PROVIDER_KEY/],
      [{ flavor: 'vllm', apiKey: 'another-key' }, { model: 'fake-model' }, /http 401: Unauthorized \(POST /],
      [{ flavor: 'vllm' }, { model: 'nope' }, /http 404: The model `nope` does not exist\. \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\); check the model name "nope"/],
      [{ flavor: 'ollama' }, { model: 'nope' }, /http 404: model "nope" not found, try pulling it first \(not_found_error\) \(POST /],
      [{ flavor: 'openai' }, { model: 'nope' }, /http 404: The model `nope` does not exist or you do not have access to it\. \(model_not_found\)/],
    ];
    for (const [o, subject, re] of cases) {
      const p = await provider(o);
      const dir = await tmp();
      const err = await run(await configFile(dir, p, subject), dir).catch((e) => e);
      expect(err, JSON.stringify(o)).toMatchObject({ kind: 'endpoint', code: 'run.endpointCheck' });
      expect(err.message).toMatch(re);
      expect(err.message).not.toContain('\n');
      expect(err.message).not.toContain(KEY);
      expect(p.requests).toHaveLength(1); // 4xx are not retried
    }
  });

  it('a non-API server (501 HTML page): one line of its text, no HTML', async () => {
    const p = await provider({ flavor: 'openai', html501: true });
    const dir = await tmp();
    const err = await run(await configFile(dir, p, { model: 'fake-model' }), dir).catch((e) => e);
    expect(err.message).toMatch(
      /^endpoint check failed for subject "fake-model": http 501: HTML page, not an API error: Error response Error code: 501 Message: Unsupported method \('POST'\)\. .* \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\); base_url does not point to an OpenAI-compatible API/,
    );
    expect(p.requests).toHaveLength(1); // 501 Not Implemented is not retried
    expect(err.message).not.toMatch(/[<>\n]/);
  });

  it('errors that repeat stop the run at --max-errors; after the fix, --resume runs the errored episodes again', async () => {
    // vLLM answers 400 when the prompt exceeds the model's context: the short endpoint check passes, every episode fails.
    const p = await provider({ flavor: 'vllm', maxModelLen: 300 });
    const dir = await tmp();
    const cfg = await configFile(dir, p, { model: 'fake-model', max_tokens: 100 }, { epochs: 3, concurrency: 1, probes: false });
    const err = await run(cfg, dir, { maxErrors: 3 }).catch((e) => e);
    expect(err).toMatchObject({ kind: 'endpoint', code: 'run.tooManyErrors', exitCode: 5 });
    // the unit in flight when the third error was saved may end in error too (at most `concurrency` more)
    expect(err.message).toMatch(
      /^stopped: [34] episode\(s\) ended in error \(--max-errors 3\); last: fake-model: http 400: This model's maximum context length is 300 tokens\. However, your request has \d+ input tokens\. Please reduce the length of the input messages\. \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\); 0\/6 episodes are saved in the journal .*; fix the endpoint, then resume with: standoff run --resume prov-s7/,
    );
    expect(requestKinds(p).agent.length).toBeLessThanOrEqual(4); // a 400 is not retried; the run stopped before episodes 5 and 6
    expect(existsSync(journalPath(dir, 'prov-s7'))).toBe(true);
    // the endpoint is fixed; resuming runs every episode that ended in error again
    p.options.maxModelLen = undefined;
    const { summary } = await run(cfg, dir, { resume: 'prov-s7', config: undefined });
    expect(summary.byStatus).toEqual({ valid: 6, invalid: 0, error: 0 });
    // this config has no judges: alignment is not measured, so the O1 gate fails on that check alone
    expect(summary.gate!.checks.filter((c) => !c.ok).map((c) => c.name), JSON.stringify(summary.gate)).toEqual(['required_scorers']);
    expect((await tables(dir, 'prov-s7')).episodes).toHaveLength(6);
  });

  it('a run with errored episodes is written, fails the gate and exits 5 (runVerdict); the error is one line with status, message and URL', async () => {
    const p = await provider({ flavor: 'vllm', maxModelLen: 300 });
    const dir = await tmp();
    const { summary } = await run(await configFile(dir, p, { model: 'fake-model', max_tokens: 100 }, { probes: false }), dir);
    expect(summary.byStatus.error).toBe(2);
    expect(summary.subjects[0]).toMatchObject({ gathered: 0, error: 2 });
    expect(gateLine(summary, 'sample_errors').ok).toBe(false);
    expect(runVerdict(summary)).toMatchObject({ kind: 'endpoint', code: 'run.episodeErrors', exitCode: 5 });
    const t = await tables(dir, summary.runId);
    for (const e of t.episodes) {
      expect(e.error).toMatch(/^fake-model: http 400: This model's maximum context length is 300 tokens\. .* \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\)$/);
      expect(e.gathered_evidence).toBeNull(); // not measured
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 6. Empty tool-call ids
// ---------------------------------------------------------------------------------------------

describe('finding 6: empty tool-call ids (llama.cpp)', () => {
  it('are replaced by generated ids that the tool results answer; the original is kept', async () => {
    const p = await provider({ flavor: 'llamacpp', emptyToolCallIds: true });
    const dir = await tmp();
    const { summary } = await run(await configFile(dir, p, { model: 'whatever-llama-server-ignores-it' }, { probes: false }), dir);
    expect(summary.byStatus.valid).toBe(2);
    const t = await tables(dir, summary.runId);
    const calls = t.messages.filter((m) => m.role === 'assistant' && m.tool_name !== null);
    expect(calls.map((m) => [m.tool_call_id, m.original_tool_call_id])).toEqual([
      ['call_standoff_1_0', ''],
      ['call_standoff_2_0', ''],
      ['call_standoff_1_0', ''],
      ['call_standoff_2_0', ''],
    ]);
    const results = t.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.tool_call_id)).toEqual(['call_standoff_1_0', 'call_standoff_2_0', 'call_standoff_1_0', 'call_standoff_2_0']);
    // what went back to the server: non-empty, matching ids
    for (const r of requestKinds(p).agent) {
      for (const m of r.body.messages) {
        if (m.role === 'assistant') expect(m.tool_calls.every((c: any) => c.id.startsWith('call_standoff_'))).toBe(true);
        if (m.role === 'tool') expect(m.tool_call_id).toMatch(/^call_standoff_/);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The CLI: exit codes and the gate
// ---------------------------------------------------------------------------------------------

describe('standoff run (CLI): exit codes and the gate', () => {
  it('exit 5 on a dead endpoint (one line on stderr); exit 3 with the gate printed when episodes were truncated; 0 with --allow-truncated', async () => {
    const dir = await tmp();
    const dead = await cli(['run', '--config', await configFile(dir, 'http://127.0.0.1:9/v1', { model: 'gpt-x' }), '--traces', join(dir, 't'), '--progress', 'none']);
    expect(dead.code).toBe(5);
    expect(dead.stderr.trim().split('\n')).toHaveLength(1);
    expect(dead.stderr).toMatch(/^standoff: endpoint check failed for subject "gpt-x": connection error: ECONNREFUSED 127\.0\.0\.1:9/);

    const p = await provider({ flavor: 'vllm', reasoningTokens: 600 });
    const cfg = await configFile(dir, p, { model: 'fake-model', max_tokens: 256 }, { probes: false });
    const cut = await cli(['run', '--config', cfg, '--traces', join(dir, 't'), '--progress', 'none']);
    expect(cut.code).toBe(3);
    expect(cut.stdout).toContain('gate (as standoff validate):');
    expect(cut.stdout).toMatch(/FAIL truncated_episodes: 2 episode\(s\) cut off at the token limit/);
    expect(cut.stderr).toMatch(/standoff: run prov-s7 failed 1 publication check\(s\): truncated_episodes/);
    const validate = await cli(['validate', '--traces', join(dir, 't'), '--run', 'prov-s7', '--allow-truncated', '2']);
    expect(validate.code).toBe(0);
    const ok = await cli(['run', '--config', cfg, '--traces', join(dir, 't'), '--progress', 'none', '--replace', '--allow-truncated', '2']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/ok {3}truncated_episodes: .*allowed by --allow-truncated 2/);
    expect(ok.stdout).toMatch(/run prov-s7: passed the publication gate/);
  }, 60_000);
});
