/**
 * Paired-probe outcomes and probe sufficiency (Li, Krishnan & Padman, "Reading Right, Acting
 * Wrong", sections 2.3, 2.4, B.3, B.4, 6.1), plus the groupBy helper. Interval values are
 * R 4.2.2 `binom.test(x, n)$conf.int`, quoted where used.
 */
import { describe, expect, it } from 'vitest';
import { groupBy } from '../../src/stats/group-by.ts';
import { probeOutcomeFromTally, probeOutcomes, type ProbeRow } from '../../src/stats/probe-outcomes.ts';
import { probeSufficiency } from '../../src/stats/probe-sufficiency.ts';
import { expectDataError } from '../helpers/stats.ts';

/** A row; facts-wrong rows get 3 of 4 probes answered (one unanswerable, counted wrong). */
function row(model: string, id: string, facts: boolean, action: boolean, composed?: boolean | null): ProbeRow {
  return {
    state_id: id,
    subject_model: model,
    all_facts_correct: facts,
    action_correct: action,
    probes_answered: facts ? 4 : 3,
    probes_total: 4,
    probe_accuracy: facts ? 1 : 0.5,
    ...(composed === undefined ? {} : { composed_correct: composed }),
  };
}

// m1: 5 FR/AR, 2 FR/AW, 2 FW/AR, 1 FW/AW, plus one state with no applicable probe.
const M1: ProbeRow[] = [
  row('m1', 's1', true, true, true),
  row('m1', 's2', true, true, true),
  row('m1', 's3', true, true, true),
  row('m1', 's4', true, true, false),
  row('m1', 's5', true, true),
  row('m1', 's6', true, false, true),
  row('m1', 's7', true, false, true),
  row('m1', 's8', false, true, true),
  row('m1', 's9', false, true, null),
  row('m1', 's10', false, false, false),
  { ...row('m1', 's11', false, false), probes_answered: 0, probes_total: 0, probe_accuracy: 0 },
];
// m2: every decision right, facts always right.
const M2: ProbeRow[] = [row('m2', 's1', true, true), row('m2', 's2', true, true)];

