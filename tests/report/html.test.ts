/**
 * `reports/index.html` without a browser: the script-safe JSON, the Markdown-to-HTML rendering of
 * untrusted text, anchors that match REPORT.md's contents, byte-identical builds, the size and
 * list caps (what was left out is said, with the `standoff sql` query that gets it), and the
 * counts' definitions run through `standoff sql` itself. The page in Chromium:
 * html-browser.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAnyReport, buildReport, type BuildReportResult } from '../../src/report/index.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { naturalCsv, naturalRows } from '../helpers/natural-csv.ts';
import { escapeMarkdown } from '../../src/escape.ts';
import { INDEX_HTML_CAP_BYTES, toScriptJson } from '../../src/report/html/build-index-html.ts';
import { inlineHtml, toReportHtml } from '../../src/report/html/markdown-html.ts';
import { toInteractiveSpec } from '../../src/report/html/interactive-figures.ts';
import { toInterpreterScript } from '../../src/report/html/read-assets.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-html-unit-'));
const traces = join(ROOT, 'traces');
let a: BuildReportResult;
let b: BuildReportResult;
let capped: BuildReportResult;

beforeAll(async () => {
  a = await buildReport({ traces, out: join(dir, 'a'), resamples: 200 });
  b = await buildReport({ traces, out: join(dir, 'b'), resamples: 200 });
  capped = await buildReport({ traces, out: join(dir, 'capped'), resamples: 200, indexHtml: { dataBudgetBytes: 120_000, listCap: 5, maxEpisodes: 30 } });
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const page = (r: BuildReportResult) => readFileSync(join(r.out, 'index.html'), 'utf8');
const embedded = (html: string) => JSON.parse(/<script type="application\/json" id="standoff-browser">(.*?)<\/script>/s.exec(html)![1]);
const noHandlers = (x: Record<string, unknown>) => JSON.parse(JSON.stringify(x));

describe('index.html building blocks', () => {
  it('script JSON cannot end its element or a line: <, >, &, U+2028/9 escaped, and it parses back', () => {
    const v = { s: '</script><!-- <script>alert(1)</script> & \u2028\u2029', n: [1, Number.NaN] };
    const j = toScriptJson(v);
    expect(j).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(j)).toEqual({ s: v.s, n: [1, null] });
  });

  it('untrusted text, Markdown-escaped as the sections do it, renders as exactly its characters', () => {
    const evil = '<script>alert(1)</script> "><img src=x onerror=alert(1)> [x](javascript:alert(1)) ![](http://127.0.0.1:9/t.png) **b** `c` | d \\ e';
    const out = inlineHtml(escapeMarkdown(evil), true);
    expect(out.text).toBe(evil);
    expect(out.html).not.toMatch(/<(?!\/?(code|strong|em|sub|br)\b)/);
    expect(out.html).not.toMatch(/<a |<img|<script/);
    // Even the report's own link syntax goes nowhere but an anchor or figures/ (anything else is text).
    expect(inlineHtml('[x](javascript:alert(1)) [y](#run-summary) [z](figures/a.svg) [w](https://example.com)').html).toBe(
      '[x](javascript:alert(1)) <a href="#run-summary">y</a> <a href="figures/a.svg">z</a> w',
    );
  });

  it('tables keep their columns (escaped pipes stay in the cell) and headings get GitHub anchors', () => {
    const md = `## 7. Paired probes: reading vs acting\n\n| A | B |\n| --- | ---: |\n| ${escapeMarkdown('a|b')} | \`x\\|y\` |\n`;
    const html = toReportHtml(md, { figure: () => null, countLink: () => null });
    expect(html).toContain('<h2 id="7-paired-probes-reading-vs-acting">');
    expect(html).toContain('<td class="a-left" data-sort="a|b">a|b</td><td class="a-right" data-sort="x|y"><code>x|y</code></td>');
  });

  it('every Contents link of REPORT.md has its anchor in index.html', () => {
    const md = readFileSync(join(a.out, 'REPORT.md'), 'utf8');
    const html = page(a);
    const targets = [...md.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(8);
    for (const t of targets) expect(html, t).toContain(`id="${t}"`);
  });

  it('figures get data tooltips and legend filtering on the subject colour; the input spec is unchanged', () => {
    const spec = a.results.figures.find((f) => f.name === 'results')!;
    const vl = JSON.parse(readFileSync(join(a.out, spec.files[0]), 'utf8'));
    const before = JSON.stringify(vl);
    const i = toInteractiveSpec(vl) as { spec: { layer: { mark: { tooltip: unknown }; params?: unknown[]; encoding: Record<string, unknown> }[] } };
    expect(JSON.stringify(vl)).toBe(before);
    expect(i.spec.layer.every((l) => JSON.stringify(l.mark.tooltip) === '{"content":"data"}')).toBe(true);
    expect(noHandlers(i.spec.layer[0].params![0] as Record<string, unknown>)).toEqual({ name: 'legend_pick', select: { type: 'point', fields: ['subject'] }, bind: 'legend' });
    expect(i.spec.layer[0].encoding.opacity).toEqual({ condition: { param: 'legend_pick', value: 1 }, value: 0.15 });
  });

  it('vega-interpreter becomes a classic script; an unexpected module shape is refused', () => {
    const s = toInterpreterScript("import { a, b } from 'vega-util';\nconst x = a;\nexport { x as expressionInterpreter };\n");
    expect(s).toContain('var { a, b } = vega;');
    expect(s).toContain('window.standoffVegaInterpreter = x;');
    expect(() => toInterpreterScript("import { a } from 'other';\n")).toThrow(/unexpected module shape/);
  });
});

describe('index.html from the demo store', () => {
  it('is written with the report, byte-identical for the same store and seed, and has a strict CSP', () => {
    expect(a.files).toContain('index.html');
    expect(page(a)).toBe(page(b));
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page(a))![1];
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[^']+' 'sha256-[^']+' 'sha256-[^']+'; /);
    expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:/);
    expect(Buffer.byteLength(page(a))).toBeLessThan(INDEX_HTML_CAP_BYTES);
  });

  it('embeds every episode a count points at, with its transcript, scores and verdicts', () => {
    const d = embedded(page(a));
    expect(d.has_messages).toBe(true);
    expect(d.transcripts_omitted).toBe(0);
    for (const s of d.sets) expect(s.members.length, s.key).toBe(s.count);
    const lucky = d.sets.find((s: { key: string }) => s.key === 'grounded/sim:hasty/not_gathered_correct');
    expect(lucky.count).toBe(a.results.grounded.subjects.find((s) => s.subject === 'sim:hasty')!.table.not_gathered_correct);
    const e = d.episodes[lucky.members[0]];
    expect(e.messages.length).toBeGreaterThan(0);
    expect(e.messages.map((m: { seq: number }) => m.seq)).toEqual([...e.messages.map((m: { seq: number }) => m.seq)].sort((x: number, y: number) => x - y));
    expect(e.scores.length).toBe(3);
    expect(e.judgments.length).toBe(3);
  });

  it('past the size cap: transcripts left out are counted, and each gets its standoff sql query; long lists say how many are listed', () => {
    const html = page(capped);
    const d = embedded(html);
    expect(d.transcripts_omitted).toBeGreaterThan(0);
    expect(html).toMatch(/\d+ transcripts were left out to keep this file under 20 MB/);
    expect(html).toContain('SELECT * FROM messages ORDER BY run_id, episode_id, seq');
    const omitted = d.episodes.filter((e: { messages: unknown }) => e.messages === null);
    expect(omitted.length).toBe(d.transcripts_omitted);
    for (const e of omitted) expect(e.transcript_command).toMatch(/^standoff sql 'SELECT seq, role, content, .* FROM messages WHERE run_id = '\\''[^']+'\\'' AND episode_id = /);
    expect(d.episodes.length - omitted.length, 'some transcripts fit').toBeGreaterThan(0);
    // The episode data (rows, scores, verdicts, transcripts) keeps within the budget.
    const data = d.episodes.map(({ transcript_command: _, ...e }: Record<string, unknown>) => e);
    expect(Buffer.byteLength(toScriptJson(data))).toBeLessThanOrEqual(120_000);
    // At most 5 listed per set and 30 distinct episodes in all: sets are filled in order, later ones list a prefix.
    expect(d.episodes.length).toBe(30); // the cap (the demo's sets hold 38 distinct episodes)
    expect(d.episodes.length).toBeGreaterThan(5);
    for (const s of d.sets) expect(s.members.length).toBeLessThanOrEqual(Math.min(5, s.count));
    expect(d.sets.filter((s: { count: number; members: unknown[] }) => s.members.length < Math.min(5, s.count)).length).toBeGreaterThan(0);
  });

  it("a count's definition is a standoff sql query that finds exactly its episodes", () => {
    const d = embedded(page(a));
    const lucky = d.sets.find((s: { key: string }) => s.key === 'grounded/sim:hasty/not_gathered_correct');
    const query = /^standoff sql '(.*)'$/s.exec(lucky.command)![1].replace(/'\\''/g, "'");
    const r = runCli(['sql', '--traces', traces, '--format', 'json', query]);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { run_id: string; episode_id: string }[];
    expect(rows.map((x) => x.episode_id)).toEqual(lucky.members.map((i: number) => d.episodes[i].episode_id));
  }, 60_000);
});

describe('index.html for a store that is not a Standoff suite (the generic report)', () => {
  it("the researcher's CSV: each scorer's rate cell opens exactly the samples it measured (SQL over the store), NULL cells left out", async () => {
    const csv = join(dir, 'results.csv');
    const rows = naturalRows();
    writeFileSync(csv, naturalCsv(rows));
    const store = join(dir, 'csv-store');
    await ingestCsv([csv], { traces: store, runId: 'r1', flags: { subject: 'model', item: 'sample_id', epoch: 'epoch', scores: ['correct', 'quality'], judgeColumns: ['judge_a', 'judge_b', 'judge_c'], judgedScorer: 'quality' } });
    const r = await buildAnyReport({ traces: store, out: join(dir, 'generic'), resamples: 200 });
    expect(r.files).toContain('index.html');
    const html = readFileSync(join(r.out, 'index.html'), 'utf8');
    const d = embedded(html);
    const set = d.sets.find((s: { key: string }) => s.key === 'measured/results/correct/acme-large');
    // 300 samples of acme-large, each with a 0/1 `correct` (computed from the generated rows, not the code)
    expect(set.count).toBe(rows.filter((x) => x.model === 'acme-large').length);
    // the cell "77.3% (232/300)" links to that set
    const idx = d.sets.indexOf(set);
    const wins = rows.filter((x) => x.model === 'acme-large' && x.correct === 1).length;
    expect(html).toContain(`<a class="count" href="#browser" data-set="${idx}">${((100 * wins) / set.count).toFixed(1)}% (${wins}/${set.count})`);
    const query = /^standoff sql '(.*)'$/s.exec(set.command)![1].replace(/'\\''/g, "'");
    const out = runCli(['sql', '--traces', store, '--format', 'json', query]);
    expect(out.code, out.stderr).toBe(0);
    expect((JSON.parse(out.stdout) as { episode_id: string }[]).map((x) => x.episode_id)).toEqual(set.members.map((i: number) => d.episodes[i].episode_id));
    expect(d.sets.some((s: { key: string }) => s.key === 'all/results/zeta-7b')).toBe(true);
    expect(d.has_messages).toBe(false);
  }, 240_000);
});
