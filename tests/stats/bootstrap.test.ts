/**
 * The general bootstrap (`bootstrap`), the bootstrap of the mean (`bootstrapMean`) and the pieces
 * under them: xoshiro128**, the exact binomial / multinomial samplers, R boot's quantile rule and
 * the interval formulas. Reference values name their source; oracle bands are in
 * bootstrap-oracle.test.ts.
 *
 * Distribution tests compare replicate distributions, not single numbers:
 *  - two-sample Kolmogorov-Smirnov: reject when D > 1.9495 sqrt((n + m) / (n m)), the asymptotic
 *    critical value at alpha = 0.001 (conservative for discrete distributions, whose ties only
 *    shrink D);
 *  - moments against exact values with a tolerance of 5 Monte Carlo standard errors: the mean of B
 *    replicates has SE sqrt(var / B); the sample variance has SE sqrt((mu4 - var^2 (B - 3)/(B - 1)) / B);
 *  - one-sample KS against an exact discrete CDF, threshold 1.9495 / sqrt(B).
 * All seeds are fixed, so each test is deterministic; the thresholds say how surprising a failure
 * would be for a correct implementation (~1e-3 per comparison, far less for 5-SE moment bands).
 */
import { describe, expect, it } from 'vitest';
import { binomialPmf } from '../../src/stats/binomial-pmf.ts';
import { sampleBinomial } from '../../src/stats/binomial-sample.ts';
import { bootstrap } from '../../src/stats/bootstrap.ts';
import { bootstrapInterval, DEGENERATE_BCA_NOTE } from '../../src/stats/bootstrap-interval.ts';
import { bootstrapMean } from '../../src/stats/bootstrap-mean.ts';
import { decimalScale } from '../../src/stats/decimal-scale.ts';
import { jackknifeAcceleration } from '../../src/stats/jackknife-acceleration.ts';
import { sampleMultinomial } from '../../src/stats/multinomial-sample.ts';
import { normInterQuantile } from '../../src/stats/norm-inter-quantile.ts';
import { createRng } from '../../src/stats/rng.ts';
import { createXoshiro128 } from '../../src/stats/xoshiro128.ts';
import * as barrel from '../../src/stats/index.ts';
import { expectDataError, expectMoments, KS_C, ksCritical, ksTwoSample, loadBootstrapExtra, mean, sortedMedian } from '../helpers/stats.ts';

const extra = loadBootstrapExtra();

