/**
 * The paired-probe tables ("Reading Right, Acting Wrong", Li, Krishnan & Padman): the library
 * behind the report's probe section and `standoff probes`, so both print the same numbers.
 *
 *   loadProbeTables(q, { by, level, seed, resamples, subject? }) -> { groups, sufficiency }
 *
 * Unit: the distinct decision state. A state (a scenario's frozen situation, policy and log) is
 * answered once per epoch; the tables count the distinct states and their answers, and every
 * interval resamples whole states (a percentile cluster bootstrap over states, from per-state
 * tallies: `probeTally`, `probeShareCounts`, `clusterBootstrapTotals`) where states repeat; the
 * exact Clopper-Pearson interval, which treats answers as independent, is kept beside it and is
 * the one shown where no state repeats. Where states repeat but the bootstrap has no spread, the
 * interval shown says what it treats as independent (`stateIntervals`: the distinct states, or
 * the answers), never "exact" as if no state repeated.
 *
 * Ambiguous states (target NOANSWER: the policy's conflict exception holds, no single correct
 * action) are in no decision or composition denominator, as in policy action; they are reported
 * on their own: reading (all facts right), a decision inside the policy's allowed set, and
 * composition reaching NOANSWER.
 *
 * Sufficiency (`probeSufficiency`) is the paper's criterion (section 2.4, appendix B.4): within a
 * family (the episodes' domain), the distinct states are grouped by their correct probe answers
 * alone, and a group where no single action is correct for every state is a counterexample. It
 * reports how many distinct states were compared and says when the check is vacuous (no two states
 * share a group, as with authored scenarios that each have their own probes).
 */
import {
  probeOutcomeFromTally,
  probeShareCounts,
  probeSufficiency,
  probeTally,
  type ProbeShareName,
  type ProbeTally,
  type Share,
  type WeightedProbeRow,
} from '../stats/index.ts';
import { quoteIdent, type Plain } from '../store/duckdb.ts';
import { clusterIntervalFromTotals, type Interval } from './rates.ts';
import { stateIntervals, type ShownKind } from './state-interval.ts';

export const PROBE_GROUP_COLUMNS = ['subject_model', 'scenario_id', 'domain', 'decision_type', 'variant', 'run_id', 'epoch'] as const;

export interface ProbeTableOptions {
  /** Group columns (default subject_model; the report passes `subject`). */
  by: string[];
  level: number;
  seed: number;
  resamples: number;
  /** SQL for a `subject` column (the report's `model @ run` labels), with the joins it needs on `d` (probe_decisions). */
  subject?: { expr: string; join: string };
  /** Leave out the states listed in the temp table `probe_excluded_states` (`createExcludedStates`). */
  excludeStates?: boolean;
}

/** The filter on `d` (probe_decisions) that leaves out flagged states, when asked. */
export const EXCLUDED_STATES_FILTER = `d.scenario_id NOT IN (SELECT scenario_id FROM probe_excluded_states)`;

/** A share (count of n answers) with the interval shown and both intervals. */
export interface ShareInterval extends Share {
  /**
   * Clustered by state where states repeat (epochs) and the bootstrap has spread; exact where no
   * state repeats; else over distinct states or over answers as independent samples (`shown`).
   */
  interval: Interval;
  /** Which interval `interval` is (`stateIntervals`): cluster, exact, states or independent. */
  shown: ShownKind;
  /** Clopper-Pearson over the answers: treats them as independent. */
  exact: Interval;
  /** Cluster bootstrap over states; null when no state repeats. */
  cluster: Interval | null;
}

