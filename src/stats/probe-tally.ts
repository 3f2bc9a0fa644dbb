import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/** One decision state answered by one system: the action question paired with its factual probes. */
export interface ProbeRow {
  state_id: string;
  subject_model: string;
  /** Every applicable probe answered correctly (an unanswerable probe counts as wrong). */
  all_facts_correct: boolean;
  /** The chosen action is in the state's gold set. */
  action_correct: boolean;
  /** Probes the system could answer (not blocked by an input limit). */
  probes_answered: number;
  /** Applicable probes for the state. */
  probes_total: number;
  /** Share of the applicable probes answered correctly (unanswered counted wrong), in [0, 1]. */
  probe_accuracy: number;
  /** Whether composing the system's own probe answers in code gives a gold action; null/absent = not run. */
  composed_correct?: boolean | null;
}

/**
 * Counts behind one group's outcome table, for callers that aggregate elsewhere (e.g. in DuckDB,
 * where each state is a weighted row): the four cells (facts right/wrong x action right/wrong),
 * states without an applicable probe, sums of per-state probe accuracy (`accSum`) and of correct
 * answers (`pooledNum`), probes answered and applicable, and for states with a composed action:
 * how many (`cn`), composed right, decision right, repaired and broken.
 */
export interface ProbeTally {
  frar: number;
  fraw: number;
  fwar: number;
  fwaw: number;
  statesWithoutProbes: number;
  accSum: number;
  pooledNum: number;
  answered: number;
  total: number;
  cn: number;
  composedRight: number;
  decisionRightOnComposed: number;
  repaired: number;
  broken: number;
}

/** A probe row standing for `weight` identical states (e.g. one row of a SQL `GROUP BY` with its count). */
export type WeightedProbeRow = Pick<ProbeRow, 'all_facts_correct' | 'action_correct' | 'probes_answered' | 'probes_total' | 'probe_accuracy' | 'composed_correct'> & {
  /** How many states the row stands for: a non-negative integer (1 for a single state). */
  weight: number;
};

/**
 * The weighted tally behind the paired-probe outcome table: the four cells (all facts right /
 * some fact wrong x action right / wrong), states without an applicable probe, the sums behind
 * mean and pooled probe accuracy, coverage, and, over states with a composed action, the
 * composition counts (composed right, decision right, repaired, broken). Each row counts
 * `weight` times, so callers that aggregate in SQL pass one row per distinct outcome pattern with
 * its count instead of one row per state; `probeOutcomeFromTally` turns the tally into shares with
 * intervals, and `probeOutcomes` is this tally with weight 1 per state.
 *
 * Source: Li, Krishnan & Padman, "Reading Right, Acting Wrong" (arXiv:2610.18579), sections 2.3
 * and B.3 (four outcomes; mean probe accuracy; coverage, unanswerable probes counted wrong) and
 * 6.1 (composition vs the model's own decision on the same states). A tally is a sum, so it is
 * exact: the test checks it against `probeOutcomes` on the expanded rows.
 *
 * Degenerate cases: no rows -> every count 0; a row with probes_total 0 counts only in
 * `statesWithoutProbes`. A weight that is not a non-negative integer throws `dataError`
 * ('stats.badCount'); rows are not otherwise validated here (`probeOutcomes` validates per state).
 *
 * @example
 * import { probeTally } from './probe-tally.ts';
 * const t = probeTally([
 *   { all_facts_correct: true, action_correct: false, probes_answered: 4, probes_total: 4, probe_accuracy: 1, composed_correct: true, weight: 3 },
 *   { all_facts_correct: false, action_correct: false, probes_answered: 4, probes_total: 4, probe_accuracy: 0.75, composed_correct: false, weight: 2 },
 * ]);
 * // t.fraw = 3, t.fwaw = 2, t.repaired = 3, t.accSum = 4.5, t.pooledNum = 18
 */
export function probeTally(rows: readonly WeightedProbeRow[]): ProbeTally {
  const t: ProbeTally = { frar: 0, fraw: 0, fwar: 0, fwaw: 0, statesWithoutProbes: 0, accSum: 0, pooledNum: 0, answered: 0, total: 0, cn: 0, composedRight: 0, decisionRightOnComposed: 0, repaired: 0, broken: 0 };
  if (!Array.isArray(rows)) throw dataError('stats.badShape', `probeTally requires an array of rows, got ${show(rows)}`);
  rows.forEach((r, i) => {
    const w = r.weight;
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 0) throw dataError('stats.badCount', `probeTally requires rows[${i}].weight to be an integer >= 0, got ${show(w)}`);
    if (w === 0) return;
    if (r.probes_total === 0) {
      t.statesWithoutProbes += w;
      return;
    }
    addProbeState(t, w, r.all_facts_correct, r.action_correct, r.probe_accuracy, r.probes_answered, r.probes_total, r.composed_correct ?? null);
  });
  return t;
}

/**
 * Adds one state with probes (`total` > 0), standing for `w` states, into tally `t`: its outcome
 * cell, its accuracy sums and, when it has a composed action, the composition counts. The one
 * per-state step of `probeTally`, also used by the probe tables' streamed fold, so the two sum in
 * the same order. Weights are checked by the callers.
 */
export function addProbeState(t: ProbeTally, w: number, facts: boolean, action: boolean, accuracy: number, answered: number, total: number, composed: boolean | null): void {
  if (facts && action) t.frar += w;
  else if (facts) t.fraw += w;
  else if (action) t.fwar += w;
  else t.fwaw += w;
  t.accSum += w * accuracy;
  t.pooledNum += w * accuracy * total;
  t.answered += w * answered;
  t.total += w * total;
  if (composed !== null) {
    t.cn += w;
    if (composed) t.composedRight += w;
    if (action) t.decisionRightOnComposed += w;
    if (composed && !action) t.repaired += w;
    if (!composed && action) t.broken += w;
  }
}