describe('xoshiro128**', () => {
  it('matches the reference C implementation (Blackman & Vigna, seeded by splitmix64; gcc, bootstrap-extra.json)', () => {
    expect(extra.xoshiro128ss.length).toBe(4);
    for (const row of extra.xoshiro128ss) {
      const g = createXoshiro128(row.seed);
      expect(g.algorithm).toBe('xoshiro128**');
      expect(g.seed).toBe(row.seed);
      expect(Array.from({ length: row.uint32.length }, () => g.uint32())).toEqual(row.uint32);
    }
  });

  it('countIndices consumes the stream exactly like repeated int(m)', () => {
    for (const m of [1, 7, 1000]) {
      const a = createXoshiro128(5);
      const c = createXoshiro128(5);
      const one = Array.from({ length: 200 }, () => a.int(m));
      const counts = new Uint8Array(m);
      expect(c.countIndices(counts, m, 200)).toBe(0);
      const expected = new Uint8Array(m);
      for (const v of one) expected[v]++;
      expect(Array.from(counts)).toEqual(Array.from(expected));
      expect(a.uint32()).toBe(c.uint32()); // same position in the stream afterwards
    }
  });

  it('countIndices counts mod 256 and reports the number of wraps', () => {
    const g = createXoshiro128(1);
    const h = createXoshiro128(1);
    const counts = new Uint8Array(2);
    const wraps = g.countIndices(counts, 2, 1000);
    let ones = 0;
    for (let i = 0; i < 1000; i++) ones += h.int(2);
    expect(counts[1]).toBe(ones % 256);
    expect(counts[0]).toBe((1000 - ones) % 256);
    expect(wraps).toBe(Math.floor(ones / 256) + Math.floor((1000 - ones) / 256));
    // (bootstrap() draws k = m indices, so a wrap needs m >= 256 and one index drawn 256+ times:
    // probability below 1e-500; such a resample would be redrawn.)
  });

  it('int(m) for m > 2^21 is the exact Lemire map floor(x m / 2^32) with rejection (checked with BigInt)', () => {
    const g = createXoshiro128(9);
    const h = createXoshiro128(9);
    const m = 2_000_000_011n;
    const thr = (2n ** 32n - m) % m;
    for (let i = 0; i < 1000; i++) {
      let want: number | null = null;
      while (want === null) {
        const prod = BigInt(h.uint32()) * m;
        if ((prod & 0xffffffffn) >= thr) want = Number(prod >> 32n);
      }
      expect(g.int(Number(m))).toBe(want);
    }
  });

  it('int(7) is uniform (chi-square, 6 df, 200,000 draws, critical value 22.46 at p = 0.001)', () => {
    const g = createXoshiro128(123);
    const counts = new Array(7).fill(0);
    for (let i = 0; i < 200_000; i++) counts[g.int(7)]++;
    const e = 200_000 / 7;
    const chi2 = counts.reduce((s, c) => s + (c - e) ** 2 / e, 0);
    expect(chi2).toBeLessThan(22.46);
  });

  it('uniform() is in [0, 1) with mean 1/2 and variance 1/12 (5 MC SEs)', () => {
    const g = createXoshiro128(77);
    const x = Float64Array.from({ length: 100_000 }, () => g.uniform());
    expect(Math.min(...x)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...x)).toBeLessThan(1);
    expectMoments(x, 0.5, 1 / 12, 1 / 80, 'uniform');
  });

  it('rejects bad seeds and m', () => {
    expectDataError(() => createXoshiro128(-1), 'stats.badSeed', /seed/);
    expectDataError(() => createXoshiro128(1.5), 'stats.badSeed');
    expectDataError(() => createXoshiro128(2 ** 32), 'stats.badSeed');
    expectDataError(() => createXoshiro128(1).int(0), 'stats.badCount', /m/);
  });
});

describe('binomialPmf (Loader 2000)', () => {
  it('matches exact values (mpmath, 40 digits; bootstrap-extra.json) to 1e-12 relative, including n = 10^6', () => {
    // scipy.stats.binom.pmf (also stored, as pmf_scipy) is itself off by ~3e-11 at k = 299000, n = 10^6;
    // R's dbinom uses the same Loader algorithm as binomialPmf and agrees with mpmath.
    for (const r of extra.binom_pmf) {
      const got = binomialPmf(r.k, r.n, r.p);
      expect(Math.abs(got - r.pmf) / r.pmf, `pmf(${r.k}; ${r.n}, ${r.p}) = ${got} vs ${r.pmf}`).toBeLessThan(1e-12);
    }
  });
  it('sums to 1 and handles the edges', () => {
    for (const [n, p] of [[10, 0.3], [57, 0.02], [1000, 0.5], [5, 1], [5, 0], [0, 0.4]] as const) {
      let s = 0;
      for (let k = 0; k <= n; k++) s += binomialPmf(k, n, p);
      expect(Math.abs(s - 1)).toBeLessThan(1e-13);
    }
    expect(binomialPmf(-1, 10, 0.5)).toBe(0);
    expect(binomialPmf(11, 10, 0.5)).toBe(0);
    expect(binomialPmf(0, 10, 0)).toBe(1);
    expect(binomialPmf(10, 10, 1)).toBe(1);
    expectDataError(() => binomialPmf(1, 10, 1.5), 'stats.badValue', /p/);
    expectDataError(() => binomialPmf(1, -1, 0.5), 'stats.badCount', /n/);
  });
});