describe('probeOutcomes', () => {
  it('computes the four cells, conditional rates and their Clopper-Pearson intervals', () => {
    const [g] = probeOutcomes(M1);
    expect(g.group).toBe('all');
    expect(g.states).toBe(10);
    expect(g.statesWithoutProbes).toBe(1);
    expect(g.level).toBe(0.95);
    const { factsRightActionRight, factsRightActionWrong, factsWrongActionRight, factsWrongActionWrong } = g.cells;
    expect([factsRightActionRight.count, factsRightActionWrong.count, factsWrongActionRight.count, factsWrongActionWrong.count]).toEqual([5, 2, 2, 1]);
    expect(factsRightActionRight.rate).toBe(0.5);
    // R: binom.test(5, 10)$conf.int -> 0.1870860284 0.8129139716
    expect(factsRightActionRight.lower).toBeCloseTo(0.1870860284, 9);
    expect(factsRightActionRight.upper).toBeCloseTo(0.8129139716, 9);
    // R: binom.test(2, 10)$conf.int -> 0.0252107263 0.5560954623
    expect(factsRightActionWrong).toMatchObject({ count: 2, n: 10, rate: 0.2 });
    expect(factsRightActionWrong.upper).toBeCloseTo(0.5560954623, 9);
    // Of 3 decision errors, 2 follow correct reading. R: binom.test(2, 3)$conf.int -> 0.0942993241 0.9915962413
    expect(g.errorsAfterCorrectReading).toMatchObject({ count: 2, n: 3 });
    expect(g.errorsAfterCorrectReading.rate).toBeCloseTo(2 / 3, 15);
    expect(g.errorsAfterCorrectReading.lower).toBeCloseTo(0.0942993241, 9);
    expect(g.errorsAfterCorrectReading.upper).toBeCloseTo(0.9915962413, 9);
    // P(action wrong | all facts right) = 2/7. R: binom.test(2, 7)$conf.int -> 0.0366925662 0.7095791363
    expect(g.actionWrongGivenFactsRight).toMatchObject({ count: 2, n: 7 });
    expect(g.actionWrongGivenFactsRight.lower).toBeCloseTo(0.0366925662, 9);
    expect(g.actionWrongGivenFactsRight.upper).toBeCloseTo(0.7095791363, 9);
    expect(g.actionRightGivenFactWrong).toMatchObject({ count: 2, n: 3 });
    // R: binom.test(7, 10)$conf.int -> 0.3475471499 0.9332604888
    expect(g.decisionAccuracy).toMatchObject({ count: 7, n: 10, rate: 0.7 });
    expect(g.decisionAccuracy.lower).toBeCloseTo(0.3475471499, 9);
    expect(g.allFactsCorrect).toMatchObject({ count: 7, n: 10, rate: 0.7 });
  });

  it('reports mean probe accuracy and coverage (unanswerable probes count as wrong)', () => {
    const [g] = probeOutcomes(M1);
    expect(g.meanProbeAccuracy).toBeCloseTo((7 * 1 + 3 * 0.5) / 10, 15);
    expect(g.pooledProbeAccuracy).toBeCloseTo((7 * 4 + 3 * 2) / 40, 15);
    expect(g.coverage).toEqual({ answered: 7 * 4 + 3 * 3, total: 40, rate: 37 / 40 });
  });

  it('compares composition in code with the decision on the same states', () => {
    const [g] = probeOutcomes(M1);
    // composed set on s1-s4, s6-s8, s10 (8 states): composed right 6, decision right 5
    // repaired: s6, s7 (composed right, action wrong); broken: s4 (composed wrong, action right)
    expect(g.composed).not.toBeNull();
    const c = g.composed!;
    expect(c.n).toBe(8);
    // R: binom.test(6, 8)$conf.int -> 0.3491442056 0.9681459738
    expect(c.composedAccuracy).toMatchObject({ count: 6, n: 8, rate: 0.75 });
    expect(c.composedAccuracy.lower).toBeCloseTo(0.3491442056, 9);
    expect(c.decisionAccuracy).toMatchObject({ count: 5, n: 8, rate: 0.625 });
    expect(c.difference).toBeCloseTo(0.125, 15);
    expect(c.repaired).toBe(2);
    expect(c.broken).toBe(1);
  });

  it('takes grouped input (Map from groupBy, or a plain object) and keeps group order', () => {
    const byModel = probeOutcomes(groupBy([...M1, ...M2], 'subject_model'));
    expect(byModel.map((g) => [g.group, g.states])).toEqual([['m1', 10], ['m2', 2]]);
    const obj = probeOutcomes({ first: M2, second: M1 }, { level: 0.9 });
    expect(obj.map((g) => g.group)).toEqual(['first', 'second']);
    expect(obj[0].level).toBe(0.9);
    // m2: no decision error -> the error share has n 0 and null rate; no facts-wrong state either
    expect(obj[0].errorsAfterCorrectReading).toEqual({ count: 0, n: 0, rate: null, lower: null, upper: null });
    expect(obj[0].actionRightGivenFactWrong.rate).toBeNull();
    expect(obj[0].composed).toBeNull();
    // the same state id in two groups is fine
    expect(() => probeOutcomes({ a: M2, b: M2 })).not.toThrow();
  });

  it('degenerate: no rows, or only rows without probes -> zero states and null rates', () => {
    for (const rows of [[], [M1[10]]]) {
      const [g] = probeOutcomes(rows);
      expect(g.states).toBe(0);
      expect(g.cells.factsRightActionRight).toEqual({ count: 0, n: 0, rate: null, lower: null, upper: null });
      expect(g.meanProbeAccuracy).toBeNull();
      expect(g.pooledProbeAccuracy).toBeNull();
      expect(g.coverage.rate).toBeNull();
      expect(g.composed).toBeNull();
    }
    expect(probeOutcomes(new Map())).toEqual([]);
  });

  it('rejects malformed and inconsistent rows, naming the group and row', () => {
    const ok = row('m', 's1', true, true);
    expectDataError(() => probeOutcomes([{ ...ok, action_correct: 1 as never }]), 'stats.badProbeRow', 'action_correct to be a boolean in row 0 of group "all", got 1');
    expectDataError(() => probeOutcomes([{ ...ok, probes_answered: 5 }]), 'stats.badProbeRow', 'probes_answered <= probes_total (4) in row 0 of group "all", got 5');
    expectDataError(() => probeOutcomes({ g1: [{ ...ok, probe_accuracy: 1.2 }] }), 'stats.badProbeRow', 'probe_accuracy in [0, 1] in row 0 of group "g1", got 1.2');
    expectDataError(() => probeOutcomes([{ ...ok, probes_total: 2.5 }]), 'stats.badProbeRow', 'probes_total to be an integer >= 0');
    expectDataError(() => probeOutcomes([{ ...ok, composed_correct: 'yes' as never }]), 'stats.badProbeRow', 'composed_correct to be a boolean or null');
    expectDataError(() => probeOutcomes([{ ...ok, state_id: 3 as never }]), 'stats.badProbeRow', 'state_id to be a string');
    // all facts "correct" with an unanswerable probe contradicts the rule that unanswered counts as wrong
    expectDataError(() => probeOutcomes([{ ...ok, probes_answered: 3 }]), 'stats.badProbeRow', 'all_facts_correct true with 3/4 probes answered');
    expectDataError(() => probeOutcomes([{ ...ok, probe_accuracy: 0.75 }]), 'stats.badProbeRow', 'probe_accuracy 0.75');
    expectDataError(() => probeOutcomes([{ ...ok, all_facts_correct: false }]), 'stats.badProbeRow', 'all_facts_correct false with every probe answered and probe_accuracy 1');
    expectDataError(() => probeOutcomes([ok, ok]), 'stats.duplicateId', 'state_id "s1" twice in group "all"');
    expectDataError(() => probeOutcomes([ok], { level: 2 }), 'stats.badLevel', 'level strictly between 0 and 1, got 2');
    expectDataError(() => probeOutcomes(5 as never), 'stats.badShape', 'got 5');
    expectDataError(() => probeOutcomes({ g: 'x' as never }), 'stats.badShape', 'group "g" to be an array of rows');
  });
});

