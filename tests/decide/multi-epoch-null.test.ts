/**
 * Issue #26, multi-epoch pairing: `standoff compare` pairs by item x epoch and clusters on the
 * item. Seeded simulation with 5 epochs per item and within-item correlation of the paired
 * difference (each item has its own difficulty and its own arm effect, shared by its epochs):
 *
 * - on 200 null pairs of runs (no difference on average over items) the false-alarm rate of
 *   `compare` (clustered z-test, the same p the verdict uses) lies in the binomial band around
 *   alpha = 0.05, and the paired cluster bootstrap interval covers the true difference 0 as often
 *   as its level says (seed 26: 13 false alarms, 12 misses of 200);
 * - the check can fail: the same runs analysed as independent pairs (clusters ignored) raise
 *   false alarms far above the band (37 of 200); after `--reduce mean` (one value per item,
 *   items independent) they are back in the band (13 of 200);
 * - with a true effect (+0.4 on the logit scale: +6.6 points) the interval covers the superpopulation
 *   difference (computed once by a large seeded Monte-Carlo) within the band too.
 *
 * Band: Binomial(200, 0.05), P(X <= 1) + P(X >= 22) < 0.002 (scipy binom.ppf(0.0005 / 0.9995,
 * 200, 0.05) = 2, 21), as in compare.test.ts.
 */
import { describe, it, expect } from 'vitest';
import { createRng, type Rng } from '../../src/stats/index.ts';
import { comparePaired } from '../../src/analysis/paired-comparison.ts';
import { compareSides, type CompareSettings } from '../../src/decide/compare.ts';
import { buildSide, parseSideRef, type MetricRow } from '../../src/decide/side.ts';

const ITEMS = 150;
const EPOCHS = 5;
const SIMS = 200;
/** SD of the per-item arm effect (logit scale): the source of the within-item correlation of the differences. */
const U_SD = 2;
const [LOW, HIGH] = [2, 21];

const logistic = (x: number) => 1 / (1 + Math.exp(-x));
/** Standard normal (Box-Muller on the seeded uniform stream). */
const normal = (rng: Rng) => Math.sqrt(-2 * Math.log(1 - rng.uniform())) * Math.cos(2 * Math.PI * rng.uniform());

/**
 * One pair of runs: item i has difficulty eta_i ~ N(0.5, 1.2^2) and an arm effect u_i ~ N(0, U_SD^2 = 4);
 * baseline epochs are Bernoulli(logistic(eta_i - u_i / 2)), candidate epochs
 * Bernoulli(logistic(eta_i + u_i / 2 + shift)). With shift 0 the expected difference over items is
 * exactly 0 (p(eta + u/2) - p(eta - u/2) is odd in u), but within an item all epochs differ the
 * same way on average: the epochs' differences are correlated.
 */
function simulate(rng: Rng, shift: number): { base: number[][]; cand: number[][] } {
  const base: number[][] = [];
  const cand: number[][] = [];
  for (let i = 0; i < ITEMS; i++) {
    const eta = 0.5 + 1.2 * normal(rng);
    const u = U_SD * normal(rng);
    const pb = logistic(eta - u / 2);
    const pc = logistic(eta + u / 2 + shift);
    base.push(Array.from({ length: EPOCHS }, () => (rng.uniform() < pb ? 1 : 0)));
    cand.push(Array.from({ length: EPOCHS }, () => (rng.uniform() < pc ? 1 : 0)));
  }
  return { base, cand };
}

const rows = (subject: string, values: number[][]): MetricRow[] =>
  values.flatMap((eps, i) => eps.map((v, e) => ({ run_id: `r-${subject}`, subject_model: subject, suite: 't', scenario_id: `item${i}`, epoch: e + 1, value: v })));
const sides = (base: number[][], cand: number[][]) =>
  [[buildSide(parseSideRef('--baseline', 'subject:base'), 'correct', rows('base', base), 'S1'), buildSide(parseSideRef('--candidate', 'subject:cand'), 'correct', rows('cand', cand), 'S2')]] as [ReturnType<typeof buildSide>, ReturnType<typeof buildSide>][];

