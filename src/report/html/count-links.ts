/**
 * Which table cells of `index.html` open which episode set. A cell is recognised by its table's
 * headers and its row's label cells (subject, scorer, task, judges), compared as the text the page
 * shows (`shown`: the name Markdown-escaped by the report, then rendered), so a link follows its
 * row whatever order the section writes rows in. Where one store has several suites, tables with
 * the same headers are told apart by their order (`CellPlace.nth`).
 *
 * Standoff report: section 2's rates, grounded-vs-lucky cells, invalid episodes, reasons, judge
 * disagreements per subject and per judge pair. Generic report: every result cell (per suite),
 * the first screen's results, the four cells of binary comparisons, judge pairs' agreement, and
 * the invalid and errored samples.
 */
import { cell } from '../markdown.ts';
import { scorerMetricName } from '../../analysis/metrics.ts';
import type { ReportResults } from '../report-results.ts';
import { resultSubjects, type GenericSections } from '../generic.ts';
import { FOUR_CELL_HEADERS, FOUR_CELL_KEYS } from '../four-cell.ts';
import { inlineHtml, type CellPlace, type MarkdownHooks } from './markdown-html.ts';
import { DIM_LABEL, SLICE_DIMENSIONS, SLICE_METRICS } from '../sections/slices.ts';
import { LINKED_METRICS, sliceKey, genericSliceKey, disagreeKey, genericAllKey, genericScorerKey, genericStatusKey, groundedKey, metricKey, reasonKey, statusKey, type GroundedCell } from './episode-sets.ts';
import { fourCellKey, judgePairKey } from './pair-sets.ts';
import { METRIC_LABEL, type MainMetric } from '../sections/context.ts';

type Link = MarkdownHooks['countLink'];
type Sets = Map<string, number>;

/** A name as the page shows it in a table cell (the report writes it with `cell`). */
export const shown = (s: string): string => inlineHtml(cell(s), true).text;

const GROUNDED_COLUMNS: Record<string, GroundedCell> = {
  'Gathered, correct': 'gathered_correct',
  'Gathered, incorrect': 'gathered_incorrect',
  'Not gathered, correct': 'not_gathered_correct',
  'Not gathered, incorrect': 'not_gathered_incorrect',
};

/** Tries each rule in turn: the first set it finds. */
const firstOf =
  (rules: Link[]): Link =>
  (headers, row, col, at) => {
    for (const r of rules) {
      const x = r(headers, row, col, at);
      if (x !== null) return x;
    }
    return null;
  };

/** The Standoff report's count links (by the tables' header text and row order). */
export function buildCountLinks(r: ReportResults, setIndex: Sets): Link {
  const counted = (key: string) => setIndex.get(key) ?? null;
  const standoff: Link = (headers, row, col) => {
    const h = headers[col];
    if (headers[0] === 'Subject model' && headers[1] === 'Gathered, correct' && GROUNDED_COLUMNS[h]) {
      const s = r.grounded.subjects[row];
      return s ? counted(groundedKey(s.subject, GROUNDED_COLUMNS[h])) : null;
    }
    if (headers[0] === 'Subject model' && headers[4] === 'Invalid episodes' && col >= 1 && col <= LINKED_METRICS.length) {
      const s = r.results.subjects[row];
      return s ? counted(metricKey(s.subject, LINKED_METRICS[col - 1])) : null;
    }
    if (headers[0] === 'Subject model' && h === 'Invalid episodes') {
      const s = r.results.subjects[row];
      const e = s && r.episodes.subjects.find((x) => x.subject === s.subject);
      return s && e && e.invalid === s.metrics.invalid.successes ? counted(statusKey(s.subject, 'invalid')) : null;
    }
    if (headers.join('|') === 'Status|Reason|Episodes' && col === 2) {
      const x = r.episodes.reasons[row];
      return x ? counted(reasonKey(x.status, x.reason)) : null;
    }
    if (headers[0] === 'Subject model' && h === 'Eligible judges disagree') {
      const s = r.judges.per_subject[row];
      return s ? counted(disagreeKey(s.subject)) : null;
    }
    return null;
  };
  const pairs: Link = (headers, _row, col, at) => {
    if (headers[0] !== 'Judge A' || headers[1] !== 'Judge B' || headers[col] !== 'Same value') return null;
    const p = r.judges.pairs.find((x) => shown(x.a) === at.cells[0] && shown(x.b) === at.cells[1]);
    return p ? counted(judgePairKey(r.judges.scorer, p.a, p.b)) : null;
  };
  return firstOf([standoff, pairs, o1FourCellLink(r, setIndex), o1SliceLink(r, setIndex)]);
}

