/**
 * The core of every report: the run summary and the gate (every store), and the core sections,
 * each its own {@link SuiteSection} a suite composes: results per subject x scorer, pairwise
 * comparisons, judges and agreement, slices, reported vs recomputed, invalid and errored samples
 * (computed in `generic.ts`, rendered by `generic-render.ts`). A store that is not one Standoff
 * suite (a CSV, Inspect logs, lm-eval output, several suites) gets {@link CORE_SECTIONS} whole;
 * suites add sections on top (`standoff-o1.ts`).
 */
import { cell, code, fmtCount, fmtCountOf, SIGN_NOTE } from '../markdown.ts';
import { RESULTS_SCHEMA, type GenericReportResults } from '../report-results.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { isStandoffSource } from '../../schema/tables.ts';
import { renderGate, renderSimulatedBanner, renderSummary, runSummary, uniqueEpisodeRuns, type SummaryResult } from '../sections/summary.ts';
import { ADJUST_LABEL, assembleGeneric, prepareCore, rowsOf, type GenericValues, computeResults, coreJudges, corePairwise, coreResultsOf, GENERIC_SOURCE, reconcile, type CoreResults, type GenericJudges, type ObservationSource, type ResultCell, type ScorerInfo, type GenericSections, type Reconciliation } from '../generic.ts';
import { computeSlices, coreSlicesOf, GENERIC_SLICES, type SliceCell, type SliceSource } from '../core-slices.ts';
import { computeSamples, coreSamplesOf } from '../core-samples.ts';
import { genericContents, genericPairwiseView, renderAtAGlance, renderCorePart } from '../generic-render.ts';
import { buildGenericCountLinks } from '../html/build-index-html.ts';
import { buildGenericEpisodeSets, type GenericSubjectSource } from '../html/episode-sets.ts';
import type { ReportContext } from '../sections/context.ts';
import { pairedForest, scorerForest, taskHeatmap } from '../core-figures.ts';
import { judgeFigure, judgeFigureName, type FigureSpec } from '../figures.ts';
import type { PairwiseSection } from '../sections/pairwise.ts';
import type { RenderInput, ReportSuite, SuiteSection } from '../suite.ts';

/** Section 1 of every report: the run summary (runs, subjects, hashes) with the structural gate. */
export const summarySection: SuiteSection<SummaryResult> = {
  key: 'summary',
  step: 'run summary and structural gate',
  compute: ({ ctx }) => runSummary(ctx),
  render: (v, i) => renderSummary(v, i.ctx),
};

const generic = (i: RenderInput) => assembleGeneric(i.all);
const several = (g: GenericValues) => (g.suites?.length ?? 0) > 1;

/**
 * How a suite shows the one results computation (`computeResults`, generic.ts): where its
 * observations come from, the value it keeps (results.json's entry), its Markdown and figures.
 */
export interface ResultsView<P> {
  source: ObservationSource;
  /** `earlier`: the earlier sections' results (the suite's `SectionInput`). */
  present(ctx: ReportContext, computed: { scorers: ScorerInfo[]; cells: ResultCell[] }, earlier?: Readonly<Record<string, unknown>>): Promise<P>;
  render(value: P, input: RenderInput): string;
  figures?(value: P, input: RenderInput): (FigureSpec | null)[];
  step?: string;
}

/** The core results section over a suite's source and presentation (key `results`). */
export function resultsSectionOf<P>(view: ResultsView<P>): SuiteSection<P> {
  return {
    key: 'results',
    step: view.step ?? 'results per subject',
    compute: async ({ ctx, earlier }) => view.present(ctx, await computeResults(ctx, view.source), earlier),
    render: view.render,
    figures: view.figures,
  };
}

/** Results per task x subject x scorer: every scorer a metric, its kind from evidence, corpus-level metrics beside. */
export const coreResultsSection: SuiteSection<CoreResults> = resultsSectionOf<CoreResults>({
  source: GENERIC_SOURCE,
  present: coreResultsOf,
  step: 'results per subject and scorer',
  render: (_v, i) => renderCorePart('results', generic(i), i.ctx.level),
  figures: (_v, i) => [scorerForest(rowsOf(generic(i)), i.ctx.level), taskHeatmap(rowsOf(generic(i)))],
});

/** Paired comparisons per task x scorer (`sections/pairwise.ts`, the one pairwise implementation). */
export const corePairwiseSection: SuiteSection<PairwiseSection> = {
  key: 'pairwise',
  step: 'pairwise comparisons',
  compute: ({ ctx, earlier, adjust }) => corePairwise(ctx, earlier.results as CoreResults | undefined, adjust),
  render: (_v, i) => renderCorePart('pairwise', generic(i), i.ctx.level),
  figures: (v, i) => [pairedForest(v, i.ctx.level, genericPairwiseView(2, several(generic(i))))],
};

