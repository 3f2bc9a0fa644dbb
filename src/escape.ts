/**
 * Untrusted text made inert for each output: model names, sample ids, messages and tool arguments
 * come from outside (endpoints, CSV files, Inspect logs) and are stored as they came, including
 * NUL and other control characters. They are escaped where they are shown:
 *
 * - {@link visibleControls}: control characters (C0 but tab/newline, DEL, C1), bidirectional
 *   overrides and isolates (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) and the Unicode
 *   line/paragraph separators become visible `\uXXXX` text, so they cannot reorder what a reader
 *   sees, move a terminal's cursor (ESC) or end a line.
 * - {@link escapeMarkdown}: inline Markdown text (a table cell, a list item, a heading): newlines
 *   become a space (or what the caller asks), `&`, `<`, `>` become entities (no HTML, no
 *   autolink), and the characters that start Markdown syntax (`\ ` * ~ [ ] |`, a leading `#`,
 *   and `_` where it is not inside a word) are backslash-escaped, so no link, image, emphasis,
 *   table cell or heading can be injected. The text is inline: it never starts a line.
 * - {@link markdownCode}: inline code that survives any backticks and pipes.
 * - {@link terminalLine} / {@link terminalText}: text for a terminal (tables, summaries, `validate`,
 *   ingest summaries, every error message the CLI prints): control and bidi characters visible,
 *   and in a line, line breaks a space, so no value can move the cursor, set the window title,
 *   clear the screen, reorder a line or forge one.
 * - {@link csvSafe}: a cell that a spreadsheet would run as a formula (starting with `=`, `+`, `-`,
 *   `@`, tab or CR, as OWASP lists them) gets a leading `'`.
 *
 * JSON output needs none of this (JSON escapes control characters itself) and Parquet / Arrow
 * carry the values unchanged: they are data.
 */

/** Characters shown as `\uXXXX`: C0 controls but tab/LF/CR, DEL, C1, bidi controls, U+2028/9. */
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const hex4 = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Makes control and bidi characters visible as `\uXXXX` (see the module comment). Newlines and
 * tabs are kept unless `lines` is given: then each line break (CRLF, CR, LF) becomes `lines` and a
 * tab a space.
 *
 * @example visibleControls('a\u202Eb\u0000') // 'a\\u202Eb\\u0000'
 */
export function visibleControls(s: string, lines?: string): string {
  let t = s.replace(INVISIBLE, hex4);
  if (lines !== undefined) t = t.replace(/\r\n|\r|\n/g, lines).replace(/\t/g, ' ');
  return t;
}

/**
 * One line for a terminal: control and bidi characters visible (`\u001B`), line breaks and tabs a
 * space. Every name, message or summary line the CLI prints goes through it (or through
 * {@link terminalText} for a block whose lines are already one each).
 *
 * @example terminalLine('evil\u001b]0;PWNED\u0007\n## x') // 'evil\\u001B]0;PWNED\\u0007 ## x'
 */
export function terminalLine(s: string): string {
  return visibleControls(s, ' ');
}

/** A block of terminal text: control and bidi characters visible, its line breaks kept. */
export function terminalText(s: string): string {
  return visibleControls(s);
}

/**
 * Inline Markdown text that renders as exactly the characters given (see the module comment).
 * `newline` replaces line breaks (default a space; `<br>` keeps them visible in a table cell).
 *
 * @example escapeMarkdown('x\n## y <script> [a](javascript:b)') // 'x ## y &lt;script&gt; \\[a\\](javascript:b)'
 */
export function escapeMarkdown(s: string, newline = ' '): string {
  const t = visibleControls(s)
    .replace(/[\\`*~[\]|]/g, (c) => `\\${c}`)
    .replace(/^#/, '\\#')
    // `_` between letters or digits cannot start or end emphasis (CommonMark): left as it is.
    .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
  return t.replace(/\r\n|\r|\n/g, newline).replace(/\t/g, ' ');
}

/**
 * Inline code for Markdown (also inside a table cell): the fence is longer than any run of
 * backticks in the text, pipes are escaped (GitHub reads `\|` as `|` in a table, also in code),
 * line breaks become spaces and control characters are made visible.
 */
export function markdownCode(s: string): string {
  const t = visibleControls(s, ' ').replace(/\|/g, '\\|');
  let longest = 0;
  for (const m of t.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${t}${pad}${fence}`;
}

/**
 * JSON text (a figure's Vega-Lite spec, results.json) with control and bidi characters written as
 * JSON's own `\uXXXX` escapes: the same JSON value, and no U+202E or DEL raw in the file.
 */
export function inertJson(json: string): string {
  return visibleControls(json);
}

/** Prefixes a cell a spreadsheet would read as a formula with `'` (OWASP's CSV-injection advice). */
export function csvSafe(s: string): string {
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
}
