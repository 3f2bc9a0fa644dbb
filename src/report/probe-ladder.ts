/**
 * The composition ladder in the report ("Reading Right, Acting Wrong" section 6.1): a table of
 * each subject's accuracy per step (a step not run says so), a table of the paired, state-clustered
 * differences between adjacent steps that were run, and a figure, one line per subject across the
 * steps. Numbers come from `loadProbeLadder` (`src/analysis/probe-ladder.ts`).
 */
import type { ProbeLadder } from '../analysis/probe-ladder.ts';
import type { ProbeCondition } from '../schema/tables.ts';
import { baseConfig, subjectScale, type FigureSpec } from './figures.ts';
import { cell, fmtCount, pp, ppInterval, rateCell, table } from './markdown.ts';
import { shareCell } from './probe-interval-legend.ts';

/** What each step is called in the report. */
export const CONDITION_LABEL: Readonly<Record<ProbeCondition, string>> = Object.freeze({
  raw: 'Raw trace',
  'own-answers': 'Own answers shown',
  facts: 'Correct facts shown',
  composed: 'Composed in code',
});

export const NOT_RUN = 'not run';

export function renderLadder(l: ProbeLadder, level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['### The composition ladder\n'];
  out.push(
    `Each state's decision asked under each condition ("Reading Right, Acting Wrong" §6.1): on the raw trace; again with the subject's own probe answers shown beside the state; with the correct facts shown (the facts-only reference); ` +
      `and composed in code from the subject's own answers (no model call). Non-ambiguous states only. A condition the run did not ask is *${NOT_RUN}*, not 0 (\`standoff run --probe-conditions\`). ` +
      `Differences are between adjacent steps that were run, on the state answers decided under both, with a ${L}% paired cluster bootstrap that resamples whole states.\n`,
  );
  const conditions = Object.keys(CONDITION_LABEL) as ProbeCondition[];
  out.push(
    table(
      ['Subject model', ...conditions.map((c) => CONDITION_LABEL[c])],
      l.subjects.map((s) => [cell(s.subject), ...s.steps.map((x) => (x.accuracy ? shareCell(x.accuracy) : `*${NOT_RUN}*`))]),
      ['l', ...conditions.map(() => 'r' as const)],
    ),
  );
  const rows = l.subjects.flatMap((s) =>
    s.differences.map((d) => [
      cell(s.subject),
      `${CONDITION_LABEL[d.from]} → ${CONDITION_LABEL[d.to]}`,
      `${fmtCount(d.states)} (${fmtCount(d.pairs)})`,
      pp(d.difference),
      d.interval.lower === null ? `— (${d.interval.note?.startsWith('not reported') ? 'no spread' : 'too few states'})` : ppInterval(d.interval.lower, d.interval.upper),
    ]),
  );
  out.push(rows.length ? table(['Subject model', 'Step', 'States (answers)', 'Difference', `${L}% CI`], rows, ['l', 'l', 'r', 'r', 'r']) : 'Only one condition was run, so there is no step to compare.\n');
  return out.join('\n');
}

/** One line per subject across the steps that were run (points with interval rules). */
export function ladderFigure(l: ProbeLadder | null | undefined, subjects: string[], colours: Record<string, string>, level: number): FigureSpec | null {
  if (!l || l.conditions_run.length < 2) return null;
  const order = l.conditions_run.map((c) => CONDITION_LABEL[c]);
  const r = (x: number | null) => (x === null ? null : Math.round(x * 1e6) / 1e4);
  const values = l.subjects.flatMap((s) =>
    s.steps
      .filter((x) => x.accuracy !== null)
      .map((x) => ({ subject: s.subject, step: CONDITION_LABEL[x.condition], accuracy: r(x.accuracy!.rate), lower: r(x.accuracy!.interval.lower), upper: r(x.accuracy!.interval.upper), label: rateCell(x.accuracy!.count, x.accuracy!.n) })),
  );
  const shown = subjects.filter((s) => l.subjects.some((x) => x.subject === s));
  const L = Math.round(level * 100);
  const enc = { x: { field: 'step', type: 'ordinal', sort: order, title: 'Condition', axis: { labelAngle: 0 } }, color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(shown, colours) } };
  return {
    name: 'ladder',
    caption: `The composition ladder: decision accuracy on non-ambiguous states per condition, one line per subject, with ${L}% intervals (states resampled where epochs repeat them). Conditions not run are left out.`,
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: 'The composition ladder', subtitle: 'Decision accuracy from the raw trace to the action composed in code (Reading Right, Acting Wrong §6.1)' },
      width: Math.max(260, 140 * order.length),
      height: 260,
      data: { values },
      layer: [
        { mark: { type: 'line', strokeWidth: 2 }, encoding: { ...enc, y: { field: 'accuracy', type: 'quantitative', title: 'Decision accuracy (%)', scale: { domain: [0, 100] } } } },
        { mark: { type: 'rule', strokeWidth: 1.5, opacity: 0.6 }, encoding: { ...enc, y: { field: 'lower', type: 'quantitative' }, y2: { field: 'upper' } } },
        { mark: { type: 'point', filled: true, size: 60 }, encoding: { ...enc, y: { field: 'accuracy', type: 'quantitative' }, tooltip: [{ field: 'subject' }, { field: 'step' }, { field: 'label' }, { field: 'lower' }, { field: 'upper' }] } },
      ],
      config: baseConfig(),
    },
  };
}
