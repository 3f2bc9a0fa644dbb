/**
 * Episode sets behind the report's paired counts (see `episode-sets.ts` for what a set is):
 *
 * - the four cells of a paired comparison of a 0/1 scorer (both right, only A right, only B
 *   right, both wrong; `four-cell.ts`): the samples of A and of B on the items of the cell, so a
 *   cell of N items opens 2N samples, A's and B's side by side;
 * - a judge pair's disagreements (the agreement cells of the judges sections): the samples both
 *   judges graded on which their values differ, exactly the complement of the "agree" count.
 *
 * Each set's SQL is its definition over the store's own tables, its values bound as parameters,
 * and the loader checks that it finds exactly the count the report printed.
 */
import { scorerMetric, scorerMetricName } from '../../analysis/metrics.ts';
import type { GenericSections } from '../generic.ts';
import type { ReportResults } from '../report-results.ts';
import { FOUR_CELL_HEADERS, FOUR_CELL_KEYS, FOUR_CELL_LINKED, type FourCellCounts } from '../four-cell.ts';
import type { EpisodeSetDef, GenericSubjectSource } from './set-types.ts';
import { judgePairSetKey } from '../sections/judges.ts';

/** A key that cannot collide whatever the names hold. */
const keyOf = (kind: string, parts: string[]) => `${kind}:${JSON.stringify(parts)}`;

export const fourCellKey = (suite: string, scorer: string, a: string, b: string, cell: keyof FourCellCounts) => keyOf('four', [suite, scorer, a, b, cell]);
/** The one key of a judge pair's disagreement set (`judgePairSetKey`, which results.json and the judge figure carry). */
export const judgePairKey = judgePairSetKey;

/** Samples of A and of B on the items (scenario x epoch) where A's value is $aright and B's $bright. */
const fourCellSql = (scorer: string) => `WITH o AS (${scorerMetric(scorer).sql}),
a AS (SELECT run_id, episode_id, scenario_id, epoch, value FROM o WHERE run_id = $runa AND subject_model = $modela AND value IS NOT NULL),
b AS (SELECT run_id, episode_id, scenario_id, epoch, value FROM o WHERE run_id = $runb AND subject_model = $modelb AND value IS NOT NULL),
p AS (SELECT a.run_id AS ra, a.episode_id AS ea, b.run_id AS rb, b.episode_id AS eb FROM a JOIN b ON a.scenario_id = b.scenario_id AND a.epoch = b.epoch
      WHERE (a.value = 1) = $aright AND (b.value = 1) = $bright)
SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN (SELECT ra AS run_id, ea AS episode_id FROM p UNION ALL SELECT rb, eb FROM p) x
  ON x.run_id = e.run_id AND x.episode_id = e.episode_id
ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id`;

const CELL_TRUTH: Record<keyof FourCellCounts, [boolean, boolean]> = { both_right: [true, true], only_a: [true, false], only_b: [false, true], both_wrong: [false, false] };

/** The four-cell sets of the binary comparisons of a generic report (the first FOUR_CELL_LINKED, as the table says). */
export function buildFourCellSets(g: GenericSections, sources: GenericSubjectSource[]): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  const several = g.suites.length > 1;
  for (const c of g.pairwise.comparisons.filter((x) => x.four_cell).slice(0, FOUR_CELL_LINKED)) {
    const four = c.four_cell;
    const sa = sources.find((s) => s.suite === c.suite && s.subject === c.a);
    const sb = sources.find((s) => s.suite === c.suite && s.subject === c.b);
    if (!four || !sa || !sb) continue;
    FOUR_CELL_KEYS.forEach((k, i) => {
      const n = four[k];
      const [aright, bright] = CELL_TRUTH[k];
      const title = `${several ? `${c.suite} · ` : ''}${scorerMetricName(c.scorer)} · A = ${c.a}, B = ${c.b} · ${FOUR_CELL_HEADERS[i].toLowerCase()}: ${n} item${n === 1 ? '' : 's'}, their ${2 * n} samples (A's and B's)`;
      const params = { scorer: c.scorer, runa: sa.run_id, modela: sa.subject_model, runb: sb.run_id, modelb: sb.subject_model, aright, bright };
      sets.push({ key: fourCellKey(c.suite, c.scorer, c.a, c.b, k), title, count: 2 * n, sql: fourCellSql(c.scorer), params });
    });
  }
  return sets;
}

/** A judge's value on a sample is its max (ERROR: none), self-excluded verdicts included, as the one judges section (`sections/judges.ts`, from `loadJudgePatterns`) counts its pairs, in every suite. */
const JUDGE_DIFFER_SQL = `WITH j AS (SELECT run_id, episode_id, max(value) FILTER (WHERE judge_model = $ja) AS a, max(value) FILTER (WHERE judge_model = $jb) AS b
  FROM judgments WHERE scorer = $scorer AND judge_model IN ($ja, $jb) GROUP BY run_id, episode_id)
SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM j JOIN episodes e ON e.run_id = j.run_id AND e.episode_id = j.episode_id
WHERE j.a IS NOT NULL AND j.b IS NOT NULL AND j.a <> j.b
ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id`;

/** The disagreement sets of every judge pair of a generic report. */
export function buildGenericJudgePairSets(g: GenericSections): EpisodeSetDef[] {
  return g.judges.flatMap((j) =>
    j.pairs.map((p) => ({
      key: judgePairKey(j.scorer, p.a, p.b),
      title: `${j.scorer} · ${p.a} and ${p.b} gave different values: ${p.bothRated - p.agreements} of the ${p.bothRated} samples both graded`,
      count: p.bothRated - p.agreements,
      sql: JUDGE_DIFFER_SQL,
      params: { scorer: j.scorer, ja: p.a, jb: p.b },
    })),
  );
}

/** The disagreement sets of the Standoff report's judge pairs ("Agreement per judge pair"). */
export function buildStandoffJudgePairSets(r: ReportResults): EpisodeSetDef[] {
  if (!r.judges.available) return [];
  return r.judges.pairs.map((p) => ({
    key: judgePairKey(r.judges.scorer, p.a, p.b),
    title: `${r.judges.scorer} · ${p.a} and ${p.b} disagree: ${p.bothRated - p.agreements} of the ${p.bothRated} samples both rated`,
    count: p.bothRated - p.agreements,
    sql: JUDGE_DIFFER_SQL,
    params: { scorer: r.judges.scorer, ja: p.a, jb: p.b },
  }));
}
