import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { sampleBinomialRaw, type UniformSource } from './binomial-sample.ts';

/**
 * One exact draw from Multinomial(n; w / sum(w)) into `out`, by conditional binomials.
 *
 * Source: the conditional-distribution method (Devroye 1986, "Non-Uniform Random Variate
 * Generation", sec. XI.1.6): N_1 ~ Binomial(n, w_1 / W), then N_j ~ Binomial(n - N_1 - ... -
 * N_{j-1}, w_j / (w_j + ... + w_k)), and N_k takes the rest. With integer weights (counts of
 * items) every conditional probability is a ratio of exact integers, computed with the
 * complementary probability formed exactly as well. Cost: k - 1 binomial draws, each
 * O(sqrt(variance)) (see `sampleBinomial`), independent of how many items the weights describe.
 *
 * Degenerate cases: n = 0 gives all zeros; a zero weight always gets 0; a single category gets n.
 * Weights must be finite and >= 0 with a positive sum; out must be as long as weights.
 *
 * @example
 * import { createRng } from './rng.ts';
 * import { sampleMultinomial } from './multinomial-sample.ts';
 * const out = new Float64Array(3);
 * sampleMultinomial(createRng(5), 100, Float64Array.of(20, 30, 50), out); // counts summing to 100
 */
export function sampleMultinomial(rng: UniformSource, n: number, weights: ArrayLike<number>, out: Float64Array): void {
  const fn = 'sampleMultinomial';
  if (!Number.isInteger(n) || n < 0) {
    throw dataError('stats.badCount', `${fn} requires n to be an integer >= 0, got ${show(n)}`);
  }
  const k = weights.length;
  if (k === 0 || out.length < k) {
    throw dataError('stats.badShape', `${fn} requires 1 or more weights and out at least as long, got ${k} weights and out of ${out.length}`);
  }
  let total = 0;
  for (let j = 0; j < k; j++) {
    const w = weights[j];
    if (!(w >= 0) || !Number.isFinite(w)) {
      throw dataError('stats.badValue', `${fn} requires weights[${j}] to be finite and >= 0, got ${show(w)}`);
    }
    total += w;
  }
  if (!(total > 0)) throw dataError('stats.badValue', `${fn} requires weights with a positive sum, got ${total}`);
  sampleMultinomialRaw(rng, n, weights, total, out);
}

/** Unchecked form: `total` must be the sum of the weights. */
export function sampleMultinomialRaw(
  rng: UniformSource,
  n: number,
  weights: ArrayLike<number>,
  total: number,
  out: Float64Array,
): void {
  const k = weights.length;
  let remN = n;
  let remW = total;
  for (let j = 0; j < k - 1; j++) {
    const w = weights[j];
    if (remN === 0 || w === 0) {
      out[j] = 0;
    } else {
      const rest = remW - w;
      const draw = rest <= 0 ? remN : sampleBinomialRaw(rng, remN, w / remW, rest / remW);
      out[j] = draw;
      remN -= draw;
    }
    remW -= w;
  }
  out[k - 1] = remN;
}
