/**
 * Notebooks: Markdown files whose fenced code blocks run against the trace store.
 *
 *   runNotebook(file, { traces, runs?, out?, seed?, resamples?, level? }) -> { output, files, blocks }
 *
 * Block kinds (the fence's info string):
 * - `sql`: a query run on a read-only, sandboxed DuckDB view of the store, through `standoff
 *   sql`'s query gate and sandbox (`src/store/sql-gate.ts`: plain reads only; no EXPLAIN ANALYZE,
 *   COPY, ATTACH, SET, no function that writes). Besides the store's tables there is a
 *   view `metrics` (metric, kind, run_id, subject_model, scenario_id, epoch, domain, decision_type,
 *   variant, episode_id, value) with every metric of the store (`src/analysis/metrics.ts`: built-in,
 *   one per scorer, `<store>/metrics/*.sql`), the same view `standoff sql` sees. The result is
 *   rendered as a Markdown table (at most {@link MAX_ROWS} rows; the rest are counted).
 * - `vega-lite`: a Vega-Lite spec (JSON). Without `data`, it gets the previous `sql` block's rows
 *   inline. Rendered to `<name>-<n>.svg`, `.png` and `.vl.json` next to the output and linked.
 * - `standoff`: one statistics command (`ci exact|bootstrap|paired`, `agreement`, `judges`,
 *   `probes`), parsed and run by the CLI's own command definitions and actions: the caller passes
 *   them as `options.standoff` (the CLI passes `standoffBlockRunner(buildProgram)` from src/cli/notebook-blocks.ts;
 *   the library does not import the CLI). The store, runs, seed, resamples and level are the
 *   notebook's; see docs/notebooks.md for what a block may and may not say.
 * Everything else is copied unchanged. Each block is kept in the output, followed by its result.
 *
 * Output: `<out>/<name>.md` plus its figures, written to a temp directory first and renamed into
 * place (stale figures of an earlier run of the same notebook are removed). A failing block is a
 * one-line error naming the file and line (`notebook.sqlError`, `notebook.badSpec`,
 * `notebook.badCommand`); nothing is written then.
 */
