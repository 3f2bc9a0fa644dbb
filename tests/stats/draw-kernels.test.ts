/**
 * The WebAssembly draw loops (src/stats/draw-kernels.ts, src/stats/kernels/draws.wat):
 *
 * 1. The committed bytes (draws-wasm.ts) are what wabt assembles draws.wat to, so the module that
 *    runs is the one the .wat shows (`npm run build:wasm` regenerates it).
 * 2. Each kernel consumes its streams exactly as repeated `int(m)` calls (the JavaScript reference
 *    in xoshiro128.ts, itself checked against the reference C in tests/stats/bootstrap.test.ts),
 *    rejections included: the same indices, the same sums, the same states afterwards. For the
 *    four-lane kernels the reference is lane by lane: lane L makes floor(n / 4) draws, plus one
 *    when L < n mod 4. Sizes cover m = 1, small m, n not a multiple of 4 and below 4, m = 1e5 (the
 *    bench's n), and m above 2^21 (where the JavaScript draw switches to its 16-bit split and
 *    WebAssembly keeps one 64-bit path).
 * 3. Degenerate cases: no draws, bad m and counts, m beyond the table, the wrong number of lanes.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleWat, WAT } from '../../scripts/build-wasm.mjs';
import { DRAWS_WASM_BASE64 } from '../../src/stats/kernels/draws-wasm.ts';
import {
  createLaneCountKernel,
  createLaneSumKernel,
  createPairSumKernel,
  createSumKernel,
  createXoshiro128,
  LANES,
  type Xoshiro128,
} from '../../src/stats/index.ts';
import { expectDataError } from '../helpers/stats.ts';

const TWO32 = 4294967296;

/** How many of the first `draws` accepted int(m) draws of generator g needed a rejection (Lemire). */
function rejections(g: Xoshiro128, m: number, draws: number): number {
  const thr = (TWO32 - m) % m;
  let rejected = 0;
  for (let accepted = 0; accepted < draws; ) {
    const lo = Number((BigInt(g.uint32()) * BigInt(m)) & 0xffffffffn);
    if (lo < thr) rejected++;
    else accepted++;
  }
  return rejected;
}

/** Four lane generators: the seed's stream jumped 0..3 times (as resample-blocks makes block 0). */
function lanesOf(seed: number): Xoshiro128[] {
  const base = createXoshiro128(seed);
  return Array.from({ length: LANES }, () => {
    const g = base.copy();
    base.jump();
    return g;
  });
}

/** The reference of one four-lane resample: the indices each lane draws, by int(m). */
function laneIndices(lanes: Xoshiro128[], m: number, n: number): number[][] {
  return lanes.map((g, L) => Array.from({ length: Math.floor(n / 4) + (L < n % 4 ? 1 : 0) }, () => g.int(m)));
}

const table = (m: number) => Int32Array.from({ length: m }, (_, i) => ((i * 2654435761) % 4000001) - 2000000);
const states = (gs: Xoshiro128[]) => gs.map((g) => Array.from(g.state));

describe('the committed WebAssembly is the .wat assembled', () => {
  it('draws-wasm.ts holds exactly the bytes wabt makes from draws.wat', async () => {
    const bytes = await assembleWat(fs.readFileSync(WAT, 'utf8'));
    expect(Buffer.from(DRAWS_WASM_BASE64, 'base64').equals(Buffer.from(bytes)), 'run npm run build:wasm').toBe(true);
  });
});

describe('one stream: the kernels draw exactly what int(m) draws', () => {
  for (const m of [1, 7, 1000, 100_000, 2_097_152 + 3]) {
    const ks = m > 1e6 ? [0, 1, 200_000] : [0, 1, m, 3 * m + 1];
    it(`sum over a Float64 table in draw order, m = ${m}`, () => {
      const values = Float64Array.from(table(m), (v) => v / 7); // not integers: the order of the adds shows
      const kernel = createSumKernel(values);
      const g = createXoshiro128(20261201);
      const ref = createXoshiro128(20261201);
      for (const k of ks) {
        let s = 0;
        for (let i = 0; i < k; i++) s += values[ref.int(m)];
        expect(kernel.sum(g, m, k), `m=${m} k=${k}`).toBe(s);
      }
      expect(Array.from(g.state)).toEqual(Array.from(ref.state));
      expect(g.uint32()).toBe(ref.uint32()); // the stream goes on where int(m) left it
    });

    it(`pair sums (a ratio of sums) over one set of draws, m = ${m}`, () => {
      const num = Float64Array.from(table(m), (v) => v / 3);
      const den = Float64Array.from({ length: m }, (_, i) => 1 + (i % 5));
      const kernel = createPairSumKernel(num, den);
      const g = createXoshiro128(4242);
      const ref = createXoshiro128(4242);
      const out = new Float64Array(2);
      for (const k of ks) {
        let s = 0;
        let w = 0;
        for (let i = 0; i < k; i++) {
          const j = ref.int(m);
          s += num[j];
          w += den[j];
        }
        kernel.sums(g, m, k, out);
        expect([out[0], out[1]], `m=${m} k=${k}`).toEqual([s, w]);
      }
      expect(Array.from(g.state)).toEqual(Array.from(ref.state));
    });
  }

  it('the m = 1e5 cases include rejected draws (the rejection path is exercised, not assumed)', () => {
    expect(rejections(createXoshiro128(20261201), 100_000, 3 * 100_000 + 1)).toBeGreaterThan(0);
  });
});

