import mt19937 from '@stdlib/random-base-mt19937';

/**
 * A seeded pseudorandom source. Every random procedure in `src/stats` takes one of these (never
 * `Math.random`), and every result records the seed it was built from.
 *
 * The generator is the 32-bit Mersenne Twister MT19937 (Matsumoto & Nishimura 1998) from
 * `@stdlib/random-base-mt19937`, seeded with a single unsigned 32-bit integer.
 * `uniform()` returns a double in [0, 1) with 53 random bits (two draws, as in numpy's
 * `random_sample`); `int(n)` returns an integer in [0, n) by Lemire's unbiased rejection method.
 *
 * @example
 * const rng = createRng(42);
 * rng.uniform(); // same value every time for seed 42
 * rng.int(10);   // 0..9
 */
export interface Rng {
  readonly seed: number;
  readonly algorithm: 'mt19937';
  /** Uniform double in [0, 1), 53-bit resolution. */
  uniform(): number;
  /** Uniform integer in [0, n), unbiased; n must be a positive integer below 2^32. */
  int(n: number): number;
  /** Raw unsigned 32-bit draw. */
  uint32(): number;
}

export function createRng(seed: number): Rng {
  const gen = seededGenerator(seed);
  const uint32 = (): number => gen() >>> 0;
  return {
    seed,
    algorithm: 'mt19937',
    uint32,
    uniform(): number {
      const a = uint32() >>> 5; // 27 bits
      const b = uint32() >>> 6; // 26 bits
      return (a * 67108864 + b) / 9007199254740992;
    },
    int(n: number): number {
      if (!(n > 0) || n > 0x100000000 || !Number.isInteger(n)) {
        throw new RangeError(`rng.int requires an integer n in [1, 2^32], got ${n}`);
      }
      // Lemire (2019) "Fast random integer generation in an interval", with rejection.
      // x * n is exact in a double only below 2^53, i.e. for n <= 2^21; above that, use BigInt.
      if (n > 0x200000) return lemireBig(uint32, n);
      // The low 32 bits of x * n (Math.imul: exact modulo 2^32, no floating-point remainder).
      let x = uint32();
      let l = Math.imul(x, n) >>> 0;
      if (l < n) {
        const t = (0x100000000 - n) % n;
        while (l < t) {
          x = uint32();
          l = Math.imul(x, n) >>> 0;
        }
      }
      // x * n < 2^53 is exact, and so is its high word.
      return (x * n - l) / 0x100000000;
    },
  };
}

/** stdlib's MT19937 seeded as `createRng` seeds it (seed 0, which stdlib rejects, maps to a fixed non-zero value). */
function seededGenerator(seed: number): ReturnType<typeof mt19937.factory> {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`createRng requires an integer seed in [0, 4294967295], got ${seed}`);
  }
  return mt19937.factory({ seed: seed === 0 ? 0x9e3779b9 : seed });
}

const MT_N = 624;
const MT_M = 397;

/**
 * The draws of `createRng(seed)` (`uint32()` and `int(n)`: the same numbers in the same order),
 * generated 624 words at a time into a typed array, for hot loops that take hundreds of millions
 * of draws (the error-concentration null). The state is stdlib's after seeding; the twist and the
 * tempering are MT19937's (Matsumoto & Nishimura 1998), as stdlib computes them.
 */
export class Mt19937Stream {
  private readonly mt: Int32Array;
  private readonly out = new Uint32Array(MT_N);
  private i = MT_N;

  constructor(seed: number) {
    this.mt = mt19937Words(seed);
  }

  /** Raw unsigned 32-bit draw (as `Rng.uint32`). */
  uint32(): number {
    if (this.i === MT_N) this.refill();
    return this.out[this.i++];
  }

  /** Uniform integer in [0, n) (as `Rng.int`, the same draws and rejections). */
  int(n: number): number {
    if (!(n > 0) || n > 0x100000000 || !Number.isInteger(n)) {
      throw new RangeError(`rng.int requires an integer n in [1, 2^32], got ${n}`);
    }
    if (n > 0x200000) return lemireBig(() => this.uint32(), n);
    let x = this.uint32();
    let l = Math.imul(x, n) >>> 0;
    if (l < n) {
      const t = (0x100000000 - n) % n;
      while (l < t) {
        x = this.uint32();
        l = Math.imul(x, n) >>> 0;
      }
    }
    return (x * n - l) / 0x100000000;
  }

  /** Twists the state and tempers the next 624 words (int32 arithmetic: the same bits as uint32). */
  private refill(): void {
    const mt = this.mt;
    const out = this.out;
    let k = 0;
    for (; k < MT_N - MT_M; k++) {
      const y = (mt[k] & 0x80000000) | (mt[k + 1] & 0x7fffffff);
      mt[k] = mt[k + MT_M] ^ (y >>> 1) ^ (-(y & 1) & 0x9908b0df);
    }
    for (; k < MT_N - 1; k++) {
      const y = (mt[k] & 0x80000000) | (mt[k + 1] & 0x7fffffff);
      mt[k] = mt[k + MT_M - MT_N] ^ (y >>> 1) ^ (-(y & 1) & 0x9908b0df);
    }
    const y = (mt[MT_N - 1] & 0x80000000) | (mt[0] & 0x7fffffff);
    mt[MT_N - 1] = mt[MT_M - 1] ^ (y >>> 1) ^ (-(y & 1) & 0x9908b0df);
    for (k = 0; k < MT_N; k++) {
      let r = mt[k];
      r ^= r >>> 11;
      r ^= (r << 7) & 0x9d2c5680;
      r ^= (r << 15) & 0xefc60000;
      r ^= r >>> 18;
      out[k] = r;
    }
    this.i = 0;
  }
}

/**
 * The 624 state words of `createRng(seed)` after seeding (stdlib's, as Int32), whose first draw
 * twists them: where `Mt19937Stream` starts, and the WebAssembly null of the error concentration
 * (src/stats/concentration-kernel.ts) too.
 */
export function mt19937Words(seed: number): Int32Array {
  // stdlib's state array: version, sections, N, the N state words, 1, the index, seed length, seed.
  const st = seededGenerator(seed).state;
  if (st[2] !== MT_N || st[MT_N + 4] !== MT_N) throw new RangeError('Mt19937Stream: unexpected stdlib MT19937 state layout');
  return Int32Array.from(st.subarray(3, 3 + MT_N), (w) => w | 0);
}

/** Lemire's method with exact 64-bit products (n > 2^21). */
function lemireBig(uint32: () => number, n: number): number {
  const N = BigInt(n);
  const TWO32 = 0x100000000n;
  const t = (TWO32 - N) % N;
  for (;;) {
    const m = BigInt(uint32()) * N;
    if (m % TWO32 >= t) return Number(m / TWO32);
  }
}
