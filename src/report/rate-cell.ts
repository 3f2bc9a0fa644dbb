/**
 * One cell of a results table, for every suite (the core sections' results per subject x scorer
 * and the Standoff O1 suite's results per subject): the estimate with its counts, what was not
 * measured, and its intervals, each labelled by what it treats as the sampling unit (*cluster*:
 * whole items or scenarios resampled with their epochs, *cluster CLT* above the CLT threshold,
 * *bootstrap* where no item repeats, *exact*: Clopper-Pearson on the counts, independent samples).
 */
import { CLT_METHOD, DEGENERATE, type Interval, type RateCounts } from '../analysis/rates.ts';
import { cell, fixed, fmtCount, numInterval, pct, pctInterval, rateCell } from './markdown.ts';

export interface RateCellInput extends RateCounts {
  /** False when observations exist but none was measured: "not measured", never a rate. */
  measured: boolean;
  /** Every measured value is 0 or 1 (a count over a denominator). */
  binary: boolean;
  /** Shown in percent (rates, and means in [0, 1] such as judge medians); else in the scorer's units. */
  percent: boolean;
  /** Epochs repeat an item: the cluster interval is the one to read, the exact one is too narrow. */
  repeated: boolean;
  /** NOANSWER samples (in no denominator), where the source has them. */
  noanswer?: number;
}

export interface RateCellView {
  /** What a sampling unit is called (scenario, item) and what a row counts (episodes, samples). */
  unit: string;
  rows: string;
  /** The cell when there is no observation at all. */
  empty: string;
  /** A head in place of the estimate (e.g. "3 of 90" for a count of invalid episodes). */
  head?: string;
}

/** How an interval is labelled in a cell (its sampling, then its bounds or why it has none). */
export function intervalLabel(i: Interval, percent: boolean, repeated: boolean, unit: string): string {
  const name = i.sampling !== 'clustered' ? 'exact' : !repeated ? 'bootstrap' : i.method.endsWith(CLT_METHOD) ? 'cluster CLT' : 'cluster';
  if (i.lower === null) return `${name} — (${i.note === undefined ? 'not computable' : i.note === DEGENERATE ? `no spread between ${unit}s` : cell(i.note)})`;
  return `${name} ${percent ? pctInterval(i.lower, i.upper) : numInterval(i.lower, i.upper)}`;
}

/** The whole cell: estimate and counts, not measured / NOANSWER, then the intervals in small type. */
export function rateCellFull(x: RateCellInput, v: RateCellView): string {
  if (!x.measured || (x.trials === 0 && x.not_measured > 0)) return `not measured (${fmtCount(x.not_measured)} ${v.rows})`;
  if (x.trials === 0) return v.empty;
  const head = v.head ?? (x.binary ? rateCell(x.successes, x.trials) : x.percent ? `${pct(x.estimate)} (${fmtCount(x.successes)}/${fmtCount(x.trials)})` : `${fixed(x.estimate, 3)} (n = ${fmtCount(x.trials)})`);
  const extra = [x.not_measured ? `${fmtCount(x.not_measured)} not measured` : '', x.noanswer ? `${fmtCount(x.noanswer)} NOANSWER` : ''].filter(Boolean);
  const lines: string[] = [];
  if (x.cluster) lines.push(intervalLabel(x.cluster, x.percent, x.repeated, v.unit));
  if (x.exact) lines.push(`${intervalLabel(x.exact, x.percent, x.repeated, v.unit)}${x.repeated && x.cluster ? ' (independent)' : ''}`);
  return `${head}${extra.length ? `<br>${extra.join(', ')}` : ''}${lines.length ? `<br><sub>${lines.join('<br>')}</sub>` : ''}`;
}
