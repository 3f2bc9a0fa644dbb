/**
 * `standoff compare` in-process (src/decide/compare.ts): a planted 5-point regression over 1,000
 * items is detected; 200 seeded null pairs of runs give a false-alarm rate inside the binomial
 * band around alpha; non-inferiority at a margin matches a hand computation; the --fail-on rule,
 * the pairing (items on one side counted, analysis on the intersection), the four-cell table and
 * rerun agreement.
 */
import { describe, it, expect } from 'vitest';
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import { createRng, cohenKappa } from '../../src/stats/index.ts';
import { compareSides, failOnHolds, type CompareSettings } from '../../src/decide/compare.ts';
import { buildSide, parseSideRef, type MetricRow } from '../../src/decide/side.ts';
import { nonInferiorityTest } from '../../src/stats/non-inferiority-test.ts';
import { parseAmount } from '../../src/decide/units.ts';

const S: CompareSettings = { level: 0.95, seed: 7, resamples: 200, adjust: 'holm' };
const rows = (subject: string, values: number[][], suite = 't'): MetricRow[] =>
  values.flatMap((eps, i) => eps.map((v, e) => ({ run_id: `r-${subject}`, subject_model: subject, suite, scenario_id: `item${i}`, epoch: e + 1, value: v })));
const sides = (base: number[][], cand: number[][], baseSubject = 'base', candSubject = 'cand') =>
  [[buildSide(parseSideRef('--baseline', `subject:${baseSubject}`), 'correct', rows(baseSubject, base), 'S1'), buildSide(parseSideRef('--candidate', `subject:${candSubject}`), 'correct', rows(candSubject, cand), 'S2')]] as [ReturnType<typeof buildSide>, ReturnType<typeof buildSide>][];

describe('compare: regression detection', () => {
  it('a planted 5-point regression over 1,000 items is detected (worse, --fail-on worse holds)', () => {
    const rng = createRng(11);
    const base: number[][] = [];
    const cand: number[][] = [];
    for (let i = 0; i < 1000; i++) {
      const b = rng.uniform() < 0.7 ? 1 : 0;
      // 10% of items discordant: 7.5% lose what the baseline had, 2.5% gain: 5 points worse in expectation.
      const u = rng.uniform();
      const c = b === 1 ? (u < 0.075 / 0.7 ? 0 : 1) : u < 0.025 / 0.3 ? 1 : 0;
      base.push([b]);
      cand.push([c]);
    }
    const r = compareSides(sides(base, cand), { ...S, failOn: 'worse' });
    const row = r.rows[0];
    expect(row.pairs).toBe(1000);
    expect(row.difference!).toBeLessThan(-0.03);
    expect(row.verdict).toBe('worse');
    expect(row.upper!).toBeLessThan(0);
    expect(r.failed).toBe(true);
    const fc = row.four_cell!;
    expect(fc.both_right + fc.only_baseline + fc.only_candidate + fc.both_wrong).toBe(1000);
    expect((fc.only_candidate - fc.only_baseline) / 1000).toBeCloseTo(row.difference!, 12);
    // --fail-on any also holds; with no --fail-on nothing fails.
    expect(failOnHolds(r.rows, 'any')).toBe(true);
    expect(compareSides(sides(base, cand), S).failed).toBe(false);
  });

  it('200 seeded null pairs of runs: the false-alarm rate lies in the binomial band around alpha', () => {
    const rng = createRng(2026);
    let alarms = 0;
    for (let k = 0; k < 200; k++) {
      const base: number[][] = [];
      const cand: number[][] = [];
      for (let i = 0; i < 200; i++) {
        const p = 0.2 + 0.7 * rng.uniform(); // item difficulty shared by both runs: epochs of an item are correlated
        const draw = () => [0, 1, 2].map(() => (rng.uniform() < p ? 1 : 0));
        base.push(draw());
        cand.push(draw());
      }
      const r = compareSides(sides(base, cand), { ...S, seed: k, failOn: 'any' });
      expect(r.rows[0].sampling).toBe('clustered');
      if (r.failed) alarms++;
    }
    // Binomial(200, 0.05): P(X <= 1) + P(X >= 22) < 0.002 (scipy binom.ppf(0.0005 / 0.9995, 200, 0.05) = 2, 21).
    expect(alarms).toBeGreaterThanOrEqual(2);
    expect(alarms).toBeLessThanOrEqual(21);
  });
});

