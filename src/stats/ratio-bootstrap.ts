import { toBootstrapResult } from './bootstrap-interval.ts';
import type { BootstrapResult, ParsedBootstrapOptions } from './bootstrap-internals.ts';
import { jackknifeAcceleration } from './jackknife-acceleration.ts';
import { sampleMultinomialRaw } from './multinomial-sample.ts';
import { createRng } from './rng.ts';
import { createPairSumKernel, createSumKernel } from './draw-kernels.ts';
import { createXoshiro128 } from './xoshiro128.ts';

export type RatioEngine = 'auto' | 'multinomial' | 'resample';

export interface RatioUnits {
  /** Per-unit numerator u_i (a value, a paired difference, a cluster sum), possibly scaled to integers. */
  num: Float64Array;
  /** Per-unit denominator w_i (a cluster size), or null when every unit counts 1. */
  den: Float64Array | null;
  /** The ratio is sum(u) / (divisor * sum(w)): 10^d when num holds values scaled by 10^d, else 1. */
  divisor: number;
}

/** Above this many distinct (u, w) atoms the 'auto' engine resamples indices instead. */
const MAX_ATOMS = 4096;

/**
 * Nonparametric bootstrap of a ratio of sums theta = sum_i u_i / sum_i w_i over m units
 * resampled with replacement: the engine behind `bootstrapMean` (u = value, w = 1),
 * `pairedBootstrap` (u = a - b, w = 1) and `clusterBootstrap` (u = cluster sum, w = cluster size).
 *
 * Source: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 6 (resampling) and
 * ch. 14 (BCa; the jackknife values are theta_(i) - theta = (theta w_i - u_i) / (W - w_i),
 * W = sum w, computed in that cancellation-free form).
 *
 * Two engines give the same bootstrap distribution:
 *  - 'resample': draw m unit indices per resample (xoshiro128**, Lemire), sum u and w in draw
 *    order (the WebAssembly kernels of draw-kernels.ts).
 *  - 'multinomial' (exact fast path): when the units take only k distinct (u, w) pairs ("atoms")
 *    with multiplicities c_j, the resampled multiplicities are Multinomial(m; c / m), so one
 *    resample costs k - 1 binomial draws (MT19937 via `createRng`) instead of m index draws. For
 *    0/1 scores this is Binomial(m, p) / m; for 0/1 pairs the (a, b) cells with the same a - b
 *    merge (a multinomial aggregated over cells is again multinomial).
 * 'auto' picks 'multinomial' when the units repeat (k <= m / 2 and k <= 4096) and its estimated
 * cost, sum over atoms of 40 + 1.6 sqrt(var N_j), is at most m + 1000 index draws; otherwise
 * (e.g. continuous scores, all distinct) 'resample'.
 *
 * In 'multinomial' both the estimate and every replicate are sum_j N_j u_j / (divisor sum_j N_j
 * w_j) with atoms in ascending order, so a replicate with N = c is bitwise equal to the estimate.
 *
 * Degenerate cases: callers guarantee m >= 2 units with W - w_i > 0. Identical units give every
 * replicate equal to the estimate (zero-width interval; BCa falls back to percentile).
 *
 * @example
 * import { ratioBootstrap } from './ratio-bootstrap.ts';
 * const units = { num: Float64Array.of(1, 0, 1, 1), den: null, divisor: 1 };
 * const opts = { resamples: 1000, level: 0.95, method: 'percentile' as const, seed: 1, returnReplicates: false };
 * ratioBootstrap(units, opts, 'auto', 4).estimate; // 0.75
 */
export function ratioBootstrap(
  units: RatioUnits,
  opts: ParsedBootstrapOptions,
  engine: RatioEngine,
  n: number,
): BootstrapResult {
  const { num, den, divisor } = units;
  const m = num.length;
  const atoms = engine === 'resample' ? null : collectAtoms(num, den, engine === 'multinomial' ? Infinity : MAX_ATOMS);
  const useMultinomial = atoms !== null && (engine === 'multinomial' || autoPicksAtoms(atoms, m));
  const R = opts.resamples;
  const reps = new Float64Array(R);
  let estimate: number;
  let acceleration: () => number;

  if (useMultinomial) {
    const { num: an, den: ad, count } = atoms;
    const k = count.length;
    let s = 0;
    let w = 0;
    for (let j = 0; j < k; j++) {
      s += count[j] * an[j];
      w += count[j] * ad[j];
    }
    estimate = s / (divisor * w);
    const W = w;
    const rng = createRng(opts.seed);
    const N = new Float64Array(k);
    for (let r = 0; r < R; r++) {
      sampleMultinomialRaw(rng, m, count, m, N);
      let sr = 0;
      let wr = 0;
      for (let j = 0; j < k; j++) {
        sr += N[j] * an[j];
        wr += N[j] * ad[j];
      }
      reps[r] = sr / (divisor * wr);
    }
    acceleration = () => {
      const jack = new Float64Array(k);
      for (let j = 0; j < k; j++) jack[j] = (estimate * ad[j] - an[j] / divisor) / (W - ad[j]);
      return jackknifeAcceleration(jack, count);
    };
  } else {
    let s = 0;
    let w = 0;
    for (let i = 0; i < m; i++) {
      s += num[i];
      if (den) w += den[i];
    }
    if (!den) w = m;
    estimate = s / (divisor * w);
    const W = w;
    const rng = createXoshiro128(opts.seed);
    if (den) {
      const kernel = createPairSumKernel(num, den);
      const sums = new Float64Array(2);
      for (let r = 0; r < R; r++) {
        kernel.sums(rng, m, m, sums);
        reps[r] = sums[0] / (divisor * sums[1]);
      }
    } else {
      const kernel = createSumKernel(num);
      for (let r = 0; r < R; r++) reps[r] = kernel.sum(rng, m, m) / (divisor * m);
    }
    acceleration = () => {
      const jack = new Float64Array(m);
      for (let i = 0; i < m; i++) {
        const wi = den ? den[i] : 1;
        jack[i] = (estimate * wi - num[i] / divisor) / (W - wi);
      }
      return jackknifeAcceleration(jack);
    };
  }

  return toBootstrapResult(reps, estimate, opts, { n, rng: useMultinomial ? 'mt19937' : 'xoshiro128**', engine: useMultinomial ? 'multinomial' : 'resample', acceleration });
}

