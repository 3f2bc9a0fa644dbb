import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * A fast seeded generator for the bootstrap's resampling loops, which draw up to 10^9 indices
 * per call (the Mersenne Twister behind `createRng` costs ~30 ns a draw through its closure; this
 * costs ~2-3 ns).
 *
 * Algorithm: xoshiro128** 1.1 (Blackman & Vigna 2018, "Scrambled linear pseudorandom number
 * generators", https://prng.di.unimi.it/xoshiro128starstar.c), 128-bit state, period 2^128 - 1.
 * Seeding: the 32-bit seed is the initial state of SplitMix64 (Steele, Lea & Flood 2014, the
 * seeding the xoshiro authors recommend); its first two 64-bit outputs `a`, `b` give the state
 * `[lo32(a), hi32(a), lo32(b), hi32(b)]`. Integers in [0, m) use Lemire's (2019) multiply-shift
 * with rejection, so they are exactly uniform. Everything is a pure function of the seed; results
 * that use this generator say so with `rng: 'xoshiro128**'`.
 *
 * The bulk method `countIndices` keeps the state in local variables inside one loop, which is
 * what makes it fast (it repeats the generator step inline for that reason); it consumes the
 * stream exactly as repeated `int(m)` calls would. The bootstrap's own hot loops
 * (draw-and-add, 32-bit counts, four generators at once) are WebAssembly, in `draw-kernels.ts`,
 * working on `state`.
 * `jump()` is the reference 2^64-step jump (same polynomial as xoshiro128starstar.c; checked
 * against the C in tests/oracle/statistic-boot.json), which splits one seed into
 * non-overlapping streams.
 *
 * Degenerate cases: seed must be an integer in [0, 2^32 - 1] (0 is a valid seed; the state is
 * never all zero because SplitMix64 outputs are a bijection of distinct counters). `int(m)` needs
 * an integer m in [1, 2^31].
 *
 * @example
 * import { createXoshiro128 } from './xoshiro128.ts';
 * const g = createXoshiro128(42);
 * g.uint32(); // 1776835114 (the C reference gives the same)
 * g.int(10);  // an integer 0..9
 */
export interface Xoshiro128 {
  readonly seed: number;
  readonly algorithm: 'xoshiro128**';
  /** Raw unsigned 32-bit draw. */
  uint32(): number;
  /** Uniform double in [0, 1), 53-bit resolution (two draws). */
  uniform(): number;
  /** Uniform integer in [0, m), unbiased; m an integer in [1, 2^31]. */
  int(m: number): number;
  /**
   * Adds 1 (mod 256) to `counts[j]` for each of `k` independent uniform draws j in [0, m), and
   * returns how many times a count wrapped past 255 (0: every count is exact). A byte per index
   * keeps the table in cache; for the bootstrap (k = m) a wrap needs m >= 256 and one index drawn
   * 256+ times, probability below 10^-500.
   */
  countIndices(counts: Uint8Array, m: number, k: number): number;
  /**
   * Advances the state by 2^64 draws (the reference `jump()`), so 2^64 non-overlapping
   * subsequences of one seed's stream can be handed out: the lane streams of
   * `bootstrapStatistic`'s blocks are the seed's stream jumped 0, 1, 2, ... times.
   */
  jump(): void;
  /**
   * The live 128-bit state s0..s3 (not a copy): the WebAssembly draw loops of
   * `src/stats/draw-kernels.ts` read it before a call and write the advanced state back, so the
   * stream goes on exactly as if this generator had made their draws.
   */
  readonly state: Int32Array;
  /** An independent generator starting from this one's current state. */
  copy(): Xoshiro128;
}

const TWO32 = 4294967296;
const INV32 = 1 / 4294967296;
/** Above this, x * m (x < 2^32) can exceed 2^53 and the fast path would lose bits. */
const FAST_M = 2097152; // 2^21

function splitMix64Pair(seed: number): [number, number, number, number] {
  const M = 0xffffffffffffffffn;
  let x = BigInt(seed);
  const next = (): bigint => {
    x = (x + 0x9e3779b97f4a7c15n) & M;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
    return z ^ (z >> 31n);
  };
  const a = next();
  const b = next();
  return [
    Number(a & 0xffffffffn) | 0,
    Number(a >> 32n) | 0,
    Number(b & 0xffffffffn) | 0,
    Number(b >> 32n) | 0,
  ];
}

/** High and low 32 bits of x * m for x < 2^32, m <= 2^31, exactly (16-bit split). */
function mulHiLo(x: number, m: number): [number, number] {
  const xl = x & 0xffff;
  const xh = x >>> 16;
  const a = xl * m; // < 2^47
  const b = xh * m; // < 2^47
  const lowMix = (b % 65536) * 65536 + a; // < 2^48
  const lo = lowMix % TWO32;
  const hi = Math.floor(b / 65536) + Math.floor(lowMix / TWO32);
  return [hi, lo];
}

/** The xoshiro128** jump polynomial (2^64 steps), from the reference xoshiro128starstar.c. */
const JUMP = [0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b];

export function createXoshiro128(seed: number): Xoshiro128 {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw dataError('stats.badSeed', `createXoshiro128 requires seed to be an integer in [0, 4294967295], got ${show(seed)}`);
  }
  return fromState(seed, new Int32Array(splitMix64Pair(seed)));
}

