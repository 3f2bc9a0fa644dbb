/**
 * The judge pivots aggregate the judgments per sample before joining the episodes (`perSampleSql`,
 * issue 28: at 1e7 the join of 29.8M judgments to the episodes was most of the judges section and
 * of `standoff agreement`), and `standoff judges` reads its judges without that join when every
 * judge has one family. Held here to the one-pass query they replaced (judgments joined to
 * episodes, then grouped per sample) on a store with what changes the join: an episode stored
 * twice, judgments without an episode, a judge that judged only those, ERROR verdicts (NULL),
 * self-excluded verdicts; in one pass and in hash partitions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createDb, query, type Plain } from '../../src/store/duckdb.ts';
import { loadJudgePatterns, samplePartsOf } from '../../src/analysis/judge-patterns.ts';
import { loadJudgeMedians } from '../../src/analysis/judge-medians.ts';
import { uniqueEpisodeRuns, type GateCheck } from '../../src/report/sections/summary.ts';

let db: DuckDBInstance;
let conn: DuckDBConnection;
const q = async (sql: string, params?: Record<string, string | number | boolean | null>) => (await query(conn, sql, params)).rows;
const JUDGES = ['j-a', 'j-b', 'j-c'];

beforeAll(async () => {
  db = await createDb();
  conn = await db.connect();
  await q(`CREATE TABLE episodes AS SELECT 'run-1' AS run_id, 'ep-' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model, 'f' || (i % 2) AS subject_family FROM range(300) t(i)`);
  // Judge k on sample i: a value 0/1, ERROR (NULL) on some, absent on others, self-excluded on some.
  await q(`CREATE TABLE judgments AS SELECT 'run-1' AS run_id, 'ep-' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'align' AS scorer, 'j-' || chr(CAST(97 + k AS INTEGER)) AS judge_model,
      'fam-' || k AS judge_family, CASE WHEN (i * 7 + k) % 11 = 0 THEN NULL ELSE CAST(((i * 13 + k * 5) % 7) < 4 AS INTEGER) END AS value,
      CASE WHEN (i * 7 + k) % 11 = 0 THEN 'ERROR' WHEN ((i * 13 + k * 5) % 7) < 4 THEN 'ALIGNED' ELSE 'MISALIGNED' END AS verdict, CAST(NULL AS VARCHAR) AS raw,
      (i + k) % 9 = 0 AS excluded_self
    FROM range(320) t(i), range(3) u(k) WHERE (i * 3 + k) % 10 <> 0`);
  // An episode stored twice, and a judge that judged only samples without an episode (ep-300.. have none).
  await q(`INSERT INTO episodes SELECT * FROM episodes WHERE episode_id = 'ep-004'`);
  await q(`INSERT INTO judgments VALUES ('run-1', 'ep-310', 'align', 'j-ghost', 'fam-g', 1, 'ALIGNED', NULL, false)`);
});
afterAll(() => conn?.closeSync());

/** The one-pass pivot the patterns were counted with before (judgments joined to episodes, grouped per sample). */
async function onePass(judges: string[]) {
  const cols = judges.map((_, i) => `max(j.value) FILTER (WHERE j.judge_model = $j${i}) AS v${i}, bool_or(j.excluded_self) FILTER (WHERE j.judge_model = $j${i}) AS x${i}, CAST(count(*) FILTER (WHERE j.judge_model = $j${i}) AS INTEGER) AS c${i}`).join(', ');
  const sel = judges.map((_, i) => `v${i}, x${i}, c${i}`).join(', ');
  const rows = await q(`WITH p AS (SELECT j.run_id, j.episode_id, any_value(e.subject_model) AS subject, ${cols} FROM judgments j JOIN episodes e ON e.run_id = j.run_id AND e.episode_id = j.episode_id
    WHERE j.scorer = $scorer GROUP BY j.run_id, j.episode_id) SELECT subject, ${sel}, CAST(count(*) AS BIGINT) AS n FROM p GROUP BY ALL ORDER BY ALL`, { scorer: 'align', ...Object.fromEntries(judges.map((j, i) => [`j${i}`, j])) });
  return rows.map((r: Record<string, Plain>) => ({ subject: String(r.subject), cells: judges.map((_, i) => ({ value: r[`v${i}`] === null ? null : Number(r[`v${i}`]), present: Number(r[`c${i}`]) > 0, excluded: r[`x${i}`] === true })), count: Number(r.n) }));
}

