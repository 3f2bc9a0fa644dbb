/**
 * The WebAssembly null of the error concentration (src/stats/concentration-kernel.ts,
 * src/stats/kernels/concentration.wat):
 *
 * 1. The committed bytes (concentration-wasm.ts) are what wabt assembles concentration.wat to.
 * 2. The kernel gives, permutation by permutation, the same `on` and `all` as the JavaScript null
 *    (`concentrationNullJs`, itself held to createRng one draw at a time in
 *    error-concentration.test.ts): byte counts and Int32 counts (>= 256 subjects), several seeds
 *    and k, subjects with no errors or every state an error, and subjects with more than 2^21
 *    facts-right states, where `Mt19937Stream.int` switches from doubles to BigInt (the kernel
 *    keeps one 64-bit path), with rejected draws on both sides of 2^21 (counted, not assumed).
 * 3. Lemire's draw as the kernel computes it (64-bit product, remainder threshold), written
 *    with BigInt here, equals `createRng().int(m)` draw for draw for m up to 2^32 - 1, where most
 *    rejections happen: the small and big JavaScript paths are one algorithm.
 * 4. Too large a memory returns null (the caller runs the JavaScript loop).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleWat, CONCENTRATION_WAT } from '../../scripts/build-wasm.mjs';
import { CONCENTRATION_WASM_BASE64 } from '../../src/stats/kernels/concentration-wasm.ts';
import { concentrationNullWasm } from '../../src/stats/concentration-kernel.ts';
import { concentrationNullJs, errorConcentrationIndexed } from '../../src/stats/error-concentration.ts';
import { createRng } from '../../src/stats/index.ts';

const TWO32 = 4294967296n;

/** S subjects over `states` states: each reads a state right with probability pr, and fails a facts-right state with probability pe. */
function randomSubjects(seed: number, S: number, states: number, pr: number, pe: number): { factsRight: Int32Array[]; lengths: number[] } {
  const g = createRng(seed);
  const factsRight: Int32Array[] = [];
  const lengths: number[] = [];
  for (let s = 0; s < S; s++) {
    const right = Int32Array.from({ length: states }, (_, j) => j).filter(() => g.uniform() < pr);
    // The errors are the first L facts-right states (any subset will do: the null only keeps L).
    factsRight.push(right);
    lengths.push(right.filter(() => g.uniform() < pe).length);
  }
  return { factsRight, lengths };
}

/** How many draws of the null's sequence of bounds m (per permutation, subject, i: n - i) createRng(seed) rejects, split at m = 2^21. */
function rejections(factsRight: Int32Array[], lengths: number[], B: number, seed: number): { small: number; big: number } {
  const g = createRng(seed);
  const out = { small: 0, big: 0 };
  for (let b = 0; b < B; b++) {
    factsRight.forEach((r, s) => {
      for (let i = 0; i < lengths[s]; i++) {
        const m = BigInt(r.length - i);
        const thr = (TWO32 - m) % m;
        while ((BigInt(g.uint32()) * m) % TWO32 < thr) out[m > 2097152n ? 'big' : 'small']++;
      }
    });
  }
  return out;
}

