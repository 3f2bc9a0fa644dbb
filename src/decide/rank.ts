/**
 * `standoff rank`: per task, each subject's mean with its bootstrap interval, its rank and rank
 * interval (`bootstrapRanks`: items resampled jointly for all subjects), tiers (a compact letter
 * display over the Holm-adjusted paired comparisons: two subjects share a letter exactly when
 * their clustered paired z-test is not significant at alpha = 1 - level after Holm over the
 * task's pairs), and across tasks the mean rank and HELM's mean win rate with intervals. Pure:
 * the rows come from load-rank.ts.
 */
import { bootstrapRanks, clusteredPairedStandardError, compactLetterDisplay, holm, pairedZTest, type RankTask } from '../stats/index.ts';
import type { TaskValues } from './side.ts';

export const TIER_RULE =
  'subjects share a tier letter exactly when their paired difference is not significant: clustered paired z-test (CR1 SE over items), Holm-adjusted over all pairs of the task, at alpha = 1 - level (compact letter display, Piepho 2004)';

export interface RankSettings {
  level: number;
  seed: number;
  resamples: number;
}

export interface RankRow {
  task: string;
  subject: string;
  observations: number;
  estimate: number;
  lower: number;
  upper: number;
  rank: number;
  rank_lower: number;
  rank_upper: number;
  tier: string;
}

export interface PairP {
  task: string;
  a: string;
  b: string;
  pairs: number;
  difference: number | null;
  p: number | null;
  p_holm: number | null;
}

export interface RankResult {
  metric: string;
  by: string;
  level: number;
  seed: number;
  resamples: number;
  tier_rule: string;
  rows: RankRow[];
  /** Across tasks (one row per subject): mean rank and mean win rate with intervals. */
  overall: { subject: string; tasks: number; mean_rank: number; mean_rank_lower: number; mean_rank_upper: number; win_rate: number; win_rate_lower: number; win_rate_upper: number }[];
  pairs: PairP[];
}

/** task -> subject -> values (item key -> value, item -> cluster). */
export type RankData = Map<string, Map<string, TaskValues>>;

export function buildRanking(data: RankData, metric: string, by: string, s: RankSettings): RankResult {
  const subjects = [...new Set([...data.values()].flatMap((m) => [...m.keys()]))].sort();
  const tasks = [...data.keys()].sort().map((t): RankTaskTotals => {
    const m = data.get(t)!;
    return { task: t, totals: rankTask(m, subjects), observations: subjects.map((x) => m.get(x)?.values.size ?? 0), pair: (a, b) => pairTest(m.get(subjects[a]), m.get(subjects[b])) };
  });
  return rankFromTotals(subjects, tasks, metric, by, s);
}

/** The clustered paired z-test of two subjects (difference a - b over their shared items), or nulls. */
export interface PairTestResult {
  pairs: number;
  difference: number | null;
  p: number | null;
}

/**
 * One task for `rankFromTotals`: per-subject per-cluster sums and counts (subject-major, in the
 * order of `subjects`), each subject's observation count, and the paired test of subjects a and
 * b (indices into `subjects`). `buildRanking` forms them from per-item values; the report's
 * ranking section from per-cluster sums that SQL returns.
 */
export interface RankTaskTotals {
  task: string;
  totals: RankTask;
  observations: ArrayLike<number>;
  pair: (a: number, b: number) => PairTestResult;
}

