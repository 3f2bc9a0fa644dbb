/**
 * Every judge set of one scorer in one pass (issue 28). A subject's "eligible judges disagree" set
 * (`DISAGREE_SQL`) and a judge pair's "gave different values" set (`JUDGE_DIFFER_SQL`) each group
 * the scorer's judgments by episode and judge on their own: at 1e6, 4 subjects and 3 pairs were 7
 * passes over 3M judgments (~6 s of CPU). Here the judgments are grouped once by episode, one
 * column per judge (a pivot, judges bound as parameters):
 *
 * - `v[k]`: judge k's value on the episode, `max(value)` (self-excluded verdicts included), as the
 *   pair sets read it;
 * - `el[k]`: the same where judge k is eligible (`NOT bool_or(excluded_self)`, as the disagreement
 *   sets filter it), else NULL.
 *
 * A subject's set: its episodes (DISTINCT run, episode, scenario, epoch, as `DISAGREE_SQL` groups
 * them) whose `el` holds two distinct values; a pair's set: every episode row (repeated ids
 * repeat, as its join does) where `v[a]` and `v[b]` are both set and differ. Judgments with no
 * judge name form a column of their own (a group of `DISAGREE_SQL`'s GROUP BY). The loader checks
 * each set's count against the report's as for one query per set, and
 * `tests/report/browser-batch.test.ts` compares the members with the per-set queries.
 */
import { BOOLEAN, INTEGER, LIST, VARCHAR, listValue, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { EpisodeSetDef } from './set-types.ts';

/** Judges a pivot holds at most (two aggregates each); a scorer with more answers its sets one query each. */
export const JUDGE_BATCH_MAX_JUDGES = 32;

/**
 * Judgments of a scorer a pivot groups at most; above it the sets are one query each. The pivot
 * groups all of them per episode at once: at 1e7 (29.8M judgments) that made the browser the
 * build's peak, 1,831 MiB against 1,559 with one query per set (session 12, sampled RSS).
 */
export const JUDGE_BATCH_MAX_JUDGMENTS = 8_000_000;

/** One scan of a scorer's judgments: its judges (the pivot's columns; NULL when none) and its judgments (`n`, the pivot's input rows). */
export const JUDGE_MODELS_SQL = `SELECT list(DISTINCT judge_model ORDER BY judge_model) FILTER (WHERE judge_model IS NOT NULL) AS judges,
  CAST(count(*) AS BIGINT) AS n FROM judgments WHERE scorer = $scorer`;

/** The pivot's judges: the scorer's (from {@link JUDGE_MODELS_SQL}) and the pairs' (a pair naming a judge without rows finds nothing, as its own query). */
export function pivotJudges(defs: EpisodeSetDef[], stored: string[]): string[] {
  const all = new Set(stored);
  for (const d of defs) for (const j of d.judge?.pair ?? []) all.add(j);
  return [...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The relation `b` (set_idx, run_id, episode_id, scenario_id, epoch) of the judge sets `defs` (one
 * scorer), after `WITH p AS (...), j AS (...)`: the text has no data, every name is a parameter.
 */
export function judgeBatchSql(defs: EpisodeSetDef[], judges: string[]): { sql: string; values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> } {
  const col = judges.map((_, k) => `judge_model = $j${k}`).concat('judge_model IS NULL');
  const v = col.map((c) => `max(value) FILTER (WHERE ${c})`);
  const el = col.map((c, k) => `CASE WHEN NOT bool_or(excluded_self) FILTER (WHERE ${c}) THEN ${v[k]} END`);
  const index = new Map(judges.map((j, k) => [j, k + 1]));
  const values: Record<string, DuckDBValue> = {
    scorer: defs[0].judge!.scorer,
    set_idx: listValue(defs.map((_, i) => i)),
    dis: listValue(defs.map((d) => d.judge!.subject !== undefined)),
    run: listValue(defs.map((d) => d.judge!.subject?.run ?? null)),
    model: listValue(defs.map((d) => d.judge!.subject?.model ?? null)),
    ja: listValue(defs.map((d) => (d.judge!.pair ? index.get(d.judge!.pair[0])! : null))),
    jb: listValue(defs.map((d) => (d.judge!.pair ? index.get(d.judge!.pair[1])! : null))),
  };
  const types: Record<string, DuckDBType> = { scorer: VARCHAR, set_idx: LIST(INTEGER), dis: LIST(BOOLEAN), run: LIST(VARCHAR), model: LIST(VARCHAR), ja: LIST(INTEGER), jb: LIST(INTEGER) };
  judges.forEach((j, k) => {
    values[`j${k}`] = j;
    types[`j${k}`] = VARCHAR;
  });
  const sql = `WITH p AS (SELECT unnest($set_idx) AS set_idx, unnest($dis) AS dis, unnest($run) AS run, unnest($model) AS model, unnest($ja) AS ja, unnest($jb) AS jb),
j AS (SELECT run_id, episode_id, [${v.join(', ')}] AS v, [${el.join(', ')}] AS el FROM judgments WHERE scorer = $scorer GROUP BY run_id, episode_id),
r AS (SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch, e.subject_model, j.v, len(list_distinct(j.el)) > 1 AS differ
  FROM j JOIN episodes e ON e.run_id = j.run_id AND e.episode_id = j.episode_id WHERE len(list_distinct(j.v)) > 1),
b AS (SELECT DISTINCT p.set_idx, r.run_id, r.episode_id, r.scenario_id, r.epoch FROM r JOIN p ON p.dis AND r.run_id = p.run AND r.subject_model = p.model WHERE r.differ
  UNION ALL SELECT p.set_idx, r.run_id, r.episode_id, r.scenario_id, r.epoch FROM r JOIN p ON NOT p.dis AND r.v[p.ja] <> r.v[p.jb])`;
  return { sql, values, types };
}
