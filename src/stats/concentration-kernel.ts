import { CONCENTRATION_WASM_BASE64 } from './kernels/concentration-wasm.ts';
import { mt19937Words } from './rng.ts';

/**
 * The permutation null of the error concentration (src/stats/error-concentration.ts) in
 * WebAssembly (src/stats/kernels/concentration.wat): B permutations in one call, each a partial
 * Fisher-Yates shuffle per subject with the draws of `createRng(seed).int(m)` (MT19937 and Lemire's
 * rejection, exactly as `Mt19937Stream` makes them), then the two counting passes. It returns,
 * for permutation b, `on` at 2 b and `all` at 2 b + 1: the same integers, in the same order, as
 * the JavaScript loop (`concentrationNullJs`), so the shares, band and p built from them are
 * bitwise the same.
 *
 * Why: the null takes permutations x errors draws (2e8 at the report's work bound; 5e8 at 1e7
 * episodes, where the floor of 1,000 permutations applies). In JavaScript each draw is a method
 * call, a double multiply and bounds-checked typed-array accesses; in WebAssembly the twist, the
 * tempering (four words at once in SIMD), the 64-bit product and the swap are a few integer
 * instructions in one loop, and the counting has no branch to mispredict.
 *
 * Memory: one WebAssembly memory per call, holding the MT state, the subject table, the counts
 * (one byte a state below 256 subjects, else an Int32), the output (8 bytes a permutation) and a
 * copy of every subject's facts-right states (4 bytes each). Returns null when that exceeds
 * {@link MAX_KERNEL_BYTES} or the engine cannot reserve it; the caller then runs the JavaScript
 * loop, which gives the same numbers.
 */
export const MAX_KERNEL_BYTES = 2 ** 31;

/** Byte offsets in the kernel's memory (concentration.wat): the end of the MT state words (where $at starts: twist first); the subject table, after the fixed slots. */
const MT_END = 2496;
const SUBJ = 5376;
const PAGE = 65536;

interface NullExports {
  set_at(v: number): void;
  run(subj: number, S: number, k: number, B: number, wide: number, count: number, out: number): void;
}

let compiled: WebAssembly.Module | null = null;

function nullModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(Uint8Array.from(atob(CONCENTRATION_WASM_BASE64), (c) => c.charCodeAt(0)));
  return compiled;
}

/** A zeroed WebAssembly memory of at least `bytes`, or null when the engine cannot reserve it (a RangeError). */
function kernelMemory(bytes: number): WebAssembly.Memory | null {
  try {
    return new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
  } catch (err) {
    if (err instanceof RangeError) return null;
    throw err;
  }
}

/**
 * On and all of each of B permutations (interleaved), drawn from `createRng(seed)`'s stream:
 * subject s places `lengths[s]` errors among `factsRight[s]` (its states in [0, states), distinct).
 * The arrays are copied, not changed. Null when the memory needed exceeds {@link MAX_KERNEL_BYTES} or cannot be reserved.
 */
export function concentrationNullWasm(factsRight: readonly Int32Array[], lengths: readonly number[], states: number, k: number, B: number, seed: number): Int32Array | null {
  const S = factsRight.length;
  const wide = S >= 256;
  const count = SUBJ + 12 * S;
  const out = count + Math.ceil((wide ? 4 * states : states) / 4) * 4;
  let arrays = out + 8 * B;
  const total = arrays + 4 * factsRight.reduce((a, r) => a + r.length, 0);
  if (total > MAX_KERNEL_BYTES) return null;
  const memory = kernelMemory(total);
  if (!memory) return null;
  const exports = new WebAssembly.Instance(nullModule(), { env: { memory } }).exports as unknown as NullExports;
  const words = new Int32Array(memory.buffer);
  words.set(mt19937Words(seed), 0);
  for (let s = 0; s < S; s++) {
    const r = factsRight[s];
    words.set(r, arrays / 4);
    words[SUBJ / 4 + 3 * s] = arrays;
    words[SUBJ / 4 + 3 * s + 1] = r.length;
    words[SUBJ / 4 + 3 * s + 2] = lengths[s];
    arrays += 4 * r.length;
  }
  exports.set_at(MT_END); // the first draw twists, as Mt19937Stream's
  exports.run(SUBJ, S, k, B, wide ? 1 : 0, count, out);
  return new Int32Array(memory.buffer, out, 2 * B).slice();
}
