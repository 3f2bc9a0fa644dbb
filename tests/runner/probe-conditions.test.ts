/**
 * The composition ladder in the runner ("Reading Right, Acting Wrong" section 6.1): `--probe-
 * conditions` parsing and its usage errors (exit 2 from the real CLI), runs against the in-process
 * sim endpoint (real HTTP on 127.0.0.1) with every condition and with raw alone, the facts block
 * the sim reads back, and the config hash that does not move for the default.
 */
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { parseConfig, type ConfigInput } from '../../src/runner/config.ts';
import { configHash, runEvaluation } from '../../src/runner/run.ts';
import { buildShownFactsDecisionMessages, parseProbeConditions, parseShownFacts } from '../../src/runner/probe-conditions.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';
import { applyDecisionRule } from '../../src/schema/scenario.ts';
import { loadProbeLadder } from '../../src/analysis/probe-ladder.ts';
import { probesFromStore } from '../../src/analysis/ci.ts';
import { runCli } from '../helpers/cli.ts';

const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'standoff-ladder-run-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const base = (over: Partial<ConfigInput> = {}): ConfigInput => ({
  name: 't',
  subjects: [{ model: 'sim:hasty' }, { model: 'sim:thorough' }],
  judges: [],
  epochs: 2,
  concurrency: 8,
  seed: 5,
  retries: { max: 2, base_ms: 1, max_ms: 10 },
  timeouts: { request_ms: 5_000, log_read_ms: 2_000 },
  ...over,
});
const quiet = { progress: 'none' as const, log: () => undefined };

async function decisions(traces: string, runId: string) {
  const s = await openStore(traces, { runs: [runId] });
  try {
    return (await query(s.conn, `SELECT * FROM probe_decisions ORDER BY subject_model, state_id, condition`)).rows;
  } finally {
    s.close();
  }
}

