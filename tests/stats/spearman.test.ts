/**
 * Spearman's rank correlation against R `cor(method = "spearman")` / scipy `spearmanr`, and its
 * percentile bootstrap over pairs against an independent numpy simulation
 * (tests/oracle/gen_spearman.py -> tests/oracle/spearman.json).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spearmanBootstrap, spearmanCorrelation } from '../../src/stats/index.ts';
import { expectDataError } from '../helpers/stats.ts';

const oracle = JSON.parse(readFileSync(new URL('../oracle/spearman.json', import.meta.url), 'utf8'));

describe('spearmanCorrelation', () => {
  it('matches R cor(method = "spearman"), ties averaged', () => {
    expect(spearmanCorrelation([1, 2, 3], [10, 30, 20])).toBeCloseTo(0.5, 14);
    expect(spearmanCorrelation([1, 2, 2, 3, 5], [2, 2, 1, 4, 4])).toBeCloseTo(0.729996395088431, 13);
    expect(spearmanCorrelation([0.81, 0.57, 0.8, 0.9, 0.6], [1.0, 0.42, 0.83, 0.95, 0.5])).toBeCloseTo(0.9, 14);
    expect(spearmanCorrelation([1, 1, 1], [1, 2, 3])).toBeNull();
    expectDataError(() => spearmanCorrelation([1], [2]), 'stats.badShape', 'same length >= 2');
    expectDataError(() => spearmanCorrelation([1, NaN], [2, 3]), 'stats.badShape', 'finite numbers');
  });

  it.each(oracle.cases as any[])('bootstrap over pairs matches numpy: $name', (c: any) => {
    const r = spearmanBootstrap(c.x, c.y, { seed: 20261129, resamples: 20_000, level: 0.95 });
    expect(r.estimate).toBeCloseTo(c.estimate, 12);
    // Discrete replicate distributions: the percentiles agree to a few hundredths.
    expect(Math.abs(r.lower! - c.lower)).toBeLessThan(0.05);
    expect(Math.abs(r.upper! - c.upper)).toBeLessThan(0.05);
    expect(Math.abs(r.undefinedResamples / 20_000 - c.undefined_share)).toBeLessThan(0.003);
    expect(spearmanBootstrap(c.x, c.y, { seed: 20261129, resamples: 500, level: 0.95 })).toEqual(spearmanBootstrap(c.x, c.y, { seed: 20261129, resamples: 500, level: 0.95 }));
  });
});
