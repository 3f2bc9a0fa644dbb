/**
 * Hash-sealed states (issue 24, point 2): every run records a manifest of its states' canonical
 * content; config_hash covers it; `standoff manifest DIR` prints it; `validate --states DIR` names
 * the states that differ; `--resume` refuses a state whose content changed since the run began.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { parseConfig, type ConfigInput } from '../../src/runner/config.ts';
import { runCommand, runEvaluation } from '../../src/runner/run.ts';
import { buildStateManifest, canonicalJson, loadStateManifest } from '../../src/runner/manifest.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';

let work: string;
const states = () => join(work, 'states');
const editSituation = (dir: string, id: string, suffix: string) => {
  const f = join(dir, `${id}.json`);
  const s = JSON.parse(readFileSync(f, 'utf8'));
  s.situation = `${s.situation}${suffix}`;
  writeFileSync(f, JSON.stringify(s, null, 2));
};
const config = (dir: string, name = 'sealed'): ConfigInput => ({
  name,
  scenarios_dir: dir,
  scenarios: ['em_act_a', 'ct_esc_a', 'fc_amb_a'],
  subjects: [{ model: 'sim:careful' }],
  judges: [{ model: 'sim:judge-strict' }],
  epochs: 1,
  seed: 7,
  probes: false,
});
const recorded = async (traces: string, runId: string) => {
  const s = await openStore(traces, { runs: [runId] });
  try {
    return JSON.parse(String((await query(s.conn, 'SELECT config FROM runs WHERE run_id = $1', [runId])).rows[0].config));
  } finally {
    s.close();
  }
};
const json = (args: string[]) => {
  const r = runCli([...args, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'standoff-manifest-'));
  cpSync(join(ROOT, 'scenarios'), states(), { recursive: true });
});

describe('state manifest', () => {
  it('is SHA-256 of each canonical state and a root over them, printed by standoff manifest; reformatting keeps it, an edit changes it', () => {
    const m = json(['manifest', join(ROOT, 'scenarios')]);
    const scenarios = loadScenarios(join(ROOT, 'scenarios'));
    expect(Object.keys(m.states)).toHaveLength(scenarios.length);
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    for (const s of scenarios) expect(m.states[s.scenario_id]).toBe(sha(canonicalJson(s)));
    expect(m.root).toBe(sha(Object.keys(m.states).sort().map((id) => `${id} ${m.states[id]}\n`).join('')));
    // reformatting (indentation) changes no hash; editing a situation changes that state and the root
    const copy = join(work, 'copy');
    cpSync(join(ROOT, 'scenarios'), copy, { recursive: true });
    const f = join(copy, 'em_act_a.json');
    writeFileSync(f, JSON.stringify(JSON.parse(readFileSync(f, 'utf8')), null, 8));
    expect(loadStateManifest(copy)).toEqual(m);
    editSituation(copy, 'em_act_a', ' Edited.');
    const edited = loadStateManifest(copy);
    expect(edited.root).not.toBe(m.root);
    expect(Object.keys(m.states).filter((id) => edited.states[id] !== m.states[id])).toEqual(['em_act_a']);
    const text = runCli(['manifest', copy]);
    expect(text.stdout.split('\n')[0]).toBe(`root ${edited.root} (sha256 over ${scenarios.length} states, json-sorted-keys/v1)`);
  });

  it('a run records its manifest (the states it used) and config_hash covers it; validate --states names the states that differ', async () => {
    const traces = join(work, 't');
    await runEvaluation({ config: parseConfig(config(states())), runId: 'sealed-a', traces, progress: 'none', log: () => undefined });
    const a = await recorded(traces, 'sealed-a');
    const used = loadScenarios(states()).filter((s) => ['em_act_a', 'ct_esc_a', 'fc_amb_a'].includes(s.scenario_id));
    expect(a.state_manifest).toEqual(buildStateManifest(used));
    const ok = runCli(['validate', '--traces', traces, '--run', 'sealed-a', '--states', states()]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`ok   state_manifest: 3 state(s) in ${states()} match the run's manifest (root ${a.state_manifest.root})`);
    // the run table shows the root
    const out = join(work, 'report');
    expect(runCli(['report', 'build', '--traces', traces, '--out', out, '--resamples', '100']).code).toBe(0);
    expect(readFileSync(join(out, 'REPORT.md'), 'utf8')).toContain(`\`${a.state_manifest.root.slice(0, 16)}\``);

    editSituation(states(), 'ct_esc_a', ' The ward clerk has the rest.');
    const bad = runCli(['validate', '--traces', traces, '--run', 'sealed-a', '--states', states()]);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toMatch(/FAIL state_manifest: .* differs from the run's manifest \(root [0-9a-f]{16}\): 1 changed \(ct_esc_a\)/);
    // same config, edited state: another config_hash
    await runEvaluation({ config: parseConfig(config(states())), runId: 'sealed-b', traces, progress: 'none', log: () => undefined });
    const b = await recorded(traces, 'sealed-b');
    expect(b.config_hash).not.toBe(a.config_hash);
    expect(b.state_manifest.root).not.toBe(a.state_manifest.root);
  }, 120_000);

  it('--resume refuses when a state changed since the run began, and names it', async () => {
    const dir = join(work, 'resume-states');
    cpSync(join(ROOT, 'scenarios'), dir, { recursive: true });
    const traces = join(work, 'resume');
    const ac = new AbortController();
    ac.abort();
    await expect(
      runEvaluation({ config: parseConfig(config(dir, 'halted')), runId: 'halted-s7', traces, progress: 'none', log: () => undefined, signal: ac.signal }),
    ).rejects.toMatchObject({ code: 'run.interrupted' });
    editSituation(dir, 'fc_amb_a', ' Edited after the start.');
    await expect(runCommand({ resume: 'halted-s7', traces, progress: 'none', handleSignals: false })).rejects.toMatchObject({
      code: 'run.statesChanged',
      kind: 'usage',
      message: expect.stringContaining('1 changed (fc_amb_a)'),
    });
  });
});
