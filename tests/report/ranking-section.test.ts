/**
 * The report's Ranking subsection (src/report/sections/ranking.ts, under the pairwise comparisons of the Standoff O1 suite):
 * on the demo store it gives the same rows as `standoff rank` (both call buildRanking on the same
 * pairs), renders a Markdown table, and its rank-interval spec renders. The section reads per-cluster
 * totals from SQL (loadRankTotals); on stores with gaps (errored episodes, NOANSWER, a subject
 * missing scenarios, NULL epochs, more than 10 scenarios so text and numeric order differ) its
 * result equals, to the last bit, the per-item path it replaced (buildRanking on item maps).
 */
import { describe, it, expect } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildContext, materializeObservations, openReportStore, MAIN_METRICS, type ReportContext } from '../../src/report/sections/context.ts';
import { rankingSection, renderRanking, rankIntervalSpec, RANK_METRICS, textOrderPlaces } from '../../src/report/sections/ranking.ts';
import { o1PairFamilies } from '../../src/report/suites/o1-pairwise.ts';
import { buildRanking, type RankData, type RankResult } from '../../src/decide/rank.ts';
import { itemKey, type TaskValues } from '../../src/decide/side.ts';
import { float64Column } from '../../src/store/arrow.ts';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { loadRanking } from '../../src/decide/load-rank.ts';
import { renderFigure } from '../../src/report/render-figure.ts';

const DEMO = join(import.meta.dirname, '..', '..', 'traces');

describe('report ranking section', () => {
  it('matches standoff rank on the demo store and renders', async () => {
    const store = await openReportStore(DEMO, undefined);
    try {
      const ctx = await buildContext(store, { seed: 7, resamples: 500, level: 0.95, log: () => undefined });
      await materializeObservations(ctx);
      const s = (await rankingSection(ctx))!;
      expect(s.rankings.map((r) => r.metric)).toEqual(['gathered_evidence', 'policy_action']);
      const cli = await loadRanking({ traces: DEMO, metric: 'gathered_evidence', seed: 7, resamples: 500, level: 0.95 });
      const strip = (rows: { subject: string; estimate: number; rank: number; tier: string; observations: number }[]) => rows.map((x) => [x.subject, x.estimate, x.rank, x.tier, x.observations]);
      expect(strip(s.rankings[0].rows)).toEqual(strip(cli.rows));
      // The same pairs summed in another order (scenario index vs id): equal to rounding.
      s.rankings[0].pairs.forEach((p, i) => expect(Math.abs(p.p_holm! - cli.pairs[i].p_holm!)).toBeLessThanOrEqual(1e-12 * cli.pairs[i].p_holm!));
      const md = renderRanking(s);
      expect(md).toContain("### Ranking");
      expect(md).toMatch(/\| sim:thorough \| 100\.0% \|/);
      const fig = await renderFigure(rankIntervalSpec(s));
      expect(fig.svg).toContain('sim:hasty');
    } finally {
      store.close();
    }
  }, 60_000);

  it('per-cluster totals give the per-item path\'s rankings to the last bit, on stores with gaps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'standoff-rank-totals-'));
    try {
      await writeSyntheticStore(dir, { episodes: 4 * 40 * 3, seed: 11, subjects: ['sim:hasty', 'sim:careful', 'sim:thorough', 'sim:steady'], epochs: 3, errorRate: 0.15 });
      for (const edit of [
        [],
        // subject 0 misses scenarios (the bootstrap's cluster order then starts with subject 1's), NULL epochs
        ['DELETE FROM obs_mem.obs_t WHERE subj = 0 AND sid % 7 = 3', 'UPDATE obs_mem.obs_t SET epoch = NULL WHERE epoch = 1 AND sid % 5 = 2'],
        // a subject with no observations at all, one in a single scenario
        ['DELETE FROM obs_mem.obs_t WHERE subj = 2', 'DELETE FROM obs_mem.obs_t WHERE subj = 1 AND sid <> 4'],
      ]) {
        const store = await openReportStore(dir, undefined);
        try {
          const ctx = await buildContext(store, { seed: 5, resamples: 400, level: 0.9, log: () => undefined });
          await materializeObservations(ctx);
          for (const sql of edit) await ctx.conn.run(sql);
          const s = await rankingSection(ctx);
          const rows = await rowPath(ctx);
          expect(s?.rankings ?? []).toEqual(rows);
          // The totals the pairwise section folds from its own pivot and leaves for the ranking: the same.
          await o1PairFamilies(ctx);
          expect((await rankingSection(ctx))?.rankings ?? []).toEqual(rows);
          // Repeated rows of a subject on an item (max, not the mean, is the ranking's value): the
          // pairwise pivot leaves no totals and the ranking reads its own, the same as without pairwise.
          await ctx.conn.run(`INSERT INTO obs_mem.obs_t SELECT mk, subj, sid, epoch, 1 - value FROM obs_t WHERE sid % 4 = 1 AND value = 0`);
          const alone = await rankingSection(ctx);
          await o1PairFamilies(ctx);
          expect(await rankingSection(ctx)).toEqual(alone);
          if (edit.length === 0) expect(alone?.rankings ?? []).not.toEqual(rows);
          if (edit.length === 0) expect(rows.length).toBe(2);
        } finally {
          store.close();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('textOrderPlaces', () => {
  it('places integers as ORDER BY CAST(sid AS VARCHAR) does', () => {
    for (const sids of [[0], [5], [0, 1, 2, 9, 10, 11, 19, 20, 99, 100, 101, 110, 999, 1000, 1001], Array.from({ length: 1234 }, (_, i) => i), Array.from({ length: 700 }, (_, i) => 3 * i + (i % 7 === 0 ? 1 : 0)).filter((x, i, a) => i === 0 || x > a[i - 1])]) {
      const text = sids.map(String).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const want = sids.map((x) => text.indexOf(String(x)));
      expect(Array.from(textOrderPlaces(Int32Array.from(sids)))).toEqual(want);
    }
    expect(Array.from(textOrderPlaces(new Int32Array(0)))).toEqual([]);
  });
});

/** The section's former data path: one map entry per observation, buildRanking on item maps. */
async function rowPath(ctx: ReportContext): Promise<RankResult[]> {
  const out: RankResult[] = [];
  for (const metric of RANK_METRICS) {
    const t = await ctx.arrow(`SELECT subj, sid, epoch, value FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} AND value IS NOT NULL ORDER BY subj, sid, epoch`);
    const [subj, sid, epoch, value] = ['subj', 'sid', 'epoch', 'value'].map((c) => float64Column(t, c));
    const bySubject = new Map<string, TaskValues>();
    for (let i = 0; i < value.length; i++) {
      const name = ctx.subjects[subj[i]];
      let v = bySubject.get(name);
      if (!v) bySubject.set(name, (v = { values: new Map(), cluster: new Map() }));
      const k = itemKey(String(sid[i]), epoch[i]);
      v.values.set(k, value[i]);
      v.cluster.set(k, String(sid[i]));
    }
    if (bySubject.size < 3) continue;
    const data: RankData = new Map([[ctx.suite, bySubject]]);
    out.push(buildRanking(data, metric, 'subject_model', { level: ctx.level, seed: ctx.seed, resamples: Math.min(ctx.resamples, 2000) }));
  }
  return out;
}
