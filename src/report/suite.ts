/**
 * How a report is put together: ONE pipeline (`build-report.ts`) and a small typed interface
 * through which a suite adds what only it measures.
 *
 * A {@link ReportSuite} is recognised by the data (the runs' sources, suites and scorers: what the
 * store holds, not who wrote the files) and lists its {@link SuiteSection}s in report order. The
 * pipeline runs every section's `compute` in that order (a section can read the results of the
 * sections before it, by key), keeps each typed result under the section's `key` in
 * results.json, renders each with `render` (GitHub Markdown), places the section's `figures`
 * (Vega-Lite specs; the pipeline renders SVG and PNG and links them under the section) and builds
 * index.html with the sample browser's sets (`browserSets`) and the links of the report's count
 * cells (`countLinks`).
 *
 * To add a section (a probe analysis, a Ranking, ...): write a `SuiteSection` whose `compute`
 * returns a typed value from the report context (`ctx.q` binds every untrusted value as a
 * parameter) and whose `render` turns that value into Markdown with the helpers of `markdown.ts`;
 * then put it in the `sections` of the suites it applies to (`suites/core.ts` for every store,
 * `suites/standoff-o1.ts` for the Standoff O1 suite). Contents entries, numbering, figure files
 * and results.json follow from the list. Statistics live in `src/stats` and `src/analysis`, not in
 * a section.
 *
 * The core sections (`CORE_SECTIONS` in `suites/core.ts`: results, pairwise, judges, slices,
 * reported vs recomputed, samples) are there for a suite to compose, any subset of them (those it
 * leaves out are null in results.json's `generic`). Results have one computation
 * (`computeResults`, generic.ts): a suite gives it its observations as an `ObservationSource` and
 * shows them its own way (`resultsSectionOf` with a `ResultsView`), as the Standoff O1 suite does
 * with its four metrics. Slices likewise (`computeSlices` over a `SliceSource`, core-slices.ts;
 * `slicesSectionOf`), and invalid and errored samples (`computeSamples`, core-samples.ts): the O1
 * suite's sections 4 and 8 are those computations over its own sources.
 */
import type { EpisodeSetDef, SubjectSource } from './html/episode-sets.ts';
import type { MarkdownHooks } from './html/markdown-html.ts';
import type { FigureSpec } from './figures.ts';
import type { ReportContext } from './sections/context.ts';
import type { Adjust } from './sections/pairwise.ts';

/** What recognising a suite may look at: facts of the store's data. */
export interface StoreFacts {
  /** `runs.source` of every run (standoff, synthetic, csv, inspect, lm-eval ...), sorted, distinct. */
  sources: string[];
  /** `runs.suite` of every run, sorted, distinct. */
  suites: string[];
  /** Scorers in `scores`, sorted. */
  scorers: string[];
  /** True when every run is a Standoff run (the runner's or synthetic). */
  standoff: boolean;
  /** The store holds probe decisions and no episode (a paired-probe import): `suites/probes-only.ts`. */
  probesOnly?: boolean;
}

/** What a section's `compute` gets: the context and the results of the sections before it. */
export interface SectionInput {
  ctx: ReportContext;
  /** Results of the earlier sections, by their key. */
  earlier: Readonly<Record<string, unknown>>;
  /** Report options a suite reads (e.g. generic `--slice` columns). */
  slices: string[];
  /** Multiple-comparison adjustment of pairwise p-values (`--adjust`; default holm). */
  adjust: Adjust;
}

/** What a section's `render` and `figures` get. */
export interface RenderInput {
  ctx: Pick<ReportContext, 'suite' | 'subjects' | 'seed' | 'resamples' | 'level' | 'colours'>;
  /** Every section's result, by key (the whole results.json). */
  all: Readonly<Record<string, unknown>>;
}

export interface SuiteSection<T = unknown> {
  /** Where its typed result goes in results.json. */
  key: string;
  compute(input: SectionInput): Promise<T>;
  /** Markdown; '' when the section has nothing to say. */
  render(value: T, input: RenderInput): string;
  /** Figures shown under the section (deterministic Vega-Lite specs; null: none for this data). */
  figures?(value: T, input: RenderInput): (FigureSpec | null)[];
  /** A progress line once computed. */
  step?: string;
}

export interface ReportSuite<R extends Record<string, unknown> = Record<string, unknown>> {
  id: string;
  /** True when this suite's sections apply to the store (by its data). */
  recognise(facts: StoreFacts): boolean;
  /** Sections in report order. */
  sections(): SuiteSection[];
  /** results.json: the section results (by key) with the suite's frame (schema, options, inputs ...). */
  results(ctx: ReportContext, values: Record<string, unknown>, slices: string[]): R;
  /** REPORT.md from the rendered sections (each section's Markdown, figures placed under it). */
  document(ctx: RenderInput['ctx'], results: R, rendered: string[]): string;
  /** The sample browser's sets (one per linked count) and the links of the count cells. */
  browserSets(results: R, sources: SubjectSource[]): EpisodeSetDef[];
  countLinks(results: R, setIndex: Map<string, number>): MarkdownHooks['countLink'];
  /** The subject labels the browser shows and the run and model each stands for. */
  subjectSources(ctx: ReportContext): Promise<SubjectSource[]>;
  /** Order of figures in results.json and index.html (default: section order). */
  figureOrder?: string[];
}

/** Where a section wants figure `name` placed in its Markdown (removed when there is no such figure). */
export const figureMark = (name: string): string => `<!-- figure:${name} -->`;

/** Markdown linking a figure's PNG, SVG and spec (placed under its section). */
export const figureLink = (f: FigureSpec | undefined): string =>
  f ? `![${f.caption}](figures/${f.name}.png)\n\n<sub>Figure: [SVG](figures/${f.name}.svg) · [Vega-Lite spec with data](figures/${f.name}.vl.json)</sub>\n` : '';

const sectionFigures = (s: SuiteSection, input: RenderInput): FigureSpec[] => (s.figures?.(input.all[s.key], input) ?? []).filter((f): f is FigureSpec => f !== null);

/** Runs a suite's sections in order: their results by key. */
export async function computeSuite(suite: ReportSuite, input: Omit<SectionInput, 'earlier'>, step: (m: string) => void): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const s of suite.sections()) {
    values[s.key] = await s.compute({ ...input, earlier: values });
    if (s.step) step(s.step);
  }
  return values;
}

/** The suite's figures, in its figure order (default: section order). */
export function suiteFigures(suite: ReportSuite, input: RenderInput): FigureSpec[] {
  const figs = suite.sections().flatMap((s) => sectionFigures(s, input));
  if (!suite.figureOrder) return figs;
  const rank = (f: FigureSpec) => {
    const i = suite.figureOrder!.indexOf(f.name);
    return i < 0 ? suite.figureOrder!.length : i;
  };
  return figs.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map((x) => x.f);
}

/** Each section rendered, its figures linked under it. */
export function renderSections(suite: ReportSuite, input: RenderInput, figures: FigureSpec[]): string[] {
  return suite.sections().map((s) => {
    const v = input.all[s.key];
    const mine = sectionFigures(s, input);
    // A figure goes where the section marks it (`<!-- figure:NAME -->`), else under the section.
    let md = s.render(v, input);
    const after: string[] = [];
    for (const f of mine) {
      const link = figureLink(figures.find((x) => x.name === f.name));
      const mark = figureMark(f.name);
      if (md.includes(mark)) md = md.replace(mark, link);
      else after.push(link);
    }
    md = md.replace(/<!-- figure:[a-z0-9-]+ -->\n?/g, '');
    return [md, ...after].filter(Boolean).join('\n');
  });
}