describe('sampleBinomial (inversion from the mode) and sampleMultinomial', () => {
  it('Binomial(20, 0.3): draws follow the exact pmf (chi-square over k = 1..11 plus tails, crit 31.26 at p = 0.001, 11 df)', () => {
    const rng = createRng(2024);
    const B = 100_000;
    const counts = new Array(21).fill(0);
    for (let i = 0; i < B; i++) counts[sampleBinomial(rng, 20, 0.3)]++;
    // cells: <=1, 2..11 singly, >=12 (expected counts all > 50)
    const cells: [number, number][] = [[0, 1], ...Array.from({ length: 10 }, (_, i) => [i + 2, i + 2] as [number, number]), [12, 20]];
    let chi2 = 0;
    for (const [lo, hi] of cells) {
      let obs = 0;
      let p = 0;
      for (let k = lo; k <= hi; k++) {
        obs += counts[k];
        p += binomialPmf(k, 20, 0.3);
      }
      chi2 += (obs - B * p) ** 2 / (B * p);
    }
    expect(chi2).toBeLessThan(31.26);
  });

  it('Binomial(10^6, p) for p = 0.3 and 0.9: moments match n p q and mu4 = n p q (1 + 3 (n - 2) p q)', () => {
    for (const p of [0.3, 0.9]) {
      const rng = createRng(7);
      const n = 1_000_000;
      const x = Float64Array.from({ length: 20_000 }, () => sampleBinomial(rng, n, p));
      const v = n * p * (1 - p);
      expectMoments(x, n * p, v, v * (1 + 3 * (n - 2) * p * (1 - p)), `Bin(1e6, ${p})`);
    }
  });

  it('Binomial(50, 1e-4) puts the right mass at 0 (rare-event tail, exact 0.995012...)', () => {
    const rng = createRng(3);
    let zeros = 0;
    const B = 200_000;
    for (let i = 0; i < B; i++) if (sampleBinomial(rng, 50, 1e-4) === 0) zeros++;
    const p0 = binomialPmf(0, 50, 1e-4);
    expect(Math.abs(zeros / B - p0)).toBeLessThan(5 * Math.sqrt((p0 * (1 - p0)) / B));
  });

  it('degenerate draws and bad input', () => {
    const rng = createRng(1);
    expect(sampleBinomial(rng, 0, 0.5)).toBe(0);
    expect(sampleBinomial(rng, 10, 0)).toBe(0);
    expect(sampleBinomial(rng, 10, 1)).toBe(10);
    expectDataError(() => sampleBinomial(rng, 2.5, 0.5), 'stats.badCount');
    expectDataError(() => sampleBinomial(rng, 5, NaN), 'stats.badValue');
  });

  it('sampleMultinomial: counts sum to n, zero weights get 0, marginals are Binomial(n, w_j / W)', () => {
    const rng = createRng(11);
    const w = Float64Array.of(20, 0, 30, 50);
    const out = new Float64Array(4);
    const B = 20_000;
    const first = new Float64Array(B);
    const last = new Float64Array(B);
    for (let i = 0; i < B; i++) {
      sampleMultinomial(rng, 100, w, out);
      expect(out[0] + out[1] + out[2] + out[3]).toBe(100);
      expect(out[1]).toBe(0);
      first[i] = out[0];
      last[i] = out[3];
    }
    for (const [x, p] of [[first, 0.2], [last, 0.5]] as const) {
      const v = 100 * p * (1 - p);
      expectMoments(x, 100 * p, v, v * (1 + 3 * 98 * p * (1 - p)), `multinomial marginal p=${p}`);
    }
    sampleMultinomial(rng, 0, w, out);
    expect(Array.from(out)).toEqual([0, 0, 0, 0]);
    expectDataError(() => sampleMultinomial(rng, 5, [1, -1], new Float64Array(2)), 'stats.badValue', /weights\[1\]/);
    expectDataError(() => sampleMultinomial(rng, 5, [0, 0], new Float64Array(2)), 'stats.badValue');
  });
});

