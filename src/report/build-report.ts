/**
 * `standoff report build`: the whole report from the trace store, in one call.
 *
 *   buildReport({ traces, runs?, out = 'reports', seed = 20261129, resamples = 10000, level = 0.95, progress? })
 *     -> { out, files, results }
 *
 * Writes `<out>/REPORT.md` (GitHub Markdown, no extra tooling), `<out>/results.json` (every number
 * in the report, with the seed, the resample count and SHA-256 hashes of the input runs' Parquet
 * files), `<out>/figures/<name>.{vl.json,svg,png}` and `<out>/index.html` (the same report as one
 * self-contained interactive page with an episode browser: `html/build-index-html.ts`).
 *
 * Sections: 1 run summary and structural gate; 2 results per subject (exact and cluster
 * intervals); 3 grounded vs lucky; 4 slices; 5 pairwise comparisons; 6 judges; 7 paired probes
 * (with calibration); 8 invalid and errored episodes; limitations generated from the data; method
 * notes. A section without data (no judgments, no probes) says so instead of failing.
 *
 * Input rules: a missing store (`report.noStore`), a store without runs (`report.emptyStore`), an
 * unknown `--run` (`report.noSuchRun`) and runs without episodes (`report.noEpisodes`) are
 * one-line errors. Runs of different suites: `buildAnyReport` (`standoff report build`) reports
 * them with the generic sections, a table per suite; `buildReport`, typed for Standoff's own
 * sections, refuses them (`report.mixedSuites`, listing the suites and their runs; report one
 * suite at a time with --run). The same subject model in several runs of one
 * suite is reported as `model @ run` and fails the gate's "distinct subject models" check.
 *
 * Output rules: everything is written into a temp directory next to `out`
 * (`.<name>.tmp-<random>`), then swapped in with renames: partial output is never left behind, on
 * error the temp directory is removed and an existing report is untouched. Files in an existing
 * `out` that the report does not produce (e.g. `.gitkeep`) and a `notebooks/` directory (the
 * default notebook output) are carried over; an `out` holding other directories (the store, a
 * source tree, `.`) is refused (`report.outNotReport`). An `out` that
 * cannot be created or written is `report.unwritable`; an `out` that is a file is
 * `report.outNotDirectory`.
 *
 * Determinism: same store, options and seed -> byte-identical REPORT.md, results.json, SVGs and
 * PNGs (no clock, no absolute paths, sorted rows, fixed number formatting; every resampling is
 * seeded with `seed`; SQL returns integer counts and ratios are formed in JS).
 */
import { MAX_RESAMPLES } from '../stats/index.ts';
import { loadExcludedStates } from '../analysis/probe-sensitivity.ts';
import { loadPrices } from '../analysis/price-table.ts';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { StandoffError, oneLine } from '../errors.ts';
import { isOwnerAlive } from '../store/lock.ts';
import { query } from '../store/duckdb.ts';
import { renderFigures } from './render-figure.ts';
import { releaseMemory } from './release-memory.ts';
import type { FigureSpec } from './figures.ts';
import { buildContext, openReportStore, REPORT_MEMORY_LIMIT, reportError, type ReportContext } from './sections/context.ts';
import { buildIndexHtml } from './html/build-index-html.ts';
import { loadEpisodeBrowser, setQueryCap, type EpisodeBrowserData } from './html/load-episodes.ts';
import { readHtmlAssets } from './html/read-assets.ts';
import { isStandoffStore } from '../analysis/metrics.ts';
import { computeSuite, renderSections, suiteFigures, type RenderInput, type ReportSuite, type StoreFacts } from './suite.ts';
import { standoffO1Suite } from './suites/standoff-o1.ts';
import { coreSuite } from './suites/core.ts';
import { lmEvalSuite } from './suites/lm-eval.ts';
import { probesOnlySuite } from './suites/probes-only.ts';
import { ADJUST_METHODS, type Adjust } from './sections/pairwise.ts';
import type { GenericReportResults, ReportResults } from './report-results.ts';

