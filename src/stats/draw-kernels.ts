import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { DRAWS_WASM_BASE64 } from './kernels/draws-wasm.ts';
import type { Xoshiro128 } from './xoshiro128.ts';

/**
 * The bootstrap's hot loops, in WebAssembly (src/stats/kernels/draws.wat). Every draw is an
 * unbiased integer j in [0, m) from a `Xoshiro128`, made exactly as its `int(m)` would make it
 * (same stream, same values, same state afterwards; m in [1, 2^31]).
 *
 * One stream (the index resampler of `ratioBootstrap`, behind continuous `bootstrapMean`,
 * `pairedBootstrap` and `clusterBootstrap`):
 *  - `createSumKernel(values)`: the sum of values[j] over k draws, in draw order;
 *  - `createPairSumKernel(num, den)`: the sums of num[j] and den[j] over the same k draws.
 *
 * Four lanes (the resamples of `bootstrapStatistic`, src/stats/resample-blocks.ts): one resample
 * of n draws is made by four generators at once, in 128-bit SIMD. Lane L (0..3) makes floor(n/4)
 * draws, plus one when L < n mod 4, each its generator's next `int(m)`:
 *  - `createLaneSumKernel(values)`: the sum of the resample's values (Int32 tables exactly, in 64
 *    bits; Float64 tables as doubles, each lane in its draw order, then (lane 0 + lane 1) + (lane
 *    2 + lane 3));
 *  - `createLaneCountKernel(units)`: adds 1 to counts[j] for each of the resample's draws.
 *
 * Why WebAssembly: the step is 32-bit integer arithmetic and Lemire's draw needs the high half of
 * a 32 x 32-bit product. V8 ran the loop written in JavaScript through doubles at ~5 ns a draw at
 * n = 1e5 on this 2-core machine; one WebAssembly stream runs at ~2.2 ns and four SIMD lanes at
 * ~1.3 ns (`ci bootstrap --statistic mean`, n = 1e5, B = 1e4, one thread, whole process: 6.1 s in
 * JavaScript, 3.1 s one stream, 2.4 s four lanes; 1.7 s on both cores). Each kernel owns
 * one WebAssembly memory holding the generator states (copied in and out around each call) and
 * its table, so a table is placed once and drawn from 10^4 times without a copy; the module is
 * compiled once per thread.
 *
 * Degenerate cases: m must be an integer in [1, 2^31] and at most the table's length; k and n
 * integers in [0, 2^32 - 1]; k = n = 0 gives 0 (sums) or leaves the counts alone, and moves no
 * generator. Integer sums are exact while |sum| < 2^53 (callers ensure it); double sums are in
 * draw order, bitwise as `s += values[j]` in JavaScript. The module uses 128-bit SIMD, which V8
 * (Node >= 16.4) runs on x86-64 with SSE4.1 and on arm64.
 *
 * @example
 * import { createXoshiro128 } from './xoshiro128.ts';
 * import { createSumKernel } from './draw-kernels.ts';
 * const kernel = createSumKernel(Float64Array.of(1, 2, 3));
 * const g = createXoshiro128(1);
 * kernel.sum(g, 3, 3); // values[j1] + values[j2] + values[j3] for the first three g.int(3)
 */
export interface SumKernel {
  /** Sum of values[j] over k draws j in [0, m) of one generator, in draw order. */
  sum(g: Xoshiro128, m: number, k: number): number;
}

export interface PairSumKernel {
  /** Sums of num[j] (out[0]) and den[j] (out[1]) over the same k draws j in [0, m), each in draw order. */
  sums(g: Xoshiro128, m: number, k: number, out: Float64Array): void;
}

/** Four generators, one per SIMD lane (`LANES`). */
export type Lanes = readonly Xoshiro128[];

/** Generators per resample of the lane kernels. */
export const LANES = 4;

export interface LaneSumKernel {
  /** Sum of values[j] over one resample of n draws j in [0, m) made by the four lanes. */
  sum(lanes: Lanes, m: number, n: number): number;
}

export interface LaneCountKernel {
  /** The count table (length `units`), a view of the kernel's memory: read it, zero it with fill(0). */
  readonly counts: Int32Array;
  /** Adds 1 to counts[j] for each draw j in [0, m) of one resample of n draws made by the four lanes. */
  count(lanes: Lanes, m: number, n: number): void;
}

interface DrawExports {
  sum_f64(base: number, m: number, k: number): number;
  sum_pair_f64(base: number, base2: number, m: number, k: number): number;
  sum4_i32(m: number, n: number): number;
  sum4_f64(m: number, n: number): number;
  count4_i32(m: number, n: number): void;
}

/** Byte offsets in a kernel's memory (see draws.wat). */
const STATE = 0;
const SECOND_SUM = 64;
const TABLE = 128;
const PAGE = 65536;

let compiled: WebAssembly.Module | null = null;

function drawModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(Uint8Array.from(atob(DRAWS_WASM_BASE64), (c) => c.charCodeAt(0)));
  return compiled;
}

