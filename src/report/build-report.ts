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
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { StandoffError, oneLine } from '../errors.ts';
import { isOwnerAlive } from '../store/lock.ts';
import { query } from '../store/duckdb.ts';
import { isStandoffSource } from '../schema/tables.ts';
import { STANDOFF_VERSION } from '../version.ts';
import { cell, fmtCount } from './markdown.ts';
import { CLT_METHOD } from './rates.ts';
import { CLT_MIN_CLUSTERS, CLT_MIN_EVENTS } from '../stats/index.ts';
import { renderFigures } from './render-figure.ts';
import { forestPlot, groundedHeatmap, judgeMatrix, metricBars, probeOutcomes, reliabilityPlot, sliceDots, type FigureSpec } from './figures.ts';
import { REPORT_MEMORY_LIMIT, buildContext, materializeObservations, openReportStore, reportError, type ReportContext } from './sections/context.ts';
import { renderGate, renderSummary, runSummary, type SummaryResult, type RunHash } from './sections/summary.ts';
import { renderResults, resultsSection, type ResultsSection } from './sections/results.ts';
import { groundedSection, renderGrounded, type GroundedSection } from './sections/grounded.ts';
import { renderSlices, slicesSection, type SlicesSection } from './sections/slices.ts';
import { pairwiseSection, renderPairwise, type PairwiseSection } from './sections/pairwise.ts';
import { judgesSection, renderJudges, type JudgesSection } from './sections/judges.ts';
import { probesSection, renderProbes, type ProbesSection } from './sections/probes.ts';
import { episodesSection, renderEpisodes, type EpisodesSection } from './sections/episodes.ts';
import { limitations, renderLimitations } from './sections/limitations.ts';
import { buildCountLinks, buildGenericCountLinks, buildIndexHtml } from './html/build-index-html.ts';
import { loadEpisodeBrowser, loadSubjectSources, type EpisodeBrowserData } from './html/load-episodes.ts';
import { buildEpisodeSets, buildGenericEpisodeSets, type GenericSubjectSource } from './html/episode-sets.ts';
import { readHtmlAssets } from './html/read-assets.ts';
import { genericContents, genericSections, renderGeneric, type GenericSections } from './generic.ts';
import { isStandoffStore } from './metrics.ts';

export const DEFAULT_REPORT_SEED = 20261129;
export const DEFAULT_RESAMPLES = 10_000;
export const DEFAULT_LEVEL = 0.95;
export const DEFAULT_OUT = 'reports';
export const RESULTS_SCHEMA = 'standoff-report/1';

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
  /** Progress lines: true writes them to stderr; a function receives them. */
  progress?: boolean | ((line: string) => void);
  /** index.html's bounds (defaults: DATA_BUDGET_BYTES, SET_LIST_CAP, MAX_EMBEDDED_EPISODES in html/load-episodes.ts). */
  indexHtml?: { dataBudgetBytes?: number; listCap?: number; maxEpisodes?: number };
  /** Stores that are not a Standoff suite: slice by these episode columns or metadata keys too (`--slice COL`). */
  slices?: string[];
}

export interface ReportResults {
  schema: string;
  standoff_version: string;
  options: { seed: number; resamples: number; level: number; allow_judge_errors: number; allow_truncated: number; runs: string[] };
  inputs: RunHash[];
  summary: Omit<SummaryResult, 'hashes' | 'gate'>;
  gate: SummaryResult['gate'];
  results: ResultsSection;
  grounded: GroundedSection;
  slices: SlicesSection;
  pairwise: PairwiseSection;
  judges: JudgesSection;
  probes: ProbesSection;
  episodes: EpisodesSection;
  limitations: string[];
  figures: { name: string; caption: string; files: string[] }[];
}