export type { GenericReportResults, ReportResults } from './report-results.ts';
export { renderReport } from './suites/standoff-o1.ts';
export { renderGenericReport } from './suites/core.ts';
export { RESULTS_SCHEMA } from './report-results.ts';
import { inertDocument } from './markdown.ts';
import { inertJson, terminalLine } from '../escape.ts';

export const DEFAULT_REPORT_SEED = 20261129;
export const DEFAULT_RESAMPLES = 10_000;
export const DEFAULT_LEVEL = 0.95;
export const DEFAULT_OUT = 'reports';

export interface BuildReportOptions {
  traces: string;
  /** Restrict to these runs (default: every committed run in the store). */
  runs?: string[];
  /** Output directory (default `reports`). */
  out?: string;
  seed?: number;
  resamples?: number;
  /** Confidence level of every interval (default 0.95). */
  level?: number;
  /** ERROR verdicts (failed judge calls) a run may hold and still pass the gate (default 0). */
  allowJudgeErrors?: number;
  /** Episodes cut off at the token limit a run may have and still pass the gate (default 0). */
  allowTruncated?: number;
  /** Required scores nobody measured (blank cells) a run may hold and still pass the gate (default 0). */
  allowMissing?: number;
  /** Progress lines: true writes them to stderr; a function receives them. */
  progress?: boolean | ((line: string) => void);
  /** index.html's bounds (defaults: DATA_BUDGET_BYTES, SET_LIST_CAP, MAX_EMBEDDED_EPISODES in html/load-episodes.ts). */
  indexHtml?: { dataBudgetBytes?: number; listCap?: number; maxEpisodes?: number; maxSets?: number };
  /** Stores that are not a Standoff suite: slice by these episode columns or metadata keys too (`--slice COL`). */
  slices?: string[];
  /** A file of state ids (one per line) to leave out in the probe section's sensitivity table (`--exclude-states FILE`). */
  excludeStates?: string;
  /** Pairwise p-value adjustment within each task x scorer family (`--adjust`, default holm; the core sections). */
  adjust?: Adjust;
  /** A price table (`--prices FILE`, the format of `standoff costs --prices`): cost per 1,000 episodes in the cost section. */
  prices?: string;
}

export interface BuildReportResult<R = ReportResults> {
  /** Absolute output directory. */
  out: string;
  /** Files written, relative to `out`, sorted. */
  files: string[];
  results: R;
}

/** Entries of the output directory that the report owns (replaced on every build). */
const OWNED = new Set(['REPORT.md', 'results.json', 'index.html', 'figures']);
/** Directories that may live in the output directory and are carried over (notebook output). */
const CARRIED_DIRS = new Set(['notebooks']);

function checkOptions(o: BuildReportOptions): { seed: number; resamples: number; level: number; allowJudgeErrors: number; allowTruncated: number; allowMissing: number } {
  const seed = o.seed ?? DEFAULT_REPORT_SEED;
  const resamples = o.resamples ?? DEFAULT_RESAMPLES;
  const level = o.level ?? DEFAULT_LEVEL;
  const allowJudgeErrors = o.allowJudgeErrors ?? 0;
  const allowTruncated = o.allowTruncated ?? 0;
  const allowMissing = o.allowMissing ?? 0;
  if (typeof o.traces !== 'string' || o.traces === '') throw reportError('badOption', 'usage', 'report build needs --traces DIR');
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw reportError('badOption', 'usage', `--seed must be an integer in [0, 4294967295], got ${seed}`);
  if (!Number.isInteger(resamples) || resamples < 100 || resamples > MAX_RESAMPLES) throw reportError('badOption', 'usage', `--resamples must be an integer in [100, ${MAX_RESAMPLES}], got ${resamples}`);
  if (!(typeof level === 'number' && level > 0.5 && level < 1)) throw reportError('badOption', 'usage', `--level must be a number in (0.5, 1), got ${level}`);
  if (!Number.isInteger(allowJudgeErrors) || allowJudgeErrors < 0) throw reportError('badOption', 'usage', `--allow-judge-errors must be a non-negative integer, got ${allowJudgeErrors}`);
  if (!Number.isInteger(allowTruncated) || allowTruncated < 0) throw reportError('badOption', 'usage', `--allow-truncated must be a non-negative integer, got ${allowTruncated}`);
  if (!Number.isInteger(allowMissing) || allowMissing < 0) throw reportError('badOption', 'usage', `--allow-missing must be a non-negative integer, got ${allowMissing}`);
  return { seed, resamples, level, allowJudgeErrors, allowTruncated, allowMissing };
}

