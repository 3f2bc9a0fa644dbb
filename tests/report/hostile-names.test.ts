/**
 * Untrusted text is inert in every output (issue 13). A run whose subject and judge names, suite,
 * notes, reasons and messages are hostile (`tests/helpers/hostile.ts`: a newline that would start
 * a `## heading` and a `<script>` line, raw HTML, `[x](javascript:...)`, a remote image, U+202E,
 * pipes, spreadsheet formulas, NUL, ESC) goes through `report build`, `sql -f markdown`,
 * `sql -f csv` / `--out .csv` and the figures. Each output must show the text, not act on it:
 * no injected heading or line, no HTML, no link or image, no raw control or bidi character, no
 * extra table cell, no formula-leading CSV cell (with `--csv-safe`).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { buildReport } from '../../src/report/build-report.ts';
import { HOSTILE, hostileBundle } from '../helpers/hostile.ts';
import { runCli } from '../helpers/cli.ts';

const RAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u202a-\u202e\u2066-\u2069]/;

/** Structural checks every Markdown output must pass. */
function expectInertMarkdown(md: string, where: string) {
  expect(md, `${where}: raw control or bidi character`).not.toMatch(RAW);
  expect(md, `${where}: raw HTML`).not.toMatch(/<script|<img|<a\s/i);
  expect(md, `${where}: a link`).not.toMatch(/(?<!\\)\]\(javascript:/);
  expect(md, `${where}: an image`).not.toMatch(/(?<!\\)!(?<!\\)\[[^\]]*(?<!\\)\]\(http/);
  for (const line of md.split('\n')) {
    expect(line, `${where}: an injected heading`).not.toMatch(/^#+ .*PWNED/);
    expect(line, `${where}: an injected line`).not.toMatch(/^(## PWNED|<script)/);
  }
  // Every table row has as many cells as its header: no name added a cell.
  const cells = (l: string) => l.replace(/\\\\/g, '').split(/(?<!\\)\|/).length;
  const lines = md.split('\n');
  for (let i = 1; i < lines.length; i++) {
    if (/^\| ?:?-{3}/.test(lines[i]!)) {
      const n = cells(lines[i - 1]!);
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith('|'); j++) expect(cells(lines[j]!), `${where}: table row ${j + 1}`).toBe(n);
    }
  }
}

let store: string;
let out: string;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-hostile-'));
  store = join(dir, 'traces');
  out = join(dir, 'report');
  await writeRun(store, hostileBundle('hostile'));
  await buildReport({ traces: store, out, resamples: 200 });
}, 180_000);

describe('hostile names', () => {
  it('REPORT.md shows them escaped: no injected heading, HTML, link, image, bidi or NUL; tables keep their columns', () => {
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    expectInertMarkdown(md, 'REPORT.md');
    // ...and the names are there, readable.
    expect(md).toContain('sim:x ## PWNED heading &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(md).toContain('\\[click\\](javascript:alert(1))');
    expect(md).toContain('!\\[\\](http://127.0.0.1:9/track.png)');
    expect(md).toContain('sim:\\\\u202Egnp.exe');
    expect(md).toContain('nul\\\\u0000byte');
    expect(md).toContain('a\\|b\\|c');
    expect(md.split('\n')[0]).toBe('# Standoff report: !\\[\\](http://127.0.0.1:9/track.png)');
  }, 240_000);

  it('the figures: well-formed SVG text, no script, no raw control or bidi character', () => {
    const figs = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.svg'));
    expect(figs.length).toBeGreaterThan(0);
    for (const f of figs) {
      const svg = readFileSync(join(out, 'figures', f), 'utf8');
      expect(RAW.test(svg), `${f}: raw control or bidi character`).toBe(false);
      expect(/<script|<foreignObject|\shref=/i.test(svg), `${f}: active content`).toBe(false);
      expect(/^<svg[^]*<\/svg>\n?$/.test(svg), `${f}: one svg element`).toBe(true);
    }
    expect(readFileSync(join(out, 'figures', 'results.svg'), 'utf8')).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  }, 240_000);

  it('sql -f markdown escapes every cell', () => {
    const r = runCli(['sql', '--traces', store, '-f', 'markdown', 'SELECT DISTINCT subject_model, subject_family FROM episodes ORDER BY 1']);
    expect(r.code, r.stderr).toBe(0);
    expectInertMarkdown(r.stdout, 'sql -f markdown');
    expect(r.stdout).toContain('| sim:x<br>## PWNED heading<br>&lt;script&gt;alert(1)&lt;/script&gt; | @SUM(1+1) |');
    expect(r.stdout).toContain('| sim:\\\\u202Egnp.exe |');
  }, 240_000);

  it('sql -f csv carries the values as data (formulas neutralised with --csv-safe, and by default in --out .csv)', () => {
    const q = `SELECT DISTINCT subject_model FROM episodes WHERE subject_model IN ('${HOSTILE.hyperlink.replace(/'/g, "''")}', '${HOSTILE.bidi}') ORDER BY 1`;
    const raw = runCli(['sql', '--traces', store, '-f', 'csv', q]).stdout;
    expect(raw).toBe(`subject_model\n"${HOSTILE.hyperlink.replace(/"/g, '""')}"\n${HOSTILE.bidi}\n`);
    const safe = runCli(['sql', '--traces', store, '-f', 'csv', '--csv-safe', "SELECT DISTINCT subject_family FROM episodes WHERE subject_family IS NOT NULL"]).stdout;
    expect(safe).toBe(`subject_family\n'${HOSTILE.at}\n`);
    const file = join(out, '..', 'names.csv');
    expect(runCli(['sql', '--traces', store, '--out', file, "SELECT DISTINCT scenario_id FROM episodes WHERE scenario_id LIKE '+%'"]).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(`scenario_id\n'${HOSTILE.cmd}\n`);
  }, 240_000);
});
