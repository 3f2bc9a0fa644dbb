/**
 * Figure of the composition ladder ("Reading Right, Acting Wrong" section 6.1): decision accuracy
 * per condition run, one line per subject, with the steps' intervals as rules.
 */
import type { ProbeLadder } from '../analysis/probe-ladder.ts';
import { baseConfig, subjectScale, type FigureSpec } from './figures.ts';
import { rateCell } from './markdown.ts';
import { CONDITION_LABEL } from './probe-ladder.ts';

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
