/**
 * The Standoff O1 suite's report (the runner's runs and synthetic bench data): run summary and
 * gate, results per subject, grounded vs lucky, slices, pairwise comparisons, judges, paired probes,
 * invalid and errored episodes, limitations; method notes. Recognised by the data: every run's
 * source is a Standoff one (`standoff`, `synthetic`) and they are one suite.
 */
import { cell, code, fmtCount, fmtCountOf } from '../markdown.ts';
import { concentrationFigure } from '../figure-concentration.ts';
import { costFrontierFigure, latencyFigure, tokensFigure } from '../figure-costs.ts';
import { accuracyFormFigure } from '../probe-accuracy-form.ts';
import { ladderFigure } from '../figure-ladder.ts';
import { isO1Data } from '../../schema/tables.ts';
import { RESULTS_SCHEMA } from '../report-results.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { groundedHeatmap, judgeFigure, metricBars, sliceDots } from '../figures.ts';
import { probeOutcomes, reliabilityPlot } from '../figure-probes.ts';
import type { ReportContext } from '../sections/context.ts';
import { renderGate, renderSimulatedBanner, uniqueEpisodeRuns, type SummaryResult } from '../sections/summary.ts';
import { O1_SOURCE, o1Results, renderAtAGlance, renderResults, type ResultsSection } from '../sections/results.ts';
import { recomputedSection, renderRecomputed, type RecomputedSection } from '../sections/recomputed.ts';
import { costsSection, renderCosts, type CostsSection } from '../sections/costs.ts';
import { groundedSection, renderGrounded, type GroundedSection } from '../sections/grounded.ts';
import { O1_SLICES, o1Slices, renderSlices, type SlicesSection } from '../sections/slices.ts';
import { renderPairwise, type PairwiseSection } from '../sections/pairwise.ts';
import { O1_PAIRWISE_VIEW, pairwiseSection } from './o1-pairwise.ts';
import { pairedForest } from '../core-figures.ts';
import { SIGN_NOTE } from '../markdown.ts';
import { judgesSection, judgesView, renderJudges, type JudgesSection } from '../sections/judges.ts';
import { probesSection, renderProbes, type ProbesSection } from '../sections/probes.ts';
import { episodesSection, renderEpisodes, type EpisodesSection } from '../sections/episodes.ts';
import { limitations, renderLimitations } from '../sections/limitations.ts';
import { buildCountLinks } from '../html/build-index-html.ts';
import { buildEpisodeSets } from '../html/episode-sets.ts';
import { loadSubjectSources } from '../html/load-episodes.ts';
import type { ReportResults } from '../report-results.ts';
import type { RenderInput, ReportSuite, SuiteSection } from '../suite.ts';
import { coreReconciliationSection, resultsSectionOf, slicesSectionOf, summarySection } from './core.ts';
import { renderReconciliation } from '../generic-render.ts';
import type { Reconciliation } from '../generic.ts';
import { CLT_METHOD } from '../../analysis/rates.ts';
import { CLT_MIN_CLUSTERS, CLT_MIN_EVENTS } from '../../stats/index.ts';
import { rankingFigure, rankingSection, renderRanking, type RankingSection } from '../sections/ranking.ts';

type Ctx = RenderInput['ctx'];
const lvl = (i: RenderInput) => i.ctx.level;