export interface ProbeGroupTable {
  group: Record<string, Plain>;
  /** Distinct non-ambiguous states with at least one applicable probe. */
  states: number;
  /** Their answers (state x epoch): the n of every share below. */
  answers: number;
  /** Most answers of one state (epochs that repeat it). */
  max_answers_per_state: number;
  /** Non-ambiguous answers whose state has no applicable probe: in no cell. */
  answers_without_probes: number;
  cells: { facts_right_action_right: ShareInterval; facts_right_action_wrong: ShareInterval; facts_wrong_action_right: ShareInterval; facts_wrong_action_wrong: ShareInterval };
  all_facts_correct: ShareInterval;
  decision_accuracy: ShareInterval;
  errors_after_correct_reading: ShareInterval;
  action_wrong_given_facts_right: ShareInterval;
  action_right_given_fact_wrong: ShareInterval;
  mean_probe_accuracy: number | null;
  pooled_probe_accuracy: number | null;
  coverage: { answered: number; total: number; rate: number | null };
  /** Composition in code vs the subject's own decision, non-ambiguous states only; null when none composed. */
  composed: {
    answers: number;
    states: number;
    composed_accuracy: ShareInterval;
    decision_accuracy: ShareInterval;
    difference: number;
    /** Paired cluster bootstrap of composed - decision over states (percentile). */
    interval: Interval;
    repaired: number;
    broken: number;
  } | null;
  /** Ambiguous states, reported apart; null when the group has none. */
  ambiguous: {
    states: number;
    answers: number;
    all_facts_correct: ShareInterval;
    /** The decision is one of the actions the policy's conflict exception allows (its gold set). */
    allowed_action: ShareInterval;
    /** Composition from the subject's own answers reached NOANSWER (the conflict exception holds). */
    composed_noanswer: ShareInterval;
  } | null;
}

export interface ProbeSufficiencyReport {
  sufficient: boolean;
  /** Distinct states compared (a scenario's state once, however many epochs and subjects). */
  states: number;
  /** What the states were grouped by (the paper's criterion: within a family, the correct answers alone). */
  grouped_by: 'family and correct probe answers' | 'correct probe answers';
  answer_groups: number;
  /** Groups holding two or more distinct states: where anything was compared. */
  groups_with_several_states: number;
  /** No group holds two states: nothing was compared, so "sufficient" says nothing. */
  vacuous: boolean;
  /** Distinct states in counterexample groups. */
  counterexample_states: number;
  counterexamples: { family: string | null; answers: Record<string, string>; states: string[]; gold_sets: string[][] }[];
}

export interface ProbeTables {
  by: string[];
  groups: ProbeGroupTable[];
  sufficiency: ProbeSufficiencyReport | null;
}

type Q = (sql: string) => Promise<Record<string, Plain>[]>;

/** One row per state answer with everything the tables need (`d` = probe_decisions). */
export function probeStateSql(subject?: ProbeTableOptions['subject'], excludeStates = false): string {
  return `
    SELECT d.run_id, d.subject_model, d.scenario_id, d.epoch, d.state_id, m.domain, m.decision_type, m.variant,
           ${subject ? `${subject.expr} AS subject,` : ''}
           coalesce(m.target = 'NOANSWER', false) AS ambiguous,
           CAST(coalesce(a.total, 0) AS INTEGER) AS total, CAST(coalesce(a.answered, 0) AS INTEGER) AS answered, CAST(coalesce(a.right_, 0) AS INTEGER) AS right_,
           d.correct AS action, d.composed_correct AS composed, coalesce(d.composed_action = 'NOANSWER', false) AS composed_noanswer
    FROM probe_decisions d
    LEFT JOIN (SELECT run_id, subject_model, state_id, count(*) AS total, count(answer) AS answered, count(*) FILTER (WHERE correct) AS right_
               FROM probe_answers GROUP BY ALL) a USING (run_id, subject_model, state_id)
    LEFT JOIN (SELECT DISTINCT run_id, scenario_id, domain, decision_type, variant, target FROM episodes) m USING (run_id, scenario_id)
    ${subject?.join ?? ''}${excludeStates ? `\n    WHERE ${EXCLUDED_STATES_FILTER}` : ''}`;
}

export async function loadProbeTables(q: Q, o: ProbeTableOptions): Promise<ProbeTables> {
  const by = o.by;
  const g = by.map(quoteIdent);
  const rows = await q(`
    SELECT ${g.length ? `${g.join(', ')}, ` : ''}scenario_id, ambiguous, total, answered, right_, action, composed, composed_noanswer, CAST(count(*) AS BIGINT) AS n
    FROM (${probeStateSql(o.subject, o.excludeStates)}) GROUP BY ALL ORDER BY ALL`);
  const groups: ProbeGroupTable[] = [];
  const keyOf = (r: Record<string, Plain>) => by.map((c) => JSON.stringify(r[c])).join('\u0000');
  for (let i = 0; i < rows.length; ) {
    const k = keyOf(rows[i]);
    let j = i;
    while (j < rows.length && keyOf(rows[j]) === k) j++;
    groups.push(groupTable(rows.slice(i, j), by, o));
    i = j;
  }
  return { by, groups, sufficiency: await sufficiency(q, o.excludeStates) };
}

