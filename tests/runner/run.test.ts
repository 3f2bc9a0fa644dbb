/**
 * The run loop end to end against the in-process sim endpoint and the real verifier (real HTTP on
 * 127.0.0.1): counts, ordering, determinism, retries on every sim fault profile, errors that do
 * not stop the run, and the CLI entry `runCommand`.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { parseConfig, type ConfigInput } from '../../src/runner/config.ts';
import { defaultRunId, episodeIdOf, formatSummary, runCommand, runEvaluation } from '../../src/runner/run.ts';
import { journalPath } from '../../src/runner/journal.ts';
import { backoffMs, retryAfterMs } from '../../src/runner/solver.ts';
import { createRng } from '../../src/stats/rng.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';

const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'standoff-run-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const base = (over: Partial<ConfigInput> = {}): ConfigInput => ({
  name: 't',
  scenarios: ['em_act_a', 'ct_esc_b', 'fc_amb_a'],
  subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }],
  judges: [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }],
  epochs: 2,
  concurrency: 6,
  seed: 11,
  retries: { max: 3, base_ms: 1, max_ms: 10 },
  timeouts: { request_ms: 5_000, log_read_ms: 2_000 },
  ...over,
});

async function tables(traces: string, runId: string) {
  const s = await openStore(traces, { runs: [runId] });
  try {
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const t of ['runs', 'episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions']) {
      out[t] = (await query(s.conn, `SELECT * FROM ${t}`)).rows;
    }
    return out;
  } finally {
    s.close();
  }
}

const quiet = { progress: 'none' as const, log: () => undefined };
const VOLATILE = new Set(['run_id', 'started_at', 'latency_ms', 'created_at']);
const stable = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.has(k))));

describe('runEvaluation', () => {
  it('writes a complete, sorted run with every table, and deletes the journal', async () => {
    const traces = await tmp();
    const cfg = parseConfig(base());
    const s = await runEvaluation({ config: cfg, runId: 'full', traces, ...quiet });
    expect(s.episodes).toBe(18);
    expect(s.status).toBe('success');
    expect(existsSync(journalPath(traces, 'full'))).toBe(false);
    const t = await tables(traces, 'full');
    expect(t.runs).toHaveLength(1);
    const run = t.runs[0];
    expect(run).toMatchObject({ source: 'standoff', suite: 'standoff-o1', status: 'success', seed: 11, epochs: 2 });
    expect(String(run.notes)).toContain('simulated subjects');
    const config = JSON.parse(String(run.config));
    expect(config.subjects.map((m: { model: string }) => m.model)).toEqual(['sim:hasty', 'sim:careful', 'sim:thorough']);
    expect(config.protocol_version).toBe('standoff-protocol/3');
    expect(config.prompt).toBe('neutral');

    // one row per episode, ids <subject>/<scenario>/<epoch>, sorted by (subject, scenario, epoch)
    const ids = t.episodes.map((e) => e.episode_id);
    expect(new Set(ids).size).toBe(18);
    expect(ids[0]).toBe(episodeIdOf('sim:careful', 'ct_esc_b', 1));
    const keys = t.episodes.map((e) => [String(e.subject_model), String(e.scenario_id), Number(e.epoch)] as const);
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] - b[2]));
    expect(keys).toEqual(sorted);
    // messages grouped by episode in that order, seq ascending within each
    let prev = '';
    const seen = new Set<string>();
    let lastSeq = -1;
    for (const m of t.messages) {
      if (m.episode_id !== prev) {
        expect(seen.has(String(m.episode_id))).toBe(false);
        seen.add(String(m.episode_id));
        prev = String(m.episode_id);
        lastSeq = -1;
      }
      expect(Number(m.seq)).toBe(lastSeq + 1);
      lastSeq = Number(m.seq);
    }
    expect([...seen]).toEqual(ids);

    // three scores on every episode; judgments on valid ones only (three judges)
    expect(t.scores).toHaveLength(18 * 3);
    const valid = t.episodes.filter((e) => e.status === 'valid').length;
    expect(t.judgments).toHaveLength(valid * 3);
    // family self-exclusion: judge-lenient shares simfam-careful with sim:careful
    const excluded = t.judgments.filter((j) => j.excluded_self);
    expect(excluded.length).toBeGreaterThan(0);
    expect(excluded.every((j) => j.judge_model === 'sim:judge-lenient' && String(j.episode_id).startsWith('sim:careful/'))).toBe(true);
    // probe mode: one decision row per state and condition (default raw and composed), one answer per probe
    expect(t.probe_decisions).toHaveLength(36);
    expect(t.probe_decisions.filter((x) => x.condition === 'raw')).toHaveLength(18);
    const comp = t.probe_decisions.filter((x) => x.condition === 'composed');
    expect(comp).toHaveLength(18);
    for (const c of comp) expect([c.chosen_action, c.correct, c.option_probs]).toEqual([c.composed_action, c.composed_correct, null]);
    const probesPer = Object.fromEntries(loadScenarios().map((x) => [x.scenario_id, x.probes.length]));
    expect(t.probe_answers.length).toBe(3 * 2 * (probesPer.em_act_a + probesPer.ct_esc_b + probesPer.fc_amb_a));
    const d = t.probe_decisions.find((x) => x.scenario_id === 'fc_amb_a')!;
    expect(d.gold_actions).toEqual(['escalate', 'request_authorization']);
    expect(d.state_id).toMatch(/^fc_amb_a\/[12]$/);
    expect(JSON.parse(String(t.probe_decisions[0].option_probs))).toHaveProperty('escalate');
    expect(s.subjects.map((x) => x.episodes)).toEqual([6, 6, 6]);
    expect(formatSummary(s)[0]).toMatch(/^run full: success, 18 episodes/);
  });

  it('is deterministic: the same config gives the same rows whatever the concurrency', async () => {
    const traces = await tmp();
    await runEvaluation({ config: parseConfig(base({ concurrency: 1, epochs: 1 })), runId: 'c1', traces, ...quiet });
    await runEvaluation({ config: parseConfig(base({ concurrency: 16, epochs: 1 })), runId: 'c16', traces, ...quiet });
    const a = await tables(traces, 'c1');
    const b = await tables(traces, 'c16');
    for (const t of ['episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'probe_decisions']) {
      expect(stable(b[t]), t).toEqual(stable(a[t]));
    }
  });

  it('epochs are independent draws (different request seeds)', async () => {
    const traces = await tmp();
    await runEvaluation({ config: parseConfig(base({ subjects: [{ model: 'sim:hasty' }], judges: [], epochs: 5, scenarios: ['em_act_a'], probes: false })), runId: 'ep', traces, ...quiet });
    const t = await tables(traces, 'ep');
    const shapes = new Set(t.episodes.map((e) => `${e.decision_tool}|${e.log_reads}`));
    expect(shapes.size).toBeGreaterThan(1);
  });

  it('refuses to overwrite a run unless replace', async () => {
    const traces = await tmp();
    const cfg = parseConfig(base({ subjects: [{ model: 'sim:careful' }], judges: [], epochs: 1, scenarios: ['em_act_a'], probes: false }));
    await runEvaluation({ config: cfg, runId: 'once', traces, ...quiet });
    await expect(runEvaluation({ config: cfg, runId: 'once', traces, ...quiet })).rejects.toMatchObject({ code: 'store.runExists', kind: 'usage' });
    const again = await runEvaluation({ config: cfg, runId: 'once', traces, replace: true, ...quiet });
    expect(again.episodes).toBe(1);
  });

  it('removes what a crashed earlier write left in the store before it writes', async () => {
    const traces = await tmp();
    await mkdir(join(traces, '.tmp-crashed-abc123', '.parts'), { recursive: true });
    await writeFile(join(traces, '.tmp-crashed-abc123', '.parts', 'episodes-000000.jsonl'), '{}\n');
    const cfg = parseConfig(base({ subjects: [{ model: 'sim:careful' }], judges: [], epochs: 1, scenarios: ['em_act_a'], probes: false }));
    await runEvaluation({ config: cfg, runId: 'after-crash', traces, ...quiet });
    expect(existsSync(join(traces, '.tmp-crashed-abc123'))).toBe(false);
    expect((await readdir(traces)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('prints plain progress lines when not on a TTY', async () => {
    const traces = await tmp();
    const lines: string[] = [];
    await runEvaluation({
      config: parseConfig(base({ subjects: [{ model: 'sim:careful' }], judges: [], epochs: 1, probes: false })),
      runId: 'lines',
      traces,
      progress: 'lines',
      log: (l) => lines.push(l),
    });
    expect(lines[0]).toBe('standoff run: 0/3 episodes');
    expect(lines.at(-1)).toMatch(/^standoff run: 3\/3 episodes, [\d.]+\/s, eta \d+s, errors 0$/);
  });
});

describe('retries on every sim fault profile', () => {
  // Faulted attempts that finally succeed get the same reply as without faults, so each faulted
  // run must equal the clean run row for row (apart from the model name in ids).
  const scenarios = ['em_act_a', 'fc_amb_a'];
  const runOne = async (model: string, over: Partial<ConfigInput> = {}) => {
    const traces = await tmp();
    const cfg = parseConfig(
      base({ subjects: [{ model, family: 'simfam-careful' }], judges: [{ model: 'sim:judge-strict' }], epochs: 1, scenarios, concurrency: 4, ...over }),
    );
    const s = await runEvaluation({ config: cfg, runId: 'f', traces, ...quiet });
    return { s, t: await tables(traces, 'f') };
  };
  const strip = (rows: Record<string, unknown>[], model: string) =>
    stable(rows).map((r) => JSON.parse(JSON.stringify(r).split(model).join('MODEL')));

  let clean: Awaited<ReturnType<typeof runOne>>;
  const profiles: Array<[string, string, Partial<ConfigInput>?]> = [
    ['429 with retry-after', 'sim:careful+faults=429@first2+retryAfterMs=30'],
    ['500', 'sim:careful+faults=500@first2'],
    ['timeout', 'sim:careful+faults=timeout@first1', { timeouts: { request_ms: 250, log_read_ms: 2000 } }],
  ];
  for (const [label, model, over] of profiles) {
    it(`${label}: retried, same result as without faults`, async () => {
      clean ??= await runOne('sim:careful');
      const faulty = await runOne(model, over);
      expect(faulty.s.status).toBe('success');
      expect(faulty.s.retries).toBeGreaterThan(0);
      expect(faulty.s.byStatus.error).toBe(0);
      for (const t of ['episodes', 'messages', 'scores', 'judgments']) {
        expect(strip(faulty.t[t], model), `${label}: ${t}`).toEqual(strip(clean.t[t], 'sim:careful'));
      }
      // probe answers: malformed/empty faults hit probe requests too; compare only when retried identically
      if (!/malformed/.test(model)) expect(strip(faulty.t.probe_decisions, model)).toEqual(strip(clean.t.probe_decisions, 'sim:careful'));
    });
  }

  it('degenerate replies are not resampled by default: recorded as they came, one attempt each', async () => {
    for (const model of ['sim:careful+faults=malformed@first2', 'sim:careful+faults=empty@first2']) {
      const { s, t } = await runOne(model, { judges: [] });
      expect(s.retries, model).toBe(0);
      expect(t.episodes.every((e) => e.attempts === 1), model).toBe(true);
      expect(t.messages.some((m) => m.discarded === true), model).toBe(false);
    }
    const { t } = await runOne('sim:careful+faults=empty@first2', { judges: [], probes: false });
    expect(t.episodes.map((e) => e.invalid_reason)).toEqual(['no terminal decision: turn 1 was an empty reply (0 log reads)', 'no terminal decision: turn 1 was an empty reply (0 log reads)']);
  });

  it('with retry_degenerate, discarded replies are stored with their attempt and counted', async () => {
    const { s, t } = await runOne('sim:careful+faults=malformed@0.5', { judges: [], probes: false, retry_degenerate: true, retries: { max: 10, base_ms: 1, max_ms: 2 }, epochs: 3 });
    expect(s.retries).toBeGreaterThan(0);
    const discarded = t.messages.filter((m) => m.discarded === true);
    expect(discarded.length).toBeGreaterThan(0);
    for (const e of t.episodes) {
      const mine = t.messages.filter((m) => m.episode_id === e.episode_id).sort((a, b) => Number(a.seq) - Number(b.seq));
      // attempts = 1 + the discarded replies; the rows of one reply are consecutive and share its attempt
      let discardedReplies = 0;
      mine.forEach((m, i) => {
        if (m.discarded === true && !(mine[i - 1]?.discarded === true && mine[i - 1].attempt === m.attempt)) discardedReplies++;
      });
      expect(Number(e.attempts)).toBe(1 + discardedReplies);
      for (const m of mine.filter((x) => x.role === 'assistant')) expect(Number(m.attempt)).toBeGreaterThanOrEqual(1);
    }
  });

  it('the sim exercises the new trace fields: finish_reason on every assistant row, truncated / attempts on every episode', async () => {
    const { t } = await runOne('sim:careful', { judges: [], probes: false });
    const asst = t.messages.filter((m) => m.role === 'assistant');
    expect(asst.every((m) => m.finish_reason === 'tool_calls' && m.discarded === false && m.attempt === 1 && m.original_tool_call_id === null)).toBe(true);
    expect(t.messages.filter((m) => m.role !== 'assistant').every((m) => m.finish_reason === null && m.discarded === null)).toBe(true);
    expect(t.episodes.map((e) => [e.truncated, e.attempts])).toEqual([
      [false, 1],
      [false, 1],
    ]);
  });

  it('sim: a cap below the reply cuts it off (finish_reason=length); +faults=length and +faults=emptyid; +unsupported refuses a parameter once', async () => {
    // the cap: sim:careful's first turn needs more than 16 tokens of reasoning
    const capped = await runOne('sim:careful', { subjects: [{ model: 'sim:careful', max_tokens: 16 }], judges: [], probes: false });
    expect(capped.s.truncated).toBe(2);
    expect(capped.t.episodes.every((e) => e.invalid_reason === 'truncated (finish_reason=length)' && e.truncated === true)).toBe(true);
    expect(capped.t.messages.filter((m) => m.role === 'assistant').every((m) => m.finish_reason === 'length' && m.content === null)).toBe(true);
    const cut = await runOne('sim:careful+faults=length', { judges: [], probes: false });
    expect(cut.s.truncated).toBe(2);
    const ids = await runOne('sim:careful+faults=emptyid', { judges: [], probes: false });
    expect(ids.s.byStatus.valid).toBe(2);
    const calls = ids.t.messages.filter((m) => m.role === 'assistant' && m.tool_name !== null);
    expect(calls.every((m) => /^call_standoff_\d_0$/.test(String(m.tool_call_id)) && m.original_tool_call_id === '')).toBe(true);
    const lines: string[] = [];
    const traces = await tmp();
    const cfg = parseConfig(base({ subjects: [{ model: 'sim:careful+unsupported=max_tokens,temperature' }], judges: [], epochs: 1, scenarios, probes: false, concurrency: 1 }));
    const s = await runEvaluation({ config: cfg, runId: 'u', traces, progress: 'none', log: (l) => lines.push(l) });
    expect(s.byStatus.valid).toBe(2);
    expect(s.adjustments.map((a) => `${a.param} ${a.action}`)).toEqual(['max_tokens sent as max_completion_tokens', 'temperature omitted']);
    expect(lines.filter((l) => l.includes('notice:'))).toHaveLength(2);
  });

  it('honours retry-after: a 429 asking for 400 ms delays the episode by at least that', async () => {
    const { t } = await runOne('sim:careful+faults=429@first1+retryAfterMs=400', { probes: false, judges: [] });
    for (const e of t.episodes) expect(Number(e.latency_ms)).toBeGreaterThanOrEqual(390);
  });

  it('when retries run out the episode is an error (redacted message) and the run goes on', async () => {
    const traces = await tmp();
    const cfg = parseConfig(
      base({ subjects: [{ model: 'sim:careful+faults=500' }, { model: 'sim:thorough' }], judges: [], epochs: 1, scenarios, probes: false, retries: { max: 1, base_ms: 1, max_ms: 2 } }),
    );
    const s = await runEvaluation({ config: cfg, runId: 'err', traces, ...quiet });
    expect(s.status).toBe('error');
    expect(s.byStatus).toEqual({ valid: 2, invalid: 0, error: 2 });
    const t = await tables(traces, 'err');
    const errs = t.episodes.filter((e) => e.status === 'error');
    expect(errs).toHaveLength(2);
    expect(String(errs[0].error)).toMatch(/http 500.*gave up after 2 attempts/);
    // errored episodes carry no scores; the others do
    expect(t.scores.filter((x) => String(x.episode_id).startsWith('sim:careful+')).length).toBe(0);
    expect(t.scores).toHaveLength(2 * 3);
    expect(String(t.runs[0].notes)).toMatch(/2 episode\(s\) ended in error/);
  });

  it('backoff is exponential with jitter and capped; retry-after parses seconds, ms and dates', () => {
    const rng = createRng(1);
    const p = { max: 5, base_ms: 100, max_ms: 1000 };
    for (let n = 0; n < 8; n++) {
      const d = backoffMs(n, p, rng);
      const cap = Math.min(1000, 100 * 2 ** n);
      expect(d).toBeGreaterThanOrEqual(cap * 0.5);
      expect(d).toBeLessThan(cap);
    }
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '150', 'retry-after': '1' }))).toBe(150);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 7_000)).toBe(3000);
    expect(retryAfterMs(new Headers({}))).toBeNull();
  });
});

describe('runCommand', () => {
  it('runs a preset with overrides under the deterministic default run id', async () => {
    const traces = await tmp();
    const s = await runCommand({ preset: 'smoke', subjects: ['sim:careful'], judges: ['none'], traces, ...quiet, handleSignals: false });
    expect(s.runId).toBe('smoke-s20260810');
    expect(s.runId).toBe(defaultRunId({ name: 'smoke', seed: 20260810 }));
    expect(s.episodes).toBe(3);
    expect(s.judgments).toBe(0);
    await expect(runCommand({ preset: 'smoke', subjects: ['sim:careful'], judges: ['none'], traces, ...quiet, handleSignals: false })).rejects.toMatchObject({
      code: 'store.runExists',
    });
  });

  it('rejects unusable combinations with usage errors', async () => {
    const traces = await tmp();
    await expect(runCommand({ preset: 'nope', traces, ...quiet })).rejects.toMatchObject({ code: 'config.unknownPreset', kind: 'usage' });
    await expect(runCommand({ preset: 'smoke', config: 'x.json', traces, ...quiet })).rejects.toMatchObject({ code: 'run.configAndPreset' });
    await expect(runCommand({ preset: 'smoke', subjects: ['gpt-x'], traces, ...quiet })).rejects.toMatchObject({ code: 'config.unknownModel' });
    await expect(runCommand({ resume: 'missing', traces, ...quiet })).rejects.toMatchObject({ code: 'run.noJournal' });
  });
});
