/**
 * Issue 26's four-cell table in the Standoff O1 report (section 5) and issue 21's slice links,
 * without a browser: the table's counts are `standoff compare`'s (its JSON and Markdown output on
 * the same store), every four-cell count and every slice cell of index.html opens a set whose
 * members an independent SQL query over the store finds, and the build's reconciliation of linked
 * counts fails when a count and its set disagree: the loader (a set's SQL must find the report's
 * samples and, for a four-cell count, its items) and the page (a linked cell must print the
 * set's count). The same for the generic report's slices (a CSV with metadata columns).
 * The clicks in Chromium: html-browser.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAnyReport, buildReport, type BuildReportResult, type GenericReportResults, type ReportResults } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { loadComparison } from '../../src/decide/load-side.ts';
import { renderCompareMarkdown } from '../../src/decide/compare-markdown.ts';
import { buildEpisodeSets } from '../../src/report/html/episode-sets.ts';
import { loadEpisodeBrowser } from '../../src/report/html/load-episodes.ts';
import { buildIndexHtml, printedCount } from '../../src/report/html/build-index-html.ts';
import { fourCellKey } from '../../src/report/html/pair-sets.ts';
import { METRIC_LABEL, type MainMetric } from '../../src/report/sections/context.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { ROOT } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-o1-links-'));
const traces = join(ROOT, 'traces');
let demo: BuildReportResult;
let r: ReportResults;

beforeAll(async () => {
  demo = await buildReport({ traces, out: join(dir, 'demo'), resamples: 200 });
  r = demo.results;
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const page = (out: string) => readFileSync(join(out, 'index.html'), 'utf8');
type Embedded = { sets: { key: string; count: number; members: number[]; command: string }[]; episodes: { run_id: string; episode_id: string; scenario_id: string; epoch: number }[] };
const embedded = (html: string): Embedded => JSON.parse(/<script type="application\/json" id="standoff-browser">(.*?)<\/script>/s.exec(html)![1]);
/** The text of each linked cell of the report's tables (not the browser's index of sets), by the set it opens. */
const linkedTexts = (html: string, set: number) => [...html.slice(0, html.indexOf('<section id="episode-browser">')).matchAll(new RegExp(`<a class="count" href="#browser" data-set="${set}">([^<]*)</a>`, 'g'))].map((m) => m[1]);

async function sql(store: string, text: string, params: Record<string, string | boolean> = {}) {
  const s = await openStore(store);
  try {
    return (await query(s.conn, text, params)).rows;
  } finally {
    s.close();
  }
}

const binary = () => r.pairwise.comparisons.filter((c) => c.four_cell);
const label = (m: string) => METRIC_LABEL[m as MainMetric];

