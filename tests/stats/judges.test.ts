/**
 * Judge-panel statistics: medianOfJudges (the oracle's median_self_exclusion cases are in
 * oracle-cases.test.ts), majorityVerdict, leaveOneJudgeOut, judgePairAgreement and cohenKappa.
 * Kappa reference values: statsmodels 0.13 `cohens_kappa(table).kappa`, via
 * tests/oracle/gen_extra_stats.py -> tests/oracle/extra-stats.json.
 */
import { describe, expect, it } from 'vitest';
import { cohenKappa } from '../../src/stats/cohen-kappa.ts';
import { judgePairAgreement } from '../../src/stats/judge-pair-agreement.ts';
import { leaveOneJudgeOut } from '../../src/stats/leave-one-judge-out.ts';
import { majorityVerdict } from '../../src/stats/majority-verdict.ts';
import { medianOfJudges, type ExcludeBy } from '../../src/stats/median-of-judges.ts';
import { expectDataError, loadExtraStats } from '../helpers/stats.ts';

const extra = loadExtraStats();

const JUDGES = [
  { id: 'j1', model: 'gpt-a', family: 'openai' },
  { id: 'j2', model: 'gpt-b', family: 'openai' },
  { id: 'j3', model: 'claude-c', family: 'anthropic' },
  { id: 'j4', model: 'gemini-d', family: 'google' },
];
const SAMPLES = [
  { id: 's1', subject_model: 'gpt-a', subject_family: 'openai' },
  { id: 's2', subject_model: 'claude-c', subject_family: 'anthropic' },
  { id: 's3', subject_model: 'llama-x', subject_family: 'meta' },
  { id: 's4', subject_model: 'gpt-a', subject_family: 'openai' },
];
const SCORES = [
  [9, 2, 5, null],
  [8, 3, 6, 4],
  [2, 9, 7, 5],
  [3, 4, null, null],
];

