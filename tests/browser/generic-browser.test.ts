/**
 * The sample browser of `index.html` on stores that are not the Standoff suite, in a real headless
 * Chromium (Debian's, playwright-core; tests/helpers/browser.ts), and the Standoff demo beside
 * them. Stores: a researcher's CSV (4 models x 150 items x 2 epochs, 0/1 `correct`, 1-5 `quality`
 * with three judges), the shared Inspect logs (several tasks), a generic run whose targets,
 * answers, explanations, metadata and messages are hostile HTML, and the demo run in `traces/`.
 *
 * Checks: figures render with no console error and no request; every result cell is a link (in
 * a store with several suites too) and opens exactly the samples an independent SQL query finds;
 * the four cells of a binary comparison match SQL and open their items' samples; a judge pair's
 * agreement cell opens the samples the two judges graded differently; the sample panel shows
 * target, answer, each scorer's value and explanation, metadata and transcript, and Standoff's
 * fields only on Standoff episodes; search and filters by subject and scorer value; the caps say
 * what they left out; hostile text stays text.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildAnyReport, type BuildReportResult, type GenericReportResults, type ReportResults } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import type { RunBundle } from '../../src/schema/tables.ts';
import { writeNaturalCsv } from '../helpers/natural-csv.ts';
import { browserAvailable, launchBrowser, openPage, type Browser } from '../helpers/browser.ts';

/** Browser globals inside page.evaluate callbacks (the project's TS has no DOM lib). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any;

const ROOT = resolve(import.meta.dirname, '../..');
const INSPECT_LOGS = '/work/shared/fixtures/inspect';
const dir = mkdtempSync(join(tmpdir(), 'standoff-generic-browser-'));
const HAVE_BROWSER = browserAvailable();
const T = 240_000;
const XSS = '<img src=x onerror="window.__pwned=1">';

/** A generic (Inspect-sourced) run whose every free text is hostile: 2 subjects x 4 items, scorer `match`, two judges. */
function hostileGenericBundle(): RunBundle {
  const run = 'hostile-generic';
  const subjects = ['m-plain', `m-${XSS}`];
  const episodes = subjects.flatMap((m, s) =>
    [0, 1, 2, 3].map((i) => ({
      run_id: run, episode_id: `${m}/${i}`, subject_model: m, subject_family: null, scenario_id: `item-${i}`, domain: null, decision_type: null, variant: null, epoch: 1,
      target: `${XSS} target ${i}`, status: 'valid' as const, invalid_reason: null, decision_tool: null, decision_args: null, gathered_evidence: null, log_reads: null, turns: 1,
      input_tokens: null, output_tokens: null, latency_ms: null, started_at: null, error: null, metadata: JSON.stringify({ subject: i % 2 ? 'algebra' : 'geometry', note: XSS, s, endpoint: 'http://alice:s3cretP4ss@127.0.0.1:9/v1' }), truncated: null, attempts: null,
    })),
  );
  const msg = (e: (typeof episodes)[number], seq: number, role: 'user' | 'assistant', content: string) => ({ run_id: run, episode_id: e.episode_id, seq, role, content, reasoning: null, tool_call_id: null, tool_name: null, tool_args: null, tool_ok: null, tool_error: null, finish_reason: null, discarded: null, attempt: null, original_tool_call_id: null });
  return {
    run: { run_id: run, created_at: '2026-11-29T10:00:00.000Z', source: 'inspect', suite: 'hostile_task', status: 'success', config: '{}', seed: 1, epochs: 1, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null },
    episodes,
    messages: episodes.flatMap((e) => [msg(e, 0, 'user', `question ${XSS}`), msg(e, 1, 'assistant', `answer ${XSS}`)]),
    scores: episodes.map((e, k) => ({ run_id: run, episode_id: e.episode_id, scorer: 'match', value: (k * 7) % 3 === 0 ? 1 : 0, answer: `${XSS} answer`, noanswer: false, explanation: `${XSS} because` })),
    judgments: episodes.flatMap((e, k) => ['judge-a', 'judge-b'].map((j, n) => ({ run_id: run, episode_id: e.episode_id, scorer: 'grade', judge_model: j, judge_family: null, verdict: null, value: n === 1 && k % 3 === 0 ? 0 : 1, excluded_self: false, raw: `${XSS} raw` }))),
  } as unknown as RunBundle;
}

type AnyReport = BuildReportResult<ReportResults | GenericReportResults>;
let browser: Browser;
const reports = {} as Record<'csv' | 'capped' | 'inspect' | 'hostile' | 'demo', AnyReport>;
const stores: Record<string, string> = { demo: join(ROOT, 'traces') };

