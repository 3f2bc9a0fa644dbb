/**
 * The packed judge pivot (`loadJudgePatterns` on a run whose episode ids are unique): judgments
 * grouped and joined on a 128-bit hash of the episode id, each sample's verdicts packed in two
 * integers, decoded in SQL. Held to the string-keyed pivot it replaces, rows, order and tally, on
 * three values with ERROR (NULL), self-exclusion TRUE / FALSE / NULL, absent judges, a judge twice
 * on a sample and a second scorer; and each of its checks made to fail on purpose (a colliding key,
 * a judgment without an episode, a count that does not fit its field, too many values), each
 * falling back to the string-keyed pivot with the same result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createDb, query, type Plain } from '../../src/store/duckdb.ts';
import { loadJudgePatterns, PACK_MAX_VALUES, PATTERN_JUDGMENTS_PER_PART } from '../../src/analysis/judge-patterns.ts';

let db: DuckDBInstance;
let conn: DuckDBConnection;
type Params = Record<string, string | number | boolean | null>;
const q = async (sql: string, params?: Params) => (await query(conn, sql, params)).rows;
const UNIQUE = new Map([['run-1', true]]);
/** Every sample's judgments share one key: the packed pivot's check must fail and the string-keyed pivot answer. */
const COLLIDING = { sampleKey: (id: string) => [`length(${id}) * 0`] };

beforeAll(async () => {
  db = await createDb();
  conn = await db.connect();
  await q(`CREATE TABLE episodes AS SELECT 'run-1' AS run_id, 'ep-' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model FROM range(240) t(i)`);
  // Judge k on sample i: 0, 0.5 or 1; ERROR (NULL) on some; absent on others; excluded_self TRUE, FALSE or NULL.
  await q(`CREATE TABLE judgments AS SELECT 'run-1' AS run_id, 'ep-' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'align' AS scorer, 'j-' || chr(CAST(97 + k AS INTEGER)) AS judge_model,
      'fam-' || k AS judge_family, CASE WHEN (i * 7 + k) % 11 = 0 THEN NULL ELSE ((i * 13 + k * 5) % 3) / 2 END AS value,
      CASE WHEN (i * 7 + k) % 11 = 0 THEN 'ERROR' ELSE 'ALIGNED' END AS verdict, CAST(NULL AS VARCHAR) AS raw,
      CASE WHEN (i + k) % 13 = 0 THEN NULL ELSE (i + k) % 9 = 0 END AS excluded_self
    FROM range(240) t(i), range(3) u(k) WHERE (i * 3 + k) % 10 <> 0`);
  // A judge twice on a sample (another value), and a second scorer with its own values on some samples.
  await q(`INSERT INTO judgments SELECT run_id, episode_id, scorer, judge_model, judge_family, 1 - value, verdict, raw, NOT excluded_self FROM judgments WHERE judge_model = 'j-b' AND episode_id < 'ep-020'`);
  await q(`INSERT INTO judgments SELECT run_id, episode_id, 'other', 'j-o', 'fam-o', 7, CASE WHEN episode_id < 'ep-110' THEN 'ERROR' ELSE 'ALIGNED' END, NULL, false FROM episodes WHERE episode_id >= 'ep-100'`);
});
afterAll(() => conn?.closeSync());

/** `q` with the SQL it ran. */
function spy(): { q: typeof q; seen: string[] } {
  const seen: string[] = [];
  return { seen, q: async (sql: string, params?: Params) => (seen.push(sql), q(sql, params)) };
}
const packed = (seen: string[]) => seen.some((s) => s.includes('bit_or(')) && !seen.some((s) => s.includes('GROUP BY j.episode_id'));
const stringKeyed = (seen: string[]) => seen.some((s) => s.includes('GROUP BY j.episode_id'));

async function both(tally: boolean) {
  const a = spy();
  const fast = await loadJudgePatterns(a.q, 'align', 'e.subject_model', '', PATTERN_JUDGMENTS_PER_PART, UNIQUE, tally);
  const b = spy();
  const slow = await loadJudgePatterns(b.q, 'align', 'e.subject_model', '', PATTERN_JUDGMENTS_PER_PART, UNIQUE, tally, COLLIDING);
  return { fast, slow, fastSql: a.seen, slowSql: b.seen };
}