function logger(progress: BuildReportOptions['progress']): (line: string) => void {
  if (typeof progress === 'function') return progress;
  if (progress) return (line) => process.stderr.write(`report: ${terminalLine(line)}\n`);
  return () => undefined;
}

/**
 * Creates the temp directory next to `out` (checking that `out` can be written). An existing `out`
 * must be a directory whose subdirectories are the report's own (`figures`): anything else (the
 * store, a source tree, `.`) is refused rather than swapped out.
 */
async function prepareOutput(out: string): Promise<string> {
  const target = resolve(out);
  try {
    const s = await stat(target);
    if (!s.isDirectory()) throw reportError('outNotDirectory', 'store', `--out ${out} exists and is not a directory`);
    const foreign: string[] = [];
    for (const e of await readdir(target, { withFileTypes: true })) if (e.isDirectory() && !OWNED.has(e.name) && !CARRIED_DIRS.has(e.name)) foreign.push(e.name);
    if (foreign.length) {
      throw reportError('outNotReport', 'usage', `--out ${out} holds directories that are not part of a report (${foreign.sort().slice(0, 5).join(', ')}); use an empty directory or a previous report's`);
    }
  } catch (err) {
    if (err instanceof StandoffError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw reportError('unwritable', 'store', `cannot write the report to ${out}: ${oneLine((err as Error).message)}`, err);
  }
  try {
    await mkdir(dirname(target), { recursive: true });
    await removeStaleTemps(target);
    // mkdir, not mkdtemp: the directory becomes `out` and keeps the usual mode (not 0700).
    const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(tmp);
    return tmp;
  } catch (err) {
    throw reportError('unwritable', 'store', `cannot write the report to ${out}: ${oneLine((err as Error).message)}`, err);
  }
}

/**
 * Removes `.NAME.tmp-<pid>-*` directories (and their `.old` swaps) left by builds whose process is
 * gone (killed mid-build), and the pid-less ones older versions made with mkdtemp.
 */
async function removeStaleTemps(target: string): Promise<void> {
  const prefix = `.${basename(target)}.tmp-`;
  for (const e of await readdir(dirname(target)).catch(() => [] as string[])) {
    if (!e.startsWith(prefix)) continue;
    const pid = /^(\d+)-[0-9a-f]+(\.old)?$/.exec(e.slice(prefix.length))?.[1];
    if (pid !== undefined && isOwnerAlive({ pid: Number(pid), host: hostname(), proc_start: null })) continue;
    await rm(join(dirname(target), e), { recursive: true, force: true });
  }
}

/** Swaps the finished temp directory in as `out`, carrying over entries the report does not own. */
async function commitOutput(tmp: string, out: string): Promise<void> {
  const target = resolve(out);
  let old: string | null = null;
  try {
    const entries = await readdir(target);
    for (const e of entries) if (!OWNED.has(e)) await rename(join(target, e), join(tmp, e));
    old = `${tmp}.old`;
    await rename(target, old);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await rename(tmp, target);
  if (old) await rm(old, { recursive: true, force: true });
}

/**
 * `buildAnyReport` on a store that must be a Standoff suite (the runner's or synthetic runs): the
 * results are Standoff's sections. Another store is `report.notStandoffSuite` (usage); build its
 * generic report with `buildAnyReport` (what `standoff report build` calls).
 */
export async function buildReport(options: BuildReportOptions): Promise<BuildReportResult<ReportResults>> {
  const r = await buildAnyReport({ ...options, requireStandoff: true });
  return r as BuildReportResult<ReportResults>;
}

/** The report of any store: Standoff's sections for a Standoff suite, else the generic ones. */
export async function buildAnyReport(options: BuildReportOptions & { requireStandoff?: boolean }): Promise<BuildReportResult<ReportResults | GenericReportResults>> {
  const opts = checkOptions(options);
  const log = logger(options.progress);
  const out = options.out ?? DEFAULT_OUT;
  const started = Date.now();
  const step = (msg: string) => {
    log(`${msg} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    releaseMemory();
  };

  const excludeStates = options.excludeStates === undefined ? undefined : loadExcludedStates(options.excludeStates);
  // Read before anything is opened or written: a bad price table leaves no trace.
  const prices = options.prices === undefined ? null : loadPrices(options.prices);
  const store = await openReportStore(options.traces, options.runs);
  let tmp: string | null = null;
  try {
    // The suite is recognised by the data: one Standoff suite gets its sections on the core;
    // any other store (imports, several suites) the core sections, a table per suite. buildReport,
    // typed for the Standoff sections, refuses the rest (report.notStandoffSuite, report.mixedSuites).
    const facts = await storeFacts(store.conn);
    const suite = options.requireStandoff && facts.standoff ? standoffO1Suite : REPORT_SUITES.find((x) => x.recognise(facts))!;
    const standoff = suite === standoffO1Suite;
    if (standoff && options.slices?.length) throw reportError('badOption', 'usage', '--slice is for stores that are not a Standoff suite (the Standoff report slices by domain, decision type and variant)');
    if (!standoff && options.requireStandoff) throw reportError('notStandoffSuite', 'usage', `the runs of ${options.traces} are not a Standoff suite; buildAnyReport (standoff report build) reports them`);
    if (!standoff && prices) throw reportError('badOption', 'usage', '--prices is for the cost section of a Standoff suite; this store is reported with the generic sections (standoff costs --prices FILE prices any store)');
    if (!standoff && suite !== probesOnlySuite && excludeStates) throw reportError('badOption', 'usage', '--exclude-states is for the paired probes of a Standoff suite; this store is reported with the generic sections');
    const ctx = await buildContext(store, { ...opts, log, mixedSuites: !standoff });
    ctx.excludeStates = excludeStates;
    ctx.prices = prices;
    step(`${ctx.runIds.length} run${ctx.runIds.length === 1 ? '' : 's'}, ${ctx.subjects.length} subject${ctx.subjects.length === 1 ? '' : 's'} loaded`);
    tmp = await prepareOutput(out);
    const slices = options.slices ?? [];
    const adjust = options.adjust ?? 'holm';
    if (!ADJUST_METHODS.includes(adjust)) throw reportError('badOption', 'usage', `--adjust must be one of ${ADJUST_METHODS.join(', ')}, got ${adjust}`);
    const values = await computeSuite(suite as ReportSuite, { ctx, slices, adjust }, step);
    const results = (suite as ReportSuite).results(ctx, values, slices);
    const input: RenderInput = { ctx, all: values };
    const figures = suiteFigures(suite as ReportSuite, input);
    const sources = await suite.subjectSources(ctx);
    const browser = await loadEpisodeBrowser(ctx.conn, (suite as ReportSuite).browserSets(results, sources), sources, browserBounds(options, Number((results as { summary?: { totals?: { samples?: number } } }).summary?.totals?.samples ?? 0)));
    step(`episode browser: ${browser.episodes.length} episodes, ${browser.sets.length} counts${browser.sets_left_out > 0 ? ` (${browser.sets_left_out} more not linked: the set-query cap)` : ''}`);
    const files = await writeOutputs(tmp, ctx, suite as ReportSuite, results, input, figures, browser, step);
    await commitOutput(tmp, out);
    tmp = null;
    step(`wrote ${files.length} files to ${out}`);
    return { out: resolve(out), files, results: results as unknown as ReportResults | GenericReportResults };
  } catch (err) {
    if (err instanceof StandoffError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) {
      throw reportError('unwritable', 'store', `cannot write the report to ${out}: ${oneLine(e.message)}`, err);
    }
    if (e instanceof Error && /out of memory/i.test(e.message)) {
      throw reportError('outOfMemory', 'store', `the report ran out of memory (DuckDB limit ${REPORT_MEMORY_LIMIT}): ${oneLine(e.message)}; report fewer runs with --run`, err);
    }
    throw err;
  } finally {
    store.close();
    if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** index.html's bounds from the options (each default in html/load-episodes.ts). */
const browserBounds = (o: BuildReportOptions, samples: number) => ({ budgetBytes: o.indexHtml?.dataBudgetBytes, listCap: o.indexHtml?.listCap, maxEpisodes: o.indexHtml?.maxEpisodes, maxSets: o.indexHtml?.maxSets ?? setQueryCap(samples) });

/** The suites a report can be, most specific first; the core reports any store. */
export const REPORT_SUITES: readonly ReportSuite<any>[] = [probesOnlySuite, standoffO1Suite, lmEvalSuite, coreSuite];

/** What recognising a suite looks at (`StoreFacts`). */
async function storeFacts(conn: ReportContext['conn']): Promise<StoreFacts> {
  const list = async (sql: string) => (await query(conn, sql)).rows.map((r) => String(r.x));
  return {
    sources: await list('SELECT DISTINCT source AS x FROM runs ORDER BY x'),
    suites: await list('SELECT DISTINCT suite AS x FROM runs ORDER BY x'),
    scorers: await list('SELECT DISTINCT scorer AS x FROM scores ORDER BY x'),
    standoff: await isStandoffStore(conn),
    probesOnly: (await list('SELECT (SELECT count(*) FROM episodes) = 0 AND (SELECT count(*) FROM probe_decisions) > 0 AS x'))[0] === 'true',
  };
}

async function writeOutputs(tmp: string, ctx: ReportContext, suite: ReportSuite, r: Record<string, unknown>, input: RenderInput, figures: FigureSpec[], browser: EpisodeBrowserData, step: (m: string) => void): Promise<string[]> {
  const files: string[] = [];
  const listed = r.figures as { name: string; caption: string; files: string[] }[];
  if (figures.length) {
    await mkdir(join(tmp, 'figures'));
    const renders = await renderFigures(figures.map((f) => f.spec));
    for (const [i, f] of figures.entries()) {
      const rendered = renders[i];
      await writeFile(join(tmp, 'figures', `${f.name}.vl.json`), inertJson(JSON.stringify(f.spec, null, 2)) + '\n');
      await writeFile(join(tmp, 'figures', `${f.name}.svg`), rendered.svg.endsWith('\n') ? rendered.svg : rendered.svg + '\n');
      await writeFile(join(tmp, 'figures', `${f.name}.png`), rendered.png);
      const names = ['vl.json', 'svg', 'png'].map((x) => `figures/${f.name}.${x}`);
      files.push(...names);
      listed.push({ name: f.name, caption: f.caption, files: names });
    }
    step(`${figures.length} figures rendered`);
  }
  const markdown = inertDocument(suite.document(input.ctx, r, renderSections(suite, input, figures)));
  await writeFile(join(tmp, 'REPORT.md'), markdown);
  await writeFile(join(tmp, 'results.json'), inertJson(JSON.stringify(r, jsonReplacer, 2)) + '\n');
  const runs = (r.summary as { runs: { suite: string }[] }).runs;
  await writeFile(join(tmp, 'index.html'), buildIndexHtml({ suite: runs[0]?.suite ?? ctx.suite, markdown, figures, browser, countLinks: (setIndex) => suite.countLinks(r, setIndex) }, await readHtmlAssets()));
  step('index.html written');
  files.push('REPORT.md', 'results.json', 'index.html');
  return files.sort();
}

/** NaN/Infinity -> null; typed arrays -> plain arrays. */
function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) return Array.from(value as unknown as ArrayLike<number>);
  return value;
}