describe('medianOfJudges', () => {
  it('drops same-model judges by default and reports what it used', () => {
    const r = medianOfJudges({ judges: JUDGES, samples: SAMPLES, scores: SCORES });
    expect(r.excludeBy).toBe('model');
    expect(r.perSample[0]).toEqual({
      sample: 's1', subject_model: 'gpt-a', median: 3, judgesUsed: ['j2', 'j3', 'j4'], judgesExcluded: ['j1'], judgesMissing: [],
    });
    expect(r.perSample[1]).toMatchObject({ median: 3, judgesUsed: ['j1', 'j2', 'j4'], judgesExcluded: ['j3'] });
    expect(r.perSample[2]).toMatchObject({ median: 6, judgesUsed: ['j1', 'j2', 'j3'], judgesMissing: ['j4'] });
    // s4: j1 excluded but gave no score (not an excluded verdict); j4 missing; j2 and j3 -> (4 + 5)/2
    expect(r.perSample[3]).toMatchObject({ median: 4.5, judgesUsed: ['j2', 'j3'], judgesExcluded: [], judgesMissing: ['j4'] });
    expect(r.totals).toEqual({ samples: 4, excludedVerdicts: 2, samplesWithNoJudge: 0, missingVerdicts: 2 });
  });

  it("with excludeBy 'family' also drops same-family judges", () => {
    const r = medianOfJudges({ judges: JUDGES, samples: SAMPLES, scores: SCORES }, { excludeBy: 'family' });
    // s1 (openai): j1 and j2 dropped -> median(2, 3) = 2.5
    expect(r.perSample[0]).toMatchObject({ median: 2.5, judgesExcluded: ['j1', 'j2'] });
    // s4 (openai): j1 (no score) and j2 dropped; j3 = 5 only
    expect(r.perSample[3]).toMatchObject({ median: 5, judgesUsed: ['j3'], judgesExcluded: ['j2'] });
    expect(r.totals.excludedVerdicts).toBe(4);
  });

  it("with excludeBy 'none' keeps every judge", () => {
    const r = medianOfJudges({ judges: JUDGES, samples: SAMPLES, scores: SCORES }, { excludeBy: 'none' });
    expect(r.perSample[0]).toMatchObject({ median: 5.5, judgesExcluded: [] }); // median(9, 8, 2, 3) = (3 + 8)/2
    expect(r.totals.excludedVerdicts).toBe(0);
  });

  it('degenerate: no judge left -> null and counted; no judges; no samples; all tied', () => {
    const r = medianOfJudges({
      judges: [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }],
      samples: [{ id: 's1', subject_model: 'a' }, { id: 's2', subject_model: 'c' }, { id: 's3', subject_model: 'c' }],
      scores: [[1, 7, 7], [null, null, 7]],
    });
    expect(r.perSample.map((s) => s.median)).toEqual([null, 7, 7]);
    expect(r.totals).toMatchObject({ samplesWithNoJudge: 1, excludedVerdicts: 1, missingVerdicts: 2 });
    const noJudges = medianOfJudges({ judges: [], samples: [{ id: 's1', subject_model: 'a' }], scores: [] });
    expect(noJudges.perSample[0].median).toBeNull();
    expect(noJudges.totals.samplesWithNoJudge).toBe(1);
    const noSamples = medianOfJudges({ judges: [{ id: 'j', model: 'm' }], samples: [], scores: [[]] });
    expect(noSamples.perSample).toEqual([]);
    expect(noSamples.totals).toEqual({ samples: 0, excludedVerdicts: 0, samplesWithNoJudge: 0, missingVerdicts: 0 });
  });

  it('rejects bad input', () => {
    const j = [{ id: 'j1', model: 'a' }];
    const s = [{ id: 's1', subject_model: 'b' }];
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [[1], [2]] }), 'stats.badShape', 'scores to have one row per judge (1), got 2');
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [[1, 2]] }), 'stats.badShape', 'scores[0] to have one entry per sample (1), got 2');
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [[NaN]] }), 'stats.badValue', 'scores[0][0] to be a finite number or null, got NaN');
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [['5' as never]] }), 'stats.badValue', 'got "5"');
    expectDataError(() => medianOfJudges({ judges: [...j, ...j], samples: s, scores: [[1], [1]] }), 'stats.duplicateId', 'judge id "j1" twice');
    expectDataError(() => medianOfJudges({ judges: j, samples: [...s, ...s], scores: [[1, 1]] }), 'stats.duplicateId', 'sample id "s1" twice');
    expectDataError(() => medianOfJudges({ judges: [{ id: 'j1' } as never], samples: s, scores: [[1]] }), 'stats.badJudge', 'judges[0] to be {id: string, model: string}');
    expectDataError(() => medianOfJudges({ judges: j, samples: [{ id: 's1' } as never], scores: [[1]] }), 'stats.badSample', 'samples[0] to be {id: string, subject_model: string}');
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [[1]] }, { excludeBy: 'family' }), 'stats.missingFamily', `judges[0] ("j1") has none`);
    expectDataError(
      () => medianOfJudges({ judges: [{ id: 'j1', model: 'a', family: 'f' }], samples: s, scores: [[1]] }, { excludeBy: 'family' }),
      'stats.missingFamily',
      `samples[0] ("s1") has none`,
    );
    expectDataError(() => medianOfJudges({ judges: j, samples: s, scores: [[1]] }, { excludeBy: 'vendor' as ExcludeBy }), 'stats.badOption', `excludeBy to be one of 'model', 'family', 'none', got "vendor"`);
  });
});

