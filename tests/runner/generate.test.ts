import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEV_SEED_RANGE,
  FAMILIES,
  TEST_SEED_RANGE,
  generateState,
  generateStates,
  runGenerate,
  stateSeeds,
  verifySufficiency,
  writeGeneratedStates,
  type Family,
} from '../../src/runner/generate.ts';
import { loadScenarios, parseScenario } from '../../src/runner/scenarios.ts';
import { DECISION_TOOLS, applyDecisionRule, correctAnswers, type Scenario } from '../../src/schema/scenario.ts';

const FAMS: Family[] = ['refund', 'household'];
const content = (s: Scenario) => JSON.stringify([s.policy, s.situation, s.log, s.probes, s.decision_rule, s.target]);

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'standoff-gen-'));
  dirs.push(d);
  return d;
};

describe.each(FAMS)('generator: %s', (family) => {
  const test = generateStates({ family, seed: 11, count: 300, split: 'test' });
  const dev = generateStates({ family, seed: 11, count: 300, split: 'dev' });

  it('is deterministic: same (family, seed, split, count) gives identical states', () => {
    expect(generateStates({ family, seed: 11, count: 300, split: 'test' })).toEqual(test);
    // A shorter run is a prefix of a longer one.
    expect(generateStates({ family, seed: 11, count: 20, split: 'test' })).toEqual(test.slice(0, 20));
    const other = generateStates({ family, seed: 12, count: 300, split: 'test' });
    expect(other.map((s) => s.scenario_id)).not.toEqual(test.map((s) => s.scenario_id));
  });

  it('keeps dev and test disjoint: state-seed ranges, ids and content', () => {
    for (const s of test) {
      expect(s.generated!.state_seed).toBeGreaterThanOrEqual(TEST_SEED_RANGE[0]);
      expect(s.generated!.state_seed).toBeLessThanOrEqual(TEST_SEED_RANGE[1]);
      expect(s.scenario_id).toMatch(new RegExp(`^${family === 'refund' ? 'rf' : 'hh'}_test_[0-9a-f]{8}$`));
    }
    for (const s of dev) {
      expect(s.generated!.state_seed).toBeLessThanOrEqual(DEV_SEED_RANGE[1]);
      expect(s.scenario_id).toMatch(/_dev_/);
    }
    // Dev from several run seeds vs test: no shared state seed and no repeated state content.
    const devMore = [...dev, ...generateStates({ family, seed: 12, count: 300, split: 'dev' })];
    const devSeeds = new Set(devMore.map((s) => s.generated!.state_seed));
    const devContent = new Set(devMore.map(content));
    for (const s of test) {
      expect(devSeeds.has(s.generated!.state_seed)).toBe(false);
      expect(devContent.has(content(s))).toBe(false);
    }
    // No repeats inside a run either.
    expect(new Set(test.map((s) => s.scenario_id)).size).toBe(test.length);
    expect(new Set(test.map(content)).size).toBe(test.length);
  });

  it('states are sufficient by construction: enumerating all 16 rule-fact assignments', () => {
    for (const s of test) {
      expect(s.probes).toHaveLength(4);
      expect(s.probes.map((p) => p.probe_id)).toEqual(s.generated!.rule_facts);
      const outcomes = new Map<string, string>();
      for (let bits = 0; bits < 16; bits++) {
        const answers = Object.fromEntries(s.probes.map((p, i) => [p.probe_id, bits & (1 << i) ? 'yes' : 'no']));
        outcomes.set(JSON.stringify(answers), applyDecisionRule(s.decision_rule, answers));
      }
      expect(outcomes.size).toBe(16);
      // Every rule fact matters somewhere; at least two actions are reachable; the target follows.
      const acts = [...outcomes.values()];
      expect(new Set(acts).size).toBeGreaterThanOrEqual(2);
      s.probes.forEach((_, i) => {
        const flips = Array.from({ length: 16 }, (_, bits) => acts[bits] !== acts[bits ^ (1 << i)]);
        expect(flips.some(Boolean)).toBe(true);
      });
      expect(applyDecisionRule(s.decision_rule, correctAnswers(s.probes))).toBe(s.target);
      expect(s.gold_actions).toEqual([s.target]);
    }
  });

  it('verifySufficiency agrees table and procedure on all 16 assignments', () => {
    const spec = FAMILIES[family];
    const report = verifySufficiency({ family, rules: spec.rules.slice(0, 4) });
    expect(report.assignments).toBe(16);
    expect(report.relevant).toEqual([true, true, true, true]);
  });

  it('has four distractor facts, absent from the policy and the probes', () => {
    for (const s of test.slice(0, 50)) {
      const g = s.generated!;
      expect(new Set(g.distractor_facts).size).toBe(4);
      for (const d of g.distractor_facts) expect(g.rule_facts).not.toContain(d);
      expect(s.log.split('\n')).toHaveLength(8);
      for (const line of s.log.split('\n')) expect(s.situation).not.toContain(line.slice(8));
    }
  });

  it('has a non-degenerate action mix (each tool 15-35%) and varied procedures', () => {
    const counts = Object.fromEntries(DECISION_TOOLS.map((t) => [t, 0]));
    for (const s of test) counts[s.target]++;
    for (const t of DECISION_TOOLS) {
      expect(counts[t] / test.length, t).toBeGreaterThan(0.15);
      expect(counts[t] / test.length, t).toBeLessThan(0.35);
    }
    // Varied procedures: many of the 35 choices of four rule facts, each in the family's fixed order.
    const procs = new Set(test.map((s) => s.generated!.rule_facts.join(',')));
    expect(procs.size).toBeGreaterThan(25);
    const order = FAMILIES[test[0].domain as Family].rules.map((r) => r.id);
    for (const p of procs) {
      const ix = p.split(',').map((id) => order.indexOf(id));
      expect([...ix].sort((a, b) => a - b)).toEqual(ix);
    }
    expect(new Set(test.map((s) => s.decision_type))).toEqual(new Set(['act', 'escalate']));
  });

  it('every state passes the scenario loader checks', () => {
    for (const s of test.slice(0, 100)) expect(parseScenario(JSON.parse(JSON.stringify(s)), `${s.scenario_id}.json`)).toEqual(s);
  });
});