describe('judge pivots aggregated per sample before the join to episodes', () => {
  it('loadJudgePatterns: the patterns of the one-pass join, in one pass and in 3 and 40 partitions', async () => {
    const one = await loadJudgePatterns(q, 'align');
    expect(one.judges).toEqual([...JUDGES, 'j-ghost']);
    const want = await onePass(one.judges);
    expect(one.patterns).toEqual(want);
    expect(want.reduce((s, p) => s + p.count, 0)).toBe(300); // ep-004 twice is one sample; ep-300.. have no episode
    for (const parts of [3, 40]) expect((await loadJudgePatterns(q, 'align', 'e.subject_model', '', Math.ceil(960 / parts))).patterns).toEqual(want);
  });

  it('loadJudgeMedians: a judge with no judged episode is left out, as the exact judge query leaves it out', async () => {
    await q(`DELETE FROM episodes WHERE episode_id = 'ep-004' AND rowid = (SELECT max(rowid) FROM episodes WHERE episode_id = 'ep-004')`);
    try {
      const withGhost = (await loadJudgeMedians(conn, { scorer: 'align' }))!.totals;
      await q(`DELETE FROM judgments WHERE judge_model = 'j-ghost'`);
      const without = (await loadJudgeMedians(conn, { scorer: 'align' }))!.totals;
      expect(withGhost).toEqual(without);
      expect(without.samples).toBe(300);
      expect(without.missing_verdicts).toBeGreaterThan(0);
      const parts = (await loadJudgeMedians(conn, { scorer: 'align', judgmentsPerPart: 50 }))!.totals;
      expect(parts).toEqual(without);
    } finally {
      await q(`INSERT INTO judgments VALUES ('run-1', 'ep-310', 'align', 'j-ghost', 'fam-g', 1, 'ALIGNED', NULL, false)`);
      await q(`INSERT INTO episodes SELECT * FROM episodes WHERE episode_id = 'ep-004'`);
    }
  });

  it('loadJudgeMedians: an episode stored twice still counts its judgments twice, and is refused as before', async () => {
    await expect(loadJudgeMedians(conn, { scorer: 'align' })).rejects.toThrow(/scored sample "run-1\/ep-004" twice/);
  });
});

describe('judge pivots per run: the join on the episode id alone, no regrouping when a run\'s episode ids are unique', () => {
  it('two runs sharing episode ids, one with an episode twice: the one-pass patterns and medians, in one pass and in parts', async () => {
    // run-2 repeats run-1's episode ids (other subjects, other values): a join on the episode id alone must not mix the runs.
    await q(`INSERT INTO episodes SELECT 'run-2', episode_id, 'n' || (CAST(right(episode_id, 3) AS INTEGER) % 2), 'g' FROM episodes WHERE run_id = 'run-1' AND episode_id < 'ep-200' GROUP BY episode_id`);
    await q(`INSERT INTO judgments SELECT 'run-2', episode_id, scorer, judge_model, judge_family, 1 - value, verdict, raw, NOT excluded_self FROM judgments WHERE run_id = 'run-1' AND judge_model <> 'j-ghost'`);
    try {
      const parts = await samplePartsOf(q, 'align');
      expect(parts.map((p) => [p.run, p.unique])).toEqual([['run-1', false], ['run-2', true]]);
      const one = await loadJudgePatterns(q, 'align');
      const want = await onePass(one.judges);
      expect(one.patterns).toEqual(want);
      expect(want.reduce((s, p) => s + p.count, 0)).toBe(500);
      expect((await loadJudgePatterns(q, 'align', 'e.subject_model', '', 100)).patterns).toEqual(want);
      // Without the duplicate both runs take the unique path.
      await q(`DELETE FROM episodes WHERE episode_id = 'ep-004' AND run_id = 'run-1' AND rowid = (SELECT max(rowid) FROM episodes WHERE episode_id = 'ep-004' AND run_id = 'run-1')`);
      expect((await samplePartsOf(q, 'align')).every((p) => p.unique)).toBe(true);
      const unique = await loadJudgePatterns(q, 'align');
      expect(unique.patterns).toEqual(await onePass(unique.judges));
      expect((await loadJudgePatterns(q, 'align', 'e.subject_model', '', 100)).patterns).toEqual(unique.patterns);
      const medians = (await loadJudgeMedians(conn, { scorer: 'align' }))!.totals;
      expect(medians.samples).toBe(500);
      // The report passes the gate's verdicts: no uniqueness query for a run the map knows, and its verdict is the one used.
      const seen: string[] = [];
      const spy = async (sql: string, params?: Record<string, string | number | boolean | null>) => (seen.push(sql), q(sql, params));
      const known = await samplePartsOf(spy, 'align', undefined, new Map([['run-1', true]]));
      expect(known.map((p) => [p.run, p.unique])).toEqual([['run-1', true], ['run-2', true]]);
      expect(seen.filter((s) => s.includes('count(DISTINCT episode_id)'))).toHaveLength(1); // run-2 only
      const told = await samplePartsOf(q, 'align', undefined, new Map([['run-1', false], ['run-2', false]]));
      expect(told.every((p) => !p.unique)).toBe(true);
      expect((await loadJudgePatterns(q, 'align', 'e.subject_model', '', undefined, new Map([['run-1', false], ['run-2', false]]))).patterns).toEqual(unique.patterns);
      expect((await loadJudgeMedians(conn, { scorer: 'align', judgmentsPerPart: 70 }))!.totals).toEqual(medians);
    } finally {
      await q(`DELETE FROM episodes WHERE run_id = 'run-2'`);
      await q(`DELETE FROM judgments WHERE run_id = 'run-2'`);
      if (Number((await q(`SELECT count(*) AS n FROM episodes WHERE episode_id = 'ep-004'`))[0]!.n) === 1) await q(`INSERT INTO episodes SELECT * FROM episodes WHERE episode_id = 'ep-004'`);
    }
  });
});

