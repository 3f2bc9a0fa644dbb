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
import { metricSql, scorerMetric, scorerMetricName } from '../../analysis/metrics.ts';
import type { Comparison } from '../sections/pairwise.ts';
import { METRIC_LABEL, type MainMetric } from '../sections/context.ts';
import type { GenericSections } from '../generic.ts';
import type { ReportResults } from '../report-results.ts';
import { FOUR_CELL_HEADERS, FOUR_CELL_KEYS, FOUR_CELL_LINKED, type FourCellCounts } from '../four-cell.ts';
import type { EpisodeSetDef, GenericSubjectSource, SubjectSource } from './set-types.ts';
import { judgePairSetKey } from '../sections/judges.ts';

/** A key that cannot collide whatever the names hold. */
const keyOf = (kind: string, parts: string[]) => `${kind}:${JSON.stringify(parts)}`;

export const fourCellKey = (suite: string, scorer: string, a: string, b: string, cell: keyof FourCellCounts) => keyOf('four', [suite, scorer, a, b, cell]);
/** The one key of a judge pair's disagreement set (`judgePairSetKey`, which results.json and the judge figure carry). */
export const judgePairKey = judgePairSetKey;

/** Samples of A and of B on the items (scenario x epoch) where A's value is $aright and B's $bright, over the observations `obs` (a metric's rows). */
const fourCellSql = (obs: string) => `WITH o AS (${obs}),
a AS (SELECT run_id, episode_id, scenario_id, epoch, value FROM o WHERE run_id = $runa AND subject_model = $modela AND value IS NOT NULL),
b AS (SELECT run_id, episode_id, scenario_id, epoch, value FROM o WHERE run_id = $runb AND subject_model = $modelb AND value IS NOT NULL),
p AS (SELECT a.run_id AS ra, a.episode_id AS ea, b.run_id AS rb, b.episode_id AS eb FROM a JOIN b ON a.scenario_id = b.scenario_id AND a.epoch = b.epoch
      WHERE (a.value = 1) = $aright AND (b.value = 1) = $bright)
SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e JOIN (SELECT ra AS run_id, ea AS episode_id FROM p UNION ALL SELECT rb, eb FROM p) x
  ON x.run_id = e.run_id AND x.episode_id = e.episode_id
ORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id`;

const CELL_TRUTH: Record<keyof FourCellCounts, [boolean, boolean]> = { both_right: [true, true], only_a: [true, false], only_b: [false, true], both_wrong: [false, false] };

/** How a suite's four-cell sets read their comparisons. */
interface FourCellSource {
  /** The observations the comparison paired (a metric's rows: run_id, subject_model, episode_id, scenario_id, epoch, value). */
  obs: (c: Comparison) => string;
  /** The extra parameters `obs` binds (a scorer metric's $scorer). */
  params: (c: Comparison) => Record<string, string>;
  /** The scorer whose value the list shows. */
  scorer: (c: Comparison) => string;
  /** The comparison's name in the set's title. */
  name: (c: Comparison) => string;
  /** Where a subject label of the comparison's suite comes from. */
  source: (c: Comparison, subject: string) => SubjectSource | undefined;
}

/**
 * The four sets of each binary comparison (the first FOUR_CELL_LINKED, as the table says): a cell
 * of n items holds their 2n samples, A's and B's. `count` is the samples, `items` and `shows` the
 * cell's n: the loader checks the set covers exactly n items (scenario x epoch) and the page that
 * the linked cell prints n.
 */
function fourCellSets(comparisons: Comparison[], src: FourCellSource): EpisodeSetDef[] {
  const sets: EpisodeSetDef[] = [];
  for (const c of comparisons.filter((x) => x.four_cell).slice(0, FOUR_CELL_LINKED)) {
    const four = c.four_cell;
    const [sa, sb] = [src.source(c, c.a), src.source(c, c.b)];
    if (!four || !sa || !sb) continue;
    FOUR_CELL_KEYS.forEach((k, i) => {
      const n = four[k];
      const [aright, bright] = CELL_TRUTH[k];
      const title = `${src.name(c)} · A = ${c.a}, B = ${c.b} · ${FOUR_CELL_HEADERS[i].toLowerCase()}: ${n} item${n === 1 ? '' : 's'}, their ${2 * n} samples (A's and B's)`;
      const params = { ...src.params(c), runa: sa.run_id, modela: sa.subject_model, runb: sb.run_id, modelb: sb.subject_model, aright, bright };
      sets.push({ key: fourCellKey(c.suite, c.scorer, c.a, c.b, k), title, count: 2 * n, items: n, shows: n, sql: fourCellSql(src.obs(c)), params, scorer: src.scorer(c) });
    });
  }
  return sets;
}

/** The four-cell sets of the binary comparisons of a generic report. */
export function buildFourCellSets(g: GenericSections, sources: GenericSubjectSource[]): EpisodeSetDef[] {
  const several = g.suites.length > 1;
  return fourCellSets(g.pairwise.comparisons, {
    obs: (c) => scorerMetric(c.scorer).sql,
    params: (c) => ({ scorer: c.scorer }),
    scorer: (c) => c.scorer,
    name: (c) => `${several ? `${c.suite} · ` : ''}${scorerMetricName(c.scorer)}`,
    source: (c, subject) => sources.find((s) => s.suite === c.suite && s.subject === subject),
  });
}

/**
 * The four-cell sets of the Standoff report's binary metrics (section 5): over the metric's own
 * rows (`metricSql`), the observations the pairwise section pivots (`suites/o1-pairwise.ts`).
 */
export function buildO1FourCellSets(r: ReportResults, sources: SubjectSource[], scorerOf: (metric: string) => string): EpisodeSetDef[] {
  return fourCellSets(r.pairwise.comparisons, {
    obs: (c) => metricSql(c.metric),
    params: () => ({}),
    scorer: (c) => scorerOf(c.metric),
    name: (c) => METRIC_LABEL[c.metric as MainMetric] ?? c.metric,
    source: (_c, subject) => sources.find((s) => s.subject === subject),
  });
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
      judge: { scorer: j.scorer, pair: [p.a, p.b] as [string, string] },
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
    judge: { scorer: r.judges.scorer, pair: [p.a, p.b] as [string, string] },
  }));
}
