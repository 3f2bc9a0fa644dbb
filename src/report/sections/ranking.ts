/**
 * Ranking section (issue 26), for stores with three or more subjects: per main metric, each
 * subject's rate with its interval, rank and rank interval (cluster bootstrap over scenarios) and
 * tier letters (compact letter display over Holm-adjusted clustered paired z-tests), the same
 * numbers as `standoff rank --metric M` (both call `buildRanking`), and a rank-interval figure.
 *
 * A subsection of the pairwise comparisons in the Standoff O1 suite (`suites/standoff-o1.ts`).
 */
import { buildRanking, type RankResult, type RankData } from '../../decide/rank.ts';
import { itemKey, type TaskValues } from '../../decide/side.ts';
import { float64Column } from '../../store/arrow.ts';
import { cell, fixed, pct, pctInterval, table } from '../markdown.ts';
import { baseConfig, type FigureSpec } from '../figures.ts';
import { MAIN_METRICS, METRIC_LABEL, type MainMetric, type ReportContext } from './context.ts';

export const RANK_METRICS: MainMetric[] = ['gathered_evidence', 'policy_action'];

export interface RankingSection {
  rankings: RankResult[];
}

/** The section's numbers, or null with fewer than three subjects. */
export async function rankingSection(ctx: ReportContext): Promise<RankingSection | null> {
  if (ctx.subjects.length < 3) return null;
  const rankings: RankResult[] = [];
  for (const metric of RANK_METRICS) {
    const t = await ctx.arrow(`SELECT subj, sid, epoch, value FROM obs_t WHERE mk = ${MAIN_METRICS.indexOf(metric)} AND value IS NOT NULL ORDER BY subj, sid, epoch`);
    const subj = float64Column(t, 'subj');
    const sid = float64Column(t, 'sid');
    const epoch = float64Column(t, 'epoch');
    const value = float64Column(t, 'value');
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
    rankings.push(buildRanking(data, metric, 'subject_model', { level: ctx.level, seed: ctx.seed, resamples: Math.min(ctx.resamples, 2000) }));
  }
  return rankings.length ? { rankings } : null;
}

/** The section as Markdown. */
export function renderRanking(s: RankingSection): string {
  const out = ['### Ranking', ''];
  for (const r of s.rankings) {
    out.push(`#### ${METRIC_LABEL[r.metric as MainMetric] ?? cell(r.metric)}`, '');
    out.push(
      table(
        ['subject', 'rate', `${Math.round(r.level * 100)}% CI`, 'rank', 'rank interval', 'tier'],
        r.rows.map((x) => [cell(x.subject), pct(x.estimate), pctInterval(x.lower, x.upper), fixed(x.rank, 1), `${fixed(x.rank_lower, 1)} - ${fixed(x.rank_upper, 1)}`, cell(x.tier)]),
        ['l', 'r', 'r', 'r', 'r', 'l'],
      ),
      '',
    );
  }
  out.push(`Rank intervals: 2.5% and 97.5% points of each subject's rank over ${s.rankings[0].resamples} cluster-bootstrap resamples (seed ${s.rankings[0].seed}). Tiers: ${s.rankings[0].tier_rule}.`, '');
  return out.join('\n');
}

/** Vega-Lite: each subject's rank (point) and rank interval (rule), one panel per metric. */
export function rankIntervalSpec(s: RankingSection): Record<string, unknown> {
  const values = s.rankings.flatMap((r) => r.rows.map((x) => ({ metric: r.metric, subject: x.subject, rank: x.rank, lower: x.rank_lower, upper: x.rank_upper, tier: x.tier })));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    config: baseConfig(),
    data: { values },
    facet: { column: { field: 'metric', type: 'nominal', title: null } },
    spec: {
      width: 220,
      height: { step: 28 },
      layer: [
        { mark: { type: 'rule', strokeWidth: 2 }, encoding: { y: { field: 'subject', type: 'nominal', title: null }, x: { field: 'lower', type: 'quantitative', title: 'rank (1 = best)', scale: { reverse: true } }, x2: { field: 'upper' } } },
        { mark: { type: 'point', filled: true, size: 60 }, encoding: { y: { field: 'subject', type: 'nominal' }, x: { field: 'rank', type: 'quantitative' } } },
        { mark: { type: 'text', dx: 12, align: 'left' }, encoding: { y: { field: 'subject', type: 'nominal' }, x: { field: 'upper', type: 'quantitative' }, text: { field: 'tier' } } },
      ],
    },
  };
}

/** The rank-interval figure (figures/ranking.*). */
export function rankingFigure(s: RankingSection): FigureSpec {
  return { name: 'ranking', caption: "Each subject's rank (point) and its rank interval from the cluster bootstrap (rule), with its tier letters; 1 is best.", spec: rankIntervalSpec(s) };
}