function instantiate(tableBytes: number): { memory: WebAssembly.Memory; exports: DrawExports } {
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((TABLE + tableBytes) / PAGE)) });
  const instance = new WebAssembly.Instance(drawModule(), { env: { memory } });
  return { memory, exports: instance.exports as unknown as DrawExports };
}

function checkDraw(m: number, k: number, length: number, what: string): void {
  if (!Number.isInteger(m) || m < 1 || m > 2147483648 || m > length) {
    throw dataError('stats.badCount', `${what} requires m to be an integer in [1, min(2^31, ${length})], got ${show(m)}`);
  }
  if (!Number.isInteger(k) || k < 0 || k > 0xffffffff) {
    throw dataError('stats.badCount', `${what} requires the number of draws to be an integer in [0, 2^32 - 1], got ${show(k)}`);
  }
}

/** Runs one call with `g`'s state at bytes 0..15, and hands the advanced state back. */
function withState<T>(state: Int32Array, g: Xoshiro128, call: () => T): T {
  state.set(g.state);
  const out = call();
  g.state.set(state);
  return out;
}

/** Runs one call with the four lanes' states transposed at bytes 0..63 (word j of lane L at 4 j + L). */
function withLanes<T>(state: Int32Array, lanes: Lanes, call: () => T): T {
  if (lanes.length !== LANES) throw dataError('stats.badShape', `the lane kernels need ${LANES} generators, got ${lanes.length}`);
  for (let L = 0; L < LANES; L++) {
    const s = lanes[L].state;
    for (let j = 0; j < 4; j++) state[4 * j + L] = s[j];
  }
  const out = call();
  for (let L = 0; L < LANES; L++) {
    const s = lanes[L].state;
    for (let j = 0; j < 4; j++) s[j] = state[4 * j + L];
  }
  return out;
}

/** One-stream sums over a copy of `values`. */
export function createSumKernel(values: Float64Array): SumKernel {
  const { memory, exports } = instantiate(values.byteLength);
  const state = new Int32Array(memory.buffer, STATE, 4);
  const n = values.length;
  new Float64Array(memory.buffer, TABLE, n).set(values);
  return {
    sum(g, m, k) {
      checkDraw(m, k, n, 'createSumKernel sum');
      return withState(state, g, () => exports.sum_f64(TABLE, m, k));
    },
  };
}

/** One-stream sums of two Float64 tables of one length over the same draws (a ratio of sums). */
export function createPairSumKernel(num: Float64Array, den: Float64Array): PairSumKernel {
  const n = num.length;
  if (den.length !== n) throw dataError('stats.lengthMismatch', `createPairSumKernel requires tables of one length, got ${n} and ${den.length}`);
  const { memory, exports } = instantiate(16 * n);
  const state = new Int32Array(memory.buffer, STATE, 4);
  const second = new Float64Array(memory.buffer, SECOND_SUM, 1);
  const denAt = TABLE + 8 * n;
  new Float64Array(memory.buffer, TABLE, n).set(num);
  new Float64Array(memory.buffer, denAt, n).set(den);
  return {
    sums(g, m, k, out) {
      checkDraw(m, k, n, 'createPairSumKernel sums');
      out[0] = withState(state, g, () => exports.sum_pair_f64(TABLE, denAt, m, k));
      out[1] = second[0];
    },
  };
}

/** Four-lane resample sums over a copy of `values` (Int32: exact integer sums; Float64: double sums). */
export function createLaneSumKernel(values: Int32Array | Float64Array): LaneSumKernel {
  const { memory, exports } = instantiate(values.byteLength);
  const state = new Int32Array(memory.buffer, STATE, 16);
  const n = values.length;
  const isInt = values instanceof Int32Array;
  if (isInt) new Int32Array(memory.buffer, TABLE, n).set(values);
  else new Float64Array(memory.buffer, TABLE, n).set(values);
  const run = isInt ? exports.sum4_i32 : exports.sum4_f64;
  return {
    sum(lanes, m, draws) {
      checkDraw(m, draws, n, 'createLaneSumKernel sum');
      return withLanes(state, lanes, () => run(m, draws));
    },
  };
}

/** A four-lane count kernel with a zeroed table of `units` 32-bit counts (which never wrap below 2^31 draws). */
export function createLaneCountKernel(units: number): LaneCountKernel {
  if (!Number.isInteger(units) || units < 1 || units > 2147483648) {
    throw dataError('stats.badCount', `createLaneCountKernel requires units to be an integer in [1, 2^31], got ${show(units)}`);
  }
  const { memory, exports } = instantiate(units * 4);
  const state = new Int32Array(memory.buffer, STATE, 16);
  const counts = new Int32Array(memory.buffer, TABLE, units);
  return {
    counts,
    count(lanes, m, draws) {
      checkDraw(m, draws, units, 'createLaneCountKernel count');
      withLanes(state, lanes, () => exports.count4_i32(m, draws));
    },
  };
}