/** Judges and agreement per judged scorer (`sections/judges.ts`, the one judges implementation). */
export const coreJudgesSection: SuiteSection<GenericJudges[]> = {
  key: 'judges',
  step: 'judges',
  compute: ({ ctx, earlier }) => coreJudges(ctx, uniqueEpisodeRuns(earlier.summary as SummaryResult | undefined)),
  render: (_v, i) => renderCorePart('judges', generic(i), i.ctx.level),
  figures: (v) => v.map((j, k) => judgeFigure(j, judgeFigureName(k))),
};

/**
 * How a suite shows the one slices computation (`computeSlices`, core-slices.ts): where its
 * observations come from and which dimensions (a {@link SliceSource}), the value it keeps, its
 * Markdown and figures.
 */
export interface SlicesView<P> {
  source: SliceSource;
  present(ctx: ReportContext, computed: { dimensions: string[]; cells: SliceCell[] }): P;
  render(value: P, input: RenderInput): string;
  figures?(value: P, input: RenderInput): (FigureSpec | null)[];
}

/** The core slices section over a suite's source and presentation (key `slices`). */
export function slicesSectionOf<P>(view: SlicesView<P>): SuiteSection<P> {
  return {
    key: 'slices',
    step: 'slices',
    compute: async ({ ctx, slices }) => view.present(ctx, await computeSlices(ctx, view.source, slices)),
    render: view.render,
    figures: view.figures,
  };
}

/** Slices by episode columns and metadata keys (and `--slice`). */
export const coreSlicesSection: SuiteSection<GenericSections['slices']> = slicesSectionOf<GenericSections['slices']>({
  source: GENERIC_SLICES,
  present: (_ctx, computed) => coreSlicesOf(computed),
  render: (_v, i) => renderCorePart('slices', generic(i), i.ctx.level),
});

/** The metrics the logs reported about themselves beside Standoff's recomputation. */
export const coreReconciliationSection: SuiteSection<Reconciliation[]> = {
  key: 'reconciliation',
  step: 'reported vs recomputed',
  compute: ({ ctx }) => reconcile(ctx),
  render: (_v, i) => renderCorePart('reconciliation', generic(i), i.ctx.level),
};

/** Invalid and errored samples per subject, with their reasons. */
export const coreSamplesSection: SuiteSection<GenericSections['samples']> = {
  key: 'samples',
  step: 'invalid and errored samples',
  compute: async ({ ctx }) => {
    await prepareCore(ctx);
    return coreSamplesOf(await computeSamples(ctx, 'g_subject'));
  },
  render: (_v, i) => renderCorePart('samples', generic(i), i.ctx.level),
};

/** The core sections after the run summary, in report order: a suite composes them with its own. */
export const CORE_SECTIONS: readonly SuiteSection<any>[] = [coreResultsSection, corePairwiseSection, coreJudgesSection, coreSlicesSection, coreReconciliationSection, coreSamplesSection];

/** Any store that is not one Standoff suite: every scorer is a metric. */
export const coreSuite: ReportSuite<GenericReportResults & Record<string, unknown>> = {
  id: 'core',
  recognise: () => true,
  sections: () => [summarySection, ...CORE_SECTIONS],
  results(ctx: ReportContext, v: Record<string, unknown>, slices: string[]) {
    const { hashes, gate, ...summary } = v.summary as SummaryResult;
    const r: GenericReportResults = {
      schema: RESULTS_SCHEMA,
      standoff_version: STANDOFF_VERSION,
      report: 'generic',
      options: { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, allow_judge_errors: ctx.allowJudgeErrors, allow_truncated: ctx.allowTruncated, allow_missing: ctx.allowMissing, runs: ctx.runIds, slices },
      inputs: hashes,
      summary,
      gate,
      // Null where a suite composing a subset of the core sections lacks one (GenericValues); readers here take nulls.
      generic: assembleGeneric(v) as GenericSections,
      figures: [],
    };
    return r as GenericReportResults & Record<string, unknown>;
  },
  document: (ctx, r, rendered) => document(ctx, r, rendered),
  browserSets: (r, sources) => buildGenericEpisodeSets(rowsOf(r.generic), sources as GenericSubjectSource[]),
  countLinks: (r, setIndex) => buildGenericCountLinks(rowsOf(r.generic), setIndex),
  subjectSources: (ctx) => loadGenericSubjectSources(ctx),
};

/** REPORT.md of a store that is not one Standoff suite, from its rendered sections. */
export function renderGenericReport(ctx: RenderInput['ctx'], r: GenericReportResults, rendered: string[]): string {
  return document(ctx, r, rendered);
}