describe('normInterQuantile (R boot:::norm.inter) and bootstrapInterval', () => {
  const t = Float64Array.from({ length: 9 }, (_, i) => (i + 1) * 10); // R = 9
  it('integer (R + 1) alpha takes that order statistic; ends clamp; otherwise normal-scale interpolation', () => {
    expect(normInterQuantile(t, 0.5)).toBe(50); // (9 + 1) * 0.5 = 5
    expect(normInterQuantile(t, 0.05)).toBe(10); // k = 0 -> t_(1)
    expect(normInterQuantile(t, 0.95)).toBe(90); // k = 9 = R -> t_(R)
    expect(normInterQuantile(t, 0)).toBe(10);
    expect(normInterQuantile(t, 1)).toBe(90);
    // R: boot:::norm.inter(seq(10, 90, 10), 0.25)[, 2] = 22.413757...; computed by hand:
    // k = 2, qnorm(.25) = -0.6744898, qnorm(.2) = -0.8416212, qnorm(.3) = -0.5244005
    const want = 20 + ((-0.6744897501960817 - -0.8416212335729142) / (-0.5244005127080407 - -0.8416212335729142)) * 10;
    expect(normInterQuantile(t, 0.25)).toBeCloseTo(want, 12);
    expectDataError(() => normInterQuantile(new Float64Array(0), 0.5), 'stats.empty');
    expectDataError(() => normInterQuantile(t, 1.5), 'stats.badValue', /alpha/);
  });

  it('all replicates equal: zero-width percentile / basic interval; BCa gives no interval and says why (scipy: NaN, R boot.ci: stops)', () => {
    const reps = new Float64Array(100).fill(0.7);
    for (const method of ['percentile', 'basic'] as const) {
      const r = bootstrapInterval(reps, 0.7, { method, level: 0.95 });
      expect([r.lower, r.upper]).toEqual([0.7, 0.7]);
      expect(r.se).toBe(0);
    }
    const b = bootstrapInterval(reps, 0.7, { method: 'bca', level: 0.95, acceleration: () => 0.1 });
    expect([b.lower, b.upper]).toEqual([NaN, NaN]);
    expect(b.bca).toEqual({ z0: NaN, acceleration: NaN, fallback: null, note: DEGENERATE_BCA_NOTE });
  });

  it('BCa with the estimate above every replicate (z0 = +Infinity) also falls back', () => {
    const reps = Float64Array.from({ length: 99 }, (_, i) => i);
    const b = bootstrapInterval(reps, 1000, { method: 'bca', level: 0.9 });
    expect(b.bca!.fallback).toBe('percentile');
    expect(b.bca!.z0).toBe(Infinity);
    const p = bootstrapInterval(reps, 1000, { method: 'percentile', level: 0.9 });
    expect([b.lower, b.upper]).toEqual([p.lower, p.upper]);
  });

  it('basic = 2 t0 - percentile ends swapped; BCa with z0 = 0 and a = 0 equals percentile', () => {
    const g = createXoshiro128(4);
    const reps = Float64Array.from({ length: 1999 }, () => g.uniform());
    const p = bootstrapInterval(reps, 0.4, { method: 'percentile', level: 0.9 });
    const b = bootstrapInterval(reps, 0.4, { method: 'basic', level: 0.9 });
    expect(b.lower).toBeCloseTo(0.8 - p.upper, 14);
    expect(b.upper).toBeCloseTo(0.8 - p.lower, 14);
    // estimate = the exact median order statistic: 999 of 1999 strictly below -> z0 = qnorm(0.49975..)
    const sorted = Float64Array.from(reps).sort();
    const c = bootstrapInterval(reps, sorted[999], { method: 'bca', level: 0.9, acceleration: 0 });
    expect(Math.abs(c.bca!.z0)).toBeLessThan(1e-3);
    expect(Math.abs(c.lower - p.lower)).toBeLessThan(0.01);
  });

  it('jackknifeAcceleration: E&T 14.15, weights = repeated values, constant -> 0', () => {
    // leave-one-out means of [1,0,0,1,0,0,0,1,0,0]; the oracle (scipy) gives a = 0.04600437062282381
    expect(jackknifeAcceleration([2 / 9, 1 / 3], [3, 7])).toBeCloseTo(0.04600437062282381, 14);
    const vals = [2 / 9, 2 / 9, 2 / 9, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 1 / 3];
    expect(jackknifeAcceleration(vals)).toBeCloseTo(jackknifeAcceleration([2 / 9, 1 / 3], [3, 7]), 14);
    expect(jackknifeAcceleration([5, 5, 5])).toBe(0);
    expect(jackknifeAcceleration([])).toBe(0);
  });
});

