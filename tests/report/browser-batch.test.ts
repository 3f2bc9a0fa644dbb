/**
 * The episode browser answers sets that share a definition in one pass (`batch`, issue 28): the
 * 16 grounded-vs-lucky cells, the subjects' every-episode sets, each measured rate's sets, the
 * statuses, the reasons, each slice kind's cells and a scorer's judge sets (subjects' disagreements and
 * judge pairs, `judge-batch.ts`) cost one query instead of one per set; a measured set skips its join
 * back to episodes where the gate found the run's episode ids unique. Each set must still find exactly its own rows, in the same order, with the same first
 * members: checked against the per-set queries on the demo store (real Parquet, real DuckDB),
 * with a list cap that cuts most sets, and on a table with NULL epochs (ORDER BY puts them last).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, type ReportResults } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { createDb, query } from '../../src/store/duckdb.ts';
import { ALIGNMENT_MEASURED_DIRECT_SQL, buildEpisodeSets, disagreeSet } from '../../src/report/html/episode-sets.ts';
import { metricSql } from '../../src/analysis/metrics.ts';
import { buildGenericJudgePairSets } from '../../src/report/html/pair-sets.ts';
import type { GenericSections } from '../../src/report/generic.ts';
import { batchGroups, loadEpisodeBrowser, readAllMembers } from '../../src/report/html/load-episodes.ts';
import type { EpisodeSetDef, SubjectSource } from '../../src/report/html/set-types.ts';
import { ROOT } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-browser-batch-'));
const traces = join(ROOT, 'traces');
let r: ReportResults;

beforeAll(async () => {
  r = (await buildReport({ traces, out: join(dir, 'demo'), resamples: 200 })).results;
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withDemo<T>(fn: (conn: Parameters<typeof loadEpisodeBrowser>[0], defs: EpisodeSetDef[], sources: SubjectSource[]) => Promise<T>): Promise<T> {
  const store = await openStore(traces);
  try {
    const sources = (await query(store.conn, 'SELECT DISTINCT subject_model AS subject, run_id, subject_model FROM episodes ORDER BY ALL')).rows.map((x) => ({ subject: String(x.subject), run_id: String(x.run_id), subject_model: String(x.subject_model) }));
    return await fn(store.conn, buildEpisodeSets(r, sources), sources);
  } finally {
    store.close();
  }
}

describe('sets sharing a definition are answered in one pass', () => {
  it('groups the demo sets by definition: one group of 12 grounded cells, one per rate, one per slice kind', async () => {
    await withDemo(async (_conn, defs) => {
      const groups = batchGroups(defs);
      expect(groups.length).toBeLessThan(defs.length / 2);
      const keys = (g: number[]) => g.map((i) => defs[i].key);
      const grounded = groups.find((g) => defs[g[0]].key.startsWith('grounded/'))!;
      expect(keys(grounded)).toEqual(defs.filter((d) => d.key.startsWith('grounded/')).map((d) => d.key));
      expect(grounded.length).toBe(12); // 3 subjects x 4 cells
      // Four-cell sets (they count items too) stay one query each; the judge sets of a scorer (disagreements and pairs) are one group.
      for (const g of groups.filter((x) => /^four:/.test(defs[x[0]].key))) expect(g.length).toBe(1);
      const judge = groups.filter((x) => /^(judges-differ:|disagree\/)/.test(defs[x[0]].key));
      expect(judge.length).toBe(1);
      expect(keys(judge[0])).toEqual(defs.filter((d) => /^(judges-differ:|disagree\/)/.test(d.key)).map((d) => d.key));
      expect(judge[0].length).toBeGreaterThan(3);
      expect(batchGroups(defs, false).length).toBe(defs.length);
      // A group with more rows than the bound goes one query per set (arg_min has no early cut-off).
      const cut = batchGroups(defs, true, 100);
      expect(cut.flat().sort((a, b) => a - b)).toEqual(defs.map((_, i) => i));
      for (const g of cut.filter((x) => x.length > 1 && defs[x[0]].judge === undefined)) expect(g.reduce((s, i) => s + defs[i].count, 0)).toBeLessThanOrEqual(100);
      expect(cut.length).toBeGreaterThan(groups.length);
      expect(cut.find((g) => g.includes(grounded[0]))).toEqual(grounded.reduce((s, i) => s + defs[i].count, 0) > 100 ? [grounded[0]] : grounded);
    });
  }, 120_000);

  it('finds the same members and counts as one query per set, with a list cap that cuts the sets and without', async () => {
    await withDemo(async (conn, defs, sources) => {
      for (const listCap of [2, 7, 1000]) {
        const one = await readAllMembers(conn, defs, listCap, false);
        const batched = await readAllMembers(conn, defs, listCap, true);
        expect(batched).toEqual(one);
        expect(one.some((m, i) => m.length < defs[i].count)).toBe(listCap < 1000);
      }
      const a = await loadEpisodeBrowser(conn, defs, sources, { listCap: 3, batch: false });
      const b = await loadEpisodeBrowser(conn, defs, sources, { listCap: 3 });
      expect(b).toEqual(a);
    });
  }, 120_000);

  it("a batched set whose count is not the report's stops the build, naming the set", async () => {
    await withDemo(async (conn, defs, sources) => {
      const i = defs.findIndex((d) => d.key.startsWith('grounded/') && d.count > 0);
      const bad = defs.map((d, k) => (k === i ? { ...d, count: d.count + 1 } : d));
      expect(batchGroups(bad).find((g) => g.includes(i))!.length).toBeGreaterThan(1);
      await expect(loadEpisodeBrowser(conn, bad, sources)).rejects.toThrow(new RegExp(`"${defs[i].key}" finds ${defs[i].count} episodes but the report counts ${defs[i].count + 1}`));
    });
  }, 120_000);

  it('keeps the first members in SET_ORDER with NULL epochs last, as the per-set ORDER BY does', async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      await conn.run(`CREATE TABLE episodes AS SELECT 'r' || (i % 2) AS run_id, 'ep' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model,
        's' || (i % 4) AS scenario_id, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END AS epoch FROM range(120) t(i)`);
      const sql = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e WHERE e.run_id = $run AND e.subject_model = $model
ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id`;
      const batch = `SELECT p.set_idx, e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN p ON e.run_id = p.run AND e.subject_model = p.model`;
      const defs: EpisodeSetDef[] = [];
      for (const run of ['r0', 'r1']) for (const model of ['m0', 'm1', 'm2', 'mx']) defs.push({ key: `${run}/${model}`, title: '', count: model === 'mx' ? 0 : 20, sql, batch, params: { run, model } });
      for (const cap of [1, 6, 19, 50]) expect(await readAllMembers(conn, defs, cap, true)).toEqual(await readAllMembers(conn, defs, cap, false));
      const [first] = await readAllMembers(conn, defs.slice(0, 2), 20, true);
      const rows = (await query(conn, `SELECT episode_id FROM episodes WHERE run_id = 'r0' AND subject_model = 'm0' ORDER BY run_id, scenario_id, epoch, episode_id`)).rows.map((x) => String(x.episode_id));
      expect(first.map((m) => m[1])).toEqual(rows);
      expect((await query(conn, `SELECT count(*) AS n FROM episodes WHERE run_id = 'r0' AND subject_model = 'm0' AND epoch IS NULL`)).rows[0].n).toBeGreaterThan(0);
    } finally {
      conn.closeSync();
    }
  });
  it("one query per set lists exactly the set's own ORDER BY ... LIMIT rows (NULL scenarios and epochs last, repeated rows kept) and counts them all", async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      await conn.run(`CREATE TABLE episodes AS SELECT 'r' || (i % 2) AS run_id, 'ep' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model,
        CASE WHEN i % 11 = 0 THEN NULL ELSE 's' || (i % 4) END AS scenario_id, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END AS epoch FROM range(150) t(i)`);
      // Every row twice (a set can repeat an episode, as a four-cell set's UNION ALL can).
      const sql = `SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e, range(2) d WHERE e.run_id = $run AND e.subject_model = $model
ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id`;
      const defs: EpisodeSetDef[] = [];
      for (const run of ['r0', 'r1']) for (const model of ['m0', 'm1', 'm2', 'mx']) defs.push({ key: `${run}/${model}`, title: '', count: model === 'mx' ? 0 : 50, sql, params: { run, model } });
      expect((await query(conn, `SELECT count(*) AS n FROM episodes WHERE scenario_id IS NULL AND epoch IS NOT NULL AND run_id = 'r0' AND subject_model = 'm1'`)).rows[0].n).toBeGreaterThan(0);
      for (const cap of [1, 7, 33, 50, 200]) {
        const got = await readAllMembers(conn, defs, cap, false);
        for (const [i, d] of defs.entries()) {
          const want = (await query(conn, `${sql} LIMIT ${cap}`, d.params)).rows.map((x) => [String(x.run_id), String(x.episode_id)]);
          expect(got[i]).toEqual(want);
        }
      }
      const bad = defs.map((d, k) => (k === 1 ? { ...d, count: 49 } : d));
      await expect(readAllMembers(conn, bad, 10, false)).rejects.toThrow(/"r0\/m1" finds 50 episodes but the report counts 49/);
      const empty = defs.map((d, k) => (k === 3 ? { ...d, count: 1 } : d));
      await expect(readAllMembers(conn, empty, 10, false)).rejects.toThrow(/"r0\/mx" finds 0 episodes but the report counts 1/);
    } finally {
      conn.closeSync();
    }
  });

  it("answers a scorer's judge sets (disagreements and pairs) in one pass with each set's own rows: self-excluded and ERROR verdicts, a judge's repeated verdicts, unnamed judges, repeated episode ids", async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      // 90 episodes over 2 runs and 3 models; ep005 and ep010 stored twice (once with another epoch), epochs sometimes NULL.
      await conn.run(`CREATE TABLE episodes AS SELECT 'r' || (i % 2) AS run_id, 'ep' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model,
        's' || (i % 7) AS scenario_id, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 4 END AS epoch FROM range(90) t(i)
        UNION ALL SELECT 'r1', 'ep005', 'm2', 's5', 1 UNION ALL SELECT 'r0', 'ep010', 'm1', 's3', 3`);
      // Three named judges and an unnamed one; values 0/1 or NULL (ERROR); some verdicts self-excluded; judge ja twice on some episodes; another scorer's rows.
      await conn.run(`CREATE TABLE judgments AS SELECT e.run_id, e.episode_id, sc AS scorer, j.judge_model,
          CASE WHEN (i + k) % 11 = 0 THEN NULL ELSE CAST((i * (k + 2) + rep) % 3 > 0 AS DOUBLE) END AS value, (i + 2 * k) % 13 = 0 AS excluded_self
        FROM (SELECT *, CAST(substr(episode_id, 3) AS INTEGER) AS i FROM (SELECT DISTINCT run_id, episode_id FROM episodes)) e,
          (VALUES (0, 'ja'), (1, 'jb'), (2, 'jc'), (3, NULL)) j(k, judge_model), range(2) r(rep), (VALUES ('s'), ('other')) t(sc)
        WHERE (rep = 0 OR (k = 0 AND i % 4 = 0)) AND (k <> 3 OR i % 5 = 0) AND (k <> 2 OR i % 6 <> 1)`);
      const g = { judges: [{ scorer: 's', pairs: [['ja', 'jb'], ['ja', 'jc'], ['jb', 'jc'], ['ja', 'jnone']].map(([a, b]) => ({ a, b, bothRated: 0, agreements: 0 })) }] } as unknown as GenericSections;
      const raw = [
        ...['m0', 'm1', 'm2', 'mx'].flatMap((model) => ['r0', 'r1'].map((run) => disagreeSet(`${run}/${model}`, { subject: model, run_id: run, subject_model: model }, 's', 0))),
        ...buildGenericJudgePairSets(g),
      ];
      const defs: EpisodeSetDef[] = [];
      for (const d of raw) defs.push({ ...d, count: Number((await query(conn, `SELECT count(*) AS n FROM (${d.sql})`, d.params)).rows[0].n) });
      expect(batchGroups(defs)).toEqual([defs.map((_, i) => i)]);
      expect(defs.filter((d) => d.count > 0).length).toBe(8); // two subjects' sets, a pair naming a judge without verdicts and the unknown model are empty
      for (const cap of [1, 5, 40]) expect(await readAllMembers(conn, defs, cap, true)).toEqual(await readAllMembers(conn, defs, cap, false));
      // Above `maxJudgments` of the scorer the sets are one query each (the pivot's memory at 1e7), with the same members.
      const seen: string[] = [];
      const spy = new Proxy(conn, {
        get(t, k) {
          const v = Reflect.get(t, k) as unknown;
          return typeof v === 'function' ? (...a: unknown[]) => (typeof a[0] === 'string' && seen.push(a[0]), (v as (...x: unknown[]) => unknown).apply(t, a)) : v;
        },
      });
      const pivoted = () => seen.some((q) => q.includes(' AS el FROM judgments'));
      const [{ n }] = (await query(conn, `SELECT count(*) AS n FROM judgments WHERE scorer = 's'`)).rows;
      expect(await readAllMembers(spy, defs, 5, true, Number(n))).toEqual(await readAllMembers(conn, defs, 5, false));
      expect(pivoted()).toBe(true);
      seen.length = 0;
      expect(await readAllMembers(spy, defs, 5, true, Number(n) - 1)).toEqual(await readAllMembers(conn, defs, 5, false));
      expect(pivoted()).toBe(false);
      expect(seen.length).toBeGreaterThan(defs.length);
      for (const i of [0, defs.length - 2]) {
        const bad = defs.map((d, k) => (k === i ? { ...d, count: d.count + 1 } : d));
        await expect(readAllMembers(conn, bad, 10, true)).rejects.toThrow(`"${defs[i].key}" finds ${defs[i].count} episodes but the report counts ${defs[i].count + 1}`);
      }
    } finally {
      conn.closeSync();
    }
  });

  it("the alignment set's shortcut reads its rows without the metric's window: the same members, a subject none of whose valid episodes was judged measures nothing", async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      // Model m0: valid and invalid episodes, some scores NULL. m1: only its invalid episodes scored (not measured at all, by the metric's window).
      // m2: its one scored valid episode is the last row. Errored episodes and another scorer's rows are left out by both.
      await conn.run(`CREATE TABLE episodes AS SELECT 'r0' AS run_id, 'ep' || lpad(CAST(i AS VARCHAR), 3, '0') AS episode_id, 'm' || (i % 3) AS subject_model, 's' || (i % 7) AS scenario_id, i % 4 AS epoch, 'd' || (i % 2) AS domain, 'x' AS decision_type, NULL::VARCHAR AS variant,
        CASE WHEN i % 5 = 0 THEN 'invalid' WHEN i % 11 = 0 THEN 'error' ELSE 'valid' END AS status FROM range(120) t(i)`);
      await conn.run(`CREATE TABLE scores AS SELECT e.run_id, e.episode_id, sc AS scorer,
          CASE WHEN sc = 'reasoning_action_alignment' AND e.subject_model = 'm1' AND e.status = 'valid' THEN NULL
               WHEN sc = 'reasoning_action_alignment' AND e.subject_model = 'm2' AND e.status = 'valid' AND e.episode_id <> 'ep119' THEN NULL
               WHEN CAST(substr(e.episode_id, 3) AS INTEGER) % 6 = 1 THEN NULL ELSE CAST(substr(e.episode_id, 3) AS INTEGER) % 2 END AS value
        FROM episodes e, (VALUES ('reasoning_action_alignment'), ('policy_compliant_action')) v(sc)`);
      await conn.run(`ALTER TABLE scores ADD COLUMN noanswer BOOLEAN DEFAULT false`);
      const sql = `SELECT o.run_id, o.episode_id, o.scenario_id, o.epoch FROM ${metricSql('alignment')} o WHERE o.run_id = $run AND o.subject_model = $model AND o.value IS NOT NULL`;
      expect(ALIGNMENT_MEASURED_DIRECT_SQL).not.toMatch(/\bOVER\b/);
      const counts: number[] = [];
      for (const model of ['m0', 'm1', 'm2', 'mx']) {
        const params = { run: 'r0', model };
        const order = ' ORDER BY run_id, scenario_id, epoch, episode_id';
        const want = (await query(conn, sql + order, params)).rows;
        expect((await query(conn, `SELECT * FROM (${ALIGNMENT_MEASURED_DIRECT_SQL})${order}`, params)).rows).toEqual(want);
        counts.push(want.length);
        const d: EpisodeSetDef = { key: model, title: '', count: want.length, sql, direct: ALIGNMENT_MEASURED_DIRECT_SQL, params };
        expect(await readAllMembers(conn, [d], 5, false)).toEqual(await readAllMembers(conn, [{ ...d, direct: undefined }], 5, false));
      }
      // m1's scored rows are all invalid episodes: the metric measures none of them; m2 is measured through its last row only.
      expect((await query(conn, `SELECT count(*) AS n FROM scores s JOIN episodes e USING (run_id, episode_id) WHERE e.subject_model = 'm1' AND s.scorer = 'reasoning_action_alignment' AND s.value IS NOT NULL`)).rows[0].n).toBeGreaterThan(0);
      expect(counts[1]).toBe(0);
      expect(counts[0]).toBeGreaterThan(10);
      expect(counts[2]).toBeGreaterThan(5);
    } finally {
      conn.closeSync();
    }
  });

  it("a measured set skips its join back to episodes only where the gate found the run's episode ids unique, and finds the same members", async () => {
    await withDemo(async (conn, defs, sources) => {
      const measured = defs.filter((d) => d.key.startsWith('measured/'));
      expect(measured.length).toBeGreaterThan(3);
      for (const d of measured) expect(d.direct).toBeDefined();
      const plain = (list: EpisodeSetDef[]) => list.map(({ direct: _d, ...d }) => ({ ...d, batch: undefined }));
      for (const listCap of [3, 1000]) {
        expect(await readAllMembers(conn, measured, listCap, false)).toEqual(await readAllMembers(conn, plain(measured), listCap, false));
        expect(await readAllMembers(conn, measured, listCap, true)).toEqual(await readAllMembers(conn, plain(measured), listCap, false));
      }
      // A gate that found a run's episode ids repeated (or no gate): the set's own SQL.
      const gate = { ...r.gate, checks: r.gate.checks.map((c) => (c.check.startsWith('unique_episodes') ? { ...c, passed: false } : c)) };
      expect(r.gate.checks.some((c) => c.check.startsWith('unique_episodes') && c.passed)).toBe(true);
      for (const g of [gate, undefined]) {
        const again = buildEpisodeSets({ ...r, gate: g } as ReportResults, sources).filter((d) => d.key.startsWith('measured/'));
        expect(again.map((d) => d.key)).toEqual(measured.map((d) => d.key));
        for (const d of again) expect(d.direct).toBeUndefined();
        for (const d of again) expect(d.batch).toContain('JOIN episodes e');
      }
    });
  }, 120_000);
});
