/**
 * REPORT.md's Markdown as HTML, for `reports/index.html`: the page shows the very text and numbers
 * of REPORT.md (rendered by the sections from the same results), so the two cannot disagree.
 *
 * Only the subset the report writes is understood: headings (with GitHub's anchor ids),
 * paragraphs, `>` quotes, `-` and `1.` lists, pipe tables, and inline `code`, `**strong**`,
 * `*emphasis*`, `[text](#anchor)` links, `<br>` and `<sub>`. Everything else is text: every
 * character is HTML-escaped (`&`, `<`, `>`, `"`, `'`), backslash escapes are undone first (so an
 * escaped name shows as itself), and a link is made only to an in-page anchor or a file under
 * `figures/`; untrusted text reaches this module already Markdown-escaped (`escapeMarkdown`), so
 * it can only ever become text.
 *
 * Hooks let the page builder replace a figure paragraph (`![..](figures/NAME.png)`) and turn a
 * table cell into a link that opens episodes.
 */

export interface MarkdownHooks {
  /** HTML for the figure `name` (from `![alt](figures/<name>.png)`), or null to drop it. */
  figure(name: string, alt: string): string | null;
  /**
   * The episode-set index a table cell opens, or null. `headers` and `at.cells` (the row's cells)
   * are plain text; `at.nth` counts the earlier tables with exactly these headers (0 for the first).
   */
  countLink(headers: string[], row: number, col: number, at: CellPlace): number | null;
}

/** Where a cell is: its row's cells as plain text and which table of its headers it is. */
export interface CellPlace {
  cells: string[];
  nth: number;
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c]);
}

const ENTITY = /^&(amp|lt|gt|quot|#39|#\d{1,6});/;
const ENTITY_TEXT: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to `-`. */
export function toSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

interface Inline {
  html: string;
  text: string;
}

/** Inline Markdown to HTML (and its plain text). `inTable`: `\|` is a pipe inside code too. */
export function inlineHtml(src: string, inTable = false): Inline {
  let html = '';
  let text = '';
  const open: string[] = [];
  const toggle = (tag: string) => {
    if (open[open.length - 1] === tag) {
      open.pop();
      html += `</${tag}>`;
    } else {
      open.push(tag);
      html += `<${tag}>`;
    }
  };
  const put = (s: string) => {
    html += escapeHtml(s);
    text += s;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const rest = src.slice(i);
    if (c === '\\' && i + 1 < src.length && /[!-/:-@[-`{-~]/.test(src[i + 1])) {
      put(src[i + 1]);
      i += 2;
      continue;
    }
    if (c === '`') {
      const fence = /^`+/.exec(rest)![0];
      const end = src.indexOf(fence, i + fence.length);
      if (end > 0 && src[end + fence.length] !== '`') {
        let body = src.slice(i + fence.length, end);
        if (body.startsWith(' ') && body.endsWith(' ') && body.trim() !== '') body = body.slice(1, -1);
        if (inTable) body = body.replace(/\\\|/g, '|');
        html += `<code>${escapeHtml(body)}</code>`;
        text += body;
        i = end + fence.length;
        continue;
      }
      put(fence);
      i += fence.length;
      continue;
    }
    if (rest.startsWith('**')) {
      toggle('strong');
      i += 2;
      continue;
    }
    if (c === '*') {
      toggle('em');
      i += 1;
      continue;
    }
    const link = /^(!?)\[((?:\\.|[^\]\\])*)\]\(([^()\s]*)\)/.exec(rest);
    if (link) {
      const inner = inlineHtml(link[2], inTable);
      const href = link[3];
      if (!link[1] && (/^#[\p{L}\p{N}_-]+$/u.test(href) || /^figures\/[A-Za-z0-9_-]+\.(svg|png|vl\.json)$/.test(href))) {
        html += `<a href="${escapeHtml(href)}">${inner.html}</a>`;
      } else html += inner.html;
      text += inner.text;
      i += link[0].length;
      continue;
    }
    const tag = /^<(br|sub|\/sub)>/.exec(rest);
    if (tag) {
      if (tag[1] === 'br') html += '<br>';
      else if (tag[1] === 'sub') open.push('sub'), (html += '<sub>');
      else if (open[open.length - 1] === 'sub') open.pop(), (html += '</sub>');
      text += tag[1] === 'br' ? ' ' : '';
      i += tag[0].length;
      continue;
    }
    const ent = c === '&' ? ENTITY.exec(rest) : null;
    if (ent) {
      const name = ent[1];
      put(ENTITY_TEXT[name] ?? String.fromCodePoint(Math.min(Number(name.slice(1)), 0x10ffff)));
      i += ent[0].length;
      continue;
    }
    put(c);
    i++;
  }
  while (open.length) html += `</${open.pop()}>`;
  return { html, text };
}

/** Splits a table row on pipes that are not backslash-escaped. */
export function splitRow(line: string): string[] {
  const cells: string[] = [];
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\' && i + 1 < line.length) {
      cur += line[i] + line[i + 1];
      i++;
    } else if (line[i] === '|') {
      cells.push(cur);
      cur = '';
    } else cur += line[i];
  }
  cells.push(cur);
  if (cells.length && cells[0].trim() === '') cells.shift();
  if (cells.length && cells[cells.length - 1].trim() === '') cells.pop();
  return cells.map((c) => c.trim());
}

