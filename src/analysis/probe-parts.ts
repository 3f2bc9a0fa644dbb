/**
 * Scenario-range partitions of the paired-probe queries (issue 28: at 1e7 episodes one pass over
 * the probe answers, grouped per state, ran DuckDB out of its 1 GB).
 *
 *   loadProbeParts(q, { answersPerPart? }) -> ProbePart[]      (one part below PROBE_ANSWERS_PER_PART answers)
 *   partFilterSql(alias, part) + partParams(part)               (the predicate keeping one part's rows)
 *
 * A part is a contiguous range of scenario ids in DuckDB's sort order (`lo <= scenario_id < hi`),
 * so each GROUP BY holds a bounded share of the states, and a query sorted by (group, scenario_id,
 * ...) returns, part after part, each group's rows in the order one pass over all parts returns
 * them: every fold over those rows (floating-point sums included) is the same for any number of
 * parts. A state (and every answer, decision and episode of its scenario) is in exactly one part.
 * The boundaries are scenario ids from the store: always bound as parameters.
 */
import type { Plain, SqlParams } from '../store/duckdb.ts';

/**
 * Probe answers per scenario-range part: at 1e6 episodes (4.5M answers) one part; at 1e7, eight.
 * A part's scan skips the Parquet row groups outside its range by their scenario_id min/max (the
 * bounds are bound parameters, which DuckDB pushes into the scan:
 * tests/analysis/probe-parts-pruning.test.ts), so in a run's order (subject, scenario, epoch, as
 * `standoff run`, `standoff merge` and the bench write) it decodes about its own share of the
 * answers and decisions. In files that interleave the scenarios (session 11's bench store; a CSV
 * in another order) every part decodes every row group, a fixed cost per part. Measured at 1e7,
 * `standoff probes` (load 4-5; output identical for every count): on the run-ordered store 4 parts
 * 76.5 s CPU, 1,526 MB; 8 parts 65.8-66.9 s, 1,519-1,620 MB; 10 parts 61.9-62.3 s, 1,420-1,630
 * MB; 16 parts 65.6-66.4 s, 1,416-1,480 MB. On the interleaved store 8 parts 82.7 s, 10 parts
 * 94.9 s. Eight keeps both layouts near their best. Session 11, interleaved: one pass
 * aggregating all the answers first costs more (41.8 s CPU, peak RSS 1.36 GB, against 20.6 s and
 * 0.83 GB for the parts' aggregates straight from the Parquet).
 */
export const PROBE_ANSWERS_PER_PART = 6_000_000;

/** One range of scenario ids: `lo` (inclusive) and `hi` (exclusive), null where unbounded. */
export interface ProbePart {
  lo: string | null;
  hi: string | null;
}

/** The whole store in one part. */
export const ALL_PARTS: ProbePart[] = [{ lo: null, hi: null }];

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

/** How many parts keep each within `perPart` answers. */
export const partCount = (answers: number, perPart = PROBE_ANSWERS_PER_PART): number => Math.max(1, Math.ceil(answers / perPart));

/**
 * Parts of about equal numbers of scenarios (as many as keep each within `answersPerPart` probe
 * answers on average); boundaries are every step-th distinct scenario id of the probe decisions.
 */
export async function loadProbeParts(q: Q, o: { answersPerPart?: number } = {}): Promise<ProbePart[]> {
  const [{ n }] = await q(`SELECT CAST(count(*) AS BIGINT) AS n FROM probe_answers`);
  const k = partCount(Number(n), o.answersPerPart);
  if (k === 1) return ALL_PARTS;
  const [{ s }] = await q(`SELECT CAST(count(DISTINCT scenario_id) AS BIGINT) AS s FROM probe_decisions`);
  const step = Math.max(1, Math.ceil(Number(s) / k));
  const bounds = (
    await q(
      `SELECT scenario_id FROM (SELECT scenario_id, row_number() OVER (ORDER BY scenario_id) - 1 AS r FROM (SELECT DISTINCT scenario_id FROM probe_decisions WHERE scenario_id IS NOT NULL))
       WHERE r > 0 AND r % $step = 0 ORDER BY scenario_id`,
      { step },
    )
  ).map((r) => String(r.scenario_id));
  if (bounds.length === 0) return ALL_PARTS;
  return [null, ...bounds].map((lo, i) => ({ lo, hi: i < bounds.length ? bounds[i] : null }));
}

/** ` AND lo <= alias.scenario_id AND alias.scenario_id < hi` (parameters `$part_lo`, `$part_hi`); '' for an unbounded part. */
export function partFilterSql(alias: string, part: ProbePart): string {
  const col = alias ? `${alias}.scenario_id` : 'scenario_id';
  return `${part.lo === null ? '' : ` AND ${col} >= $part_lo`}${part.hi === null ? '' : ` AND ${col} < $part_hi`}`;
}

/** The parameters `partFilterSql` names. */
export function partParams(part: ProbePart): SqlParams {
  return { ...(part.lo === null ? {} : { part_lo: part.lo }), ...(part.hi === null ? {} : { part_hi: part.hi }) };
}

/**
 * DuckDB's ascending ORDER BY on scalar group values (NULLS LAST; strings by their UTF-8 bytes,
 * numbers by value, false before true): to put groups met part by part back in one pass's order.
 */
export function compareGroupValues(a: readonly Plain[], b: readonly Plain[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = comparePlain(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

function comparePlain(x: Plain, y: Plain): number {
  if (x === y) return 0;
  if (x === null) return 1;
  if (y === null) return -1;
  if (typeof x === 'string' && typeof y === 'string') return Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8'));
  if (typeof x === 'number' && typeof y === 'number') return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === 'boolean' && typeof y === 'boolean') return x ? 1 : -1;
  const sx = JSON.stringify(x);
  const sy = JSON.stringify(y);
  return sx < sy ? -1 : sx > sy ? 1 : 0;
}