/** Whether the 'auto' engine runs the exact multinomial path on these units (else it resamples indices). */
export function autoUsesMultinomial(units: RatioUnits): boolean {
  const atoms = collectAtoms(units.num, units.den, MAX_ATOMS);
  return atoms !== null && autoPicksAtoms(atoms, units.num.length);
}

function autoPicksAtoms(atoms: Atoms, m: number): boolean {
  return 2 * atoms.count.length <= m && multinomialCost(atoms.count, m) <= m + 1000;
}

interface Atoms {
  num: Float64Array;
  den: Float64Array;
  count: Float64Array;
}

/** Distinct (u, w) pairs in ascending (w, u) order with multiplicities; null if more than `cap`. */
function collectAtoms(num: Float64Array, den: Float64Array | null, cap: number): Atoms | null {
  const m = num.length;
  // Few atoms (0/1 scores, Likert items): a linear scan of a small table, ~1 ns a unit.
  const SMALL = 16;
  const su = new Float64Array(SMALL);
  const sw = new Float64Array(SMALL);
  const sc = new Float64Array(SMALL);
  let k = 0;
  let i = 0;
  let last = 0;
  for (; i < m; i++) {
    const u = num[i];
    const w = den ? den[i] : 1;
    if (k > 0 && su[last] === u && sw[last] === w) {
      sc[last]++;
      continue;
    }
    let j = 0;
    while (j < k && !(su[j] === u && sw[j] === w)) j++;
    if (j < k) {
      sc[j]++;
      last = j;
    } else if (k < SMALL && k < cap) {
      su[k] = u;
      sw[k] = w;
      sc[k] = 1;
      last = k++;
    } else {
      break;
    }
  }
  let entries: [number, number, number][];
  if (i === m) {
    entries = Array.from({ length: k }, (_, j) => [sw[j], su[j], sc[j]] as [number, number, number]);
  } else {
    if (k >= cap) return null;
    // Many atoms: nested maps den -> (num -> count).
    const byDen = new Map<number, Map<number, number>>();
    let size = 0;
    const add = (u: number, w: number, c: number): boolean => {
      let inner = byDen.get(w);
      if (!inner) {
        inner = new Map<number, number>();
        byDen.set(w, inner);
      }
      const got = inner.get(u);
      if (got === undefined) {
        if (++size > cap) return false;
        inner.set(u, c);
      } else {
        inner.set(u, got + c);
      }
      return true;
    };
    for (let j = 0; j < k; j++) add(su[j], sw[j], sc[j]);
    for (; i < m; i++) if (!add(num[i], den ? den[i] : 1, 1)) return null;
    entries = [];
    for (const [w, inner] of byDen) for (const [u, c] of inner) entries.push([w, u, c]);
  }
  entries.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: Atoms = {
    num: new Float64Array(entries.length),
    den: new Float64Array(entries.length),
    count: new Float64Array(entries.length),
  };
  entries.forEach(([w, u, c], j) => {
    out.num[j] = u;
    out.den[j] = w;
    out.count[j] = c;
  });
  return out;
}

/** Rough cost of one multinomial resample in units of one index draw (see the engine note). */
function multinomialCost(count: Float64Array, m: number): number {
  let remW = m;
  let cost = 0;
  for (let j = 0; j < count.length - 1; j++) {
    // N_j ~ Binomial(N_remaining, c_j / remW) with E[N_remaining] = remW (the weights are unit counts).
    const p = count[j] / remW;
    cost += 40 + 1.6 * Math.sqrt(remW * p * (1 - p));
    remW -= count[j];
  }
  return cost;
}