describe('majorityVerdict', () => {
  const judges = [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }];
  const samples = [{ id: 's1', subject_model: 'z' }, { id: 's2', subject_model: 'c' }];
  const verdicts = [['PASS', 'PASS'], ['FAIL', 'FAIL'], ['PASS', 'PASS']];

  it('takes the plurality after self-exclusion; a tie is null and counted by default', () => {
    const r = majorityVerdict({ judges, samples, verdicts });
    expect(r.perSample[0]).toEqual({
      sample: 's1', subject_model: 'z', verdict: 'PASS', votes: [{ label: 'PASS', count: 2 }, { label: 'FAIL', count: 1 }],
      tie: false, judgesUsed: ['j1', 'j2', 'j3'], judgesExcluded: [],
    });
    expect(r.perSample[1]).toMatchObject({ verdict: null, tie: true, judgesExcluded: ['j3'] });
    expect(r.totals).toEqual({ samples: 2, ties: 1, unresolvedTies: 1, excludedVerdicts: 1, samplesWithNoJudge: 0 });
  });

  it('resolves ties with an explicit preference list, still counting them', () => {
    const r = majorityVerdict({ judges, samples, verdicts }, { tie: { prefer: ['FAIL', 'PASS'] } });
    expect(r.perSample[1]).toMatchObject({ verdict: 'FAIL', tie: true });
    expect(r.totals).toMatchObject({ ties: 1, unresolvedTies: 0 });
  });

  it('degenerate: no vote -> null and counted; unanimous; numeric and boolean labels', () => {
    const r = majorityVerdict({
      judges,
      samples: [{ id: 's1', subject_model: 'z' }, { id: 's2', subject_model: 'z' }, { id: 's3', subject_model: 'a' }],
      verdicts: [[true, null, 1], [true, null, null], [true, null, null]],
    });
    expect(r.perSample.map((s) => s.verdict)).toEqual([true, null, null]);
    expect(r.totals).toMatchObject({ samplesWithNoJudge: 2, excludedVerdicts: 1, ties: 0 });
  });

  it('rejects bad input and a tie the rule does not cover', () => {
    expectDataError(() => majorityVerdict({ judges, samples, verdicts }, { tie: { prefer: ['UNSURE'] } }), 'stats.tieUnresolved', 'tie between "PASS", "FAIL" on sample "s2"');
    expectDataError(() => majorityVerdict({ judges, samples, verdicts }, { tie: 'coin' as never }), 'stats.badOption', `tie to be 'null' or {prefer: [labels]}, got "coin"`);
    expectDataError(() => majorityVerdict({ judges, samples, verdicts: [['PASS', {} as never], ['FAIL', 'FAIL'], ['PASS', 'PASS']] }), 'stats.badValue', 'verdicts[0][1] to be a string, finite number or boolean or null, got object');
  });
});

describe('leaveOneJudgeOut', () => {
  it('reports the change in each subject mean when each judge is dropped', () => {
    const r = leaveOneJudgeOut({
      judges: [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }],
      samples: [{ id: 's1', subject_model: 'z' }, { id: 's2', subject_model: 'z' }, { id: 's3', subject_model: 'a' }],
      scores: [[1, 1, 4], [2, 3, 6], [9, 9, 10]],
    });
    // z: medians 2 and 3 -> 2.5; a: j1 excluded, median(6, 10) = 8
    expect(r.baseline).toEqual([
      { subject: 'z', mean: 2.5, samples: 2, samplesWithMedian: 2 },
      { subject: 'a', mean: 8, samples: 1, samplesWithMedian: 1 },
    ]);
    const j3 = r.judges.find((j) => j.judge === 'j3')!;
    // without j3: z medians 1.5 and 2 -> 1.75 (delta -0.75); a: only j2 -> 6 (delta -2)
    expect(j3.perSubject).toEqual([
      { subject: 'z', mean: 1.75, samples: 2, samplesWithMedian: 2, delta: -0.75 },
      { subject: 'a', mean: 6, samples: 1, samplesWithMedian: 1, delta: -2 },
    ]);
    expect(j3.maxAbsDelta).toBe(2);
    // j1 never scores subject a (excluded), so a's mean does not move without it
    expect(r.judges[0].perSubject[1].delta).toBe(0);
    expect(r.excludeBy).toBe('model');
  });

  it('degenerate: one judge -> every leave-one-out mean null; no samples; no judges', () => {
    const one = leaveOneJudgeOut({ judges: [{ id: 'j1', model: 'a' }], samples: [{ id: 's1', subject_model: 'z' }], scores: [[5]] });
    expect(one.baseline[0].mean).toBe(5);
    expect(one.judges[0]).toEqual({ judge: 'j1', perSubject: [{ subject: 'z', mean: null, samples: 1, samplesWithMedian: 0, delta: null }], maxAbsDelta: null });
    const none = leaveOneJudgeOut({ judges: [{ id: 'j1', model: 'a' }], samples: [], scores: [[]] });
    expect(none).toEqual({ baseline: [], judges: [{ judge: 'j1', perSubject: [], maxAbsDelta: null }], excludeBy: 'model' });
    const noJudges = leaveOneJudgeOut({ judges: [], samples: [{ id: 's1', subject_model: 'z' }], scores: [] });
    expect(noJudges.baseline[0].mean).toBeNull();
    expect(noJudges.judges).toEqual([]);
  });

  it('rejects bad input like medianOfJudges', () => {
    expectDataError(() => leaveOneJudgeOut({ judges: [{ id: 'j1', model: 'a' }], samples: [], scores: [] }), 'stats.badShape', 'scores to have one row per judge (1), got 0');
  });
});

