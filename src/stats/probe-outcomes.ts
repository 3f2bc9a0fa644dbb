import { dataError } from '../errors.ts';
import { checkLevel, checkOptions, show } from './arg-checks.ts';
import { clopperPearson } from './clopper-pearson.ts';
import { probeTally, type ProbeRow, type ProbeTally } from './probe-tally.ts';

export type { ProbeRow, ProbeTally } from './probe-tally.ts';

/** A count out of n, its share and a Clopper-Pearson interval (all null when n = 0). */
export interface Share {
  count: number;
  n: number;
  rate: number | null;
  lower: number | null;
  upper: number | null;
}

export interface ProbeOutcomeGroup {
  group: string;
  /** States with at least one applicable probe (the denominator of every cell). */
  states: number;
  /** Rows with probes_total = 0: no probe applies, so they fit no cell; left out and counted. */
  statesWithoutProbes: number;
  /** The four observable outcomes, each a share of `states`. */
  cells: {
    factsRightActionRight: Share;
    factsRightActionWrong: Share;
    factsWrongActionRight: Share;
    factsWrongActionWrong: Share;
  };
  allFactsCorrect: Share;
  decisionAccuracy: Share;
  /** Of the decision errors, the share made with every fact read correctly (count FR/AW, n = errors). */
  errorsAfterCorrectReading: Share;
  /** P(action wrong | all facts right): FR/AW out of FR. */
  actionWrongGivenFactsRight: Share;
  /** P(action right | some fact wrong): FW/AR out of FW. */
  actionRightGivenFactWrong: Share;
  /** Mean over states of probe_accuracy; null when no state. */
  meanProbeAccuracy: number | null;
  /** sum(probe_accuracy x probes_total) / sum(probes_total): accuracy over all probe questions. */
  pooledProbeAccuracy: number | null;
  /** Probes answered / probes applicable (unanswered ones are already counted wrong above). */
  coverage: { answered: number; total: number; rate: number | null };
  /** Code composition vs the model's own decision on the same states (rows with composed_correct set); null if none. */
  composed: {
    n: number;
    composedAccuracy: Share;
    decisionAccuracy: Share;
    /** composedAccuracy.rate - decisionAccuracy.rate on these states. */
    difference: number;
    /** Composition right where the decision was wrong. */
    repaired: number;
    /** Composition wrong where the decision was right. */
    broken: number;
  } | null;
  level: number;
}

export interface ProbeOutcomesOptions {
  /** Confidence level of every Clopper-Pearson interval. Default 0.95. */
  level?: number;
}

/**
 * The paired-probe outcome table: for each group of rows (typically one system, or one system x
 * domain), the four observable outcomes of crossing "all applicable probes answered correctly"
 * with "action correct", with rates, conditional rates and exact intervals.
 *
 * Source: Li, Krishnan & Padman, "Reading Right, Acting Wrong: Diagnosing Decision Failures of
 * System One Models in Agent Loops" (arXiv:2610.18579), sections 2.3 and B.3 (four outcomes,
 * conditional rates, mean probe accuracy, coverage: unanswerable questions count as wrong and are
 * reported as coverage), 5.1 (share of decision errors that follow correct reading; P(action wrong
 * | all facts right); P(action right | a fact wrong)) and 6.1 (decision accuracy vs composing the
 * model's own fact answers in code, on the same states). Intervals are two-sided Clopper-Pearson
 * (`clopperPearson`). Pooled counts describe prevalence; they are not a ranking of systems.
 *
 * Input: an array of rows (one group, named 'all'), or already-grouped rows as a Map or a plain
 * object (see `groupBy`, e.g. `probeOutcomes(groupBy(rows, 'subject_model'))`).
 *
 * Degenerate cases: a group with no rows, or only rows without applicable probes -> states 0 and
 * every rate, interval and mean null (no throw); no decision error -> errorsAfterCorrectReading
 * has n 0 and null rate; no all-facts-correct state -> actionWrongGivenFactsRight null rate, and so
 * on for every conditional share with an empty denominator; no composed_correct values -> composed
 * null.
 *
 * Throws `dataError('stats.badProbeRow')` naming the group and row for a missing or mistyped field,
 * probes_answered > probes_total, probe_accuracy outside [0, 1], or an inconsistent row:
 * all_facts_correct true with an unanswered probe or probe_accuracy < 1, or false while every probe
 * was answered with accuracy 1. A state_id twice in one group throws ('stats.duplicateId').
 *
 * @example
 * import { probeOutcomes } from './probe-outcomes.ts';
 * const row = (id: string, facts: boolean, action: boolean) => ({
 *   state_id: id, subject_model: 'm', all_facts_correct: facts, action_correct: action,
 *   probes_answered: 4, probes_total: 4, probe_accuracy: facts ? 1 : 0.75,
 * });
 * const [g] = probeOutcomes([row('s1', true, true), row('s2', true, false), row('s3', false, false)]);
 * // g.cells.factsRightActionWrong.count = 1; g.errorsAfterCorrectReading.rate = 0.5 (1 of 2 errors)
 * // g.actionWrongGivenFactsRight.rate = 0.5; g.meanProbeAccuracy ≈ 0.9167
 */