function tableHtml(lines: string[], hooks: MarkdownHooks, seen: Map<string, number>): string {
  const head = splitRow(lines[0]).map((c) => inlineHtml(c, true));
  const align = splitRow(lines[1]).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : 'left'));
  const headers = head.map((h) => h.text);
  const sig = JSON.stringify(headers);
  const nth = seen.get(sig) ?? 0;
  seen.set(sig, nth + 1);
  const th = head.map((h, j) => `<th class="a-${align[j] ?? 'left'}"><button type="button" class="sort">${h.html}</button></th>`).join('');
  const rows = lines.slice(2).map((line, r) => {
    const inline = splitRow(line).map((c) => inlineHtml(c, true));
    const at: CellPlace = { cells: inline.map((c) => c.text), nth };
    const tds = inline.map((cellHtml, j) => {
      const set = hooks.countLink(headers, r, j, at);
      const body = set === null ? cellHtml.html : `<a class="count" href="#browser" data-set="${set}">${cellHtml.html}</a>`;
      return `<td class="a-${align[j] ?? 'left'}" data-sort="${escapeHtml(cellHtml.text)}">${body}</td>`;
    });
    return `<tr>${tds.join('')}</tr>`;
  });
  return `<div class="table-wrap"><table class="sortable"><thead><tr>${th}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`;
}

/** The report's Markdown as HTML (see the module comment). */
export function toReportHtml(md: string, hooks: MarkdownHooks): string {
  return blocksHtml(md.split('\n'), hooks, new Map(), 0);
}

/** A `-` or `1.` list; an item's lines indented by two or more spaces belong to it (`  - ` ones as a nested list). */
function listHtml(block: string[]): string {
  const ordered = /^\d+\. /.test(block[0]);
  const items: { head: string; more: string[] }[] = [];
  for (const l of block) {
    if (/^\s{2,}\S/.test(l) && items.length) items[items.length - 1].more.push(l.trim());
    else items.push({ head: l.replace(/^(- |\d+\. )/, ''), more: [] });
  }
  const li = items.map(({ head, more }) => {
    const text = [head, ...more.filter((m) => !m.startsWith('- '))].join('\n');
    const sub = more.filter((m) => m.startsWith('- ')).map((m) => `<li>${inlineHtml(m.slice(2)).html}</li>`);
    return `<li>${inlineHtml(text).html}${sub.length ? `\n<ul>\n${sub.join('\n')}\n</ul>` : ''}</li>`;
  });
  return `<${ordered ? 'ol' : 'ul'}>\n${li.join('\n')}\n</${ordered ? 'ol' : 'ul'}>`;
}

/** Block-level Markdown (headings, tables, quotes, lists, figures, paragraphs); a quote's body is blocks too (at most 4 deep). */
function blocksHtml(lines: string[], hooks: MarkdownHooks, seen: Map<string, number>, depth: number): string {
  const out: string[] = [];
  let i = 0;
  const take = (test: (l: string) => boolean) => {
    const block: string[] = [];
    while (i < lines.length && test(lines[i])) block.push(lines[i++]);
    return block;
  };
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
      continue;
    }
    const h = /^(#{1,6}) (.*)$/.exec(line);
    if (h) {
      const inner = inlineHtml(h[2]);
      out.push(`<h${h[1].length} id="${escapeHtml(toSlug(inner.text))}">${inner.html}</h${h[1].length}>`);
      i++;
      continue;
    }
    if (line.startsWith('|') && i + 1 < lines.length && /^\|\s*:?-{3}/.test(lines[i + 1])) {
      out.push(tableHtml(take((l) => l.startsWith('|')), hooks, seen));
      continue;
    }
    if (line.startsWith('> ') || line === '>') {
      const block = take((l) => l.startsWith('>')).map((l) => l.replace(/^> ?/, ''));
      out.push(depth < 4 ? `<blockquote>${blocksHtml(block, hooks, seen, depth + 1)}</blockquote>` : `<blockquote><p>${inlineHtml(block.join('\n')).html}</p></blockquote>`);
      continue;
    }
    if (/^- /.test(line) || /^\d+\. /.test(line)) {
      const ordered = /^\d+\. /.test(line);
      out.push(listHtml(take((l) => (ordered ? /^\d+\. /.test(l) : /^- /.test(l)) || /^\s{2,}\S/.test(l))));
      continue;
    }
    const para = take((l) => l.trim() !== '' && !/^(#{1,6} |\||> |- |\d+\. )/.test(l));
    if (para.length === 0) {
      // A line that starts a block but is not one (e.g. a lone `|`): text.
      out.push(`<p>${inlineHtml(lines[i++]).html}</p>`);
      continue;
    }
    const fig = para.length === 1 ? /^!\[((?:\\.|[^\]\\])*)\]\(figures\/([A-Za-z0-9_-]+)\.png\)$/.exec(para[0]) : null;
    if (fig) {
      const html = hooks.figure(fig[2], inlineHtml(fig[1]).text);
      if (html) out.push(html);
      continue;
    }
    out.push(`<p>${inlineHtml(para.join('\n')).html}</p>`);
  }
  return out.join('\n');
}
