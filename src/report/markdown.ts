/**
 * Stable text formatting for the report: percentages, counts, intervals and GitHub Markdown tables.
 * Everything is a pure function of its input (`toFixed`, no locale), so the same numbers always
 * give the same bytes. Text from outside (model names, ids, messages) goes through `cell` or
 * `code`, which make it inert.
 */
import { escapeMarkdown, markdownCode, visibleControls } from '../escape.ts';

/** `33.3%` (one decimal); `—` for null. */
export function pct(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return `${fixed(x * 100, digits)}%`;
}

/** Fixed decimals without `-0.0`. */
export function fixed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const s = x.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Signed percentage points: `+12.3 pp`. */
export function pp(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const s = fixed(x * 100, digits);
  return `${s.startsWith('-') ? s.replace('-', '−') : `+${s}`} pp`;
}

/** `33.3% (20/60)`; `— (0/0)` when there is no denominator. */
export function rateCell(successes: number, trials: number): string {
  return `${trials > 0 ? pct(successes / trials) : '—'} (${fmtCount(successes)}/${fmtCount(trials)})`;
}

/** Integer with thin grouping for large numbers: `1,000,000`. */
export function fmtCount(n: number): string {
  const [int, frac] = (Number.isInteger(n) ? String(Math.abs(n)) : fixed(Math.abs(n), 1)).split('.');
  const s = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac ? `.${frac}` : '');
  return n < 0 ? `−${s}` : s;
}

/** A count with its noun, singular for exactly one: "1 sample", "1,200 samples". */
export function fmtCountOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${fmtCount(n)} ${n === 1 ? noun : plural}`;
}

/** `[14.1, 32.2]` in percent; `—` when either end is null. */
export function pctInterval(lower: number | null | undefined, upper: number | null | undefined, digits = 1): string {
  if (lower === null || lower === undefined || upper === null || upper === undefined) return '—';
  return `[${fixed(lower * 100, digits)}, ${fixed(upper * 100, digits)}]`;
}

/** `[−12.3, +4.0] pp`. */
export function ppInterval(lower: number | null | undefined, upper: number | null | undefined): string {
  if (lower === null || lower === undefined || upper === null || upper === undefined) return '—';
  const sgn = (x: number) => {
    const s = fixed(x * 100, 1);
    return s.startsWith('-') ? s.replace('-', '−') : `+${s}`;
  };
  return `[${sgn(lower)}, ${sgn(upper)}] pp`;
}

/** The report's one sign convention, said once in the method notes of every report. */
export const SIGN_NOTE = '- Signs: every difference is A − B (a pair\'s first subject minus its second; a judge minus the panel median; leave-one-out: without the judge minus the full panel; recomputed minus reported), written with its sign: + means the first is higher.';

/** A difference with its sign spelled out: `+0.123`, `−0.045` (the report's one sign convention, A − B). */
export function signed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const s = fixed(x, digits);
  return s.startsWith('-') ? s.replace('-', '−') : `+${s}`;
}

/** `[−0.123, +0.045]`: an interval of a difference, both ends signed. */
export function signedInterval(lower: number | null | undefined, upper: number | null | undefined, digits = 3): string {
  if (lower === null || lower === undefined || upper === null || upper === undefined) return '—';
  return `[${signed(lower, digits)}, ${signed(upper, digits)}]`;
}

/** `[0.512, 0.634]`. */
export function numInterval(lower: number | null | undefined, upper: number | null | undefined, digits = 3): string {
  if (lower === null || lower === undefined || upper === null || upper === undefined) return '—';
  return `[${fixed(lower, digits)}, ${fixed(upper, digits)}]`;
}

/** p-value: `<0.001` below a thousandth, else three decimals. */
export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '—';
  if (p < 0.001) return '<0.001';
  return fixed(p, 3);
}

/**
 * Untrusted text (a name, id or message) as inline Markdown, for a table cell or a sentence:
 * newlines, `|`, HTML, link / image / emphasis syntax and control or bidi characters are made
 * inert (`escapeMarkdown`, src/escape.ts). `—` for null.
 */
export function cell(s: string | number | null | undefined): string {
  if (s === null || s === undefined) return '—';
  return typeof s === 'number' ? String(s) : escapeMarkdown(s);
}

/** Untrusted text as inline code: survives any backticks and pipes (also in a table). */
export function code(s: string): string {
  return markdownCode(s);
}

/** A Markdown fragment `md` inserts as it is: made by {@link trusted} (text the report wrote itself). */
export interface Md {
  readonly markdown: string;
}

/**
 * Text the report wrote itself (a formatted number, a fragment already escaped with `cell` /
 * `code`, a label from this code base), for `md` to insert unescaped. Never wrap a value from
 * outside in it.
 */
export const trusted = (markdown: string): Md => ({ markdown });

/** What `md` accepts: outside text (escaped), lists of it (escaped, `, `-joined), numbers, trusted fragments. */
export type MdValue = string | number | null | undefined | Md | readonly (string | Md)[];

const mdValue = (v: MdValue): string => {
  if (Array.isArray(v)) return v.map((x) => mdValue(x as string | Md)).join(', ');
  if (v !== null && typeof v === 'object') return (v as Md).markdown;
  return cell(v as string | number | null | undefined);
};

/**
 * The report's Markdown template: the literal parts are the report's own text; every
 * interpolated string is outside text and is escaped with `cell` (src/escape.ts `escapeMarkdown`:
 * no HTML, heading, link, emphasis, code span or raw control / bidi character), unless it is a
 * {@link trusted} fragment. A sentence that names a subject, scorer, run or judge is written with it.
 *
 * @example md`Alignment was not measured for ${subjects} (${trusted(pct(x))}).`
 */
export function md(strings: TemplateStringsArray, ...values: MdValue[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += mdValue(values[i]) + strings[i + 1]!;
  return out;
}

/**
 * The last line of defence of a whole Markdown document (REPORT.md, a rendered notebook): a
 * control or bidi character that reached it unescaped is made visible (`\\uXXXX`). Values are
 * escaped where they are interpolated (`cell`, `code`, `md`); this only keeps ESC, NUL and U+202E
 * out of the file should a site miss one.
 */
export const inertDocument = (markdown: string): string => visibleControls(markdown);

export type Align = 'l' | 'r' | 'c';

/** A GitHub Markdown table. Cells are used as given (escape with `cell` first when needed). */
export function table(headers: string[], rows: string[][], align?: Align[]): string {
  const al = headers.map((_, i) => align?.[i] ?? 'l');
  const sep = al.map((a) => (a === 'r' ? '---:' : a === 'c' ? ':---:' : '---'));
  const lines = [`| ${headers.join(' | ')} |`, `| ${sep.join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  return lines.join('\n') + '\n';
}

/** Compares strings by code unit (locale-free, deterministic). */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
