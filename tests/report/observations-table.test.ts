/**
 * The report's observations (`materializeObservations`, src/report/sections/context.ts): `obs_t`
 * holds, per metric, exactly the rows of the metric's own SQL (`METRICS` in src/store/metrics.ts)
 * that have a subject and a scenario, with their values, and `obs_agg` counts them. Checked on
 * hand-made tables where alignment's rule matters: a subject none of whose valid episodes was
 * judged is not measured at all, and a subject whose only judged valid episode has no scenario is
 * measured (the rule sees that episode, as the metric's SQL does, though obs_t leaves it out).
 * Policy-action rows carry their episode's gathered_evidence. The rule is applied after the join
 * (`applyAlignmentRule`), or as a window where a subject label spans runs: both are checked.
 */
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/store/duckdb.ts';
import { MAIN_METRICS, materializeObservations, type ReportContext } from '../../src/report/sections/context.ts';
import { metricSql } from '../../src/analysis/metrics.ts';

const EPISODES = `SELECT * FROM (VALUES
  ('r', 'a1', 'm:a', 's1', 1, 'valid', true),  ('r', 'a2', 'm:a', 's1', 2, 'valid', false), ('r', 'a3', 'm:a', 's2', 1, 'invalid', false),
  ('r', 'b1', 'm:b', NULL, 1, 'valid', true),  ('r', 'b2', 'm:b', 's1', 1, 'valid', true),  ('r', 'b3', 'm:b', 's2', 1, 'invalid', false),
  ('r', 'c1', 'm:c', 's1', 1, 'valid', true),  ('r', 'c2', 'm:c', 's2', 1, 'error', NULL)
) t(run_id, episode_id, subject_model, scenario_id, epoch, status, gathered_evidence)`;
// Alignment: m:a's valid episodes unjudged (NULL), its invalid one 0; m:b judged only on b1 (no scenario); m:c judged.
const SCORES = `SELECT * FROM (VALUES
  ('r', 'a1', 'reasoning_action_alignment', NULL, false), ('r', 'a2', 'reasoning_action_alignment', NULL, false), ('r', 'a3', 'reasoning_action_alignment', 0.0, false),
  ('r', 'b1', 'reasoning_action_alignment', 1.0, false), ('r', 'b2', 'reasoning_action_alignment', NULL, false), ('r', 'b3', 'reasoning_action_alignment', 0.0, false),
  ('r', 'c1', 'reasoning_action_alignment', 0.5, false),
  ('r', 'a1', 'policy_compliant_action', 1.0, false), ('r', 'a2', 'policy_compliant_action', 1.0, false), ('r', 'a3', 'policy_compliant_action', 0.0, false),
  ('r', 'b1', 'policy_compliant_action', 1.0, false), ('r', 'b2', 'policy_compliant_action', 0.0, false), ('r', 'b3', 'policy_compliant_action', NULL, true),
  ('r', 'c1', 'policy_compliant_action', 1.0, false)
) t(run_id, episode_id, scorer, value, noanswer)`;

const RUNS = `SELECT 'r' AS run_id, 'standoff' AS source, '{}' AS config`;
const SUBJECTS = `SELECT * FROM (VALUES ('r', 'm:a', 'm:a', 0), ('r', 'm:b', 'm:b', 1), ('r', 'm:c', 'm:c', 2)) t(run_id, subject_model, subject, subj)`;

async function withObservations<T>(f: (ctx: ReportContext) => Promise<T>, t = { episodes: EPISODES, scores: SCORES, runs: RUNS, subjects: SUBJECTS }): Promise<T> {
  const db = await createDb();
  const conn = await db.connect();
  try {
    await conn.run(`CREATE TABLE episodes AS SELECT *, 'ops' AS domain, 'act' AS decision_type, CAST(NULL AS VARCHAR) AS variant FROM (${t.episodes})`);
    await conn.run(`CREATE TABLE scores AS SELECT run_id, episode_id, scorer, CAST(value AS DOUBLE) AS value, noanswer FROM (${t.scores})`);
    await conn.run(`CREATE TABLE runs AS ${t.runs}`);
    await conn.run(`CREATE TABLE r_subject AS ${t.subjects}`);
    const ctx = { conn, subjects: (await conn.runAndReadAll(`SELECT subject FROM r_subject ORDER BY subj`)).getRows().map((r) => String(r[0])) } as unknown as ReportContext;
    await materializeObservations(ctx);
    return await f(ctx);
  } finally {
    conn.closeSync();
  }
}

