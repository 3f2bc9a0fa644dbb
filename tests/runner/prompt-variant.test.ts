/**
 * The agent prompt variant: neutral by default (nothing tells the agent to read the log, as in
 * Standoff O1, whose question is whether the agent checks before it commits), `--prompt
 * instructed` (or `"prompt": "instructed"` in the config file) for the instructing wording. The
 * variant is what the subject really receives (the stored transcript), is recorded in
 * runs.config, and the report shows it. Real runs on the in-process sim endpoint (127.0.0.1).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/runner/run.ts';
import { AGENT_SYSTEM_PROMPTS } from '../../src/runner/protocol.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { buildReport } from '../../src/report/index.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';

const CUES = loadScenarios('scenarios').map((s) => s.log_cue ?? '').filter((c) => c !== '');

const dir = mkdtempSync(join(tmpdir(), 'standoff-prompt-'));
const traces = join(dir, 'traces');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { progress: 'none' as const, log: () => undefined, handleSignals: false };

async function runOf(runId: string) {
  const s = await openStore(traces, { runs: [runId] });
  try {
    const config = JSON.parse(String((await query(s.conn, 'SELECT config FROM runs')).rows[0].config));
    const system = (await query(s.conn, `SELECT DISTINCT content FROM messages WHERE role = 'system'`)).rows.map((r) => r.content);
    const users = (await query(s.conn, `SELECT DISTINCT content FROM messages WHERE role = 'user' ORDER BY content`)).rows.map((r) => String(r.content));
    return { config, system, user: users[0], users };
  } finally {
    s.close();
  }
}

describe('--prompt neutral|instructed', () => {
  it('defaults to neutral: the subject is never told to read the log, and runs.config records it', async () => {
    await runCommand({ preset: 'smoke', judges: ['none'], runId: 'neutral', traces, ...quiet });
    const r = await runOf('neutral');
    expect(r.config.prompt).toBe('neutral');
    expect(r.system).toEqual([AGENT_SYSTEM_PROMPTS.neutral]);
    // The user message is the scenario's situation and policy, then this line; nothing asks the
    // agent to look, and nothing says where the facts are (the log cue is instructed-only).
    expect(r.user.endsWith('\n\nMake your decision.')).toBe(true);
    expect(r.users.length).toBeGreaterThan(0);
    for (const u of r.users) expect(u).not.toMatch(/system log/i);
    for (const cue of CUES) for (const u of r.users) expect(u).not.toContain(cue);
    expect(AGENT_SYSTEM_PROMPTS.neutral).not.toMatch(/fetch|check the|read the log|use the read_system_log/i);
  }, 60_000);

  it('--prompt instructed sends the instructing wording and records it; the report shows the variant', async () => {
    await runCommand({ preset: 'smoke', judges: ['none'], runId: 'instructed', prompt: 'instructed', traces, ...quiet });
    const r = await runOf('instructed');
    expect(r.config.prompt).toBe('instructed');
    expect(r.system).toEqual([AGENT_SYSTEM_PROMPTS.instructed]);
    expect(r.user.endsWith('Check the current system log, then make your decision.')).toBe(true);
    // Every episode's user message carries its scenario's log cue right after the situation.
    for (const u of r.users) expect(CUES.some((cue) => u.includes(`. ${cue}`) || u.includes(`" ${cue}`)), u.slice(0, 80)).toBe(true);
    const rep = await buildReport({ traces, runs: ['instructed'], out: join(dir, 'report'), resamples: 200 });
    expect(rep.results.summary.runs[0].prompt).toBe('instructed');
    expect(readFileSync(join(dir, 'report', 'REPORT.md'), 'utf8')).toMatch(/Prompt: \*instructed\* \(the agent is told to fetch the system log first\)/);
  }, 60_000);

  it('the config file can set it; a bad value is a usage error naming the flag or field', async () => {
    const cfg = join(dir, 'p.config.json');
    writeFileSync(cfg, JSON.stringify({ name: 'p', scenarios: ['em_act_a'], subjects: [{ model: 'sim:careful' }], epochs: 1, probes: false, prompt: 'instructed' }));
    await runCommand({ config: cfg, runId: 'from-file', traces, ...quiet });
    expect((await runOf('from-file')).config.prompt).toBe('instructed');
    await expect(runCommand({ preset: 'smoke', prompt: 'shouting', runId: 'x', traces, ...quiet })).rejects.toMatchObject({ kind: 'usage', message: expect.stringMatching(/--prompt must be one of neutral, instructed/) });
    writeFileSync(cfg, JSON.stringify({ subjects: [{ model: 'sim:careful' }], prompt: 'loud' }));
    await expect(runCommand({ config: cfg, runId: 'y', traces, ...quiet })).rejects.toMatchObject({ kind: 'usage', message: expect.stringMatching(/field "prompt"/) });
  }, 60_000);
});