/** results.json of a store that is not a Standoff suite (`generic.ts`). */
export interface GenericReportResults {
  schema: string;
  standoff_version: string;
  /** 'generic': every scorer is a metric; Standoff's own sections are absent. */
  report: 'generic';
  options: ReportResults['options'] & { slices: string[] };
  inputs: RunHash[];
  summary: Omit<SummaryResult, 'hashes' | 'gate'>;
  gate: SummaryResult['gate'];
  generic: GenericSections;
  figures: { name: string; caption: string; files: string[] }[];
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

function checkOptions(o: BuildReportOptions): { seed: number; resamples: number; level: number; allowJudgeErrors: number; allowTruncated: number } {
  const seed = o.seed ?? DEFAULT_REPORT_SEED;
  const resamples = o.resamples ?? DEFAULT_RESAMPLES;
  const level = o.level ?? DEFAULT_LEVEL;
  const allowJudgeErrors = o.allowJudgeErrors ?? 0;
  const allowTruncated = o.allowTruncated ?? 0;
  if (typeof o.traces !== 'string' || o.traces === '') throw reportError('badOption', 'usage', 'report build needs --traces DIR');
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw reportError('badOption', 'usage', `--seed must be an integer in [0, 4294967295], got ${seed}`);
  if (!Number.isInteger(resamples) || resamples < 100 || resamples > 10_000_000) throw reportError('badOption', 'usage', `--resamples must be an integer in [100, 10000000], got ${resamples}`);
  if (!(typeof level === 'number' && level > 0.5 && level < 1)) throw reportError('badOption', 'usage', `--level must be a number in (0.5, 1), got ${level}`);
  if (!Number.isInteger(allowJudgeErrors) || allowJudgeErrors < 0) throw reportError('badOption', 'usage', `--allow-judge-errors must be a non-negative integer, got ${allowJudgeErrors}`);
  if (!Number.isInteger(allowTruncated) || allowTruncated < 0) throw reportError('badOption', 'usage', `--allow-truncated must be a non-negative integer, got ${allowTruncated}`);
  return { seed, resamples, level, allowJudgeErrors, allowTruncated };
}

function logger(progress: BuildReportOptions['progress']): (line: string) => void {
  if (typeof progress === 'function') return progress;
  if (progress) return (line) => process.stderr.write(`report: ${line}\n`);
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
  const step = (msg: string) => log(`${msg} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  const store = await openReportStore(options.traces, options.runs);
  let tmp: string | null = null;
  try {
    // One Standoff suite gets Standoff's sections; any other store the generic ones, a table per
    // suite: imports, and runs of several Standoff suites (whose own sections need one suite at a
    // time; buildReport, typed for those sections, still refuses them with report.mixedSuites).
    const standoffStore = await isStandoffStore(store.conn);
    const [{ suites }] = (await query(store.conn, 'SELECT CAST(count(DISTINCT suite) AS INTEGER) AS suites FROM runs')).rows;
    const standoff = standoffStore && (Number(suites) === 1 || options.requireStandoff === true);
    if (standoff && options.slices?.length) throw reportError('badOption', 'usage', '--slice is for stores that are not a Standoff suite (the Standoff report slices by domain, decision type and variant)');
    if (!standoff && options.requireStandoff) throw reportError('notStandoffSuite', 'usage', `the runs of ${options.traces} are not a Standoff suite; buildAnyReport (standoff report build) reports them`);
    const ctx = await buildContext(store, { ...opts, log, mixedSuites: !standoff });
    step(`${ctx.runIds.length} run${ctx.runIds.length === 1 ? '' : 's'}, ${ctx.subjects.length} subject${ctx.subjects.length === 1 ? '' : 's'} loaded`);
    tmp = await prepareOutput(out);
    if (!standoff) {
      const results = await computeGeneric(ctx, options.slices ?? [], step);
      const sources = await loadGenericSubjectSources(ctx);
      const browser = await loadEpisodeBrowser(ctx.conn, buildGenericEpisodeSets(results.generic, sources), sources, browserBounds(options));
      step(`episode browser: ${browser.episodes.length} episodes, ${browser.sets.length} counts`);
      const files = await writeGenericOutputs(tmp, ctx, results, browser, step);
      await commitOutput(tmp, out);
      tmp = null;
      step(`wrote ${files.length} files to ${out}`);
      return { out: resolve(out), files, results };
    }
    const results = await computeSections(ctx, step);
    const figures = buildFigures(ctx, results);
    const sources = await loadSubjectSources(ctx.q);
    const browser = await loadEpisodeBrowser(ctx.conn, buildEpisodeSets(results, sources), sources, browserBounds(options));
    step(`episode browser: ${browser.episodes.length} episodes, ${browser.sets.length} counts`);
    const files = await writeOutputs(tmp, ctx, results, figures, browser, step);
    await commitOutput(tmp, out);
    tmp = null;
    step(`wrote ${files.length} files to ${out}`);
    return { out: resolve(out), files, results };
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

async function computeSections(ctx: ReportContext, step: (m: string) => void): Promise<ReportResults> {
  const summary = await runSummary(ctx);
  step('run summary and structural gate');
  await materializeObservations(ctx);
  step('observations materialized');
  const results = await resultsSection(ctx);
  step('results per subject');
  const grounded = await groundedSection(ctx);
  step('grounded vs lucky');
  const slices = await slicesSection(ctx);
  step('slices');
  const pairwise = await pairwiseSection(ctx);
  step('pairwise comparisons');
  const judges = await judgesSection(ctx);
  step('judges');
  const probes = await probesSection(ctx);
  step('paired probes');
  const episodes = await episodesSection(ctx);
  step('invalid and errored episodes');
  const { hashes, gate, ...summaryRest } = summary;
  return {
    schema: RESULTS_SCHEMA,
    standoff_version: STANDOFF_VERSION,
    options: { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, allow_judge_errors: ctx.allowJudgeErrors, allow_truncated: ctx.allowTruncated, runs: ctx.runIds },
    inputs: hashes,
    summary: summaryRest,
    gate,
    results,
    grounded,
    slices,
    pairwise,
    judges,
    probes,
    episodes,
    limitations: limitations(summary, results, judges, probes, pairwise),
    figures: [],
  };
}

async function computeGeneric(ctx: ReportContext, slices: string[], step: (m: string) => void): Promise<GenericReportResults> {
  const summary = await runSummary(ctx);
  step('run summary and structural gate');
  const generic = await genericSections(ctx, { slices });
  step('results, pairwise comparisons, judges, slices, reconciliation, samples');
  const { hashes, gate, ...summaryRest } = summary;
  return {
    schema: RESULTS_SCHEMA,
    standoff_version: STANDOFF_VERSION,
    report: 'generic',
    options: { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, allow_judge_errors: ctx.allowJudgeErrors, allow_truncated: ctx.allowTruncated, runs: ctx.runIds, slices },
    inputs: hashes,
    summary: summaryRest,
    gate,
    generic,
    figures: [],
  };
}

export function renderGenericReport(ctx: Pick<ReportContext, 'suite' | 'subjects' | 'seed' | 'resamples' | 'level'>, r: GenericReportResults): string {
  const summary = { ...r.summary, hashes: r.inputs, gate: r.gate } as SummaryResult;
  const suites = r.generic.suites;
  const L = Math.round(ctx.level * 100);
  const parts: string[] = [];
  parts.push(`# Standoff report: ${suites.map(cell).join(', ')}\n`);
  parts.push(renderGate(summary));
  parts.push(
    `Runs ${r.options.runs.map((x) => `\`${x}\``).join(', ')}; ${fmtCount(r.summary.totals.samples)} samples; subjects ${[...new Set(r.generic.samples.map((x) => x.subject))].map(cell).join(', ')}; scorers ${[...new Set(r.generic.scorers.map((s) => s.scorer))].map(cell).join(', ') || 'none'}. ` +
      `Generated by standoff ${r.standoff_version} (\`standoff report build\`, seed ${ctx.seed}, ${fmtCount(ctx.resamples)} resamples). Every number below is in \`results.json\`. ` +
      (r.summary.runs.every((x) => isStandoffSource(x.source))
        ? `These runs hold ${suites.length} Standoff suites: each is reported here with the generic sections (every scorer as a metric, a table per suite); Standoff's own sections (the O1 results, grounded vs lucky, slices, probes) report one suite at a time: \`standoff report build --run ID\`.\n`
        : `These runs are not a Standoff suite: every scorer in the store is reported as a metric, and the sections of Standoff's own suite are absent (nothing of theirs was measured).\n`),
  );
  parts.push('## Contents\n');
  parts.push(['1. [Run summary](#1-run-summary)', ...genericContents(r.generic, 2), `${genericContents(r.generic, 2).length + 2}. [Method notes](#method-notes)`].join('\n') + '\n');
  parts.push(renderSummary(summary, ctx));
  parts.push(renderGeneric(r.generic, ctx.level, 2));
  parts.push(
    [
      '## Method notes\n',
      `- Sampling unit: the item (\`scenario_id\`). Where epochs repeat an item, its outcomes are correlated, so bootstrap intervals resample whole items and paired comparisons cluster on the item; the exact Clopper-Pearson interval treats every sample as independent and says so.`,
      `- Kinds: binary (every value 0 or 1), bounded (in [0, 1]), ordinal (integers, at most 10 levels) or continuous, inferred from the measured values (\`standoff ci --list-metrics\`).`,
      `- Intervals: ${L}%; bootstrap percentile with ${fmtCount(ctx.resamples)} resamples, seed ${ctx.seed} (\`standoff ci bootstrap\`); exact: Clopper-Pearson (\`standoff ci exact\`); pairwise: \`standoff ci paired\`, Holm over all comparisons, MDE at 80% power.`,
      `- Not measured is not failed: a NULL score is counted as not measured and is in no denominator; a quantity nobody measured is absent, never 0.`,
      `- Reproduce: \`standoff report build --traces <store> ${r.options.runs.map((x) => `--run ${x}`).join(' ')} --seed ${ctx.seed} --resamples ${ctx.resamples}${r.options.slices.map((c) => ` --slice ${c}`).join('')}\`.`,
      '',
    ].join('\n'),
  );
  return parts.filter(Boolean).join('\n').replace(/\n{3,}/g, '\n\n');
}

async function writeGenericOutputs(tmp: string, ctx: ReportContext, r: GenericReportResults, browser: EpisodeBrowserData, step: (m: string) => void): Promise<string[]> {
  const markdown = renderGenericReport(ctx, r);
  await writeFile(join(tmp, 'REPORT.md'), markdown);
  await writeFile(join(tmp, 'results.json'), JSON.stringify(r, jsonReplacer, 2) + '\n');
  const suite = r.summary.runs[0]?.suite ?? ctx.suite;
  await writeFile(join(tmp, 'index.html'), buildIndexHtml({ suite, markdown, figures: [], browser, countLinks: (setIndex) => buildGenericCountLinks(r.generic, setIndex) }, await readHtmlAssets()));
  step('REPORT.md, results.json and index.html written');
  return ['REPORT.md', 'index.html', 'results.json'];
}

/** index.html's bounds from the options (each default in html/load-episodes.ts). */
const browserBounds = (o: BuildReportOptions) => ({ budgetBytes: o.indexHtml?.dataBudgetBytes, listCap: o.indexHtml?.listCap, maxEpisodes: o.indexHtml?.maxEpisodes });

/** The generic report's subject labels (per suite) and the run and model each stands for. */
async function loadGenericSubjectSources(ctx: ReportContext): Promise<GenericSubjectSource[]> {
  const rows = await ctx.q(`SELECT suite, subject, run_id, subject_model FROM g_subject ORDER BY suite, subject, run_id, subject_model`);
  return rows.map((r) => ({ suite: String(r.suite), subject: String(r.subject), run_id: String(r.run_id), subject_model: String(r.subject_model) }));
}

function buildFigures(ctx: ReportContext, r: ReportResults): FigureSpec[] {
  const figs: (FigureSpec | null)[] = [
    metricBars(r.results, ctx.subjects, ctx.colours, ctx.level),
    groundedHeatmap(r.grounded, ctx.subjects),
    sliceDots(r.slices, ctx.subjects, ctx.colours, ctx.level),
    r.pairwise.comparisons.some((c) => c.difference !== null) ? forestPlot(r.pairwise, ctx.level) : null,
    r.probes.available ? probeOutcomes(r.probes, ctx.subjects) : null,
    r.probes.available ? reliabilityPlot(r.probes, ctx.subjects, ctx.colours) : null,
    judgeMatrix(r.judges),
  ];
  return figs.filter((f): f is FigureSpec => f !== null);
}

const figureLink = (f: FigureSpec | undefined) =>
  f ? `![${f.caption}](figures/${f.name}.png)\n\n<sub>Figure: [SVG](figures/${f.name}.svg) · [Vega-Lite spec with data](figures/${f.name}.vl.json)</sub>\n` : '';

export function renderReport(ctx: Pick<ReportContext, 'suite' | 'subjects' | 'seed' | 'resamples' | 'level'>, r: ReportResults, figures: FigureSpec[]): string {
  const fig = (name: string) => figureLink(figures.find((f) => f.name === name));
  const summary = { ...r.summary, hashes: r.inputs, gate: r.gate } as SummaryResult;
  const parts: string[] = [];
  parts.push(`# Standoff report: ${cell(r.summary.runs.map((x) => x.suite)[0] ?? ctx.suite)}\n`);
  parts.push(renderGate(summary));
  parts.push(
    `Runs ${r.options.runs.map((x) => `\`${x}\``).join(', ')}; ${fmtCount(r.summary.totals.samples)} samples; subjects ${ctx.subjects.map(cell).join(', ')}. ` +
      `Generated by standoff ${r.standoff_version} (\`standoff report build\`, seed ${ctx.seed}, ${fmtCount(ctx.resamples)} resamples). Every number below is in \`results.json\`.\n`,
  );
  parts.push('## Contents\n');
  parts.push(
    [
      '1. [Run summary](#1-run-summary)',
      '2. [Results per subject](#2-results-per-subject)',
      '3. [Grounded vs lucky](#3-grounded-vs-lucky)',
      '4. [Slices](#4-slices)',
      '5. [Pairwise subject comparisons](#5-pairwise-subject-comparisons)',
      '6. [Judges](#6-judges)',
      '7. [Paired probes](#7-paired-probes-reading-vs-acting)',
      '8. [Invalid and errored episodes](#8-invalid-and-errored-episodes)',
      '9. [Limitations](#limitations)',
      '10. [Method notes](#method-notes)',
    ].join('\n') + '\n',
  );
  parts.push(renderSummary(summary, ctx));
  parts.push(renderResults(r.results, ctx.level));
  parts.push(fig('results'));
  parts.push(renderGrounded(r.grounded, ctx.level));
  parts.push(fig('grounded'));
  parts.push(renderSlices(r.slices, ctx.subjects, ctx.level));
  parts.push(fig('slices'));
  parts.push(renderPairwise(r.pairwise, ctx.level));
  parts.push(fig('pairwise'));
  parts.push(renderJudges(r.judges, ctx.level));
  parts.push(fig('judges'));
  parts.push(renderProbes(r.probes));
  parts.push(fig('probes'));
  parts.push(fig('calibration'));
  parts.push(renderEpisodes(r.episodes));
  parts.push(renderLimitations(r.limitations));
  parts.push(methodNotes(ctx, r.options.runs, JSON.stringify(r).includes(`"${CLT_METHOD}"`)));
  return parts.filter(Boolean).join('\n').replace(/\n{3,}/g, '\n\n');
}