/** Section 2: the core results section over O1's four metrics, in O1's table. */
const results = resultsSectionOf<ResultsSection>({
  source: O1_SOURCE,
  present: o1Results,
  render: (v, i) => renderResults(v, lvl(i)),
  figures: (v, i) => [metricBars(v, i.ctx.subjects, i.ctx.colours, i.ctx.level)],
});
const recomputed: SuiteSection<RecomputedSection> = {
  key: 'recomputed',
  step: 'evidence scorer: reported vs recomputed per episode',
  compute: ({ ctx }) => recomputedSection(ctx),
  render: (v) => renderRecomputed(v),
};
/** The core reported vs recomputed section (the log's own aggregates), a subsection of section 2 here. */
const reconciliation: SuiteSection<Reconciliation[]> = {
  ...coreReconciliationSection,
  render: (v) => renderReconciliation(v, "### Reported vs recomputed: the log's own aggregates"),
};
const costs: SuiteSection<CostsSection> = {
  key: 'costs',
  step: 'cost and latency',
  compute: ({ ctx }) => costsSection(ctx),
  render: (v) => renderCosts(v),
  figures: (v, i) => [latencyFigure(v, i.ctx.subjects, i.ctx.colours), tokensFigure(v, i.ctx.subjects), costFrontierFigure(v, i.ctx.subjects, i.ctx.colours)],
};
const grounded: SuiteSection<GroundedSection> = {
  key: 'grounded',
  step: 'grounded vs lucky',
  compute: ({ ctx }) => groundedSection(ctx),
  render: (v, i) => renderGrounded(v, lvl(i)),
  figures: (v, i) => [groundedHeatmap(v, i.ctx.subjects)],
};
/** Section 4: the core slices section over O1's dimensions and metrics, in O1's table. */
const slices = slicesSectionOf<SlicesSection>({
  source: O1_SLICES,
  present: o1Slices,
  render: (v, i) => renderSlices(v, i.ctx.subjects, lvl(i)),
  figures: (v, i) => [sliceDots(v, i.ctx.subjects, i.ctx.colours, i.ctx.level)],
});
const pairwise: SuiteSection<PairwiseSection> = {
  key: 'pairwise',
  step: 'pairwise comparisons',
  compute: ({ ctx, adjust }) => pairwiseSection(ctx, adjust),
  render: (v, i) => renderPairwise(v, lvl(i), O1_PAIRWISE_VIEW),
  figures: (v, i) => [pairedForest(v, i.ctx.level, O1_PAIRWISE_VIEW, 'pairwise')],
};
/** Ranks with rank intervals and tiers (`standoff rank`), for three or more subjects: a subsection of section 5. */
const ranking: SuiteSection<RankingSection | null> = {
  key: 'ranking',
  step: 'ranking',
  compute: ({ ctx }) => rankingSection(ctx),
  render: (v) => (v ? renderRanking(v) : ''),
  figures: (v) => (v ? [rankingFigure(v)] : []),
};
const judges: SuiteSection<JudgesSection> = {
  key: 'judges',
  step: 'judges',
  compute: ({ ctx, earlier }) => judgesSection(ctx, uniqueEpisodeRuns(earlier.summary as SummaryResult | undefined)),
  render: (v, i) => renderJudges(v, lvl(i), judgesView(v, '## 6. Judges')),
  figures: (v) => [judgeFigure(v)],
};
const probes: SuiteSection<ProbesSection> = {
  key: 'probes',
  step: 'paired probes',
  compute: ({ ctx }) => probesSection(ctx),
  render: (v) => renderProbes(v),
  figures: (v, i) =>
    v.available
      ? [probeOutcomes(v, i.ctx.subjects), ladderFigure(v.ladder, i.ctx.subjects, i.ctx.colours, i.ctx.level), concentrationFigure(v.concentration), accuracyFormFigure(v.accuracy_form, i.ctx.subjects, i.ctx.colours), reliabilityPlot(v, i.ctx.subjects, i.ctx.colours)]
      : [],
};
const episodes: SuiteSection<EpisodesSection> = {
  key: 'episodes',
  step: 'invalid and errored episodes',
  compute: ({ ctx }) => episodesSection(ctx),
  render: (v) => renderEpisodes(v),
};
const limitationsSection: SuiteSection<string[]> = {
  key: 'limitations',
  compute: async ({ earlier: e }) =>
    limitations(e.summary as SummaryResult, e.results as ResultsSection, e.judges as JudgesSection, e.probes as ProbesSection, e.pairwise as PairwiseSection),
  render: (v) => renderLimitations(v),
};

