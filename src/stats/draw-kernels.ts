import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { DRAWS_WASM_BASE64 } from './kernels/draws-wasm.ts';
import type { Xoshiro128 } from './xoshiro128.ts';

/**
 * The bootstrap's hot loops, in WebAssembly (src/stats/kernels/draws.wat): the fused
 * draw-and-add of a bootstrap mean (`createSumKernel`), of a ratio of sums (`createPairSumKernel`:
 * the index resampler of `ratioBootstrap`, behind continuous paired and cluster bootstraps) and
 * the count table of every other resampling statistic (`createCountKernel`). Each draws k unbiased integers j in [0, m) from a
 * `Xoshiro128` exactly as k calls of its `int(m)` would (same stream, same values, same state
 * afterwards) and either adds `values[j]` in draw order or adds 1 to `counts[j]`.
 *
 * Why WebAssembly: the step is 32-bit integer arithmetic and Lemire's draw needs the high half of
 * a 32 x 32-bit product; V8 ran the same loop written in JavaScript through doubles, at ~5 ns a
 * draw at n = 1e5 on this 2-core machine, and runs WebAssembly's i32/i64 instructions at ~2.5
 * (`ci bootstrap --statistic mean`, n = 1e5, B = 1e4, one thread, whole process: 6.1 s -> 3.1 s).
 * Each kernel owns one WebAssembly memory holding the generator state (16 bytes, copied in and out
 * around each call) and its table, so a table is placed once and drawn from 10^4 times without a
 * copy; the module is compiled once per thread.
 *
 * Degenerate cases: m must be an integer in [1, 2^31] and at most the table's length; k an
 * integer in [0, 2^32 - 1]; k = 0 gives 0 (sum) or leaves the counts alone, and does not move the
 * generator. Integer tables are summed exactly in 64 bits (returned as a double: exact while
 * |sum| < 2^53, which callers ensure); double tables are summed in draw order as doubles, bitwise
 * as `s += values[j]` in JavaScript.
 *
 * @example
 * import { createXoshiro128 } from './xoshiro128.ts';
 * import { createSumKernel } from './draw-kernels.ts';
 * const kernel = createSumKernel(Int32Array.of(1, 2, 3));
 * const g = createXoshiro128(1);
 * kernel.sum(g, 3, 3); // values[j1] + values[j2] + values[j3] for the first three g.int(3)
 */
export interface SumKernel {
  /** Sum of values[j] over k draws j in [0, m). */
  sum(g: Xoshiro128, m: number, k: number): number;
}

export interface PairSumKernel {
  /** Sums of num[j] (out[0]) and den[j] (out[1]) over the same k draws j in [0, m), each in draw order. */
  sums(g: Xoshiro128, m: number, k: number, out: Float64Array): void;
}

export interface CountKernel {
  /** The count table (length `units`), a view of the kernel's memory: read it, zero it with fill(0). */
  readonly counts: Int32Array;
  /** Adds 1 to counts[j] for each of k draws j in [0, m). */
  count(g: Xoshiro128, m: number, k: number): void;
}

interface DrawExports {
  sum_i32(base: number, m: number, k: number): number;
  sum_f64(base: number, m: number, k: number): number;
  sum_pair_f64(base: number, base2: number, m: number, k: number): number;
  count_i32(base: number, m: number, k: number): void;
}

/** Byte offsets in a kernel's memory (see draws.wat). */
const STATE = 0;
const SECOND_SUM = 16;
const TABLE = 32;
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
    throw dataError('stats.badCount', `${what} requires k to be an integer in [0, 2^32 - 1], got ${show(k)}`);
  }
}

/** Runs one kernel call with `g`'s state in the kernel's memory, and hands the advanced state back. */
function withState<T>(state: Int32Array, g: Xoshiro128, call: () => T): T {
  state.set(g.state);
  const out = call();
  g.state.set(state);
  return out;
}

/** A sum kernel over a copy of `values` (Int32: exact integer sums; Float64: double sums in draw order). */
export function createSumKernel(values: Int32Array | Float64Array): SumKernel {
  const { memory, exports } = instantiate(values.byteLength);
  const state = new Int32Array(memory.buffer, STATE, 4);
  const n = values.length;
  const isInt = values instanceof Int32Array;
  if (isInt) new Int32Array(memory.buffer, TABLE, n).set(values);
  else new Float64Array(memory.buffer, TABLE, n).set(values);
  const run = isInt ? exports.sum_i32 : exports.sum_f64;
  return {
    sum(g, m, k) {
      checkDraw(m, k, n, 'createSumKernel sum');
      return withState(state, g, () => run(TABLE, m, k));
    },
  };
}

/** A kernel summing two Float64 tables of one length over the same draws (a ratio of sums). */
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

/** A count kernel with a zeroed table of `units` 32-bit counts (which never wrap below 2^31 draws). */
export function createCountKernel(units: number): CountKernel {
  if (!Number.isInteger(units) || units < 1 || units > 2147483648) {
    throw dataError('stats.badCount', `createCountKernel requires units to be an integer in [1, 2^31], got ${show(units)}`);
  }
  const { memory, exports } = instantiate(units * 4);
  const state = new Int32Array(memory.buffer, STATE, 4);
  const counts = new Int32Array(memory.buffer, TABLE, units);
  return {
    counts,
    count(g, m, k) {
      checkDraw(m, k, units, 'createCountKernel count');
      withState(state, g, () => exports.count_i32(TABLE, m, k));
    },
  };
}