describe('groupBy', () => {
  it('groups by a field or a function, keeping first-seen order', () => {
    const rows = [{ m: 'b', x: 1 }, { m: 'a', x: 2 }, { m: 'b', x: 3 }];
    const g = groupBy(rows, 'm');
    expect([...g.keys()]).toEqual(['b', 'a']);
    expect(g.get('b')).toEqual([rows[0], rows[2]]);
    const byParity = groupBy(rows, (r) => (r.x % 2 ? 'odd' : 'even'));
    expect(byParity.get('odd')).toHaveLength(2);
    expect(groupBy([], 'm' as never).size).toBe(0);
    expect([...groupBy([{ k: 1 }, { k: true }], 'k').keys()]).toEqual(['1', 'true']);
  });

  it('rejects a missing key', () => {
    expectDataError(() => groupBy([{ m: 'a' }, { m: null }], 'm'), 'stats.badKey', 'groupBy requires key "m" to give a string, number or boolean, got null at row 1');
    expectDataError(() => groupBy([{ m: 'a' }], () => undefined as never), 'stats.badKey', 'the key function');
    expectDataError(() => groupBy('x' as never, 'm' as never), 'stats.badShape', 'array of rows');
  });
});

describe('probeSufficiency', () => {
  it('is sufficient when every group with the same correct answers shares a gold action', () => {
    const r = probeSufficiency([
      { state_id: 'a', probe_answers: { door: 'open', key: 'no' }, gold_actions: ['go', 'look'] },
      { state_id: 'b', probe_answers: { key: 'no', door: 'open' }, gold_actions: ['go'] }, // same vector, other key order
      { state_id: 'c', probe_answers: { door: 'shut', key: 'no' }, gold_actions: ['open door'] },
    ]);
    expect(r.sufficient).toBe(true);
    expect(r.states).toBe(3);
    expect(r.groups).toEqual([
      { answers: { door: 'open', key: 'no' }, family: null, states: ['a', 'b'], commonActions: ['go'] },
      { answers: { door: 'shut', key: 'no' }, family: null, states: ['c'], commonActions: ['open door'] },
    ]);
    expect(r.counterexamples).toEqual([]);
    expect([r.groupsWithSeveralStates, r.vacuous]).toEqual([1, false]);
  });

  it('compares states only within the same family, and by the probe answers alone inside it', () => {
    // The paper's criterion: within a family, equal probe answers must allow a common action.
    const states = [
      { state_id: 'a', probe_answers: { fraud: 'yes', late: 'yes' }, gold_actions: ['escalate'], family: 'refund' },
      { state_id: 'b', probe_answers: { fraud: 'yes', late: 'yes' }, gold_actions: ['withdraw'], family: 'refund' },
      { state_id: 'c', probe_answers: { fraud: 'yes', late: 'yes' }, gold_actions: ['unlock'], family: 'household' },
    ];
    const r = probeSufficiency(states);
    expect([r.sufficient, r.vacuous, r.groups.length, r.counterexampleStates]).toEqual([false, false, 2, 2]);
    expect(r.counterexamples).toEqual([{ answers: { fraud: 'yes', late: 'yes' }, family: 'refund', states: ['a', 'b'], goldSets: [['escalate'], ['withdraw']] }]);
    // The household state is compared with nothing: alone in its family's group.
    expect(r.groups[1]).toEqual({ answers: { fraud: 'yes', late: 'yes' }, family: 'household', states: ['c'], commonActions: ['unlock'] });
  });

  it('is vacuous when every state is alone in its group (nothing compared)', () => {
    const r = probeSufficiency([
      { state_id: 'a', probe_answers: { p1: 'yes' }, gold_actions: ['go'] },
      { state_id: 'b', probe_answers: { p2: 'yes' }, gold_actions: ['stop'] },
    ]);
    expect([r.sufficient, r.vacuous, r.groupsWithSeveralStates]).toEqual([true, true, 0]);
  });

  it('reports counterexamples: same answers, no common gold action', () => {
    const r = probeSufficiency([
      { state_id: 'a', probe_answers: { door: 'open' }, gold_actions: ['go'] },
      { state_id: 'b', probe_answers: { door: 'open' }, gold_actions: ['look', 'look'] },
      { state_id: 'c', probe_answers: { door: 'open' }, gold_actions: ['go', 'look'] },
      { state_id: 'd', probe_answers: { door: 'shut' }, gold_actions: ['wait'] },
    ]);
    expect(r.sufficient).toBe(false);
    expect(r.counterexamples).toEqual([{ answers: { door: 'open' }, family: null, states: ['a', 'b', 'c'], goldSets: [['go'], ['look'], ['go', 'look']] }]);
    expect(r.groups[0].commonActions).toEqual([]);
  });

  it('treats a different probe set as a different vector', () => {
    const r = probeSufficiency([
      { state_id: 'a', probe_answers: { door: 'open' }, gold_actions: ['go'] },
      { state_id: 'b', probe_answers: { door: 'open', light: 'on' }, gold_actions: ['read'] },
    ]);
    expect(r.sufficient).toBe(true);
    expect(r.groups).toHaveLength(2);
  });

  it('degenerate: no states -> vacuously sufficient; probe-less states must share an action', () => {
    expect(probeSufficiency([])).toEqual({ sufficient: true, states: 0, groups: [], groupsWithSeveralStates: 0, vacuous: true, counterexamples: [], counterexampleStates: 0 });
    const r = probeSufficiency([
      { state_id: 'a', probe_answers: {}, gold_actions: ['x'] },
      { state_id: 'b', probe_answers: {}, gold_actions: ['y'] },
    ]);
    expect(r.sufficient).toBe(false);
    expect(r.counterexamples[0].answers).toEqual({});
  });

  it('rejects malformed states', () => {
    const ok = { state_id: 'a', probe_answers: { p: 'x' }, gold_actions: ['go'] };
    expectDataError(() => probeSufficiency([{ ...ok, gold_actions: [] }]), 'stats.badProbeState', 'gold_actions to be a non-empty array of strings in states[0], got an array of 0');
    expectDataError(() => probeSufficiency([{ ...ok, probe_answers: { p: 3 } as never }]), 'stats.badProbeState', 'probe_answers.p to be a string in states[0], got 3');
    expectDataError(() => probeSufficiency([{ ...ok, probe_answers: null as never }]), 'stats.badProbeState', 'probe_answers to be an object');
    expectDataError(() => probeSufficiency([{ ...ok, state_id: undefined as never }]), 'stats.badProbeState', 'state_id to be a string');
    expectDataError(() => probeSufficiency([ok, ok]), 'stats.duplicateId', 'state_id "a" twice');
    expectDataError(() => probeSufficiency({} as never), 'stats.badShape', 'array of states');
  });

  it('answers objects and gold arrays shared by many states (sorted once) give what a copy per state gives', () => {
    const shared = { b: 'no', a: 'yes' };
    const other = { a: 'yes', b: 'yes' };
    const gold = ['stop', 'go', 'stop'];
    const states = (copy: boolean) =>
      ['s1', 's2', 's3', 's4', 's5'].map((id, i) => ({
        state_id: id,
        probe_answers: i === 2 ? (copy ? { ...other } : other) : copy ? { ...shared } : shared,
        gold_actions: i === 4 ? ['stop'] : copy ? [...gold] : gold,
        family: i === 3 ? 'f2' : 'f1',
      }));
    const sharedResult = probeSufficiency(states(false));
    expect(JSON.stringify(sharedResult)).toBe(JSON.stringify(probeSufficiency(states(true))));
    // Grouped by family and answers: {f1, shared} holds s1, s2, s5; s3 and s4 are alone.
    expect(sharedResult.groups.map((g) => g.states)).toEqual([['s1', 's2', 's5'], ['s3'], ['s4']]);
    expect(sharedResult.groups[0].commonActions).toEqual(['stop']);
    expect(probeSufficiency(states(false).map((x, i) => (i === 1 ? { ...x, gold_actions: ['go'] } : x))).counterexamples[0].goldSets).toEqual([['go', 'stop'], ['go'], ['stop']]);
    // A bad value in a shared object is reported at the first state holding it.
    const bad = { p: 3 } as never;
    expectDataError(
      () => probeSufficiency([{ state_id: 'a', probe_answers: bad, gold_actions: ['go'] }, { state_id: 'b', probe_answers: bad, gold_actions: ['go'] }]),
      'stats.badProbeState',
      'probe_answers.p to be a string in states[0], got 3',
    );
  });
});

