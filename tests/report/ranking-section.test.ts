/**
 * The report's Ranking subsection (src/report/sections/ranking.ts, under the pairwise comparisons of the Standoff O1 suite):
 * on the demo store it gives the same rows as `standoff rank` (both call buildRanking on the same
 * pairs), renders a Markdown table, and its rank-interval spec renders.
 */
import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { buildContext, materializeObservations, openReportStore } from '../../src/report/sections/context.ts';
import { rankingSection, renderRanking, rankIntervalSpec } from '../../src/report/sections/ranking.ts';
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
});