interface StateRow {
  cluster: string;
  weighted: WeightedProbeRow;
  ambiguous: boolean;
  composedNoanswer: boolean;
}

function toStateRow(r: Record<string, Plain>): StateRow {
  const total = Number(r.total);
  const right = Number(r.right_);
  return {
    cluster: String(r.scenario_id),
    ambiguous: r.ambiguous === true,
    composedNoanswer: r.composed_noanswer === true,
    weighted: {
      all_facts_correct: total > 0 && right === total,
      action_correct: r.action === true,
      probes_answered: Number(r.answered),
      probes_total: total,
      probe_accuracy: total > 0 ? right / total : 0,
      composed_correct: r.composed === null ? null : r.composed === true,
      weight: Number(r.n),
    },
  };
}

/** Per-cluster tallies (clusters in first-appearance order: the rows come sorted by state). */
function clusterTallies(rows: StateRow[]): ProbeTally[] {
  const out: ProbeTally[] = [];
  let last: string | null = null;
  let cur: WeightedProbeRow[] = [];
  const flush = () => {
    if (cur.length) out.push(probeTally(cur));
    cur = [];
  };
  for (const r of rows) {
    if (r.cluster !== last) {
      flush();
      last = r.cluster;
    }
    cur.push(r.weighted);
  }
  flush();
  return out;
}

function shareInterval(count: number, n: number, perCluster: { count: number; n: number }[], o: ProbeTableOptions): ShareInterval {
  const { interval, shown, exact, cluster } = stateIntervals(count, n, perCluster, o);
  return { count, n, rate: n > 0 ? count / n : null, lower: exact.lower, upper: exact.upper, interval, shown, exact, cluster };
}

function groupTable(raw: Record<string, Plain>[], by: string[], o: ProbeTableOptions): ProbeGroupTable {
  const group = Object.fromEntries(by.map((c) => [c, raw[0][c]]));
  // States sorted within the group (ORDER BY ALL puts scenario_id right after the group columns).
  const rows = raw.map(toStateRow);
  const plain = rows.filter((r) => !r.ambiguous);
  const withProbes = plain.filter((r) => r.weighted.probes_total > 0);
  const tally = probeTally(plain.map((r) => r.weighted));
  const g = probeOutcomeFromTally('g', tally, { level: o.level });
  const perCluster = clusterTallies(withProbes).map(probeShareCounts);
  const share = (name: ProbeShareName) => {
    const c = probeShareCounts(tally)[name];
    return shareInterval(c.count, c.n, perCluster.map((x) => x[name]), o);
  };
  const answersPerState = perCluster.map((x) => x.factsRightActionRight.n);
  let composed: ProbeGroupTable['composed'] = null;
  if (g.composed) {
    const comp = clusterTallies(withProbes.filter((r) => r.weighted.composed_correct !== null));
    const interval = clusterIntervalFromTotals(
      comp.map((t) => t.composedRight - t.decisionRightOnComposed),
      comp.map((t) => t.cn),
      'state',
      o,
    );
    composed = {
      answers: g.composed.n,
      states: comp.length,
      composed_accuracy: share('composedAccuracy'),
      decision_accuracy: share('composedDecisionAccuracy'),
      difference: g.composed.difference,
      interval: { ...interval, method: 'paired-cluster-bootstrap-percentile' },
      repaired: g.composed.repaired,
      broken: g.composed.broken,
    };
  }
  const amb = rows.filter((r) => r.ambiguous);
  let ambiguous: ProbeGroupTable['ambiguous'] = null;
  if (amb.length) {
    const clusters = [...new Set(amb.map((r) => r.cluster))];
    const per = (pred: (r: StateRow) => boolean) =>
      clusters.map((c) => {
        const rs = amb.filter((r) => r.cluster === c);
        return { count: rs.filter(pred).reduce((a, r) => a + r.weighted.weight, 0), n: rs.reduce((a, r) => a + r.weighted.weight, 0) };
      });
    const ambShare = (pred: (r: StateRow) => boolean) => {
      const pc = per(pred);
      return shareInterval(pc.reduce((a, x) => a + x.count, 0), pc.reduce((a, x) => a + x.n, 0), pc, o);
    };
    ambiguous = {
      states: clusters.length,
      answers: amb.reduce((a, r) => a + r.weighted.weight, 0),
      all_facts_correct: ambShare((r) => r.weighted.all_facts_correct),
      allowed_action: ambShare((r) => r.weighted.action_correct),
      composed_noanswer: ambShare((r) => r.composedNoanswer),
    };
  }
  return {
    group,
    states: perCluster.filter((x) => x.factsRightActionRight.n > 0).length,
    answers: g.states,
    max_answers_per_state: Math.max(0, ...answersPerState),
    answers_without_probes: tally.statesWithoutProbes,
    cells: {
      facts_right_action_right: share('factsRightActionRight'),
      facts_right_action_wrong: share('factsRightActionWrong'),
      facts_wrong_action_right: share('factsWrongActionRight'),
      facts_wrong_action_wrong: share('factsWrongActionWrong'),
    },
    all_facts_correct: share('allFactsCorrect'),
    decision_accuracy: share('decisionAccuracy'),
    errors_after_correct_reading: share('errorsAfterCorrectReading'),
    action_wrong_given_facts_right: share('actionWrongGivenFactsRight'),
    action_right_given_fact_wrong: share('actionRightGivenFactWrong'),
    mean_probe_accuracy: g.meanProbeAccuracy,
    pooled_probe_accuracy: g.pooledProbeAccuracy,
    coverage: g.coverage,
    composed,
    ambiguous,
  };
}

