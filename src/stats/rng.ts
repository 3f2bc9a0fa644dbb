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
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`createRng requires an integer seed in [0, 4294967295], got ${seed}`);
  }
  // stdlib rejects seed 0; map it to a fixed non-zero value so 0 stays a usable, documented seed.
  const gen = mt19937.factory({ seed: seed === 0 ? 0x9e3779b9 : seed });
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
      let x = uint32();
      let m = x * n;
      let l = m % 0x100000000;
      if (l < n) {
        const t = (0x100000000 - n) % n;
        while (l < t) {
          x = uint32();
          m = x * n;
          l = m % 0x100000000;
        }
      }
      return Math.floor(m / 0x100000000);
    },
  };
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
