/**
 * The WebAssembly draw loops (src/stats/draw-kernels.ts, src/stats/kernels/draws.wat):
 *
 * 1. The committed bytes (draws-wasm.ts) are what wabt assembles draws.wat to, so the module that
 *    runs is the one the .wat shows (`npm run build:wasm` regenerates it).
 * 2. Each kernel consumes the xoshiro128** stream exactly as repeated `int(m)` calls (the
 *    JavaScript reference in xoshiro128.ts, itself checked against the reference C in
 *    tests/stats/bootstrap.test.ts), rejections included: the same indices, the same sums, the same
 *    state afterwards. Sizes cover m = 1, small m, m = 1e5 (the bench's n) and m above 2^21, where
 *    the JavaScript draw switches to its 16-bit split and WebAssembly keeps one 64-bit path.
 * 3. Degenerate cases: k = 0, bad m and k, m beyond the table.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleWat, WAT } from '../../scripts/build-wasm.mjs';
import { DRAWS_WASM_BASE64 } from '../../src/stats/kernels/draws-wasm.ts';
import { createCountKernel, createPairSumKernel, createSumKernel, createXoshiro128 } from '../../src/stats/index.ts';
import { expectDataError } from '../helpers/stats.ts';

const TWO32 = 4294967296;

/** How many of the first `draws` accepted int(m) draws of `seed` needed a rejection (Lemire). */
function rejections(seed: number, m: number, draws: number): number {
  const g = createXoshiro128(seed);
  const thr = (TWO32 - m) % m;
  let rejected = 0;
  for (let accepted = 0; accepted < draws; ) {
    const x = g.uint32();
    const lo = Number((BigInt(x) * BigInt(m)) & 0xffffffffn);
    if (lo < thr) rejected++;
    else accepted++;
  }
  return rejected;
}

describe('the committed WebAssembly is the .wat assembled', () => {
  it('draws-wasm.ts holds exactly the bytes wabt makes from draws.wat', async () => {
    const bytes = await assembleWat(fs.readFileSync(WAT, 'utf8'));
    expect(Buffer.from(DRAWS_WASM_BASE64, 'base64').equals(Buffer.from(bytes)), 'run npm run build:wasm').toBe(true);
  });
});

describe('the kernels draw exactly what int(m) draws', () => {
  const table = (m: number) => Int32Array.from({ length: m }, (_, i) => ((i * 2654435761) % 4000001) - 2000000);

  for (const m of [1, 7, 1000, 100_000, 2_097_152 + 3]) {
    it(`sum over Int32 and Float64 tables, m = ${m}`, () => {
      const ints = table(m);
      const doubles = Float64Array.from(ints, (v) => v / 7); // not integers: tests the draw-order double sum
      const kInt = createSumKernel(ints);
      const kDbl = createSumKernel(doubles);
      const a = createXoshiro128(20261201);
      const b = createXoshiro128(20261201);
      const ref = createXoshiro128(20261201);
      for (const k of m > 1e6 ? [0, 1, 200_000] : [0, 1, m, 3 * m + 1]) {
        let intSum = 0;
        let dblSum = 0;
        const save = ref.copy();
        for (let i = 0; i < k; i++) intSum += ints[ref.int(m)];
        for (let i = 0; i < k; i++) dblSum += doubles[save.int(m)];
        expect(kInt.sum(a, m, k), `int m=${m} k=${k}`).toBe(intSum);
        expect(kDbl.sum(b, m, k), `double m=${m} k=${k}`).toBe(dblSum);
      }
      expect(Array.from(a.state)).toEqual(Array.from(ref.state));
      expect(Array.from(b.state)).toEqual(Array.from(ref.state));
      expect(a.uint32()).toBe(ref.uint32()); // the stream goes on where int(m) left it
    });

    it(`pair sums (a ratio of sums) over one set of draws, m = ${m}`, () => {
      const num = Float64Array.from(table(m), (v) => v / 3);
      const den = Float64Array.from({ length: m }, (_, i) => 1 + (i % 5));
      const kernel = createPairSumKernel(num, den);
      const g = createXoshiro128(4242);
      const ref = createXoshiro128(4242);
      const out = new Float64Array(2);
      for (const k of m > 1e6 ? [0, 200_000] : [0, 1, m, 2 * m + 3]) {
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

    it(`count, m = ${m}`, () => {
      const kernel = createCountKernel(m);
      const g = createXoshiro128(99);
      const ref = createXoshiro128(99);
      const k = Math.min(3 * m + 1, 400_000);
      kernel.count(g, m, k);
      const expected = new Int32Array(m);
      for (let i = 0; i < k; i++) expected[ref.int(m)]++;
      expect(Buffer.from(kernel.counts.buffer, kernel.counts.byteOffset, kernel.counts.byteLength).equals(Buffer.from(expected.buffer))).toBe(true);
      expect(Array.from(g.state)).toEqual(Array.from(ref.state));
    });
  }

  it('the m = 1e5 cases include rejected draws (the rejection path is exercised, not assumed)', () => {
    expect(rejections(20261201, 100_000, 3 * 100_000 + 1)).toBeGreaterThan(0);
  });

  it('a count table is a view of the kernel memory: zeroing it with fill(0) starts a fresh resample', () => {
    const kernel = createCountKernel(50);
    const g = createXoshiro128(3);
    kernel.count(g, 50, 50);
    expect(kernel.counts.reduce((s, c) => s + c, 0)).toBe(50);
    kernel.counts.fill(0);
    kernel.count(g, 10, 20); // m below the table's length: only the first 10 counts move
    expect(kernel.counts.reduce((s, c) => s + c, 0)).toBe(20);
    expect(kernel.counts.subarray(10).every((c) => c === 0)).toBe(true);
  });
});

describe('degenerate cases', () => {
  it('k = 0 leaves the generator where it was; bad m and k are data errors naming the kernel', () => {
    const kernel = createSumKernel(Int32Array.of(1, 2, 3));
    const g = createXoshiro128(1);
    const before = Array.from(g.state);
    expect(kernel.sum(g, 3, 0)).toBe(0);
    expect(Array.from(g.state)).toEqual(before);
    expectDataError(() => kernel.sum(g, 4, 1), 'stats.badCount', /createSumKernel sum requires m .* got 4/);
    expectDataError(() => kernel.sum(g, 0, 1), 'stats.badCount');
    expectDataError(() => kernel.sum(g, 2.5, 1), 'stats.badCount');
    expectDataError(() => kernel.sum(g, 3, -1), 'stats.badCount', /requires k/);
    expectDataError(() => createCountKernel(0), 'stats.badCount', /createCountKernel requires units/);
    expectDataError(() => createCountKernel(3).count(g, 4, 1), 'stats.badCount');
    expectDataError(() => createPairSumKernel(Float64Array.of(1, 2), Float64Array.of(1)), 'stats.lengthMismatch', /createPairSumKernel requires tables of one length, got 2 and 1/);
  });
});