describe('--probe-conditions', () => {
  it('parses a list into ladder order, drops repeats, and refuses unknown names or a list without raw', () => {
    expect(parseProbeConditions('facts, raw,composed,raw')).toEqual(['raw', 'facts', 'composed']);
    expect(parseProbeConditions(['raw'])).toEqual(['raw']);
    expect(() => parseProbeConditions('raw,own_answers')).toThrow(/unknown condition "own_answers" \(choose from raw, own-answers, facts, composed\)/);
    expect(() => parseProbeConditions('own-answers,facts')).toThrow(/must include raw/);
    expect(() => parseProbeConditions(' , ')).toThrow(/needs at least raw/);
    for (const bad of ['raw,own_answers', 'facts', '']) {
      try {
        parseProbeConditions(bad);
      } catch (e) {
        expect(e).toMatchObject({ kind: 'usage' });
      }
    }
  });

  it('the CLI exits 2 with one line on a bad list, before anything is written', async () => {
    const traces = await tmp();
    for (const bad of ['raw,bogus', 'own-answers']) {
      const r = runCli(['run', '--preset', 'smoke', '--traces', traces, '--progress', 'none', '--probe-conditions', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/--probe-conditions/);
    }
    expect(readdirSync(traces)).toEqual([]);
  });

  it('the facts block round-trips through the sim reader, unanswered probes shown as (no answer)', () => {
    const s = loadScenarios().find((x) => x.probes.length >= 2)!;
    const [p0, p1] = s.probes;
    const msgs = buildShownFactsDecisionMessages(s, 'own-answers', { [p0.probe_id]: p0.answer });
    const text = String(msgs[1].content);
    const shown = parseShownFacts(text.slice(0, text.lastIndexOf('\nQuestion: ')))!;
    expect(shown.condition).toBe('own-answers');
    expect(shown.answers.get(p0.question.trim())).toBe(p0.answer);
    expect(shown.answers.get(p1.question.trim())).toBeNull();
    expect(parseShownFacts('Situation:\nno block here')).toBeNull();
  });

  it('the default leaves the config hash as it was; other conditions change it', () => {
    const ids = ['em_act_a'];
    const plain = configHash(parseConfig(base()), ids);
    expect(configHash(parseConfig(base({ probe_conditions: ['composed', 'raw'] })), ids)).toBe(plain);
    expect(configHash(parseConfig(base({ probe_conditions: ['raw', 'facts'] })), ids)).not.toBe(plain);
  });
});

describe('runs with the ladder on the sim endpoint', () => {
  it('every condition: one row per subject, state and condition; the sim follows the facts shown', async () => {
    const traces = await tmp();
    // Six epochs: 72 non-ambiguous answers per subject and condition, so the facts step's gain for
    // hasty (about +19 pp at 10 epochs) is not lost in the draw of a few states.
    const cfg = parseConfig(base({ probe_conditions: ['raw', 'own-answers', 'facts', 'composed'], epochs: 6 }));
    const s = await runEvaluation({ config: cfg, runId: 'all', traces, ...quiet });
    expect(s.status).toBe('success');
    const rows = await decisions(traces, 'all');
    const states = 2 * 18 * 6;
    for (const c of ['raw', 'own-answers', 'facts', 'composed']) expect(rows.filter((r) => r.condition === c), c).toHaveLength(states);
    // The run's summary counts the raw decision only.
    expect(s.subjects.reduce((a, x) => a + x.probe_states, 0)).toBe(2 * 12 * 6);
    const byScenario = new Map(loadScenarios().map((x) => [x.scenario_id, x]));
    for (const r of rows) {
      expect(r.composed_action).toBe(rows.find((x) => x.state_id === r.state_id && x.subject_model === r.subject_model && x.condition === 'raw')!.composed_action);
      if (r.condition === 'composed') expect([r.chosen_action, r.correct, r.option_probs]).toEqual([r.composed_action, r.composed_correct, null]);
    }
    // With the correct facts shown, the sim follows the rule on them: for thorough (slip 0.1 x its raw rate), nearly always right.
    const facts = rows.filter((r) => r.condition === 'facts' && r.subject_model === 'sim:thorough' && byScenario.get(String(r.scenario_id))!.target !== 'NOANSWER');
    const right = facts.filter((r) => r.chosen_action === applyDecisionRule(byScenario.get(String(r.scenario_id))!.decision_rule, Object.fromEntries(byScenario.get(String(r.scenario_id))!.probes.map((p) => [p.probe_id, p.answer])))).length;
    expect(right / facts.length).toBeGreaterThan(0.9);
    const s2 = await openStore(traces);
    try {
      const l = await loadProbeLadder(async (sql) => (await query(s2.conn, sql)).rows, { level: 0.95, seed: 1, resamples: 500 });
      expect(l.conditions_run).toEqual(['raw', 'own-answers', 'facts', 'composed']);
      for (const sub of l.subjects) {
        expect(sub.differences.map((d) => `${d.from}->${d.to}`)).toEqual(['raw->own-answers', 'own-answers->facts', 'facts->composed']);
        const [raw, , facts] = sub.steps.map((x) => x.accuracy!.rate!);
        // The correct facts shown cut each sim subject's error rate (hasty's raw accuracy is far from 1).
        if (sub.subject === 'sim:hasty') expect(facts).toBeGreaterThan(raw + 0.1);
        else expect(facts).toBeGreaterThanOrEqual(raw);
      }
    } finally {
      s2.close();
    }
  });

  it('raw alone: no composed rows, composed columns null (not measured), and the later steps are not run', async () => {
    const traces = await tmp();
    const cfg = parseConfig(base({ subjects: [{ model: 'sim:careful' }], epochs: 1, probe_conditions: ['raw'] }));
    await runEvaluation({ config: cfg, runId: 'raw', traces, ...quiet });
    const rows = await decisions(traces, 'raw');
    expect(rows).toHaveLength(18);
    expect(rows.every((r) => r.condition === 'raw' && r.composed_action === null && r.composed_correct === null)).toBe(true);
    const r = await probesFromStore({ traces }, { resamples: 200 });
    expect(r.groups[0].composed).toBeNull();
    expect(r.ladder.conditions_run).toEqual(['raw']);
    expect(r.ladder.subjects[0].steps.map((x) => [x.condition, x.run, x.accuracy])).toEqual([
      ['raw', true, r.ladder.subjects[0].steps[0].accuracy],
      ['own-answers', false, null],
      ['facts', false, null],
      ['composed', false, null],
    ]);
    expect(r.ladder.subjects[0].differences).toEqual([]);
    const json = JSON.parse(runCli(['probes', '--traces', traces, '--resamples', '200', '--format', 'json']).stdout);
    expect(json.ladder.conditions_run).toEqual(['raw']);
    expect(json.ladder.subjects[0].steps[3]).toEqual({ condition: 'composed', run: false, accuracy: null, states: 0 });
    const text = runCli(['probes', '--traces', traces, '--resamples', '200']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/sim:careful: raw \d+\.\d% \(\d+\/12\) \[[^\]]+\] \| own-answers not run \| facts not run \| composed not run/);
  });
});

