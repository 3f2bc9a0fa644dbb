/**
 * Markdown of the core sections (every store): results per subject x scorer, pairwise
 * comparisons (`sections/pairwise.ts`), judges and agreement (`sections/judges.ts`), slices,
 * reported vs recomputed, invalid and errored samples, and the first screen's compact results
 * table. The numbers come from `generic.ts`; nothing here computes a statistic. Each part is one
 * core section's `render` (`renderCorePart`, `suites/core.ts`).
 */
import { cell, code, fixed, fmtCount, numInterval, pct, pctInterval, signed, table, byText } from './markdown.ts';
import { rateCellFull } from './rate-cell.ts';
import { scorerMetricName, type MetricKind } from '../analysis/metrics.ts';
import type { Interval } from '../analysis/rates.ts';
import { renderPairwise, type PairwiseView } from './sections/pairwise.ts';
import { renderFourCells } from './four-cell.ts';
import { judgesView, renderJudges } from './sections/judges.ts';
import { judgeFigureName } from './figures.ts';
import { resultSubjects, rowsOf, type GenericSections, type GenericValues, type Reconciliation, type ScorerResult } from './generic.ts';

const isBinary = (k: MetricKind | null) => k === 'binary';
const value = (k: MetricKind | null, x: number | null) => (isBinary(k) ? pct(x) : fixed(x, 3));
const interval = (k: MetricKind | null, i: Interval | null) => (i === null ? null : i.lower === null ? `— (${cell(i.note ?? 'not computable')})` : isBinary(k) ? pctInterval(i.lower, i.upper) : numInterval(i.lower, i.upper));

/** A scorer's cell for one subject: the one results cell of every suite (`rate-cell.ts`). */
function resultCell(r: ScorerResult | undefined): string {
  if (!r) return 'not measured';
  const x = { measured: true, successes: r.sum, trials: r.n, estimate: r.estimate, not_measured: r.not_measured, noanswer: r.noanswer, binary: isBinary(r.kind), percent: isBinary(r.kind), repeated: r.max_per_item > 1, cluster: r.bootstrap, exact: r.exact, interval: r.bootstrap ?? r.exact! };
  return rateCellFull(x, { unit: 'item', rows: 'samples', empty: 'not measured' });
}

/** A numbered part of the core sections' Markdown: null when it has nothing to say (and takes no number). */
type Part = (g: GenericSections, level: number, n: number, several: boolean) => string | null;

/** The core sections after the run summary, in report order. */
export type CorePart = 'results' | 'pairwise' | 'judges' | 'slices' | 'reconciliation' | 'samples';

/**
 * One core section's Markdown (`generic`: the core sections' values, `assembleGeneric`), numbered
 * after the run summary (section `n0 - 1`) and the core sections before it that have something to say.
 */
export function renderCorePart(key: CorePart, g: GenericValues, level: number, n0 = 2): string {
  const at = CORE_PARTS.findIndex((p) => p.key === key);
  const n = corePartNumber(key, g, n0);
  if (n === null) return '';
  const rows = rowsOf(g);
  return CORE_PARTS[at].render(rows, level, n, rows.suites.length > 1) ?? '';
}

/** The number of a core section in the report (after the run summary, section `n0 - 1`); null when it has nothing to say. */
export function corePartNumber(key: CorePart, g: GenericValues, n0 = 2): number | null {
  const at = CORE_PARTS.findIndex((p) => p.key === key);
  return CORE_PARTS[at].present(g) ? n0 + CORE_PARTS.slice(0, at).filter((p) => p.present(g)).length : null;
}

const resultsPart: Part = (g, level, n, several) => {
  const L = Math.round(level * 100);
  const out: string[] = [`## ${n}. Results per subject and scorer\n`];
  if (g.scorers.length === 0) out.push('No scores are stored: nothing was measured, so there are no results (the samples are listed in the run summary).\n');
  for (const suite of g.suites) {
    const sc = g.scorers.filter((s) => s.suite === suite);
    if (sc.length === 0) continue;
    if (several) out.push(`### Suite ${cell(suite)}\n`);
    out.push(
      table(
        ['Subject model', ...sc.map((s) => `${cell(s.metric)} (${s.kind ?? 'not measured'})`)],
        resultSubjects(g, suite).map((subject) => [cell(subject), ...sc.map((s) => resultCell(g.results.find((r) => r.suite === suite && r.scorer === s.scorer && r.subject === subject)))]),
        ['l', ...sc.map(() => 'r' as const)],
      ),
    );
  }
  const repeated = g.results.some((r) => r.max_per_item > 1);
  if (g.scorers.length) {
    out.push(
      `Intervals (${L}%). The kind of each scorer (in brackets) is inferred from its values: *binary* (0/1) scorers are rates with the exact two-sided Clopper-Pearson interval (\`standoff ci exact --metric NAME\`), which treats samples as independent; ` +
        `every scorer also gets a percentile bootstrap of its mean over items (\`standoff ci bootstrap --metric NAME --by subject_model\`)` +
        (repeated ? `, which resamples whole items with all their epochs (*cluster*): epochs of one item are correlated, so it is the interval to read where they repeat` : '') +
        `. Not measured (NULL) and NOANSWER samples are in no denominator and are counted. Every number is in \`results.json\` (\`generic.results\`).\n`,
    );
    out.push(`Kinds, from the evidence: ${g.scorers.map((x) => `${several ? `${cell(x.suite)} ` : ''}${cell(x.metric)} ${x.kind ?? 'not measured'} (${cell(x.kind_reason)})`).join('; ')}.\n`);
  }
  if (g.corpus.length) out.push(corpusTable(g, L, several));
  out.push('<!-- figure:scorer-forest -->\n', '<!-- figure:task-heatmap -->\n');
  return out.join('\n');
};