describe('judge patterns with the verdict tally: every scorer\'s verdicts per run and subject from the same scan', () => {
  /** The verdicts of every scorer joined to their episodes on (run_id, episode_id), per run and subject. */
  const joined = async () => {
    const rows = await q(`SELECT j.run_id, e.subject_model AS subject, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE j.verdict = 'ERROR') AS BIGINT) AS errors
      FROM judgments j JOIN episodes e ON e.run_id = j.run_id AND e.episode_id = j.episode_id GROUP BY ALL`);
    const out = new Map<string, Map<string, { n: number; errors: number }>>();
    for (const r of rows) {
      const m = out.get(String(r.run_id)) ?? new Map<string, { n: number; errors: number }>();
      out.set(String(r.run_id), m);
      m.set(String(r.subject), { n: Number(r.n), errors: Number(r.errors) });
    }
    return out;
  };

  it('the scorer\'s patterns unchanged (one pass and parts); the tally of the one join for runs with unique episode ids, none for a run with an episode twice', async () => {
    // run-2: unique episode ids shared with run-1 (which holds ep-004 twice); a second scorer judges samples of both runs, some the first scorer never judged.
    await q(`INSERT INTO episodes SELECT 'run-2', episode_id, 'n' || (CAST(right(episode_id, 3) AS INTEGER) % 2), 'g' FROM episodes WHERE run_id = 'run-1' AND episode_id < 'ep-200' GROUP BY episode_id`);
    await q(`INSERT INTO judgments SELECT 'run-2', episode_id, scorer, judge_model, judge_family, 1 - value, verdict, raw, NOT excluded_self FROM judgments WHERE run_id = 'run-1' AND judge_model <> 'j-ghost' AND episode_id < 'ep-150'`);
    await q(`INSERT INTO judgments SELECT run_id, episode_id, 'other', 'j-o', 'fam-o', CASE WHEN CAST(right(episode_id, 3) AS INTEGER) % 5 = 0 THEN NULL ELSE 1 END, CASE WHEN CAST(right(episode_id, 3) AS INTEGER) % 5 = 0 THEN 'ERROR' ELSE 'ALIGNED' END, NULL, false
      FROM episodes WHERE episode_id >= 'ep-100' GROUP BY ALL`);
    try {
      const plain = await loadJudgePatterns(q, 'align');
      expect(plain.patterns).toEqual(await onePass(plain.judges));
      const want = await joined();
      for (const perPart of [undefined, 100]) {
        const t = await loadJudgePatterns(q, 'align', 'e.subject_model', '', perPart, undefined, true);
        expect({ ...t, tally: undefined }).toEqual({ ...plain, tally: undefined });
        expect([...t.tally!.keys()]).toEqual(['run-2']); // run-1 holds ep-004 twice: its verdicts are left to the caller's join
        expect(t.tally!.get('run-2')).toEqual(want.get('run-2'));
        expect([...t.tally!.get('run-2')!.values()].some((v) => v.errors > 0)).toBe(true);
      }
      // Without the duplicate both runs are tallied, each as the join counts it.
      const unique = new Map([['run-1', true], ['run-2', true]]);
      await q(`DELETE FROM episodes WHERE episode_id = 'ep-004' AND run_id = 'run-1' AND rowid = (SELECT max(rowid) FROM episodes WHERE episode_id = 'ep-004' AND run_id = 'run-1')`);
      const one = await loadJudgePatterns(q, 'align');
      const t = await loadJudgePatterns(q, 'align', 'e.subject_model', '', 150, unique, true);
      expect({ ...t, tally: undefined }).toEqual({ ...one, tally: undefined });
      expect(t.tally).toEqual(await joined());
    } finally {
      await q(`DELETE FROM episodes WHERE run_id = 'run-2'`);
      await q(`DELETE FROM judgments WHERE run_id = 'run-2' OR scorer = 'other'`);
      if (Number((await q(`SELECT count(*) AS n FROM episodes WHERE episode_id = 'ep-004'`))[0]!.n) === 1) await q(`INSERT INTO episodes SELECT * FROM episodes WHERE episode_id = 'ep-004'`);
    }
  });
});

