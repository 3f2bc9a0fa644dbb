/**
 * Issue 21, point 1 (one pipeline): the core sections are separate SuiteSections a suite composes,
 * and there is one results computation (`computeResults`, src/report/generic.ts) over an
 * observation source a suite supplies. Checked on the demo store (the Standoff O1 suite) and a
 * small CSV: a source grouped by another key gives the numbers the O1 slices section computes for
 * that key; NOANSWER rows and completed samples without a row are counted, in no denominator.
 * The O1 suite's slices (section 4) and invalid and errored episodes (section 8) are the core
 * slices and samples computations over O1's sources, shown O1's way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildContext, materializeObservations, openReportStore, MAIN_METRICS } from '../../src/report/sections/context.ts';
import { computeResults, GENERIC_SOURCE, type ObservationSource } from '../../src/report/generic.ts';
import { O1_SOURCE, resultsSection } from '../../src/report/sections/results.ts';
import { O1_SLICES, o1Slices, slicesSection, type SlicesSection } from '../../src/report/sections/slices.ts';
import { o1Episodes, type EpisodesSection } from '../../src/report/sections/episodes.ts';
import { computeSlices } from '../../src/report/core-slices.ts';
import { computeSamples, coreSamplesOf } from '../../src/report/core-samples.ts';
import { prepareCore } from '../../src/report/generic.ts';
import { CORE_SECTIONS, coreSuite, summarySection } from '../../src/report/suites/core.ts';
import { standoffO1Suite } from '../../src/report/suites/standoff-o1.ts';
import { exactInterval } from '../../src/analysis/rates.ts';
import { runCli } from '../helpers/cli.ts';

const DEMO = join(import.meta.dirname, '..', '..', 'traces');
const dir = mkdtempSync(join(tmpdir(), 'standoff-core-sections-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withCtx = async <T>(traces: string, f: (ctx: Awaited<ReturnType<typeof buildContext>>) => Promise<T>, mixedSuites = false): Promise<T> => {
  const store = await openReportStore(traces, undefined);
  try {
    return await f(await buildContext(store, { seed: 7, resamples: 500, level: 0.95, log: () => undefined, mixedSuites }));
  } finally {
    store.close();
  }
};

describe('core sections', () => {
  it('the core report is the run summary and the core sections, each its own key; the O1 suite shares the summary and the results key', () => {
    expect(coreSuite.sections().map((s) => s.key)).toEqual(['summary', 'results', 'pairwise', 'judges', 'slices', 'reconciliation', 'samples']);
    expect(coreSuite.sections().slice(1)).toEqual([...CORE_SECTIONS]);
    const o1 = standoffO1Suite.sections();
    expect(o1[0]).toBe(summarySection);
    expect(o1.filter((s) => s.key === 'results')).toHaveLength(1);
  });

  it('a source grouped by domain gives the O1 slices section\'s numbers for each domain (one results computation)', async () => {
    await withCtx(DEMO, async (ctx) => {
      await materializeObservations(ctx);
      // A suite that reports per domain: the task key is the domain, the rest is O1's source.
      const byDomain: ObservationSource = {
        ...O1_SOURCE,
        // One row per observation (obs_agg's rows repeated n times, unweighted), against the slices' counted rows (obs_agg, weighted).
        rows: `SELECT coalesce(d.domain, '(none)') AS suite, o.mk AS scorer, o.subj AS subject, o.sid AS cluster, o.value, false AS noanswer FROM obs_agg o JOIN r_dims d USING (dim), range(o.n)`,
        weight: undefined,
        label: (k, c) => ({ suite: String(k.suite), scorer: MAIN_METRICS[Number(k.scorer)], subject: c.subjects[Number(k.subject)] }),
        scorers: async (c) => {
          const domains = (await c.q(`SELECT DISTINCT coalesce(domain, '(none)') AS d FROM episodes ORDER BY d`)).map((r) => String(r.d));
          return domains.flatMap((suite) => MAIN_METRICS.map((m) => ({ suite, scorer: m, metric: m, kind: 'binary' as const, kind_reason: 'test' })));
        },
        subjects: async (c) => (await c.q(`SELECT DISTINCT coalesce(domain, '(none)') AS d FROM episodes ORDER BY d`)).flatMap((r) => c.subjects.map((subject) => ({ suite: String(r.d), subject }))),
      };
      const { cells } = await computeResults(ctx, byDomain);
      const slices = (await slicesSection(ctx)).rows.filter((r) => r.dimension === 'domain' && r.trials > 0);
      expect(slices.length).toBeGreaterThan(6);
      for (const s of slices) {
        const c = cells.find((x) => x.info.suite === s.value && x.info.scorer === s.metric && x.subject === s.subject);
        expect(c?.rate).toMatchObject({ successes: s.successes, trials: s.trials, not_measured: s.not_measured, estimate: s.estimate, interval: s.interval, exact: s.exact, cluster: s.cluster });
      }
      // Section 2 is the same computation over O1's own source.
      const r = await resultsSection(ctx);
      const o1 = await computeResults(ctx, O1_SOURCE);
      for (const s of r.subjects) for (const m of MAIN_METRICS) expect(s.metrics[m].trials).toBe(o1.cells.find((c) => c.subject === s.subject && c.info.scorer === m)!.rate!.trials);
    });
  }, 120_000);

  it('the O1 slices (section 4) are the core slices computation over O1_SLICES, in O1\'s presentation', async () => {
    await withCtx(DEMO, async (ctx) => {
      const section = standoffO1Suite.sections().find((x) => x.key === 'slices')!;
      const v = (await section.compute({ ctx, earlier: {}, slices: [], adjust: 'holm' })) as SlicesSection;
      const computed = await computeSlices(ctx, O1_SLICES, []);
      expect(computed.dimensions).toEqual(['domain', 'decision_type', 'variant']);
      expect(v).toEqual(o1Slices(ctx, computed));
      const measured = v.rows.filter((r) => r.trials > 0);
      expect(new Set(measured.map((r) => r.dimension))).toEqual(new Set(['domain', 'decision_type', 'variant']));
      for (const r of measured) {
        const c = computed.cells.find((x) => x.dimension === r.dimension && x.level === r.value && x.subject === r.subject && x.scorer === r.metric)!;
        expect(c.rate).toMatchObject({ successes: r.successes, trials: r.trials, not_measured: r.not_measured, estimate: r.estimate, interval: r.interval, exact: r.exact, cluster: r.cluster, clusters: r.scenarios });
      }
      // O1's table names every (value, metric, subject): 0/0 where a subject has no observation.
      const values = new Set(computed.cells.map((c) => `${c.dimension}/${c.level}`)).size;
      expect(v.rows).toHaveLength(values * 3 * ctx.subjects.length);
    });
  }, 120_000);

  it('the O1 invalid and errored episodes (section 8) and the core samples section are one computation (computeSamples): the same counts and reasons', async () => {
    await withCtx(DEMO, async (ctx) => {
      const section = standoffO1Suite.sections().find((x) => x.key === 'episodes')!;
      const o1 = (await section.compute({ ctx, earlier: {}, slices: [], adjust: 'holm' })) as EpisodesSection;
      await prepareCore(ctx);
      const core = await computeSamples(ctx, 'g_subject', 1000);
      expect(o1.subjects.reduce((a, s) => a + s.invalid + s.errored, 0)).toBeGreaterThan(0);
      for (const s of o1.subjects) {
        const c = core.subjects.find((x) => x.subject === s.subject)!;
        expect([c.invalid, c.errored, c.token_limit]).toEqual([s.invalid, s.errored, s.token_limit]);
        expect(c.listed.map((x) => [x.run_id, x.episode_id, x.reason])).toEqual(s.listed.map((x) => [x.run_id, x.episode_id, x.reason]));
      }
      expect(core.reasons).toEqual(o1.reasons);
      expect(o1Episodes(ctx, core)).toEqual(o1);
      // The core section keeps the counts and each subject's reasons; they add up to the overall reasons.
      const kept = coreSamplesOf(core);
      const total = new Map<string, number>();
      for (const s of kept) for (const r of s.reasons) total.set(`${r.status}/${r.reason}`, (total.get(`${r.status}/${r.reason}`) ?? 0) + r.count);
      expect(Object.fromEntries(total)).toEqual(Object.fromEntries(o1.reasons.map((r) => [`${r.status}/${r.reason}`, r.count])));
    });
  }, 120_000);

  it('NOANSWER rows and completed samples without a row are counted and in no denominator', async () => {
    const lines = ['model,item,ok'];
    for (let i = 0; i < 10; i++) {
      lines.push(`m1,i${i},${i < 7 ? 1 : 0}`);
      lines.push(`m2,i${i},${i < 4 ? '' : i % 2}`);
    }
    writeFileSync(join(dir, 'few.csv'), lines.join('\n') + '\n');
    const ing = runCli(['ingest', 'csv', join(dir, 'few.csv'), '--traces', join(dir, 'F'), '--run-id', 'f', '--subject', 'model', '--item', 'item', '--scores', 'ok']);
    expect(ing.code, ing.stderr).toBe(0);
    await withCtx(
      join(dir, 'F'),
      async (ctx) => {
        // The generic source, with the value 0 read as NOANSWER (out of the denominator, counted).
        const src: ObservationSource = { ...GENERIC_SOURCE, rows: `SELECT suite, scorer, subject, scenario_id AS cluster, value, value = 0 AS noanswer FROM g_obs` };
        const { cells } = await computeResults(ctx, src);
        const m1 = cells.find((c) => c.subject === 'm1')!;
        expect(m1).toMatchObject({ noanswer: 3, unscored: 0 });
        expect(m1.rate).toMatchObject({ successes: 7, trials: 7, not_measured: 0, estimate: 1 });
        expect(m1.rate!.exact).toEqual(exactInterval(7, 7, 0.95));
        // m2: 4 blank cells left no score row (not measured), 3 zeros (NOANSWER here), 3 ones.
        const m2 = cells.find((c) => c.subject === 'm2')!;
        expect(m2).toMatchObject({ noanswer: 3, unscored: 4 });
        expect(m2.rate).toMatchObject({ successes: 3, trials: 3 });
      },
      true,
    );
  }, 120_000);
});
