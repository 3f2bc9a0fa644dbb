/**
 * `reports/index.html`: one self-contained page, built by a pure function of the report's values.
 *
 *   buildIndexHtml({ results, markdown, figures, browser }, assets) -> string
 *
 * - The text is REPORT.md's, rendered to HTML (`markdown-html.ts`): the same sections and numbers
 *   from the same results; no statistic is computed here.
 * - Figures are the report's Vega-Lite specs, compiled to Vega with tooltips and legend filtering
 *   (`interactive-figures.ts`), rendered in the page by the inlined Vega (`assets.vega`) with the
 *   CSP-safe expression interpreter (`assets.interpreter`).
 * - Counts that stand for episodes (grounded-vs-lucky cells, invalid episodes, invalid/error
 *   reasons, judge disagreements) are links that open the episode browser on their set
 *   (`episode-sets.ts`); transcripts, scores and verdicts are embedded as JSON.
 *
 * Safety: data is embedded only as JSON in `<script type="application/json">` with `<`, `>`, `&`,
 * U+2028 and U+2029 escaped, so no text can end the element; the page's script puts data in the
 * DOM with `textContent` only. A Content-Security-Policy meta allows no network at all
 * (`default-src 'none'`), scripts only by hash, images only as `data:`.
 * Determinism: no clock, no paths, stable key order: same values, same bytes.
 */
import { createHash } from 'node:crypto';
import { visibleControls } from '../../escape.ts';
import { quoteLiteral } from '../../store/duckdb.ts';
import type { FigureSpec } from '../figures.ts';
import { CLIENT_SCRIPT } from './client-script.ts';
import { toSqlCommand } from './episode-sets.ts';
import { buildCountLinks, buildGenericCountLinks } from './count-links.ts';
import { toVegaSpec } from './interactive-figures.ts';
import { escapeHtml, toReportHtml, type MarkdownHooks } from './markdown-html.ts';
import { PAGE_CSS } from './page-css.ts';
import { reportError } from '../sections/context.ts';
import { toScriptJson } from './script-json.ts';

export { toScriptJson, buildCountLinks, buildGenericCountLinks };
import { ALL_SETS_MAX_SAMPLES, MIN_SET_QUERIES, SET_SCAN_BUDGET, type EpisodeBrowserData } from './load-episodes.ts';

/** The scripts the page inlines (read from the installed packages by `readHtmlAssets`). */
export interface HtmlAssets {
  /** vega/build/vega.min.js */
  vega: string;
  /** vega-interpreter as a classic script defining `standoffVegaInterpreter`. */
  interpreter: string;
}

export interface IndexHtmlInput {
  /** The suite named in the page title. */
  suite: string;
  /** Which table cells open which episode set (`buildCountLinks` for a Standoff report); null: none, the sets are listed in the browser index only. */
  countLinks: ((setIndex: Map<string, number>) => MarkdownHooks['countLink']) | null;
  /** REPORT.md as written. */
  markdown: string;
  figures: FigureSpec[];
  browser: EpisodeBrowserData;
}

/** The documented size the page stays under (transcripts past their budget are left out). */
export const INDEX_HTML_CAP_BYTES = 20 * 1000 * 1000;

/** Untrusted text as HTML text: escaped, control and bidi characters visible (`\uXXXX`). */
const text = (s: string) => escapeHtml(visibleControls(s));

const fmtMb = (bytes: number) => `${Number((bytes / 1e6).toFixed(1))} MB`;

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** A script's text inlined as is: it must not contain anything that would end or confuse the element. */
function inlineScript(src: string, what: string): string {
  if (/<\/script|<!--/i.test(src)) throw new Error(`${what} cannot be inlined: it contains </script or <!--`);
  return src;
}

function figureHtml(f: FigureSpec | undefined, name: string, alt: string): string | null {
  if (!f) return null;
  return `<figure class="vega" data-figure="${escapeHtml(name)}"><div class="chart" role="img" aria-label="${escapeHtml(alt)}"></div><figcaption>${escapeHtml(f.caption)} Hover a mark for its numbers; click a legend entry to pick a subject (shift-click for more, double-click to clear).</figcaption></figure>`;
}

const messagesSql = (run: string, episode: string) =>
  `SELECT seq, role, content, reasoning, tool_name, tool_args, tool_ok, tool_error FROM messages WHERE run_id = ${quoteLiteral(run)} AND episode_id = ${quoteLiteral(episode)} ORDER BY seq`;

/** The JSON the page's script reads: sets with their `standoff sql` commands, episodes. */
export function toBrowserJson(b: EpisodeBrowserData): unknown {
  return {
    has_messages: b.has_messages,
    transcripts_omitted: b.transcripts_omitted,
    budget_bytes: b.budget_bytes,
    set_list_cap: b.set_list_cap,
    max_episodes: b.max_episodes,
    sets: b.sets.map((s) => ({ key: s.key, title: s.title, count: s.count, members: s.members, scorer: s.scorer, command: toSqlCommand(s.sql) })),
    episodes: b.episodes.map((e) => ({ ...e, transcript_command: e.messages === null && e.message_count > 0 ? toSqlCommand(messagesSql(e.run_id, e.episode_id)) : null })),
  };
}

