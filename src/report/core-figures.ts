/**
 * Figures of the core sections, for every store (`suites/core.ts`): a forest plot per scorer
 * (each subject's estimate with its interval), a forest plot of the paired differences (A − B with
 * intervals, the Holm-significant ones filled), a subject x task heatmap where the store holds
 * several tasks, and a judge figure per judged scorer (`judgeFigure`, figures.ts). Data inlined and sorted, so the same results give the same bytes; the style is
 * the report's (`baseConfig`, figures.ts). One panel per task x scorer, each on its own scale: a
 * binary scorer in percent, others in their own units.
 */
import { baseConfig, judgeFigure, judgeFigureName, wrapColumns, type FigureSpec } from './figures.ts';
import type { GenericSections, ScorerInfo } from './generic.ts';
import { genericPairwiseView } from './generic-render.ts';
import type { Comparison, PairwiseSection, PairwiseView } from './sections/pairwise.ts';
import { byText } from './markdown.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const round = (x: number | null, scale: number) => (x === null ? null : Math.round(x * scale * 1e4) / 1e4);
const unitOf = (k: ScorerInfo['kind']) => (k === 'binary' ? 100 : 1);
const panelOf = (g: GenericSections, s: { suite: string; scorer: string; kind: ScorerInfo['kind'] }) =>
  `${g.suites.length > 1 ? `${s.suite} · ` : ''}${s.scorer}${s.kind === 'binary' ? ' (%)' : ''}`;
const header = { labelAngle: 0, labelAlign: 'left', labelAnchor: 'start', labelOrient: 'top', labelFontSize: 12, labelFontWeight: 'bold', labelLimit: 420 };

/** Subjects' estimates with their intervals (cluster bootstrap where items repeat, else exact), one panel per scorer. */
export function scorerForest(g: GenericSections, level: number): FigureSpec | null {
  const values = g.results
    .filter((r) => r.estimate !== null)
    .map((r) => {
      const i = r.bootstrap?.lower != null ? r.bootstrap : r.exact;
      const k = unitOf(r.kind);
      return { panel: panelOf(g, r), subject: r.subject, estimate: round(r.estimate, k), lower: round(i?.lower ?? null, k), upper: round(i?.upper ?? null, k), n: r.n };
    })
    .sort((a, b) => byText(a.panel, b.panel) || byText(a.subject, b.subject));
  if (values.length === 0) return null;
  const L = Math.round(level * 100);
  const panels = [...new Set(values.map((v) => v.panel))];
  return {
    name: 'scorer-forest',
    caption: `Each subject's estimate per scorer with its ${L}% interval (cluster bootstrap over items where epochs repeat them, else the bootstrap or exact interval); one panel per scorer, on its own scale.`,
    spec: {
      $schema: SCHEMA,
      title: { text: 'Results per subject and scorer', subtitle: `dot: estimate; line: ${L}% interval; binary scorers in percent` },
      data: { values },
      facet: { field: 'panel', type: 'nominal', title: null, sort: panels, header },
      columns: wrapColumns(480, panels.length),
      resolve: { scale: { x: 'independent', y: 'independent' } },
      spec: {
        width: 360,
        height: { step: 22 },
        layer: [
          { mark: { type: 'rule', strokeWidth: 2, color: '#0072B2' }, encoding: { y: { field: 'subject', type: 'nominal', title: null }, x: { field: 'lower', type: 'quantitative', title: null, scale: { zero: false } }, x2: { field: 'upper' } } },
          {
            mark: { type: 'point', filled: true, size: 60, color: '#0b3a5c' },
            encoding: { y: { field: 'subject', type: 'nominal' }, x: { field: 'estimate', type: 'quantitative' }, tooltip: [{ field: 'subject' }, { field: 'estimate' }, { field: 'lower' }, { field: 'upper' }, { field: 'n' }] },
          },
        ],
      },
      config: baseConfig(),
    },
  };
}

/**
 * Paired differences A − B with their intervals, one panel per family (task x scorer, or the O1
 * suite's metric): the ONE forest plot of pairwise comparisons, for every suite. Filled: the
 * adjusted p (`--adjust`, within the family) below alpha. `name` is the figure's file name.
 */
