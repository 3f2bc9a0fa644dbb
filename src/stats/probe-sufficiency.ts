import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/** A decision state with the correct answers to its probes and its set of gold actions. */
export interface ProbeState {
  state_id: string;
  /** probe id -> the correct (ground-truth) answer for this state. */
  probe_answers: Readonly<Record<string, string>>;
  /** Acceptable next actions (non-empty). */
  gold_actions: readonly string[];
  /**
   * The family (or procedure) the state belongs to: states are compared only within the same
   * family, as the paper's environments are; absent/null = one shared family. This is a grouping
   * unit, never a way to hide a decisive element: anything that decides the action and varies
   * between states of a family must itself be probed, or the check rightly fails.
   */
  family?: string | null;
}

export interface ProbeAnswerGroup {
  /** The shared probe answer vector. */
  answers: Record<string, string>;
  /** The shared family (null when none was given). */
  family: string | null;
  /** State ids with that vector, in input order. */
  states: string[];
  /** Gold actions common to every state of the group (sorted); empty for a counterexample. */
  commonActions: string[];
}

export interface ProbeSufficiencyResult {
  /** True when every group of states with identical correct probe answers shares a gold action. */
  sufficient: boolean;
  /** States checked. */
  states: number;
  groups: ProbeAnswerGroup[];
  /** Groups holding two or more states: the only places where the check compares anything. */
  groupsWithSeveralStates: number;
  /**
   * True when no group holds two states, so no two states were compared and "sufficient" says
   * nothing (e.g. every authored scenario with its own probes).
   */
  vacuous: boolean;
  /** Groups with no common gold action: the probes cannot determine the action there. */
  counterexamples: { answers: Record<string, string>; family: string | null; states: string[]; goldSets: string[][] }[];
  /** Distinct states in counterexample groups. */
  counterexampleStates: number;
}

/**
 * Probe sufficiency, the paper's criterion: can correct answers to this probe set determine a
 * correct action? Within a family, states are grouped by their gold probe answers alone (same
 * probe ids, same answers). A group is a counterexample when no single action is correct for every
 * state in it (the intersection of their gold sets is empty); the probe set is sufficient when
 * there is none, so a policy that sees only the correct probe answers can act correctly on every
 * state. Only then does a facts-right, action-wrong outcome point at the decision rather than at an
 * unprobed fact. When no group holds two states (`vacuous`), nothing was compared and the verdict
 * is empty.
 *
 * Source: Li, Krishnan & Padman, "Reading Right, Acting Wrong" (arXiv:2610.18579), sections 2.4
 * and B.4. As the paper notes, finding no counterexample in a sample of natural states does not
 * prove sufficiency (exhaustive enumeration does, in finite environments), and sufficiency does
 * not show that a model used the facts.
 *
 * Degenerate cases: no states -> sufficient true and vacuous, no groups; a state with no probes
 * (empty probe_answers) is grouped with the other probe-less states, which then must share a gold
 * action; a group of one state is sufficient by itself.
 *
 * Throws `dataError` for a non-array input ('stats.badShape'), a state that is not {state_id:
 * string, probe_answers: {id: string}, gold_actions: non-empty string[]} ('stats.badProbeState',
 * naming the index and field) and a repeated state_id ('stats.duplicateId').
 *
 * @example
 * import { probeSufficiency } from './probe-sufficiency.ts';
 * const r = probeSufficiency([
 *   { state_id: 'a', probe_answers: { door: 'open' }, gold_actions: ['go', 'look'] },
 *   { state_id: 'b', probe_answers: { door: 'open' }, gold_actions: ['go'] },
 *   { state_id: 'c', probe_answers: { door: 'shut' }, gold_actions: ['open door'] },
 * ]);
 * // r.sufficient = true; r.groups[0].commonActions = ['go']; r.groupsWithSeveralStates = 1, r.vacuous = false
 */
export function probeSufficiency(states: readonly ProbeState[]): ProbeSufficiencyResult {
  const fn = 'probeSufficiency';
  if (!Array.isArray(states)) throw dataError('stats.badShape', `${fn} requires an array of states, got ${show(states)}`);
  const ids = new Set<string>();
  const byKey = new Map<string, { answers: Record<string, string>; family: string | null; states: string[]; golds: string[][] }>();
  const byObject = new Map<object, { answers: [string, string][]; json: string; keys: Map<string | null, string> }>();
  const byGold = new Map<unknown, string[]>();
  states.forEach((s, i) => {
    const bad = (what: string, got: unknown): never => {
      throw dataError('stats.badProbeState', `${fn} requires ${what} in states[${i}], got ${show(got)}`);
    };
    if (s === null || typeof s !== 'object') bad('an object', s);
    if (typeof s.state_id !== 'string') bad('state_id to be a string', s.state_id);
    const pa = s.probe_answers;
    if (pa === null || typeof pa !== 'object' || Array.isArray(pa)) bad('probe_answers to be an object', pa);
    // Sorted and checked once per answers object: callers pass one object for the many states that share it.
    let sorted = byObject.get(pa);
    if (sorted === undefined) {
      const entries = Object.entries(pa as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [k, v] of entries) if (typeof v !== 'string') bad(`probe_answers.${k} to be a string`, v);
      sorted = { answers: entries as [string, string][], json: JSON.stringify(entries), keys: new Map() };
      byObject.set(pa, sorted);
    }
    const answers = sorted.answers;
    const gold = s.gold_actions;
    // Checked, deduplicated and sorted once per gold array (callers may share one among states).
    let golds = byGold.get(gold);
    if (golds === undefined) {
      if (!Array.isArray(gold) || gold.length === 0 || !gold.every((g) => typeof g === 'string')) {
        bad('gold_actions to be a non-empty array of strings', gold);
      }
      golds = [...new Set(gold as string[])].sort();
      byGold.set(gold, golds);
    }
    const family = s.family ?? null;
    if (family !== null && typeof family !== 'string') bad('family to be a string or null', family);
    if (ids.has(s.state_id)) throw dataError('stats.duplicateId', `${fn} got state_id ${JSON.stringify(s.state_id)} twice`);
    ids.add(s.state_id);
    // JSON.stringify([family, answers]), written once per (answers object, family).
    let key = sorted.keys.get(family);
    if (key === undefined) sorted.keys.set(family, (key = `[${JSON.stringify(family)},${sorted.json}]`));
    let g = byKey.get(key);
    if (g === undefined) {
      g = { answers: Object.fromEntries(answers), family, states: [], golds: [] };
      byKey.set(key, g);
    }
    g.states.push(s.state_id);
    g.golds.push(golds);
  });

  const groups: ProbeAnswerGroup[] = [];
  const counterexamples: ProbeSufficiencyResult['counterexamples'] = [];
  for (const g of byKey.values()) {
    let common = new Set(g.golds[0]);
    for (let i = 1; i < g.golds.length; i++) {
      const next = new Set(g.golds[i]);
      common = new Set([...common].filter((a) => next.has(a)));
    }
    const commonActions = [...common].sort();
    groups.push({ answers: g.answers, family: g.family, states: g.states, commonActions });
    if (commonActions.length === 0) counterexamples.push({ answers: g.answers, family: g.family, states: g.states, goldSets: g.golds });
  }
  const several = groups.filter((g) => g.states.length >= 2).length;
  const counterexampleStates = counterexamples.reduce((a, c) => a + c.states.length, 0);
  return { sufficient: counterexamples.length === 0, states: states.length, groups, groupsWithSeveralStates: several, vacuous: several === 0, counterexamples, counterexampleStates };
}
