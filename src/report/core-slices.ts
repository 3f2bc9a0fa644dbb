/**
 * The ONE slices computation of every report (issue 21, point 1): per slice dimension x level x
 * task x scorer x subject, the rate or mean with the exact interval (0/1 values) and the bootstrap
 * over the slice's items, whole items with their epochs resampled (`metricRates`, as `standoff ci
 * bootstrap --metric M --by DIM,subject_model`). A suite gives it its observations as a
 * {@link SliceSource} and shows the cells its own way: the core slices section by episode columns
 * and metadata keys ({@link GENERIC_SLICES}, `coreSlicesOf`), the Standoff O1 suite by domain,
 * decision type and variant over its three metrics (`sections/slices.ts`).
 *
 * Dimension names and metadata keys never enter SQL text: the chosen names are bound values.
 */
import { metricRates, type Rate } from '../analysis/rates.ts';
import type { Plain } from '../store/duckdb.ts';
import { prepareCore, type CellLabels, type GenericSections } from './generic.ts';
import type { ReportContext } from './sections/context.ts';

/** Most levels a dimension may have to be sliced by itself (without `--slice`). */
export const MAX_SLICE_LEVELS = 12;

/** A slice cell's labels: the dimension and its level, with the task, scorer (or metric) and subject. */
export interface SliceLabels extends CellLabels {
  dimension: string;
  level: string;
}

/** Where the one slices computation ({@link computeSlices}) reads its observations. */
export interface SliceSource {
  /** Creates the temp tables `rows` reads and returns the slice dimensions, in order (`forced`: `--slice` columns). */
  dimensions(ctx: ReportContext, forced: string[]): Promise<string[]>;
  /**
   * SQL of the observations of the `k`-th dimension (0-based, in `dimensions` order), a row per
   * sample and scorer: group keys `dim`, `level`, `suite`, `scorer`, `subject` (any type: integer
   * keys keep a large store's aggregation cheap; `label` names them), `cluster` (the item),
   * `value` (NULL: not measured) and `noanswer` (BOOLEAN: in no denominator). One aggregation a
   * dimension: a large store's sort stays that of one dimension.
   */
  rows(k: number): string;
  /** A column of `rows` holding how many samples the row stands for (rows counted in SQL beforehand); default: a row is one sample. */
  weight?: string;
  /** The labels of a row's group keys. */
  label(keys: Record<string, Plain>, ctx: ReportContext): SliceLabels;
}

/** One slice cell: its labels and its rate (counts, the interval shown, exact and cluster). */
export interface SliceCell extends SliceLabels {
  rate: Rate;
}

/** The slices of `src`: its dimensions and a cell per (dimension, level, task, scorer, subject) with observations. */
export async function computeSlices(ctx: ReportContext, src: SliceSource, forced: string[]): Promise<{ dimensions: string[]; cells: SliceCell[] }> {
  const dimensions = await src.dimensions(ctx, forced);
  if (dimensions.length === 0) return { dimensions, cells: [] };
  const cells: SliceCell[] = [];
  for (let k = 0; k < dimensions.length; k++) {
    const w = src.weight ? `, ${src.weight}` : '';
    const rates = await metricRates(ctx, `SELECT dim, level, suite, scorer, subject, cluster, value${w} FROM (${src.rows(k)}) WHERE NOT noanswer`, ['dim', 'level', 'suite', 'scorer', 'subject'], 'cluster', {
      level: ctx.level,
      seed: ctx.seed,
      resamples: ctx.resamples,
      clusterLabel: 'scenario_id',
      weight: src.weight,
    });
    for (const r of rates) cells.push({ ...src.label(r.group, ctx), rate: r });
  }
  return { dimensions, cells };
}

/**
 * The core sections' slice dimensions: episode columns domain / decision_type / variant where set,
 * metadata keys with 2-12 short levels (three items or more per level on average: not an id, not
 * free text), and every `--slice COL`, over the core's `g_obs` (`prepareCore`).
 */
export const GENERIC_SLICES: SliceSource = {
  async dimensions(ctx, forced) {
    await prepareCore(ctx);
    await ctx.conn.run(`CREATE TEMP TABLE g_dim AS
    SELECT run_id, episode_id, 'domain' AS dim, domain AS level FROM episodes WHERE domain IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'decision_type', decision_type FROM episodes WHERE decision_type IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'variant', variant FROM episodes WHERE variant IS NOT NULL
    UNION ALL SELECT run_id, episode_id, 'metadata.' || k, (metadata::JSON) ->> k FROM (SELECT run_id, episode_id, metadata, unnest(json_keys(metadata::JSON)) AS k FROM episodes WHERE json_type(metadata::JSON) = 'OBJECT')
      WHERE json_type((metadata::JSON) -> k) IN ('VARCHAR', 'BOOLEAN', 'BIGINT', 'UBIGINT', 'INTEGER')`);
    const dims = await ctx.q(`SELECT d.dim, CAST(count(DISTINCT d.level) AS BIGINT) AS levels, CAST(count(DISTINCT e.scenario_id) AS BIGINT) AS items, max(length(d.level)) AS longest
    FROM g_dim d JOIN episodes e USING (run_id, episode_id) GROUP BY d.dim ORDER BY d.dim`);
    const want = new Set(forced.map((c) => (dims.some((d) => d.dim === c) ? c : `metadata.${c}`)));
    const auto = (d: (typeof dims)[number]) => Number(d.levels) >= 2 && Number(d.levels) <= MAX_SLICE_LEVELS && Number(d.items) >= 3 * Number(d.levels) && Number(d.longest) <= 64;
    const chosen = dims.filter((d) => want.has(String(d.dim)) || auto(d)).map((d) => String(d.dim));
    const unknown = [...want].filter((d) => !dims.some((x) => x.dim === d));
    if (unknown.length) ctx.log(`--slice ${unknown.map((u) => u.replace(/^metadata\./, '')).join(', ')}: no such episode column or metadata key; not sliced`);
    if (chosen.length === 0) return [];
    // Bound values, not SQL text: the chosen names come from the data (and --slice).
    await ctx.conn.run(`CREATE TEMP TABLE g_chosen (dim VARCHAR, k INTEGER)`);
    const stmt = await ctx.conn.prepare(`INSERT INTO g_chosen VALUES ($1, $2)`);
    for (const [k, c] of chosen.entries()) {
      stmt.bindVarchar(1, c);
      stmt.bindInteger(2, k);
      await stmt.run();
    }
    return chosen;
  },
  rows: (k) => `SELECT d.dim, d.level, o.suite, o.scorer, o.subject, o.scenario_id AS cluster, o.value, o.noanswer FROM g_obs o JOIN g_dim d USING (run_id, episode_id) JOIN g_chosen c USING (dim) WHERE c.k = ${Math.floor(k)}`,
  label: (k) => ({ dimension: String(k.dim), level: String(k.level), suite: String(k.suite), scorer: String(k.scorer), subject: String(k.subject) }),
};

/** The core slices section's value: a row per cell with observations, in (dimension, level, task, scorer, subject) order. */
export function coreSlicesOf(computed: { dimensions: string[]; cells: SliceCell[] }): GenericSections['slices'] {
  return {
    dimensions: computed.dimensions,
    rows: computed.cells.map((c) => ({ dimension: c.dimension, level: c.level, suite: c.suite, scorer: c.scorer, subject: c.subject, n: c.rate.trials, estimate: c.rate.estimate, interval: c.rate.interval })),
  };
}