const rows = async (ctx: ReportContext, sql: string) => (await ctx.conn.runAndReadAll(sql)).getRowObjectsJson();

/**
 * obs_t's rows of each metric it holds (all but \`invalid\`, which is only counted) and obs_agg's
 * counts of every metric, slice dimensions included, against the metric's own SQL joined to the
 * subject, scenario and dimension indexes.
 */
async function expectMetricRows(ctx: ReportContext): Promise<void> {
  const metric = (m: string) =>
    `${metricSql(m)} o JOIN r_subject s USING (run_id, subject_model) JOIN r_scn c USING (scenario_id)
     JOIN r_dims d ON d.domain IS NOT DISTINCT FROM o.domain AND d.decision_type IS NOT DISTINCT FROM o.decision_type AND d.variant IS NOT DISTINCT FROM o.variant`;
  for (const [k, m] of MAIN_METRICS.entries()) {
    if (m !== 'invalid') {
      const mine = await rows(ctx, `SELECT subj, sid, epoch, value FROM obs_t WHERE mk = ${k} ORDER BY ALL`);
      const theirs = await rows(ctx, `SELECT CAST(s.subj AS SMALLINT) AS subj, c.sid, o.epoch, o.value FROM ${metric(m)} ORDER BY ALL`);
      expect([m, mine]).toEqual([m, theirs]);
    }
    const counted = await rows(ctx, `SELECT subj, sid, dim, value, CAST(sum(n) AS INTEGER) AS n FROM obs_agg WHERE mk = ${k} GROUP BY ALL ORDER BY ALL`);
    const direct = await rows(ctx, `SELECT CAST(s.subj AS SMALLINT) AS subj, c.sid, d.dim, o.value, CAST(count(*) AS INTEGER) AS n FROM ${metric(m)} GROUP BY ALL ORDER BY ALL`);
    expect([m, counted]).toEqual([m, direct]);
  }
  expect(await rows(ctx, `SELECT DISTINCT mk FROM obs_t ORDER BY mk`)).toEqual([0, 1, 2].map((mk) => ({ mk })));
}

// A second run, built on its own (obs_t is materialized one run at a time, joined on the episode id
// alone): it reuses run r's episode ids, holds a duplicated episode row (a1, twice) and a duplicated
// score row (a2's policy action), a policy score with NULL noanswer, and records no validity (lm-eval).
const TWO_RUNS = {
  episodes: `${EPISODES} UNION ALL SELECT * FROM (VALUES
    ('q', 'a1', 'm:a', 's1', 1, 'valid', false), ('q', 'a1', 'm:a', 's1', 1, 'valid', false), ('q', 'a2', 'm:a', 's2', 1, 'invalid', true),
    ('q', 'b1', 'm:b', 's2', 2, 'valid', NULL), ('q', 'x9', 'm:b', 's3', NULL, 'valid', true)
  ) t(run_id, episode_id, subject_model, scenario_id, epoch, status, gathered_evidence)`,
  scores: `${SCORES} UNION ALL SELECT * FROM (VALUES
    ('q', 'a1', 'reasoning_action_alignment', 1.0, false), ('q', 'a2', 'reasoning_action_alignment', 0.0, false),
    ('q', 'a1', 'policy_compliant_action', 0.0, false), ('q', 'a2', 'policy_compliant_action', 1.0, false), ('q', 'a2', 'policy_compliant_action', 1.0, false),
    ('q', 'b1', 'policy_compliant_action', 1.0, NULL), ('q', 'b1', 'reasoning_action_alignment', NULL, false), ('q', 'zz', 'policy_compliant_action', 1.0, false)
  ) t(run_id, episode_id, scorer, value, noanswer)`,
  runs: `${RUNS} UNION ALL SELECT 'q', 'lm-eval', '{}'`,
  subjects: `SELECT * FROM (VALUES ('r', 'm:a', 'm:a @ r', 0), ('r', 'm:b', 'm:b @ r', 1), ('r', 'm:c', 'm:c', 2), ('q', 'm:a', 'm:a @ q', 3), ('q', 'm:b', 'm:b @ q', 4)) t(run_id, subject_model, subject, subj)`,
};

