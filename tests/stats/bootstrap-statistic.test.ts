/**
 * bootstrapStatistic and its statistics (median, quantile, trimmed mean, sd, mean):
 *
 * 1. The weighted kernels (a resample as multiplicities over the sorted data) and the O(1)
 *    leave-one-out values against the resample written out, sorted and computed directly.
 * 2. tests/oracle/statistic-boot.json (tests/oracle/gen_statistic_boot.py): estimates against
 *    numpy / scipy, the jackknife acceleration against R, and percentile, basic and BCa intervals
 *    inside bands from R boot 1.3.28.1 (40 batches of 10,000 resamples), unclustered and with every
 *    value its own cluster (the same bootstrap through the cluster path).
 * 3. The xoshiro128** jump that seeds the blocks against the reference C.
 * 4. Degenerate cases.
 */
import { describe, expect, it } from 'vitest';
import {
  bootstrapStatistic,
  createXoshiro128,
  DEGENERATE_BCA_NOTE,
  median,
  medianStatistic,
  quantile,
  quantileStatistic,
  standardDeviation,
  standardDeviationStatistic,
  trimmedMean,
  trimmedMeanStatistic,
  meanStatistic,
  type StatisticSpec,
  type WeightedStatistic,
} from '../../src/stats/index.ts';
import { expectDataError } from '../helpers/stats.ts';

/** Block 0's four lane generators: the seed's stream jumped 0..3 times. */
function lanesOf(seed: number) {
  const base = createXoshiro128(seed);
  return Array.from({ length: 4 }, () => {
    const g = base.copy();
    base.jump();
    return g;
  });
}
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ORACLE = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'oracle', 'statistic-boot.json'), 'utf8'));
const EPS = 1e-9;

const specOf = (label: string): StatisticSpec => {
  const [name, arg] = label.split(':');
  if (name === 'trimmed-mean') return { name, trim: Number(arg) };
  if (name === 'quantile') return { name, p: Number(arg) };
  return { name } as StatisticSpec;
};

/** Direct definitions on an explicit sample (R's): sort, then compute. */
const direct: Record<string, (y: number[], spec: StatisticSpec) => number> = {
  mean: (y) => y.reduce((a, b) => a + b, 0) / y.length,
  median: (y) => {
    const s = [...y].sort((a, b) => a - b);
    const n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  },
  quantile: (y, spec) => {
    const s = [...y].sort((a, b) => a - b);
    const h = (s.length - 1) * (spec as { p: number }).p;
    const j = Math.floor(h);
    return j + 1 >= s.length ? s[j] : s[j] + (h - j) * (s[j + 1] - s[j]);
  },
  'trimmed-mean': (y, spec) => {
    const s = [...y].sort((a, b) => a - b);
    const g = Math.floor(s.length * (spec as { trim: number }).trim);
    const kept = s.slice(g, s.length - g);
    return kept.reduce((a, b) => a + b, 0) / kept.length;
  },
  sd: (y) => {
    const m = y.reduce((a, b) => a + b, 0) / y.length;
    return Math.sqrt(y.reduce((a, b) => a + (b - m) ** 2, 0) / (y.length - 1));
  },
};

const bind = (spec: StatisticSpec, x: Float64Array): WeightedStatistic =>
  spec.name === 'median'
    ? medianStatistic(x)
    : spec.name === 'quantile'
      ? quantileStatistic(x, spec.p)
      : spec.name === 'trimmed-mean'
        ? trimmedMeanStatistic(x, spec.trim)
        : spec.name === 'sd'
          ? standardDeviationStatistic(x)
          : meanStatistic(x);

