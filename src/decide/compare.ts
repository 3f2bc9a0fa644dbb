/**
 * `standoff compare`: did the candidate get worse than the baseline? Per metric and task, the
 * paired difference candidate - baseline on the items both sides measured (`comparePaired`: the
 * paired cluster bootstrap interval, clustered SE, p and MDE), p adjusted over the whole family
 * (metrics x tasks; Holm by default), a verdict, the four-cell table of a 0/1 metric, and how
 * often the two sides gave the same value (Cohen's kappa: rerun agreement when both sides are one
 * subject). Pure: the sides come from `loadSide` (load-side.ts).
 *
 * Verdicts (alpha = 1 - level; higher values are better):
 *  - without --margin: `worse` / `better` when the adjusted two-sided p < alpha, else `no
 *    detectable change` with the MDE (80% power) of the comparison as run;
 *  - with --margin m: `non-inferior` when the adjusted one-sided non-inferiority p < alpha / 2
 *    (the lower limit of the two-sided level interval, Wald with the clustered SE, above -m),
 *    else `not shown non-inferior`.
 * --fail-on worse holds when some verdict is `worse` or `not shown non-inferior`; --fail-on any
 * also when some verdict is `better` (any detected change).
 */
import { benjaminiHochberg, cohenKappa, holm, nonInferiorityTest } from '../stats/index.ts';
import { comparePaired, type PairedComparison } from '../analysis/paired-comparison.ts';
import { matchTasks, type Side, type TaskValues } from './side.ts';

export const ADJUST = ['holm', 'bh', 'none'] as const;
export type Adjust = (typeof ADJUST)[number];
export const FAIL_ON = ['worse', 'any'] as const;
export type FailOn = (typeof FAIL_ON)[number];
export type Verdict = 'worse' | 'better' | 'no detectable change' | 'non-inferior' | 'not shown non-inferior';

export interface CompareSettings {
  level: number;
  seed: number;
  resamples: number;
  adjust: Adjust;
  /** Non-inferiority margin in the metric's units (2pp = 0.02). */
  margin?: number;
  failOn?: FailOn;
}

export interface FourCell {
  both_right: number;
  only_baseline: number;
  only_candidate: number;
  both_wrong: number;
  /** Up to 20 items (scenario, epoch) of each discordant cell, to look up in the report. */
  only_baseline_items: string[];
  only_candidate_items: string[];
}

export interface Agreement {
  /** Pairs with the same value on both sides, and their share. */
  identical: number;
  share_identical: number;
  /** Cohen's kappa of the two sides' values as labels (metrics with at most 10 distinct values); null otherwise or when undefined. */
  kappa: number | null;
}

export interface ComparisonRow {
  metric: string;
  task: string;
  /** Items paired (measured on both sides), and those measured on one side only. */
  pairs: number;
  only_baseline: number;
  only_candidate: number;
  baseline_mean: number | null;
  candidate_mean: number | null;
  /** candidate - baseline */
  difference: number | null;
  lower: number | null;
  upper: number | null;
  sampling: string | null;
  clusters: number | null;
  se: number | null;
  p: number | null;
  p_adjusted: number | null;
  mde: number | null;
  p_noninferior?: number | null;
  p_noninferior_adjusted?: number | null;
  verdict: Verdict | null;
  verdict_text: string;
  four_cell: FourCell | null;
  agreement: Agreement | null;
  note?: string;
}

export interface CompareSummary {
  level: number;
  alpha: number;
  adjust: Adjust;
  margin: number | null;
  fail_on: FailOn | null;
  /** True when the --fail-on condition holds (the CLI exits with EXIT_FAIL_ON). */
  failed: boolean;
  /** Both sides are the same single subject: the agreement columns are rerun agreement. */
  rerun: boolean;
  seed: number;
  resamples: number;
  tasks_only_baseline: string[];
  tasks_only_candidate: string[];
  rows: ComparisonRow[];
}

const DISCRETE_MAX = 10;
const EXAMPLES = 20;
const showItem = (k: string) => k.replace('\u0000', ' epoch ').replace(/ epoch $/, '');

/** The paired analysis of one metric on one task (before the family's adjustment). */
export function compareTask(metric: string, task: string, base: TaskValues, cand: TaskValues, s: CompareSettings): ComparisonRow {
  // In the loaders' order (scenario, epoch), so the result does not depend on which side was read first.
  const keys = [...base.values.keys()].filter((k) => cand.values.has(k));
  const onlyB = base.values.size - keys.length;
  const onlyC = cand.values.size - keys.length;
  const a = Float64Array.from(keys, (k) => cand.values.get(k)!);
  const b = Float64Array.from(keys, (k) => base.values.get(k)!);
  const ids = keys.map((k) => base.cluster.get(k)!);
  const clustered = new Set(ids).size < ids.length;
  const row: ComparisonRow = {
    metric, task, pairs: keys.length, only_baseline: onlyB, only_candidate: onlyC,
    baseline_mean: null, candidate_mean: null, difference: null, lower: null, upper: null, sampling: null, clusters: null,
    se: null, p: null, p_adjusted: null, mde: null, verdict: null, verdict_text: 'not compared', four_cell: fourCell(keys, a, b), agreement: agreement(a, b),
  };
  if (keys.length < 2) return { ...row, note: `${keys.length} paired item${keys.length === 1 ? '' : 's'}: a paired comparison needs at least 2` };
  const r: PairedComparison = comparePaired(a, b, clustered ? ids : null, clustered ? 'scenario_id' : null, { level: s.level, seed: s.seed, resamples: s.resamples });
  Object.assign(row, {
    baseline_mean: r.mean_b, candidate_mean: r.mean_a, difference: r.mean_diff, lower: r.lower, upper: r.upper,
    sampling: r.sampling, clusters: r.clusters ?? r.n, se: r.se, p: r.p_value, mde: r.mde,
  });
  if (s.margin !== undefined) row.p_noninferior = nonInferiorityTest({ difference: r.mean_diff, se: r.se, margin: s.margin, alpha: r.alpha / 2 }).p;
  if (r.note) row.note = r.note;
  return row;
}

