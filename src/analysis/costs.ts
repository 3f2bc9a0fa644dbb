/**
 * `standoff costs` and the report's "Cost and latency" section (one query, one builder): per
 * subject, tokens, latency (median and p95), cost per 1,000 episodes from a per-model price table
 * (`--prices FILE`; without one, cost is "not measured", null, never 0), policy action accuracy
 * (the `policy_action` metric: NOANSWER out of the denominator, invalid episodes wrong), and the
 * cost frontier (`pareto-frontier.ts`): accuracy against cost per 1,000 episodes, or against mean
 * tokens per episode when no cost is measured (`frontier_axis` says which).
 * Latency quantiles are DuckDB's `quantile_cont` (linear interpolation: R's type 7, numpy's
 * default). Errored episodes are left out (their tokens and time are not an episode's cost).
 */
import { query } from '../store/duckdb.ts';
import { metricSql } from '../store/metrics.ts';
import { withStore, type StoreSource } from './ci.ts';
import { paretoFrontier } from './pareto-frontier.ts';
import { priceTableInfo, type LoadedPrices, type PriceTable, type PriceTableInfo } from './price-table.ts';

export { loadPrices, loadPriceTable, parsePriceTable, priceTableInfo, type LoadedPrices, type PriceTable, type PriceTableInfo } from './price-table.ts';
export { rerunAgreement, type RerunRow } from './rerun.ts';

export type FrontierAxis = 'cost_per_1000' | 'mean_tokens';

export interface CostRow {
  /** The subject as the report labels it (the model, or `model @ run`); `standoff costs`: the model. */
  subject: string;
  subject_model: string;
  episodes: number;
  /** Episodes with token counts (the rest: not measured). */
  with_tokens: number;
  mean_input_tokens: number | null;
  mean_output_tokens: number | null;
  /** Mean input + output tokens per episode. */
  mean_tokens: number | null;
  latency_median_ms: number | null;
  latency_p95_ms: number | null;
  /** USD per 1,000 episodes; null when not measured (`cost_note` says why). */
  cost_per_1000: number | null;
  cost_note: 'no price table' | 'no price for this model' | 'no token counts' | null;
  /** Policy action accuracy (metric `policy_action`), null when no episode has a target. */
  accuracy: number | null;
  accuracy_successes: number;
  accuracy_trials: number;
  /** On the cost frontier (`frontier_axis`); null when its cost/tokens or accuracy is not measured. */
  on_frontier: boolean | null;
  dominated_by: string[];
}

export interface CostReport {
  /** True when a price table was given. */
  prices: boolean;
  price_table: PriceTableInfo | null;
  /** What the frontier is drawn against: cost when any subject's cost is measured, else tokens; null when neither is. */
  frontier_axis: FrontierAxis | null;
  subjects: CostRow[];
}

/**
 * Per-subject token, latency and accuracy aggregates over completed episodes. `label` is the SQL of
 * the subject label and `join` what it needs: the model for `standoff costs`, the report's
 * `r_subject` labels (`model @ run` when a model is in several runs) in the report. `accuracy`: SQL
 * of the policy-action counts per (subject, subject_model) as `k` (sum) and `n` (measured), when
 * the caller has them already (the report's counted observations); default: from the store.
 */
export function costsSql(label = 'e.subject_model', join = '', accuracy?: string): string {
  return `WITH ep AS (SELECT ${label} AS subject, e.subject_model, e.input_tokens, e.output_tokens, e.latency_ms FROM episodes e ${join} WHERE e.status <> 'error'),
  acc AS (${accuracy ?? `SELECT ${label} AS subject, e.subject_model, CAST(sum(e.value) AS BIGINT) AS k, CAST(count(e.value) AS BIGINT) AS n FROM ${metricSql('policy_action')} e ${join} GROUP BY ALL`})
SELECT ep.subject, ep.subject_model, CAST(count(*) AS BIGINT) AS episodes,
       CAST(count(*) FILTER (WHERE ep.input_tokens IS NOT NULL AND ep.output_tokens IS NOT NULL) AS BIGINT) AS with_tokens,
       avg(ep.input_tokens) AS mi, avg(ep.output_tokens) AS mo,
       quantile_cont(ep.latency_ms, 0.5) AS med, quantile_cont(ep.latency_ms, 0.95) AS p95,
       any_value(acc.k) AS k, any_value(acc.n) AS n
FROM ep LEFT JOIN acc USING (subject, subject_model) GROUP BY ep.subject, ep.subject_model ORDER BY ep.subject, ep.subject_model`;
}

/** The `standoff costs` query (subjects are models). */
export const COSTS_SQL = costsSql();

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function costOf(mi: number | null, mo: number | null, prices: PriceTable | null, model: string): Pick<CostRow, 'cost_per_1000' | 'cost_note'> {
  if (!prices) return { cost_per_1000: null, cost_note: 'no price table' };
  const p = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (!p) return { cost_per_1000: null, cost_note: 'no price for this model' };
  if (mi === null || mo === null) return { cost_per_1000: null, cost_note: 'no token counts' };
  return { cost_per_1000: (1000 * (mi * p.input_per_mtok + mo * p.output_per_mtok)) / 1e6, cost_note: null };
}

/** The frontier's x axis: cost when any subject's cost is measured, else tokens, else none. */
export function frontierAxis(rows: readonly Pick<CostRow, 'cost_per_1000' | 'mean_tokens'>[]): FrontierAxis | null {
  if (rows.some((r) => r.cost_per_1000 !== null)) return 'cost_per_1000';
  if (rows.some((r) => r.mean_tokens !== null)) return 'mean_tokens';
  return null;
}

/** `costsSql` rows -> cost rows, priced from the table (null: not measured), frontier marked. */
export function buildCostRows(rows: Record<string, unknown>[], prices: PriceTable | null): CostRow[] {
  const out: CostRow[] = rows.map((r) => {
    const model = String(r.subject_model);
    const mi = num(r.mi);
    const mo = num(r.mo);
    const k = num(r.k) ?? 0;
    const n = num(r.n) ?? 0;
    return {
      subject: String(r.subject ?? model),
      subject_model: model,
      episodes: Number(r.episodes),
      with_tokens: Number(r.with_tokens),
      mean_input_tokens: mi,
      mean_output_tokens: mo,
      mean_tokens: mi !== null && mo !== null ? mi + mo : null,
      latency_median_ms: num(r.med),
      latency_p95_ms: num(r.p95),
      ...costOf(mi, mo, prices, model),
      accuracy: n > 0 ? k / n : null,
      accuracy_successes: k,
      accuracy_trials: n,
      on_frontier: null,
      dominated_by: [],
    };
  });
  const axis = frontierAxis(out);
  if (axis === null) return out;
  const marks = paretoFrontier(out.map((r) => ({ id: r.subject, cost: r[axis], accuracy: r.accuracy })));
  return out.map((r, i) => ({ ...r, on_frontier: marks[i].on_frontier, dominated_by: marks[i].dominated_by }));
}

/** Everything `standoff costs` prints, from rows of {@link costsSql}. */
export function buildCostReport(rows: Record<string, unknown>[], prices: LoadedPrices | null): CostReport {
  const subjects = buildCostRows(rows, prices?.table ?? null);
  return { prices: prices !== null, price_table: priceTableInfo(prices), frontier_axis: frontierAxis(subjects), subjects };
}

export async function costsFromStore(src: StoreSource, prices: LoadedPrices | null): Promise<CostReport> {
  return withStore(src, async (conn) => buildCostReport((await query(conn, COSTS_SQL)).rows, prices));
}
