/**
 * Section 4: slices by domain, decision type and variant: the core slices computation
 * (`computeSlices`, core-slices.ts) over O1's observations keyed by those dimensions
 * ({@link O1_SLICES}), in O1's table. Per (slice value, subject, metric): the rate with, as
 * everywhere in the report, the sampling unit made explicit: a percentile cluster bootstrap over
 * the slice's scenarios where epochs repeat them (`metricRates`, the same function as `standoff
 * ci bootstrap --metric M --by DIM,subject_model`), and the exact Clopper-Pearson
 * interval (`standoff ci exact`), which treats samples as independent. A slice holds few
 * scenarios, so its cluster interval is crude, and the text says so.
 */
import { cell, fmtCount, pct, pctInterval, rateCell, table } from '../markdown.ts';
import type { Interval, RateCounts } from '../../analysis/rates.ts';
import { computeSlices, type SliceCell, type SliceSource } from '../core-slices.ts';
import { MAIN_METRICS, METRIC_LABEL, materializeObservations, type MainMetric, type ReportContext } from './context.ts';

export const SLICE_DIMENSIONS = ['domain', 'decision_type', 'variant'] as const;
export type SliceDimension = (typeof SLICE_DIMENSIONS)[number];
export const SLICE_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action', 'alignment'];

export interface SliceRow extends RateCounts {
  dimension: SliceDimension;
  value: string;
  subject: string;
  metric: MainMetric;
  /** False when the slice has observations but none was measured (e.g. alignment without judges). */
  measured: boolean;
  /** Scenarios in the slice with an observation. */
  scenarios: number;
}

export interface SlicesSection {
  rows: SliceRow[];
}

const NO_DATA = (level: number): Interval => ({ lower: null, upper: null, level, method: 'clopper-pearson', sampling: 'independent', note: 'no observations' });

/** Per context, each dimension's level names by their integer code (`r_levels`). */
const LEVELS = new WeakMap<ReportContext, string[][]>();

/**
 * O1's observations for the one slices computation (`computeSlices`, core-slices.ts): the report's
 * counted observations `obs_agg` (a row per distinct value with its count `n`), one dimension at a
 * time, keyed by integers only (dimension, level code, metric, subject, scenario), so a large
 * store's aggregation and its sort stay cheap and no string crosses into JavaScript per row;
 * `label` maps them back to names. A level is the observation's domain, decision type or variant
 * ('(none)' where unset); `r_levels` codes each dimension's levels (the slice-dimension
 * combinations `r_dims` to their level's code).
 */
export const O1_SLICES: SliceSource = {
  dimensions: async (ctx) => {
    await materializeObservations(ctx);
    const levels = SLICE_DIMENSIONS.map((d, k) => `SELECT CAST(${k} AS TINYINT) AS k, dim, coalesce(${d}, '(none)') AS level FROM r_dims`).join(' UNION ALL ');
    await ctx.conn.run(`CREATE OR REPLACE TEMP TABLE r_levels AS
      SELECT k, dim, level, CAST(dense_rank() OVER (PARTITION BY k ORDER BY level) - 1 AS INTEGER) AS code FROM (${levels})`);
    const names: string[][] = SLICE_DIMENSIONS.map(() => []);
    for (const r of await ctx.q(`SELECT DISTINCT k, code, level FROM r_levels`)) names[Number(r.k)][Number(r.code)] = String(r.level);
    LEVELS.set(ctx, names);
    return [...SLICE_DIMENSIONS];
  },
  rows: (k) =>
    `SELECT l.k AS dim, l.code AS level, CAST(0 AS TINYINT) AS suite, o.mk AS scorer, o.subj AS subject, o.sid AS cluster, o.value, false AS noanswer, o.n
     FROM obs_agg o JOIN r_levels l ON l.dim = o.dim AND l.k = ${Math.floor(k)} WHERE o.mk IN (${SLICE_METRICS.map((m) => MAIN_METRICS.indexOf(m)).join(', ')})`,
  weight: 'n',
  label: (k, ctx) => ({
    dimension: SLICE_DIMENSIONS[Number(k.dim)],
    level: LEVELS.get(ctx)![Number(k.dim)][Number(k.level)],
    suite: ctx.suite,
    scorer: MAIN_METRICS[Number(k.scorer)],
    subject: ctx.subjects[Number(k.subject)],
  }),
};

