/**
 * Notebooks: Markdown files whose fenced code blocks run against the trace store.
 *
 *   runNotebook(file, { traces, runs?, out?, seed?, resamples?, level? }) -> { output, files, blocks }
 *
 * Block kinds (the fence's info string):
 * - `sql`: a query run on a read-only, sandboxed DuckDB view of the store (`standoff sql`'s
 *   sandbox: no writes, no ATTACH/INSTALL, no settings). Besides the store's tables there is a
 *   view `metrics` (metric, run_id, subject_model, scenario_id, epoch, domain, decision_type,
 *   variant, episode_id, value) with every named metric of `src/report/metrics.ts`. The result is
 *   rendered as a Markdown table (at most {@link MAX_ROWS} rows; the rest are counted).
 * - `vega-lite`: a Vega-Lite spec (JSON). Without `data`, it gets the previous `sql` block's rows
 *   inline. Rendered to `<name>-<n>.svg`, `.png` and `.vl.json` next to the output and linked.
 * - `standoff`: one statistics command, run through the library the CLI uses
 *   (`src/report/ci.ts`, `src/report/ci-bootstrap.ts`): `ci exact --metric M [--by COLS]
 *   [--sided S] [--aggregates]`, `ci bootstrap --metric M [--by COLS] [--cluster COL]
 *   [--method M]`, `ci paired --metric M --a X --b Y [--cluster COL] [--method M]`,
 *   `agreement [--scorer S] [--measure LEVEL]`, `probes [--by COLS]`, `judges [--scorer S]
 *   [--exclude-by W]` (totals). `--level`, `--seed` and `--resamples` are accepted; the store and
 *   runs are the notebook's (a block may not name its own `--traces`/`--run`).
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
import { query, type Plain, type QueryResult } from '../store/duckdb.ts';
import { toMarkdown } from '../store/format.ts';
import { METRICS } from './metrics.ts';
import { renderFigure } from './render-figure.ts';
import { baseConfig } from './figures.ts';
import { agreementFromStore, ciExactMetric, judgesFromStore, probesFromStore, type StoreSource } from './ci.ts';
import { ciBootstrap, ciPaired } from './ci-bootstrap.ts';
import { DEFAULT_REPORT_SEED, DEFAULT_RESAMPLES, DEFAULT_LEVEL, type BuildReportOptions } from './build-report.ts';

export const MAX_ROWS = 200;
export const NOTEBOOK_BLOCKS = ['sql', 'vega-lite', 'standoff'] as const;

/** The report's options (store, runs, seed, resamples, level, progress), with the notebook's own `out`. */
export interface NotebookOptions extends Omit<BuildReportOptions, 'out'> {
  /** Output directory (default `reports/notebooks`), or a `FILE.md` path for the rendered notebook. */
  out?: string;
}

