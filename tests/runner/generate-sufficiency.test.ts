/**
 * Probe sufficiency of generated procedures ("Reading Right, Acting Wrong", appendix G): 1,200
 * refund and 1,200 household test states. Each state's action is decided by its four rule facts
 * AND the policy's priority order, which the generator draws per state; grouping states by their
 * probe answers alone compares states under different orders and finds "counterexamples" that are
 * not (80 of 420 refund groups, 71 of 447 household groups at seed 7). Grouped by everything that
 * decides the action (the decision rule, recorded in probe_decisions.decision_rule, and the
 * answers), the states are sufficient, and the check is not vacuous: many groups hold two or more
 * states. Checked on the states directly and through a real store read by `standoff probes`'
 * library (`probesFromStore`: real Parquet, real DuckDB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStates, type Family } from '../../src/runner/generate.ts';
import { probeSufficiency } from '../../src/stats/index.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { probesFromStore } from '../../src/analysis/ci.ts';
import type { EpisodeRow, ProbeAnswerRow, ProbeDecisionRow, RunRow } from '../../src/schema/tables.ts';
import type { Scenario } from '../../src/schema/scenario.ts';

const COUNT = 1200;
const states: Record<Family, Scenario[]> = {
  refund: generateStates({ family: 'refund', seed: 7, count: COUNT, split: 'test' }),
  household: generateStates({ family: 'household', seed: 7, count: COUNT, split: 'test' }),
};
const asProbeStates = (ss: Scenario[], withRule: boolean) =>
  ss.map((s) => ({
    state_id: s.scenario_id,
    gold_actions: s.gold_actions,
    probe_answers: Object.fromEntries(s.probes.map((p) => [p.probe_id, p.answer])),
    ...(withRule ? { context: JSON.stringify(s.decision_rule) } : {}),
  }));

describe.each(['refund', 'household'] as const)('generated %s states (1,200)', (family) => {
  it('are NOT sufficient when grouped by probe answers alone (the priority order differs per state)', () => {
    const r = probeSufficiency(asProbeStates(states[family], false));
    expect(r.sufficient).toBe(false);
    expect(r.counterexamples.length).toBe(family === 'refund' ? 80 : 71);
  });

  it('are sufficient grouped by decision rule and answers, and the check compares many states', () => {
    const r = probeSufficiency(asProbeStates(states[family], true));
    expect(r.states).toBe(COUNT);
    expect(r.sufficient).toBe(true);
    expect(r.vacuous).toBe(false);
    expect(r.groupsWithSeveralStates).toBeGreaterThan(50);
  });
});

describe('through the store (standoff probes)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'standoff-gensuff-'));
    const runId = 'generated';
    const all = [...states.refund, ...states.household];
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
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('standoff probes finds the 2,400 distinct states sufficient, grouped by decision rule and answers (not vacuous)', async () => {
    const r = await probesFromStore({ traces: dir }, { resamples: 200 });
    expect(r.sufficiency).toMatchObject({ sufficient: true, vacuous: false, states: 2 * COUNT, grouped_by: 'decision rule and correct probe answers' });
    expect(r.sufficiency!.groups_with_several_states).toBeGreaterThan(100);
    expect(r.groups[0]).toMatchObject({ states: 2 * COUNT, answers: 2 * COUNT, max_answers_per_state: 1 });
    // One answer per state: the exact interval is the one shown.
    expect(r.groups[0].decision_accuracy.interval.method).toBe('clopper-pearson');
  }, 120_000);
});
