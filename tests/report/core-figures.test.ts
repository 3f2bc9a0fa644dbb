/**
 * Issue 21 point 2: figures for every store. A researcher's CSV (4 models, 2 scorers) gets a
 * forest per scorer and a forest of paired differences with the Holm-significant ones filled; a
 * store of several lm-eval tasks gets the subject x task heatmap. Each figure's data are the
 * report's numbers (results.json), the files are Vega-Lite + SVG + PNG, index.html embeds them,
 * and a second build writes the same bytes.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, ROOT } from '../helpers/cli.ts';
import { writeNaturalCsv } from '../helpers/natural-csv.ts';

let dir: string;
const ok = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
};
const build = (traces: string, out: string) => ok(['report', 'build', '--traces', traces, '--out', join(dir, out), '--resamples', '200', '--quiet']);
const read = (out: string, f: string) => readFileSync(join(dir, out, f));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-core-figures-'));
  writeNaturalCsv(join(dir, 'r.csv'));
  ok(['ingest', 'csv', join(dir, 'r.csv'), '--traces', join(dir, 'S'), '--run-id', 'r1', '--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality']);
  build(join(dir, 'S'), 'a');
  build(join(dir, 'S'), 'b');
  for (const name of ['asdiv-0.4.3', 'negotiationtom', 'gsm8k']) ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', name), '--traces', join(dir, 'L')]);
  build(join(dir, 'L'), 'l');
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('core figures on any store', { timeout: 120_000 }, () => {
  it('a CSV store: forest per scorer and paired differences, in three formats, linked and embedded', () => {
    const files = readdirSync(join(dir, 'a', 'figures')).sort();
    expect(files).toEqual(['judges.png', 'judges.svg', 'judges.vl.json', 'paired-differences.png', 'paired-differences.svg', 'paired-differences.vl.json', 'scorer-forest.png', 'scorer-forest.svg', 'scorer-forest.vl.json']);
    const md = read('a', 'REPORT.md').toString();
    expect(md.indexOf('figures/scorer-forest.png')).toBeGreaterThan(md.indexOf('## 2. Results'));
    expect(md.indexOf('figures/scorer-forest.png')).toBeLessThan(md.indexOf('## 3. Pairwise'));
    expect(md.indexOf('figures/paired-differences.png')).toBeGreaterThan(md.indexOf('## 3. Pairwise'));
    expect(md).not.toMatch(/<!-- figure:/);
    const html = read('a', 'index.html').toString();
    expect(html).toContain('id="vega-scorer-forest"');
    expect(html).toContain('id="vega-paired-differences"');
    expect(read('a', 'figures/scorer-forest.png').subarray(1, 4).toString()).toBe('PNG');
  });

  it("the figures' data are the report's numbers; filled = Holm p < alpha", () => {
    const json = JSON.parse(read('a', 'results.json').toString());
    const forest = JSON.parse(read('a', 'figures/scorer-forest.vl.json').toString()).data.values;
    for (const r of json.generic.results) {
      const k = r.kind === 'binary' ? 100 : 1;
      const f = forest.find((v: { panel: string; subject: string }) => v.subject === r.subject && v.panel.startsWith(r.scorer));
      expect(f.estimate).toBeCloseTo(r.estimate * k, 3);
      expect(f.lower).toBeCloseTo(r.bootstrap.lower * k, 3);
      expect(f.upper).toBeCloseTo(r.bootstrap.upper * k, 3);
    }
    const paired = JSON.parse(read('a', 'figures/paired-differences.vl.json').toString()).data.values;
    expect(paired.length).toBe(json.generic.pairwise.comparisons.length);
    for (const c of json.generic.pairwise.comparisons) {
      const p = paired.find((v: { pair: string; panel: string }) => v.pair === `${c.a} − ${c.b}` && v.panel.startsWith(c.scorer));
      expect(p.significant.startsWith('Holm p <')).toBe(c.p_holm < json.generic.pairwise.alpha);
    }
    // Both kinds occur in this store: a figure that cannot tell them apart would fail here.
    expect(new Set(paired.map((p: { significant: string }) => p.significant)).size).toBe(2);
  });

  it('deterministic: a second build writes the same bytes', () => {
    for (const f of ['scorer-forest.vl.json', 'scorer-forest.svg', 'scorer-forest.png', 'paired-differences.svg', 'paired-differences.png', 'judges.vl.json', 'judges.svg', 'judges.png']) {
      expect(read('b', `figures/${f}`).equals(read('a', `figures/${f}`)), f).toBe(true);
    }
    expect(read('b', 'REPORT.md').equals(read('a', 'REPORT.md'))).toBe(true);
  });

  it('several tasks: the subject x task heatmap, one cell per subject, task and scorer', () => {
    const json = JSON.parse(read('l', 'results.json').toString());
    const heat = JSON.parse(read('l', 'figures/task-heatmap.vl.json').toString()).data.values;
    const want = json.generic.results.filter((r: { estimate: number | null; kind: string }) => r.estimate !== null && (r.kind === 'binary' || r.kind === 'bounded'));
    expect(heat.length).toBe(want.length);
    expect(heat.find((v: { task: string; subject: string }) => v.task === 'asdiv · acc' && v.subject === 'meta-llama/Meta-Llama-3-8B-Instruct').value).toBe(100);
  });
});

describe('multiple comparisons, stated (--adjust)', { timeout: 240_000 }, () => {
  it('Holm within each scorer, not across; bh and none on request; the table says which family', async () => {
    const { holm, benjaminiHochberg } = await import('../../src/stats/index.ts');
    const json = JSON.parse(read('a', 'results.json').toString());
    const cmp = json.generic.pairwise.comparisons;
    expect(json.generic.pairwise).toMatchObject({ adjust: 'holm', family: 'task x scorer' });
    for (const scorer of ['correct', 'quality']) {
      const mine = cmp.filter((c: { scorer: string }) => c.scorer === scorer);
      expect(mine.length).toBe(6);
      expect(mine.map((c: { p_holm: number }) => c.p_holm)).toEqual(holm(mine.map((c: { p_value: number }) => c.p_value)));
    }
    // Across both scorers (12 p-values) Holm would give other numbers: the family matters here.
    expect(cmp.map((c: { p_holm: number }) => c.p_holm)).not.toEqual(holm(cmp.map((c: { p_value: number }) => c.p_value)));
    const md = read('a', 'REPORT.md').toString();
    expect(md).toMatch(/Holm-adjusted within each family of one task and one scorer \(2 families of 6 comparisons/);
    expect(md).toMatch(/\| r \| p \| p \(Holm, within scorer\) \| MDE \|/);

    ok(['report', 'build', '--traces', join(dir, 'S'), '--out', join(dir, 'bh'), '--resamples', '200', '--quiet', '--adjust', 'bh']);
    const bh = JSON.parse(read('bh', 'results.json').toString()).generic.pairwise;
    expect(bh.adjust).toBe('bh');
    const correct = bh.comparisons.filter((c: { scorer: string }) => c.scorer === 'correct');
    expect(correct.map((c: { p_adjusted: number }) => c.p_adjusted)).toEqual(benjaminiHochberg(correct.map((c: { p_value: number }) => c.p_value)));
    ok(['report', 'build', '--traces', join(dir, 'S'), '--out', join(dir, 'none'), '--resamples', '200', '--quiet', '--adjust', 'none']);
    const none = read('none', 'REPORT.md').toString();
    expect(none).toMatch(/not adjusted for multiple comparisons \(--adjust none\)/);
    expect(none).not.toMatch(/p \(Holm/);
    const bad = runCli(['report', 'build', '--traces', join(dir, 'S'), '--out', join(dir, 'x'), '--adjust', 'bonferroni']);
    expect(bad.code).toBe(2);
  });
});

describe('judges on any store (point 7)', { timeout: 120_000 }, () => {
  it("per-judge means, bias against the panel median, pair agreement and per-subject medians, from the CSV's own rows", async () => {
    const { naturalRows, JUDGES, MODELS } = await import('../helpers/natural-csv.ts');
    const rows = naturalRows();
    const median = (v: number[]) => {
      const s = [...v].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const json = JSON.parse(read('a', 'results.json').toString());
    const q = json.generic.judges.find((j: { scorer: string }) => j.scorer === 'quality');
    JUDGES.forEach((judge, k) => {
      const mine = rows.filter((r) => r.judges[k] !== null);
      const got = q.judges.find((b: { judge: string }) => b.judge === judge);
      expect(got.bias_n).toBe(mine.length);
      expect(got.mean).toBeCloseTo(mine.reduce((a, r) => a + r.judges[k]!, 0) / mine.length, 10);
      const bias = mine.reduce((a, r) => a + r.judges[k]! - median(r.judges.filter((x): x is number => x !== null)), 0) / mine.length;
      expect(got.bias).toBeCloseTo(bias, 10);
    });
    const ab = q.pairs.find((p: { a: string; b: string }) => p.a === 'judge_a' && p.b === 'judge_b');
    const both = rows.filter((r) => r.judges[0] !== null && r.judges[1] !== null);
    expect([ab.bothRated, ab.agreements]).toEqual([both.length, both.filter((r) => r.judges[0] === r.judges[1]).length]);
    for (const model of MODELS) {
      const mine = rows.filter((r) => r.model === model && r.judges.some((x) => x !== null));
      const got = q.per_subject.find((s: { subject: string }) => s.subject === model);
      expect(got.median_mean).toBeCloseTo(mine.reduce((a, r) => a + median(r.judges.filter((x): x is number => x !== null)), 0) / mine.length, 10);
    }
    const md = read('a', 'REPORT.md').toString();
    expect(md).toMatch(/\| Judge \| Values \| ERROR \(failed call\) \| Mean \| Bias vs panel median \|/);
    // The judge figure (point 2): each judge's mean against the panel median, and pair agreement, from the same numbers.
    expect(md.indexOf('figures/judges.png')).toBeGreaterThan(md.indexOf('Judges and agreement'));
    const fig = JSON.parse(read('a', 'figures/judges.vl.json').toString());
    const [means, agree] = fig.hconcat.map((x: { data: { values: Record<string, unknown>[] } }) => x.data.values);
    for (const j of q.judges) {
      expect(means.find((v: { judge: string; who: string }) => v.judge === j.judge && v.who === 'judge mean').value).toBeCloseTo(j.mean, 3);
      expect(means.find((v: { judge: string; who: string }) => v.judge === j.judge && v.who === 'panel median').value).toBeCloseTo(j.mean - j.bias, 3);
    }
    for (const p of q.pairs) {
      expect(agree.find((v: { a: string; b: string }) => v.a === p.a && v.b === p.b).agreement).toBeCloseTo(p.agreement * 100, 3);
      expect(p.set_key).toBe(`judges-differ:${JSON.stringify(["quality", p.a, p.b])}`);
    }
    expect(md).toMatch(/\| judge_a \| judge_b \| [\d,]+ \| \d+\.\d% \([\d,]+\/[\d,]+\) \| \[/);
  });
});
