/**
 * Issue 21 point 1: "lm-eval adds task and group tables" as a suite section on top of the core
 * (`src/report/suites/lm-eval.ts`, through the one suite interface), on the real
 * lm-evaluation-harness outputs in tests/fixtures/lm-eval (three harness versions, one with a group
 * of three subtasks, one trimmed samples file). Recognised by the data: every run's source is
 * lm-eval; a store that mixes lm-eval with a CSV gets the core alone. A group's values appear once
 * in the report: in the core reconciliation table, to which Tasks and groups refers.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { lmEvalSuite } from '../../src/report/suites/lm-eval.ts';
import { REPORT_SUITES } from '../../src/report/build-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-lm-eval-suite-'));
const ok = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
};
const build = (store: string, name: string) => {
  const out = join(dir, name);
  ok(['report', 'build', '--traces', store, '--out', out, '--resamples', '200', '--quiet']);
  return { md: readFileSync(join(out, 'REPORT.md'), 'utf8'), json: JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')), html: readFileSync(join(out, 'index.html'), 'utf8') };
};
let r: ReturnType<typeof build>;

beforeAll(() => {
  for (const name of ['asdiv-0.4.3', 'negotiationtom', 'gsm8k']) ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', name), '--traces', join(dir, 'L')]);
  r = build(join(dir, 'L'), 'L-report');
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const section = (md: string) => md.slice(md.search(/^## \d+\. Tasks and groups$/m), md.indexOf('## Method notes'));

describe('the lm-eval suite: tasks and groups on top of the core', () => {
  it('is recognised by the data (every run lm-eval) and comes before the core', () => {
    expect(lmEvalSuite.recognise({ sources: ['lm-eval'], suites: ['gsm8k'], scorers: ['acc'], standoff: false })).toBe(true);
    expect(lmEvalSuite.recognise({ sources: ['csv', 'lm-eval'], suites: ['gsm8k', 'x'], scorers: ['acc'], standoff: false })).toBe(false);
    expect(lmEvalSuite.recognise({ sources: [], suites: [], scorers: [], standoff: false })).toBe(false);
    expect(REPORT_SUITES.findIndex((s) => s.id === 'lm-eval')).toBe(REPORT_SUITES.findIndex((s) => s.id === 'core') - 1);
    // The core's sections, then its own: the core results are all there, and the section is numbered after them.
    expect(r.json.report).toBe('generic');
    expect(r.json.generic.suites.length).toBe(5);
    expect(r.md).toContain('7. [Tasks and groups](#7-tasks-and-groups)\n8. [Method notes](#method-notes)');
    expect(r.html).toContain('id="7-tasks-and-groups"');
  });

  it('a row per task and model, with its harness description and its documents stored, evaluated and in the split (from the real logs)', () => {
    const t = r.json.lm_eval.tasks as { task: string; model: string; stored: number; evaluated: number | null; in_split: number | null; n_shot: number; groups: string[]; filters: string[]; version: string; lm_eval_version: string | null }[];
    expect(t.map((x) => [x.task, x.model])).toEqual([
      ['asdiv', 'meta-llama/Meta-Llama-3-8B-Instruct'],
      ['gsm8k', 'gpt2'],
      ['gsm8k', 'microsoft/Phi-3-mini-4k-instruct'],
      ['negotiationtom_belief', 'Qwen/Qwen3-8B'],
      ['negotiationtom_desire', 'Qwen/Qwen3-8B'],
      ['negotiationtom_intention', 'Qwen/Qwen3-8B'],
    ]);
    // asdiv's samples file is trimmed to 12 of the 50 documents its results file reports (fixtures README).
    expect(t[0]).toMatchObject({ stored: 12, evaluated: 50, in_split: 2305, n_shot: 8, groups: [], lm_eval_version: 'git 59170e85' });
    expect(t[2]).toMatchObject({ stored: 10, evaluated: 10, in_split: 1319, filters: ['strict-match', 'flexible-extract'], version: '3', lm_eval_version: '0.4.9.1' });
    expect(t[5]).toMatchObject({ stored: 20, evaluated: 20, groups: ['negotiationtom'], lm_eval_version: '0.4.13.dev0' });
    const s = section(r.md);
    expect(s).toContain('| asdiv | — | meta-llama/Meta-Llama-3-8B-Instruct | 1 | loglikelihood | 8 | none | 12 | 50 | 2,305 | git 59170e85 |');
    expect(s).toContain('| gsm8k | — | microsoft/Phi-3-mini-4k-instruct | 3 | generate_until | 5 | strict-match, flexible-extract | 10 | 10 | 1,319 | 0.4.9.1 |');
    expect(s).toMatch(/- asdiv, meta-llama\/Meta-Llama-3-8B-Instruct: 12 of the 50 documents the harness evaluated are stored/);
    expect(s.match(/documents the harness evaluated are stored/g)!.length).toBe(1);
  });

  it('each group value appears once in the report: in Reported vs recomputed (a row per group, model, metric and filter); Tasks and groups lists the group with its subtasks and refers there', () => {
    // The group with its subtasks and models, once (its aggregate is in each of its three subtask logs); no value here.
    expect(r.json.lm_eval.groups).toEqual([{ group: 'negotiationtom', subtasks: ['negotiationtom_belief', 'negotiationtom_desire', 'negotiationtom_intention'], models: ['Qwen/Qwen3-8B'] }]);
    const rec = (r.json.generic.reconciliation as { task: string; metric: string; reported: number; reported_stderr: number | null }[]).filter((x) => x.task === 'negotiationtom');
    expect(rec.map((x) => [x.metric, Number(x.reported.toFixed(4))]).sort()).toEqual([
      ['acc', 0.525],
      ['exact_match', 0.2],
      ['macro_f1', 0.2403],
      ['micro_f1', 0.2857],
    ]);
    const s = section(r.md);
    expect(s).toContain('### Groups');
    expect(s).toContain('| negotiationtom | negotiationtom_belief, negotiationtom_desire, negotiationtom_intention | Qwen/Qwen3-8B |');
    expect(s).toContain('Its reported values are in section 5 ([Reported vs recomputed](#5-reported-vs-recomputed))');
    expect(r.md).toContain('## 5. Reported vs recomputed');
    expect(r.html).toContain('id="5-reported-vs-recomputed"');
    // In the whole REPORT.md, each of the group's values (and stderrs) stands on one table row of the group.
    const groupRows = r.md.split('\n').filter((l) => l.startsWith('|') && l.includes('| negotiationtom |'));
    for (const x of rec) {
      expect(groupRows.filter((l) => l.includes(`| ${x.metric} |`) && l.includes(`| ${x.reported.toFixed(4)} |`)), x.metric).toHaveLength(1);
      if (x.reported_stderr !== null) expect(groupRows.filter((l) => l.includes(x.reported_stderr!.toFixed(4))), x.metric).toHaveLength(1);
    }
    expect(groupRows.filter((l) => /\| \d\.\d{4} \|/.test(l))).toHaveLength(4);
  });

  it('a store without groups says so; a store mixing lm-eval with a CSV gets the core alone', () => {
    ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', 'gsm8k'), '--traces', join(dir, 'G')]);
    const g = build(join(dir, 'G'), 'G-report');
    expect(section(g.md)).toMatch(/^## 6\. Tasks and groups\n[^]*No task belongs to a group the harness aggregated\./);
    expect(g.md).toContain('6. [Tasks and groups](#6-tasks-and-groups)\n7. [Method notes](#method-notes)');
    expect(g.json.lm_eval.groups).toEqual([]);
    writeFileSync(join(dir, 'x.csv'), 'model,item,ok\nm1,a,1\nm1,b,0\n');
    ok(['ingest', 'csv', join(dir, 'x.csv'), '--traces', join(dir, 'G'), '--run-id', 'x', '--subject', 'model', '--item', 'item', '--scores', 'ok']);
    const mixed = build(join(dir, 'G'), 'G-mixed');
    expect(mixed.json.lm_eval).toBeUndefined();
    expect(mixed.md).not.toContain('Tasks and groups');
  }, 120_000);
});
