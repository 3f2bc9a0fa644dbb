/**
 * index.html's Markdown renderer on the blocks the report writes inside quotes: the gate is a `>`
 * quote holding a paragraph and a list whose items have nested items (issue 21: a failing gate
 * rendered as one run-on paragraph). Unit level, no browser.
 */
import { describe, expect, it } from 'vitest';
import { toReportHtml, type MarkdownHooks } from '../../src/report/html/markdown-html.ts';

const hooks: MarkdownHooks = { figure: () => null, countLink: () => null };

describe('toReportHtml: quotes and nested lists', () => {
  it('a quote keeps its paragraphs and its list, with nested items, as HTML blocks', () => {
    const md = ['> **Gate: FAILED** (1 of 3).', '>', '> - **FAIL**: counts', ">   - a: 4 <img src=x onerror=alert(1)>", '>   - b: 1', '> - pass: other', '', 'After.'].join('\n');
    expect(toReportHtml(md, hooks)).toBe(
      [
        '<blockquote><p><strong>Gate: FAILED</strong> (1 of 3).</p>',
        '<ul>',
        '<li><strong>FAIL</strong>: counts',
        '<ul>',
        '<li>a: 4 &lt;img src=x onerror=alert(1)&gt;</li>',
        '<li>b: 1</li>',
        '</ul></li>',
        '<li>pass: other</li>',
        '</ul></blockquote>',
        '<p>After.</p>',
      ].join('\n'),
    );
  });

  it('a one-line quote is one paragraph, as before; quotes nest at most 4 deep', () => {
    expect(toReportHtml('> **Gate: PASSED** (8/8).', hooks)).toBe('<blockquote><p><strong>Gate: PASSED</strong> (8/8).</p></blockquote>');
    const deep = toReportHtml('> > > > > > x', hooks);
    expect(deep.match(/<blockquote>/g)!.length).toBe(5);
    expect(deep).toContain('<p>&gt; x</p>');
  });

  it('tables with the same headers are numbered in order for the count links', () => {
    const seen: [number, number, string[]][] = [];
    const t = '| A | B |\n| --- | ---: |\n| x | 1 |\n';
    toReportHtml(`${t}\n${t}\n| A | C |\n| --- | --- |\n| y | 2 |\n`, { figure: () => null, countLink: (_h, row, col, at) => (col === 1 && seen.push([at.nth, row, at.cells]), null) });
    expect(seen).toEqual([[0, 0, ['x', '1']], [1, 0, ['x', '1']], [0, 0, ['y', '2']]]);
  });
});