const close = (got: number, want: number, where: string) =>
  expect(Math.abs(got - want), `${where}: ${got} vs ${want}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));

describe('weighted kernels equal the statistic of the written-out resample', () => {
  const specs: StatisticSpec[] = [
    { name: 'mean' },
    { name: 'median' },
    { name: 'sd' },
    { name: 'quantile', p: 0.9 },
    { name: 'quantile', p: 0.1 },
    { name: 'quantile', p: 0.5 },
    { name: 'trimmed-mean', trim: 0.1 },
    { name: 'trimmed-mean', trim: 0.25 },
    { name: 'trimmed-mean', trim: 0 },
  ];
  const g = createXoshiro128(99);
  for (const spec of specs) {
    it(`${JSON.stringify(spec)}: 300 random resamples (ties, zero weights), and every leave-one-out value`, () => {
      for (let trial = 0; trial < 300; trial++) {
        const n = 2 + g.int(30);
        // ties: values on a coarse grid half the time
        const coarse = trial % 2 === 0;
        const x = Float64Array.from({ length: n }, () => (coarse ? g.int(6) : g.uniform() * 10 - 3)).sort();
        const w = Int32Array.from({ length: n }, () => g.int(4));
        let N = w.reduce((a, b) => a + b, 0);
        if (N < 2) {
          w[0] += 2;
          N += 2;
        }
        const y: number[] = [];
        x.forEach((v, i) => {
          for (let k = 0; k < w[i]; k++) y.push(v);
        });
        const stat = bind(spec, x);
        close(stat.weighted(w, N), direct[spec.name](y, spec), `${spec.name} resample ${trial}`);
        if (n >= 3) {
          for (let s = 0; s < n; s++) {
            const rest = [...x.slice(0, s), ...x.slice(s + 1)];
            close(stat.without(s), direct[spec.name](rest, spec), `${spec.name} without ${s}`);
          }
        }
      }
    });
  }

  it('the plain functions: R values', () => {
    expect(quantile([1, 2, 3, 4, 10], 0.9)).toBeCloseTo(7.6, 14); // R: quantile(c(1,2,3,4,10), 0.9)
    expect(trimmedMean([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 0.1)).toBe(5.5); // R: mean(c(1:9, 100), trim = 0.1)
    expect(standardDeviation([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138089935299395, 14); // R: sd(...)
    expect(median([3, 1, 4, 1, 5, 9])).toBe(3.5);
    expectDataError(() => trimmedMean([1, 2], 0.5), 'stats.badOption', 'trim');
    expectDataError(() => quantile([1, 2], 1.5), 'stats.badOption', 'p');
  });
});

describe('the xoshiro128** jump against the reference C (statistic-boot.json)', () => {
  it.runIf(ORACLE.jump)('4 draws after 0, 1, 2 and 5 jumps equal the C reference', () => {
    for (const c of ORACLE.jump) {
      const g = createXoshiro128(c.seed);
      for (let j = 0; j < c.jumps; j++) g.jump();
      const copy = g.copy();
      expect([g.uint32(), g.uint32(), g.uint32(), g.uint32()], `seed ${c.seed}, ${c.jumps} jumps (${c.tool})`).toEqual(c.draws);
      expect(copy.uint32(), 'copy() starts where the original was').toBe(c.draws[0]);
    }
  });
});

describe('the fused draw-and-add over 32-bit integers (the mean of scaled values)', () => {
  it('the mean of data with up to 9 decimals draws from the integer table: the same replicates as the lanes\' int(m) draws of the scaled values added one by one', () => {
    const x = Float64Array.from({ length: 501 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e3).sort();
    const lanes = lanesOf(7);
    const ref = lanesOf(7);
    const stat = meanStatistic(x);
    const scaled = Float64Array.from(x, (v) => Math.round(v * 1e3));
    const n = x.length;
    for (let r = 0; r < 20; r++) {
      let s = 0;
      ref.forEach((g, L) => {
        for (let i = 0; i < Math.floor(n / 4) + (L < n % 4 ? 1 : 0); i++) s += scaled[g.int(n)];
      });
      expect(stat.drawn!(lanes)).toBe(s / (1e3 * n));
    }
  });
});

describe('bootstrapStatistic against R boot and scipy (statistic-boot.json)', () => {
  const inBand = (v: number, [lo, hi]: [number, number], where: string) => {
    expect(v, `${where} = ${v} outside [${lo}, ${hi}]`).toBeGreaterThanOrEqual(lo - EPS);
    expect(v, `${where} = ${v} outside [${lo}, ${hi}]`).toBeLessThanOrEqual(hi + EPS);
  };
  for (const c of ORACLE.cases) {
    it(`${c.id}: estimate = ${c.tool.estimate}, acceleration = R's, percentile/basic/BCa inside ${c.tool.band} bands`, () => {
      const spec = specOf(c.statistic);
      for (const clustered of [false, true]) {
        for (const method of ['percentile', 'basic', 'bca'] as const) {
          const r = bootstrapStatistic(c.data, spec, { seed: 1, resamples: 10_000, method, level: c.level, ...(clustered ? { clusters: c.data.map((_: number, i: number) => i) } : {}) });
          const where = `${c.id}${clustered ? ' (singleton clusters)' : ''} ${method}`;
          expect(Math.abs(r.estimate - c.estimate), `${where} estimate`).toBeLessThanOrEqual(1e-12);
          expect(Math.abs(r.estimate - c.estimate_r), `${where} estimate vs R`).toBeLessThanOrEqual(1e-12);
          inBand(r.lower, c.band[method][0], `${where} lower`);
          inBand(r.upper, c.band[method][1], `${where} upper`);
          inBand(r.se, c.band.se, `${where} se`);
          expect(r.seed).toBe(1);
          expect(r.engine).toBe('resample-blocks');
          if (method === 'bca') expect(Math.abs(r.bca!.acceleration - c.acceleration), `${where} acceleration`).toBeLessThanOrEqual(1e-9);
        }
      }
    });
  }
});

