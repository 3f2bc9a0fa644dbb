/**
 * `standoff compare` through the real CLI: exit code 6 exactly when --fail-on holds, the Markdown
 * block, usage errors, and pairing across stores and sources (an lm-eval run against a CSV).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';

const DEMO = join(ROOT, 'traces');
const base = ['compare', '--traces', DEMO, '--metric', 'gathered_evidence', '--resamples', '500'];

describe('standoff compare on the demo store', () => {
  it('a detected regression with --fail-on worse exits 6; the same without --fail-on exits 0', () => {
    const fail = runCli([...base, '--baseline', 'subject:sim:careful', '--candidate', 'subject:sim:hasty', '--fail-on', 'worse', '--format', 'json']);
    expect(fail.code, fail.stderr).toBe(6);
    const r = JSON.parse(fail.stdout);
    expect(r.failed).toBe(true);
    expect(r.rows[0]).toMatchObject({ metric: 'gathered_evidence', task: 'standoff-o1', pairs: 90, only_baseline: 0, only_candidate: 0, verdict: 'worse', sampling: 'clustered', clusters: 18 });
    const ok = runCli([...base, '--baseline', 'subject:sim:careful', '--candidate', 'subject:sim:hasty']);
    expect(ok.code, ok.stderr).toBe(0);
  });
  it('an improvement does not trip --fail-on worse but trips --fail-on any', () => {
    const args = [...base, '--baseline', 'subject:sim:hasty', '--candidate', 'subject:sim:careful'];
    expect(runCli([...args, '--fail-on', 'worse']).code).toBe(0);
    expect(runCli([...args, '--fail-on', 'any']).code).toBe(6);
  });
  it('--format markdown prints a block for a pull-request comment', () => {
    const r = runCli([...base, '--baseline', 'subject:sim:careful', '--candidate', 'subject:sim:hasty', '--fail-on', 'worse', '--format', 'markdown']);
    expect(r.code).toBe(6);
    expect(r.stdout).toContain('### standoff compare: subject:sim:hasty vs subject:sim:careful');
    expect(r.stdout).toContain('**Result: fail** (--fail-on worse)');
    expect(r.stdout).toContain('| gathered_evidence | standoff-o1 | 90 |');
    expect(r.stdout).toContain('Holm-adjusted');
  });
  it('bad sides and missing metrics are usage or data errors, not exit 6', () => {
    expect(runCli([...base, '--baseline', 'sim:careful', '--candidate', 'subject:sim:hasty']).code).toBe(2);
    const r = runCli([...base, '--baseline', 'subject:nobody', '--candidate', 'subject:sim:hasty', '--fail-on', 'worse']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/subject:nobody has no gathered_evidence values .*sim:careful/);
  });
});

describe('standoff compare across stores and sources', () => {
  let L: string;
  let C: string;
  let run: string;
  let values: Map<string, number>;
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-compare-'));
    L = join(dir, 'L');
    C = join(dir, 'C');
    expect(runCli(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', 'gsm8k'), '--traces', L]).code).toBe(0);
    const rows = JSON.parse(runCli(['sql', '--traces', L, '--format', 'json', "SELECT e.run_id, e.scenario_id, s.value FROM episodes e JOIN scores s USING (run_id, episode_id) WHERE s.scorer = 'exact_match/strict-match' ORDER BY e.run_id, CAST(e.scenario_id AS INTEGER)"]).stdout);
    run = rows[0].run_id;
    values = new Map(rows.filter((r: { run_id: string }) => r.run_id === run).map((r: { scenario_id: string; value: number }) => [r.scenario_id, Number(r.value)]));
    // The CSV: the same documents minus two, three answers flipped, and one document lm-eval did not score.
    const ids = [...values.keys()];
    const lines = ['sample_id,model,exact_match/strict-match'];
    ids.slice(2).forEach((id, i) => lines.push(`${id},my-model,${i < 3 ? 1 - values.get(id)! : values.get(id)}`));
    lines.push('extra-doc,my-model,1');
    writeFileSync(join(dir, 'mine.csv'), lines.join('\n') + '\n');
    expect(runCli(['ingest', 'csv', join(dir, 'mine.csv'), '--traces', C, '--run-id', 'mine', '--subject', 'model', '--item', 'sample_id', '--scores', 'exact_match/strict-match']).code).toBe(0);
  }, 120_000);

  it('pairs an lm-eval run with a CSV by document id; one-sided items are counted', () => {
    const r = runCli(['compare', '--baseline-traces', L, '--baseline', `run:${run}`, '--traces', C, '--candidate', 'subject:my-model', '--metric', 'exact_match/strict-match', '--format', 'json', '--resamples', '500']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const ids = [...values.keys()].slice(2);
    const diff = ids.reduce((s, id, i) => s + (i < 3 ? 1 - 2 * values.get(id)! : 0), 0) / ids.length;
    expect(out.rows).toHaveLength(1);
    expect(out.rows[0]).toMatchObject({ pairs: ids.length, only_baseline: 2, only_candidate: 1, sampling: 'independent' });
    expect(out.rows[0].difference).toBeCloseTo(diff, 12);
    expect(out.baseline).toMatchObject({ ref: `run:${run}`, traces: L });
    expect(out.candidate).toMatchObject({ ref: 'subject:my-model', subjects: ['my-model'], runs: ['mine'] });
  });
});
