/** The bench's synthetic store: the shape it promises, and the same rows for the same seed. */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { writeSyntheticStoreSql } from '../../bench/synthetic-store-sql.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';

const root = mkdtempSync(join(tmpdir(), 'standoff-synth-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Each table's rows in file order (row number included), hashed: equal digests are equal rows in the same order. */
async function orderedDigest(dir: string) {
  const s = await openStore(dir);
  try {
    const out: Record<string, unknown> = {};
    for (const t of ['runs', 'episodes', 'scores', 'judgments', 'probe_answers', 'probe_decisions']) {
      out[t] = (await query(s.conn, `SELECT count(*) AS n, md5(string_agg(CAST(x AS VARCHAR), '|' ORDER BY rn)) AS h FROM (SELECT row_number() OVER () AS rn, * FROM ${t}) x`)).rows[0];
    }
    return out;
  } finally {
    s.close();
  }
}

async function digest(dir: string) {
  const s = await openStore(dir);
  try {
    const out: Record<string, unknown> = {};
    for (const t of ['episodes', 'scores', 'judgments', 'probe_answers', 'probe_decisions']) {
      out[t] = (await query(s.conn, `SELECT count(*) AS n, md5(string_agg(CAST(x AS VARCHAR), '|' ORDER BY CAST(x AS VARCHAR))) AS h FROM ${t} x`)).rows[0];
    }
    return out;
  } finally {
    s.close();
  }
}

describe('writeSyntheticStore', () => {
  it('writes the O1 shape with the row counts it reports', async () => {
    const dir = join(root, 'a');
    const r = await writeSyntheticStore(dir, { episodes: 270, seed: 5 });
    expect([r.episodes, r.scenarios, r.epochs, r.subjects.length]).toEqual([270, 18, 5, 3]);
    const s = await openStore(dir);
    try {
      for (const [t, n] of Object.entries(r.rows)) {
        expect(Number((await query(s.conn, `SELECT count(*) AS n FROM ${t}`)).rows[0].n), t).toBe(n);
      }
      const shape = (await query(s.conn, `SELECT count(DISTINCT scenario_id) AS sc, count(DISTINCT domain) AS d, count(DISTINCT decision_type) AS t, count(DISTINCT variant) AS v, max(epoch) AS e FROM episodes`)).rows[0];
      expect(shape).toEqual({ sc: 18, d: 3, t: 3, v: 2, e: 5 });
      const noanswer = (await query(s.conn, `SELECT count(*) AS n FROM scores WHERE noanswer`)).rows[0].n;
      expect(noanswer).toBe(90);
      const excluded = (await query(s.conn, `SELECT DISTINCT j.judge_model, e.subject_model FROM judgments j JOIN episodes e USING (run_id, episode_id) WHERE excluded_self`)).rows;
      expect(excluded).toEqual([{ judge_model: 'sim:judge-lenient', subject_model: 'sim:careful' }]);
    } finally {
      s.close();
    }
  });

  it('is a pure function of the seed', async () => {
    await writeSyntheticStore(join(root, 'b'), { episodes: 270, seed: 5 });
    await writeSyntheticStore(join(root, 'c'), { episodes: 270, seed: 6 });
    const a = await digest(join(root, 'a'));
    expect(await digest(join(root, 'b'))).toEqual(a);
    expect(await digest(join(root, 'c'))).not.toEqual(a);
  });

  it('rounds to the grid, replicating scenarios beyond 18', async () => {
    const r = await writeSyntheticStore(join(root, 'd'), { episodes: 4000, seed: 1, subjects: ['sim:hasty', 'sim:careful', 'sim:thorough', 'sim:steady'], judgments: false, probes: false });
    expect([r.episodes, r.scenarios]).toEqual([4000, 200]);
    expect(r.rows.judgments).toBe(0);
  });

  it("writes rows in a run's order: subject, scenario id, epoch (as standoff run does)", async () => {
    // 60 scenarios per subject: ids past the first 18 (ct_act_a_1, ...) interleave with the cells in string order.
    const dir = join(root, 'order');
    await writeSyntheticStore(dir, { episodes: 1200, seed: 2, subjects: ['sim:hasty', 'sim:careful', 'sim:thorough', 'sim:steady'] });
    const s = await openStore(dir);
    try {
      for (const t of ['episodes', 'probe_answers', 'probe_decisions']) {
        const keys = `subject_model, scenario_id, epoch`;
        // Rows out of order: a row whose (subject, scenario, epoch) sorts before the previous row's.
        const r = await query(
          s.conn,
          `SELECT count(*) FILTER (WHERE cur < prev) AS bad, count(*) AS n FROM (
             SELECT (${keys}) AS cur, lag((${keys})) OVER (ORDER BY rn) AS prev FROM (SELECT row_number() OVER () AS rn, * FROM ${t}))`,
        );
        expect(r.rows[0], t).toEqual({ bad: 0, n: expect.any(Number) });
      }
      // Subjects by name, as the runner's units, not in the config's order.
      const subjects = (await query(s.conn, `SELECT subject_model FROM (SELECT row_number() OVER () AS rn, subject_model FROM episodes) GROUP BY ALL ORDER BY min(rn)`)).rows.map((r) => r.subject_model);
      expect(subjects).toEqual(['sim:careful', 'sim:hasty', 'sim:steady', 'sim:thorough']);
    } finally {
      s.close();
    }
  });

  // The SQL writer (bench/synthetic-store-sql.ts) writes the 1e7 store in minutes: the same rows,
  // in the same order, as the row-object writer, for every option it takes.
  const variants: [string, Parameters<typeof writeSyntheticStore>[1]][] = [
    ['4 subjects, errors', { episodes: 1200, seed: 11, subjects: ['sim:hasty', 'sim:careful', 'sim:thorough', 'sim:steady'], errorRate: 0.05 }],
    ['one subject, fixed probes, one family, no option probabilities', { episodes: 400, seed: 3, subjects: ['sim:careful'], epochs: 2, probesPerState: 2, oneFamily: 'clinical_triage', optionProbs: false, runId: 'r-1' }],
    ['no judgments, no probes', { episodes: 300, seed: 4, judgments: false, probes: false, suite: 'x', status: 'partial' }],
  ];
  for (const [name, opts] of variants) {
    it(`the SQL writer writes the same store: ${name}`, async () => {
      const a = join(root, `js-${opts.seed}`);
      const b = join(root, `sql-${opts.seed}`);
      const ra = await writeSyntheticStore(a, opts);
      const rb = await writeSyntheticStoreSql(b, opts);
      expect(rb).toEqual(ra);
      expect(await orderedDigest(b)).toEqual(await orderedDigest(a));
    }, 120_000);
  }
});