describe('bootstrap (general statistic)', () => {
  const data = [3.1, 4.7, 2.2, 5.0, 3.9, 4.1, 2.8, 6.3, 1.9, 4.4, 3.3];

  it('records everything it used; same seed -> identical result; another seed -> different', () => {
    const a = bootstrap(data, sortedMedian, { seed: 42, resamples: 3000, method: 'bca' });
    const b = bootstrap(data, sortedMedian, { seed: 42, resamples: 3000, method: 'bca' });
    expect(a).toEqual(b);
    expect(a).toMatchObject({ seed: 42, resamples: 3000, level: 0.95, method: 'bca', n: 11, rng: 'xoshiro128**', engine: 'resample' });
    expect(a.estimate).toBe(3.9);
    expect(a.lower).toBeLessThanOrEqual(a.estimate);
    expect(a.upper).toBeGreaterThanOrEqual(a.estimate);
    const c = bootstrap(data, sortedMedian, { seed: 43, resamples: 3000, method: 'bca' });
    expect(c.se).not.toBe(a.se);
    expect(a.replicates).toBeUndefined();
    expect(bootstrap(data, sortedMedian, { seed: 42, resamples: 10, returnReplicates: true }).replicates!.length).toBe(10);
  });

  it('passes the data and every resample sorted ascending, n values long; mutation by the statistic is harmless', () => {
    let calls = 0;
    const stat = (x: Float64Array): number => {
      calls++;
      expect(x.length).toBe(data.length);
      for (let i = 1; i < x.length; i++) if (x[i - 1] > x[i]) throw new Error('not sorted');
      const m = mean(x);
      x.fill(-1); // scribble over the buffer
      return m;
    };
    const r = bootstrap(data, stat, { seed: 1, resamples: 500 });
    expect(calls).toBe(501);
    const r2 = bootstrap(data, mean, { seed: 1, resamples: 500 });
    expect(r.lower).toBe(r2.lower);
    expect(r.upper).toBe(r2.upper);
  });

  it('BCa acceleration of the mean equals the closed form sum d^3 / (6 (sum d^2)^1.5), d = x - mean', () => {
    const m = data.reduce((s, v) => s + v, 0) / data.length;
    const d3 = data.reduce((s, v) => s + (v - m) ** 3, 0);
    const d2 = data.reduce((s, v) => s + (v - m) ** 2, 0);
    const r = bootstrap(data, mean, { seed: 3, resamples: 1000, method: 'bca' });
    expect(r.bca!.acceleration).toBeCloseTo(d3 / (6 * d2 ** 1.5), 12);
  });

  it('the median replicates follow the exact bootstrap distribution P(med* <= x_(j)) = P(Bin(n, j/n) >= (n+1)/2) (one-sample KS, alpha 0.001)', () => {
    const n = 15;
    const g = createXoshiro128(8);
    const x = Float64Array.from({ length: n }, () => g.uniform());
    const sorted = Float64Array.from(x).sort();
    const B = 20_000;
    const r = bootstrap(x, (s) => s[(s.length - 1) >> 1], { seed: 5, resamples: B, returnReplicates: true });
    let d = 0;
    for (let j = 1; j <= n; j++) {
      let exact = 0;
      for (let k = (n + 1) / 2; k <= n; k++) exact += binomialPmf(k, n, j / n);
      let emp = 0;
      for (const t of r.replicates!) if (t <= sorted[j - 1]) emp++;
      d = Math.max(d, Math.abs(emp / B - exact));
    }
    expect(d).toBeLessThan(KS_C / Math.sqrt(B));
  });

  it('sorted-count resampling has the same distribution as naive resampling (MT19937 indices + sort; two-sample KS, alpha 0.001)', () => {
    const g = createXoshiro128(21);
    const x = Float64Array.from({ length: 200 }, () => -Math.log(1 - g.uniform())); // exponential, skewed
    const stat = (s: Float64Array) => s[Math.floor(0.9 * (s.length - 1))]; // 90th percentile order statistic
    const B = 20_000;
    const fast = bootstrap(x, stat, { seed: 6, resamples: B, returnReplicates: true }).replicates!;
    const rng = createRng(99);
    const naive = new Float64Array(B);
    const buf = new Float64Array(x.length);
    for (let r = 0; r < B; r++) {
      for (let i = 0; i < x.length; i++) buf[i] = x[rng.int(x.length)];
      buf.sort();
      naive[r] = stat(buf);
    }
    expect(ksTwoSample(fast, naive)).toBeLessThan(ksCritical(B, B));
  });

  it('all values identical -> zero-width percentile / basic interval and se 0; BCa: no interval (NaN) with a note', () => {
    for (const method of ['percentile', 'basic'] as const) {
      const r = bootstrap([2.5, 2.5, 2.5, 2.5], sortedMedian, { seed: 1, resamples: 200, method });
      expect([r.estimate, r.lower, r.upper, r.se]).toEqual([2.5, 2.5, 2.5, 0]);
    }
    const b = bootstrap([2.5, 2.5, 2.5, 2.5], sortedMedian, { seed: 1, resamples: 200, method: 'bca' });
    expect([b.estimate, b.lower, b.upper, b.se]).toEqual([2.5, NaN, NaN, 0]);
    expect(b.note).toBe(DEGENERATE_BCA_NOTE);
  });

  it('rejects bad input with dataError naming the argument and value', () => {
    const o = { seed: 1 };
    expectDataError(() => bootstrap([], mean, o), 'stats.empty', /values.*empty/);
    expectDataError(() => bootstrap([1], mean, o), 'stats.tooFewValues', /at least 2 values, got 1 value/);
    expectDataError(() => bootstrap([1, NaN, 2], mean, o), 'stats.badValue', /values\[1\].*NaN/);
    expectDataError(() => bootstrap([1, Infinity], mean, o), 'stats.badValue', /Infinity/);
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, level: 1 }), 'stats.badLevel', /level.*got 1/);
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, level: 0 }), 'stats.badLevel');
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, level: -0.5 }), 'stats.badLevel');
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, resamples: 0 }), 'stats.badCount', /resamples.*got 0/);
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, resamples: 2.5 }), 'stats.badCount');
    expectDataError(() => bootstrap([1, 2], mean, { seed: 1, method: 'bc' as never }), 'stats.badOption', /method/);
    expectDataError(() => bootstrap([1, 2], mean, {} as never), 'stats.badSeed', /seed.*undefined/);
    expectDataError(() => bootstrap([1, 2], 'mean' as never, o), 'stats.badOption', /statistic/);
    expectDataError(() => bootstrap([1, 2], () => NaN, o), 'stats.nonFiniteStatistic', /the data/);
    expectDataError(() => bootstrap([1, 2, 3], (x) => (x[0] === x[2] ? Infinity : 1), { seed: 2, resamples: 100 }), 'stats.nonFiniteStatistic', /resample \d+/);
    expectDataError(() => bootstrap('12' as never, mean, o), 'stats.badShape');
  });

  it('resamples = 1 works (se undefined -> NaN, documented)', () => {
    const r = bootstrap([1, 2, 3], mean, { seed: 1, resamples: 1 });
    expect(r.lower).toBe(r.upper);
    expect(r.se).toBeNaN();
  });
});

