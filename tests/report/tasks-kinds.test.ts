/**
 * Issue 21 points 3 and 4 on real stores: tasks are first-class (three real lm-eval outputs of
 * different harness versions in one store: subjects counted once, items per task, the group's
 * aggregate once, corpus-level metrics in the results with no per-sample interval) and kinds come
 * from evidence (a continuous score whose only value is 0.0 is no "(binary) 0.0% (0/1)").
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, ROOT } from '../helpers/cli.ts';
import { kindFromEvidence } from '../../src/report/generic.ts';

let dir: string;
const ok = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
};
function build(traces: string, out: string) {
  ok(['report', 'build', '--traces', traces, '--out', join(dir, out), '--resamples', '200', '--quiet', '--allow-missing', '1000']);
  return { md: readFileSync(join(dir, out, 'REPORT.md'), 'utf8'), json: JSON.parse(readFileSync(join(dir, out, 'results.json'), 'utf8')) };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-tasks-kinds-'));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tasks first-class: three real lm-eval outputs in one store', { timeout: 240_000 }, () => {
  let r: ReturnType<typeof build>;
  beforeAll(() => {
    for (const name of ['asdiv-0.4.3', 'negotiationtom', 'gsm8k']) ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', name), '--traces', join(dir, 'L')]);
    r = build(join(dir, 'L'), 'L-report');
  }, 240_000);

  it('subjects are counted once and items per task (no sum of unrelated doc ids)', () => {
    const t = r.json.summary.totals;
    // asdiv: Llama-3-8B; gsm8k: Phi-3-mini and gpt2; negotiationtom's three subtasks: Qwen3-8B.
    expect(t.subjects).toBe(4);
    expect(t.tasks).toEqual([
      { task: 'asdiv', items: 12 },
      { task: 'gsm8k', items: 10 },
      { task: 'negotiationtom_belief', items: 20 },
      { task: 'negotiationtom_desire', items: 20 },
      { task: 'negotiationtom_intention', items: 20 },
    ]);
    expect(r.md).toMatch(/6 runs, 4 subjects, 0 judges, 5 tasks \(items per task: asdiv 12, gsm8k 10, negotiationtom_belief 20/);
  });

  it('the first screen answers: a compact results table right under the gate, before the contents', () => {
    const glance = r.md.indexOf('**At a glance**');
    expect(glance).toBeGreaterThan(r.md.indexOf('Structural gate'));
    expect(glance).toBeLessThan(r.md.indexOf('## Contents'));
    const qwen = r.json.generic.results.find((x: { suite: string; subject: string }) => x.suite === 'negotiationtom_belief' && x.subject === 'Qwen/Qwen3-8B');
    expect(r.md.slice(glance, r.md.indexOf('## Contents'))).toContain(`| negotiationtom_belief | acc | Qwen/Qwen3-8B | ${(qwen.estimate * 100).toFixed(1)}% |`);
  });

  it('the group aggregate appears once per metric, checked at ingest, not "not recomputed"', () => {
    const group = r.json.generic.reconciliation.filter((x: { task: string }) => x.task === 'negotiationtom');
    expect(group.map((x: { metric: string }) => x.metric).sort()).toEqual(['acc', 'exact_match', 'macro_f1', 'micro_f1']);
    expect(group.every((x: { status: string }) => x.status === 'checked at ingest')).toBe(true);
  });

  it('corpus-level metrics are in the results, with no per-sample interval', () => {
    const corpus = r.json.generic.corpus;
    expect(corpus.map((c: { metric: string; value: number }) => [c.metric, Number(c.value.toFixed(4))])).toEqual([
      ['macro_f1', 0.2403],
      ['micro_f1', 0.2857],
    ]);
    const results = r.md.slice(r.md.indexOf('## 2. Results'), r.md.indexOf('## 3.'));
    expect(results).toMatch(/\| negotiationtom_intention \| micro_f1 \| none \| Qwen\/Qwen3-8B \| 0\.2857 \| no per-sample interval \(corpus-level\) \|/);
  });

  it('the log declares acc and exact_match 0/1: binary, and the report says why', () => {
    const acc = r.json.generic.scorers.find((s: { suite: string; scorer: string }) => s.suite === 'asdiv' && s.scorer === 'acc');
    expect(acc).toMatchObject({ kind: 'binary', kind_reason: 'the log reports acc for it' });
    expect(r.md).toMatch(/Kinds, from the evidence: asdiv acc binary \(the log reports acc for it\)/);
  });
});

describe('kinds from evidence', { timeout: 240_000 }, () => {
  it('a score whose only value is 0.0 is not a rate; 0/1 values holding both are binary', () => {
    const lines = ['model,item,correct,closeness_log'];
    for (const m of ['a', 'b']) for (let i = 0; i < 6; i++) lines.push(`${m},q${i},${(i + (m === 'a' ? 0 : 1)) % 2},0.0`);
    writeFileSync(join(dir, 'k.csv'), lines.join('\n') + '\n');
    ok(['ingest', 'csv', join(dir, 'k.csv'), '--traces', join(dir, 'K'), '--run-id', 'k', '--subject', 'model', '--item', 'item', '--scores', 'correct,closeness_log']);
    const { md, json } = build(join(dir, 'K'), 'K-report');
    const kinds = Object.fromEntries(json.generic.scorers.map((s: { scorer: string; kind: string; kind_reason: string }) => [s.scorer, [s.kind, s.kind_reason]]));
    expect(kinds.correct).toEqual(['binary', 'its values hold both 0 and 1']);
    expect(kinds.closeness_log[0]).toBe('bounded');
    expect(kinds.closeness_log[1]).toMatch(/every value is 0 and the log does not declare it 0\/1/);
    expect(md).toMatch(/closeness_log \(bounded\)/);
    // Point 9: a CSV records no temperature, prompt or seed: no such columns; no subject is simulated.
    expect(md).toMatch(/\| Run \| Suite \| Source \| Status \| Subjects \| Judges \| Scenarios \| Epochs \| Samples \| SHA-256 \(Parquet\) \|/);
    expect(md).not.toMatch(/Temperature|not recorded|Simulated subjects/);
    expect(md).not.toMatch(/0\.0% \(0\/6\)/);
    const c = json.generic.results.filter((x: { scorer: string }) => x.scorer === 'closeness_log');
    expect(c.every((x: { exact: unknown; estimate: number }) => x.exact === null && x.estimate === 0)).toBe(true);
  });

  it('a store of one sample says "1 sample", never "1 samples"', () => {
    writeFileSync(join(dir, 'one.csv'), 'model,item,correct\na,q0,1\n');
    ok(['ingest', 'csv', join(dir, 'one.csv'), '--traces', join(dir, 'ONE'), '--run-id', 'one', '--subject', 'model', '--item', 'item', '--scores', 'correct']);
    const { md } = build(join(dir, 'ONE'), 'ONE-report');
    expect(md).toMatch(/1 sample in all/);
    expect(md).toMatch(/; 1 sample;/);
    expect(md).not.toMatch(/\b1 samples\b/);
    // The Inspect run note (written at ingest) of a one-sample log says so too.
    ok(['ingest', 'inspect', join(ROOT, 'tests/fixtures/inspect/mmlu-summary-choices.eval'), '--traces', join(dir, 'ONEI')]);
    const one = build(join(dir, 'ONEI'), 'ONEI-report').md;
    expect(one).toMatch(/eval status success, 1 sample\b/);
    expect(one).not.toMatch(/\b1 samples\b/);
  });

  it('the rule, case by case', () => {
    expect(kindFromEvidence('binary', [0, 1], undefined).kind).toBe('binary');
    expect(kindFromEvidence('binary', [1], 'accuracy')).toEqual({ kind: 'binary', kind_reason: 'the log reports accuracy for it' });
    expect(kindFromEvidence('binary', [1], undefined).kind).toBe('bounded');
    expect(kindFromEvidence('ordinal', [1], undefined).kind).toBe('ordinal');
    expect(kindFromEvidence(null, [], undefined).kind).toBe(null);
  });
});