function methodNotes(ctx: Pick<ReportContext, 'seed' | 'resamples' | 'level'>, runs: string[], clt = false): string {
  const L = Math.round(ctx.level * 100);
  return [
    '## Method notes\n',
    `- Sampling unit: the scenario (for probes, the distinct decision state). Epochs repeat a scenario and its outcomes are correlated, so every interval and test resamples or clusters on whole scenarios by default; an interval that does not (Clopper-Pearson, judge agreement) says that it treats samples as independent.`,
    `- Cluster intervals: percentile cluster bootstrap over scenarios (all epochs of a scenario resampled together; ratio estimator; \`clusterBootstrapTotals\` on per-scenario sums), ${fmtCount(ctx.resamples)} resamples, seed ${ctx.seed}. For 0/1 data the resampled counts are drawn exactly from their multinomial distribution (\`engine: multinomial\` in results.json), which is the same bootstrap distribution as resampling indices. Same numbers as \`standoff ci bootstrap --metric M --by subject_model\` (it clusters on scenario_id by default).`,
    ...(clt
      ? [
          `- Many clusters (*CLT* beside an interval): with ${fmtCount(CLT_MIN_CLUSTERS)} clusters or more (and, for a rate, at least ${fmtCount(CLT_MIN_EVENTS)} successes and failures) an interval comes from the clustered central limit theorem instead of the bootstrap: mean ± t(G − 1) × the cluster-robust CR1 standard error, as Inspect AI computes it; the cluster bootstrap converges to it, and at the threshold the two agree within the bootstrap's Monte-Carlo error (docs/scale.md). results.json marks these intervals \`method: ${CLT_METHOD}\` with their \`se\` and \`df\`; \`standoff ci bootstrap --metric M\` still runs the bootstrap there and prints the same CR1 SE (\`se_clustered.cr1\`), from which this interval follows.`,
        ]
      : []),
    `- Exact intervals: two-sided ${L}% Clopper-Pearson (beta quantiles, as R \`binom.test\`); they treat samples as independent (\`standoff ci exact\`).`,
    `- Pairwise: paired cluster bootstrap of mean(A − B) over scenarios (pairs on scenario × epoch, a scenario's pairs resampled together; percentile); p-values from the z statistic on the cluster-robust (CR1) paired SE, Holm-adjusted; MDE at 80% power and α = ${(1 - ctx.level).toFixed(2)} at that SE (Miller 2024, "Adding Error Bars to Evals"). Same numbers as \`standoff ci paired --metric M --a A --b B\`.`,
    `- Not measured is not failed: a value nobody measured (no judge verdict, no read_system_log protocol) is NULL, counted as "not measured" and left out of every denominator; the structural gate fails on it (and on ERROR verdicts) unless \`--allow-judge-errors N\` allows them.`,
    `- Judges: Krippendorff's alpha (nominal) with a percentile bootstrap over samples (\`standoff agreement\`); pair agreement with Clopper-Pearson intervals and Cohen's kappa; alignment medians drop self-judgments (the judge shares the subject's model or family, as recorded in \`judgments.excluded_self\`).`,
    `- Paired probes: four outcomes, conditional shares and code composition as in Li, Krishnan & Padman, "Reading Right, Acting Wrong" (§2.3, §5.1, §6.1), over distinct states with intervals that resample whole states (\`standoff probes\`); ambiguous states apart; sufficiency per §2.4 with states grouped by decision rule and correct answers; ECE with 10 equal-width bins (Guo et al. 2017).`,
    `- Reproduce: \`standoff report build --traces <store> ${runs.map((r) => `--run ${r}`).join(' ')} --seed ${ctx.seed} --resamples ${ctx.resamples}\` gives byte-identical REPORT.md, results.json and figures; the input hashes are in results.json.`,
    '',
  ].join('\n');
}