function corpusTable(g: GenericSections, L: number, several: boolean): string {
  return [
    `Corpus-level metrics (the log computed each over the whole task: one number, no per-sample values; \`runs.config.reported_metrics\`):\n`,
    table(
      [...(several ? ['Task'] : []), 'Metric', 'Filter', 'Subject model', 'Value', `${L}% interval`],
      g.corpus.map((c) => [...(several ? [cell(c.suite)] : []), cell(c.metric), cell(c.filter ?? '—'), cell(c.subject), fixed(c.value, 4), 'no per-sample interval (corpus-level)']),
      [...(several ? ['l' as const] : []), 'l', 'l', 'l', 'r', 'l'],
    ),
  ].join('\n');
}

const pairwisePart: Part = (g, level, n, several) =>
  `${renderPairwise(g.pairwise, level, genericPairwiseView(n, several))}\n${renderFourCells(g.pairwise.comparisons, several, scorerMetricName)}\n<!-- figure:paired-differences -->\n`;

const judgesPart: Part = (g, level, n) =>
  g.judges.length === 0
    ? null
    : [`## ${n}. Judges and agreement\n`, ...g.judges.flatMap((j, i) => [renderJudges(j, level, judgesView(j, `### Scorer ${cell(j.scorer)}`, '####')), `<!-- figure:${judgeFigureName(i)} -->\n`])].join('\n');

const slicesPart: Part = (g, level, n, several) => {
  if (g.slices.rows.length === 0) return null;
  const L = Math.round(level * 100);
  const out: string[] = [`## ${n}. Slices\n`];
  out.push(`Each cell: the scorer's rate or mean in the slice, with its ${L}% interval (cluster bootstrap over the slice's items where epochs repeat them or values are not 0/1, else exact). Dimensions: ${g.slices.dimensions.map(code).join(', ')}.\n`);
  for (const dim of g.slices.dimensions) {
    const rows = g.slices.rows.filter((r) => r.dimension === dim);
    out.push(`### ${cell(dim)}\n`);
    out.push(
      table(
        ['Level', ...(several ? ['Suite'] : []), 'Scorer', 'Subject model', 'n', 'Value', `${L}%`],
        rows.map((r) => {
          const k = g.scorers.find((s) => s.suite === r.suite && s.scorer === r.scorer)?.kind ?? null;
          return [cell(r.level), ...(several ? [cell(r.suite)] : []), cell(scorerMetricName(r.scorer)), cell(r.subject), fmtCount(r.n), value(k, r.estimate), interval(k, r.interval) ?? '—'];
        }),
        ['l', ...(several ? ['l' as const] : []), 'l', 'l', 'r', 'r', 'r'],
      ),
    );
  }
  return out.join('\n');
};

const reconciliationPart: Part = (g, _level, n) => renderReconciliation(g.reconciliation, `## ${n}. Reported vs recomputed`) || null;

/**
 * The reported vs recomputed table of every suite (the core reconciliation section's Markdown):
 * the log's own aggregates beside Standoff's recomputation, under `heading`; '' when no log
 * reported any.
 */
export function renderReconciliation(rows: Reconciliation[], heading: string): string {
  if (rows.length === 0) return '';
  const flagged = rows.filter((r) => r.status === 'FLAG').length;
  return [
    `${heading}\n`,
    `The metrics the log reported about itself (\`runs.config.reported_metrics\`) beside Standoff's value recomputed from the per-sample scores (difference: recomputed − reported). ${flagged ? `**${flagged} differ** (FLAG).` : 'Every recomputed value matches.'}\n`,
    table(
      ['Run', 'Task', 'Metric', 'Filter', 'Scorer', 'Reported', 'Recomputed', 'Difference', 'Stderr reported / recomputed', 'Status', 'Note'],
      rows.map((r) => [
        code(r.run_id), cell(r.task), cell(r.metric), cell(r.filter ?? '—'), cell(r.scorer ?? '—'), fixed(r.reported, 4), fixed(r.recomputed, 4), r.diff === null ? '—' : signed(r.diff, 6),
        `${fixed(r.reported_stderr, 4)} / ${fixed(r.recomputed_stderr, 4)}`, r.status === 'FLAG' ? '**FLAG**' : r.status, cell(r.note),
      ]),
      ['l', 'l', 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'l', 'l'],
    ),
  ].join('\n');
}

