/**
 * `reports/index.html` in a real headless Chromium (Debian's, driven by playwright-core; see
 * tests/helpers/browser.ts). Reports are built from real stores: the demo run in `traces/`, a CSV
 * ingest (no transcripts), an Inspect log, and a hostile run whose names, messages and tool
 * arguments carry `<script>`, `"><img onerror=...>` and `javascript:` links. Checks: the page
 * loads from file:// with no console error and no request; every figure renders marks; sorting
 * reorders rows; every count opens exactly the episodes an independent SQL query over the store
 * finds; a transcript shows the stored messages in order; the first screen's layout at 1280x800;
 * nothing hostile runs.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { buildAnyReport, buildReport, type BuildReportResult, type GenericReportResults, type ReportResults } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import { hostileBundle, HOSTILE } from '../helpers/hostile.ts';
import { browserAvailable, launchBrowser, openPage, type Browser } from '../helpers/browser.ts';

/** Browser globals inside page.evaluate callbacks (the project's TS has no DOM lib). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any;


const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'standoff-html-'));
const HAVE_BROWSER = browserAvailable();
const T = 180_000;

/** Payloads that would run if any text reached the DOM as HTML or a URL. */
const XSS = {
  script: '<script>window.__pwned = "script"</script>',
  img: '"><img src=x onerror="window.__pwned=\'img\'">',
  link: '<a href="javascript:window.__pwned=\'link\'">click</a> [md](javascript:window.__pwned=1)',
};

function evilBundle() {
  const b = hostileBundle('hostile');
  // One subject named with the img payload (its episode ids too), everywhere it appears.
  const text = JSON.stringify(b).split(JSON.stringify(HOSTILE.pipe).slice(1, -1)).join(JSON.stringify(XSS.img).slice(1, -1));
  const evil = JSON.parse(text) as typeof b;
  evil.messages = evil.messages!.map((m, i) => ({
    ...m,
    content: `${XSS.script} ${XSS.link} #${i}`,
    reasoning: m.role === 'assistant' ? XSS.img : m.reasoning,
    tool_args: m.tool_args === null ? null : JSON.stringify({ q: XSS.script, r: XSS.img }),
  }));
  return evil;
}

let browser: Browser;
// The demo and the hostile run are Standoff suites (Standoff's sections); the CSV and Inspect imports get the generic sections.
const reports = {} as Record<'demo' | 'hostile', BuildReportResult> & Record<'csv' | 'inspect', BuildReportResult<ReportResults | GenericReportResults>>;
const stores: Record<string, string> = { demo: join(ROOT, 'traces') };