const S: CompareSettings = { level: 0.95, seed: 7, resamples: 200, adjust: 'holm' };
/** The pairs as `compare` orders them: item, then epoch; candidate minus baseline. */
const flat = (x: number[][]) => Float64Array.from(x.flat());
const itemIds = Array.from({ length: ITEMS * EPOCHS }, (_, k) => `item${Math.floor(k / EPOCHS)}`);

describe('compare with several epochs per item and within-item correlation', () => {
  it('null pairs: clustered false alarms and interval misses lie in the binomial band; as independent pairs they do not', () => {
    const rng = createRng(26);
    let alarms = 0;
    let misses = 0;
    let naive = 0;
    let reduced = 0;
    for (let k = 0; k < SIMS; k++) {
      const { base, cand } = simulate(rng, 0);
      const r = compareSides(sides(base, cand), { ...S, seed: k, failOn: 'any' });
      expect([r.rows[0]!.sampling, r.rows[0]!.pairs, r.rows[0]!.clusters]).toEqual(['clustered', ITEMS * EPOCHS, ITEMS]);
      if (r.failed) alarms++;
      const c = comparePaired(flat(cand), flat(base), itemIds, 'scenario_id', { level: 0.95, seed: k, resamples: 500 });
      if (!(c.lower! <= 0 && 0 <= c.upper!)) misses++;
      // The same pairs as if every epoch were its own item: the SE ignores the correlation.
      const ind = comparePaired(flat(cand), flat(base), null, null, { level: 0.95, seed: k, resamples: 200 });
      if (ind.p_value! < 0.05) naive++;
      // --reduce mean: one value per item (the mean of its epochs), items independent.
      const mean = (x: number[][]) => Float64Array.from(x, (eps) => eps.reduce((a, v) => a + v, 0) / EPOCHS);
      if (comparePaired(mean(cand), mean(base), null, null, { level: 0.95, seed: k, resamples: 200 }).p_value! < 0.05) reduced++;
    }
    if (process.env.SHOW_SIM) console.log({ alarms, misses, naive, reduced });
    expect(alarms).toBeGreaterThanOrEqual(LOW);
    expect(alarms).toBeLessThanOrEqual(HIGH);
    expect(misses).toBeGreaterThanOrEqual(LOW);
    expect(misses).toBeLessThanOrEqual(HIGH);
    expect(naive).toBeGreaterThan(HIGH);
    expect(reduced).toBeGreaterThanOrEqual(LOW);
    expect(reduced).toBeLessThanOrEqual(HIGH);
  });

  it('a true effect: the paired cluster bootstrap interval covers the superpopulation difference within the band', () => {
    const shift = 0.4;
    // The estimand: E over items of the per-item difference in success probability (1e6 seeded draws; MC SE < 3e-4).
    const mc = createRng(99);
    let truth = 0;
    const M = 1_000_000;
    for (let i = 0; i < M; i++) {
      const eta = 0.5 + 1.2 * normal(mc);
      const u = U_SD * normal(mc);
      truth += logistic(eta + u / 2 + shift) - logistic(eta - u / 2);
    }
    truth /= M;
    if (process.env.SHOW_SIM) console.log({ truth });
    expect(truth).toBeGreaterThan(0.05);
    const rng = createRng(2611);
    let misses = 0;
    for (let k = 0; k < SIMS; k++) {
      const { base, cand } = simulate(rng, shift);
      const c = comparePaired(flat(cand), flat(base), itemIds, 'scenario_id', { level: 0.95, seed: k, resamples: 500 });
      if (!(c.lower! <= truth && truth <= c.upper!)) misses++;
    }
    if (process.env.SHOW_SIM) console.log({ effectMisses: misses });
    expect(misses).toBeGreaterThanOrEqual(LOW);
    expect(misses).toBeLessThanOrEqual(HIGH);
  });
});