const samplesPart: Part = (g, _level, n, several) => {
  const out: string[] = [`## ${n}. Invalid and errored samples\n`];
  const bad = g.samples.filter((s) => s.invalid + s.errored > 0);
  if (bad.length === 0) return [...out, 'None: no sample is marked invalid or errored.\n'].join('\n');
  out.push(table([...(several ? ['Suite'] : []), 'Subject model', 'Samples', 'Invalid', 'Errored'], bad.map((s) => [...(several ? [cell(s.suite)] : []), cell(s.subject), fmtCount(s.samples), fmtCount(s.invalid), fmtCount(s.errored)]), [...(several ? ['l' as const] : []), 'l', 'r', 'r', 'r']));
  out.push(bad.flatMap((s) => s.reasons.map((r) => `- ${cell(s.subject)}: ${r.status}, ${cell(r.reason)} (${fmtCount(r.count)})`)).join('\n') + '\n');
  out.push("Errored samples are in no scorer's denominator.\n");
  return out.join('\n');
};

/**
 * The core parts in order, their contents titles, and when each has something to say: never when
 * the suite does not compose its section (its value is null).
 */
const CORE_PARTS: { key: CorePart; title: string; render: Part; present: (g: GenericValues) => boolean }[] = [
  { key: 'results', title: 'Results per subject and scorer', render: resultsPart, present: (g) => g.results !== null },
  { key: 'pairwise', title: 'Pairwise subject comparisons per scorer', render: pairwisePart, present: (g) => g.pairwise !== null },
  { key: 'judges', title: 'Judges and agreement', render: judgesPart, present: (g) => (g.judges?.length ?? 0) > 0 },
  { key: 'slices', title: 'Slices', render: slicesPart, present: (g) => (g.slices?.rows.length ?? 0) > 0 },
  { key: 'reconciliation', title: 'Reported vs recomputed', render: reconciliationPart, present: (g) => (g.reconciliation?.length ?? 0) > 0 },
  { key: 'samples', title: 'Invalid and errored samples', render: samplesPart, present: (g) => g.samples !== null },
];

/** Rows of the first screen's compact results table (the full one is section 2). */
export const AT_A_GLANCE_ROWS = 12;

/**
 * The first screen's answer: each subject's estimate and interval per task and scorer, best first
 * within a scorer, at most {@link AT_A_GLANCE_ROWS} rows (the rest: section 2).
 */
export function renderAtAGlance(v: GenericValues, level: number): string {
  const g = rowsOf(v);
  const rows = g.results.filter((r) => r.estimate !== null);
  if (rows.length === 0) return '';
  const several = g.suites.length > 1;
  const order = [...rows].sort((a, b) => byText(a.suite, b.suite) || byText(a.scorer, b.scorer) || (b.estimate ?? 0) - (a.estimate ?? 0) || byText(a.subject, b.subject));
  const shown = order.slice(0, AT_A_GLANCE_ROWS);
  const L = Math.round(level * 100);
  const body = table(
    [...(several ? ['Task'] : []), 'Scorer', 'Subject model', 'Estimate', `${L}% interval`, 'n'],
    shown.map((r) => {
      const i = r.bootstrap?.lower != null ? r.bootstrap : r.exact;
      return [...(several ? [cell(r.suite)] : []), cell(scorerMetricName(r.scorer)), cell(r.subject), value(r.kind, r.estimate), interval(r.kind, i) ?? '—', fmtCount(r.n)];
    }),
    [...(several ? ['l' as const] : []), 'l', 'l', 'r', 'r', 'r'],
  );
  const more = order.length > shown.length ? ` (${fmtCount(order.length - shown.length)} more rows in section 2)` : '';
  return `**At a glance**: each subject's estimate with its ${L}% interval (the bootstrap over items, clustered where epochs repeat them; exact Clopper-Pearson where the bootstrap gives none), best first within a scorer${more}.\n\n${body}`;
}

/** How the core sections' pairwise table names its comparisons. */
export function genericPairwiseView(n: number, several: boolean): PairwiseView {
  return {
    heading: `## ${n}. Pairwise subject comparisons per scorer`,
    unit: 'item',
    family: 'one task and one scorer',
    familyColumn: several ? 'task and scorer' : 'scorer',
    suiteColumn: several,
    scorerColumn: { title: 'Scorer', label: (c) => scorerMetricName(c.scorer) },
    percent: (c) => c.kind === 'binary',
  };
}

/** The contents entries of the core sections, numbered from `n0`. */
export function genericContents(g: GenericValues, n0: number): string[] {
  const titles = CORE_PARTS.filter((p) => p.present(g)).map((p) => p.title);
  return titles.map((t, i) => `${n0 + i}. [${t}](#${n0 + i}-${t.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')})`);
}