describe('the report observations (obs_t, obs_agg)', () => {
  it('holds each metric\'s rows with a scenario, values as the metric\'s SQL gives them', async () => {
    await withObservations(expectMetricRows);
  });

  it('two runs sharing episode ids, duplicated episodes and scores: the same rows as the metrics\' SQL', async () => {
    await withObservations(async (ctx) => {
      await expectMetricRows(ctx);
      // Run q's duplicated a1 row is two observations of each metric; its duplicated a2 score two policy-action rows.
      const q = await rows(ctx, `SELECT mk, CAST(count(*) AS INTEGER) AS n FROM obs_t WHERE subj >= 3 GROUP BY mk ORDER BY mk`);
      expect(q).toEqual([
        { mk: 0, n: 4 },
        { mk: 1, n: 4 },
        { mk: 2, n: 4 },
      ]);
      const invalid = await rows(ctx, `SELECT CAST(sum(n) AS INTEGER) AS n FROM obs_agg WHERE subj >= 3 AND mk = ${MAIN_METRICS.indexOf('invalid')}`);
      expect(invalid).toEqual([{ n: 5 }]);
    }, TWO_RUNS);
  });

  it('a subject label shared by two runs: alignment\'s rule stays per run (the window), rows as the metrics\' SQL', async () => {
    // Run r's m:a has no judged valid episode (not measured), run q's m:a has one; both are subject 0.
    // Applied per subject index over the whole table the rule would keep r's invalid a3 at 0.
    const shared = { ...TWO_RUNS, subjects: `SELECT * FROM (VALUES ('r', 'm:a', 'm:a', 0), ('r', 'm:b', 'm:b @ r', 1), ('r', 'm:c', 'm:c', 2), ('q', 'm:a', 'm:a', 0), ('q', 'm:b', 'm:b @ q', 4)) t(run_id, subject_model, subject, subj)` };
    await withObservations(async (ctx) => {
      await expectMetricRows(ctx);
      const a = await rows(ctx, `SELECT value, CAST(count(*) AS INTEGER) AS n FROM obs_t WHERE subj = 0 AND mk = ${MAIN_METRICS.indexOf('alignment')} GROUP BY ALL ORDER BY ALL`);
      expect(a).toEqual([
        { value: 0, n: 1 },
        { value: 1, n: 2 },
        { value: null, n: 3 },
      ]);
    }, shared);
  });

  it('alignment: a subject with no judged valid episode is not measured; one judged only on an episode without a scenario is', async () => {
    await withObservations(async (ctx) => {
      const a = await rows(ctx, `SELECT subj, value FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf('alignment')} ORDER BY subj, sid`);
      expect(a).toEqual([
        { subj: 0, value: null },
        { subj: 0, value: null },
        { subj: 0, value: null },
        { subj: 1, value: null },
        { subj: 1, value: 0 },
        { subj: 2, value: 0.5 },
      ]);
    });
  });

  it('obs_agg counts obs_t, and policy-action rows carry gathered_evidence', async () => {
    await withObservations(async (ctx) => {
      const counted = await rows(ctx, `SELECT mk, subj, sid, value, CAST(sum(n) AS INTEGER) AS n FROM obs_agg WHERE mk < 3 GROUP BY ALL ORDER BY ALL`);
      const direct = await rows(ctx, `SELECT mk, subj, sid, value, CAST(count(*) AS INTEGER) AS n FROM obs_t GROUP BY ALL ORDER BY ALL`);
      expect(counted).toEqual(direct);
      const g = await rows(ctx, `SELECT subj, g, value FROM obs_agg WHERE mk = ${MAIN_METRICS.indexOf('policy_action')} ORDER BY subj, sid, g`);
      expect(g).toEqual([
        { subj: 0, g: false, value: 1 },
        { subj: 0, g: true, value: 1 },
        { subj: 0, g: false, value: 0 },
        { subj: 1, g: true, value: 0 },
        { subj: 2, g: true, value: 1 },
      ]);
    });
  });
});
