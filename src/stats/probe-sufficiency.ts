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
   * Whatever else, besides the probe answers, decides the action and is visible in the state: for
   * generated procedures the policy's rule table with its (per-state) priority order. States are
   * compared only within the same context; absent/null = one shared context.
   */
  context?: string | null;
}

export interface ProbeAnswerGroup {
  /** The shared probe answer vector. */
  answers: Record<string, string>;
  /** The shared context (null when none was given). */
  context: string | null;
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
  counterexamples: { answers: Record<string, string>; context: string | null; states: string[]; goldSets: string[][] }[];
}

/**
 * Probe sufficiency: can correct answers to this probe set determine a correct action? States are
 * grouped by everything that decides the action: their identical vector of correct probe answers
 * (same probe ids, same answers) and, when given, their `context` (the rest of the visible state
 * that decides the action, such as a generated policy's priority order: two states with the same
 * facts under differently ordered rules may rightly need different actions). The probe set is
 * sufficient when every group has at least one gold action common to all its states, so a policy
 * that sees only the probe answers (in that context) can act correctly on all of them. Only then
 * does a facts-right, action-wrong outcome point at the decision rather than at unprobed facts.
 * When no group holds two states (`vacuous`), nothing was compared and the verdict is empty.
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
  const byKey = new Map<string, { answers: Record<string, string>; context: string | null; states: string[]; golds: string[][] }>();
  states.forEach((s, i) => {
    const bad = (what: string, got: unknown): never => {
      throw dataError('stats.badProbeState', `${fn} requires ${what} in states[${i}], got ${show(got)}`);
    };
    if (s === null || typeof s !== 'object') bad('an object', s);
    if (typeof s.state_id !== 'string') bad('state_id to be a string', s.state_id);
    const pa = s.probe_answers;
    if (pa === null || typeof pa !== 'object' || Array.isArray(pa)) bad('probe_answers to be an object', pa);
    const entries = Object.entries(pa as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [k, v] of entries) if (typeof v !== 'string') bad(`probe_answers.${k} to be a string`, v);
    const answers = entries as [string, string][];
    const gold = s.gold_actions;
    if (!Array.isArray(gold) || gold.length === 0 || !gold.every((g) => typeof g === 'string')) {
      bad('gold_actions to be a non-empty array of strings', gold);
    }
    const context = s.context ?? null;
    if (context !== null && typeof context !== 'string') bad('context to be a string or null', context);
    if (ids.has(s.state_id)) throw dataError('stats.duplicateId', `${fn} got state_id ${JSON.stringify(s.state_id)} twice`);
    ids.add(s.state_id);
    const key = JSON.stringify([context, answers]);
    let g = byKey.get(key);
    if (g === undefined) {
      g = { answers: Object.fromEntries(answers), context, states: [], golds: [] };
      byKey.set(key, g);
    }
    g.states.push(s.state_id);
    g.golds.push([...new Set(gold as string[])].sort());
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
    groups.push({ answers: g.answers, context: g.context, states: g.states, commonActions });
    if (commonActions.length === 0) counterexamples.push({ answers: g.answers, context: g.context, states: g.states, goldSets: g.golds });
  }
  const several = groups.filter((g) => g.states.length >= 2).length;
  return { sufficient: counterexamples.length === 0, states: states.length, groups, groupsWithSeveralStates: several, vacuous: several === 0, counterexamples };
}