export interface NotebookResult {
  /** Absolute path of the rendered Markdown. */
  output: string;
  /** Files written (absolute paths), sorted. */
  files: string[];
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

const METRICS_VIEW = `CREATE TEMP VIEW metrics AS ${Object.values(METRICS)
  .map((m) => `SELECT '${m.name}' AS metric, run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, CAST(value AS DOUBLE) AS value FROM (${m.sql})`)
  .join(' UNION ALL ')}`;

export async function runNotebook(file: string, options: NotebookOptions): Promise<NotebookResult> {
  const log = typeof options.progress === 'function' ? options.progress : options.progress ? (l: string) => process.stderr.write(`notebook: ${l}\n`) : () => undefined;
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
  const seed = options.seed ?? DEFAULT_REPORT_SEED;
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const level = options.level ?? DEFAULT_LEVEL;
  const pieces = parseNotebook(src);
  const source: StoreSource = { traces: options.traces, runs: options.runs };

  let store;
  try {
    store = await openStore(options.traces, { runs: options.runs, sandbox: true, requireRuns: true });
  } catch (err) {
    if (err instanceof StandoffError) throw new StandoffError(err.code.replace(/^store\./, 'notebook.'), err.kind, err.message, { cause: err });
    throw err;
  }
  let tmp: string | null = null;
  try {
    await store.conn.run(METRICS_VIEW);
    try {
      await mkdir(outDir, { recursive: true });
      tmp = await mkdtemp(join(outDir, `.${name}.tmp-`));
    } catch (err) {
      throw new StandoffError('notebook.unwritable', 'store', `cannot write notebook output to ${outDir}: ${oneLine((err as Error).message)}`, { cause: err });
    }
    const md: string[] = [];
    const produced: string[] = [`${name}.md`];
    const counts = { sql: 0, 'vega-lite': 0, standoff: 0 };
    let lastRows: Record<string, Plain>[] | null = null;
    let fig = 0;
    for (const p of pieces) {
      if ('text' in p) {
        md.push(p.text);
        continue;
      }
      md.push(`${p.fence}${p.info}\n${p.body}\n${p.fence}`);
      if (!p.kind) continue;
      const where = `${file}:${p.line}`;
      counts[p.kind]++;
      if (p.kind === 'sql') {
        let r: QueryResult;
        try {
          r = await query(store.conn, p.body);
        } catch (err) {
          throw new StandoffError('notebook.sqlError', 'data', `${where}: sql block failed: ${oneLine((err as Error).message)}`, { cause: err });
        }
        lastRows = r.rows;
        md.push('', renderRows(r));
        log(`${where}: sql, ${r.rows.length} rows`);
      } else if (p.kind === 'vega-lite') {
        let spec: Record<string, unknown>;
        try {
          spec = JSON.parse(p.body) as Record<string, unknown>;
        } catch (err) {
          throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block is not JSON: ${oneLine((err as Error).message)}`, { cause: err });
        }
        if (!spec.data) {
          if (!lastRows) throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block has no data and no sql block comes before it`);
          spec.data = { values: lastRows };
        }
        spec.config = { ...baseConfig(), ...((spec.config as object) ?? {}) };
        fig++;
        const stem = `${name}-${fig}`;
        let rendered;
        try {
          rendered = await renderFigure(spec);
        } catch (err) {
          if (err instanceof StandoffError) throw err;
          throw new StandoffError('notebook.badSpec', 'data', `${where}: vega-lite block cannot be rendered: ${oneLine((err as Error).message)}`, { cause: err });
        }
        await writeFile(join(tmp, `${stem}.vl.json`), JSON.stringify(spec, null, 2) + '\n');
        await writeFile(join(tmp, `${stem}.svg`), rendered.svg.endsWith('\n') ? rendered.svg : rendered.svg + '\n');
        await writeFile(join(tmp, `${stem}.png`), rendered.png);
        produced.push(`${stem}.vl.json`, `${stem}.svg`, `${stem}.png`);
        const title = typeof spec.title === 'string' ? spec.title : ((spec.title as { text?: string } | undefined)?.text ?? `Figure ${fig}`);
        md.push('', `![${title}](${stem}.png)\n\n<sub>[SVG](${stem}.svg) · [Vega-Lite spec with data](${stem}.vl.json)</sub>\n`);
        log(`${where}: vega-lite, ${stem}.png`);
      } else {
        const r = await runStandoffBlock(p.body, where, source, { seed, resamples, level });
        lastRows = r.rows;
        md.push('', renderRows(r));
        log(`${where}: standoff ${p.body.trim().split(/\s+/).slice(0, 2).join(' ')}`);
      }
    }
    await writeFile(join(tmp, `${name}.md`), md.join('\n').replace(/\n{3,}/g, '\n\n').replace(/\n*$/, '\n'));
    // Swap in: remove stale figures of this notebook, then rename each file into place.
    for (const e of await readdir(outDir)) {
      if (new RegExp(`^${escapeRe(name)}-\\d+\\.(svg|png|vl\\.json)$`).test(e) && !produced.includes(e)) await rm(join(outDir, e), { force: true });
    }
    for (const f of produced) await rename(join(tmp, f), join(outDir, f));
    await rm(tmp, { recursive: true, force: true });
    tmp = null;
    return { output: join(outDir, `${name}.md`), files: produced.map((f) => join(outDir, f)).sort(), blocks: counts };
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

interface Parsed {
  command: string[];
  opts: Record<string, string | true>;
}

function parseCommand(body: string, where: string): Parsed {
  const words = splitWords(body.replace(/\\\n/g, ' ').replace(/\n/g, ' ').trim());
  if (words[0] === 'standoff') words.shift();
  const command: string[] = [];
  const opts: Record<string, string | true> = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const key = eq > 0 ? w.slice(2, eq) : w.slice(2);
      if (eq > 0) opts[key] = w.slice(eq + 1);
      else if (i + 1 < words.length && !words[i + 1].startsWith('--')) opts[key] = words[++i];
      else opts[key] = true;
    } else if (Object.keys(opts).length === 0) command.push(w);
    else throw usageError('notebook.badCommand', `${where}: unexpected word "${w}" in standoff block`);
  }
  for (const k of ['traces', 'run', 'input', 'format']) {
    if (k in opts) throw usageError('notebook.badCommand', `${where}: --${k} is not allowed in a notebook block (the notebook's store and runs are used; output is a table)`);
  }
  return { command, opts };
}