describe('probeOutcomeFromTally', () => {
  it('gives exactly what probeOutcomes gives for the same states (the report aggregates in DuckDB and calls it)', () => {
    const rows: ProbeRow[] = [];
    const add = (n: number, facts: boolean, action: boolean, composed: boolean | null) => {
      for (let i = 0; i < n; i++) {
        rows.push({ state_id: `s${rows.length}`, subject_model: 'm', all_facts_correct: facts, action_correct: action, probes_answered: 4, probes_total: 4, probe_accuracy: facts ? 1 : 0.75, composed_correct: composed });
      }
    };
    add(6, true, true, true);
    add(2, true, false, true);
    add(1, false, true, false);
    add(3, false, false, null);
    const fromRows = probeOutcomes({ m: rows })[0];
    const tally = probeOutcomeFromTally('m', {
      frar: 6, fraw: 2, fwar: 1, fwaw: 3, statesWithoutProbes: 0,
      accSum: 8 + 4 * 0.75, pooledNum: (8 + 4 * 0.75) * 4, answered: 48, total: 48,
      cn: 9, composedRight: 8, decisionRightOnComposed: 7, repaired: 2, broken: 1,
    });
    expect(tally).toEqual(fromRows);
    // Hand-worked: 2 of the 5 errors follow all-facts-correct; R: binom.test(2, 5)$conf.int
    expect(tally.errorsAfterCorrectReading.rate).toBe(0.4);
    expect(tally.errorsAfterCorrectReading.lower).toBeCloseTo(0.05274495, 7);
    expect(tally.errorsAfterCorrectReading.upper).toBeCloseTo(0.8533672, 7);
  });
});