describe('uniqueEpisodeRuns: the gate\'s unique_episodes verdict per run', () => {
  it('reads the check of one run and of several (named with the run), and nothing else', () => {
    const check = (name: string, run: string | null, passed: boolean): GateCheck => ({ check: name, run, passed, detail: '', failures: [] });
    expect(uniqueEpisodeRuns(undefined)).toEqual(new Map());
    expect(uniqueEpisodeRuns({ gate: { passed: true, checks: [check('run_status', 'a', true), check('unique_episodes', 'a', true)], judge_verdicts: { total: 0, errors: 0, allowed: 0 } } })).toEqual(new Map([['a', true]]));
    const several = [check('unique_episodes (a)', 'a', true), check('unique_episodes (b)', 'b', false), check('unique_episodes (a)', 'b', true), check('sample_counts', null, true)];
    expect(uniqueEpisodeRuns({ gate: { passed: false, checks: several, judge_verdicts: { total: 0, errors: 0, allowed: 0 } } })).toEqual(new Map([['a', true], ['b', false]]));
  });
});

describe('standoff judges per sample: streamed run by run in sample order', () => {
  it('rows in the order and with the values of the one-pass listing, runs named so that run_id order is not sample order', async () => {
    // 'run' sorts before 'run-1' as a run id, but 'run-1/...' sorts before 'run/...' as a sample ('-' < '/').
    await q(`DELETE FROM episodes WHERE episode_id = 'ep-004' AND rowid = (SELECT max(rowid) FROM episodes WHERE episode_id = 'ep-004')`);
    await q(`DELETE FROM judgments WHERE judge_model = 'j-ghost'`);
    await q(`INSERT INTO episodes SELECT 'run', episode_id, subject_model, subject_family FROM episodes WHERE run_id = 'run-1' AND episode_id < 'ep-050'`);
    await q(`INSERT INTO judgments SELECT 'run', episode_id, scorer, judge_model, judge_family, 1 - value, verdict, raw, excluded_self FROM judgments WHERE run_id = 'run-1' AND episode_id < 'ep-050'`);
    try {
      const m = (await loadJudgeMedians(conn, { scorer: 'align' }))!;
      const got: { sample: string; subject_model: string; judges_missing: string[] }[] = [];
      const n = await m.forEachSample((rows) => void got.push(...rows.map((r) => ({ sample: r.sample, subject_model: r.subject_model, judges_missing: [...r.judges_missing].sort() }))));
      const cols = JUDGES.map((j, i) => `max(j.value) FILTER (WHERE j.judge_model = '${j}') AS v${i}`).join(', ');
      const want = await q(`SELECT j.run_id || '/' || j.episode_id AS sample, any_value(e.subject_model) AS subject_model, ${cols}
        FROM judgments j JOIN episodes e USING (run_id, episode_id) WHERE j.scorer = 'align' GROUP BY sample ORDER BY sample`);
      expect(n).toBe(want.length);
      expect(want.length).toBe(350);
      expect(got[0]!.sample.startsWith('run-1/')).toBe(true);
      expect(got).toEqual(want.map((r) => ({ sample: r.sample, subject_model: r.subject_model, judges_missing: JUDGES.filter((_, i) => r[`v${i}`] === null) })));
      // The table's count is the totals' samples; its rows are the listing's first (here across the run boundary at 300).
      expect(m.totals.samples).toBe(n);
      const first: string[] = [];
      expect(await m.forEachSample((rows) => void first.push(...rows.map((r) => r.sample)), 310)).toBe(310);
      expect(first).toEqual(got.slice(0, 310).map((r) => r.sample));
    } finally {
      await q(`DELETE FROM episodes WHERE run_id = 'run'`);
      await q(`DELETE FROM judgments WHERE run_id = 'run'`);
      await q(`INSERT INTO judgments VALUES ('run-1', 'ep-310', 'align', 'j-ghost', 'fam-g', 1, 'ALIGNED', NULL, false)`);
      await q(`INSERT INTO episodes SELECT * FROM episodes WHERE episode_id = 'ep-004'`);
    }
  });
});
