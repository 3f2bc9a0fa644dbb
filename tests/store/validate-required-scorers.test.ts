/**
 * The gate's `required_scorers` check on hand-made tables: the per-episode bit aggregate that finds
 * missing score rows (and, above 62 required scorers, the anti-join) names exactly the missing
 * (episode, scorer) pairs, ignores other runs' rows and duplicated score rows, and the NULL-score
 * query finds NULLs only on completed, untruncated episodes with their judge verdicts.
 */
import { describe, it, expect } from 'vitest';
import { createDb } from '../../src/store/duckdb.ts';
import { checkRequiredScorers, type GateContext } from '../../src/store/validate-run.ts';

async function gate(required: string[], extraScores = ''): Promise<{ detail: string; ok: boolean }> {
  const db = await createDb();
  const conn = await db.connect();
  try {
    await conn.run(`CREATE TABLE episodes AS SELECT * FROM (VALUES ('r', 'e1', 'success', false), ('r', 'e2', 'success', false), ('r', 'e3', 'success', false), ('r', 'e4', 'error', false), ('o', 'e9', 'success', false)) t(run_id, episode_id, status, truncated)`);
    // e1 complete (one row twice), e2 lacks b, e3 lacks a and b, e4 (errored) complete with a NULL; the other run's e3 has a and b.
    await conn.run(`CREATE TABLE scores AS SELECT * FROM (VALUES
      ('r', 'e1', 'a', 1.0, false), ('r', 'e1', 'a', 1.0, false), ('r', 'e1', 'b', 0.0, false), ('r', 'e1', 'c', 1.0, false),
      ('r', 'e2', 'a', 1.0, false), ('r', 'e2', 'c', NULL, false), ('r', 'e3', 'c', 1.0, false),
      ('r', 'e4', 'a', NULL, false), ('r', 'e4', 'b', NULL, false), ('r', 'e4', 'c', NULL, false),
      ('o', 'e3', 'a', 1.0, false), ('o', 'e3', 'b', 1.0, false) ${extraScores}) t(run_id, episode_id, scorer, value, noanswer)`);
    await conn.run(`CREATE TABLE judgments AS SELECT * FROM (VALUES ('r', 'e2', 'c', 'j1', 'ERROR', false), ('r', 'e1', 'c', 'j1', 'ALIGNED', false)) t(run_id, episode_id, scorer, judge_model, verdict, excluded_self)`);
    const g: GateContext = { conn, runId: 'r', status: 'success', configured: null, counts: [{ subject: 'm', n: 4 }], expectedSamples: undefined, requiredScorers: required, allowJudgeErrors: 0, allowTruncated: 0, allowMissing: 0 };
    return await checkRequiredScorers(g);
  } finally {
    conn.closeSync();
  }
}

describe('required_scorers', () => {
  it('names the missing (episode, scorer) pairs and the NULL scores on completed episodes', async () => {
    const r = await gate(['c', 'b', 'a', 'b']);
    expect(r.ok).toBe(false);
    expect(r.detail).toBe('3 missing score(s), e.g. e2 lacks b; e3 lacks a; e3 lacks b; c is NULL on 1 episode because every eligible judge call failed (see judge_errors); allowed 0 missing (--allow-missing N)');
  });

  it('passes when every required scorer is there', async () => {
    const r = await gate(['a'], ", ('r', 'e3', 'a', 0.0, false)");
    expect(r).toEqual({ name: 'required_scorers', ok: true, detail: 'a present on all 4 episodes and measured on every completed one' });
  });

  it('above 62 required scorers: the anti-join finds the same pairs', async () => {
    const many = ['a', 'b', 'c', ...Array.from({ length: 61 }, (_, i) => `z${String(i).padStart(2, '0')}`)];
    const r = await gate(many);
    expect(r.detail.startsWith(`${3 + 61 * 4} missing score(s), e.g. e1 lacks z00; e1 lacks z01; e1 lacks z02;`)).toBe(true);
  });
});