describe('the packed judge pivot against the string-keyed pivot', () => {
  it('the same patterns, in the same order, with and without the tally; a colliding key falls back', async () => {
    for (const tally of [false, true]) {
      const { fast, slow, fastSql, slowSql } = await both(tally);
      expect(packed(fastSql)).toBe(true);
      expect(stringKeyed(slowSql)).toBe(true); // the packed query ran, its check failed, the string-keyed pivot answered
      expect(slowSql.some((s) => s.includes('bit_or('))).toBe(true);
      expect(fast).toEqual(slow);
      expect(fast.patterns.reduce((s, p) => s + p.count, 0)).toBe(240);
      const cells = fast.patterns.flatMap((p) => p.cells);
      for (const v of [0, 0.5, 1, null]) expect(cells.some((c) => c.present && c.value === v)).toBe(true);
      expect(cells.some((c) => c.excluded)).toBe(true);
      expect(cells.some((c) => !c.present)).toBe(true);
      if (tally) expect([...fast.tally!.get('run-1')!.values()].reduce((s, v) => s + v.errors, 0)).toBeGreaterThan(10);
    }
  });

  it('a judgment without an episode: the check fails, the string-keyed pivot answers (and leaves it out)', async () => {
    const before = await both(true);
    await q(`INSERT INTO judgments VALUES ('run-1', 'ep-999', 'align', 'j-a', 'fam-0', 1, 'ALIGNED', NULL, false)`);
    try {
      const s = spy();
      const got = await loadJudgePatterns(s.q, 'align', 'e.subject_model', '', PATTERN_JUDGMENTS_PER_PART, UNIQUE, true);
      expect(stringKeyed(s.seen)).toBe(true);
      expect({ ...got, verdicts: [] }).toEqual({ ...before.fast, verdicts: [] }); // the per-judge counts are of every judgment
    } finally {
      await q(`DELETE FROM judgments WHERE episode_id = 'ep-999'`);
    }
  });

  it('a sample with more judgments than a count field holds: the check fails (7 judges: 9 bits, 512 judgments)', async () => {
    await q(`INSERT INTO judgments SELECT 'run-1', 'ep-' || lpad(CAST(i AS VARCHAR), 3, '0'), 'seven', 'j7-' || k, 'f', 1, 'ALIGNED', NULL, false FROM range(30) t(i), range(7) u(k)`);
    try {
      const load = async (key?: typeof COLLIDING) => {
        const s = spy();
        return { p: await loadJudgePatterns(s.q, 'seven', 'e.subject_model', '', PATTERN_JUDGMENTS_PER_PART, UNIQUE, false, key), seen: s.seen };
      };
      const ok = await load();
      expect(packed(ok.seen)).toBe(true);
      expect(ok.p).toEqual((await load(COLLIDING)).p);
      await q(`INSERT INTO judgments SELECT 'run-1', 'ep-003', 'seven', 'j7-0', 'f', 1, 'ALIGNED', NULL, false FROM range(511)`);
      const big = await load();
      expect(stringKeyed(big.seen)).toBe(true);
      expect(big.p.patterns.some((p) => p.cells[0].present && p.count === 1)).toBe(true);
      expect(big.p).toEqual((await load(COLLIDING)).p);
    } finally {
      await q(`DELETE FROM judgments WHERE scorer = 'seven'`);
    }
  });

  it(`more than ${PACK_MAX_VALUES} distinct values: the string-keyed pivot`, async () => {
    await q(`INSERT INTO judgments SELECT 'run-1', episode_id, 'cont', judge_model, judge_family, CASE WHEN value IS NULL THEN NULL ELSE (CAST(right(episode_id, 3) AS INTEGER) % 40) / 40 END, verdict, raw, excluded_self FROM judgments WHERE scorer = 'align'`);
    try {
      const s = spy();
      const got = await loadJudgePatterns(s.q, 'cont', 'e.subject_model', '', PATTERN_JUDGMENTS_PER_PART, UNIQUE, true);
      expect(stringKeyed(s.seen)).toBe(true);
      expect(s.seen.some((x) => x.includes('bit_or('))).toBe(false);
      const rows = await q(`SELECT count(DISTINCT episode_id) AS n FROM judgments WHERE scorer = 'cont'`);
      expect(got.patterns.reduce((a, p) => a + p.count, 0)).toBe(Number(rows[0]!.n as Plain));
    } finally {
      await q(`DELETE FROM judgments WHERE scorer = 'cont'`);
    }
  });
});