export function pairedForest(p: PairwiseSection, level: number, view: Pick<PairwiseView, 'percent' | 'suiteColumn' | 'scorerColumn' | 'unit'>, name = 'paired-differences'): FigureSpec | null {
  const alpha = p.alpha;
  const method = p.adjust === 'bh' ? 'BH' : p.adjust === 'none' ? 'unadjusted' : 'Holm';
  const sig = `${method} p < ${alpha}`;
  const notSig = p.adjust === 'none' ? `p ≥ ${alpha}` : `not significant after ${method}`;
  const shown = p.comparisons.filter((c) => c.difference !== null);
  const panelOfC = (c: Comparison) => `${view.suiteColumn ? `${c.suite} · ` : ''}${view.scorerColumn.label(c)}${view.percent(c) ? ' (pp)' : ''}`;
  // Panels in the order of the table (families in section order).
  const panels = [...new Set(shown.map(panelOfC))];
  const values = shown
    .map((c) => {
      const k = view.percent(c) ? 100 : 1;
      const padj = c.p_adjusted ?? (p.adjust === 'none' ? c.p_value : null);
      return { panel: panelOfC(c), pair: `${c.a} − ${c.b}`, difference: round(c.difference, k), lower: round(c.lower, k), upper: round(c.upper, k), p_adjusted: padj, pairs: c.pairs, significant: padj !== null && padj < alpha ? sig : notSig };
    })
    .sort((a, b) => panels.indexOf(a.panel) - panels.indexOf(b.panel) || byText(a.pair, b.pair));
  if (values.length === 0) return null;
  const L = Math.round(level * 100);
  return {
    name,
    caption: `Paired differences A − B with ${L}% paired bootstrap intervals (whole ${view.unit}s resampled where epochs repeat them); a filled dot: ${sig} (adjusted within each family); dashed line at 0: no difference.`,
    spec: {
      $schema: SCHEMA,
      title: { text: 'Pairwise comparisons', subtitle: `A − B on samples paired by ${view.unit} × epoch; line: ${L}% interval; filled: ${sig}; pp: percentage points` },
      data: { values },
      facet: { field: 'panel', type: 'nominal', title: null, sort: panels, header },
      columns: wrapColumns(520, panels.length),
      resolve: { scale: { x: 'independent', y: 'independent' } },
      spec: {
        width: 380,
        height: { step: 22 },
        layer: [
          { mark: { type: 'rule', strokeDash: [4, 3], strokeWidth: 1.5, color: '#444' }, encoding: { x: { datum: 0, type: 'quantitative' } } },
          { mark: { type: 'rule', strokeWidth: 2, color: '#0072B2' }, encoding: { y: { field: 'pair', type: 'nominal', title: null }, x: { field: 'lower', type: 'quantitative', title: 'A − B', axis: { labelExpr: "datum.value === 0 ? '0 = no difference' : datum.label" } }, x2: { field: 'upper' } } },
          {
            mark: { type: 'point', size: 70, strokeWidth: 2, color: '#0b3a5c' },
            encoding: {
              y: { field: 'pair', type: 'nominal' },
              x: { field: 'difference', type: 'quantitative' },
              fill: { field: 'significant', type: 'nominal', title: null, scale: { domain: [sig, notSig], range: ['#0b3a5c', 'white'] } },
              tooltip: [{ field: 'pair' }, { field: 'difference' }, { field: 'lower' }, { field: 'upper' }, { field: 'p_adjusted' }, { field: 'pairs' }],
            },
          },
        ],
      },
      config: baseConfig(),
    },
  };
}

/** Subject x task heatmap of each task's scorers (where a store holds several tasks). */
export function taskHeatmap(g: GenericSections): FigureSpec | null {
  if (g.suites.length < 2) return null;
  const values = g.results
    .filter((r) => r.estimate !== null && (r.kind === 'binary' || r.kind === 'bounded'))
    .map((r) => ({ task: `${r.suite} · ${r.scorer}`, subject: r.subject, value: round(r.estimate, 100), label: `${(r.estimate! * 100).toFixed(1)}%`, n: r.n }))
    .sort((a, b) => byText(a.task, b.task) || byText(a.subject, b.subject));
  if (values.length === 0) return null;
  return {
    name: 'task-heatmap',
    caption: 'Each subject on each task and scorer in [0, 1] (percent); an empty cell: the subject was not run on that task.',
    spec: {
      $schema: SCHEMA,
      title: { text: 'Subjects x tasks', subtitle: 'mean score in percent (binary and [0, 1] scorers); empty: not run' },
      data: { values },
      width: { step: 64 },
      height: { step: 28 },
      encoding: {
        x: { field: 'task', type: 'nominal', title: null, axis: { labelAngle: -30, labelLimit: 320, grid: false } },
        y: { field: 'subject', type: 'nominal', title: null, axis: { grid: false } },
      },
      layer: [
        { mark: 'rect', encoding: { color: { field: 'value', type: 'quantitative', title: '%', scale: { domain: [0, 100], scheme: 'blues' } }, tooltip: [{ field: 'task' }, { field: 'subject' }, { field: 'label' }, { field: 'n' }] } },
        { mark: { type: 'text', fontSize: 11 }, encoding: { text: { field: 'label' }, color: { condition: { test: 'datum.value > 60', value: 'white' }, value: 'black' } } },
      ],
      config: baseConfig(),
    },
  };
}
