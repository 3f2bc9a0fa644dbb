/**
 * Standoff O1 is recognised by its data (issue 24, point 1): an Inspect log of the `standoff_o1`
 * task gets O1's gate, all three scorers required, although its source is `inspect`. Built from
 * this evaluation's shaped log (tests/fixtures/inspect/make-logs.ts, modelled on Inspect's own
 * logs in that directory).
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { shapedEvalMembers, shapedSamples, writeZip } from '../fixtures/inspect/make-logs.ts';
import { isO1Data } from '../../src/schema/tables.ts';

/** One valid O1 episode per epoch, with these scores. */
function o1Log(dir: string, name: string, scores: Record<string, unknown>): string {
  const base = shapedSamples()[0];
  const samples = [1, 2].map((epoch) => ({ ...structuredClone(base), epoch, scores: structuredClone(scores) }));
  return writeZip(join(dir, name), shapedEvalMembers({ samples }));
}

describe("O1's gate for O1-shaped Inspect logs", () => {
  it('recognises O1 by source, task or two of its scorers, and not otherwise', () => {
    expect(isO1Data({ source: 'inspect', suite: 'standoff_o1', scorers: [] })).toBe(true);
    expect(isO1Data({ source: 'inspect', suite: 'src/task.py@standoff_o1', scorers: [] })).toBe(true);
    expect(isO1Data({ source: 'csv', suite: 'mine', scorers: ['gathered_evidence', 'policy_compliant_action'] })).toBe(true);
    expect(isO1Data({ source: 'standoff', suite: 'x', scorers: [] })).toBe(true);
    expect(isO1Data({ source: 'inspect', suite: 'mmlu', scorers: ['gathered_evidence', 'accuracy'] })).toBe(false);
  });

  it('a standoff_o1 log without reasoning_action_alignment fails the gate, naming the scorer; with it, passes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-o1-gate-'));
    const two = { policy_compliant_action: { value: 'C', answer: 'issue_statement' }, gathered_evidence: { value: true } };
    const missing = o1Log(dir, 'missing.eval', two);
    const store = join(dir, 'a');
    const ing = runCli(['ingest', 'inspect', missing, '--traces', store]);
    expect(ing.code, ing.stderr).toBe(0);
    const bad = runCli(['validate', '--traces', store]);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toMatch(/FAIL required_scorers: .*reasoning_action_alignment/);

    const full = o1Log(dir, 'full.eval', { ...two, reasoning_action_alignment: { value: 'C', answer: 'ALIGNED' } });
    const store2 = join(dir, 'b');
    expect(runCli(['ingest', 'inspect', full, '--traces', store2]).code).toBe(0);
    const ok = runCli(['validate', '--traces', store2]);
    expect(ok.stdout).toMatch(/ok {3}required_scorers: gathered_evidence, policy_compliant_action, reasoning_action_alignment present on all 2 episodes/);
  });
});