/** Section 4's slice tables (first column the dimension, then the subject, then a column per metric): a cell opens its trials. */
function o1SliceLink(r: ReportResults, setIndex: Sets): Link {
  const dims = new Map(SLICE_DIMENSIONS.map((d) => [DIM_LABEL[d], d]));
  return (headers, _row, col, at) => {
    const dim = dims.get(headers[0]);
    if (dim === undefined || headers[1] !== 'Subject model' || col < 2) return null;
    const metric = SLICE_METRICS[col - 2];
    const x = metric && r.slices.rows.find((s) => s.dimension === dim && s.metric === metric && shown(s.value) === at.cells[0] && shown(s.subject) === at.cells[1]);
    return x ? setIndex.get(sliceKey(dim, x.value, metric, x.subject)) ?? null : null;
  };
}

/** Section 5's four cells of the binary metrics (rows named by the metric's label): each count opens its items' samples. */
function o1FourCellLink(r: ReportResults, setIndex: Sets): Link {
  return (headers, _row, col, at) => {
    const k = (FOUR_CELL_HEADERS as readonly string[]).indexOf(headers[col]);
    const [iMetric, iA, iB] = [colOf(headers, 'Metric'), colOf(headers, 'A'), colOf(headers, 'B')];
    if (k < 0 || iMetric < 0 || iA < 0 || iB < 0) return null;
    const label = (m: string) => METRIC_LABEL[m as MainMetric] ?? m;
    const c = r.pairwise.comparisons.find((x) => x.four_cell && shown(label(x.metric)) === at.cells[iMetric] && shown(x.a) === at.cells[iA] && shown(x.b) === at.cells[iB]);
    return c ? setIndex.get(fourCellKey(c.suite, c.scorer, c.a, c.b, FOUR_CELL_KEYS[k])) ?? null : null;
  };
}

/** Column of a header, or -1. */
const colOf = (headers: string[], name: string) => headers.indexOf(name);

/** The suite of a table that has a "Suite"/"Task" column, else the store's only suite (null: several, none named). */
function suiteOf(g: GenericSections, headers: string[], at: CellPlace, column: 'Suite' | 'Task'): string | null {
  const i = colOf(headers, column);
  if (i < 0) return g.suites.length === 1 ? g.suites[0] : null;
  return g.suites.find((s) => shown(s) === at.cells[i]) ?? null;
}

/** "Results per subject and scorer": one table per suite (told apart by headers, then order); a cell opens the samples its scorer measured. */
function resultTableLink(g: GenericSections, setIndex: Sets): Link {
  const withScorers = g.suites.filter((s) => g.scorers.some((x) => x.suite === s));
  const fits = (suite: string, headers: string[]) => {
    const sc = g.scorers.filter((x) => x.suite === suite);
    return headers.length === sc.length + 1 && sc.every((x, i) => headers[i + 1].startsWith(`${shown(x.metric)} (`));
  };
  return (headers, _row, col, at) => {
    if (headers[0] !== 'Subject model' || col < 1) return null;
    const suite = withScorers.filter((s) => fits(s, headers))[at.nth];
    if (suite === undefined) return null;
    const s = g.scorers.filter((x) => x.suite === suite)[col - 1];
    const subject = resultSubjects(g, suite).find((x) => shown(x) === at.cells[0]);
    return subject === undefined ? null : setIndex.get(genericScorerKey(suite, subject, s.scorer)) ?? null;
  };
}

/** The first screen's compact results: its estimate and n open the scorer's measured samples. */
function atAGlanceLink(g: GenericSections, setIndex: Sets): Link {
  return (headers, _row, col, at) => {
    const [iScorer, iSubject] = [colOf(headers, 'Scorer'), colOf(headers, 'Subject model')];
    if (iScorer < 0 || iSubject < 0 || colOf(headers, 'Estimate') < 0 || !(headers[col] === 'Estimate' || headers[col] === 'n')) return null;
    const suite = suiteOf(g, headers, at, 'Task');
    const r = g.results.find((x) => x.suite === suite && shown(scorerMetricName(x.scorer)) === at.cells[iScorer] && shown(x.subject) === at.cells[iSubject]);
    return r ? setIndex.get(genericScorerKey(r.suite, r.subject, r.scorer)) ?? null : null;
  };
}