describe('section 5: the four cells of each binary metric', () => {
  it('renders a row per binary comparison with the counts of results.json, under the pairwise table', () => {
    const md = readFileSync(join(demo.out, 'REPORT.md'), 'utf8');
    const s5 = md.slice(md.indexOf('## 5. Pairwise subject comparisons'), md.indexOf('### Ranking'));
    expect(binary().length).toBe(6); // evidence and policy action, 3 pairs each; alignment is not 0/1
    expect(s5).toContain('| Metric | A | B | Pairs | Both right | Only A right | Only B right | Both wrong |');
    expect(s5).toMatch(/Binary metrics item by item .* In index\.html each count opens its items' samples, A's and B's\./);
    for (const c of binary()) {
      const f = c.four_cell!;
      expect(f.both_right + f.only_a + f.only_b + f.both_wrong).toBe(c.pairs);
      expect(c.difference).toBeCloseTo((f.only_a - f.only_b) / c.pairs, 12);
      expect(s5).toContain(`| ${label(c.metric)} | ${c.a} | ${c.b} | ${c.pairs} | ${f.both_right} | ${f.only_a} | ${f.only_b} | ${f.both_wrong} |`);
    }
    expect(s5).not.toMatch(/\| Reasoning\/action alignment \| [^|]+ \| [^|]+ \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \|$/m);
  });

  it('its counts are standoff compare\'s (A the baseline, B the candidate), in its JSON and its Markdown', async () => {
    for (const c of binary()) {
      const s = await loadComparison({ baseline: `subject:${c.a}`, candidate: `subject:${c.b}`, traces, metrics: [c.metric], level: 0.95, seed: 1, resamples: 50, adjust: 'holm' });
      const row = s.rows[0];
      expect(row.pairs).toBe(c.pairs);
      expect(row.four_cell).toMatchObject({ both_right: c.four_cell!.both_right, only_baseline: c.four_cell!.only_a, only_candidate: c.four_cell!.only_b, both_wrong: c.four_cell!.both_wrong });
      const f = c.four_cell!;
      expect(renderCompareMarkdown(s, s.baseline.ref, s.candidate.ref)).toContain(`both right ${f.both_right}, only baseline ${f.only_a}, only candidate ${f.only_b}, both wrong ${f.both_wrong}`);
    }
  }, 120_000);

  it('each count opens exactly its items, A\'s and B\'s samples (independent SQL over the store)', async () => {
    const html = page(demo.out);
    const d = embedded(html);
    const obs = (scorer: string, extra: string) =>
      `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch, ${scorer === 'gathered_evidence' ? 'CAST(e.gathered_evidence AS INT)' : 's.value'} AS v FROM episodes e
       ${scorer === 'gathered_evidence' ? '' : `JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id AND s.scorer = 'policy_compliant_action' AND NOT s.noanswer`}
       WHERE e.status <> 'error' AND e.subject_model = ${extra}`;
    let checked = 0;
    for (const c of binary()) {
      const f = c.four_cell!;
      for (const [cell, n, va, vb] of [['both_right', f.both_right, 1, 1], ['only_a', f.only_a, 1, 0], ['only_b', f.only_b, 0, 1], ['both_wrong', f.both_wrong, 0, 0]] as const) {
        const i = d.sets.findIndex((s) => s.key === fourCellKey(c.suite, c.scorer, c.a, c.b, cell));
        expect(i, `${c.metric} ${c.a} ${c.b} ${cell}`).toBeGreaterThanOrEqual(0);
        expect(d.sets[i].count).toBe(2 * n);
        expect(linkedTexts(html, i)).toEqual([String(n)]); // the one cell that opens it prints n
        const want = await sql(
          traces,
          `WITH a AS (${obs(c.metric, '$a')} AND v IS NOT NULL), b AS (${obs(c.metric, '$b')} AND v IS NOT NULL),
           p AS (SELECT a.run_id AS r1, a.episode_id AS e1, b.run_id AS r2, b.episode_id AS e2 FROM a JOIN b USING (scenario_id, epoch) WHERE a.v = ${va} AND b.v = ${vb})
           SELECT r1 AS run_id, e1 AS episode_id FROM p UNION ALL SELECT r2, e2 FROM p ORDER BY 1, 2`,
          { a: c.a, b: c.b },
        );
        const got = d.sets[i].members.map((k) => d.episodes[k]);
        expect(got.map((e) => `${e.run_id}|${e.episode_id}`).sort()).toEqual(want.map((w) => `${w.run_id}|${w.episode_id}`).sort());
        expect(new Set(got.map((e) => `${e.scenario_id}|${e.epoch}`)).size).toBe(n);
        checked += n;
      }
    }
    expect(checked).toBe(binary().reduce((a, c) => a + c.pairs, 0));
  }, 120_000);
});

describe('section 4: every slice cell opens its trials', () => {
  it('a cell with trials links to the subject\'s measured episodes in the slice; 0/0 and not measured cells do not', async () => {
    const html = page(demo.out);
    const d = embedded(html);
    const cells = r.slices.rows.filter((x) => x.measured && x.trials > 0);
    expect(cells.length).toBe(69); // 3 subjects x 3 metrics x 8 slice values, less policy action on ambiguous
    for (const x of cells) {
      const i = d.sets.findIndex((s) => s.key === `slice:${JSON.stringify([x.dimension, x.value, x.metric, x.subject])}`);
      expect(i, `${x.dimension} ${x.value} ${x.metric} ${x.subject}`).toBeGreaterThanOrEqual(0);
      expect(d.sets[i].count).toBe(x.trials);
      const [text] = linkedTexts(html, i);
      expect(text).toContain(`/${x.trials})`);
    }
    // Spot check against SQL: hasty's evidence on clinical_triage (9/30 in the table).
    const x = cells.find((c) => c.dimension === 'domain' && c.value === 'clinical_triage' && c.subject === 'sim:hasty' && c.metric === 'gathered_evidence')!;
    const i = d.sets.findIndex((s) => s.key === `slice:${JSON.stringify(['domain', 'clinical_triage', 'gathered_evidence', 'sim:hasty'])}`);
    const want = await sql(traces, `SELECT run_id, episode_id FROM episodes WHERE subject_model = 'sim:hasty' AND domain = 'clinical_triage' AND status <> 'error' AND gathered_evidence IS NOT NULL ORDER BY ALL`);
    expect(want.length).toBe(x.trials);
    expect(d.sets[i].members.map((k) => `${d.episodes[k].run_id}|${d.episodes[k].episode_id}`).sort()).toEqual(want.map((w) => `${w.run_id}|${w.episode_id}`));
    expect(html).not.toMatch(/<a class="count"[^>]*>— \(0\/0\)<\/a>/);
  });
});

describe('the reconciliation of linked counts fails when a count and its set disagree', () => {
  it('the loader: a four-cell count one off (samples, or items) stops the build with a one-line data error', async () => {
    const store = await openStore(traces);
    try {
      // The demo's subjects are its models (one run).
      const sources = (await query(store.conn, 'SELECT DISTINCT subject_model AS subject, run_id, subject_model FROM episodes ORDER BY ALL')).rows.map((x) => ({ subject: String(x.subject), run_id: String(x.run_id), subject_model: String(x.subject_model) }));
      const sets = buildEpisodeSets(r, sources).filter((s) => s.key.startsWith('four:'));
      expect(sets.length).toBe(24);
      await expect(loadEpisodeBrowser(store.conn, sets, sources)).resolves.toBeDefined();
      // results.json says one more item than the store holds: the set's SQL finds two samples fewer.
      const c = r.pairwise.comparisons.find((x) => x.four_cell && x.four_cell.only_a > 0)!;
      const tampered = { ...r, pairwise: { ...r.pairwise, comparisons: r.pairwise.comparisons.map((x) => (x === c ? { ...x, four_cell: { ...x.four_cell!, only_a: x.four_cell!.only_a + 1 } } : x)) } };
      const bad = buildEpisodeSets(tampered, sources).filter((s) => s.key === fourCellKey(c.suite, c.scorer, c.a, c.b, 'only_a'));
      await expect(loadEpisodeBrowser(store.conn, bad, sources)).rejects.toThrow(/finds \d+ episodes but the report counts \d+/);
      // Right number of samples, wrong number of items (a set that held one item's samples twice).
      const good = sets.find((s) => s.key === fourCellKey(c.suite, c.scorer, c.a, c.b, 'only_a'))!;
      await expect(loadEpisodeBrowser(store.conn, [{ ...good, items: good.items! - 1 }], sources)).rejects.toThrow(/covers \d+ items but the report counts \d+/);
    } finally {
      store.close();
    }
  }, 120_000);

  it('the page: a cell that prints another count than the set it opens stops the build', () => {
    expect(printedCount('67')).toBe(67);
    expect(printedCount('1,234')).toBe(1234);
    expect(printedCount('91.7% (27.5/30) cl. [86.7, 96.7]')).toBe(30);
    expect(printedCount('66.7%')).toBeNull();
    const md = '| Metric | A | B | Pairs | Both right | Only A right | Only B right | Both wrong |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n| m | x | y | 4 | 1 | 2 | 1 | 0 |\n';
    const set = (shows: number) => ({ key: 'k', title: 't', count: 4, sql: '', members: [], scorer: null, shows });
    const browser = (shows: number) => ({ sets: [set(shows)], episodes: [], has_messages: false, transcripts_omitted: 0, budget_bytes: 0, set_list_cap: 1, max_episodes: 1, sets_left_out: 0 });
    const linkOnlyA = () => (h: string[], _r: number, col: number) => (h[col] === 'Only A right' ? 0 : null);
    const assets = { vega: '', interpreter: '' };
    expect(buildIndexHtml({ suite: 's', countLinks: linkOnlyA, markdown: md, figures: [], browser: browser(2) }, assets)).toContain('<a class="count" href="#browser" data-set="0">2</a>');
    expect(() => buildIndexHtml({ suite: 's', countLinks: linkOnlyA, markdown: md, figures: [], browser: browser(3) }, assets)).toThrow(/the cell "2" \(column "Only A right"\) prints 2 but opens "k", which holds 3/);
  });
});

describe('the generic report: slice rows link n and value to their samples', () => {
  it('a CSV with metadata columns: each row opens the samples of its level, subject and scorer (SQL over the store)', async () => {
    const lines = ['model,item,ok,level,note'];
    for (let i = 0; i < 12; i++) {
      lines.push(`m1,i${i},${i % 3 === 0 ? 0 : 1},${i % 2 ? 'hard' : 'easy'},n${i % 4}`);
      lines.push(`m2,i${i},${i % 4 ? 1 : i === 4 ? '' : 0},${i % 2 ? 'hard' : 'easy'},n${i % 4}`);
    }
    writeFileSync(join(dir, 'sliced.csv'), lines.join('\n') + '\n');
    const store = join(dir, 'sliced');
    await ingestCsv([join(dir, 'sliced.csv')], { traces: store, runId: 'p', now: new Date('2026-01-01T00:00:00Z'), flags: { subject: 'model', item: 'item', scores: ['ok'] } });
    const rep = await buildAnyReport({ traces: store, out: join(dir, 'sliced-report'), resamples: 200, slices: ['note'] });
    const g = (rep.results as GenericReportResults).generic;
    expect(g.slices.dimensions).toEqual(['metadata.level', 'metadata.note']);
    const html = page(rep.out);
    const d = embedded(html);
    for (const x of g.slices.rows) {
      const i = d.sets.findIndex((s) => s.key === `slice:${JSON.stringify([x.dimension, x.level, x.suite, x.scorer, x.subject])}`);
      expect(i).toBeGreaterThanOrEqual(0);
      expect(d.sets[i].count).toBe(x.n);
      // n and the value (both cells of the row) open it; n prints the set's count.
      expect(linkedTexts(html, i)[0]).toBe(String(x.n));
      expect(linkedTexts(html, i).length).toBe(2);
      const key = x.dimension.replace('metadata.', '');
      const want = await sql(store, `SELECT e.run_id, e.episode_id FROM episodes e JOIN scores s USING (run_id, episode_id) WHERE s.scorer = 'ok' AND s.value IS NOT NULL AND e.subject_model = $m AND json_extract_string(e.metadata, '$.' || $k) = $l`, { m: x.subject, k: key, l: x.level });
      expect(d.sets[i].members.map((k) => `${d.episodes[k].run_id}|${d.episodes[k].episode_id}`).sort()).toEqual(pairs(want));
    }
    // m2's blank cell (item i4, level easy) is in no denominator: its easy row counts 5 samples.
    expect(g.slices.rows.find((x) => x.dimension === 'metadata.level' && x.level === 'easy' && x.subject === 'm2')!.n).toBe(5);
  }, 120_000);
});

const pairs = (rows: Record<string, unknown>[]) => rows.map((w) => `${w.run_id}|${w.episode_id}`).sort();