const pairwiseNote = (p: PairwiseSection | null) =>
  p === null ? '' : `; pairwise: \`standoff ci paired\`, p-values ${p.adjust === 'none' ? 'not adjusted (--adjust none)' : `${ADJUST_LABEL[p.adjust]}-adjusted within each task x scorer family (--adjust)`}, MDE at 80% power`;

function document(ctx: RenderInput['ctx'], r: GenericReportResults, rendered: string[]): string {
  const summary = { ...r.summary, hashes: r.inputs, gate: r.gate } as SummaryResult;
  // A core section the suite does not compose is null in r.generic: no rows here, no sentence about it.
  const g = rowsOf(r.generic as GenericValues);
  const suites = g.suites;
  const L = Math.round(ctx.level * 100);
  const parts: string[] = [];
  parts.push(`# Standoff report: ${suites.map(cell).join(', ')}\n`);
  parts.push(renderGate(summary));
  parts.push(renderSimulatedBanner(summary));
  parts.push(
    `Runs ${r.options.runs.map(code).join(', ')}; ${fmtCountOf(r.summary.totals.samples, 'sample')}; subjects ${[...new Set((r.generic.samples ?? g.results).map((x) => x.subject))].map(cell).join(', ')}; scorers ${[...new Set(g.scorers.map((s) => s.scorer))].map(cell).join(', ') || 'none'}. ` +
      `Generated by standoff ${r.standoff_version} (\`standoff report build\`, seed ${ctx.seed}, ${fmtCount(ctx.resamples)} resamples). Every number below is in \`results.json\`. ` +
      (r.summary.runs.every((x) => isStandoffSource(x.source))
        ? `These runs hold ${suites.length} Standoff suites: each is reported here with the generic sections (every scorer as a metric, a table per suite); Standoff's own sections (the O1 results, grounded vs lucky, slices, probes) report one suite at a time: \`standoff report build --run ID\`.\n`
        : `These runs are not a Standoff suite: every scorer in the store is reported as a metric, and the sections of Standoff's own suite are absent (nothing of theirs was measured).\n`),
  );
  parts.push(renderAtAGlance(r.generic, ctx.level));
  parts.push('## Contents\n');
  parts.push(['1. [Run summary](#1-run-summary)', ...genericContents(r.generic, 2), `${genericContents(r.generic, 2).length + 2}. [Method notes](#method-notes)`].join('\n') + '\n');
  parts.push(...rendered);
  parts.push(
    [
      '## Method notes\n',
      `- Sampling unit: the item (\`scenario_id\`). Where epochs repeat an item, its outcomes are correlated, so bootstrap intervals resample whole items and paired comparisons cluster on the item; the exact Clopper-Pearson interval treats every sample as independent and says so.`,
      `- Kinds, from evidence: binary when the log declares the scorer 0/1 (Inspect's accuracy over C/I, lm-eval's acc, acc_norm, exact_match) or its values hold both 0 and 1; a scorer whose values are all 0 (or all 1) with no declaration is bounded, not a rate; else bounded (in [0, 1]), ordinal (integers, at most 10 levels) or continuous. The results say which kind and why; exact (Clopper-Pearson) intervals only for binary scorers.`,
      `- Intervals: ${L}%; bootstrap percentile with ${fmtCount(ctx.resamples)} resamples, seed ${ctx.seed} (\`standoff ci bootstrap\`); exact: Clopper-Pearson (\`standoff ci exact\`)${pairwiseNote(r.generic.pairwise as PairwiseSection | null)}.`,
      SIGN_NOTE,
      `- Not measured is not failed: a NULL score is counted as not measured and is in no denominator; a quantity nobody measured is absent, never 0.`,
      `- Reproduce: ${code(`standoff report build --traces <store> ${r.options.runs.map((x) => `--run ${x}`).join(' ')} --seed ${ctx.seed} --resamples ${ctx.resamples}${r.options.slices.map((c) => ` --slice ${c}`).join('')}`)}.`,
      '',
    ].join('\n'),
  );
  return parts.filter(Boolean).join('\n').replace(/\n{3,}/g, '\n\n');
}


/** The generic report's subject labels (per suite) and the run and model each stands for. */
async function loadGenericSubjectSources(ctx: ReportContext): Promise<GenericSubjectSource[]> {
  const rows = await ctx.q(`SELECT suite, subject, run_id, subject_model FROM g_subject ORDER BY suite, subject, run_id, subject_model`);
  return rows.map((r) => ({ suite: String(r.suite), subject: String(r.subject), run_id: String(r.run_id), subject_model: String(r.subject_model) }));
}