beforeAll(async () => {
  if (!HAVE_BROWSER) return;
  stores.csv = join(dir, 'csv');
  stores.capped = stores.csv;
  stores.inspect = join(dir, 'inspect');
  stores.hostile = join(dir, 'hostile');
  writeNaturalCsv(join(dir, 'r.csv'));
  await ingestCsv([join(dir, 'r.csv')], { traces: stores.csv, runId: 'r1', now: new Date('2026-01-01T00:00:00Z'), flags: { subject: 'model', item: 'sample_id', epoch: 'epoch', scores: ['correct', 'quality'], judgeColumns: ['judge_a', 'judge_b', 'judge_c'], judgedScorer: 'quality' } });
  await ingestInspect([INSPECT_LOGS], { traces: stores.inspect });
  await writeRun(stores.hostile, hostileGenericBundle());
  const opts = (k: string) => ({ traces: stores[k], out: join(dir, `r-${k}`), resamples: 200, allowJudgeErrors: 1000, allowTruncated: 1000 });
  for (const k of ['csv', 'inspect', 'hostile', 'demo'] as const) reports[k] = await buildAnyReport(opts(k));
  reports.capped = await buildAnyReport({ ...opts('capped'), indexHtml: { listCap: 5, maxEpisodes: 40 } });
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const html = (k: keyof typeof reports) => join(reports[k].out, 'index.html');
const generic = (k: keyof typeof reports) => (reports[k].results as GenericReportResults).generic;

async function sql(store: string, text: string, params: Record<string, string | boolean | number> = {}) {
  const s = await openStore(store);
  try {
    return (await query(s.conn, text, params as Record<string, string>)).rows;
  } finally {
    s.close();
  }
}

const pairs = (rows: Record<string, unknown>[]) => rows.map((r) => `${r.run_id}|${r.episode_id}`).sort();

/** The (run_id, episode_id) pairs the open list shows (visible rows only), sorted. */
async function listed(page: Page): Promise<string[]> {
  const ids = await page.$$eval('#browser-list tr[data-episode]:not([hidden])', (rows) => rows.map((r) => `${r.getAttribute('data-run')}|${r.getAttribute('data-episode-id')}`));
  return ids.sort();
}

/** The nth table whose header cells start with `heads` and that has every header in `also`. */
async function tableWith(page: Page, heads: string[], also: string[] = [], nth = 0) {
  const i = await page.$$eval(
    'table.sortable',
    (ts, [h, a, n]) => {
      const hits = ts.map((t, k) => [k, [...t.querySelectorAll('thead th')].map((th) => th.textContent.trim())] as const).filter(([, hs]) => (h as string[]).every((x, j) => hs[j] === x) && (a as string[]).every((x) => hs.includes(x)));
      return hits[n as number]?.[0] ?? -1;
    },
    [heads, also, nth] as const,
  );
  expect(i, `a table headed ${heads.join(' | ')}`).toBeGreaterThanOrEqual(0);
  return page.locator('table.sortable').nth(i);
}

/** The row of a table whose first cells read `cells`. */
async function rowWith(table: ReturnType<Page['locator']>, cells: string[]) {
  const i = await table.locator('tbody tr').evaluateAll((rows, want) => rows.findIndex((r) => want.every((x, j) => r.children[j]?.textContent.trim() === x)), cells);
  expect(i, `a row starting ${cells.join(' | ')}`).toBeGreaterThanOrEqual(0);
  return table.locator('tbody tr').nth(i);
}

async function closePanel(page: Page) {
  if (await page.locator('#browser:not([hidden])').count()) await page.click('#browser-close');
}

describe.runIf(HAVE_BROWSER)('the sample browser on stores that are not the Standoff suite', () => {
  it('CSV: figures render, every result cell is a link to exactly the samples SQL finds', async () => {
    const { page, log } = await openPage(browser, html('csv'));
    expect(await page.locator('figure.vega').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('figure.vega[data-rendered="true"]').count()).toBe(await page.locator('figure.vega').count());
    expect(await page.locator('figure.vega svg .mark-symbol path, figure.vega svg .mark-rule line, figure.vega svg .mark-rect path').count()).toBeGreaterThan(10);
    const g = generic('csv');
    const results = await tableWith(page, ['Subject model', 'correct (binary)']);
    const subjects = [...new Set(g.results.map((r) => r.subject))];
    expect(await results.locator('tbody td a.count').count()).toBe(subjects.length * 2);
    for (const [col, scorer] of [[2, 'correct'], [3, 'quality']] as const) {
      const row = results.locator('tbody tr').nth(1);
      const subject = (await row.locator('td').first().textContent())!;
      await row.locator(`td:nth-child(${col}) a.count`).click();
      await page.waitForSelector('#browser-list tr[data-episode]');
      const want = await sql(stores.csv, `SELECT s.run_id, s.episode_id FROM scores s JOIN episodes e USING (run_id, episode_id) WHERE e.subject_model = $m AND s.scorer = $s AND s.value IS NOT NULL AND NOT s.noanswer`, { m: subject, s: scorer });
      expect(await listed(page)).toEqual(pairs(want));
      expect(await page.textContent('#browser-list thead')).toMatch(/Score.*Target.*Answer/);
      await closePanel(page);
    }
    // The first screen's compact results link too.
    expect(await (await tableWith(page, ['Scorer', 'Subject model', 'Estimate'])).locator('tbody a.count').count()).toBe(8 * 2);
    expect(log.errors).toEqual([]);
    expect(log.foreign).toEqual([]);
    await page.close();
  }, T);

  it('CSV: the four cells of each binary comparison match SQL and open their items, A\'s and B\'s samples', async () => {
    const { page } = await openPage(browser, html('csv'));
    const cmp = generic('csv').pairwise.comparisons.filter((c) => c.four_cell);
    expect(cmp.length).toBe(6);
    const four = await tableWith(page, ['Scorer', 'A', 'B'], ['Both right']);
    const obs = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch, s.value FROM scores s JOIN episodes e USING (run_id, episode_id) WHERE s.scorer = 'correct' AND s.value IS NOT NULL AND e.subject_model = `;
    for (const [r, c] of cmp.slice(0, 2).entries()) {
      const cells = await sql(stores.csv, `WITH a AS (${obs} $a), b AS (${obs} $b) SELECT CAST(count(*) FILTER (WHERE a.value = 1 AND b.value = 1) AS INT) AS rr, CAST(count(*) FILTER (WHERE a.value = 1 AND b.value = 0) AS INT) AS ra,
        CAST(count(*) FILTER (WHERE a.value = 0 AND b.value = 1) AS INT) AS rb, CAST(count(*) FILTER (WHERE a.value = 0 AND b.value = 0) AS INT) AS ww FROM a JOIN b USING (scenario_id, epoch)`, { a: c.a, b: c.b });
      const row = four.locator('tbody tr').nth(r);
      const shown = await row.locator('td').allTextContents();
      expect(shown.slice(0, 3)).toEqual(['correct', c.a, c.b]);
      expect(shown.slice(4).map(Number)).toEqual([cells[0].rr, cells[0].ra, cells[0].rb, cells[0].ww]);
      // A − B of the pairwise table is (only A − only B) / pairs.
      expect(c.difference).toBeCloseTo((Number(cells[0].ra) - Number(cells[0].rb)) / c.pairs, 12);
      await row.locator('td:nth-child(6) a.count').click(); // only A right
      await page.waitForSelector('#browser-list tr[data-episode]');
      const want = await sql(stores.csv, `WITH a AS (${obs} $a), b AS (${obs} $b), p AS (SELECT a.run_id AS r1, a.episode_id AS e1, b.run_id AS r2, b.episode_id AS e2 FROM a JOIN b USING (scenario_id, epoch) WHERE a.value = 1 AND b.value = 0)
        SELECT r1 AS run_id, e1 AS episode_id FROM p UNION ALL SELECT r2, e2 FROM p`, { a: c.a, b: c.b });
      expect(want.length).toBe(2 * Number(cells[0].ra));
      expect(await listed(page)).toEqual(pairs(want));
      // Filter by subject: A's half; by score: B's (all 0) half.
      await page.selectOption('#browser-subject', c.a);
      expect((await listed(page)).length).toBe(Number(cells[0].ra));
      await page.selectOption('#browser-subject', '');
      await page.selectOption('#browser-score', 'correct = 0');
      expect((await listed(page)).length).toBe(Number(cells[0].ra));
      expect(await page.textContent('#browser-list .filter-count')).toContain(`${cells[0].ra} of the ${want.length} listed shown`);
      await closePanel(page);
    }
    await page.close();
  }, T);

  it("CSV: a judge pair's agreement cell opens the samples the two judges graded differently", async () => {
    const { page } = await openPage(browser, html('csv'));
    const j = generic('csv').judges.find((x) => x.scorer === 'quality')!;
    const p = j.pairs[0];
    const row = await rowWith(await tableWith(page, ['Judge A', 'Judge B', 'Both rated', 'Same value']), [p.a, p.b]);
    await row.locator('td:nth-child(4) a.count').click();
    await page.waitForSelector('#browser-list tr[data-episode]');
    const want = await sql(stores.csv, `SELECT a.run_id, a.episode_id FROM judgments a JOIN judgments b USING (run_id, episode_id) WHERE a.scorer = 'quality' AND b.scorer = 'quality' AND a.judge_model = $a AND b.judge_model = $b AND a.value IS NOT NULL AND b.value IS NOT NULL AND a.value <> b.value`, { a: p.a, b: p.b });
    expect(want.length).toBe(p.bothRated - p.agreements);
    expect(await listed(page)).toEqual(pairs(want));
    // The panel of a CSV sample: no Standoff field; each scorer's value; the judges' values.
    await page.locator('#browser-list tr[data-episode]').first().click();
    expect(await page.getAttribute('#browser-transcript', 'data-kind')).toBe('sample');
    const facts = (await page.textContent('#browser-transcript dl.facts'))!;
    expect(facts).not.toMatch(/Decision|Log reads|Evidence gathered/);
    expect(facts).toMatch(/Task.*Item.*Epoch.*Status.*Target/s);
    expect(await page.$$eval('#browser-transcript table.scores tbody tr td:first-child', (t) => t.map((x) => x.textContent).sort())).toEqual(['correct', 'quality']);
    expect(await page.locator('#browser-transcript table.judgments tbody tr').count()).toBe(3);
    await page.close();
  }, T);

  it('CSV with small caps: each list says how many it left out and gives the query for all', async () => {
    const { page } = await openPage(browser, html('capped'));
    await (await tableWith(page, ['Subject model', 'correct (binary)'])).locator('tbody td:nth-child(2) a.count').first().click();
    await page.waitForSelector('#browser-list tr[data-episode]');
    expect(await page.locator('#browser-list tr[data-episode]').count()).toBe(5);
    expect(await page.textContent('#browser-list .set-count')).toMatch(/^300 samples: the first 5 are listed, 295 left out \(the page embeds at most 5 per list and 40 in all\)/);
    expect(await page.textContent('#browser-list pre.sql')).toMatch(/^standoff sql 'SELECT /);
    await page.close();
  }, T);

  it('Inspect logs (several tasks): every result cell of every task is a link; the panel shows target, answer, explanation, metadata and transcript', async () => {
    const { page, log } = await openPage(browser, html('inspect'));
    const g = generic('inspect');
    expect(g.suites.length).toBeGreaterThan(1);
    const measured = g.results.filter((r) => r.n > 0);
    // Each suite's table: one link per measured (subject, scorer).
    const linked = await page.$$eval('h3', (hs) => hs.filter((h) => /^Suite /.test(h.textContent)).map((h) => { let t = h.nextElementSibling; while (t && !t.querySelector('table')) t = t.nextElementSibling; return t ? t.querySelectorAll('tbody a.count').length : 0; }));
    expect(linked.reduce((a, b) => a + b, 0)).toBe(measured.length);
    for (const r of measured) {
      const suiteTable = page.locator('h3', { hasText: `Suite ${r.suite}` }).locator('xpath=following-sibling::div[contains(@class,"table-wrap")][1]');
      const row = await rowWith(suiteTable, [r.subject]);
      const sc = g.scorers.filter((s) => s.suite === r.suite).findIndex((s) => s.scorer === r.scorer);
      await row.locator(`td:nth-child(${sc + 2}) a.count`).click();
      expect(await page.textContent('#browser-title')).toContain(r.suite);
      expect(await page.locator('#browser-list tr[data-episode]').count()).toBe(r.n);
      await closePanel(page);
    }
    // A sample with a transcript, metadata and an explanation.
    const e = (await sql(stores.inspect, `SELECT e.run_id, e.episode_id, e.subject_model, r.suite, s.scorer FROM episodes e JOIN runs r USING (run_id) JOIN scores s USING (run_id, episode_id) WHERE s.explanation IS NOT NULL AND e.metadata IS NOT NULL AND e.status <> 'error' AND s.value IS NOT NULL AND NOT s.noanswer ORDER BY ALL LIMIT 1`))[0];
    expect(e).toBeDefined();
    const suiteTable = page.locator('h3', { hasText: `Suite ${e.suite}` }).locator('xpath=following-sibling::div[contains(@class,"table-wrap")][1]');
    const sc = g.scorers.filter((s) => s.suite === e.suite).findIndex((s) => s.scorer === e.scorer);
    const label = g.results.some((x) => x.suite === e.suite && x.subject === e.subject_model) ? String(e.subject_model) : `${e.subject_model} @ ${e.run_id}`;
    await (await rowWith(suiteTable, [label])).locator(`td:nth-child(${sc + 2}) a.count`).click();
    await page.locator(`#browser-list tr[data-episode-id="${e.episode_id}"]`).click();
    expect(await page.getAttribute('#browser-transcript', 'data-kind')).toBe('sample');
    expect(await page.textContent('#browser-transcript dl.facts')).not.toMatch(/Decision|Log reads|Evidence gathered/);
    expect(await page.locator('#browser-transcript pre.metadata').count()).toBe(1);
    expect(await page.$$eval('#browser-transcript table.scores thead th', (t) => t.map((x) => x.textContent))).toEqual(['Scorer', 'Value', 'Answer', 'Explanation']);
    const stored = await sql(stores.inspect, `SELECT count(*)::INT AS n FROM messages WHERE run_id = $r AND episode_id = $e`, { r: String(e.run_id), e: String(e.episode_id) });
    expect(await page.locator('#browser-transcript li.message').count()).toBe(stored[0].n);
    expect(log.errors).toEqual([]);
    expect(log.foreign).toEqual([]);
    await page.close();
  }, T);

  it('hostile targets, answers, explanations, metadata, judges and messages are shown as text; nothing runs', async () => {
    // A credential in stored metadata never reaches the page (masked as in run configs).
    expect(readFileSync(html('hostile'), 'utf8')).not.toContain('s3cretP4ss');
    const { page, log } = await openPage(browser, html('hostile'));
    const check = async (where: string) => {
      expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned), where).toBeUndefined();
      expect(await page.locator('img, [onerror]').count(), where).toBe(0);
      expect(log.dialogs, where).toEqual([]);
      expect(log.foreign, where).toEqual([]);
    };
    const links = await page.locator('a.count').count();
    expect(links).toBeGreaterThan(8);
    let shown = 0;
    for (let i = 0; i < links; i++) {
      await page.locator('a.count').nth(i).click();
      const rows = page.locator('#browser-list tr[data-episode]');
      if ((await rows.count()) === 0) {
        await closePanel(page);
        continue;
      }
      expect(await page.textContent('#browser-list tbody')).toContain(XSS);
      await rows.first().click();
      const text = (await page.textContent('#browser-transcript'))!;
      for (const part of ['http://[REDACTED]@127.0.0.1:9/v1', `${XSS} target`, `${XSS} answer`, `${XSS} because`, '"note": "<img src=x onerror=\\"window.__pwned=1\\">"', `answer ${XSS}`]) expect(text, part).toContain(part);
      shown++;
      await check(`count ${i}`);
      await closePanel(page);
    }
    expect(shown).toBeGreaterThan(0);
    // Search finds a sample by its metadata.
    await page.locator('a.count').first().click();
    await page.fill('#browser-search', 'algebra');
    const visible = await page.locator('#browser-list tr[data-episode]:not([hidden])').count();
    expect(visible).toBeGreaterThan(0);
    expect(visible).toBeLessThan(await page.locator('#browser-list tr[data-episode]').count());
    await check('search');
    expect(log.errors).toEqual([]);
    await page.close();
  }, 600_000);

  it('Standoff episodes still show the Standoff fields; judge-pair agreement cells open the disagreements', async () => {
    const { page, log } = await openPage(browser, html('demo'));
    const r = reports.demo.results as ReportResults;
    const p = r.judges.pairs[0];
    const row = await rowWith(await tableWith(page, ['Judge A', 'Judge B', 'Both rated', 'Same value']), [p.a, p.b]);
    await row.locator('td:nth-child(4) a.count').click();
    const want = await sql(stores.demo, `WITH j AS (SELECT run_id, episode_id, judge_model, max(value) AS v FROM judgments WHERE scorer = $s GROUP BY ALL)
      SELECT a.run_id, a.episode_id FROM j a JOIN j b USING (run_id, episode_id) WHERE a.judge_model = $a AND b.judge_model = $b AND a.v <> b.v`, { s: r.judges.scorer, a: p.a, b: p.b });
    expect(want.length).toBe(p.bothRated - p.agreements);
    expect(await listed(page)).toEqual(pairs(want));
    if (want.length) {
      await page.locator('#browser-list tr[data-episode]').first().click();
      expect(await page.getAttribute('#browser-transcript', 'data-kind')).toBe('standoff');
      expect(await page.textContent('#browser-transcript dl.facts')).toMatch(/Decision.*Evidence gathered before deciding.*Log reads/s);
      expect(await page.textContent('#browser-list thead')).toMatch(/Score.*Target.*Decision.*Log reads/);
    }
    expect(log.errors).toEqual([]);
    await page.close();
  }, T);
});