export const standoffO1Suite: ReportSuite<ReportResults & Record<string, unknown>> = {
  id: 'standoff-o1',
  // Recognised by its data (schema/tables.ts isO1Data): a Standoff store, or one O1-shaped suite
  // (the standoff_o1 task, or two of O1's scorers) whoever wrote it (Inspect logs, CSV).
  recognise: (f) => f.suites.length === 1 && (f.standoff || f.sources.every((source) => isO1Data({ source, suite: f.suites[0], scorers: f.scorers }))),
  sections: () => [summarySection, results, recomputed, reconciliation, grounded, slices, pairwise, ranking, judges, probes, episodes, costs, limitationsSection],
  figureOrder: ['results', 'grounded', 'slices', 'pairwise', 'ranking', 'probes', 'ladder', 'concentration', 'accuracy-form', 'calibration', 'judges', 'latency', 'tokens', 'cost-frontier'],
  results(ctx: ReportContext, v: Record<string, unknown>) {
    const { hashes, gate, ...summary } = v.summary as SummaryResult;
    const r: ReportResults = {
      schema: RESULTS_SCHEMA,
      standoff_version: STANDOFF_VERSION,
      options: { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, allow_judge_errors: ctx.allowJudgeErrors, allow_truncated: ctx.allowTruncated, allow_missing: ctx.allowMissing, runs: ctx.runIds },
      inputs: hashes,
      summary,
      gate,
      results: v.results as ResultsSection,
      recomputed: v.recomputed as RecomputedSection,
      reconciliation: v.reconciliation as Reconciliation[],
      grounded: v.grounded as GroundedSection,
      slices: v.slices as SlicesSection,
      pairwise: v.pairwise as PairwiseSection,
      ranking: (v.ranking ?? null) as RankingSection | null,
      judges: v.judges as JudgesSection,
      probes: v.probes as ProbesSection,
      episodes: v.episodes as EpisodesSection,
      costs: v.costs as CostsSection,
      limitations: v.limitations as string[],
      figures: [],
    };
    return r as ReportResults & Record<string, unknown>;
  },
  document: (ctx, r, rendered) => document(ctx, r, rendered),
  browserSets: (r, sources) => buildEpisodeSets(r, sources),
  countLinks: (r, setIndex) => buildCountLinks(r, setIndex),
  subjectSources: (ctx) => loadSubjectSources(ctx.q),
};

/** REPORT.md of the Standoff suite (what `renderReport` wrote): the frame around the rendered sections. */
export function renderReport(ctx: Ctx, r: ReportResults, rendered: string[]): string {
  return document(ctx, r, rendered);
}

function document(ctx: RenderInput['ctx'], r: ReportResults, rendered: string[]): string {
  const summary = { ...r.summary, hashes: r.inputs, gate: r.gate } as SummaryResult;
  const parts: string[] = [];
  parts.push(`# Standoff report: ${cell(r.summary.runs.map((x) => x.suite)[0] ?? ctx.suite)}\n`);
  parts.push(renderGate(summary));
  parts.push(renderSimulatedBanner(summary));
  parts.push(
    `Runs ${r.options.runs.map(code).join(', ')}; ${fmtCountOf(r.summary.totals.samples, 'sample')}; subjects ${ctx.subjects.map(cell).join(', ')}. ` +
      `Generated by standoff ${r.standoff_version} (\`standoff report build\`, seed ${ctx.seed}, ${fmtCount(ctx.resamples)} resamples). Every number below is in \`results.json\`.\n`,
  );
  parts.push(renderAtAGlance(r.results as ResultsSection, ctx.level));
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
      '9. [Cost and latency](#9-cost-and-latency)',
      '10. [Limitations](#limitations)',
      '11. [Method notes](#method-notes)',
    ].join('\n') + '\n',
  );
  parts.push(...rendered);
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
    `- Pairwise: paired cluster bootstrap of mean(A − B) over scenarios (pairs on scenario × epoch, a scenario's pairs resampled together; percentile); p-values from the z statistic on the cluster-robust (CR1) paired SE, adjusted within each metric (\`--adjust\`, default Holm; never across metrics); MDE at 80% power and α = ${(1 - ctx.level).toFixed(2)} at that SE (Miller 2024, "Adding Error Bars to Evals"). Same numbers as \`standoff ci paired --metric M --a A --b B\`.`,
    SIGN_NOTE,
    `- Not measured is not failed: a value nobody measured (no judge verdict, no read_system_log protocol) is NULL, counted as "not measured" and left out of every denominator; the structural gate fails on it (and on ERROR verdicts) unless \`--allow-judge-errors N\` allows them.`,
    `- Judges: Krippendorff's alpha (nominal) with a percentile bootstrap over samples (\`standoff agreement\`); pair agreement with Clopper-Pearson intervals and Cohen's kappa; alignment medians drop self-judgments (the judge shares the subject's model or family, as recorded in \`judgments.excluded_self\`).`,
    `- Paired probes: four outcomes, conditional shares and code composition as in Li, Krishnan & Padman, "Reading Right, Acting Wrong" (§2.3, §5.1, §6.1), over distinct states with intervals that resample whole states (\`standoff probes\`); ambiguous states apart; sufficiency per §2.4 and §B.4 (within a family, states grouped by their correct probe answers alone); ECE with 10 equal-width bins (Guo et al. 2017).`,
    `- Reproduce: ${code(`standoff report build --traces <store> ${runs.map((r) => `--run ${r}`).join(' ')} --seed ${ctx.seed} --resamples ${ctx.resamples}`)} gives byte-identical REPORT.md, results.json and figures; the input hashes are in results.json.`,
    '',
  ].join('\n');
}

