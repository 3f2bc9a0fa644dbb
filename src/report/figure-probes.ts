/**
 * The paired-probe figures (section 7): the four reading/acting outcomes per subject and the
 * confidence reliability plot. Their own file (like figure-ladder.ts), so figures.ts names no probe
 * type and the report's modules form no import circle.
 */
import { baseConfig, pct100, SCHEMA, subjectScale, wrapColumns, type FigureSpec } from './figures.ts';
import type { ProbesSection } from './sections/probes.ts';

export const OUTCOME_ORDER = ['Facts right, action right', 'Facts right, action wrong', 'Fact wrong, action right', 'Fact wrong, action wrong'];
/** Action right: blues, action wrong: oranges (Okabe-Ito); dark = facts right, light = a fact wrong. */
export const OUTCOME_COLOURS = ['#0072B2', '#D55E00', '#56B4E9', '#E69F00'];

/** The four paired-probe outcomes per subject: share of states with its exact interval, one panel per outcome. */
export function probeOutcomes(p: ProbesSection, subjects: string[]): FigureSpec {
  const values = p.subjects.flatMap((s) =>
    [s.cells.facts_right_action_right, s.cells.facts_right_action_wrong, s.cells.facts_wrong_action_right, s.cells.facts_wrong_action_wrong].map((c, i) => ({
      subject: s.subject,
      outcome: OUTCOME_ORDER[i],
      share: pct100(c.rate),
      lower: pct100(c.interval.lower),
      upper: pct100(c.interval.upper),
      label: c.rate === null ? 'n/a' : `${(c.rate * 100).toFixed(1)}% (${c.count}/${c.n})`,
      count: c.count,
      answers: c.n,
      interval: c.interval.sampling === 'clustered' ? 'cluster bootstrap over states' : 'Clopper-Pearson',
    })),
  );
  const L = Math.round(p.level * 100);
  const shown = subjects.filter((s) => p.subjects.some((x) => x.subject === s));
  const panelWidth = 300;
  return {
    name: 'probes',
    caption: `The four paired-probe outcomes per subject: share of answers on non-ambiguous states, with ${L}% intervals (a cluster bootstrap over states where epochs repeat a state, else Clopper-Pearson).`,
    spec: {
      $schema: SCHEMA,
      title: {
        text: 'Reading vs acting: paired-probe outcomes',
        subtitle: [`Share of answers on non-ambiguous states; lines: ${L}% interval (states resampled where epochs repeat them)`, '"Facts right" = every factual probe on the state answered correctly; "action" = the decision question'],
      },
      data: { values },
      facet: { field: 'outcome', type: 'nominal', title: null, sort: OUTCOME_ORDER, header: { labelFontSize: 13 } },
      columns: wrapColumns(panelWidth + 160, OUTCOME_ORDER.length),
      spec: {
        width: panelWidth,
        height: { step: 30 },
        encoding: {
          y: { field: 'subject', type: 'nominal', title: 'Subject model', sort: shown },
          color: { field: 'outcome', type: 'nominal', sort: OUTCOME_ORDER, scale: { domain: OUTCOME_ORDER, range: OUTCOME_COLOURS }, legend: null },
        },
        layer: [
          { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x: { field: 'lower', type: 'quantitative', title: 'Share of answers (%)', scale: { domain: [0, 100] } }, x2: { field: 'upper' } } },
          {
            mark: { type: 'point', filled: true, size: 70, opacity: 1 },
            encoding: { x: { field: 'share', type: 'quantitative' }, tooltip: [{ field: 'subject' }, { field: 'outcome' }, { field: 'label' }, { field: 'lower' }, { field: 'upper' }, { field: 'interval' }] },
          },
          { mark: { type: 'text', dy: -11, fontSize: 10, color: '#222' }, encoding: { x: { field: 'share', type: 'quantitative' }, text: { field: 'label' } } },
        ],
      },
      config: baseConfig(),
    },
  };
}

/** Reliability diagram (accuracy vs mean confidence per bin). */
export function reliabilityPlot(p: ProbesSection, subjects: string[], colours: Record<string, string>): FigureSpec | null {
  if (!p.calibration_available) return null;
  const values = p.subjects.flatMap((s) =>
    (s.calibration?.bins ?? [])
      .filter((b) => b.count > 0)
      .map((b) => ({ subject: s.subject, confidence: pct100(b.meanConfidence), accuracy: pct100(b.accuracy), count: b.count })),
  );
  return {
    name: 'calibration',
    caption: 'Reliability of the option probabilities: accuracy against mean confidence per bin; the diagonal is perfect calibration.',
    spec: {
      $schema: SCHEMA,
      title: { text: 'Calibration of option probabilities', subtitle: 'Accuracy vs mean confidence per 10%-wide bin; dot size = decisions; diagonal = perfectly calibrated' },
      width: 320,
      height: 320,
      layer: [
        { data: { values: [{ x: 0, y: 0 }, { x: 100, y: 100 }] }, mark: { type: 'line', strokeDash: [4, 3], color: '#888' }, encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } } },
        {
          data: { values },
          mark: { type: 'line', point: false, strokeWidth: 1.5 },
          encoding: {
            x: { field: 'confidence', type: 'quantitative', title: 'Mean confidence (%)', scale: { domain: [0, 100] } },
            y: { field: 'accuracy', type: 'quantitative', title: 'Accuracy (%)', scale: { domain: [0, 100] } },
            color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(subjects, colours) },
          },
        },
        {
          data: { values },
          mark: { type: 'circle', opacity: 0.85 },
          encoding: {
            x: { field: 'confidence', type: 'quantitative' },
            y: { field: 'accuracy', type: 'quantitative' },
            size: { field: 'count', type: 'quantitative', title: 'Decisions', scale: { range: [15, 300] } },
            color: { field: 'subject', type: 'nominal', scale: subjectScale(subjects, colours) },
            tooltip: [{ field: 'subject' }, { field: 'confidence' }, { field: 'accuracy' }, { field: 'count' }],
          },
        },
      ],
      config: baseConfig(),
    },
  };
}