/**
 * Sufficiency over the distinct states of the store, by the paper's criterion (section 2.4,
 * appendix B.4): within a family (the episodes' `domain`; one family where none is recorded),
 * states are grouped by their correct probe answers alone. One entry per distinct (scenario,
 * family, correct answers, gold set), read once whatever the epochs and subjects.
 */
async function sufficiency(q: Q, excludeStates = false): Promise<ProbeSufficiencyReport | null> {
  const rows = await q(`
    WITH ans AS (SELECT run_id, subject_model, state_id, string_agg(probe_id || '=' || expected, chr(10) ORDER BY probe_id) AS answers
                 FROM probe_answers GROUP BY ALL),
         fam AS (SELECT DISTINCT run_id, scenario_id, domain FROM episodes)
    SELECT DISTINCT d.scenario_id, f.domain AS family, list_sort(d.gold_actions) AS gold, coalesce(a.answers, '') AS answers
    FROM probe_decisions d LEFT JOIN ans a USING (run_id, subject_model, state_id) LEFT JOIN fam f USING (run_id, scenario_id)
    ${excludeStates ? `WHERE ${EXCLUDED_STATES_FILTER}` : ''}
    ORDER BY scenario_id, family NULLS FIRST, answers, gold`);
  if (rows.length === 0) return null;
  const families = rows.some((r) => r.family !== null);
  const seen = new Map<string, number>();
  const states = rows.map((r) => {
    const id = String(r.scenario_id);
    const k = (seen.get(id) ?? 0) + 1;
    seen.set(id, k);
    return {
      // The same scenario can show up with different answers or gold sets (several runs); keep them apart.
      state_id: k === 1 ? id : `${id}#${k}`,
      probe_answers: Object.fromEntries(
        String(r.answers)
          .split('\n')
          .filter(Boolean)
          .map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]),
      ),
      gold_actions: (r.gold as string[]).length ? (r.gold as string[]).map(String) : ['(none)'],
      family: r.family === null ? null : String(r.family),
    };
  });
  const s = probeSufficiency(states);
  return {
    sufficient: s.sufficient,
    states: s.states,
    grouped_by: families ? 'family and correct probe answers' : 'correct probe answers',
    answer_groups: s.groups.length,
    groups_with_several_states: s.groupsWithSeveralStates,
    vacuous: s.vacuous,
    counterexample_states: s.counterexampleStates,
    counterexamples: s.counterexamples.map((c) => ({ family: c.family, answers: c.answers, states: c.states, gold_sets: c.goldSets })),
  };
}
