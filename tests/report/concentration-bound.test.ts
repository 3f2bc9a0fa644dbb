/**
 * The permutation null's work bound (issue 28: resampling is the real cost at scale; fewer
 * resamples with the Monte-Carlo error printed). permutations x errors stay under a number of
 * random draws; above it the null runs fewer permutations (at least MIN_PERMUTATIONS), says so and
 * prints the Monte-Carlo standard error of its p-value. On the demo store (12 errors) with the
 * bound lowered, the null is exactly errorConcentration's with the bounded count and the same seed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundedPermutations, concentrationText, loadConcentration, MIN_PERMUTATIONS, PERMUTATION_DRAWS } from '../../src/analysis/probe-concentration.ts';
import { openReportStore, buildContext } from '../../src/report/sections/context.ts';
import { ROOT } from '../helpers/cli.ts';

const traces = join(ROOT, 'traces');

describe('the permutation work bound', () => {
  it('keeps what was asked for under the bound, then divides the bound by the errors, never below the floor', () => {
    expect(boundedPermutations(10_000, 20_000)).toBe(10_000);
    expect(PERMUTATION_DRAWS / 20_000).toBe(10_000);
    expect(boundedPermutations(10_000, 20_001)).toBe(Math.floor(PERMUTATION_DRAWS / 20_001));
    expect(boundedPermutations(10_000, 51_101)).toBe(3913);
    expect(boundedPermutations(10_000, 511_010)).toBe(MIN_PERMUTATIONS);
    expect(boundedPermutations(500, 511_010)).toBe(500);
  });

  it('a bounded null runs fewer permutations, keeps the seed, and prints p with its Monte-Carlo error', async () => {
    const s = await openReportStore(traces, undefined);
    try {
      const ctx = await buildContext(s, { seed: 5, resamples: 3000, level: 0.95, log: () => undefined });
      const full = (await loadConcentration(ctx.q, { seed: 5, permutations: 3000, level: 0.95, minSubjects: 2 }))!;
      expect(full.permutations_requested).toBeUndefined();
      expect(concentrationText(full, String)).not.toContain('permutations asked for');
      const cut = (await loadConcentration(ctx.q, { seed: 5, permutations: 3000, level: 0.95, minSubjects: 2, draws: 12 * 1500 }))!;
      expect(cut.errors).toBe(12);
      expect(cut.null.permutations).toBe(1500);
      expect(cut.permutations_requested).toBe(3000);
      const p = cut.null.p!;
      expect(cut.p_mc_se).toBeCloseTo(Math.sqrt((p * (1 - p)) / 1500), 12);
      expect(concentrationText(cut, String)).toContain(`The null ran 1,500 of the 3,000 permutations asked for`);
      expect(concentrationText(cut, String)).toContain(`Monte-Carlo standard error of p ${cut.p_mc_se!.toFixed(4)}`);
    } finally {
      await s.close();
    }
  }, 120_000);
});