import { readFile, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { StandoffError, oneLine, usageError } from '../errors.ts';
import { openStore } from '../store/open-store.ts';
import { type Plain, type QueryResult } from '../store/duckdb.ts';
import { executeReadOnly } from '../store/sql.ts';
import { toMarkdown } from '../store/format.ts';
import { cell, inertDocument } from '../report/markdown.ts';
import { renderFigure } from '../report/render-figure.ts';
import { baseConfig } from '../report/figures.ts';
import { DEFAULT_REPORT_SEED, DEFAULT_RESAMPLES, DEFAULT_LEVEL, type BuildReportOptions } from '../report/build-report.ts';
import { inertJson, terminalLine } from '../escape.ts';

export const MAX_ROWS = 200;
export const NOTEBOOK_BLOCKS = ['sql', 'vega-lite', 'standoff'] as const;

/** The report's options (store, runs, seed, resamples, level, progress), with the notebook's own `out`. */
export interface NotebookOptions extends Omit<BuildReportOptions, 'out'> {
  /** Output directory (default `reports/notebooks`), or a `FILE.md` path for the rendered notebook. */
  out?: string;
  /** Runs `standoff` blocks (without it, a notebook with a `standoff` block is refused). */
  standoff?: StandoffBlockRunner;
}

/** What a `standoff` block runs in: the notebook's store, runs and defaults, and its position. */
export interface StandoffBlockContext {
  /** `file:line` of the block, for error messages. */
  where: string;
  traces: string;
  runs?: string[];
  seed: number;
  resamples: number;
  level: number;
}

/** A block's output, in order: result tables and lines of text. */
/** A block's output: tables, plain text (escaped line by line) and Markdown a Standoff renderer escaped itself. */
export type StandoffBlockOutput = ({ table: QueryResult } | { text: string } | { markdown: string })[];

/** Runs one `standoff` block's command words (without a leading `standoff`). */
export type StandoffBlockRunner = (words: string[], ctx: StandoffBlockContext) => Promise<StandoffBlockOutput>;

export interface NotebookResult {
  /** Absolute path of the rendered Markdown. */
  output: string;
  /** Files written (absolute paths), sorted: the rendered Markdown and its figure files. */
  files: string[];
  /** Figures rendered (each is three files: .vl.json, .svg, .png). */
  figures: number;
  /** Executed blocks by kind. */
  blocks: { sql: number; 'vega-lite': number; standoff: number };
}

interface Block {
  kind: (typeof NOTEBOOK_BLOCKS)[number] | null;
  fence: string;
  info: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
}

type Piece = { text: string } | Block;

/** Splits Markdown into text and fenced blocks (``` or ~~~, info string = first word). */
export function parseNotebook(src: string): Piece[] {
  const lines = src.split(/\r?\n/);
  const out: Piece[] = [];
  let text: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s{0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(lines[i]);
    if (!m) {
      text.push(lines[i]);
      continue;
    }
    const fence = m[2];
    const info = m[3].toLowerCase();
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s{0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(lines[j])) body.push(lines[j++]);
    if (text.length) out.push({ text: text.join('\n') });
    text = [];
    const kind = (NOTEBOOK_BLOCKS as readonly string[]).includes(info) ? (info as Block['kind']) : null;
    out.push({ kind, fence, info: m[3] + m[4], body: body.join('\n'), line: i + 1 });
    i = j;
  }
  if (text.length) out.push({ text: text.join('\n') });
  return out;
}

/**
 * Writes one output file into the temp directory `tmp`; a failure (a full disk: ENOSPC) is
 * `notebook.unwritable` (exit 4) naming the file it was for in `outDir` (where nothing changes).
 */
async function writeOutput(tmp: string, outDir: string, file: string, data: string | Uint8Array): Promise<void> {
  try {
    await writeFile(join(tmp, file), data);
  } catch (err) {
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC' ? ' (the disk is full)' : '';
    throw new StandoffError('notebook.unwritable', 'store', `cannot write notebook output ${join(outDir, file)}${full}: ${oneLine((err as Error).message)}; nothing was written`, { cause: err });
  }
}

/** The state of one notebook run that the blocks append to. */
interface RunState {
  file: string;
  name: string;
  outDir: string;
  tmp: string;
  conn: Awaited<ReturnType<typeof openStore>>['conn'];
  log: (line: string) => void;
  md: string[];
  /** Output files (names in outDir), the Markdown first. */
  produced: string[];
  lastRows: Record<string, Plain>[] | null;
  fig: number;
}

async function runSqlBlock(st: RunState, p: Block, where: string): Promise<void> {
  let r: QueryResult;
  try {
    r = await executeReadOnly(st.conn, p.body);
  } catch (err) {
    const kind = err instanceof StandoffError && err.kind === 'store' ? 'store' : 'data';
    throw new StandoffError('notebook.sqlError', kind, `${where}: sql block failed: ${oneLine((err as Error).message)}`, { cause: err });
  }
  st.lastRows = r.rows;
  st.md.push('', renderRows(r));
  st.log(`${where}: sql, ${r.rows.length} row${r.rows.length === 1 ? '' : 's'}`);
}

/** The block's spec, with the previous sql block's rows when it has no data, and the report's config. */
function vegaSpec(st: RunState, p: Block, where: string): Record<string, unknown> {
  let spec: Record<string, unknown>;
  try {
    spec = JSON.parse(p.body) as Record<string, unknown>;
  } catch (err) {
    throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block is not JSON: ${oneLine((err as Error).message)}`, { cause: err });
  }
  if (!spec.data) {
    if (!st.lastRows) throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block has no data and no sql block comes before it`);
    spec.data = { values: st.lastRows };
  }
  spec.config = { ...baseConfig(), ...((spec.config as object) ?? {}) };
  return spec;
}

