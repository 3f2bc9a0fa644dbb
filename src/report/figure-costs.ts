/**
 * Figures of the cost section (section 9; the paper's latency and cost panels and cost frontier):
 * per-subject latency (median and p95), mean tokens per episode (input and output), and policy
 * action accuracy against cost per 1,000 episodes with the Pareto frontier marked (against mean
 * tokens when no cost is measured, and the figure says so). Deterministic Vega-Lite specs with the
 * report's base config and subject colours; the report pipeline renders SVG and PNG.
 */
import { baseConfig, subjectScale, type FigureSpec } from './figures.ts';
import type { CostsSection } from './sections/costs.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const round = (x: number | null, digits: number) => (x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits);

/** Latency per subject: a rule from the median to the p95, a dot at the median and a tick at the p95. */
export function latencyFigure(v: CostsSection, subjects: string[], colours: Record<string, string>): FigureSpec | null {
  const values = v.subjects
    .filter((s) => s.latency_median_ms !== null)
    .map((s) => ({ subject: s.subject, median: round(s.latency_median_ms, 1), p95: round(s.latency_p95_ms, 1) }));
  if (values.length === 0) return null;
  const x = { type: 'quantitative', title: 'Latency per episode (ms)', scale: { zero: true } };
  const y = { field: 'subject', type: 'nominal', title: 'Subject model', sort: subjects };
  return {
    name: 'latency',
    caption: 'Wall-time latency per completed episode: median (dot) and 95th percentile (tick), per subject.',
    spec: {
      $schema: SCHEMA,
      title: { text: 'Latency per subject', subtitle: 'Dot: median; tick and line end: 95th percentile (linear interpolation); errored episodes left out' },
      data: { values },
      width: 420,
      height: Math.max(60, 28 * values.length),
      layer: [
        { mark: { type: 'rule', strokeWidth: 2, color: '#888' }, encoding: { y, x: { field: 'median', ...x }, x2: { field: 'p95' } } },
        { mark: { type: 'tick', thickness: 2, size: 16, color: '#222' }, encoding: { y, x: { field: 'p95', ...x } } },
        {
          mark: { type: 'point', filled: true, size: 90, opacity: 1 },
          encoding: { y, x: { field: 'median', ...x }, color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(subjects, colours) }, tooltip: [{ field: 'subject' }, { field: 'median' }, { field: 'p95' }] },
        },
      ],
      config: baseConfig(),
    },
  };
}

/** Mean tokens per episode per subject, input and output side by side. */
export function tokensFigure(v: CostsSection, subjects: string[]): FigureSpec | null {
  const values = v.subjects.flatMap((s) =>
    s.mean_input_tokens === null || s.mean_output_tokens === null
      ? []
      : [
          { subject: s.subject, kind: 'input', tokens: round(s.mean_input_tokens, 1) },
          { subject: s.subject, kind: 'output', tokens: round(s.mean_output_tokens, 1) },
        ],
  );
  if (values.length === 0) return null;
  return {
    name: 'tokens',
    caption: 'Mean input and output tokens per completed episode, per subject (as reported by the endpoint).',
    spec: {
      $schema: SCHEMA,
      title: { text: 'Tokens per episode', subtitle: 'Mean over completed episodes with token counts; input (prompt) and output (completion)' },
      data: { values },
      width: 420,
      height: Math.max(60, 36 * subjects.length),
      mark: { type: 'bar' },
      encoding: {
        y: { field: 'subject', type: 'nominal', title: 'Subject model', sort: subjects },
        yOffset: { field: 'kind', type: 'nominal', sort: ['input', 'output'] },
        x: { field: 'tokens', type: 'quantitative', title: 'Mean tokens per episode' },
        color: { field: 'kind', type: 'nominal', title: 'Tokens', sort: ['input', 'output'], scale: { domain: ['input', 'output'], range: ['#56B4E9', '#0072B2'] } },
        tooltip: [{ field: 'subject' }, { field: 'kind' }, { field: 'tokens' }],
      },
      config: baseConfig(),
    },
  };
}

/**
 * Policy action accuracy against cost per 1,000 episodes (or mean tokens per episode when no cost
 * is measured): one point per subject, the Pareto frontier as a step line through the subjects on
 * it, and a label per point. Null when there is no axis or fewer than one measured point.
 */
export function costFrontierFigure(v: CostsSection, subjects: string[], colours: Record<string, string>): FigureSpec | null {
  const axis = v.frontier_axis;
  if (axis === null) return null;
  const points = v.subjects
    .filter((s) => s.on_frontier !== null)
    .map((s) => ({ subject: s.subject, x: round(s[axis], axis === 'cost_per_1000' ? 6 : 1), accuracy: round(s.accuracy! * 100, 2), frontier: s.on_frontier ? 'on the frontier' : 'dominated' }));
  if (points.length === 0) return null;
  const missing = v.subjects.filter((s) => s.on_frontier === null).map((s) => s.subject);
  const notPlotted = missing.length ? ` Not plotted (not measured): ${missing.join(', ')}.` : '';
  const line = points.filter((p) => p.frontier === 'on the frontier').sort((a, b) => a.x! - b.x! || b.accuracy! - a.accuracy!);
  const xTitle = axis === 'cost_per_1000' ? 'Cost per 1,000 episodes (USD)' : 'Mean tokens per episode (input + output)';
  const x = { field: 'x', type: 'quantitative', title: xTitle, scale: { zero: false, nice: true, padding: 36 } };
  const y = { field: 'accuracy', type: 'quantitative', title: 'Policy action accuracy (%)', scale: { domain: [0, 100] } };
  return {
    name: 'cost-frontier',
    caption:
      axis === 'cost_per_1000'
        ? 'Policy action accuracy against cost per 1,000 episodes, per subject; the line joins the subjects on the Pareto frontier (no other subject is at most as costly and at least as accurate, and better on one).'
        : 'Policy action accuracy against mean tokens per episode, per subject (cost is not measured: no price table); the line joins the subjects on the Pareto frontier.',
    spec: {
      $schema: SCHEMA,
      title: {
        text: axis === 'cost_per_1000' ? 'Accuracy against cost' : 'Accuracy against tokens (cost not measured)',
        subtitle: (axis === 'cost_per_1000' ? 'Filled: on the Pareto frontier (line); hollow: dominated.' : 'No price table, so tokens stand in for cost. Filled: on the Pareto frontier (line); hollow: dominated.') + notPlotted,
      },
      width: 420,
      height: 260,
      layer: [
        { data: { values: line }, mark: { type: 'line', interpolate: 'step-after', color: '#444', strokeDash: [4, 3] }, encoding: { x, y, order: { field: 'x', type: 'quantitative' } } },
        ...(['on the frontier', 'dominated'] as const).map((kind) => ({
          data: { values: points.filter((p) => p.frontier === kind) },
          mark: { type: 'point', size: 110, strokeWidth: 2, opacity: 1, filled: kind === 'on the frontier' },
          encoding: {
            x,
            y,
            color: { field: 'subject', type: 'nominal', title: 'Subject model', scale: subjectScale(subjects, colours) },
            tooltip: [{ field: 'subject' }, { field: 'x', title: xTitle }, { field: 'accuracy', title: 'accuracy (%)' }, { field: 'frontier' }],
          },
        })),
        { data: { values: points }, mark: { type: 'text', dy: -14, align: 'center', fontSize: 10, color: '#222' }, encoding: { x, y, text: { field: 'subject' } } },
      ],
      config: baseConfig(),
    },
  };
}