export function probeOutcomes(
  input: readonly ProbeRow[] | ReadonlyMap<string, readonly ProbeRow[]> | Readonly<Record<string, readonly ProbeRow[]>>,
  options?: ProbeOutcomesOptions,
): ProbeOutcomeGroup[] {
  const fn = 'probeOutcomes';
  const opts = checkOptions(fn, options);
  const level = checkLevel(fn, 'level', opts.level ?? 0.95);
  let groups: [string, readonly ProbeRow[]][];
  if (Array.isArray(input)) groups = [['all', input as readonly ProbeRow[]]];
  else if (input instanceof Map) groups = [...input.entries()];
  else if (input !== null && typeof input === 'object') groups = Object.entries(input as Record<string, readonly ProbeRow[]>);
  else throw dataError('stats.badShape', `${fn} requires an array of rows, a Map or an object of groups, got ${show(input)}`);
  return groups.map(([group, rows]) => summarise(fn, group, rows, level));
}

function summarise(fn: string, group: string, rows: readonly ProbeRow[], level: number): ProbeOutcomeGroup {
  if (!Array.isArray(rows)) {
    throw dataError('stats.badShape', `${fn} requires group ${JSON.stringify(group)} to be an array of rows, got ${show(rows)}`);
  }
  const seen = new Set<string>();
  rows.forEach((row, i) => {
    checkRow(fn, group, row, i);
    if (seen.has(row.state_id)) {
      throw dataError('stats.duplicateId', `${fn} got state_id ${JSON.stringify(row.state_id)} twice in group ${JSON.stringify(group)}`);
    }
    seen.add(row.state_id);
  });
  return probeOutcomeFromTally(group, probeTally(rows.map((row) => ({ ...row, weight: 1 }))), { level });
}

/**
 * The outcome table of one group from its tally (what `probeOutcomes` computes per group after
 * counting). Every share carries a Clopper-Pearson interval at `level`; an empty denominator gives
 * rate and interval null.
 *
 * @example
 * const g = probeOutcomeFromTally('m', { frar: 6, fraw: 2, fwar: 1, fwaw: 1, statesWithoutProbes: 0, accSum: 9, pooledNum: 36,
 *   answered: 40, total: 40, cn: 0, composedRight: 0, decisionRightOnComposed: 0, repaired: 0, broken: 0 });
 * g.errorsAfterCorrectReading.rate; // 2 / 3
 */
export function probeOutcomeFromTally(group: string, t: ProbeTally, options?: ProbeOutcomesOptions): ProbeOutcomeGroup {
  const level = checkLevel('probeOutcomeFromTally', 'level', options?.level ?? 0.95);
  const c = probeShareCounts(t);
  const share = ({ count, n }: { count: number; n: number }): Share => {
    const ci = clopperPearson(count, n, { level });
    return { count, n, rate: ci.estimate, lower: ci.lower, upper: ci.upper };
  };
  const { accSum, pooledNum, answered, total, cn, composedRight, decisionRightOnComposed, repaired, broken } = t;
  const n = c.factsRightActionRight.n;
  return {
    group,
    states: n,
    statesWithoutProbes: t.statesWithoutProbes,
    cells: {
      factsRightActionRight: share(c.factsRightActionRight),
      factsRightActionWrong: share(c.factsRightActionWrong),
      factsWrongActionRight: share(c.factsWrongActionRight),
      factsWrongActionWrong: share(c.factsWrongActionWrong),
    },
    allFactsCorrect: share(c.allFactsCorrect),
    decisionAccuracy: share(c.decisionAccuracy),
    errorsAfterCorrectReading: share(c.errorsAfterCorrectReading),
    actionWrongGivenFactsRight: share(c.actionWrongGivenFactsRight),
    actionRightGivenFactWrong: share(c.actionRightGivenFactWrong),
    meanProbeAccuracy: n === 0 ? null : accSum / n,
    pooledProbeAccuracy: total === 0 ? null : pooledNum / total,
    coverage: { answered, total, rate: total === 0 ? null : answered / total },
    composed:
      cn === 0
        ? null
        : {
            n: cn,
            composedAccuracy: share(c.composedAccuracy),
            decisionAccuracy: share(c.composedDecisionAccuracy),
            difference: (composedRight - decisionRightOnComposed) / cn,
            repaired,
            broken,
          },
    level,
  };
}

