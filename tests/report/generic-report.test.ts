/**
 * Issue 11 point 3, `standoff report build` on any store: the researcher's wide CSV, every shared
 * Inspect fixture and the real lm-eval output in tests/fixtures/lm-eval, ingested and reported
 * with the real CLI. REPORT.md names every real scorer with its intervals and shows none of
 * Standoff's own quantities; the figures in results.json are checked against the generated rows
 * with src/stats; the log's reported metrics stand beside the recomputed ones, a doctored one
 * FLAGged. (The Standoff suite's report is covered by build-report.test.ts and the CI diff.)
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { MODELS, writeNaturalCsv, type NaturalRow } from '../helpers/natural-csv.ts';
import { clopperPearson } from '../../src/stats/index.ts';
import { pctInterval } from '../../src/report/markdown.ts';
import { memberText, readMembers, writeZip } from '../fixtures/inspect/make-logs.ts';

const RESAMPLES = '500';
/** Standoff's own quantities: none of them may appear in a report over other data. */
const STANDOFF_ONLY = [/evidence gathered/i, /policy action/i, /alignment/i, /grounded/i, /lucky/i, /probe/i, /structural gate: .*O1/, /read_system_log/];

let dir: string;
const ok = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
};
function report(store: string, extra: string[] = []) {
  const out = join(dir, `report-${store.split('/').pop()}`);
  ok(['report', 'build', '--traces', store, '--out', out, '--resamples', RESAMPLES, '--quiet', ...extra]);
  return { md: readFileSync(join(out, 'REPORT.md'), 'utf8'), json: JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')), files: readdirSync(out) };
}
const noStandoffOnly = (md: string) => {
  for (const re of STANDOFF_ONLY) expect(md, String(re)).not.toMatch(re);
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-generic-'));
});