async function runVegaBlock(st: RunState, p: Block, where: string): Promise<void> {
  const spec = vegaSpec(st, p, where);
  st.fig++;
  const stem = `${st.name}-${st.fig}`;
  let rendered;
  try {
    rendered = await renderFigure(spec);
  } catch (err) {
    if (err instanceof StandoffError && err.code === 'report.externalData') throw new StandoffError('notebook.externalData', 'data', `${where}: ${err.message}`, { cause: err });
    if (err instanceof StandoffError && err.code === 'report.generatorTooLarge') throw new StandoffError('notebook.badSpec', 'data', `${where}: ${err.message}`, { cause: err });
    if (err instanceof StandoffError) throw err;
    throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block cannot be rendered: ${oneLine((err as Error).message)}`, { cause: err });
  }
  await writeOutput(st.tmp, st.outDir, `${stem}.vl.json`, inertJson(JSON.stringify(spec, null, 2)) + '\n');
  await writeOutput(st.tmp, st.outDir, `${stem}.svg`, rendered.svg.endsWith('\n') ? rendered.svg : rendered.svg + '\n');
  await writeOutput(st.tmp, st.outDir, `${stem}.png`, rendered.png);
  st.produced.push(`${stem}.vl.json`, `${stem}.svg`, `${stem}.png`);
  const title = typeof spec.title === 'string' ? spec.title : ((spec.title as { text?: string } | undefined)?.text ?? `Figure ${st.fig}`);
  st.md.push('', `![${cell(title)}](${stem}.png)\n\n<sub>[SVG](${stem}.svg) · [Vega-Lite spec with data](${stem}.vl.json)</sub>\n`);
  st.log(`${where}: vega-lite, ${stem}.png`);
}

async function runStandoffBlock(st: RunState, p: Block, where: string, options: NotebookOptions, ctx: Omit<StandoffBlockContext, 'where'>): Promise<void> {
  const words = splitWords(p.body.replace(/\\\n/g, ' ').replace(/\n/g, ' ').trim());
  if (words[0] === 'standoff') words.shift();
  if (!options.standoff) throw usageError('notebook.badCommand', `${where}: standoff blocks need the CLI's commands (run the notebook with standoff notebook run)`);
  let output: StandoffBlockOutput;
  try {
    output = await options.standoff(words, { where, ...ctx });
  } catch (err) {
    // Errors of the command (a bad metric, a statistic of invalid data) keep their code and gain the position.
    if (err instanceof StandoffError && !err.code.startsWith('notebook.')) throw new StandoffError(err.code, err.kind, `${where}: ${err.message}`, { cause: err });
    throw err;
  }
  for (const piece of output) {
    if ('text' in piece) st.md.push('', piece.text.split('\n').map((line) => cell(line)).join('\n'));
    else if ('markdown' in piece) st.md.push('', piece.markdown);
    else {
      st.lastRows = piece.table.rows;
      st.md.push('', renderRows(piece.table));
    }
  }
  const firstOption = words.findIndex((w) => w.startsWith('-'));
  st.log(`${where}: standoff ${(firstOption < 0 ? words : words.slice(0, firstOption)).join(' ')}`);
}

/** Writes the Markdown, removes stale figures of this notebook, then renames each file into place. */
async function swapIn(st: RunState): Promise<void> {
  await writeOutput(st.tmp, st.outDir, `${st.name}.md`, inertDocument(st.md.join('\n')).replace(/\n{3,}/g, '\n\n').replace(/\n*$/, '\n'));
  for (const e of await readdir(st.outDir)) {
    if (new RegExp(`^${escapeRe(st.name)}-\\d+\\.(svg|png|vl\\.json)$`).test(e) && !st.produced.includes(e)) await rm(join(st.outDir, e), { force: true });
  }
  for (const f of st.produced) await rename(join(st.tmp, f), join(st.outDir, f));
}

/** The store, sandboxed as `standoff sql`; its errors become `notebook.*`. */
async function openNotebookStore(options: NotebookOptions) {
  try {
    return await openStore(options.traces, { runs: options.runs, sandbox: true, requireRuns: true });
  } catch (err) {
    if (err instanceof StandoffError) throw new StandoffError(err.code.replace(/^store\./, 'notebook.'), err.kind, err.message, { cause: err });
    throw err;
  }
}

/** A fresh temp directory inside outDir (created if needed). */
async function makeTemp(outDir: string, name: string): Promise<string> {
  try {
    await mkdir(outDir, { recursive: true });
    return await mkdtemp(join(outDir, `.${name}.tmp-`));
  } catch (err) {
    throw new StandoffError('notebook.unwritable', 'store', `cannot write notebook output to ${outDir}: ${oneLine((err as Error).message)}`, { cause: err });
  }
}

export async function runNotebook(file: string, options: NotebookOptions): Promise<NotebookResult> {
  const log = typeof options.progress === 'function' ? options.progress : options.progress ? (l: string) => process.stderr.write(`notebook: ${terminalLine(l)}\n`) : () => undefined;
  let src: string;
  try {
    src = await readFile(file, 'utf8');
  } catch (err) {
    throw new StandoffError('notebook.unreadable', 'usage', `cannot read notebook ${file}: ${oneLine((err as Error).message)}`, { cause: err });
  }
  // --out is a directory (the rendered file keeps the notebook's name) or a FILE.md path.
  const outIsFile = options.out !== undefined && extname(options.out).toLowerCase() === '.md';
  const name = outIsFile ? basename(options.out!, extname(options.out!)) : basename(file, extname(file));
  const outDir = resolve(outIsFile ? dirname(options.out!) : (options.out ?? join('reports', 'notebooks')));
  const ctx = { traces: options.traces, runs: options.runs, seed: options.seed ?? DEFAULT_REPORT_SEED, resamples: options.resamples ?? DEFAULT_RESAMPLES, level: options.level ?? DEFAULT_LEVEL };
  const pieces = parseNotebook(src);
  const store = await openNotebookStore(options);
  let tmp: string | null = null;
  try {
    tmp = await makeTemp(outDir, name);
    const st: RunState = { file, name, outDir, tmp, conn: store.conn, log, md: [], produced: [`${name}.md`], lastRows: null, fig: 0 };
    const counts = { sql: 0, 'vega-lite': 0, standoff: 0 };
    for (const p of pieces) {
      if ('text' in p) {
        st.md.push(p.text);
        continue;
      }
      st.md.push(`${p.fence}${p.info}\n${p.body}\n${p.fence}`);
      if (!p.kind) continue;
      const where = `${file}:${p.line}`;
      counts[p.kind]++;
      if (p.kind === 'sql') await runSqlBlock(st, p, where);
      else if (p.kind === 'vega-lite') await runVegaBlock(st, p, where);
      else await runStandoffBlock(st, p, where, options, ctx);
    }
    await swapIn(st);
    await rm(tmp, { recursive: true, force: true });
    tmp = null;
    return { output: join(outDir, `${name}.md`), files: st.produced.map((f) => join(outDir, f)).sort(), figures: st.fig, blocks: counts };
  } finally {
    store.close();
    if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function renderRows(r: QueryResult): string {
  if (r.columns.length === 0) return '_(no result)_\n';
  if (r.rows.length === 0) return `${toMarkdown({ ...r, rows: [] })}\n_(no rows)_\n`;
  const shown = r.rows.slice(0, MAX_ROWS);
  const more = r.rows.length - shown.length;
  return toMarkdown({ ...r, rows: shown }) + (more > 0 ? `\n_… ${more} more row${more === 1 ? '' : 's'} not shown (${r.rows.length} in all)._\n` : '');
}

/** Splits a command line into words (single and double quotes group; no escapes beyond that). */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}