describe('bootstrapMean', () => {
  it('0/1 data: the exact multinomial fast path and the index resampler agree with Binomial(n, p)/n (moments) and with each other (KS)', () => {
    for (const [n, ones] of [[10, 3], [1000, 259], [30, 15]] as const) {
      const data = Array.from({ length: n }, (_, i) => (i < ones ? 1 : 0));
      const B = 20_000;
      const fast = bootstrapMean(data, { seed: 1, resamples: B, engine: 'multinomial', returnReplicates: true });
      const slow = bootstrapMean(data, { seed: 2, resamples: B, engine: 'resample', returnReplicates: true });
      const generic = bootstrap(data, mean, { seed: 3, resamples: B, returnReplicates: true });
      expect(fast.engine).toBe('multinomial');
      expect(fast.rng).toBe('mt19937');
      expect(slow.engine).toBe('resample');
      expect(slow.rng).toBe('xoshiro128**');
      const p = ones / n;
      const v = (p * (1 - p)) / n; // Var(Bin(n,p)/n)
      const mu4 = (n * p * (1 - p) * (1 + 3 * (n - 2) * p * (1 - p))) / n ** 4;
      for (const [name, reps] of [['multinomial', fast.replicates!], ['resample', slow.replicates!], ['bootstrap()', generic.replicates!]] as const) {
        expectMoments(reps, p, v, mu4, `n=${n} ${name}`);
      }
      expect(ksTwoSample(fast.replicates!, slow.replicates!)).toBeLessThan(ksCritical(B, B));
      expect(ksTwoSample(fast.replicates!, generic.replicates!)).toBeLessThan(ksCritical(B, B));
      // every replicate is k/n exactly, bitwise
      for (const t of fast.replicates!.subarray(0, 500)) expect(Number.isInteger(Math.round(t * n)) && Math.round(t * n) / n === t).toBe(true);
    }
  });

  it('few-valued data (Likert 1..5): multinomial path = resampler (KS) and exact moments', () => {
    const data = [3, 1, 4, 5, 5, 2, 4, 4, 3, 5, 1, 4, 4, 5, 3, 2, 4, 5, 5, 4, 3, 4, 2, 5, 4];
    const n = data.length;
    const m = data.reduce((s, v) => s + v, 0) / n;
    const s2 = data.reduce((s, v) => s + (v - m) ** 2, 0) / n; // plug-in variance
    const m4 = data.reduce((s, v) => s + (v - m) ** 4, 0) / n;
    const B = 20_000;
    const fast = bootstrapMean(data, { seed: 10, resamples: B, returnReplicates: true });
    const slow = bootstrapMean(data, { seed: 11, resamples: B, engine: 'resample', returnReplicates: true });
    expect(fast.engine).toBe('multinomial');
    // mean of n iid draws from the empirical distribution: variance s2/n, 4th central moment (m4 + 3(n-1) s2^2)/n^3
    const mu4 = (m4 + 3 * (n - 1) * s2 * s2) / n ** 3;
    expectMoments(fast.replicates!, m, s2 / n, mu4, 'likert multinomial');
    expectMoments(slow.replicates!, m, s2 / n, mu4, 'likert resample');
    expect(ksTwoSample(fast.replicates!, slow.replicates!)).toBeLessThan(ksCritical(B, B));
  });

  it('continuous data use the resampler; it matches the generic bootstrap (KS) and exact moments', () => {
    const g = createXoshiro128(31);
    const data = Float64Array.from({ length: 300 }, () => Math.exp(g.uniform() * 3));
    const r = bootstrapMean(data, { seed: 1, resamples: 20_000, returnReplicates: true });
    expect(r.engine).toBe('resample');
    const gen = bootstrap(data, mean, { seed: 2, resamples: 20_000, returnReplicates: true });
    expect(ksTwoSample(r.replicates!, gen.replicates!)).toBeLessThan(ksCritical(20_000, 20_000));
    const n = data.length;
    const m = data.reduce((s, v) => s + v, 0) / n;
    const s2 = data.reduce((s, v) => s + (v - m) ** 2, 0) / n;
    const m4 = data.reduce((s, v) => s + (v - m) ** 4, 0) / n;
    expectMoments(r.replicates!, m, s2 / n, (m4 + 3 * (n - 1) * s2 * s2) / n ** 3, 'continuous');
  });

  it('n = 1,000,000 0/1 scores x 10,000 resamples: exact path (speed: npm run bench)', () => {
    const data = new Float64Array(1_000_000);
    for (let i = 0; i < data.length; i++) data[i] = i % 7 < 2 ? 1 : 0;
    bootstrapMean(data.subarray(0, 1000), { seed: 1, resamples: 100 }); // warm up the JIT
    const r = bootstrapMean(data, { seed: 1, resamples: 10_000 });
    expect(r.engine).toBe('multinomial');
    expect(r.se).toBeGreaterThan(0);
    // Speed is measured in bench/stats-bootstrap.ts (npm run bench), never asserted in a test.
  });

  it('decimal scores are summed exactly: a replicate equal to the data as a multiset equals the estimate bitwise', () => {
    // 0.1 + 0.2 + 0.7 in floating point depends on the order; the scaled-integer path does not
    const data = [0.1, 0.2, 0.7, 0.1, 0.3, 0.6, 0.9, 0.2];
    expect(decimalScale(data)).toBe(1);
    const r = bootstrapMean(data, { seed: 4, resamples: 20_000, engine: 'resample', returnReplicates: true });
    const exactSum = 31; // tenths
    expect(r.estimate).toBe(exactSum / 80);
    // every replicate is (integer number of tenths) / 80, correctly rounded
    for (const t of r.replicates!.subarray(0, 2000)) {
      const k = Math.round(t * 80);
      expect(k / 80).toBe(t);
    }
    expect(decimalScale([Math.PI])).toBe(-1);
    expect(decimalScale([0.25, 1e-9])).toBe(9);
  });

  it('0/1 data n = 10: percentile [0, 0.6], strict BCa [0, 0.5] (oracle exact infinite-B values; scipy BCa would give [0.1, 0.6])', () => {
    const data = [1, 0, 0, 1, 0, 0, 0, 1, 0, 0];
    expect(bootstrapMean(data, { seed: 1 })).toMatchObject({ estimate: 0.3, lower: 0, upper: 0.6, engine: 'multinomial' });
    const b = bootstrapMean(data, { seed: 1, method: 'bca' });
    expect([b.lower, b.upper]).toEqual([0, 0.5]);
  });

  it('all values identical -> estimate = lower = upper, se 0; BCa: no interval, as scipy (NaN) and R boot.ci (both engines)', () => {
    for (const engine of ['multinomial', 'resample'] as const) {
      for (const method of ['percentile', 'bca', 'basic'] as const) {
        const r = bootstrapMean([0.5, 0.5, 0.5], { seed: 1, resamples: 100, method, engine });
        if (method === 'bca') {
          expect([r.estimate, r.lower, r.upper, r.se]).toEqual([0.5, NaN, NaN, 0]);
          expect(r.bca).toEqual({ z0: NaN, acceleration: NaN, fallback: null, note: DEGENERATE_BCA_NOTE });
          expect(r.note).toBe(DEGENERATE_BCA_NOTE);
        } else expect([r.estimate, r.lower, r.upper, r.se]).toEqual([0.5, 0.5, 0.5, 0]);
      }
    }
  });

  it('reproducible per seed and engine', () => {
    const data = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1];
    for (const engine of ['multinomial', 'resample'] as const) {
      const a = bootstrapMean(data, { seed: 9, engine, returnReplicates: true });
      const b = bootstrapMean(data, { seed: 9, engine, returnReplicates: true });
      expect(Array.from(a.replicates!)).toEqual(Array.from(b.replicates!));
      expect(a.seed).toBe(9);
    }
  });

  it('rejects bad input', () => {
    expectDataError(() => bootstrapMean([], { seed: 1 }), 'stats.empty');
    expectDataError(() => bootstrapMean([1], { seed: 1 }), 'stats.tooFewValues', /got 1 value/);
    expectDataError(() => bootstrapMean([0, NaN], { seed: 1 }), 'stats.badValue', /values\[1\]/);
    expectDataError(() => bootstrapMean([0, 1], { seed: 1, level: 1.2 }), 'stats.badLevel', /1\.2/);
    expectDataError(() => bootstrapMean([0, 1], { seed: 1, resamples: 0 }), 'stats.badCount');
    expectDataError(() => bootstrapMean([0, 1], { seed: 1, engine: 'fast' as never }), 'stats.badOption', /engine/);
    expectDataError(() => bootstrapMean([0, 1], { seed: -3 }), 'stats.badSeed', /-3/);
  });
});

describe('barrel', () => {
  it('exports the bootstrap, standard-error and power functions by name', () => {
    for (const name of [
      'bootstrap',
      'bootstrapMean',
      'pairedBootstrap',
      'clusterBootstrap',
      'bootstrapInterval',
      'normInterQuantile',
      'jackknifeAcceleration',
      'cltStandardError',
      'clusteredStandardError',
      'pairedStandardError',
      'pairedPower',
      'minimumDetectableEffect',
      'binomialPmf',
      'sampleBinomial',
      'sampleMultinomial',
      'createXoshiro128',
    ]) {
      expect(typeof (barrel as Record<string, unknown>)[name], name).toBe('function');
    }
  });
});