function browserIndexHtml(b: EpisodeBrowserData): string {
  const out: string[] = ['<section id="episode-browser"><h2 id="episode-browser-index">Episode browser</h2>'];
  out.push(
    `<p>Every count underlined in the tables above opens the episodes it counts: their transcripts (messages, reasoning, tool calls with arguments and results), the decision, the scores and every judge's verdict with its raw first line. Each list shows the SQL that defines it, for <code>standoff sql</code>. At most ${b.set_list_cap} episodes are listed per count, ${b.max_episodes} in all; a list that shows fewer than its count says so, and its query gets them all.</p>`,
  );
  if (b.sets_left_out > 0) {
    out.push(
      `<p class="omitted sets-left-out">${b.sets_left_out} more count${b.sets_left_out === 1 ? ' is' : 's are'} shown without a link: each linked count runs its own query over the store, and above ${ALL_SETS_MAX_SAMPLES.toLocaleString('en-US')} samples the report runs only as many as keep the samples scanned under ${SET_SCAN_BUDGET.toLocaleString('en-US')} (at least ${MIN_SET_QUERIES}), in page order. Their definitions are the same queries as the linked counts of their kind; <code>standoff sql</code> runs them.</p>`,
    );
  }
  if (!b.has_messages) out.push('<p class="no-transcript">No transcripts stored: the store has no messages for these episodes (CSV and some imports carry none). Episode rows, scores and verdicts are shown.</p>');
  if (b.transcripts_omitted > 0) {
    out.push(
      `<p class="omitted">${b.transcripts_omitted} transcript${b.transcripts_omitted === 1 ? ' was' : 's were'} left out to keep this file under ${INDEX_HTML_CAP_BYTES / 1e6} MB (episode rows, scores, verdicts and transcripts are embedded up to ${fmtMb(b.budget_bytes)}; transcripts in run and episode order while they fit). Each such episode shows the query that gets its messages; all of them: <code>${escapeHtml(toSqlCommand('SELECT * FROM messages ORDER BY run_id, episode_id, seq'))}</code></p>`,
    );
  }
  const rows = b.sets.map((s, i) => `<tr><td data-sort="${text(s.title)}">${text(s.title)}</td><td class="a-right" data-sort="${s.count}"><a class="count" href="#browser" data-set="${i}">${s.count}</a></td></tr>`);
  out.push(`<div class="table-wrap"><table class="sortable"><thead><tr><th class="a-left"><button type="button" class="sort">Episodes of</button></th><th class="a-right"><button type="button" class="sort">Count</button></th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div></section>`);
  return out.join('\n');
}

const PANEL = `<aside id="browser" hidden aria-label="Episode browser"><div class="panel-head"><h2 id="browser-title"></h2><button type="button" id="browser-close" aria-label="Close">Close ✕</button></div><div id="browser-list"></div><div id="browser-transcript"></div></aside>`;

/**
 * The count a table cell prints: the whole cell as a count (`1,234`), or the denominator of the
 * first `x/n` in it (a rate cell, `98.9% (89/90) ...`); null when it prints no count (an estimate).
 */
export function printedCount(text: string): number | null {
  const t = text.trim();
  if (/^\d{1,3}(,\d{3})*$/.test(t)) return Number(t.replace(/,/g, ''));
  const m = /\(\d[\d,.]*\/(\d{1,3}(?:,\d{3})*)\)/.exec(t);
  return m ? Number(m[1].replace(/,/g, '')) : null;
}

/**
 * The count links, reconciled: a cell linked to a set that says what its cell prints
 * (`BrowserSet.shows`: a four-cell count's items, a slice's trials) must print exactly that, or the
 * build fails (the loader has already checked the set's SQL finds its count).
 */
function reconciledLinks(link: MarkdownHooks['countLink'], sets: EpisodeBrowserData['sets']): MarkdownHooks['countLink'] {
  return (headers, row, col, at) => {
    const i = link(headers, row, col, at);
    const want = i === null ? undefined : sets[i]?.shows;
    if (i === null || want === undefined) return i;
    const printed = printedCount(at.cells[col] ?? '');
    if (printed !== null && printed !== want) {
      throw reportError('linkedCountMismatch', 'data', `index.html: the cell "${at.cells[col]}" (column "${headers[col]}") prints ${printed} but opens "${sets[i].key}", which holds ${want}`);
    }
    return i;
  };
}

/** The page (see the module comment). */
export function buildIndexHtml(input: IndexHtmlInput, assets: HtmlAssets): string {
  const { suite, markdown, figures, browser, countLinks } = input;
  const setIndex = new Map(browser.sets.map((s, i) => [s.key, i]));
  const body = toReportHtml(markdown, {
    figure: (name, alt) => figureHtml(figures.find((f) => f.name === name), name, alt),
    countLink: countLinks ? reconciledLinks(countLinks(setIndex), browser.sets) : () => null,
  });
  const vegaSpecs = figures.map((f) => `<script type="application/json" id="vega-${escapeHtml(f.name)}">${toScriptJson(toVegaSpec(f.spec))}</script>`);
  const scripts = [inlineScript(assets.vega, 'vega'), inlineScript(assets.interpreter, 'vega-interpreter'), inlineScript(CLIENT_SCRIPT, 'the page script')];
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`, // hashes and keywords only: no quote or markup
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${text(`Standoff report: ${suite}`)}</title>`,
    `<style>${PAGE_CSS}</style>`,
    '</head>',
    '<body>',
    `<nav class="top"><span class="brand">Standoff report</span><a href="#contents">Contents</a><a href="#episode-browser-index">Episode browser</a><span class="muted">same numbers as REPORT.md and results.json</span></nav>`,
    '<main id="report">',
    body,
    browserIndexHtml(browser),
    '</main>',
    PANEL,
    '<div id="tooltip" hidden></div>',
    `<script type="application/json" id="standoff-browser">${toScriptJson(toBrowserJson(browser))}</script>`,
    ...vegaSpecs,
    ...scripts.map((s) => `<script>${s}</script>`),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