async function writeOutputs(tmp: string, ctx: ReportContext, r: ReportResults, figures: FigureSpec[], browser: EpisodeBrowserData, step: (m: string) => void): Promise<string[]> {
  const files: string[] = [];
  await mkdir(join(tmp, 'figures'));
  const renders = await renderFigures(figures.map((f) => f.spec));
  for (const [i, f] of figures.entries()) {
    const rendered = renders[i];
    await writeFile(join(tmp, 'figures', `${f.name}.vl.json`), JSON.stringify(f.spec, null, 2) + '\n');
    await writeFile(join(tmp, 'figures', `${f.name}.svg`), rendered.svg.endsWith('\n') ? rendered.svg : rendered.svg + '\n');
    await writeFile(join(tmp, 'figures', `${f.name}.png`), rendered.png);
    const names = ['vl.json', 'svg', 'png'].map((x) => `figures/${f.name}.${x}`);
    files.push(...names);
    r.figures.push({ name: f.name, caption: f.caption, files: names });
  }
  step(`${figures.length} figures rendered`);
  const markdown = renderReport(ctx, r, figures);
  await writeFile(join(tmp, 'REPORT.md'), markdown);
  await writeFile(join(tmp, 'results.json'), JSON.stringify(r, jsonReplacer, 2) + '\n');
  await writeFile(join(tmp, 'index.html'), buildIndexHtml({ suite: r.summary.runs[0]?.suite ?? '', markdown, figures, browser, countLinks: (setIndex) => buildCountLinks(r, setIndex) }, await readHtmlAssets()));
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
