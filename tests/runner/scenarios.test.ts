import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StandoffError } from '../../src/errors.ts';
import { loadScenarios, parseScenario } from '../../src/runner/scenarios.ts';
import {
  AUTHORED_DOMAINS,
  DECISION_TOOLS,
  DECISION_TYPES,
  NOANSWER,
  answerSpace,
  applyDecisionRule,
  correctAnswers,
  enumerateAnswers,
  isComposedCorrect,
  isGoldAction,
  isTargetAction,
  normalizeAnswer,
  type DecisionRule,
  type Probe,
  type Scenario,
} from '../../src/schema/scenario.ts';

const real = loadScenarios('scenarios');
const byId = new Map(real.map((s) => [s.scenario_id, s]));
const rawOf = (id: string): Record<string, any> => JSON.parse(readFileSync(join('scenarios', `${id}.json`), 'utf8'));

describe('the 18 authored scenarios', () => {
  it('load, sorted by id', () => {
    expect(real).toHaveLength(18);
    const ids = real.map((s) => s.scenario_id);
    expect(ids).toEqual([...ids].sort());
  });

  it('form a balanced 3 x 3 x 2 grid', () => {
    for (const d of AUTHORED_DOMAINS)
      for (const t of DECISION_TYPES)
        for (const v of ['a', 'b'] as const) {
          const cell = real.filter((s) => s.domain === d && s.decision_type === t && s.variant === v);
          expect(cell, `${d}/${t}/${v}`).toHaveLength(1);
        }
  });

  it('every probe rule yields the target on the correct answers', () => {
    for (const s of real) {
      expect(applyDecisionRule(s.decision_rule, correctAnswers(s.probes)), s.scenario_id).toBe(s.target);
      expect(isComposedCorrect(s, correctAnswers(s.probes))).toBe(true);
    }
  });

  it('targets follow the decision types and use all four decision tools', () => {
    for (const s of real) {
      if (s.decision_type === 'act') expect(s.target).toBe('issue_statement');
      if (s.decision_type === 'escalate') expect(['escalate', 'request_authorization', 'withdraw']).toContain(s.target);
      if (s.decision_type === 'ambiguous') expect(s.target).toBe(NOANSWER);
    }
    const targets = new Set(real.map((s) => s.target));
    for (const t of DECISION_TOOLS) expect(targets).toContain(t);
    const esc = real.filter((s) => s.decision_type === 'escalate').map((s) => s.target).sort();
    expect(esc).toEqual(['escalate', 'escalate', 'request_authorization', 'request_authorization', 'withdraw', 'withdraw']);
  });

  it('gold sets: [target] when unambiguous; escalate or request_authorization when ambiguous', () => {
    for (const s of real) {
      if (s.target === NOANSWER) {
        expect(s.gold_actions).toEqual(['escalate', 'request_authorization']);
        expect(isTargetAction(s, 'escalate')).toBeNull();
        expect(s.policy).toMatch(/conflict exception/i);
        expect(s.policy).toMatch(/does not determine the action/);
      } else {
        expect(s.gold_actions).toEqual([s.target]);
        expect(isTargetAction(s, s.target)).toBe(true);
      }
      for (const g of s.gold_actions) expect(isGoldAction(s, g)).toBe(true);
    }
  });

  it('the probes decide the action: every scenario has 3-6 probes and a rule with at least two outcomes', () => {
    for (const s of real) {
      expect(s.probes.length).toBeGreaterThanOrEqual(3);
      expect(s.probes.length).toBeLessThanOrEqual(6);
      const outcomes = new Set([...enumerateAnswers(s.probes, s.decision_rule)].map((a) => applyDecisionRule(s.decision_rule, a)));
      expect(outcomes.size, s.scenario_id).toBeGreaterThanOrEqual(2);
    }
    const kinds = new Set(real.flatMap((s) => s.probes.map((p) => p.kind)));
    expect(kinds).toEqual(new Set(['yes_no', 'choice', 'number']));
  });

  it('the situation never names the log: no log line is visible in the prompt', () => {
    for (const s of real) {
      for (const line of s.log.split('\n')) expect(s.situation.includes(line.trim())).toBe(false);
    }
  });
});