const list = (v: string | true | undefined) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);
const num = (v: string | true | undefined, name: string, where: string, dflt: number): number => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n)) throw usageError('notebook.badCommand', `${where}: --${name} must be a number, got "${v}"`);
  return n;
};
const str = (v: string | true | undefined, name: string, where: string): string | undefined => {
  if (v === true) throw usageError('notebook.badCommand', `${where}: --${name} needs a value`);
  return v;
};

/** Flattens nested result objects into columns `a.b`; arrays become JSON text. */
function flatten(obj: Record<string, unknown>, prefix = '', out: Record<string, Plain> = {}): Record<string, Plain> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, key, out);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else out[key] = (typeof v === 'number' && !Number.isFinite(v) ? null : (v ?? null)) as Plain;
  }
  return out;
}

function toResult(items: object[], columns?: string[]): QueryResult {
  const rows = items.map((r) => flatten(r as Record<string, unknown>));
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return { columns: cols, types: [], rows: rows.map((r) => Object.fromEntries(cols.map((c) => [c, r[c] ?? null]))) };
}

async function runStandoffBlock(body: string, where: string, src: StoreSource, d: { seed: number; resamples: number; level: number }): Promise<QueryResult> {
  const { command, opts } = parseCommand(body, where);
  const level = num(opts.level, 'level', where, d.level);
  const seed = num(opts.seed, 'seed', where, d.seed);
  const resamples = num(opts.resamples, 'resamples', where, d.resamples);
  const method = (str(opts.method, 'method', where) ?? 'percentile') as 'percentile' | 'bca' | 'basic';
  const key = command.join(' ');
  try {
    switch (key) {
      case 'ci exact': {
        const metric = str(opts.metric, 'metric', where);
        if (!metric) throw usageError('notebook.badCommand', `${where}: ci exact needs --metric (counts with --successes/--trials need no notebook)`);
        const sided = (str(opts.sided, 'sided', where) ?? 'two') as 'two' | 'upper' | 'lower';
        return toResult(await ciExactMetric(src, { metric, by: list(opts.by), level, sided, aggregates: opts.aggregates === true }));
      }
      case 'ci bootstrap': {
        const r = await ciBootstrap(src, { metric: str(opts.metric, 'metric', where), by: list(opts.by), cluster: str(opts.cluster, 'cluster', where), method, level, seed, resamples });
        return toResult(Array.isArray(r) ? r : [r]);
      }
      case 'ci paired': {
        const r = await ciPaired(src, { metric: str(opts.metric, 'metric', where), a: str(opts.a, 'a', where), b: str(opts.b, 'b', where), cluster: str(opts.cluster, 'cluster', where), method, level, seed, resamples });
        return toResult([r]);
      }
      case 'agreement': {
        const measure = (str(opts.measure, 'measure', where) ?? 'nominal') as 'nominal' | 'ordinal' | 'interval' | 'ratio';
        return toResult([await agreementFromStore(src, { scorer: str(opts.scorer, 'scorer', where), level: measure, ciLevel: level, seed, resamples })]);
      }
      case 'judges': {
        const r = await judgesFromStore(src, { scorer: str(opts.scorer, 'scorer', where), excludeBy: str(opts['exclude-by'], 'exclude-by', where) as 'model' | 'family' | 'none' | undefined });
        return toResult([{ scorer: r.scorer, exclude_by: r.exclude_by, ...r.totals }]);
      }
      case 'probes': {
        const r = await probesFromStore(src, { by: list(opts.by), level, seed, resamples });
        const share = (s: { count: number; n: number; rate: number | null }) => (s.rate === null ? `— (0/${s.n})` : `${(100 * s.rate).toFixed(1)}% (${s.count}/${s.n})`);
        return toResult(
          r.groups.map((g) => ({
            group: g.group,
            states: g.states,
            answers: g.answers,
            facts_right_action_right: share(g.cells.facts_right_action_right),
            facts_right_action_wrong: share(g.cells.facts_right_action_wrong),
            facts_wrong_action_right: share(g.cells.facts_wrong_action_right),
            facts_wrong_action_wrong: share(g.cells.facts_wrong_action_wrong),
            errors_after_correct_reading: share(g.errors_after_correct_reading),
            composed_minus_decision: g.composed ? g.composed.difference : null,
          })),
        );
      }
      default:
        throw usageError(
          'notebook.badCommand',
          `${where}: unsupported standoff block "${key || body.trim()}"; supported: ci exact, ci bootstrap, ci paired, agreement, judges, probes`,
        );
    }
  } catch (err) {
    if (err instanceof StandoffError && !err.code.startsWith('notebook.')) {
      throw new StandoffError(err.code, err.kind, `${where}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

