/**
 * Figure for the error concentration (section 5.3): the permutation null's distribution of the
 * share of errors on shared states (bars: permutations per value; the share takes only the values
 * m / errors, so the data are the counts per value, not every permutation) against the observed
 * share (a red rule), with the null band shaded.
 */
import { baseConfig, type FigureSpec } from './figures.ts';
import type { ConcentrationReport } from '../analysis/probe-concentration.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const pct100 = (x: number | null) => (x === null ? null : Math.round(x * 1e5) / 1e3);

export function concentrationFigure(c: ConcentrationReport | null | undefined): FigureSpec | null {
  if (!c || c.errors === 0 || c.subjects < 2) return null;
  const values = c.null_distribution.map((d) => ({ share: pct100(d.share), permutations: d.permutations }));
  const L = Math.round(c.null.level * 100);
  return {
    name: 'concentration',
    caption: `Share of facts-right, action-wrong errors on states at least ${c.minSubjects} of ${c.subjects} subjects fail: the permutation null (bars, ${c.null.permutations.toLocaleString('en-US')} permutations; shaded: ${L}% band) against the observed share (red line).`,
    spec: {
      $schema: SCHEMA,
      title: { text: 'Do errors after correct reading fall on the same states?', subtitle: `Null: each subject's errors scattered over its own facts-right states; red: observed (${pct100(c.observed)}%)` },
      width: 420,
      height: 220,
      layer: [
        { data: { values: [{ lower: pct100(c.null.lower), upper: pct100(c.null.upper) }] }, mark: { type: 'rect', color: '#ddd', opacity: 0.6 }, encoding: { x: { field: 'lower', type: 'quantitative' }, x2: { field: 'upper' } } },
        {
          data: { values },
          mark: { type: 'bar', color: '#4c78a8', width: 6 },
          encoding: {
            x: { field: 'share', type: 'quantitative', title: 'Share of errors on shared states (%)', scale: { domain: [0, 100], nice: false } },
            y: { field: 'permutations', type: 'quantitative', title: 'Permutations' },
            tooltip: [{ field: 'share' }, { field: 'permutations' }],
          },
        },
        { data: { values: [{ observed: pct100(c.observed) }] }, mark: { type: 'rule', color: '#d62728', strokeWidth: 2.5 }, encoding: { x: { field: 'observed', type: 'quantitative' } } },
      ],
      config: baseConfig(),
    },
  };
}