describe('seeds, writing and runGenerate', () => {
  it('stateSeeds are unique and in the split range', () => {
    const t = stateSeeds(5, 2000, 'test');
    const d = stateSeeds(5, 2000, 'dev');
    expect(new Set(t).size).toBe(2000);
    expect(t.every((x) => x >= 0x80000000 && x <= 0xffffffff)).toBe(true);
    expect(d.every((x) => x >= 0 && x < 0x80000000)).toBe(true);
  });

  it('generateState refuses a state seed outside the split range', () => {
    expect(() => generateState('refund', 'dev', 0x80000001)).toThrow(expect.objectContaining({ code: 'generate.stateSeed' }));
    expect(() => generateState('refund', 'test', 5)).toThrow(expect.objectContaining({ code: 'generate.stateSeed' }));
  });

  it('writeGeneratedStates writes one JSON per state atomically; the loader reads them back', () => {
    const dir = tempDir();
    const states = generateStates({ family: 'household', seed: 3, count: 12, split: 'dev' });
    const paths = writeGeneratedStates(dir, states);
    expect(paths).toHaveLength(12);
    const names = readdirSync(dir);
    expect(names.every((n) => n.endsWith('.json'))).toBe(true); // no temp files left behind
    expect(loadScenarios(dir)).toEqual([...states].sort((a, b) => (a.scenario_id < b.scenario_id ? -1 : 1)));
    // Rewriting is idempotent.
    writeGeneratedStates(dir, states);
    expect(readdirSync(dir)).toHaveLength(12);
  });

  it('runGenerate does everything the CLI command needs and summarises', () => {
    const out = join(tempDir(), 'nested', 'out');
    const summary = runGenerate({ family: 'refund', seed: 42, count: 40, out });
    expect(summary.split).toBe('test');
    expect(summary.count).toBe(40);
    expect(summary.files).toHaveLength(40);
    expect(Object.values(summary.actions).reduce((a, b) => a + b, 0)).toBe(40);
    expect(summary.state_seed_range).toEqual(TEST_SEED_RANGE);
    const first = JSON.parse(readFileSync(summary.files[0], 'utf8'));
    expect(first.generated).toMatchObject({ family: 'refund', split: 'test', seed: 42, index: 0 });
    expect(runGenerate({ family: 'refund', seed: 42, count: 40, out, split: 'dev' }).state_seed_range).toEqual(DEV_SEED_RANGE);
  });

  it('runGenerate rejects bad options with usage errors', () => {
    const out = tempDir();
    const bad = [
      { family: 'garden' as Family, seed: 1, count: 1, out },
      { family: 'refund' as Family, seed: -1, count: 1, out },
      { family: 'refund' as Family, seed: 1.5, count: 1, out },
      { family: 'refund' as Family, seed: 1, count: 0, out },
      { family: 'refund' as Family, seed: 1, count: 1, out: '' },
    ];
    for (const b of bad) expect(() => runGenerate(b)).toThrow(expect.objectContaining({ kind: 'usage' }));
  });
});
