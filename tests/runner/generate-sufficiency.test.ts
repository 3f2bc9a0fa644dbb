/**
 * Probe sufficiency of generated procedures by the paper's criterion ("Reading Right, Acting
 * Wrong", section 2.4, appendices B.4 and G): within a family, states grouped by their correct
 * probe answers ALONE must share a correct action. 1,200 refund and 1,200 household test states
 * are sufficient (a procedure fixes its rule facts and the family's priority order), and the check
 * compares many states. A deliberately broken generator (`priority: 'per-state'`, the old
 * construction: the order drawn per state and never probed) is reported not sufficient, so the
 * check can fail. Checked on the states directly and through a real store read by `standoff
 * probes`' library (`probesFromStore`: real Parquet, real DuckDB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyProcedures, generateStates, verifyFamily, type Family } from '../../src/runner/generate.ts';
import { probeSufficiency } from '../../src/stats/index.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { probesFromStore, sufficiencyText } from '../../src/analysis/ci.ts';
import type { EpisodeRow, ProbeAnswerRow, ProbeDecisionRow, RunRow } from '../../src/schema/tables.ts';
import type { Scenario } from '../../src/schema/scenario.ts';

const COUNT = 1200;
const states: Record<Family, Scenario[]> = {
  refund: generateStates({ family: 'refund', seed: 7, count: COUNT, split: 'test' }),
  household: generateStates({ family: 'household', seed: 7, count: COUNT, split: 'test' }),
};
const broken: Record<Family, Scenario[]> = {
  refund: generateStates({ family: 'refund', seed: 7, count: COUNT, split: 'test', priority: 'per-state' }),
  household: generateStates({ family: 'household', seed: 7, count: COUNT, split: 'test', priority: 'per-state' }),
};
// Probe answers alone: nothing about the rule or its order is passed to the check.
const asProbeStates = (ss: Scenario[]) =>
  ss.map((s) => ({ state_id: s.scenario_id, gold_actions: s.gold_actions, probe_answers: Object.fromEntries(s.probes.map((p) => [p.probe_id, p.answer])), family: s.domain }));

describe.each(['refund', 'household'] as const)('generated %s states (1,200)', (family) => {
  it('are sufficient grouped by probe answers alone, and the check compares many states', () => {
    const r = probeSufficiency(asProbeStates(states[family]));
    expect(r.states).toBe(COUNT);
    expect(r.counterexamples).toEqual([]);
    expect(r.sufficient).toBe(true);
    expect(r.vacuous).toBe(false);
    expect(r.groupsWithSeveralStates).toBeGreaterThan(100);
  });

  it('the broken generator (per-state random priority order, unprobed) is reported NOT sufficient', () => {
    const r = probeSufficiency(asProbeStates(broken[family]));
    expect(r.sufficient).toBe(false);
    expect(r.counterexamples.length).toBe(family === 'refund' ? 80 : 71);
    // Each counterexample: the same answers, different gold actions (different orders).
    for (const c of r.counterexamples) expect(new Set(c.goldSets.map((g) => g.join('/'))).size).toBeGreaterThan(1);
  });

  it('every procedure of the family and every assignment of its rule facts was enumerated', () => {
    const v = verifyFamily(family);
    expect(v).toEqual({ procedures: 35, assignments: 35 * 16 });
    expect(familyProcedures(family).map((p) => p.rules.length)).toEqual(Array(35).fill(4));
  });
});

async function writeStore(dir: string, all: Scenario[]): Promise<void> {
  const runId = 'generated';
  const run: RunRow = {
    run_id: runId, created_at: '2026-01-01T00:00:00.000Z', source: 'standoff', suite: 'standoff-generated', status: 'success',
    config: '{}', seed: 7, epochs: 1, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null,
  };
  const episodes: EpisodeRow[] = all.map((s) => ({
    run_id: runId, episode_id: `m/${s.scenario_id}/1`, subject_model: 'm', subject_family: null, scenario_id: s.scenario_id, domain: s.domain,
    decision_type: s.decision_type, variant: s.variant, epoch: 1, target: s.target, status: 'valid', invalid_reason: null, decision_tool: s.target,
    decision_args: '{}', gathered_evidence: true, log_reads: 1, turns: 2, input_tokens: null, output_tokens: null, latency_ms: null, started_at: null, error: null, metadata: null,
  }));
  // A subject that reads every fact right and decides right: the rows the runner writes for it.
  const probe_answers: ProbeAnswerRow[] = all.flatMap((s) =>
    s.probes.map((p) => ({ run_id: runId, state_id: `${s.scenario_id}/1`, subject_model: 'm', scenario_id: s.scenario_id, epoch: 1, probe_id: p.probe_id, question: p.question, expected: p.answer, answer: p.answer, correct: true })),
  );
  const probe_decisions: ProbeDecisionRow[] = all.map((s) => ({
    run_id: runId, state_id: `${s.scenario_id}/1`, subject_model: 'm', scenario_id: s.scenario_id, epoch: 1, chosen_action: s.target,
    gold_actions: [...s.gold_actions], correct: true, composed_action: s.target, composed_correct: true, decision_rule: JSON.stringify(s.decision_rule), option_probs: null,
  }));
  await writeRun(dir, { run, episodes, probe_answers, probe_decisions });
}

describe('through the store (standoff probes)', () => {
  let dir: string;
  let bad: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'standoff-gensuff-'));
    bad = mkdtempSync(join(tmpdir(), 'standoff-gensuff-bad-'));
    await writeStore(dir, [...states.refund, ...states.household]);
    await writeStore(bad, [...broken.refund, ...broken.household]);
  }, 120_000);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(bad, { recursive: true, force: true });
  });

  it('standoff probes finds the 2,400 distinct states sufficient, grouped by family and answers alone (not vacuous)', async () => {
    const r = await probesFromStore({ traces: dir }, { resamples: 200 });
    expect(r.sufficiency).toMatchObject({ sufficient: true, vacuous: false, states: 2 * COUNT, grouped_by: 'family and correct probe answers', counterexample_states: 0 });
    expect(r.sufficiency!.groups_with_several_states).toBeGreaterThan(100);
    expect(r.groups[0]).toMatchObject({ states: 2 * COUNT, answers: 2 * COUNT, max_answers_per_state: 1 });
    // One answer per state: the exact interval is the one shown.
    expect(r.groups[0].decision_accuracy.interval.method).toBe('clopper-pearson');
  }, 120_000);

  it('the broken generator is NOT sufficient through the store, and the text draws no conclusion about the decision', async () => {
    const r = await probesFromStore({ traces: bad }, { resamples: 200 });
    const suf = r.sufficiency!;
    expect(suf).toMatchObject({ sufficient: false, vacuous: false, states: 2 * COUNT, grouped_by: 'family and correct probe answers' });
    expect(suf.counterexamples.length).toBe(80 + 71);
    expect(suf.counterexample_states).toBe(suf.counterexamples.reduce((a, c) => a + c.states.length, 0));
    const text = sufficiencyText(suf, { strong: (t) => `**${t}**`, quote: (t) => `\`${t}\``, text: (t) => t });
    expect(text).toMatch(/^\*\*Not sufficient\*\*: 2,400 distinct states compared, grouped by family and correct probe answers/);
    expect(text).toContain(`151 counterexample groups (${suf.counterexample_states.toLocaleString('en-US')} states)`);
    expect(text).toContain('and 148 more groups');
    expect(text).not.toContain('points at the decision');
    expect(text).toContain('cannot be read as a decision error');
    const ok = sufficiencyText((await probesFromStore({ traces: dir }, { resamples: 200 })).sufficiency!, { strong: (t) => t, quote: (t) => t, text: (t) => t });
    expect(ok).toContain('points at the decision');
  }, 120_000);
});
