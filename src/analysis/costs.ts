/**
 * `standoff costs`: per subject, tokens, latency (median and p95) and cost per 1,000 episodes from
 * a per-model price table (`--prices FILE`; without one, cost is "not measured", null, never 0).
 * Latency quantiles are DuckDB's `quantile_cont` (linear interpolation: R's type 7, numpy's
 * default). Errored episodes are left out (their tokens and time are not an episode's cost).
 */
import { readFileSync } from 'node:fs';
import { dataError, usageError } from '../errors.ts';
import { query } from '../store/duckdb.ts';
import { withStore, type StoreSource } from './ci.ts';
import { clopperPearson } from '../stats/clopper-pearson.ts';

/** USD per million tokens, by model. */
export type PriceTable = Record<string, { input_per_mtok: number; output_per_mtok: number }>;

export interface CostRow {
  subject_model: string;
  episodes: number;
  /** Episodes with token counts (the rest: not measured). */
  with_tokens: number;
  mean_input_tokens: number | null;
  mean_output_tokens: number | null;
  latency_median_ms: number | null;
  latency_p95_ms: number | null;
  /** USD per 1,000 episodes; null without a price for the model (not measured). */
  cost_per_1000: number | null;
}

/** Reads and checks a price table: `{ "<model>": { "input_per_mtok": n, "output_per_mtok": n } }`. */
export function loadPriceTable(file: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw usageError('costs.badPrices', `${file}: not readable JSON (${(e as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw dataError('costs.badPrices', `${file}: expected an object of model -> {input_per_mtok, output_per_mtok}`);
  for (const [model, p] of Object.entries(raw as Record<string, unknown>)) {
    const ok = p !== null && typeof p === 'object' && ['input_per_mtok', 'output_per_mtok'].every((k) => Number.isFinite((p as Record<string, unknown>)[k]) && ((p as Record<string, number>)[k]) >= 0);
    if (!ok) throw dataError('costs.badPrices', `${file}: model ${JSON.stringify(model)}: input_per_mtok and output_per_mtok must be non-negative numbers`);
  }
  return raw as PriceTable;
}

/** Per-subject token and latency aggregates over completed episodes (one query, for the CLI and the report). */
export const COSTS_SQL = `SELECT subject_model, CAST(count(*) AS BIGINT) AS episodes,
       CAST(count(*) FILTER (WHERE input_tokens IS NOT NULL AND output_tokens IS NOT NULL) AS BIGINT) AS with_tokens,
       avg(input_tokens) AS mi, avg(output_tokens) AS mo,
       quantile_cont(latency_ms, 0.5) AS med, quantile_cont(latency_ms, 0.95) AS p95
FROM episodes WHERE status <> 'error' GROUP BY subject_model ORDER BY subject_model`;

/** `COSTS_SQL` rows -> cost rows, priced from the table (null: not measured). */
export function buildCostRows(rows: Record<string, unknown>[], prices: PriceTable | null): CostRow[] {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => {
    const model = String(r.subject_model);
    const mi = n(r.mi);
    const mo = n(r.mo);
    const p = prices?.[model];
    return {
      subject_model: model,
      episodes: Number(r.episodes),
      with_tokens: Number(r.with_tokens),
      mean_input_tokens: mi,
      mean_output_tokens: mo,
      latency_median_ms: n(r.med),
      latency_p95_ms: n(r.p95),
      cost_per_1000: p && mi !== null && mo !== null ? (1000 * (mi * p.input_per_mtok + mo * p.output_per_mtok)) / 1e6 : null,
    };
  });
}

export async function costsFromStore(src: StoreSource, prices: PriceTable | null): Promise<{ prices: boolean; subjects: CostRow[] }> {
  return withStore(src, async (conn) => ({ prices: prices !== null, subjects: buildCostRows((await query(conn, COSTS_SQL)).rows, prices) }));
}

export interface RerunRow {
  subject_model: string;
  /** Episodes paired on (subject, scenario, epoch) that are completed in both runs. */
  paired: number;
  /** Pairs whose terminal decision (or invalidity) is the same. */
  matched: number;
  agreement: number | null;
  lower: number | null;
  upper: number | null;
}

/**
 * Rerun agreement (the paper's "a rerun of JEV's decisions ... matched 96.3% of 2,783 states"):
 * two runs of the same subjects on the same states, paired on (subject, scenario, epoch); a pair
 * matches when both made the same terminal decision (two invalid episodes match; errored ones are
 * left out). Exact Clopper-Pearson interval, pairs treated as independent.
 */
export async function rerunAgreement(src: StoreSource & { a: string; b: string }, level = 0.95): Promise<{ a: string; b: string; level: number; subjects: RerunRow[] }> {
  const rows = await withStore({ traces: src.traces, runs: [src.a, src.b] }, async (conn) =>
    (
      await query(
        conn,
        `SELECT x.subject_model, CAST(count(*) AS BIGINT) AS paired,
                CAST(count(*) FILTER (WHERE x.decision_tool IS NOT DISTINCT FROM y.decision_tool) AS BIGINT) AS matched
         FROM episodes x JOIN episodes y ON x.subject_model = y.subject_model AND x.scenario_id = y.scenario_id AND x.epoch = y.epoch
         WHERE x.run_id = $a AND y.run_id = $b AND x.status <> 'error' AND y.status <> 'error'
         GROUP BY x.subject_model ORDER BY x.subject_model`,
        { a: src.a, b: src.b },
      )
    ).rows,
  );
  if (rows.length === 0) throw dataError('rerun.noPairs', `runs "${src.a}" and "${src.b}" share no completed (subject, scenario, epoch) episode`);
  return {
    a: src.a,
    b: src.b,
    level,
    subjects: rows.map((r) => {
      const n = Number(r.paired);
      const k = Number(r.matched);
      const ci = clopperPearson(k, n, { level });
      return { subject_model: String(r.subject_model), paired: n, matched: k, agreement: ci.estimate, lower: ci.lower, upper: ci.upper };
    }),
  };
}