/** The four cells of binary comparisons: each count opens its items' samples. */
function fourCellLink(g: GenericSections, setIndex: Sets): Link {
  return (headers, _row, col, at) => {
    const k = (FOUR_CELL_HEADERS as readonly string[]).indexOf(headers[col]);
    const [iScorer, iA, iB] = [colOf(headers, 'Scorer'), colOf(headers, 'A'), colOf(headers, 'B')];
    if (k < 0 || iScorer < 0 || iA < 0 || iB < 0) return null;
    const suite = suiteOf(g, headers, at, 'Suite');
    const c = g.pairwise.comparisons.find((x) => x.suite === suite && x.four_cell && shown(scorerMetricName(x.scorer)) === at.cells[iScorer] && shown(x.a) === at.cells[iA] && shown(x.b) === at.cells[iB]);
    return c ? setIndex.get(fourCellKey(c.suite, c.scorer, c.a, c.b, FOUR_CELL_KEYS[k])) ?? null : null;
  };
}

/** Judge pairs (one table per judged scorer that has pairs, in order): "Same value" opens the samples they graded differently. */
function judgePairLink(g: GenericSections, setIndex: Sets): Link {
  const judged = g.judges.filter((j) => j.pairs.length > 0);
  return (headers, _row, col, at) => {
    if (headers[0] !== 'Judge A' || headers[1] !== 'Judge B' || headers[col] !== 'Same value') return null;
    const j = judged[at.nth];
    const p = j?.pairs.find((x) => shown(x.a) === at.cells[0] && shown(x.b) === at.cells[1]);
    return j && p ? setIndex.get(judgePairKey(j.scorer, p.a, p.b)) ?? null : null;
  };
}

/** Invalid and errored samples: each count opens its samples. */
function samplesLink(g: GenericSections, setIndex: Sets): Link {
  return (headers, _row, col, at) => {
    const iSubject = colOf(headers, 'Subject model');
    if (iSubject < 0 || colOf(headers, 'Invalid') < 0 || colOf(headers, 'Errored') < 0) return null;
    const suite = suiteOf(g, headers, at, 'Suite');
    const x = g.samples.find((s) => s.suite === suite && shown(s.subject) === at.cells[iSubject]);
    if (!x) return null;
    const h = headers[col];
    const key = h === 'Samples' ? genericAllKey(x.suite, x.subject) : h === 'Invalid' ? genericStatusKey(x.suite, x.subject, 'invalid') : h === 'Errored' ? genericStatusKey(x.suite, x.subject, 'error') : null;
    return key === null ? null : setIndex.get(key) ?? null;
  };
}

/** The slices tables (one per dimension, in `g.slices.dimensions` order, told apart by their order): a row's n and value open its samples. */
function genericSliceLink(g: GenericSections, setIndex: Sets): Link {
  return (headers, _row, col, at) => {
    const [iScorer, iSubject] = [colOf(headers, 'Scorer'), colOf(headers, 'Subject model')];
    if (headers[0] !== 'Level' || iScorer < 0 || iSubject < 0 || !(headers[col] === 'n' || headers[col] === 'Value')) return null;
    const dim = g.slices.dimensions[at.nth];
    const suite = suiteOf(g, headers, at, 'Suite');
    const x = g.slices.rows.find((r) => r.dimension === dim && r.suite === suite && shown(r.level) === at.cells[0] && shown(scorerMetricName(r.scorer)) === at.cells[iScorer] && shown(r.subject) === at.cells[iSubject]);
    return x ? setIndex.get(genericSliceKey(x.dimension, x.level, x.suite, x.scorer, x.subject)) ?? null : null;
  };
}

/** Count links of a generic report (a store that is not one Standoff suite; one or several suites). */
export function buildGenericCountLinks(g: GenericSections, setIndex: Sets): Link {
  return firstOf([resultTableLink(g, setIndex), atAGlanceLink(g, setIndex), fourCellLink(g, setIndex), judgePairLink(g, setIndex), samplesLink(g, setIndex), genericSliceLink(g, setIndex)]);
}