describe('report build: the natural wide CSV', () => {
  let rows: NaturalRow[];
  let r: ReturnType<typeof report>;
  beforeAll(() => {
    rows = writeNaturalCsv(join(dir, 'results.csv'));
    ok(['ingest', 'csv', join(dir, 'results.csv'), '--traces', join(dir, 'S'), '--run-id', 'r1', '--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality']);
    r = report(join(dir, 'S'));
  }, 120_000);

  it('names each scorer with its kind and intervals; the exact ones are Clopper-Pearson on the rows', () => {
    expect(r.json.report).toBe('generic');
    expect(r.md).toMatch(/\| Subject model \| correct \(binary\) \| quality \(ordinal\) \|/);
    for (const model of MODELS) {
      const mine = rows.filter((x) => x.model === model);
      const k = mine.filter((x) => x.correct).length;
      const cp = clopperPearson(k, mine.length, { level: 0.95 });
      const got = r.json.generic.results.find((x: { scorer: string; subject: string }) => x.scorer === 'correct' && x.subject === model);
      expect(got).toMatchObject({ kind: 'binary', n: mine.length, sum: k, max_per_item: 2, clusters: 150 });
      expect([got.exact.lower, got.exact.upper]).toEqual([cp.lower, cp.upper]);
      expect(got.bootstrap.sampling).toBe('clustered');
      expect(r.md).toContain(`exact ${pctInterval(cp.lower, cp.upper)} (independent)`);
      const q = r.json.generic.results.find((x: { scorer: string; subject: string }) => x.scorer === 'quality' && x.subject === model);
      expect(q.exact).toBeNull(); // ordinal: no binomial interval
      expect(q.estimate).toBeCloseTo(mine.reduce((a, x) => a + x.quality, 0) / mine.length, 12);
      expect(q.bootstrap.lower).toBeLessThan(q.estimate);
    }
    noStandoffOnly(r.md);
  });

  it('pairwise per scorer: every pair, Holm and MDE; the same numbers as ci paired', () => {
    const cmp = r.json.generic.pairwise.comparisons;
    expect(cmp.map((c: { scorer: string }) => c.scorer)).toEqual([...Array(6).fill('correct'), ...Array(6).fill('quality')]);
    for (const c of cmp) {
      expect(c.pairs).toBe(300);
      expect(c.p_holm).toBeGreaterThanOrEqual(c.p_value);
      expect(c.mde).toBeGreaterThan(0);
    }
    const cli = JSON.parse(ok(['ci', 'paired', '--traces', join(dir, 'S'), '--metric', 'correct', '--a', 'acme-large', '--b', 'acme-small', '--resamples', RESAMPLES, '--format', 'json']).stdout);
    const mine = cmp.find((c: { scorer: string; a: string; b: string }) => c.scorer === 'correct' && c.a === 'acme-large' && c.b === 'acme-small');
    expect([mine.difference, mine.lower, mine.upper, mine.p_value, mine.mde]).toEqual([cli.mean_diff, cli.lower, cli.upper, cli.p_value, cli.mde]);
    expect(r.md).toMatch(/## 3\. Pairwise subject comparisons per scorer/);
  });

  it('judges: alpha at the ordinal level, equal to standoff agreement', () => {
    const j = r.json.generic.judges;
    expect(j.map((x: { scorer: string }) => x.scorer)).toEqual(['quality']);
    expect(j[0].judges.map((x: { judge: string }) => x.judge)).toEqual(['judge_a', 'judge_b', 'judge_c']);
    const cli = JSON.parse(ok(['agreement', '--traces', join(dir, 'S'), '--scorer', 'quality', '--measure', 'ordinal', '--resamples', RESAMPLES, '--format', 'json']).stdout);
    expect([j[0].alpha.alpha, j[0].alpha.lower, j[0].alpha.upper]).toEqual([cli.alpha, cli.lower, cli.upper]);
    expect(r.md).toMatch(/Krippendorff's alpha \(ordinal\)\*\* over all non-ERROR values, self-excluded ones included: \*\*0\.\d{3}\*\*/);
  });
});

describe('report build: not measured, metadata slices, --slice', () => {
  it('a scorer never measured for a subject is "not measured", never 0%; extra CSV columns slice', () => {
    const lines = ['model,item,ok,level,note'];
    for (let i = 0; i < 12; i++) {
      lines.push(`m1,i${i},${i % 3 === 0 ? 0 : 1},${i % 2 ? 'hard' : 'easy'},n${i}`);
      lines.push(`m2,i${i},,${i % 2 ? 'hard' : 'easy'},n${i}`);
    }
    writeFileSync(join(dir, 'partial.csv'), lines.join('\n') + '\n');
    ok(['ingest', 'csv', join(dir, 'partial.csv'), '--traces', join(dir, 'P'), '--run-id', 'p', '--subject', 'model', '--item', 'item', '--scores', 'ok']);
    const r = report(join(dir, 'P'), ['--slice', 'note']);
    // m2's empty cells left no score rows: each of its completed samples counts as not measured.
    const m2 = r.json.generic.results.find((x: { subject: string }) => x.subject === 'm2');
    expect(m2).toMatchObject({ n: 0, not_measured: 12, estimate: null, exact: null, bootstrap: null });
    expect(r.md).toMatch(/\| m2 \| not measured \(12 samples\)/);
    expect(r.md).not.toMatch(/\| m2 \| 0\.0%/);
    const m1 = r.json.generic.results.find((x: { subject: string }) => x.subject === 'm1');
    expect(m1).toMatchObject({ n: 12, sum: 8 });
    expect(r.json.generic.slices.dimensions).toEqual(['metadata.level', 'metadata.note']);
    const easy = r.json.generic.slices.rows.find((x: { dimension: string; level: string; subject: string }) => x.dimension === 'metadata.level' && x.level === 'easy' && x.subject === 'm1');
    expect(easy).toMatchObject({ n: 6, estimate: 4 / 6 });
    noStandoffOnly(r.md);
  }, 60_000);
});

describe('report build: scorer names', () => {
  it('a scorer named like a built-in is reported as score:NAME; a hostile name is escaped, not interpreted', () => {
    const hostile = 'x|y <b>z</b>';
    writeFileSync(join(dir, 'names.csv'), [`model,item,invalid,"${hostile}"`, 'm1,a,1,1', 'm1,b,0,0', 'm2,a,1,0', 'm2,b,1,1'].join('\n') + '\n');
    ok(['ingest', 'csv', join(dir, 'names.csv'), '--traces', join(dir, 'N'), '--run-id', 'n', '--subject', 'model', '--item', 'item', '--scores', `invalid,${hostile}`]);
    const r = report(join(dir, 'N'));
    expect(r.json.generic.scorers.map((s: { metric: string }) => s.metric)).toEqual(['score:invalid', hostile]);
    expect(r.md).toContain('| Subject model | score:invalid (binary) | x\\|y &lt;b&gt;z&lt;/b&gt; (binary) |');
    expect(r.json.generic.results.find((x: { scorer: string; subject: string }) => x.scorer === 'invalid' && x.subject === 'm2')).toMatchObject({ n: 2, sum: 2 });
    noStandoffOnly(r.md);
  }, 60_000);
});

describe('report build: every shared Inspect fixture', () => {
  const fixtures = readdirSync(join(ROOT, 'tests', 'fixtures', 'inspect')).filter((f) => f.endsWith('.eval'));
  it.each(fixtures)('%s: succeeds, names its scorers with intervals, reconciles the reported metrics', (f) => {
    const store = join(dir, `I-${f}`);
    ok(['ingest', 'inspect', join(ROOT, 'tests', 'fixtures', 'inspect', f), '--traces', store]);
    const r = report(store);
    noStandoffOnly(r.md);
    for (const s of r.json.generic.scorers) {
      expect(r.md).toContain(`| ${s.metric} (${s.kind}) |`);
      for (const x of r.json.generic.results.filter((y: { scorer: string }) => y.scorer === s.scorer)) expect(x.exact ?? x.bootstrap).not.toBeNull();
    }
    expect(r.md).toMatch(/exact \[|No scores are stored/);
    for (const rec of r.json.generic.reconciliation) if (rec.recomputed !== null) expect(rec.status).toBe('ok');
  }, 60_000);

  it('a log whose header reports another accuracy than its samples is FLAGged', () => {
    const members = readMembers(join(ROOT, 'tests', 'fixtures', 'inspect', 'log_streaming.eval'));
    const header = JSON.parse(memberText(members, 'header.json'));
    header.results.scores[0].metrics.accuracy.value = 0.5;
    const file = join(dir, 'doctored.eval');
    writeZip(file, members.map(([name, data]) => ({ name, data: name === 'header.json' ? JSON.stringify(header) : data })));
    const store = join(dir, 'doctored');
    ok(['ingest', 'inspect', file, '--traces', store]);
    const r = report(store);
    expect(r.json.generic.reconciliation).toEqual([expect.objectContaining({ metric: 'accuracy', scorer: 'match', reported: 0.5, recomputed: 0.75, status: 'FLAG' })]);
    expect(r.md).toMatch(/\*\*1 differ\*\* \(FLAG\)/);
    expect(r.md).toMatch(/\| accuracy \| — \| match \| 0\.5000 \| 0\.7500 \| \+0\.250000 \| 0\.2500 \/ 0\.2500 \| \*\*FLAG\*\* \|/);
    // The untouched log: value and stderr (0.25: sd of the two items' epoch means / sqrt 2) both match.
    const plainStore = join(dir, 'plain-streaming');
    ok(['ingest', 'inspect', join(ROOT, 'tests', 'fixtures', 'inspect', 'log_streaming.eval'), '--traces', plainStore]);
    const plain = report(plainStore);
    expect(plain.json.generic.reconciliation).toEqual([expect.objectContaining({ reported: 0.75, recomputed: 0.75, reported_stderr: 0.25, status: 'ok', n: 2 })]);
    expect(plain.json.generic.reconciliation[0].recomputed_stderr).toBeCloseTo(0.25, 12);
  }, 60_000);
});

describe('report build: real lm-eval output', () => {
  it.each(['gsm8k', 'asdiv-0.4.3', 'negotiationtom'])('%s: succeeds; every scorer with intervals; a section per suite', (name) => {
    const store = join(dir, `L-${name}`);
    ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', name), '--traces', store]);
    const r = report(store);
    noStandoffOnly(r.md);
    expect(r.json.generic.scorers.length).toBeGreaterThan(0);
    for (const s of r.json.generic.scorers) expect(r.md).toContain(`${s.metric} (${s.kind})`);
    expect(r.md).toMatch(/exact \[\d/);
    if (r.json.generic.suites.length > 1) for (const s of r.json.generic.suites) expect(r.md).toContain(`### Suite ${s}\n`);
    // asdiv's samples file is trimmed to 12 of the 50 documents its results file reports (README):
    // acc 12/12 recomputed vs 0.92 reported is a real disagreement, FLAGged; the others match.
    for (const rec of r.json.generic.reconciliation) if (rec.recomputed !== null) expect(rec.status, JSON.stringify(rec)).toBe(name === 'asdiv-0.4.3' ? 'FLAG' : 'ok');
    if (name === 'asdiv-0.4.3') expect(r.json.generic.reconciliation).toEqual([expect.objectContaining({ metric: 'acc', reported: 0.92, recomputed: 1, n: 12 })]);
    else expect(r.json.generic.reconciliation.some((x: { status: string }) => x.status === 'ok')).toBe(true);
  }, 60_000);
});

describe('a suite composing a subset of the core sections (issue 21 point 1: the core sections are there for a suite to compose)', () => {
  it('the sections it leaves out are null in results.json\'s generic, absent from REPORT.md and its contents, never zeros; the rest are numbered in order', async () => {
    const lines = ['model,item,ok,level'];
    for (let i = 0; i < 12; i++) for (const m of ['m1', 'm2']) lines.push(`${m},i${i},${(i + (m === 'm1' ? 0 : 1)) % 3 === 0 ? 0 : 1},${i % 2 ? 'hard' : 'easy'}`);
    writeFileSync(join(dir, 'subset.csv'), lines.join('\n') + '\n');
    ok(['ingest', 'csv', join(dir, 'subset.csv'), '--traces', join(dir, 'SUB'), '--run-id', 'sub', '--subject', 'model', '--item', 'item', '--scores', 'ok']);
    const { openReportStore, buildContext } = await import('../../src/report/sections/context.ts');
    const { computeSuite, renderSections, suiteFigures } = await import('../../src/report/suite.ts');
    const { coreSuite, summarySection, coreResultsSection, coreSlicesSection, coreSamplesSection } = await import('../../src/report/suites/core.ts');
    const { assembleGeneric } = await import('../../src/report/generic.ts');
    // Summary, results, slices and samples: no pairwise, judges or reconciliation.
    const subset = { ...coreSuite, id: 'subset', sections: () => [summarySection, coreResultsSection, coreSlicesSection, coreSamplesSection] };
    const store = await openReportStore(join(dir, 'SUB'), undefined);
    try {
      const ctx = await buildContext(store, { seed: 1, resamples: 200, level: 0.95, log: () => undefined, mixedSuites: true });
      const values = await computeSuite(subset, { ctx, slices: [], adjust: 'holm' }, () => undefined);
      const results = subset.results(ctx, values, []);
      const g = JSON.parse(JSON.stringify(results.generic));
      expect(g.pairwise).toBeNull();
      expect(g.judges).toBeNull();
      expect(g.reconciliation).toBeNull();
      expect(g.samples.map((s: { subject: string; samples: number }) => [s.subject, s.samples])).toEqual([['m1', 12], ['m2', 12]]);
      expect(g.results.find((x: { subject: string }) => x.subject === 'm1')).toMatchObject({ n: 12, sum: 8 });
      expect(g.slices.dimensions).toEqual(['metadata.level']);
      // Without the results section (the samples alone, on a fresh context): the results' fields are null too, not empty lists.
      const store2 = await openReportStore(join(dir, 'SUB'), undefined);
      const ctx2 = await buildContext(store2, { seed: 1, resamples: 200, level: 0.95, log: () => undefined, mixedSuites: true });
      const alone = await computeSuite({ ...coreSuite, sections: () => [coreSamplesSection] }, { ctx: ctx2, slices: [], adjust: 'holm' }, () => undefined).finally(() => store2.close());
      expect(alone.samples).toEqual(values.samples);
      expect(assembleGeneric(alone)).toMatchObject({ suites: null, scorers: null, results: null, corpus: null, pairwise: null, judges: null, slices: null, reconciliation: null, samples: values.samples });
      const input = { ctx, all: values };
      const md = subset.document(ctx, results, renderSections(subset, input, suiteFigures(subset, input)));
      expect(md).toContain('1. [Run summary](#1-run-summary)\n2. [Results per subject and scorer](#2-results-per-subject-and-scorer)\n3. [Slices](#3-slices)\n4. [Invalid and errored samples](#4-invalid-and-errored-samples)\n5. [Method notes](#method-notes)');
      for (const h of ['## 2. Results per subject and scorer', '## 3. Slices', '## 4. Invalid and errored samples']) expect(md).toContain(h);
      expect(md).not.toMatch(/Pairwise|Judges and agreement|Reported vs recomputed|standoff ci paired/);
      // The browser's sets and links are built from what is there.
      const sets = subset.browserSets(results, await subset.subjectSources(ctx));
      expect(sets.length).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  }, 120_000);
});