/** `buildRanking` on tasks given as totals (tasks in output order, subjects sorted). */
export function rankFromTotals(subjects: string[], tasks: RankTaskTotals[], metric: string, by: string, s: RankSettings): RankResult {
  const r = bootstrapRanks(tasks.map((t) => t.totals), subjects.length, s);
  const rows: RankRow[] = [];
  const pairs: PairP[] = [];
  tasks.forEach((t, k) => {
    const alpha = 1 - s.level;
    const est = (j: number) => (Number.isFinite(r[j].tasks[k].estimate) ? r[j].tasks[k].estimate : -Infinity);
    const order = subjects.map((_, j) => j).sort((x, y) => est(y) - est(x) || x - y);
    const tp = pairwise(t, order, subjects);
    pairs.push(...tp);
    const diff = order.map(() => order.map(() => false));
    let idx = 0;
    for (let i = 0; i < order.length; i++) for (let j = i + 1; j < order.length; j++, idx++) diff[i][j] = diff[j][i] = tp[idx].p_holm !== null && tp[idx].p_holm! < alpha;
    const letters = compactLetterDisplay(diff);
    order.forEach((j, pos) => {
      const x = r[j].tasks[k];
      rows.push({ task: t.task, subject: subjects[j], observations: t.observations[j], estimate: x.estimate, lower: x.lower, upper: x.upper, rank: x.rank, rank_lower: x.rank_lower, rank_upper: x.rank_upper, tier: letters[pos] });
    });
  });
  const overall = subjects
    .map((name, j) => ({ subject: name, tasks: tasks.length, mean_rank: r[j].mean_rank, mean_rank_lower: r[j].mean_rank_lower, mean_rank_upper: r[j].mean_rank_upper, win_rate: r[j].win_rate, win_rate_lower: r[j].win_rate_lower, win_rate_upper: r[j].win_rate_upper }))
    .sort((a, b) => a.mean_rank - b.mean_rank || a.subject.localeCompare(b.subject));
  return { metric, by, level: s.level, seed: s.seed, resamples: s.resamples, tier_rule: TIER_RULE, rows, overall, pairs };
}

/** Per subject and item (cluster): sums and counts of the observations. */
function rankTask(bySubject: Map<string, TaskValues>, subjects: string[]): RankTask {
  const clusterIdx = new Map<string, number>();
  for (const v of bySubject.values()) for (const c of v.cluster.values()) if (!clusterIdx.has(c)) clusterIdx.set(c, clusterIdx.size);
  const C = clusterIdx.size;
  const sums = new Float64Array(subjects.length * C);
  const counts = new Float64Array(subjects.length * C);
  subjects.forEach((s, j) => {
    const v = bySubject.get(s);
    if (!v) return;
    for (const [k, x] of v.values) {
      const c = clusterIdx.get(v.cluster.get(k)!)!;
      sums[j * C + c] += x;
      counts[j * C + c] += 1;
    }
  });
  return { clusters: Math.max(1, C), sums, counts };
}

/** Every pair (in the given order, i < j): its paired test, Holm over the task. */
function pairwise(t: RankTaskTotals, order: number[], names: string[]): PairP[] {
  const out: PairP[] = [];
  for (let i = 0; i < order.length; i++) {
    for (let j = i + 1; j < order.length; j++) out.push({ task: t.task, a: names[order[i]], b: names[order[j]], ...t.pair(order[i], order[j]), p_holm: null });
  }
  const adj = holm(out.map((x) => x.p));
  return out.map((x, i) => ({ ...x, p_holm: adj[i] }));
}

/** Clustered paired z-test on the items two subjects share (sorted by item key). */
function pairTest(A: TaskValues | undefined, B: TaskValues | undefined): PairTestResult {
  const keys = A && B ? [...A.values.keys()].filter((k) => B.values.has(k)).sort() : [];
  let p: number | null = null;
  let d: number | null = null;
  const ids = keys.map((k) => A!.cluster.get(k)!);
  if (keys.length >= 2 && new Set(ids).size >= 2) {
    const se = clusteredPairedStandardError(Float64Array.from(keys, (k) => A!.values.get(k)!), Float64Array.from(keys, (k) => B!.values.get(k)!), ids, { variant: 'cr1' });
    d = se.meanDiff;
    p = pairedZTest({ difference: se.meanDiff, se: se.se }).p;
  }
  return { pairs: keys.length, difference: d, p };
}