export function fourCell(keys: ArrayLike<string | number>, cand: Float64Array, base: Float64Array): FourCell | null {
  const c = { both_right: 0, only_baseline: 0, only_candidate: 0, both_wrong: 0, only_baseline_items: [] as string[], only_candidate_items: [] as string[] };
  for (let i = 0; i < keys.length; i++) {
    const x = base[i];
    const y = cand[i];
    if ((x !== 0 && x !== 1) || (y !== 0 && y !== 1)) return null;
    if (x === 1 && y === 1) c.both_right++;
    else if (x === 0 && y === 0) c.both_wrong++;
    else if (x === 1) {
      if (c.only_baseline++ < EXAMPLES) c.only_baseline_items.push(showItem(String(keys[i])));
    } else if (c.only_candidate++ < EXAMPLES) c.only_candidate_items.push(showItem(String(keys[i])));
  }
  return keys.length ? c : null;
}

function agreement(cand: Float64Array, base: Float64Array): Agreement | null {
  if (cand.length === 0) return null;
  let same = 0;
  const levels = new Set<number>();
  for (let i = 0; i < cand.length; i++) {
    if (cand[i] === base[i]) same++;
    if (levels.size <= DISCRETE_MAX) levels.add(cand[i]).add(base[i]);
  }
  const kappa = levels.size <= DISCRETE_MAX ? cohenKappa(Array.from(base), Array.from(cand)).kappa : null;
  return { identical: same, share_identical: same / cand.length, kappa };
}

const fmt = (x: number) => Number(x.toPrecision(3)).toString();

/** Adjusts p over the family and gives each row its verdict. */
export function decide(rows: ComparisonRow[], s: CompareSettings): ComparisonRow[] {
  const alpha = Number((1 - s.level).toPrecision(12));
  const adjust = (p: (number | null)[]) => (s.adjust === 'holm' ? holm(p) : s.adjust === 'bh' ? benjaminiHochberg(p) : p);
  const pa = adjust(rows.map((r) => r.p));
  const pn = s.margin !== undefined ? adjust(rows.map((r) => r.p_noninferior ?? null)) : null;
  return rows.map((r, i) => {
    const out = { ...r, p_adjusted: pa[i] };
    if (r.difference === null) return out;
    if (pn) {
      out.p_noninferior_adjusted = pn[i];
      const ok = pn[i] !== null ? pn[i]! < alpha / 2 : r.difference > -s.margin!;
      out.verdict = ok ? 'non-inferior' : 'not shown non-inferior';
      out.verdict_text = `${out.verdict} (margin ${fmt(s.margin!)})`;
      return out;
    }
    const detected = pa[i] !== null ? pa[i]! < alpha : r.difference !== 0;
    out.verdict = detected ? (r.difference < 0 ? 'worse' : 'better') : 'no detectable change';
    out.verdict_text = detected ? out.verdict : `no detectable change (MDE ${r.mde === null ? 'not measured' : fmt(r.mde)})`;
    return out;
  });
}

/** True when the --fail-on condition holds for some row. */
export function failOnHolds(rows: ComparisonRow[], failOn: FailOn | undefined): boolean {
  if (!failOn) return false;
  const bad: Verdict[] = failOn === 'any' ? ['worse', 'better', 'not shown non-inferior'] : ['worse', 'not shown non-inferior'];
  return rows.some((r) => r.verdict !== null && bad.includes(r.verdict));
}

/** Every metric's sides compared task by task (`sides`: [baseline, candidate] per metric). */
export function compareSides(sides: [Side, Side][], s: CompareSettings): CompareSummary {
  const rows: ComparisonRow[] = [];
  const onlyB = new Set<string>();
  const onlyC = new Set<string>();
  for (const [base, cand] of sides) {
    const m = matchTasks(base, cand);
    m.onlyBaseline.forEach((t) => onlyB.add(t));
    m.onlyCandidate.forEach((t) => onlyC.add(t));
    for (const [label, tb, tc] of m.pairs) rows.push(compareTask(base.metric, label, base.tasks.get(tb)!, cand.tasks.get(tc)!, s));
  }
  const decided = decide(rows, s);
  const [b0, c0] = sides[0];
  return {
    level: s.level,
    alpha: Number((1 - s.level).toPrecision(12)),
    adjust: s.adjust,
    margin: s.margin ?? null,
    fail_on: s.failOn ?? null,
    failed: failOnHolds(decided, s.failOn),
    rerun: b0.subjects.length === 1 && c0.subjects.length === 1 && b0.subjects[0] === c0.subjects[0],
    seed: s.seed,
    resamples: s.resamples,
    tasks_only_baseline: [...onlyB].sort(),
    tasks_only_candidate: [...onlyC].sort(),
    rows: decided,
  };
}
