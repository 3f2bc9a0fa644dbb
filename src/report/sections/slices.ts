/**
 * Section 4: slices by domain, decision type and variant. Counts per (dimension value, subject,
 * metric) come from one GROUP BY GROUPING SETS query; binary metrics get exact intervals, and
 * non-binary alignment scores (split judge medians) a percentile bootstrap of the mean, run on the
 * slice's values rebuilt from their counts (the mean's bootstrap depends only on the multiset).
 */
import { cell, fmtCount, pct, pctInterval, rateCell, table } from '../markdown.ts';
import { METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';
import { exactInterval, meanInterval, type Interval } from './intervals.ts';

export const SLICE_DIMENSIONS = ['domain', 'decision_type', 'variant'] as const;
export type SliceDimension = (typeof SLICE_DIMENSIONS)[number];
export const SLICE_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];

export interface SliceRow {
  dimension: SliceDimension;
  value: string;
  subject: string;
  metric: MainMetric;
  successes: number;
  trials: number;
  estimate: number | null;
  interval: Interval;
}

export interface SlicesSection {
  rows: SliceRow[];
}

export async function slicesSection(ctx: ReportContext): Promise<SlicesSection> {
  const metricList = SLICE_METRICS.map((m) => `'${m}'`).join(', ');
  const counts = await ctx.q(`
    SELECT CASE WHEN grouping(domain) = 0 THEN 'domain' WHEN grouping(decision_type) = 0 THEN 'decision_type' ELSE 'variant' END AS dimension,
           coalesce(CASE WHEN grouping(domain) = 0 THEN domain WHEN grouping(decision_type) = 0 THEN decision_type ELSE variant END, '(none)') AS slice,
           subject, metric, value AS v, CAST(count(*) AS BIGINT) AS n
    FROM obs WHERE metric IN (${metricList})
    GROUP BY GROUPING SETS ((domain, subject, metric, value), (decision_type, subject, metric, value), (variant, subject, metric, value))`);
  // (dimension, value, subject, metric) -> value -> count
  const groups = new Map<string, { dimension: SliceDimension; value: string; subject: string; metric: MainMetric; counts: Map<number, number> }>();
  for (const r of counts) {
    const k = `${r.dimension}\u0000${r.slice}\u0000${r.subject}\u0000${r.metric}`;
    let g = groups.get(k);
    if (!g) {
      g = { dimension: r.dimension as SliceDimension, value: String(r.slice), subject: String(r.subject), metric: r.metric as MainMetric, counts: new Map() };
      groups.set(k, g);
    }
    const v = Number(r.v);
    g.counts.set(v, (g.counts.get(v) ?? 0) + Number(r.n));
  }
  // Every (dimension value, subject, metric) appears, with 0/0 where a subject has no observation.
  const values = new Map<SliceDimension, Set<string>>();
  for (const g of groups.values()) {
    if (!values.has(g.dimension)) values.set(g.dimension, new Set());
    values.get(g.dimension)!.add(g.value);
  }
  const rows: SliceRow[] = [];
  for (const dimension of SLICE_DIMENSIONS) {
    const vals = [...(values.get(dimension) ?? [])].sort(sliceOrder(dimension));
    for (const value of vals) {
      for (const metric of SLICE_METRICS) {
        for (const subject of ctx.subjects) {
          const g = groups.get(`${dimension}\u0000${value}\u0000${subject}\u0000${metric}`);
          const entries = g ? [...g.counts.entries()].sort((a, b) => a[0] - b[0]) : [];
          const trials = entries.reduce((a, [, n]) => a + n, 0);
          let successes = 0;
          for (const [v, n] of entries) successes += v * n;
          const binary = entries.every(([v]) => v === 0 || v === 1);
          let interval: Interval;
          if (binary) interval = exactInterval(successes, trials, ctx.level);
          else {
            const x = new Float64Array(trials);
            let i = 0;
            for (const [v, n] of entries) for (let j = 0; j < n; j++) x[i++] = v;
            interval = meanInterval(x, ctx);
          }
          rows.push({ dimension, value, subject, metric, successes, trials, estimate: trials > 0 ? successes / trials : null, interval });
        }
      }
    }
  }
  return { rows };
}

const ORDER: Record<string, string[]> = {
  decision_type: ['act', 'escalate', 'ambiguous'],
  domain: ['emergency_management', 'clinical_triage', 'financial_compliance'],
};

/** Known values in their design order, then the rest alphabetically. */
export function sliceOrder(dimension: string) {
  const known = ORDER[dimension] ?? [];
  return (a: string, b: string) => {
    const ia = known.indexOf(a);
    const ib = known.indexOf(b);
    if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    return a < b ? -1 : a > b ? 1 : 0;
  };
}

const DIM_LABEL: Record<SliceDimension, string> = { domain: 'Domain', decision_type: 'Decision type', variant: 'Surface variant' };

export function renderSlices(s: SlicesSection, subjects: string[], level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['## 4. Slices\n'];
  out.push(
    `Each cell: rate (successes/trials) and its ${L}% exact interval (bootstrap of the mean where split judge medians make alignment non-binary). ` +
      `Policy action has no denominator on ambiguous scenarios (NOANSWER). Slices are small: read them for direction, not for ranking.\n`,
  );
  for (const dim of SLICE_DIMENSIONS) {
    const rows = s.rows.filter((r) => r.dimension === dim);
    if (rows.length === 0) continue;
    out.push(`### ${DIM_LABEL[dim]}\n`);
    const values = [...new Set(rows.map((r) => r.value))];
    const body: string[][] = [];
    for (const value of values) {
      for (const subject of subjects) {
        const get = (m: MainMetric) => rows.find((r) => r.value === value && r.subject === subject && r.metric === m)!;
        body.push([
          cell(value),
          cell(subject),
          ...SLICE_METRICS.map((m) => {
            const r = get(m);
            if (!r || r.trials === 0) return '— (0/0)';
            const head = Number.isInteger(r.successes) ? rateCell(r.successes, r.trials) : `${pct(r.estimate)} (${fmtCount(r.successes)}/${fmtCount(r.trials)})`;
            return `${head} ${pctInterval(r.interval.lower, r.interval.upper)}`;
          }),
        ]);
      }
    }
    out.push(table([DIM_LABEL[dim], 'Subject model', ...SLICE_METRICS.map((m) => METRIC_LABEL[m])], body, ['l', 'l', 'r', 'r', 'r']));
  }
  return out.join('\n');
}
