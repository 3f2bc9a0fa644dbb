/**
 * Honest fallbacks of the probe tables (`stateIntervals`): where states repeat but the cluster
 * bootstrap has no spread, the interval is Clopper-Pearson over the distinct states (every state
 * the same 0/1 outcome) or over the answers labelled as independent samples; never "exact" as if no
 * state repeated. Clopper-Pearson values from R 4.x `binom.test(x, n)$conf.int`.
 */
import { describe, expect, it } from 'vitest';
import { stateIntervals } from '../../src/analysis/state-interval.ts';

const o = { level: 0.95, seed: 1, resamples: 2000 };
const states = (...xs: [number, number][]) => xs.map(([count, n]) => ({ count, n }));

describe('stateIntervals', () => {
  it('no state repeats: the exact interval over answers (= over states)', () => {
    const r = stateIntervals(3, 6, states([1, 1], [1, 1], [1, 1], [0, 1], [0, 1], [0, 1]), o);
    expect(r.shown).toBe('exact');
    expect(r.interval.lower).toBeCloseTo(0.1181172488, 9); // binom.test(3, 6)
    expect(r.cluster).toBeNull();
  });

  it('11/11 errors on 6 states (the issue\'s sim:thorough case): Clopper-Pearson of 6/6 states, not of 11/11 answers', () => {
    const r = stateIntervals(11, 11, states([2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [1, 1]), o);
    expect(r.shown).toBe('states');
    expect(r.interval.lower).toBeCloseTo(0.5407418736, 9); // binom.test(6, 6)
    expect(r.interval.upper).toBe(1);
    expect(r.interval.method).toBe('clopper-pearson-over-states');
    expect(r.interval.clusters).toBe(6);
    expect(r.exact.lower).toBeCloseTo(0.7150858, 6); // binom.test(11, 11): kept beside it, not shown
  });

  it('0/60 on 12 states: Clopper-Pearson of 0/12', () => {
    const r = stateIntervals(0, 60, states(...Array.from({ length: 12 }, () => [0, 5] as [number, number])), o);
    expect(r.shown).toBe('states');
    expect(r.interval.lower).toBe(0);
    expect(r.interval.upper).toBeCloseTo(0.2646484694, 9); // binom.test(0, 12)
  });

  it('states repeat, no spread, not 0/1 (each state 1 of 2): over the answers, said to treat them as independent', () => {
    const r = stateIntervals(3, 6, states([1, 2], [1, 2], [1, 2]), o);
    expect(r.shown).toBe('independent');
    expect(r.interval.lower).toBeCloseTo(0.1181172488, 9); // binom.test(3, 6)
    expect(r.interval.note).toMatch(/independent samples although states repeat/);
  });

  it('states repeat with spread: the cluster bootstrap', () => {
    const r = stateIntervals(5, 8, states([2, 2], [0, 2], [2, 2], [1, 2]), o);
    expect(r.shown).toBe('cluster');
    expect(r.interval.sampling).toBe('clustered');
    expect(r.interval.lower).not.toBeNull();
  });
});
