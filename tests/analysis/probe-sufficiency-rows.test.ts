/**
 * Issue 28: the probe tables spell out the sufficiency check's answers from fingerprints (one
 * representative (subject, state) per distinct (scenario, family, gold, fingerprint) of a part),
 * several parts per scan of the answers, and stream the tables' rows with integer codes for the
 * groups and scenarios. Whatever the parts and the scan bound, the sufficiency must be the one a
 * plain query gives: every (subject, state)'s correct answers spelled out, no fingerprint, one
 * pass. Checked on the demo store as committed, and with one subject's expected answer changed at
 * one state, so a state's correct answers differ between subjects (nothing may assume they
 * agree), and that subject's gold sets stored in another order (the check groups them sorted).
 * Real store, real DuckDB.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { openStore, type Store } from '../../src/store/open-store.ts';
import { query, type SqlParams } from '../../src/store/duckdb.ts';
import { ALL_PARTS, loadProbeParts } from '../../src/analysis/probe-parts.ts';
import { loadProbeTables, sufficiency } from '../../src/analysis/probe-tables.ts';

let store: Store;
const q = async (sql: string, params?: SqlParams) => (await query(store.conn, sql, params)).rows;
const OPTS = { by: ['subject_model'], level: 0.95, seed: 20261129, resamples: 200 };

/** The sufficiency rows without fingerprints or parts: each (run, subject, state)'s answers spelled out. */
const PLAIN = `
  WITH a AS (SELECT run_id, subject_model, state_id, string_agg(probe_id || '=' || expected, chr(10) ORDER BY probe_id, expected) AS answers
             FROM probe_answers GROUP BY ALL),
  m AS (SELECT DISTINCT run_id, scenario_id, domain, decision_type, variant, target FROM episodes)
  SELECT DISTINCT d.scenario_id, m.domain AS family, list_sort(d.gold_actions) AS gold, coalesce(a.answers, '') AS answers
  FROM probe_decisions d LEFT JOIN a USING (run_id, subject_model, state_id) LEFT JOIN m USING (run_id, scenario_id)
  WHERE coalesce(d.condition, 'raw') = 'raw'
  ORDER BY scenario_id, family NULLS FIRST, answers, gold`;

/** The tables' sufficiency in one part, in four, and in four with one part's rows per scan of the answers; all must equal the plain query's. */
async function checkAgainstPlain() {
  const plain = sufficiency(await q(PLAIN));
  const [{ n }] = await q('SELECT CAST(count(*) AS BIGINT) AS n FROM probe_answers');
  const four = await loadProbeParts(q, { answersPerPart: Math.ceil(Number(n) / 4) });
  expect(four.length).toBe(4);
  const one = await loadProbeTables({ conn: store.conn, q }, { ...OPTS, parts: ALL_PARTS });
  const several = await loadProbeTables({ conn: store.conn, q }, { ...OPTS, parts: four });
  const scans = await loadProbeTables({ conn: store.conn, q }, { ...OPTS, parts: four, sufficiencyRowsPerScan: 1 });
  const rowsOf = await loadProbeTables(q, { ...OPTS, parts: four, sufficiencyRowsPerScan: 1 });
  expect(plain).not.toBeNull();
  for (const t of [one, several, scans, rowsOf]) expect(JSON.stringify(t.sufficiency)).toBe(JSON.stringify(plain));
  // The groups too: streamed with codes or read as rows, in one part or four.
  for (const t of [several, scans, rowsOf]) expect(JSON.stringify(t.groups)).toBe(JSON.stringify(one.groups));
  return plain!;
}

beforeAll(async () => {
  store = await openStore(join(ROOT, 'traces'), { bounded: true });
});
afterAll(() => store?.close());

describe('probe sufficiency from fingerprints, part by part', () => {
  it('equals the plain query on the demo store', async () => {
    const s = await checkAgainstPlain();
    expect(s.states).toBeGreaterThan(1);
  }, 120_000);

  it("equals it where one subject's correct answer at one state differs from the other subjects'", async () => {
    const before = sufficiency(await q(PLAIN))!;
    // The last subject's first probe at the first state it answered gets another expected answer.
    const [x] = await q(`SELECT subject_model, state_id, probe_id FROM probe_answers ORDER BY subject_model DESC, state_id, probe_id LIMIT 1`);
    const others = await q(`SELECT count(DISTINCT subject_model) AS n FROM probe_answers WHERE state_id = $s AND subject_model <> $m`, { s: String(x.state_id), m: String(x.subject_model) });
    expect(Number(others[0].n)).toBeGreaterThan(0);
    await q(`CREATE OR REPLACE TEMP TABLE probe_changed AS SELECT CAST($m AS VARCHAR) AS m, CAST($s AS VARCHAR) AS s, CAST($p AS VARCHAR) AS p`, {
      m: String(x.subject_model),
      s: String(x.state_id),
      p: String(x.probe_id),
    });
    await q(
      `CREATE OR REPLACE TEMP VIEW probe_answers AS
       SELECT a.* REPLACE (CASE WHEN c.m IS NULL THEN a.expected ELSE a.expected || '-changed' END AS expected)
       FROM memory.main.probe_answers a LEFT JOIN probe_changed c ON a.subject_model = c.m AND a.state_id = c.s AND a.probe_id = c.p`,
    );
    // And that subject's gold sets are stored in reverse order (the check sorts them: nothing changes but the order read).
    await q(
      `CREATE OR REPLACE TEMP VIEW probe_decisions AS
       SELECT d.* REPLACE (CASE WHEN d.subject_model IN (SELECT m FROM probe_changed) THEN list_reverse(d.gold_actions) ELSE d.gold_actions END AS gold_actions)
       FROM memory.main.probe_decisions d`,
    );
    try {
      const [{ reversed }] = await q(`SELECT count(*) FILTER (WHERE len(gold_actions) > 1 AND gold_actions <> list_sort(gold_actions)) AS reversed FROM probe_decisions`);
      expect(Number(reversed)).toBeGreaterThan(0);
      const after = await checkAgainstPlain();
      // The change is seen: one more distinct state (the changed subject's answers at that state).
      expect(after.states).toBe(before.states + 1);
    } finally {
      await q('DROP VIEW temp.main.probe_answers');
      await q('DROP VIEW temp.main.probe_decisions');
      await q('DROP TABLE probe_changed');
    }
  }, 120_000);
});
