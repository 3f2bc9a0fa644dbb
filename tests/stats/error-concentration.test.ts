/**
 * Error concentration against a permutation null ("Reading Right, Acting Wrong", section 5.3):
 * a hand-computed case, and an independent numpy simulation plus the exact null mean
 * (tests/oracle/gen_concentration.py -> tests/oracle/concentration.json).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRng, errorConcentration } from '../../src/stats/index.ts';
import type { ConcentrationSubject } from '../../src/stats/error-concentration.ts';
import { expectDataError } from '../helpers/stats.ts';

const oracle = JSON.parse(readFileSync(new URL('../oracle/concentration.json', import.meta.url), 'utf8'));

describe('errorConcentration', () => {
  it('hand-computed: two subjects both fail s1 of {s1, s2}; the null puts them together half the time', () => {
    const r = errorConcentration(
      [
        { subject: 'a', factsRight: ['s1', 's2'], errors: ['s1'] },
        { subject: 'b', factsRight: ['s1', 's2'], errors: ['s1'] },
      ],
      { seed: 1, permutations: 20_000 },
    );
    // k defaults to ceil(2 / 2) = 1: every error is on a state >= 1 subject fails, observed and null alike.
    expect([r.minSubjects, r.observed, r.null.mean, r.statesAllFail]).toEqual([1, 1, 1, 1]);
    const k2 = errorConcentration(
      [
        { subject: 'a', factsRight: ['s1', 's2'], errors: ['s1'] },
        { subject: 'b', factsRight: ['s1', 's2'], errors: ['s1'] },
      ],
      { seed: 1, permutations: 20_000, minSubjects: 2 },
    );
    // Observed: both errors on s1 -> share 1; null: share 1 with probability 1/2, else 0.
    expect([k2.observed, k2.onShared, k2.errors, k2.statesAllFail]).toEqual([1, 2, 2, 1]);
    expect(k2.null.mean!).toBeCloseTo(0.5, 1.5); // MC sd 0.0035
    expect(k2.null.statesAllFailMean).toBeCloseTo(0.5, 1.5);
    expect([k2.null.lower, k2.null.upper]).toEqual([0, 1]);
    expect(k2.null.p!).toBeCloseTo(0.5, 1.5); // P(null >= 1) = 1/2
    expect(k2.nullShares.every((x) => x === 0 || x === 1)).toBe(true);
  });

  it('a subject with no errors, and no errors at all', () => {
    const r = errorConcentration(
      [
        { subject: 'a', factsRight: ['s1', 's2'], errors: [] },
        { subject: 'b', factsRight: ['s1'], errors: [] },
      ],
      { seed: 3, permutations: 10 },
    );
    expect([r.errors, r.observed, r.null.mean, r.null.p, r.statesAllFail]).toEqual([0, null, null, null, 0]);
  });

  it('is reproducible from its seed', () => {
    const c = oracle.cases[1];
    const a = errorConcentration(c.subjects, { seed: 9, permutations: 500, minSubjects: c.minSubjects });
    const b = errorConcentration(c.subjects, { seed: 9, permutations: 500, minSubjects: c.minSubjects });
    expect(a).toEqual(b);
    expect(errorConcentration(c.subjects, { seed: 10, permutations: 500, minSubjects: c.minSubjects }).nullShares).not.toEqual(a.nullShares);
  });

  it.each(oracle.cases as any[])('matches the numpy simulation and exact null mean: $name', (c: any) => {
    const B = 50_000;
    const r = errorConcentration(c.subjects, { seed: 20261129, permutations: B, minSubjects: c.minSubjects });
    expect(r.observed).toBeCloseTo(c.observed, 12);
    expect([r.onShared, r.errors, r.statesAllFail]).toEqual([c.onShared, c.errors, c.statesAllFail]);
    // Monte Carlo tolerance: 4 standard errors of the mean share.
    const sd = Math.sqrt(r.nullShares.reduce((a, x) => a + (x - r.null.mean!) ** 2, 0) / (B - 1));
    expect(Math.abs(r.null.mean! - c.null_exact.mean)).toBeLessThan((4 * sd) / Math.sqrt(B));
    expect(Math.abs(r.null.mean! - c.null_simulated.mean)).toBeLessThan(4 * sd * Math.sqrt(1 / B + 1 / c.null_simulated.permutations));
    expect(Math.abs(r.null.statesAllFailMean - c.null_exact.statesAllFailMean)).toBeLessThan(0.01);
    // The band: quantiles of a discrete null, equal to numpy's within one error's share.
    expect(Math.abs(r.null.lower! - c.null_simulated.lower)).toBeLessThanOrEqual(1 / c.errors + 1e-12);
    expect(Math.abs(r.null.upper! - c.null_simulated.upper)).toBeLessThanOrEqual(1 / c.errors + 1e-12);
    expect(Math.abs(r.null.p! - c.null_simulated.p)).toBeLessThan(0.01);
  });

  // The null with the plainest code: createRng's draws one by one, counts in a Map. The library
  // draws in 624-word blocks and counts in a typed array (bytes below 256 subjects); every null
  // share must be the same.
  function referenceNull(subjects: ConcentrationSubject[], seed: number, B: number, k: number): { shares: number[]; allSum: number } {
    const rng = createRng(seed);
    const index = new Map<string, number>();
    const scratch = subjects.map((x) => x.factsRight.map((st) => index.get(st) ?? (index.set(st, index.size), index.size - 1)));
    const errors = subjects.reduce((a, x) => a + x.errors.length, 0);
    const shares: number[] = [];
    let allSum = 0;
    for (let b = 0; b < B; b++) {
      const count = new Map<number, number>();
      scratch.forEach((r, s) => {
        for (let i = 0; i < subjects[s].errors.length; i++) {
          const j = i + rng.int(r.length - i);
          [r[i], r[j]] = [r[j], r[i]];
          count.set(r[i], (count.get(r[i]) ?? 0) + 1);
        }
      });
      let on = 0;
      for (const c of count.values()) {
        if (c >= k) on += c;
        if (c === subjects.length) allSum++;
      }
      shares.push(on / errors);
    }
    return { shares, allSum };
  }

  it.each([
    // The last value: how many distinct null shares at least (k = 1 puts every error on a shared state).
    ['5 subjects (byte counts)', 5, 400, 2, 6],
    ['300 subjects (32-bit counts)', 300, 40, 62, 6],
    ['3 subjects, k = 3: only states every subject fails', 3, 60, 3, 3],
    ['4 subjects, k = 1: every error', 4, 60, 1, 1],
    ['1 subject', 1, 80, 1, 1],
  ])('draws the same null as createRng one draw at a time: %s', (_name, S, states, k, distinct) => {
    const gen = createRng(3);
    const subjects: ConcentrationSubject[] = Array.from({ length: S }, (_, s) => {
      const factsRight = Array.from({ length: states }, (_, j) => `st${j}`).filter(() => gen.uniform() < 0.7);
      return { subject: `m${s}`, factsRight, errors: factsRight.filter(() => gen.uniform() < 0.3) };
    });
    const r = errorConcentration(subjects, { seed: 20261129, permutations: 300, minSubjects: k });
    const ref = referenceNull(subjects, 20261129, 300, k);
    expect(r.nullShares).toEqual(ref.shares);
    expect(r.null.statesAllFailMean).toBe(ref.allSum / 300);
    expect(new Set(ref.shares).size).toBeGreaterThanOrEqual(distinct);
  });

  it('rejects bad input', () => {
    const ok = { subject: 'a', factsRight: ['s1'], errors: ['s1'] };
    expectDataError(() => errorConcentration([], { seed: 1 }), 'stats.badConcentration', 'non-empty array');
    expectDataError(() => errorConcentration([{ ...ok, errors: ['s2'] }], { seed: 1 }), 'stats.badConcentration', 'not among its facts-right states');
    expectDataError(() => errorConcentration([ok], { seed: 1, minSubjects: 2 }), 'stats.badConcentration', 'minSubjects must be an integer in [1, 1]');
    expectDataError(() => errorConcentration([{ ...ok, factsRight: ['s1', 's1'] }], { seed: 1 }), 'stats.badConcentration', 'repeats a facts-right state');
  });
});