describe('four lanes: each lane draws exactly what its int(m) draws', () => {
  for (const [m, n] of [[1, 5], [2, 3], [7, 7], [1000, 1000], [100_000, 100_000], [100_000, 400_003], [2_097_152 + 3, 200_001]] as const) {
    it(`sums over Int32 (exact) and Float64 (lane by lane, then (0 + 1) + (2 + 3)) tables, m = ${m}, n = ${n}`, () => {
      const ints = table(m);
      const doubles = Float64Array.from(ints, (v) => v / 7);
      const kInt = createLaneSumKernel(ints);
      const kDbl = createLaneSumKernel(doubles);
      const a = lanesOf(77);
      const b = lanesOf(77);
      const ref = lanesOf(77);
      for (let round = 0; round < 3; round++) {
        const refB = ref.map((g) => g.copy());
        const idx = laneIndices(ref, m, n);
        laneIndices(refB, m, n); // same draws for the double table
        const intSum = idx.flat().reduce((s, j) => s + ints[j], 0);
        const laneSums = idx.map((js) => js.reduce((s, j) => s + doubles[j], 0));
        const dblSum = laneSums[0] + laneSums[1] + (laneSums[2] + laneSums[3]);
        expect(kInt.sum(a, m, n), `int round ${round}`).toBe(intSum);
        expect(kDbl.sum(b, m, n), `double round ${round}`).toBe(dblSum);
        expect(states(a)).toEqual(states(ref));
        expect(states(b)).toEqual(states(ref));
      }
    });

    it(`counts, m = ${m}, n = ${n}`, () => {
      const kernel = createLaneCountKernel(m);
      const lanes = lanesOf(99);
      const ref = lanesOf(99);
      for (let round = 0; round < 2; round++) {
        kernel.counts.fill(0);
        kernel.count(lanes, m, n);
        const expected = new Int32Array(m);
        for (const j of laneIndices(ref, m, n).flat()) expected[j]++;
        expect(Buffer.from(kernel.counts.buffer, kernel.counts.byteOffset, kernel.counts.byteLength).equals(Buffer.from(expected.buffer)), `round ${round}`).toBe(true);
        expect(states(lanes)).toEqual(states(ref));
      }
    });
  }

  it('the four-lane cases pay debts for rejected draws (every lane of seed 77 rejects within the three rounds of n = 400,003 at m = 1e5)', () => {
    for (const g of lanesOf(77)) expect(rejections(g, 100_000, 3 * 100_001)).toBeGreaterThan(0);
  });

  it('a count table is a view of the kernel memory: zeroing it with fill(0) starts a fresh resample', () => {
    const kernel = createLaneCountKernel(50);
    const lanes = lanesOf(3);
    kernel.count(lanes, 50, 50);
    expect(kernel.counts.reduce((s, c) => s + c, 0)).toBe(50);
    kernel.counts.fill(0);
    kernel.count(lanes, 10, 21); // m below the table's length: only the first 10 counts move
    expect(kernel.counts.reduce((s, c) => s + c, 0)).toBe(21);
    expect(kernel.counts.subarray(10).every((c) => c === 0)).toBe(true);
  });
});

describe('degenerate cases', () => {
  it('no draws leave the generators where they were; bad m, counts and lanes are data errors naming the kernel', () => {
    const g = createXoshiro128(1);
    const before = Array.from(g.state);
    const kernel = createSumKernel(Float64Array.of(1, 2, 3));
    expect(kernel.sum(g, 3, 0)).toBe(0);
    expect(Array.from(g.state)).toEqual(before);
    const lanes = lanesOf(1);
    const lanesBefore = states(lanes);
    expect(createLaneSumKernel(Int32Array.of(1, 2, 3)).sum(lanes, 3, 0)).toBe(0);
    expect(states(lanes)).toEqual(lanesBefore);
    expectDataError(() => kernel.sum(g, 4, 1), 'stats.badCount', /createSumKernel sum requires m .* got 4/);
    expectDataError(() => kernel.sum(g, 0, 1), 'stats.badCount');
    expectDataError(() => kernel.sum(g, 2.5, 1), 'stats.badCount');
    expectDataError(() => kernel.sum(g, 3, -1), 'stats.badCount', /number of draws/);
    expectDataError(() => createLaneCountKernel(0), 'stats.badCount', /createLaneCountKernel requires units/);
    expectDataError(() => createLaneCountKernel(3).count(lanes, 4, 1), 'stats.badCount');
    expectDataError(() => createLaneSumKernel(Int32Array.of(1, 2)).sum(lanes.slice(0, 3), 2, 2), 'stats.badShape', /need 4 generators, got 3/);
    expectDataError(() => createPairSumKernel(Float64Array.of(1, 2), Float64Array.of(1)), 'stats.lengthMismatch', /createPairSumKernel requires tables of one length, got 2 and 1/);
  });
});
