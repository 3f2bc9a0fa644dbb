/**
 * Vega-Lite specs for the report's figures, data inlined. Every spec uses the bundled font
 * ({@link FONT_FAMILY}), a white background, titles, axis titles with units, and the same fixed
 * subject -> colour scale (`ReportContext.colours`, from the colour-blind-safe `PALETTE` of
 * sections/context.ts), so a subject has one colour in every figure. Colour never carries meaning
 * alone: panels, axis labels and legends name what a colour stands for. Faceted figures wrap
 * their panels ({@link wrapColumns}) so no figure grows wider than {@link MAX_FIGURE_WIDTH}.
 */
import { FONT_FAMILY } from './render-figure.ts';
import { METRIC_LABEL, type MainMetric } from './sections/context.ts';
import type { GroundedSection } from './sections/grounded.ts';
import type { JudgesSection } from './sections/judges.ts';
import type { ResultsSection } from './sections/results.ts';
import type { SlicesSection } from './sections/slices.ts';

export interface FigureSpec {
  /** File stem: figures/<name>.vl.json, .svg, .png. */
  name: string;
  /** Alt text / caption. */
  caption: string;
  spec: Record<string, unknown>;
}

export const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export function baseConfig() {
  return {
    font: FONT_FAMILY,
    background: 'white',
    padding: 12,
    title: { font: FONT_FAMILY, fontSize: 15, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' },
    axis: { labelFont: FONT_FAMILY, titleFont: FONT_FAMILY, labelFontSize: 11, titleFontSize: 12, grid: true, gridColor: '#e6e6e6', labelLimit: 320 },
    legend: { labelFont: FONT_FAMILY, titleFont: FONT_FAMILY, labelFontSize: 11, titleFontSize: 12, labelLimit: 260, titleLimit: 260 },
    header: { labelFont: FONT_FAMILY, titleFont: FONT_FAMILY, labelFontSize: 12, titleFontSize: 12 },
    text: { font: FONT_FAMILY },
    view: { stroke: '#ccc' },
  };
}

export function subjectScale(subjects: string[], colours: Record<string, string>) {
  return { domain: subjects, range: subjects.map((s) => colours[s]) };
}

export const pct100 = (x: number | null) => (x === null ? null : Math.round(x * 1e6) / 1e4);

/** Figures stay about this wide (CSS pixels; the PNG is twice that): wider facet rows wrap. */
export const MAX_FIGURE_WIDTH = 1000;

/** Facet columns per row for panels about `panelWidth` wide (axis labels included). */
export const wrapColumns = (panelWidth: number, panels: number): number => Math.max(1, Math.min(panels, Math.floor(MAX_FIGURE_WIDTH / panelWidth)));

/** Metric bars with exact-interval whiskers, one panel per metric. */
export function metricBars(r: ResultsSection, subjects: string[], colours: Record<string, string>, level: number): FigureSpec {
  const metrics: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];
  const values = r.subjects.flatMap((s) =>
    metrics.map((m) => {
      const x = s.metrics[m];
      return {
        subject: s.subject,
        metric: METRIC_LABEL[m],
        rate: pct100(x.estimate),
        lower: pct100(x.interval.lower),
        upper: pct100(x.interval.upper),
        label: x.trials ? `${(x.estimate! * 100).toFixed(1)}%` : 'n/a',
        n: x.trials,
      };
    }),
  );
  const L = Math.round(level * 100);
  return {
    name: 'results',
    caption: `Evidence gathered, policy action accuracy and alignment per subject, with ${L}% intervals (cluster bootstrap over scenarios; exact where no scenario repeats or the bootstrap has no spread).`,
    spec: {
      $schema: SCHEMA,
      title: { text: 'Results per subject', subtitle: `Bars: rate; whiskers: ${L}% interval (cluster bootstrap over scenarios; Clopper-Pearson where it has no spread)` },
      data: { values },
      facet: { field: 'metric', type: 'nominal', title: null, sort: metrics.map((m) => METRIC_LABEL[m]) },
      columns: wrapColumns(Math.max(200, 56 * subjects.length) + 90, metrics.length),
      spec: {
        width: Math.max(200, 56 * subjects.length),
        height: 220,
        layer: [
          {
            mark: { type: 'bar', opacity: 0.9 },
            encoding: {
              x: { field: 'subject', type: 'nominal', title: 'Subject model', sort: subjects, axis: { labelAngle: -30 } },
              y: { field: 'rate', type: 'quantitative', title: 'Rate (% of samples)', scale: { domain: [0, 100] } },
              color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(subjects, colours) },
              tooltip: [{ field: 'subject' }, { field: 'metric' }, { field: 'label' }, { field: 'n' }],
            },
          },
          {
            mark: { type: 'rule', strokeWidth: 1.5, color: '#222' },
            encoding: { x: { field: 'subject', type: 'nominal', sort: subjects }, y: { field: 'lower', type: 'quantitative' }, y2: { field: 'upper' } },
          },
          {
            mark: { type: 'text', dy: -8, fontSize: 10, color: '#222' },
            encoding: { x: { field: 'subject', type: 'nominal', sort: subjects }, y: { field: 'upper', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
      config: baseConfig(),
    },
  };
}

/** Gathered x correct heatmap per subject. */
export function groundedHeatmap(g: GroundedSection, subjects: string[]): FigureSpec {
  const values = g.subjects.flatMap((s) => {
    const n = s.table.gathered_correct + s.table.gathered_incorrect + s.table.not_gathered_correct + s.table.not_gathered_incorrect;
    const cellv = (gathered: string, correct: string, count: number) => ({
      subject: s.subject,
      gathered,
      correct,
      count,
      share: n ? Math.round((count / n) * 1e6) / 1e4 : 0,
      label: [`${count}`, n ? `${((count / n) * 100).toFixed(1)}%` : ''],
    });
    return [
      cellv('gathered', 'correct', s.table.gathered_correct),
      cellv('gathered', 'incorrect', s.table.gathered_incorrect),
      cellv('not gathered', 'correct', s.table.not_gathered_correct),
      cellv('not gathered', 'incorrect', s.table.not_gathered_incorrect),
    ];
  });
  return {
    name: 'grounded',
    caption: 'Gathered evidence before the decision × policy-compliant action, per subject (non-ambiguous samples). Not gathered and correct = right by luck.',
    spec: {
      $schema: SCHEMA,
      title: { text: 'Grounded vs lucky', subtitle: 'Evidence gathered before deciding × policy-compliant action (non-ambiguous samples; counts and % of the subject\'s samples)' },
      data: { values },
      facet: { field: 'subject', type: 'nominal', title: 'Subject model', sort: subjects },
      columns: wrapColumns(170 + 150, subjects.length),
      spec: {
        width: 170,
        height: 130,
        encoding: {
          x: { field: 'correct', type: 'nominal', title: 'Policy action', sort: ['correct', 'incorrect'], axis: { labelAngle: 0, grid: false } },
          y: { field: 'gathered', type: 'nominal', title: 'Log read before decision', sort: ['gathered', 'not gathered'], axis: { grid: false } },
        },
        layer: [
          {
            mark: { type: 'rect', stroke: 'white', strokeWidth: 2 },
            encoding: { color: { field: 'share', type: 'quantitative', title: 'Share of samples (%)', scale: { scheme: 'blues', domain: [0, 100] } } },
          },
          {
            mark: { type: 'text', fontSize: 12, lineHeight: 15 },
            encoding: {
              text: { field: 'label' },
              color: { condition: { test: 'datum.share > 55', value: 'white' }, value: '#111' },
            },
          },
        ],
      },
      config: baseConfig(),
    },
  };
}

/** Slice dot plot with interval rules: one panel per metric (wrapped), rows = slices grouped by dimension. */
export function sliceDots(s: SlicesSection, subjects: string[], colours: Record<string, string>, level: number): FigureSpec {
  const dimLabel: Record<string, string> = { domain: 'Domain', decision_type: 'Decision type', variant: 'Variant' };
  const metrics = (['gathered_evidence', 'policy_action', 'alignment'] as MainMetric[]).map((m) => METRIC_LABEL[m]);
  const values = s.rows
    .filter((r) => r.trials > 0)
    .map((r) => ({
      dimension: dimLabel[r.dimension],
      slice: `${dimLabel[r.dimension]}: ${r.value}`,
      subject: r.subject,
      metric: METRIC_LABEL[r.metric],
      rate: pct100(r.estimate),
      lower: pct100(r.interval.lower),
      upper: pct100(r.interval.upper),
      n: r.trials,
    }));
  const L = Math.round(level * 100);
  const slices = [...new Set(values.map((v) => v.slice))];
  const panelWidth = 220;
  const labelWidth = 7 * Math.max(0, ...slices.map((x) => x.length)); // ~7 px per character at 11 px
  return {
    name: 'slices',
    caption: `Rates by domain, decision type and variant per subject, with ${L}% intervals.`,
    spec: {
      $schema: SCHEMA,
      title: { text: 'Slices', subtitle: `Dots: rate; lines: ${L}% interval. Policy action has no ambiguous slice (NOANSWER).` },
      data: { values },
      facet: { field: 'metric', type: 'nominal', title: null, sort: metrics, header: { labelFontSize: 13 } },
      columns: wrapColumns(panelWidth + labelWidth + 40, metrics.length),
      // Each panel its own slices (policy action has no ambiguous one) and its own rate axis.
      resolve: { scale: { y: 'independent' }, axis: { x: 'independent' } },
      spec: {
        width: panelWidth,
        height: { step: 10 },
        encoding: {
          y: { field: 'slice', type: 'nominal', title: null, sort: slices },
          yOffset: { field: 'subject', type: 'nominal', sort: subjects },
          color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(subjects, colours) },
        },
        layer: [
          { mark: { type: 'rule', strokeWidth: 1.5 }, encoding: { x: { field: 'lower', type: 'quantitative', title: 'Rate (%)', scale: { domain: [0, 100] } }, x2: { field: 'upper' } } },
          { mark: { type: 'point', filled: true, size: 40 }, encoding: { x: { field: 'rate', type: 'quantitative' }, tooltip: [{ field: 'subject' }, { field: 'slice' }, { field: 'rate' }, { field: 'n' }] } },
        ],
      },
      config: baseConfig(),
    },
  };
}

/** File name of the judge figure of the i-th judged scorer (names from the data never enter a file name). */
export const judgeFigureName = (i: number): string => (i === 0 ? 'judges' : `judges-${i + 1}`);

/**
 * The judge figure, for any store with judges: each judge's mean against the panel median on the
 * samples it graded (left), and the agreement of each judge pair (right: raw agreement as colour
 * and first line, Cohen's kappa second). `name`: the figure's file name (one per judged scorer).
 */
export function judgeFigure(j: JudgesSection, name = 'judges'): FigureSpec | null {
  if (!j.available || j.judges.length === 0) return null;
  const judges = j.judges.map((x) => x.judge);
  const percent = j.kind === 'binary' || j.kind === 'bounded';
  const k = percent ? 100 : 1;
  const r4 = (x: number | null) => (x === null ? null : Math.round(x * k * 1e4) / 1e4);
  const means = j.judges
    .filter((x) => x.mean !== null)
    .flatMap((x) => [
      { judge: x.judge, who: 'judge mean', value: r4(x.mean), bias: r4(x.bias), n: x.bias_n },
      { judge: x.judge, who: 'panel median', value: r4(x.mean! - x.bias!), bias: r4(x.bias), n: x.bias_n },
    ]);
  const unit = percent ? ' (%)' : '';
  const left = {
    title: `Each judge against the panel${unit}`,
    data: { values: means },
    width: 260,
    height: { step: 28 },
    encoding: { y: { field: 'judge', type: 'nominal', title: null, sort: judges } },
    layer: [
      { mark: { type: 'rule', color: '#999', strokeWidth: 1.5 }, transform: [{ pivot: 'who', value: 'value', groupby: ['judge'] }], encoding: { x: { field: 'judge mean', type: 'quantitative' }, x2: { field: 'panel median' } } },
      {
        mark: { type: 'point', filled: true, size: 80 },
        encoding: {
          x: { field: 'value', type: 'quantitative', title: `Mean${unit}`, scale: { zero: false } },
          shape: { field: 'who', type: 'nominal', title: null, scale: { domain: ['judge mean', 'panel median'], range: ['circle', 'diamond'] } },
          color: { field: 'who', type: 'nominal', title: null, scale: { domain: ['judge mean', 'panel median'], range: ['#0072B2', '#999999'] } },
          tooltip: [{ field: 'judge' }, { field: 'who' }, { field: 'value' }, { field: 'bias', title: 'bias (judge − panel)' }, { field: 'n' }],
        },
      },
    ],
  };
  const cells: Record<string, unknown>[] = [];
  for (const p of j.pairs) {
    const label = [p.agreement === null ? 'n/a' : `${(p.agreement * 100).toFixed(1)}%`, p.kappa === null ? 'κ n/a' : `κ ${p.kappa.toFixed(2)}`];
    for (const [a, b] of [[p.a, p.b], [p.b, p.a]]) cells.push({ a, b, agreement: pct100(p.agreement), kappa: p.kappa, n: p.bothRated, label, set: p.set_key });
  }
  for (const x of judges) cells.push({ a: x, b: x, agreement: null, kappa: null, n: null, label: ['—'], set: null });
  const right = {
    title: 'Agreement per judge pair',
    data: { values: cells },
    width: { step: 90 },
    height: { step: 48 },
    encoding: {
      x: { field: 'b', type: 'nominal', title: 'Judge', sort: judges, axis: { labelAngle: -20, grid: false } },
      y: { field: 'a', type: 'nominal', title: 'Judge', sort: judges, axis: { grid: false } },
    },
    layer: [
      { mark: { type: 'rect', stroke: 'white', strokeWidth: 2 }, encoding: { color: { field: 'agreement', type: 'quantitative', title: 'Agreement (%)', scale: { scheme: 'greens', domain: [50, 100] } }, tooltip: [{ field: 'a' }, { field: 'b' }, { field: 'agreement' }, { field: 'kappa' }, { field: 'n' }] } },
      { mark: { type: 'text', fontSize: 12, lineHeight: 15 }, encoding: { text: { field: 'label' }, color: { condition: { test: 'datum.agreement > 85', value: 'white' }, value: '#111' } } },
    ],
  };
  return {
    name,
    caption: `Judges of ${j.scorer}: each judge's mean against the panel median on the samples it graded (left; the gap is its bias), and the agreement of each judge pair (right: raw agreement as colour and first line, Cohen's kappa second).`,
    spec: {
      $schema: SCHEMA,
      title: { text: `Judges: ${j.scorer}`, subtitle: 'left: judge mean (dot) vs panel median (diamond); right: raw agreement on samples both judges rated, and κ' },
      hconcat: j.pairs.length ? [left, right] : [left],
      resolve: { scale: { color: 'independent', shape: 'independent' } },
      config: baseConfig(),
    },
  };
}