describe('rule helpers', () => {
  const probes: Probe[] = [
    { probe_id: 'a', question: 'q', kind: 'yes_no', answer: 'yes' },
    { probe_id: 'c', question: 'q', kind: 'choice', options: ['x', 'y', 'z'], answer: 'y' },
    { probe_id: 'n', question: 'q', kind: 'number', answer: '3' },
  ];
  const rule: DecisionRule = {
    rules: [
      { when: { a: 'no' }, action: 'withdraw' },
      { when: { c: 'x', n: '7' }, action: 'escalate' },
      { when: { n: '3' }, action: 'request_authorization' },
    ],
    default: 'issue_statement',
  };

  it('applyDecisionRule is first-match with a default; missing answers never match', () => {
    expect(applyDecisionRule(rule, { a: 'no', c: 'x', n: '7' })).toBe('withdraw');
    expect(applyDecisionRule(rule, { a: 'yes', c: 'x', n: '7' })).toBe('escalate');
    expect(applyDecisionRule(rule, { a: 'yes', c: 'y', n: '3' })).toBe('request_authorization');
    expect(applyDecisionRule(rule, { a: 'yes', c: 'y', n: '5' })).toBe('issue_statement');
    expect(applyDecisionRule(rule, {})).toBe('issue_statement');
  });

  it('answer spaces: yes/no, the options, and the rule numbers plus one other value', () => {
    expect(answerSpace(probes[0], rule)).toEqual(['yes', 'no']);
    expect(answerSpace(probes[1], rule)).toEqual(['x', 'y', 'z']);
    expect(answerSpace(probes[2], rule)).toEqual(['7', '3', '8']);
    expect([...enumerateAnswers(probes, rule)]).toHaveLength(2 * 3 * 3);
  });

  it('normalizeAnswer maps raw text into the answer space or to undefined', () => {
    expect(normalizeAnswer(probes[0], ' Yes.')).toBe('yes');
    expect(normalizeAnswer(probes[0], 'perhaps')).toBeUndefined();
    expect(normalizeAnswer(probes[1], ' Z ')).toBe('z');
    expect(normalizeAnswer(probes[2], '1,200.50')).toBe('1200.5');
    expect(normalizeAnswer(probes[2], '03')).toBe('3');
    expect(normalizeAnswer(probes[2], 'three')).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Rejections: one per loader rule, each by writing a bad file into a temp dir.
// ---------------------------------------------------------------------------------------------

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function dirWith(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-scen-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  }
  return dir;
}

function rejects(id: string, edit: (s: Record<string, any>) => void, code: string, message?: RegExp): void {
  const s = rawOf(id);
  edit(s);
  const dir = dirWith({ [`${id}.json`]: s });
  let err: unknown;
  try {
    loadScenarios(dir);
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toBeInstanceOf(StandoffError);
  const e = err as StandoffError;
  expect(e.code).toBe(code);
  expect(e.kind).toBe('data');
  expect(e.message).not.toContain('\n');
  expect(e.message.startsWith(join(dir, `${id}.json`) + ': ')).toBe(true);
  if (message) expect(e.message).toMatch(message);
}

describe('loader rejections', () => {
  it('invalid JSON', () => {
    const dir = dirWith({ 'em_act_a.json': '{"scenario_id": ' });
    expect(() => loadScenarios(dir)).toThrow(expect.objectContaining({ code: 'scenario.invalidJson' }));
  });

  it('missing field, with the exact one-line message', () => {
    rejects('em_act_a', (s) => delete s.log, 'scenario.missingField', /: field "log" is required$/);
    rejects('em_act_a', (s) => delete s.probes[1].answer, 'scenario.missingField', /field "probes\[1\]\.answer" is required/);
    rejects('em_act_a', (s) => delete s.decision_rule.default, 'scenario.missingField', /field "decision_rule\.default" is required/);
  });

  it('unknown field', () => rejects('em_act_a', (s) => (s.targte = 'withdraw'), 'scenario.unknownField', /"targte"/));

  it('invalid target', () => rejects('em_act_a', (s) => (s.target = 'call_police'), 'scenario.invalidTarget', /field "target"/));

  it('other schema violations (too few probes)', () =>
    rejects('em_act_a', (s) => (s.probes = s.probes.slice(0, 2)), 'scenario.invalidField', /field "probes"/));

  it('id disagreeing with domain / decision type / variant', () => {
    rejects('em_act_a', (s) => (s.domain = 'clinical_triage'), 'scenario.idMismatch', /"ct_act_a"/);
    rejects('em_act_a', (s) => (s.variant = 'b'), 'scenario.idMismatch', /"em_act_b"/);
    rejects('em_act_a', (s) => (s.domain = 'refund'), 'scenario.idMismatch', /authored scenarios use/);
  });

  it('duplicate id', () => {
    const s = rawOf('em_act_a');
    const dir = dirWith({ 'em_act_a.json': s, 'em_act_a_copy.json': s });
    expect(() => loadScenarios(dir)).toThrow(expect.objectContaining({ code: 'scenario.duplicateId', message: expect.stringMatching(/also used by .*em_act_a\.json/) }));
  });

  it('ambiguous without NOANSWER', () =>
    rejects('em_amb_a', (s) => (s.target = 'escalate'), 'scenario.ambiguousTarget', /must be NOANSWER/));

  it('NOANSWER without ambiguous', () => rejects('em_esc_a', (s) => (s.target = 'NOANSWER'), 'scenario.noAnswerTarget'));

  it('act scenario not targeting issue_statement', () =>
    rejects('em_act_a', (s) => ((s.target = 'escalate'), (s.gold_actions = ['escalate'])), 'scenario.typeTarget'));

  it('gold set without the target, or an ambiguous gold set with issue_statement', () => {
    rejects('em_act_a', (s) => (s.gold_actions = ['withdraw']), 'scenario.goldActions', /must include the target/);
    rejects('em_amb_a', (s) => (s.gold_actions = ['escalate', 'issue_statement']), 'scenario.goldActions', /must not include issue_statement/);
  });

  it('duplicate probe id', () => rejects('em_act_a', (s) => (s.probes[1].probe_id = s.probes[0].probe_id), 'scenario.duplicateProbe'));

  it('choice answer outside its options', () => rejects('em_act_b', (s) => (s.probes[3].answer = 'ozone'), 'scenario.probeAnswer'));

  it('rule naming an undeclared probe', () =>
    rejects('em_act_a', (s) => s.decision_rule.rules.push({ when: { moon_phase: 'yes' }, action: 'withdraw' }), 'scenario.ruleUnknownProbe', /rules\[4\]\.when\.moon_phase/));

  it('rule naming an undeclared answer value', () => {
    rejects('em_act_a', (s) => (s.decision_rule.rules[0].when.unified_command = 'maybe'), 'scenario.ruleUnknownAnswer', /one of yes, no/);
    rejects('em_esc_b', (s) => (s.decision_rule.rules[2].when.declared_level = 'Level 9'), 'scenario.ruleUnknownAnswer');
    rejects('em_act_a', (s) => s.decision_rule.rules.push({ when: { stage_ft: '19.40' }, action: 'withdraw' }), 'scenario.ruleUnknownAnswer', /canonical decimal/);
  });

  it('rule row that can never fire', () =>
    rejects('em_act_a', (s) => s.decision_rule.rules.splice(1, 0, { when: { unified_command: 'yes', official_gauge: 'no' }, action: 'withdraw' }), 'scenario.ruleDeadRow', /rules\[1\]/));

  it('constant rule (the probes decide nothing)', () =>
    rejects('em_act_a', (s) => s.decision_rule.rules.forEach((r: { action: string }) => (r.action = 'issue_statement')), 'scenario.ruleConstant'));

  it('rule whose outcome on the correct answers is not the target', () =>
    rejects('em_act_a', (s) => (s.probes[0].answer = 'yes'), 'scenario.ruleTarget', /gives "escalate" on the correct probe answers/));

  it('answer space too large to enumerate', () =>
    rejects(
      'em_act_a',
      (s) => {
        const opts = ['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8'];
        s.probes = Array.from({ length: 6 }, (_, i) => ({ probe_id: `c${i}`, question: 'q', kind: 'choice', options: opts, answer: 'o1' }));
        s.decision_rule = { rules: [{ when: { c0: 'o2' }, action: 'withdraw' }], default: 'issue_statement' };
      },
      'scenario.answerSpaceTooLarge',
    ));

  it('decisive fact leaking into the situation', () =>
    rejects('em_act_a', (s) => (s.situation += ' ' + s.log.split('\n')[3]), 'scenario.logLeak'));

  it('missing and empty directories', () => {
    expect(() => loadScenarios(join(tmpdir(), 'standoff-no-such-dir-x'))).toThrow(expect.objectContaining({ code: 'scenario.dirMissing', kind: 'usage' }));
    expect(() => loadScenarios(dirWith({}))).toThrow(expect.objectContaining({ code: 'scenario.none' }));
  });

  it('parseScenario accepts text or a parsed object', () => {
    const text = readFileSync('scenarios/fc_esc_a.json', 'utf8');
    const a: Scenario = parseScenario(text, 'scenarios/fc_esc_a.json');
    expect(parseScenario(JSON.parse(text), 'x.json')).toEqual(a);
    expect(a).toEqual(byId.get('fc_esc_a'));
  });
});