describe('the sim reads the facts block', () => {
  it('follows the rule on the facts shown: correct facts give the action; uncaught wrong answers lead it astray; deterministic', async () => {
    const { buildScenarioIndex, requestKey, simReply } = await import('../../src/runner/sim/behavior.ts');
    const { parseSimModel } = await import('../../src/runner/sim/profiles.ts');
    const scenarios = loadScenarios();
    const index = buildScenarioIndex(scenarios);
    const reply = (modelName: string, s: (typeof scenarios)[number], condition: 'own-answers' | 'facts', answers: Record<string, string>, seed: number) => {
      const model = parseSimModel(modelName);
      const body = { model: modelName, messages: buildShownFactsDecisionMessages(s, condition, answers), seed };
      return simReply({ seed: 3, model, body, index, requestKey: requestKey(3, model, body) });
    };
    let astray = 0;
    let wrongRule = 0;
    for (const s of scenarios.filter((x) => x.target !== 'NOANSWER')) {
      const gold = Object.fromEntries(s.probes.map((p) => [p.probe_id, p.answer]));
      for (let seed = 0; seed < 5; seed++) {
        const r = reply('sim:hasty+factsErrorFactor=0', s, 'facts', gold, seed);
        expect(r.mode).toBe('probe_decision');
        expect(r.debug).toMatchObject({ condition: 'facts', chosen: s.target });
        expect(reply('sim:hasty+factsErrorFactor=0', s, 'facts', gold, seed).content).toBe(r.content);
      }
      // Every probe answered wrongly (yes/no flipped), never re-checked, never slipping: the sim follows the rule on them.
      const flipped = Object.fromEntries(s.probes.map((p) => [p.probe_id, p.kind === 'yes_no' ? (p.answer === 'yes' ? 'no' : 'yes') : p.answer]));
      const ruled = applyDecisionRule(s.decision_rule, flipped);
      const r = reply('sim:careful+ownAnswersErrorFactor=0+recheckShownAnswers=0', s, 'own-answers', flipped, 1);
      if (ruled !== 'NOANSWER') {
        expect(r.debug).toMatchObject({ condition: 'own-answers', chosen: ruled });
        if (ruled !== s.target) wrongRule++;
      }
      if ((r.debug as { chosen: string }).chosen !== s.target) astray++;
      // With every wrong answer caught on re-reading, it is right again.
      expect(reply('sim:careful+ownAnswersErrorFactor=0+recheckShownAnswers=1', s, 'own-answers', flipped, 1).debug).toMatchObject({ chosen: s.target });
    }
    expect(wrongRule).toBeGreaterThan(0);
    expect(astray).toBeGreaterThanOrEqual(wrongRule);
  });
});