describe('compare: non-inferiority at a margin', () => {
  // 400 independent pairs: 20 only the baseline right, 12 only the candidate right, 368 concordant.
  // Hand computation: d = -8/400 = -0.02; sum (d_i - dbar)^2 = 32 - 400 * 0.0004 = 31.84;
  // sd^2 = 31.84 / 399 = 0.0797995; se = sqrt(0.0797995 / 400) = 0.0141244.
  // margin 0.05: z = 0.03 / 0.0141244 = 2.12398, p = 1 - Phi(2.12398) = 0.0168358 < 0.025: non-inferior.
  // margin 0.03: z = 0.01 / 0.0141244 = 0.707995, p = 0.239474 > 0.025: not shown non-inferior.
  const base = [...Array(20).fill([1]), ...Array(12).fill([0]), ...Array(200).fill([1]), ...Array(168).fill([0])];
  const cand = [...Array(20).fill([0]), ...Array(12).fill([1]), ...Array(200).fill([1]), ...Array(168).fill([0])];
  it('margin 5pp: non-inferior with the hand-computed p', () => {
    const r = compareSides(sides(base, cand), { ...S, margin: parseAmount('--margin', '5pp'), failOn: 'worse' });
    const row = r.rows[0];
    expect(row.sampling).toBe('independent');
    expect(row.difference).toBeCloseTo(-0.02, 15);
    expect(row.se).toBeCloseTo(0.014124402531334401, 14);
    expect(row.p_noninferior).toBeCloseTo(0.01683575551344964, 12);
    expect(row.verdict).toBe('non-inferior');
    expect(r.failed).toBe(false);
  });
  it('margin 3pp: not shown non-inferior, and --fail-on worse holds', () => {
    const r = compareSides(sides(base, cand), { ...S, margin: 0.03, failOn: 'worse' });
    expect(r.rows[0].p_noninferior).toBeCloseTo(0.23947432128153828, 12);
    expect(r.rows[0].verdict).toBe('not shown non-inferior');
    expect(r.failed).toBe(true);
  });
  it('nonInferiorityTest: z, p and the one-sided lower bound', () => {
    const t = nonInferiorityTest({ difference: -0.01, se: 0.01, margin: 0.02, alpha: 0.025 });
    expect(t.z).toBeCloseTo(1, 15);
    expect(t.p).toBeCloseTo(1 - normalCdf(1, 0, 1), 15);
    expect(t.lower).toBeCloseTo(-0.01 - 1.959963984540054 * 0.01, 12);
    expect(t.nonInferior).toBe(false);
    expect(() => nonInferiorityTest({ difference: 0, se: 0.01, margin: -1 })).toThrow(/margin >= 0/);
  });
});

describe('compare: pairing, adjustment, agreement', () => {
  it('items on one side only are counted and left out; Holm adjusts over metrics x tasks', () => {
    const base = [[1], [0], [1], [1], [0], [1]];
    const cand = [[1], [1], [0], [1], [0]];
    const s = sides(base, cand);
    const extra = buildSide(parseSideRef('--candidate', 'subject:cand'), 'correct', [...rows('cand', cand), { run_id: 'r', subject_model: 'cand', suite: 't', scenario_id: 'new', epoch: 1, value: 1 }], 'S2');
    const r = compareSides([[s[0][0], extra], s[0]], S);
    expect(r.rows[0]).toMatchObject({ pairs: 5, only_baseline: 1, only_candidate: 1 });
    expect(r.rows[1]).toMatchObject({ pairs: 5, only_baseline: 1, only_candidate: 0 });
    expect(r.rows[0].p_adjusted).toBeCloseTo(Math.min(1, 2 * Math.min(r.rows[0].p!, r.rows[1].p!)), 12);
  });
  it('rerun agreement: the same subject twice gives the share identical and Cohen kappa', () => {
    const base = [[1], [0], [1], [1], [0], [1], [0], [0]];
    const cand = [[1], [0], [0], [1], [0], [1], [1], [0]];
    const r = compareSides(sides(base, cand, 'm', 'm'), S);
    expect(r.rerun).toBe(true);
    expect(r.rows[0].agreement!.share_identical).toBe(6 / 8);
    expect(r.rows[0].agreement!.kappa).toBeCloseTo(cohenKappa(base.flat(), cand.flat()).kappa!, 15);
  });
  it('one subject with two values for an item is an error that says to name a run', () => {
    const r = rows('m', [[1]]);
    expect(() => buildSide(parseSideRef('--baseline', 'subject:m'), 'correct', [...r, { ...r[0], run_id: 'other' }], 'S')).toThrow(/run:ID/);
    expect(() => parseSideRef('--baseline', 'model-x')).toThrow(/run:ID or subject:NAME/);
    expect(() => parseAmount('--margin', '2 points')).toThrow(/2pp/);
  });
});