/** The shares of the outcome table, each as a count out of its denominator. */
export type ProbeShareName =
  | 'factsRightActionRight'
  | 'factsRightActionWrong'
  | 'factsWrongActionRight'
  | 'factsWrongActionWrong'
  | 'allFactsCorrect'
  | 'decisionAccuracy'
  | 'errorsAfterCorrectReading'
  | 'actionWrongGivenFactsRight'
  | 'actionRightGivenFactWrong'
  | 'composedAccuracy'
  | 'composedDecisionAccuracy';

/**
 * The definition of every share in the outcome table as (count, denominator) of a tally: the four
 * cells and the decision accuracy out of the states with a probe; errors after correct reading out
 * of the decision errors; P(action wrong | facts right) out of the facts-right states; P(action
 * right | a fact wrong) out of the fact-wrong states; composed accuracy and the decision accuracy
 * on the same states out of the states with a composed action. `probeOutcomeFromTally` builds its
 * shares from these, and a caller that needs a share per cluster (a cluster bootstrap over
 * states) applies the same definitions to each cluster's tally.
 *
 * @example
 * const c = probeShareCounts({ frar: 6, fraw: 2, fwar: 1, fwaw: 1, statesWithoutProbes: 0, accSum: 9, pooledNum: 36,
 *   answered: 40, total: 40, cn: 0, composedRight: 0, decisionRightOnComposed: 0, repaired: 0, broken: 0 });
 * c.errorsAfterCorrectReading; // { count: 2, n: 3 }
 */
export function probeShareCounts(t: ProbeTally): Record<ProbeShareName, { count: number; n: number }> {
  const { frar, fraw, fwar, fwaw, cn, composedRight, decisionRightOnComposed } = t;
  const n = frar + fraw + fwar + fwaw;
  return {
    factsRightActionRight: { count: frar, n },
    factsRightActionWrong: { count: fraw, n },
    factsWrongActionRight: { count: fwar, n },
    factsWrongActionWrong: { count: fwaw, n },
    allFactsCorrect: { count: frar + fraw, n },
    decisionAccuracy: { count: frar + fwar, n },
    errorsAfterCorrectReading: { count: fraw, n: fraw + fwaw },
    actionWrongGivenFactsRight: { count: fraw, n: frar + fraw },
    actionRightGivenFactWrong: { count: fwar, n: fwar + fwaw },
    composedAccuracy: { count: composedRight, n: cn },
    composedDecisionAccuracy: { count: decisionRightOnComposed, n: cn },
  };
}

const EPS = 1e-9;

function checkRow(fn: string, group: string, row: unknown, i: number): asserts row is ProbeRow {
  const where = `row ${i} of group ${JSON.stringify(group)}`;
  const bad = (what: string, got: unknown): never => {
    throw dataError('stats.badProbeRow', `${fn} requires ${what} in ${where}, got ${show(got)}`);
  };
  if (row === null || typeof row !== 'object') bad('an object', row);
  const r = row as Record<string, unknown>;
  if (typeof r.state_id !== 'string') bad('state_id to be a string', r.state_id);
  if (typeof r.all_facts_correct !== 'boolean') bad('all_facts_correct to be a boolean', r.all_facts_correct);
  if (typeof r.action_correct !== 'boolean') bad('action_correct to be a boolean', r.action_correct);
  const total = r.probes_total;
  const answered = r.probes_answered;
  const acc = r.probe_accuracy;
  if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) bad('probes_total to be an integer >= 0', total);
  if (typeof answered !== 'number' || !Number.isInteger(answered) || answered < 0) bad('probes_answered to be an integer >= 0', answered);
  if ((answered as number) > (total as number)) bad(`probes_answered <= probes_total (${String(total)})`, answered);
  if (typeof acc !== 'number' || !(acc >= 0 && acc <= 1)) bad('probe_accuracy in [0, 1]', acc);
  const c = r.composed_correct;
  if (c !== undefined && c !== null && typeof c !== 'boolean') bad('composed_correct to be a boolean or null', c);
  if ((total as number) === 0) return;
  const perfect = answered === total && (acc as number) >= 1 - EPS;
  if (r.all_facts_correct === true && !perfect) {
    throw dataError(
      'stats.badProbeRow',
      `${fn} found all_facts_correct true with ${String(answered)}/${String(total)} probes answered and probe_accuracy ${String(acc)} in ${where} (state ${JSON.stringify(r.state_id)}); unanswered or wrong probes make it false`,
    );
  }
  if (r.all_facts_correct === false && perfect) {
    throw dataError(
      'stats.badProbeRow',
      `${fn} found all_facts_correct false with every probe answered and probe_accuracy 1 in ${where} (state ${JSON.stringify(r.state_id)})`,
    );
  }
}