/** The generator step on the live state `st`: returns the next raw 32-bit draw and advances st. */
function stepper(st: Int32Array): () => number {
  return (): number => {
    let s0 = st[0];
    let s1 = st[1];
    let s2 = st[2];
    let s3 = st[3];
    const r1 = Math.imul(s1, 5);
    const res = Math.imul((r1 << 7) | (r1 >>> 25), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    st[0] = s0;
    st[1] = s1;
    st[2] = s2;
    st[3] = s3;
    return res;
  };
}

function checkM(m: number): void {
  if (!Number.isInteger(m) || m < 1 || m > 2147483648) {
    throw dataError('stats.badCount', `xoshiro128 requires m to be an integer in [1, 2^31], got ${show(m)}`);
  }
}

/** One exact Lemire draw in [0, m) (slow path for any m). */
function intSlow(uint32: () => number, m: number): number {
  const thr = (TWO32 - m) % m;
  for (;;) {
    const [hi, lo] = mulHiLo(uint32(), m);
    if (lo >= thr) return hi;
  }
}

/** `countIndices` for m > 2^21: exact draws one at a time. */
function countSlow(uint32: () => number, counts: Uint8Array, m: number, k: number): number {
  let wraps = 0;
  for (let i = 0; i < k; i++) {
    const j = intSlow(uint32, m);
    const v = (counts[j] + 1) & 255;
    counts[j] = v;
    if (v === 0) wraps++;
  }
  return wraps;
}

/** The reference 2^64-step jump applied to the live state. */
function jumpState(st: Int32Array, uint32: () => number): void {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < 4; i++) {
    for (let b = 0; b < 32; b++) {
      if ((JUMP[i] >>> b) & 1) {
        s0 ^= st[0];
        s1 ^= st[1];
        s2 ^= st[2];
        s3 ^= st[3];
      }
      uint32();
    }
  }
  st[0] = s0;
  st[1] = s1;
  st[2] = s2;
  st[3] = s3;
}

function fromState(seed: number, st: Int32Array): Xoshiro128 {
  const uint32 = stepper(st);
  return {
    seed,
    algorithm: 'xoshiro128**',
    state: st,
    uint32,
    uniform(): number {
      const a = uint32() >>> 5;
      const b = uint32() >>> 6;
      return (a * 67108864 + b) / 9007199254740992;
    },
    int(m: number): number {
      checkM(m);
      if (m > FAST_M) return intSlow(uint32, m);
      const thr = (TWO32 - m) % m;
      for (;;) {
        const x = uint32();
        const lo = Math.imul(x, m) >>> 0;
        if (!(lo < m && lo < thr)) return (x * m * INV32) | 0;
      }
    },
    countIndices(counts: Uint8Array, m: number, k: number): number {
      checkM(m);
      if (m > counts.length) {
        throw dataError('stats.badShape', `xoshiro128 countIndices needs counts of length >= ${m}, got ${counts.length}`);
      }
      return m > FAST_M ? countSlow(uint32, counts, m, k) : countFast(st, counts, m, k);
    },
    jump(): void {
      jumpState(st, uint32);
    },
    copy(): Xoshiro128 {
      return fromState(seed, Int32Array.from(st));
    },
  };
}

/**
 * The countIndices hot loop (m <= 2^21). Only the number of wraps is recorded: storing anything
 * else in the (never taken) wrap branch makes V8 compile the whole loop 2-3x slower.
 */
function countFast(st: Int32Array, counts: Uint8Array, m: number, k: number): number {
  const thr = (TWO32 - m) % m;
  let wraps = 0;
  let s0 = st[0];
  let s1 = st[1];
  let s2 = st[2];
  let s3 = st[3];
  for (let i = 0; i < k; i++) {
    const r1 = Math.imul(s1, 5);
    const x = Math.imul((r1 << 7) | (r1 >>> 25), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >>> 21);
    const lo = Math.imul(x, m) >>> 0;
    if (lo < m && lo < thr) {
      i--;
      continue;
    }
    const j = (x * m * INV32) | 0;
    const v = (counts[j] + 1) & 255;
    counts[j] = v;
    if (v === 0) wraps++;
  }
  st[0] = s0;
  st[1] = s1;
  st[2] = s2;
  st[3] = s3;
  return wraps;
}