describe('bootstrapStatistic: reproducibility and degenerate cases', () => {
  const x = [3.1, 4.7, 2.2, 5.0, 3.9, 4.1, 2.8, 3.3, 4.4];
  it('same seed, same replicates; another seed, other replicates', () => {
    const a = bootstrapStatistic(x, { name: 'median' }, { seed: 7, resamples: 500, returnReplicates: true });
    const b = bootstrapStatistic(x, { name: 'median' }, { seed: 7, resamples: 500, returnReplicates: true });
    const c = bootstrapStatistic(x, { name: 'median' }, { seed: 8, resamples: 500, returnReplicates: true });
    expect(b.replicates).toEqual(a.replicates);
    expect(c.replicates).not.toEqual(a.replicates);
    expect(a.estimate).toBe(3.9);
  });

  it('block b draws from the seed stream jumped 4b, 4b + 1, 4b + 2 and 4b + 3 times, one draw per lane per resample of two', () => {
    // median of [0, 1] resampled twice: lanes 0 and 1 make one draw each (n = 2 < 4), lanes 2, 3 none.
    const r = bootstrapStatistic([0, 1], { name: 'median' }, { seed: 5, resamples: 128, returnReplicates: true });
    const base = createXoshiro128(5);
    for (let b = 0; b < 2; b++) {
      const lanes = Array.from({ length: 4 }, () => {
        const g = base.copy();
        base.jump();
        return g;
      });
      const expected = Array.from({ length: 64 }, () => (lanes[0].int(2) + lanes[1].int(2)) / 2);
      expect(Array.from(r.replicates!.subarray(64 * b, 64 * b + 64)), `block ${b}`).toEqual(expected);
    }
  });

  it('all values identical: percentile [t, t]; BCa no interval, with the note', () => {
    for (const spec of [{ name: 'median' }, { name: 'sd' }, { name: 'trimmed-mean', trim: 0.2 }, { name: 'quantile', p: 0.9 }] as StatisticSpec[]) {
      const p = bootstrapStatistic([2, 2, 2, 2, 2], spec, { seed: 1, resamples: 200 });
      const t = spec.name === 'sd' ? 0 : 2;
      expect([p.estimate, p.lower, p.upper, p.se]).toEqual([t, t, t, 0]);
      const b = bootstrapStatistic([2, 2, 2, 2, 2], spec, { seed: 1, resamples: 200, method: 'bca' });
      expect([b.lower, b.upper]).toEqual([NaN, NaN]);
      expect(b.note).toBe(DEGENERATE_BCA_NOTE);
    }
  });

  it('n = 1, one cluster, bad specs and options are data errors', () => {
    expectDataError(() => bootstrapStatistic([1], { name: 'median' }, { seed: 1 }), 'stats.tooFewValues');
    expectDataError(() => bootstrapStatistic([1, 2, 3], { name: 'median' }, { seed: 1, clusters: ['a', 'a', 'a'] }), 'stats.tooFewClusters');
    expectDataError(() => bootstrapStatistic([1, 2, 3], { name: 'trimmed-mean', trim: 0.5 }, { seed: 1 }), 'stats.badOption', 'trim');
    expectDataError(() => bootstrapStatistic([1, 2, 3], { name: 'quantile', p: 1 }, { seed: 1 }), 'stats.badOption', '(0, 1)');
    expectDataError(() => bootstrapStatistic([1, 2, 3], { name: 'mode' } as never, { seed: 1 }), 'stats.badOption', 'mode');
    expectDataError(() => bootstrapStatistic([1, 2, NaN], { name: 'median' }, { seed: 1 }), 'stats.badValue');
    expectDataError(() => bootstrapStatistic([1, 2, 3], { name: 'median' }, {} as never), 'stats.badSeed');
  });
});
