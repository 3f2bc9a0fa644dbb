/**
 * No cue in the neutral condition (issue 24, point 7). The sentence that says where the decisive
 * facts are ("... are in the system log.") is a scenario's `log_cue`, not part of its situation:
 * the neutral prompt never shows it, the instructed prompt appends it to the situation. Checked
 * on every authored scenario and on generated states of each family, with the actual sentences
 * that were moved; the loader rejects a situation that still points at the log; the state
 * manifest covers the field.
 */
import { describe, expect, it } from 'vitest';
import { agentSituation, buildAgentMessages } from '../../src/runner/protocol.ts';
import { LOG_CUE_PATTERN, loadScenarios, parseScenario } from '../../src/runner/scenarios.ts';
import { generateStates, type Family } from '../../src/runner/generate.ts';
import { buildStateManifest } from '../../src/runner/manifest.ts';
import type { Scenario } from '../../src/schema/scenario.ts';

const text = (s: Scenario, variant: 'neutral' | 'instructed') =>
  buildAgentMessages(s, variant)
    .map((m) => String(m.content))
    .join('\n');

/** The sentences moved out of the 18 authored situations (as they stood before the move). */
const MOVED_AUTHORED = [
  'The allergy record and the latest labs are in the system log.',
  'Timing, imaging and bed status are in the system log.',
  'The schedule and both allergy records are in the system log.',
  'The request status and code-status documentation are in the system log.',
  'Active orders and the weight history are in the system log.',
  'Acceptance, bed status and the latest observations are in the system log.',
  'Current gauge data and the incident command status are in the system log.',
  "The hazmat team's confirmation, the plume model run and the jurisdiction check are in the system log.",
  'The two surge products and their issue times are in the system log.',
  'Source status and the latest air monitoring are in the system log.',
  'The perimeter mapping and the incident command status are in the system log.',
  "The dam operator's status entries are in the system log.",
  'Screening, vendor-master and instruction status are in the system log.',
  'The alert history and payment status are in the system log.',
  'Payment status and both ownership sources are in the system log.',
  'The instruction status and both PEP screening results are in the system log.',
  'Screening, payment history and the vendor-master change record are in the system log.',
  'Approvals, screening and any messages on the payment are in the system log.',
];
/** The sentences moved out of the generated families' situations. */
const MOVED_GENERATED: Record<Family, string> = {
  refund: 'The order, delivery, account and return records are in the system log.',
  household: 'The household calendar, sensors and app records are in the system log.',
};

function checkState(s: Scenario, cue: string): void {
  expect(s.log_cue, s.scenario_id).toBe(cue);
  expect(s.situation, s.scenario_id).not.toMatch(LOG_CUE_PATTERN);
  const neutral = text(s, 'neutral');
  const instructed = text(s, 'instructed');
  expect(neutral, s.scenario_id).not.toContain(cue);
  // Nothing else in the neutral user message points at the log either (the system prompt names
  // the read_system_log tool, as the tool list does).
  expect(String(buildAgentMessages(s, 'neutral')[1].content), s.scenario_id).not.toMatch(/system log|the log\b/i);
  expect(instructed, s.scenario_id).toContain(cue);
  expect(agentSituation(s, 'instructed')).toBe(`${s.situation.trim()} ${cue}`);
  expect(agentSituation(s, 'neutral')).toBe(s.situation.trim());
}

describe('no log cue in the neutral prompt', () => {
  const authored = loadScenarios('scenarios');

  it('every authored scenario: the moved sentence is its log_cue, shown by instructed only', () => {
    expect(authored).toHaveLength(18);
    const cues = authored.map((s) => s.log_cue);
    expect([...cues].sort()).toEqual([...MOVED_AUTHORED].sort());
    for (const s of authored) checkState(s, s.log_cue!);
    // Grep-level: no moved sentence anywhere in any neutral prompt; each in exactly one instructed one.
    const neutralAll = authored.map((s) => text(s, 'neutral')).join('\n');
    const instructedAll = authored.map((s) => text(s, 'instructed')).join('\n');
    for (const cue of MOVED_AUTHORED) {
      expect(neutralAll).not.toContain(cue);
      expect(instructedAll.split(cue).length - 1, cue).toBeGreaterThanOrEqual(1);
    }
    expect(neutralAll).not.toMatch(/are in the system log/);
  });

  for (const family of ['refund', 'household'] as const) {
    it(`generated ${family} states (dev and test): the same`, () => {
      for (const split of ['dev', 'test'] as const) {
        const states = generateStates({ family, split, seed: 11, count: 40 });
        for (const s of states) checkState(s, MOVED_GENERATED[family]);
        expect(states.map((s) => text(s, 'neutral')).join('\n')).not.toMatch(/in the system log/);
      }
    });
  }

  it('a scenario without log_cue gets the same prompt in both variants apart from the instructions', () => {
    const s = { ...authored[0], log_cue: undefined };
    expect(agentSituation(s, 'instructed')).toBe(s.situation.trim());
  });

  it('the loader rejects a situation that still points at the log (scenario.cueInSituation)', () => {
    const raw = JSON.parse(JSON.stringify(authored.find((s) => s.scenario_id === 'em_act_a')));
    raw.situation = `${raw.situation} ${raw.log_cue}`;
    expect(() => parseScenario(raw, 'scenarios/em_act_a.json')).toThrow(
      'scenarios/em_act_a.json: field "situation" points at the log ("Current gauge data and the incident command status are in the system log."); move that sentence to field "log_cue"',
    );
    raw.situation = `${authored[0].situation} Check the log first.`;
    expect(() => parseScenario(raw, 'x.json')).toThrow(/cue|points at the log/);
    try {
      parseScenario(raw, 'x.json');
    } catch (e) {
      expect((e as { code?: string }).code).toBe('scenario.cueInSituation');
    }
  });

  it('the state manifest covers log_cue: editing it changes the state hash and the root', () => {
    const base = buildStateManifest(authored);
    const edited = authored.map((s) => (s.scenario_id === 'fc_act_a' ? { ...s, log_cue: 'Screening status is in the system log.' } : s));
    const after = buildStateManifest(edited);
    expect(after.states.fc_act_a).not.toBe(base.states.fc_act_a);
    expect(after.root).not.toBe(base.root);
    expect(Object.keys(after.states).filter((id) => after.states[id] !== base.states[id])).toEqual(['fc_act_a']);
  });
});