beforeAll(async () => {
  if (!HAVE_BROWSER) return;
  stores.csv = join(dir, 'csv');
  stores.inspect = join(dir, 'inspect');
  stores.hostile = join(dir, 'hostile');
  await ingestCsv([join(ROOT, 'tests/fixtures/csv/episodes.csv')], { traces: stores.csv, runId: 'csv-rt', now: new Date('2026-01-01T00:00:00Z') });
  await ingestInspect([join(ROOT, 'tests/fixtures/inspect/log_read_sample.eval')], { traces: stores.inspect });
  await writeRun(stores.hostile, evilBundle());
  const opts = (k: string) => ({ traces: stores[k], out: join(dir, `r-${k}`), resamples: 200, allowJudgeErrors: 1000, allowTruncated: 1000 });
  for (const k of ['demo', 'hostile'] as const) reports[k] = await buildReport(opts(k));
  for (const k of ['csv', 'inspect'] as const) reports[k] = await buildAnyReport(opts(k));
  browser = await launchBrowser();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const html = (k: keyof typeof reports) => join(reports[k].out, 'index.html');

async function sql(store: string, text: string, params: Record<string, string | boolean>) {
  const s = await openStore(store);
  try {
    return (await query(s.conn, text, params)).rows;
  } finally {
    s.close();
  }
}

/** The (run_id, episode_id) pairs the open episode list shows, sorted. */
async function listed(page: Page): Promise<string[]> {
  const ids = await page.$$eval('#browser-list tr[data-episode]', (rows) => rows.map((r) => `${r.getAttribute('data-run')}|${r.getAttribute('data-episode-id')}`));
  return ids.sort();
}

/** Closes the episode panel (it covers the right of the page). */
async function closePanel(page: Page) {
  if (await page.locator('#browser:not([hidden])').count()) await page.click('#browser-close');
}

/** Opens the first count whose set has episodes. */
async function openNonEmpty(page: Page) {
  const i = await page.evaluate(() => {
    const sets = JSON.parse(document.getElementById('standoff-browser')!.textContent!).sets as { count: number }[];
    return [...document.querySelectorAll('a.count')].findIndex((a) => sets[Number(a.getAttribute('data-set'))].count > 0);
  });
  expect(i).toBeGreaterThanOrEqual(0);
  await page.locator('a.count').nth(i).click();
  await page.waitForSelector('#browser-list tr[data-episode]');
}

const pairs = (rows: Record<string, unknown>[]) => rows.map((r) => `${r.run_id}|${r.episode_id}`).sort();

describe.runIf(HAVE_BROWSER)('index.html in Chromium', () => {
  it('loads from file:// with no console error and no request; every figure renders marks', async () => {
    for (const k of ['demo', 'csv', 'inspect'] as const) {
      const { page, log } = await openPage(browser, html(k));
      expect(log.errors, k).toEqual([]);
      expect(log.foreign, k).toEqual([]);
      const figs = await page.$$eval('figure.vega', (fs) =>
        fs.map((f) => ({ name: f.getAttribute('data-figure'), rendered: f.getAttribute('data-rendered'), marks: f.querySelectorAll('svg .role-mark > *').length, guides: f.querySelectorAll('svg .role-axis, svg .role-legend, svg .role-title').length })),
      );
      expect(figs.map((f) => f.name).sort(), k).toEqual(reports[k].results.figures.map((f) => f.name).sort());
      for (const f of figs) {
        expect(f.rendered, `${k} ${f.name}`).toBe('true');
        expect(f.guides, `${k} ${f.name} axes and titles`).toBeGreaterThan(0);
        // The demo's figures all have data; an import may leave a figure without values (all "not measured").
        if (k === 'demo') expect(f.marks, `${k} ${f.name} marks`).toBeGreaterThan(0);
      }
      await page.close();
    }
  }, T);

  it('a figure shows a tooltip with the exact numbers on hover', async () => {
    const { page } = await openPage(browser, html('demo'));
    const bar = page.locator('figure[data-figure="results"] svg .mark-rect path').first();
    await bar.scrollIntoViewIfNeeded();
    await bar.hover({ force: true });
    await page.waitForSelector('#tooltip:not([hidden])', { timeout: 30_000 });
    const tip = await page.textContent('#tooltip');
    expect(tip).toMatch(/rate: \d/);
    expect(tip).toMatch(/lower: \d/);
    expect(tip).toMatch(/upper: \d/);
    expect(tip).toMatch(/n: \d+/);
    await page.close();
  }, T);

  it('clicking a legend entry fades the other subjects (legend filtering)', async () => {
    const { page } = await openPage(browser, html('demo'));
    const fig = page.locator('figure[data-figure="results"]');
    const faded = () => fig.locator('svg .mark-rect path[opacity="0.15"]').count();
    expect(await faded()).toBe(0);
    const entry = fig.locator('svg .role-legend-symbol path').first();
    await entry.scrollIntoViewIfNeeded();
    await entry.click({ force: true });
    await page.waitForFunction(() => document.querySelectorAll('figure[data-figure="results"] svg .mark-rect path[opacity="0.15"]').length > 0, null, { timeout: 30_000 });
    const bars = await fig.locator('svg .mark-rect path').count();
    const subjects = reports.demo.results.summary.subjects.length;
    // One subject stays opaque: the other subjects' bars (three metrics each) fade.
    expect(await faded()).toBe(bars - bars / subjects);
    await page.close();
  }, T);

  it('clicking a table header sorts its rows (and again reverses them)', async () => {
    const { page } = await openPage(browser, html('demo'));
    const table = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Gathered, incorrect' }) }).first();
    const column = async () => table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => Number((r as any).cells[2].getAttribute('data-sort'))));
    const header = table.locator('thead th').nth(2).locator('button');
    expect(await header.textContent()).toBe('Gathered, incorrect');
    const before = await column();
    await header.click();
    const asc = await column();
    expect(asc).toEqual([...before].sort((a, b) => a - b));
    await header.click();
    const desc = await column();
    expect(desc).toEqual([...before].sort((a, b) => b - a));
    expect(desc).not.toEqual(asc);
    // Another table: the pairwise comparisons by p-value reorder their rows.
    const pw = page.locator('table.sortable', { has: page.locator('th', { hasText: 'MDE' }) }).first();
    const firstCells = async () => pw.locator('tbody tr').evaluateAll((rows) => rows.map((r) => (r as any).cells[7].textContent));
    const b0 = await firstCells();
    await pw.locator('th').nth(7).locator('button').click();
    expect(await firstCells()).not.toEqual(b0);
    await page.close();
  }, T);

  it('every grounded-vs-lucky cell opens exactly the episodes SQL over the store finds', async () => {
    const { page } = await openPage(browser, html('demo'));
    const table = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Gathered, correct' }) }).first();
    const headers = await table.locator('thead th').allTextContents();
    const rows = await table.locator('tbody tr').count();
    let checked = 0;
    for (let r = 0; r < rows; r++) {
      const row = table.locator('tbody tr').nth(r);
      const subject = (await row.locator('td').first().textContent())!;
      for (const [col, gathered, correct] of [[1, true, true], [2, true, false], [3, false, true], [4, false, false]] as const) {
        expect(headers[col]).toMatch(/^(Not gathered|Gathered), (correct|incorrect)/);
        const link = row.locator('td').nth(col).locator('a.count');
        const shown = Number(await link.textContent());
        await link.click();
        await page.waitForSelector('#browser:not([hidden])');
        const expected = await sql(
          stores.demo,
          `SELECT e.run_id, e.episode_id FROM episodes e JOIN scores s ON s.run_id = e.run_id AND s.episode_id = e.episode_id
           WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND e.status <> 'error' AND s.value IS NOT NULL
             AND e.subject_model = $m AND e.gathered_evidence = $g AND (s.value = 1) = $c`,
          { m: subject, g: gathered, c: correct },
        );
        expect(await listed(page), `${subject} col ${col}`).toEqual(pairs(expected));
        expect(expected.length).toBe(shown);
        checked += shown;
        await closePanel(page);
      }
    }
    expect(checked).toBe(reports.demo.results.grounded.subjects.reduce((a, s) => a + Object.values(s.table).reduce((x, y) => x + y, 0), 0));
    await page.close();
  }, T);

  it("a subject's rate, invalid episodes and judge disagreements open exactly their episodes", async () => {
    const { page } = await openPage(browser, html('demo'));
    const invalidTable = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Invalid episodes' }) }).first();
    const n = await invalidTable.locator('tbody tr').count();
    for (let r = 0; r < n; r++) {
      const row = invalidTable.locator('tbody tr').nth(r);
      const subject = (await row.locator('td').first().textContent())!;
      await row.locator('td').nth(4).locator('a.count').click();
      const expected = await sql(stores.demo, `SELECT run_id, episode_id FROM episodes WHERE subject_model = $m AND status = 'invalid'`, { m: subject });
      expect(await listed(page), subject).toEqual(pairs(expected));
      await closePanel(page);
      // The policy-action rate opens its denominator: completed, non-ambiguous, scored episodes.
      await row.locator('td').nth(2).locator('a.count').click();
      const measured = await sql(
        stores.demo,
        `SELECT e.run_id, e.episode_id FROM episodes e JOIN scores s USING (run_id, episode_id)
         WHERE e.subject_model = $m AND e.status <> 'error' AND s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND s.value IS NOT NULL`,
        { m: subject },
      );
      expect(await listed(page), `${subject} policy action`).toEqual(pairs(measured));
      expect(measured.length).toBe(reports.demo.results.results.subjects[r].metrics.policy_action.trials);
      await closePanel(page);
    }
    const judgeTable = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Eligible judges disagree' }) }).first();
    const m = await judgeTable.locator('tbody tr').count();
    expect(m).toBeGreaterThan(0);
    for (let r = 0; r < m; r++) {
      const row = judgeTable.locator('tbody tr').nth(r);
      const subject = (await row.locator('td').first().textContent())!;
      const shown = Number(await row.locator('a.count').textContent());
      await row.locator('a.count').click();
      // Eligible verdicts: not excluded as self, not ERROR; disagreement: two different values.
      const expected = await sql(
        stores.demo,
        `SELECT j.run_id, j.episode_id FROM judgments j JOIN episodes e USING (run_id, episode_id)
         WHERE e.subject_model = $m AND j.scorer = 'reasoning_action_alignment' AND NOT j.excluded_self AND j.value IS NOT NULL
         GROUP BY ALL HAVING min(j.value) <> max(j.value)`,
        { m: subject },
      );
      expect(await listed(page), subject).toEqual(pairs(expected));
      expect(expected.length).toBe(shown);
      await closePanel(page);
    }
    await page.close();
  }, T);

  it("a four-cell count opens its items, A's and B's samples; a slice cell opens its trials (issues 26 and 21)", async () => {
    const { page } = await openPage(browser, html('demo'));
    const c = reports.demo.results.pairwise.comparisons.find((x) => x.metric === 'gathered_evidence' && x.four_cell && x.four_cell.only_a > 0)!;
    const four = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Only A right' }) }).first();
    const rows = await four.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...(tr as any).cells].slice(0, 3).map((td: any) => td.textContent)));
    const r = rows.findIndex((x) => x[0] === 'Evidence gathered before decision' && x[1] === c.a && x[2] === c.b);
    expect(r).toBeGreaterThanOrEqual(0);
    const link = four.locator('tbody tr').nth(r).locator('td').nth(5).locator('a.count');
    expect(Number(await link.textContent())).toBe(c.four_cell!.only_a);
    await link.click();
    await page.waitForSelector('#browser-list tr[data-episode]');
    const obs = `SELECT run_id, episode_id, scenario_id, epoch, gathered_evidence AS v FROM episodes WHERE status <> 'error' AND gathered_evidence IS NOT NULL AND subject_model = `;
    const want = await sql(
      stores.demo,
      `WITH a AS (${obs} $a), b AS (${obs} $b), p AS (SELECT a.run_id AS r1, a.episode_id AS e1, b.run_id AS r2, b.episode_id AS e2 FROM a JOIN b USING (scenario_id, epoch) WHERE a.v AND NOT b.v)
       SELECT r1 AS run_id, e1 AS episode_id FROM p UNION ALL SELECT r2, e2 FROM p`,
      { a: c.a, b: c.b },
    );
    expect(want.length).toBe(2 * c.four_cell!.only_a);
    expect(await listed(page)).toEqual(pairs(want));
    await closePanel(page);
    // Section 4, Domain: sim:hasty's evidence on clinical_triage ("30.0% (9/30) ...") opens its 30 measured episodes.
    const x = reports.demo.results.slices.rows.find((s) => s.dimension === 'domain' && s.value === 'clinical_triage' && s.subject === 'sim:hasty' && s.metric === 'gathered_evidence')!;
    const slices = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Domain' }) }).first();
    const srows = await slices.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...(tr as any).cells].slice(0, 2).map((td: any) => td.textContent)));
    const cell = slices.locator('tbody tr').nth(srows.findIndex((s) => s[0] === 'clinical_triage' && s[1] === 'sim:hasty')).locator('td').nth(2).locator('a.count');
    expect(await cell.textContent()).toContain(`(${x.successes}/${x.trials})`);
    await cell.click();
    await page.waitForSelector('#browser-list tr[data-episode]');
    const trials = await sql(stores.demo, `SELECT run_id, episode_id FROM episodes WHERE subject_model = 'sim:hasty' AND domain = 'clinical_triage' AND status <> 'error' AND gathered_evidence IS NOT NULL`, {});
    expect(trials.length).toBe(x.trials);
    expect(await listed(page)).toEqual(pairs(trials));
    await closePanel(page);
    await page.close();
  }, T);

  it('a transcript shows the stored messages in order, with scores and every verdict', async () => {
    const { page } = await openPage(browser, html('demo'));
    const table = page.locator('table.sortable', { has: page.locator('th', { hasText: 'Gathered, correct' }) }).first();
    await table.locator('tbody tr').nth(1).locator('td').nth(3).locator('a.count').click();
    const first = page.locator('#browser-list tr[data-episode]').first();
    const run = (await first.getAttribute('data-run'))!;
    const ep = (await first.getAttribute('data-episode-id'))!;
    await first.click();
    const shown = await page.$$eval('#browser-transcript li.message', (lis) => lis.map((li) => ({ seq: Number(li.getAttribute('data-seq')), role: li.querySelector('.role')!.textContent, content: li.querySelector('pre.content')?.textContent ?? null })));
    const stored = await sql(stores.demo, `SELECT seq, role, content FROM messages WHERE run_id = $r AND episode_id = $e ORDER BY seq`, { r: run, e: ep });
    expect(stored.length).toBeGreaterThan(0);
    expect(shown).toEqual(stored.map((m) => ({ seq: Number(m.seq), role: m.role, content: m.content })));
    const verdicts = await sql(stores.demo, `SELECT judge_model, raw FROM judgments WHERE run_id = $r AND episode_id = $e ORDER BY judge_model`, { r: run, e: ep });
    const judgeRows = await page.$$eval('#browser-transcript table.judgments tbody tr', (rows) => rows.map((r) => [r.children[0].textContent, r.children[5].textContent]));
    expect(judgeRows.sort()).toEqual(verdicts.map((v) => [v.judge_model, v.raw]).sort());
    expect(await page.locator('#browser-transcript table.scores tbody tr').count()).toBeGreaterThan(0);
    const tools = await page.$$eval('#browser-transcript li.message pre.args', (p) => p.length);
    expect(tools).toBeGreaterThan(0);
    await page.close();
  }, T);

  it('the first screen at 1280x800: title, gate, run line and contents in place (layout, not pixels)', async () => {
    const { page } = await openPage(browser, html('demo'));
    const shot = join(dir, 'first-screen.png');
    const png = await page.screenshot({ path: shot });
    expect(png.readUInt32BE(16)).toBe(1280);
    expect(png.readUInt32BE(20)).toBe(800);
    if (process.env.STANDOFF_SCREENSHOT) writeFileSync(process.env.STANDOFF_SCREENSHOT, png);
    const box = async (sel: string) => (await page.locator(sel).first().boundingBox())!;
    const nav = await box('nav.top');
    const h1 = await box('h1');
    const gate = await box('blockquote');
    const contents = await box('#contents');
    const list = await box('#contents + ol');
    expect(nav.y).toBe(0);
    expect(nav.width).toBe(1280);
    expect(nav.height).toBeLessThan(60);
    expect(h1.y).toBeGreaterThan(nav.height);
    expect(h1.y).toBeLessThan(140);
    expect(gate.y).toBeGreaterThan(h1.y);
    expect(gate.y).toBeLessThan(250);
    expect(Math.abs(h1.x - gate.x)).toBeLessThan(4);
    // The first screen answers the question (issue 21, point 9): the At a glance table sits whole
    // between the gate and the contents, which start on the same screen.
    const glance = await box('table:has(th:has-text("At a glance: subject"))');
    expect(glance.y).toBeGreaterThan(gate.y + gate.height);
    expect(glance.y + glance.height).toBeLessThan(800);
    expect(contents.y).toBeGreaterThan(glance.y + glance.height);
    expect(contents.y).toBeLessThan(800);
    expect(list.y).toBeGreaterThan(contents.y);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    expect(await page.textContent('h1')).toBe(`Standoff report: ${reports.demo.results.summary.runs[0].suite}`);
    await page.close();
  }, T);

  it('without transcripts (CSV ingest) the browser says so instead of breaking', async () => {
    const { page, log } = await openPage(browser, html('csv'));
    expect(await page.locator('#episode-browser .no-transcript').count()).toBe(1);
    await openNonEmpty(page);
    await page.locator('#browser-list tr[data-episode]').first().click();
    expect(await page.textContent('#browser-transcript .no-transcript')).toMatch(/No transcripts stored/);
    expect(log.errors).toEqual([]);
    await page.close();
  }, T);

  it('an Inspect log: its messages are the transcript', async () => {
    const { page, log } = await openPage(browser, html('inspect'));
    await openNonEmpty(page);
    const first = page.locator('#browser-list tr[data-episode]').first();
    const run = (await first.getAttribute('data-run'))!;
    const ep = (await first.getAttribute('data-episode-id'))!;
    await first.click();
    const stored = await sql(stores.inspect, `SELECT seq FROM messages WHERE run_id = $r AND episode_id = $e ORDER BY seq`, { r: run, e: ep });
    const seqs = await page.$$eval('#browser-transcript li.message', (lis) => lis.map((li) => Number(li.getAttribute('data-seq'))));
    expect(seqs).toEqual(stored.map((m) => Number(m.seq)));
    expect(log.errors).toEqual([]);
    await page.close();
  }, T);

  it('hostile names, messages and tool arguments are shown as text and nothing runs', async () => {
    const file = html('hostile');
    const src = readFileSync(file, 'utf8');
    // The only <script> elements are the page's own (JSON data and the three hashed scripts).
    const tags = src.match(/<script\b[^>]*>/g)!;
    expect(tags.filter((t) => !(t === '<script>' || /^<script type="application\/json" id="[a-z-]+">$/.test(t)))).toEqual([]);
    expect(tags.filter((t) => t === '<script>').length).toBe(3);
    expect(/<img|href="javascript:|<a [^>]*href="(?!#|figures\/)/i.test(src)).toBe(false);
    const { page, log } = await openPage(browser, file);
    const check = async (where: string) => {
      expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned), where).toBeUndefined();
      expect(await page.locator('img').count(), where).toBe(0);
      expect(await page.locator('a[href^="javascript:"], [onerror]').count(), where).toBe(0);
      expect(log.dialogs, where).toEqual([]);
      expect(log.foreign, where).toEqual([]);
      // No raw control or bidi character reaches the visible text (they show as \uXXXX).
      const shown = await page.evaluate(() => document.querySelector('main').textContent + document.getElementById('browser').textContent);
      expect(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u202a-\u202e\u2066-\u2069]/.test(shown), where).toBe(false);
    };
    await check('page');
    expect(await page.textContent('main')).toContain(XSS.img);
    expect(await page.textContent('main')).toContain(HOSTILE.script);
    expect(await page.textContent('main')).toContain('sim:\\u202Egnp.exe');
    // Open every set (the first count that opens it: the report's cells and the browser's index link the same sets); open listed episodes' transcripts.
    const firsts = await page.$$eval('a.count', (as) => {
      const seen = new Set<string | null>();
      return as.flatMap((a, i) => (seen.has(a.getAttribute('data-set')) ? [] : (seen.add(a.getAttribute('data-set')), [i])));
    });
    expect(firsts.length).toBe(JSON.parse(src.match(/id="standoff-browser">(.*?)<\/script>/s)![1]).sets.length);
    let transcripts = 0;
    let payloadShown = 0;
    // Each listed episode's transcript is opened once (up to three new ones per list): a set that lists only episodes already opened is checked as a list.
    const opened = new Set<string>();
    for (const i of firsts) {
      await page.locator('a.count').nth(i).click();
      const rows = page.locator('#browser-list tr[data-episode]');
      const ids = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute('data-run')}|${tr.getAttribute('data-episode-id')}`));
      const fresh = ids.flatMap((id, j) => (opened.has(id) ? [] : [j])).slice(0, 3);
      for (const j of fresh) {
        opened.add(ids[j]);
        await rows.nth(j).click();
        transcripts += await page.locator('#browser-transcript li.message').count();
        if ((await page.textContent('#browser-transcript'))!.includes(XSS.script)) payloadShown++;
      }
      await check(`count ${i}`);
      await closePanel(page);
    }
    expect(transcripts).toBeGreaterThan(0);
    expect(payloadShown).toBeGreaterThan(0);
    expect(log.errors).toEqual([]);
    await page.close();
  }, 600_000);
});