/** Section 4 from O1's observations (`O1_SLICES`). */
export async function slicesSection(ctx: ReportContext): Promise<SlicesSection> {
  return o1Slices(ctx, await computeSlices(ctx, O1_SLICES, []));
}

/**
 * O1's presentation of the computed slices: every (slice value, metric, subject) in design order,
 * with 0/0 where a subject has no observation and "not measured" where it has only NULLs.
 */
export function o1Slices(ctx: ReportContext, computed: { cells: SliceCell[] }): SlicesSection {
  const rows: SliceRow[] = [];
  for (const dimension of SLICE_DIMENSIONS) {
    const cells = computed.cells.filter((c) => c.dimension === dimension);
    const by = new Map(cells.map((c) => [`${c.level}\u0000${c.subject}\u0000${c.scorer}`, c.rate]));
    const values = [...new Set(cells.map((c) => c.level))].sort(sliceOrder(dimension));
    for (const value of values) {
      for (const metric of SLICE_METRICS) {
        for (const subject of ctx.subjects) {
          const r = by.get(`${value}\u0000${subject}\u0000${metric}`);
          if (!r || r.trials === 0) {
            const nm = r ? r.not_measured : 0;
            rows.push({ dimension, value, subject, metric, measured: nm === 0, successes: 0, trials: 0, not_measured: nm, estimate: null, interval: NO_DATA(ctx.level), exact: null, cluster: null, scenarios: 0 });
            continue;
          }
          const { successes, trials, not_measured, estimate, interval, exact, cluster } = r;
          rows.push({ dimension, value, subject, metric, measured: true, successes, trials, not_measured, estimate, interval, exact, cluster, scenarios: r.clusters });
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

export const DIM_LABEL: Record<SliceDimension, string> = { domain: 'Domain', decision_type: 'Decision type', variant: 'Surface variant' };

function sliceCell(r: SliceRow | undefined): string {
  if (r && !r.measured) return 'not measured';
  if (!r || r.trials === 0) return '— (0/0)';
  const head = Number.isInteger(r.successes) ? rateCell(r.successes, r.trials) : `${pct(r.estimate)} (${fmtCount(r.successes)}/${fmtCount(r.trials)})`;
  const i = r.interval;
  const tag = i.sampling === 'clustered' ? 'cl.' : 'ex.';
  return `${head} ${i.lower === null ? `${tag} —` : `${tag} ${pctInterval(i.lower, i.upper)}`}`;
}

export function renderSlices(s: SlicesSection, subjects: string[], level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['## 4. Slices\n'];
  const scen = s.rows.filter((r) => r.cluster !== null).map((r) => r.scenarios);
  out.push(
    `Each cell: rate (successes/trials) and its ${L}% interval. *cl.*: percentile cluster bootstrap over the slice's scenarios (epochs of a scenario resampled together)` +
      (scen.length ? `; a slice holds only ${fmtCount(Math.min(...scen))}-${fmtCount(Math.max(...scen))} scenarios, so these intervals are crude` : '') +
      `. *ex.*: exact Clopper-Pearson, shown where no scenario repeats or the cluster bootstrap has no spread (it treats samples as independent); \`results.json\` holds both for every cell. ` +
      `Policy action has no denominator on ambiguous scenarios (NOANSWER). Slices are small: read them for direction, not for ranking. In index.html each cell opens its trials: the subject's measured episodes in the slice.\n`,
  );
  for (const dim of SLICE_DIMENSIONS) {
    const rows = s.rows.filter((r) => r.dimension === dim);
    if (rows.length === 0) continue;
    out.push(`### ${DIM_LABEL[dim]}\n`);
    const values = [...new Set(rows.map((r) => r.value))];
    const body: string[][] = [];
    for (const value of values) {
      for (const subject of subjects) {
        const get = (m: MainMetric) => rows.find((r) => r.value === value && r.subject === subject && r.metric === m);
        body.push([cell(value), cell(subject), ...SLICE_METRICS.map((m) => sliceCell(get(m)))]);
      }
    }
    out.push(table([DIM_LABEL[dim], 'Subject model', ...SLICE_METRICS.map((m) => METRIC_LABEL[m])], body, ['l', 'l', 'r', 'r', 'r']));
  }
  return out.join('\n');
}
