/**
 * Runs one report section on a store in this process and prints `ok <section> <ms>` (the memory
 * test starts it with a small --max-old-space-size: a section that holds one JavaScript value per
 * episode runs out of heap at 1e6 episodes and the process dies).
 *
 *   node --max-old-space-size=MB --import tsx tests/helpers/run-section.ts STORE SECTION
 */
import { buildContext, materializeObservations, openReportStore } from '../../src/report/sections/context.ts';
import { runSummary } from '../../src/report/sections/summary.ts';
import { resultsSection } from '../../src/report/sections/results.ts';
import { groundedSection } from '../../src/report/sections/grounded.ts';
import { slicesSection } from '../../src/report/sections/slices.ts';
import { pairwiseSection } from '../../src/report/suites/o1-pairwise.ts';
import { rankingSection } from '../../src/report/sections/ranking.ts';
import { judgesSection } from '../../src/report/sections/judges.ts';
import { probesSection } from '../../src/report/sections/probes.ts';
import { episodesSection } from '../../src/report/sections/episodes.ts';
import type { ReportContext } from '../../src/report/sections/context.ts';

export const SECTIONS: Record<string, (ctx: ReportContext) => Promise<unknown>> = {
  summary: runSummary,
  results: resultsSection,
  grounded: groundedSection,
  slices: slicesSection,
  pairwise: (ctx) => pairwiseSection(ctx),
  /** The pairwise section, then the ranking from the totals it kept (as the report runs them). */
  ranking: async (ctx) => {
    await pairwiseSection(ctx);
    return rankingSection(ctx);
  },
  judges: judgesSection,
  probes: probesSection,
  episodes: episodesSection,
  /** Not a section: what the cap must catch (one plain row object per episode, as the report once held). */
  'rows-per-episode': async (ctx) => (await ctx.q('SELECT run_id, episode_id, scenario_id, epoch, status FROM episodes')).length,
};

const [store, section] = process.argv.slice(2);
const run = SECTIONS[section];
if (!run) throw new Error(`unknown section ${section}`);
const s = await openReportStore(store, undefined);
try {
  const ctx = await buildContext(s, { seed: 20261129, resamples: 10_000, level: 0.95, log: () => undefined });
  const t = performance.now();
  if (section !== 'summary') await materializeObservations(ctx);
  await run(ctx);
  process.stdout.write(`ok ${section} ${Math.round(performance.now() - t)}\n`);
} finally {
  s.close();
}
