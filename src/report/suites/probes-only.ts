/**
 * The report of a store that holds paired probes and no episodes (`standoff ingest csv --probes`:
 * someone else's probe answers and decisions): the runs with their subjects, states and hashes, and the
 * paired-probe section (`sections/probes.ts`), with a plain statement that there are no episodes,
 * so the episode sections (results, grounded vs lucky, pairwise, judges) and the episode gate have
 * nothing to report.
 */
import { cell, code, fmtCount, table } from '../markdown.ts';
import { RESULTS_SCHEMA } from '../report-results.ts';
import { STANDOFF_VERSION } from '../../version.ts';
import { hashRun, type RunHash } from '../sections/summary.ts';
import { probesSection, renderProbes, type ProbesSection } from '../sections/probes.ts';
import { probeOutcomes } from '../figure-probes.ts';
import { ladderFigure } from '../figure-ladder.ts';
import { concentrationFigure } from '../figure-concentration.ts';
import { accuracyFormFigure } from '../probe-accuracy-form.ts';
import type { ReportContext } from '../sections/context.ts';
import type { RenderInput, ReportSuite, SuiteSection } from '../suite.ts';

interface ProbeRunRow {
  run_id: string;
  suite: string;
  source: string;
  status: string;
  subjects: string[];
  /** Distinct states and probe decisions (raw) of the run. */
  states: number;
  decisions: number;
}

/** The runs, their subjects and states, and the inputs' hashes (no episode gate: there are no episodes). */
const summary: SuiteSection<{ runs: ProbeRunRow[]; hashes: RunHash[] }> = {
  key: 'summary',
  step: 'run summary',
  compute: async ({ ctx }) => {
    const rows = await ctx.q(`SELECT run_id, list(DISTINCT subject_model ORDER BY subject_model) AS subjects, CAST(count(DISTINCT state_id) AS BIGINT) AS states,
      CAST(count(*) FILTER (WHERE coalesce(condition, 'raw') = 'raw') AS BIGINT) AS decisions FROM probe_decisions GROUP BY run_id`);
    const by = new Map(rows.map((r) => [String(r.run_id), r]));
    const hashes: RunHash[] = [];
    for (const id of ctx.runIds) hashes.push(await hashRun(ctx.storeDir, id));
    const runs = ctx.runs.map((r) => {
      const x = by.get(r.run_id);
      return { run_id: r.run_id, suite: r.suite, source: r.source, status: r.status, subjects: x ? (x.subjects as string[]).map(String) : [], states: Number(x?.states ?? 0), decisions: Number(x?.decisions ?? 0) };
    });
    return { runs, hashes };
  },
  render: (v) =>
    [
      '## 1. Run summary\n',
      table(
        ['Run', 'Suite', 'Source', 'Status', 'Subjects', 'States', 'Decisions', 'SHA-256 (Parquet)'],
        v.runs.map((r) => [code(r.run_id), cell(r.suite), cell(r.source), cell(r.status), r.subjects.map(cell).join(', '), fmtCount(r.states), fmtCount(r.decisions), code((v.hashes.find((h) => h.run_id === r.run_id)?.sha256 ?? '').slice(0, 16))]),
        ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'l'],
      ),
    ].join('\n'),
};

const probes: SuiteSection<ProbesSection> = {
  key: 'probes',
  step: 'paired probes',
  compute: ({ ctx }) => probesSection(ctx),
  render: (v) => renderProbes(v, 2),
  figures: (v, i) =>
    v.available ? [probeOutcomes(v, i.ctx.subjects), ladderFigure(v.ladder, i.ctx.subjects, i.ctx.colours, i.ctx.level), concentrationFigure(v.concentration), accuracyFormFigure(v.accuracy_form, i.ctx.subjects, i.ctx.colours)] : [],
};

export interface ProbesOnlyResults extends Record<string, unknown> {
  schema: string;
  standoff_version: string;
  report: 'probes';
  options: { seed: number; resamples: number; level: number; runs: string[] };
  inputs: RunHash[];
  summary: { runs: ProbeRunRow[] };
  probes: ProbesSection;
  figures: { name: string; caption: string; files: string[] }[];
}

/** Recognised when the store holds probe decisions and no episode at all. */
export const probesOnlySuite: ReportSuite<ProbesOnlyResults> = {
  id: 'probes',
  recognise: (f) => f.probesOnly === true,
  sections: () => [summary, probes],
  results(ctx: ReportContext, v: Record<string, unknown>) {
    const { hashes, runs } = v.summary as { runs: ProbeRunRow[]; hashes: RunHash[] };
    return {
      schema: RESULTS_SCHEMA,
      standoff_version: STANDOFF_VERSION,
      report: 'probes',
      options: { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, runs: ctx.runIds },
      inputs: hashes,
      summary: { runs },
      probes: v.probes as ProbesSection,
      figures: [],
    };
  },
  document: (ctx, r, rendered) => document(ctx, r, rendered),
  browserSets: () => [],
  countLinks: () => () => null,
  subjectSources: async () => [],
  figureOrder: ['probes', 'ladder', 'concentration', 'accuracy-form'],
};

function document(ctx: RenderInput['ctx'], r: ProbesOnlyResults, rendered: string[]): string {
  return [
    `# Standoff report: ${[...new Set(r.summary.runs.map((x) => x.suite))].map(cell).join(', ')}\n`,
    `Runs ${r.options.runs.map(code).join(', ')}: paired probes of ${fmtCount(ctx.subjects.length)} subject${ctx.subjects.length === 1 ? '' : 's'} (${ctx.subjects.map(cell).join(', ')}). ` +
      `**The store holds no episodes** (an import of probe answers and decisions), so there are no results per subject, grounded vs lucky, pairwise comparisons or judges to report: only the paired-probe analyses below. ` +
      `Generated by standoff ${r.standoff_version} (\`standoff report build\`, seed ${ctx.seed}, ${fmtCount(ctx.resamples)} resamples). Every number below is in \`results.json\`.\n`,
    ...rendered,
  ]
    .filter(Boolean)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
}