describe('cohenKappa', () => {
  for (const c of extra.cohen_kappa) {
    it(`matches statsmodels: ${c.id}`, () => {
      // statsmodels 0.13: cohens_kappa(table).kappa on the both-rated crosstab
      const r = cohenKappa(c.input.a, c.input.b);
      expect(r.n).toBe(c.expected.n);
      expect(Math.abs((r.kappa as number) - c.expected.kappa)).toBeLessThanOrEqual(c.tol);
    });
  }

  it('matches the JSDoc example and reports its parts', () => {
    expect(cohenKappa(['y', 'y', 'n', 'n'], ['y', 'n', 'n', 'n'])).toEqual({
      kappa: 0.5, n: 4, agreements: 3, observedAgreement: 0.75, expectedAgreement: 0.5, categories: 2,
    });
  });

  it('degenerate: no both-rated item -> nulls; one shared label throughout -> kappa null, agreement 1', () => {
    expect(cohenKappa([null, 'a'], ['b', null])).toEqual({ kappa: null, n: 0, agreements: 0, observedAgreement: null, expectedAgreement: null, categories: 0 });
    expect(cohenKappa([], [])).toMatchObject({ kappa: null, n: 0 });
    expect(cohenKappa(['ok', 'ok', 'ok'], ['ok', 'ok', 'ok'])).toMatchObject({ kappa: null, observedAgreement: 1, expectedAgreement: 1 });
    // Each rater constant but on different labels: p_e = 0, kappa = 0.
    expect(cohenKappa(['a', 'a'], ['b', 'b']).kappa).toBe(0);
  });

  it('rejects bad input', () => {
    expectDataError(() => cohenKappa(['a'], ['a', 'b']), 'stats.badShape', 'same length, got 1 and 2');
    expectDataError(() => cohenKappa([NaN], ['a']), 'stats.badValue', 'got NaN at a[0]');
    expectDataError(() => cohenKappa('ab' as never, ['a']), 'stats.badShape', 'requires two arrays of labels');
  });
});

describe('judgePairAgreement', () => {
  it('reports both-rated count, raw agreement with a CP interval, and kappa per pair', () => {
    const pairs = judgePairAgreement({
      judges: [{ id: 'j1' }, { id: 'j2' }, { id: 'j3' }],
      verdicts: [
        ['y', 'y', 'n', 'n', null],
        ['y', 'n', 'n', 'n', 'y'],
        [null, null, null, null, 'y'],
      ],
    });
    expect(pairs.map((p) => [p.a, p.b])).toEqual([['j1', 'j2'], ['j1', 'j3'], ['j2', 'j3']]);
    // R: binom.test(3, 4)$conf.int -> 0.1941204 0.9936905
    expect(pairs[0]).toMatchObject({ bothRated: 4, agreements: 3, agreement: 0.75, kappa: 0.5 });
    expect(pairs[0].agreementLower).toBeCloseTo(0.1941204, 7);
    expect(pairs[0].agreementUpper).toBeCloseTo(0.9936905, 7);
    // j1 and j3 never rate the same sample
    expect(pairs[1]).toEqual({ a: 'j1', b: 'j3', bothRated: 0, agreements: 0, agreement: null, agreementLower: null, agreementUpper: null, kappa: null });
    // j2 and j3 agree on their single shared sample, one label only: kappa undefined
    expect(pairs[2]).toMatchObject({ bothRated: 1, agreement: 1, kappa: null });
  });

  it('degenerate: fewer than two judges -> no pairs', () => {
    expect(judgePairAgreement({ judges: [], verdicts: [] })).toEqual([]);
    expect(judgePairAgreement({ judges: [{ id: 'j1' }], verdicts: [['a']] })).toEqual([]);
  });

  it('rejects bad input', () => {
    expectDataError(() => judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [['a']] }), 'stats.badShape', 'one row per judge (2), got 1');
    expectDataError(() => judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [['a'], ['a', 'b']] }), 'stats.badShape', 'same length (1), got 2 in verdicts[1]');
    expectDataError(() => judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j1' }], verdicts: [['a'], ['a']] }), 'stats.duplicateId', 'judge id "j1" twice');
    expectDataError(() => judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [['a'], [[1]]] } as never), 'stats.badValue', 'verdicts[1][0]');
  });
});