const same = (a: Int32Array, b: Int32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('the committed WebAssembly is the .wat assembled', () => {
  it('concentration-wasm.ts holds exactly the bytes wabt makes from concentration.wat', async () => {
    const bytes = await assembleWat(fs.readFileSync(CONCENTRATION_WAT, 'utf8'), 'concentration.wat');
    expect(Buffer.from(CONCENTRATION_WASM_BASE64, 'base64').equals(Buffer.from(bytes)), 'run npm run build:wasm').toBe(true);
  });
});

describe('the kernel gives the JavaScript null, permutation by permutation', () => {
  it.each([
    // name, subjects, states, P(facts right), P(error), B, seeds, k values
    ['1 subject', 1, 300, 0.8, 0.3, 200, [1, 7], [1]],
    ['2 subjects', 2, 50, 0.7, 0.5, 500, [0, 20261129], [1, 2]],
    ['5 subjects, byte counts', 5, 2000, 0.7, 0.3, 300, [3, 4294967295], [1, 3, 5]],
    ['255 subjects, the last byte-count size', 255, 400, 0.6, 0.3, 30, [11], [1, 46, 255]],
    ['300 subjects, Int32 counts', 300, 400, 0.6, 0.3, 30, [12, 13], [1, 54, 300]],
    ['every facts-right state an error', 4, 100, 0.9, 1, 50, [5], [2]],
    ['no errors', 3, 100, 0.9, 0, 20, [6], [2]],
  ] as const)('%s', (_name, S, states, pr, pe, B, seeds, ks) => {
    const { factsRight, lengths } = randomSubjects(S * 1000 + states, S, states, pr, pe);
    const before = factsRight.map((r) => r.slice());
    for (const seed of seeds) {
      for (const k of ks) {
        const wasm = concentrationNullWasm(factsRight, lengths, states, k, B, seed);
        const js = concentrationNullJs(factsRight, lengths, states, k, B, seed);
        expect(wasm).not.toBeNull();
        expect(same(wasm!, js), `seed ${seed} k ${k}`).toBe(true);
      }
    }
    // The inputs are copied, not permuted in place.
    factsRight.forEach((r, s) => expect(same(r, before[s])).toBe(true));
    // The comparison can fail: with two subjects or more and some errors, on or all varies over the permutations at the middle k.
    const x = concentrationNullJs(factsRight, lengths, states, ks[Math.floor(ks.length / 2)], B, seeds[0]);
    const varies = new Set(x.filter((_, i) => i % 2 === 0)).size > 1 || new Set(x.filter((_, i) => i % 2 === 1)).size > 1;
    expect(varies).toBe(S > 1 && pe > 0 && pe < 1);
  });

  it('subjects with more than 2^21 facts-right states: both JavaScript draw paths, with rejections on each side of 2^21', () => {
    // Subject 0: n = 2^21 + 30,000 states, 60,000 errors, so n - i crosses 2^21 within each permutation.
    const n = 2097152 + 30_000;
    const factsRight = [Int32Array.from({ length: n }, (_, j) => (j * 7919) % n), Int32Array.from({ length: 5000 }, (_, j) => 3 * j)];
    const lengths = [60_000, 1000];
    const B = 3;
    const seed = 20261203;
    const rej = rejections(factsRight, lengths, B, seed);
    expect(rej.small).toBeGreaterThan(0);
    expect(rej.big).toBeGreaterThan(0);
    for (const k of [1, 2]) {
      const wasm = concentrationNullWasm(factsRight, lengths, n, k, B, seed);
      expect(same(wasm!, concentrationNullJs(factsRight, lengths, n, k, B, seed)), `k ${k}`).toBe(true);
    }
  });

  it('errorConcentrationIndexed reports the shares, p and means of those counts', () => {
    const { factsRight, lengths } = randomSubjects(99, 4, 500, 0.8, 0.3);
    const subjects = factsRight.map((r, s) => ({ subject: `m${s}`, factsRight: r, errors: r.slice(0, lengths[s]) }));
    const r = errorConcentrationIndexed(subjects, 500, { seed: 8, permutations: 400, minSubjects: 2 });
    const js = concentrationNullJs(factsRight, lengths, 500, 2, 400, 8);
    const errors = lengths.reduce((a, b) => a + b, 0);
    expect(r.nullShares).toEqual(Array.from({ length: 400 }, (_, b) => js[2 * b] / errors));
    expect(r.null.statesAllFailMean).toBe(Array.from({ length: 400 }, (_, b) => js[2 * b + 1]).reduce((a, b) => a + b, 0) / 400);
    expect(r.null.p).toBe((1 + r.nullShares.filter((x) => x * errors >= r.onShared).length) / 401);
  });
});

describe("Lemire's draw in 64-bit integers is createRng's int(m) for every m", () => {
  it('draw for draw, m from 1 to 2^32 - 1 (the rejections are frequent near 2^31 and above)', () => {
    const ms = [1, 2, 3, 1000, 2097151, 2097152, 2097153, 3e6, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 3e9, 4294967295];
    const ref = createRng(77);
    const js = createRng(77);
    let rejected = 0;
    for (const mNum of ms) {
      const m = BigInt(mNum);
      for (let d = 0; d < 300; d++) {
        let p = BigInt(ref.uint32()) * m;
        // As the kernel: a first test against m, then the remainder threshold.
        if (p % TWO32 < m) {
          const thr = (TWO32 - m) % m;
          while (p % TWO32 < thr) {
            rejected++;
            p = BigInt(ref.uint32()) * m;
          }
        }
        expect(js.int(mNum), `m ${mNum}`).toBe(Number(p / TWO32));
      }
    }
    expect(rejected).toBeGreaterThan(50);
  });
});

describe('memory', () => {
  it('a layout above MAX_KERNEL_BYTES returns null without allocating it', () => {
    expect(concentrationNullWasm([Int32Array.of(0, 1)], [1], 2, 1, 300_000_000, 1)).toBeNull();
  });
});
