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
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { buildReport } from '../../src/report/build-report.ts';
import { cell, code, md, trusted } from '../../src/report/markdown.ts';
import { inlineHtml } from '../../src/report/html/markdown-html.ts';
import { inertJson, terminalLine } from '../../src/escape.ts';
import { CRED_PASSWORD, EVIL, EVIL_SCORER, HOSTILE, RAW_PAYLOAD, hostileBundle, writeHostileCsv, writeHostileInspect, writeHostileLmEval } from '../helpers/hostile.ts';
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

// --- issue 22: one hostile name through every ingest path and every output ----------------------

/** Terminal text: no raw control or bidi character (ESC, BEL, NUL, CR, U+202E ...), no forged line, no credential. */
const TERM_RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
function expectInertTerminal(text: string, where: string) {
  expect(text, `${where}: raw control or bidi character`).not.toMatch(TERM_RAW);
  expect(text, `${where}: a credential`).not.toContain(CRED_PASSWORD);
  for (const line of text.split('\n')) expect(line, `${where}: a forged line`).not.toMatch(/^## PWNED/);
}

describe('issue 22: a hostile name through CSV, Inspect, lm-eval and a Standoff store', () => {
  const stores: Record<string, string> = {};
  const ingestOut: Record<string, string> = {};
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'standoff-hostile22-'));
    const ingest: Array<[string, string[]]> = [
      ['csv', ['csv', writeHostileCsv(dir), '--subject', 'model', '--item', 'item', '--scores', 'score']],
      ['inspect', ['inspect', writeHostileInspect(dir)]],
      ['lm-eval', ['lm-eval', writeHostileLmEval(dir)]],
    ];
    for (const [name, args] of ingest) {
      stores[name] = join(dir, `traces-${name}`);
      const r = runCli(['ingest', ...args, '--traces', stores[name]!]);
      expect(r.code, r.stderr).toBe(0);
      ingestOut[name] = r.stdout + r.stderr;
    }
    // A copied Standoff store: subjects and judges named EVIL, a run config holding a credential URL.
    const b = hostileBundle('hostile22');
    const rename = (s: string) => (s === HOSTILE.newline ? EVIL : s);
    b.episodes = b.episodes!.map((e) => ({ ...e, subject_model: rename(e.subject_model) }));
    b.judgments = b.judgments!.map((j) => ({ ...j, judge_model: j.judge_model === HOSTILE.script ? EVIL : j.judge_model }));
    stores.standoff = join(dir, 'traces-standoff');
    await writeRun(stores.standoff, b);
  }, 300_000);

  it('ingest summaries show the names inert', () => {
    for (const [name, text] of Object.entries(ingestOut)) expectInertTerminal(text, `ingest ${name}`);
    expect(ingestOut.inspect).toContain('## PWNED heading ` ``` \\u001B]0;PWNED\\u0007\\u001B[2J nul\\u0000x \\u202Eevil');
  }, 60_000);

  it('no credential is stored: URL user-info is masked in runs.config (Inspect model_base_url, model_args at any depth; lm-eval model_args and config)', () => {
    for (const name of ['inspect', 'lm-eval', 'csv']) {
      const r = runCli(['sql', '--traces', stores[name]!, '-f', 'json', 'SELECT config, notes, source_file FROM runs']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, name).not.toContain(CRED_PASSWORD);
      expect(r.stdout, name).not.toContain('alice');
    }
    const cfg = JSON.parse(JSON.parse(runCli(['sql', '--traces', stores.inspect!, '-f', 'json', 'SELECT config FROM runs']).stdout)[0].config);
    expect(cfg.model_base_url).toBe('http://[REDACTED]@127.0.0.1:9/v1');
    expect(cfg.model_args).toEqual({ url: 'http://[REDACTED]@127.0.0.1:9/v1', client: { endpoint: 'see http://[REDACTED]@127.0.0.1:9/v1 for details' } });
    const lm = JSON.parse(JSON.parse(runCli(['sql', '--traces', stores['lm-eval']!, '-f', 'json', 'SELECT config FROM runs']).stdout)[0].config);
    expect(lm.config.model_args).toBe('pretrained=x,base_url=http://[REDACTED]@127.0.0.1:9/v1');
    expect(lm.config.endpoint).toBe('http://[REDACTED]@127.0.0.1:9/v1');
  }, 60_000);

  it('a copied store whose run id holds backticks: every code span keeps it (LOW: a backtick broke out)', () => {
    const T = join(dir, 'traces-backtick');
    cpSync(stores.csv!, T, { recursive: true });
    for (const table of readdirSync(T)) {
      for (const part of readdirSync(join(T, table))) renameSync(join(T, table, part), join(T, table, 'run_id=x`y``z'));
    }
    const out = join(dir, 'report-backtick');
    const r = runCli(['report', 'build', '--traces', T, '--out', out, '--resamples', '200']);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    const lines = md.split('\n').filter((l) => l.includes('x`y``z'));
    expect(lines.length).toBeGreaterThanOrEqual(3); // the Runs line, the run table, Reproduce
    for (const l of lines) {
      const { html } = inlineHtml(l.replace(/^- /, ''));
      expect(html, l).toMatch(/<code>[^<]*x`y``z[^<]*<\/code>/);
      expect(html.replace(/<code>[^<]*<\/code>/g, ''), l).not.toContain('y``z'); // none of it outside a code element
    }
  }, 240_000);

  for (const name of ['csv', 'inspect', 'lm-eval', 'standoff']) {
    it(`${name}: REPORT.md, index.html and the figures hold no raw payload`, () => {
      const out = join(dir, `report-${name}`);
      const r = runCli(['report', 'build', '--traces', stores[name]!, '--out', out, '--resamples', '200']);
      expect(r.code, r.stderr).toBe(0);
      expectInertTerminal(r.stdout + r.stderr, `report build ${name}`);
      const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
      expectInertMarkdown(md, `${name} REPORT.md`);
      expect(md, `${name} REPORT.md`).not.toMatch(RAW_PAYLOAD);
      expect(md).toContain('&lt;img src=x onerror=alert(1)&gt; ## PWNED heading \\` \\`\\`\\` \\\\u001B\\]0;PWNED\\\\u0007\\\\u001B\\[2J nul\\\\u0000x \\\\u202Eevil');
      const html = readFileSync(join(out, 'index.html'), 'utf8');
      expect(html, `${name} index.html`).not.toMatch(/<img src=x|s3cretP4ss/);
      // The page's own library bundles (plain <script> elements) are code; everything else, the
      // embedded JSON data included, holds no raw control or bidi character.
      expect(html.replace(/<script>[^]*?<\/script>/g, ''), `${name} index.html`).not.toMatch(TERM_RAW);
      const figures = join(out, 'figures');
      for (const f of existsSync(figures) ? readdirSync(figures).filter((x) => /\.(svg|vl\.json)$/.test(x)) : []) {
        const text = readFileSync(join(figures, f), 'utf8');
        expect(text, `${name} ${f}`).not.toMatch(TERM_RAW);
        if (f.endsWith('.svg')) expect(text, `${name} ${f}`).not.toMatch(/<img|<script|<foreignObject/i);
      }
      expect(readFileSync(join(out, 'results.json'), 'utf8'), `${name} results.json`).not.toMatch(TERM_RAW);
    }, 240_000);

    it(`${name}: validate, sql, ci and errors print the names inert`, () => {
      const T = stores[name]!;
      const metric = name === 'standoff' ? 'policy_action' : name === 'csv' ? 'score' : 'gathered_evidence';
      const runs: Array<[string, string[]]> = [
        ['validate', ['validate', '--traces', T]],
        ['sql table', ['sql', '--traces', T, 'SELECT DISTINCT subject_model, run_id FROM episodes']],
        ['sql scorers', ['sql', '--traces', T, 'SELECT DISTINCT scorer FROM scores']],
        ['ci exact', ['ci', 'exact', '--traces', T, '--metric', metric, '--by', 'subject_model']],
        ['--run nosuch', ['report', 'build', '--traces', T, '--run', 'nosuch\u001b]0;PWNED\u0007\u202e', '--out', join(dir, 'nope')]],
        ['unknown metric', ['ci', 'exact', '--traces', T, '--metric', 'x\u001b[2J\n## PWNED \u202e']],
      ];
      for (const [what, args] of runs) {
        const r = runCli(args);
        expect(r.code, `${name} ${what}: ${r.stderr}`).not.toBe(1);
        expectInertTerminal(r.stdout + r.stderr, `${name} ${what}`);
      }
      // The names are there, readable; and the error names the bad value visibly.
      if (name !== 'lm-eval') expect(runCli(runs[1]![1]).stdout).toContain('\\u202E');
      expect(runCli(runs[4]![1]).stderr).toContain('run "nosuch\\u001B]0;PWNED\\u0007\\u202E" does not exist');
    }, 240_000);
  }
});

describe('issue 22: the escaping functions themselves', () => {
  it('code spans: a backtick run cannot end them (CommonMark: a longer fence, padded), controls are visible', () => {
    for (const s of ['run-1', 'a`b', '`x`', 'a ``` b', '` ', '``', EVIL, EVIL_SCORER]) {
      const c = code(s);
      const fence = /^`+/.exec(c)![0];
      expect(c.endsWith(fence), c).toBe(true);
      const inner = c.slice(fence.length, c.length - fence.length);
      // No run of backticks inside is as long as the fence, so nothing closes the span early.
      for (const run of inner.match(/`+/g) ?? []) expect(run.length, c).not.toBe(fence.length);
      expect(c, 'one line, no raw control').not.toMatch(/[\n\r\u0000-\u001f\u202e]/);
      // The page's Markdown reader (the same rules) sees exactly one code element holding the text.
      const { html } = inlineHtml(`see ${c} end`);
      expect(html.match(/<code>/g)?.length, html).toBe(1);
      expect(html).toMatch(/^see <code>[^<]*<\/code> end$/);
    }
    expect(code('run-1')).toBe('`run-1`');
  });

  it('md escapes every interpolated string and list, and inserts only trusted fragments as they are', () => {
    expect(md`Subjects ${[EVIL, 'm1']} (${3}); ${trusted('**bold**')} ${null}`).toBe(
      `Subjects ${cell(EVIL)}, m1 (3); **bold** —`,
    );
    expect(md`${EVIL}`).not.toMatch(/<img|\n|\u001b|\u0000|\u202e/);
  });

  it('terminalLine shows ESC, BEL, NUL, U+202E and puts a name on one line', () => {
    expect(terminalLine('evil\u001b]0;PWNED\u0007\u001b[2J\n## x\u0000\u202e')).toBe('evil\\u001B]0;PWNED\\u0007\\u001B[2J ## x\\u0000\\u202E');
    expect(inertJson(JSON.stringify({ a: 'x\u202ey\u007f' }))).toBe('{"a":"x\\u202Ey\\u007F"}');
    expect(JSON.parse(inertJson(JSON.stringify({ a: 'x\u202ey\u007f' })))).toEqual({ a: 'x\u202ey\u007f' });
  });
});
