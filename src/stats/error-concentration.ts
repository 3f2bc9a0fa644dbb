import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { quantile } from './quantile.ts';
import { Mt19937Stream } from './rng.ts';
import { concentrationNullWasm } from './concentration-kernel.ts';

/** One subject: the states where it read every fact right, and among them those it still got wrong. */
export interface ConcentrationSubject {
  subject: string;
  /** States where the subject read every probed fact right (its facts-right states). */
  factsRight: readonly string[];
  /** Facts-right states where its action was wrong (facts right, action wrong); a subset of `factsRight`. */
  errors: readonly string[];
}

export interface ErrorConcentrationOptions {
  /** k: a state counts as shared when at least k subjects fail it there (default ceil(subjects / 2)). */
  minSubjects?: number;
  seed: number;
  /** Permutations of the null (default 10,000). */
  permutations?: number;
  /** Level of the null band (default 0.95). */
  level?: number;
}

export interface ErrorConcentrationResult {
  subjects: number;
  minSubjects: number;
  /** Facts-right, action-wrong errors (subject x state). */
  errors: number;
  /** Errors on states that at least k subjects fail. */
  onShared: number;
  /** onShared / errors (null with no errors). */
  observed: number | null;
  /** States that every subject fails (facts right, action wrong). */
  statesAllFail: number;
  null: {
    permutations: number;
    seed: number;
    level: number;
    mean: number | null;
    /** Central band of the null shares (type-7 quantiles). */
    lower: number | null;
    upper: number | null;
    /** One-sided: (1 + #{null share >= observed}) / (1 + permutations). */
    p: number | null;
    /** Mean number of states every subject fails under the null. */
    statesAllFailMean: number;
  };
  /** The null shares in permutation order (for the figure). */
  nullShares: number[];
}

/**
 * Share of errors on states failed by >= k subjects, and the states every subject fails. Subject
 * s's errors are the first `lengths[s]` entries of `errorSets[s]` (distinct states); `count` (one
 * slot per state, able to hold the number of subjects) is all zeros on entry and is left so: only
 * the touched slots are counted and reset, so a permutation costs its errors, not the number of
 * states. A state failed by c subjects holds c errors: the first of its errors met in the second
 * pass adds c when c >= k and clears the slot, so its other errors add nothing.
 */
function shareOnShared(errorSets: readonly Int32Array[], lengths: readonly number[], count: Uint8Array | Int32Array, k: number): { on: number; all: number } {
  const S = errorSets.length;
  let all = 0;
  for (let s = 0; s < S; s++) {
    const e = errorSets[s];
    const L = lengths[s];
    // A state's count reaches S once at most (each subject's states are distinct): then every subject fails it.
    for (let i = 0; i < L; i++) if (++count[e[i]] === S) all++;
  }
  let on = 0;
  for (let s = 0; s < S; s++) {
    const e = errorSets[s];
    const L = lengths[s];
    for (let i = 0; i < L; i++) {
      const j = e[i];
      const c = count[j];
      if (c !== 0) {
        if (c >= k) on += c;
        count[j] = 0;
      }
    }
  }
  return { on, all };
}

/**
 * Error concentration against a permutation null ("Reading Right, Acting Wrong", section 5.3: "56%
 * fall where at least seven of 14 competent fast systems fail, versus 16% under the permutation
 * null"). Per state, count the subjects whose outcome there is facts right, action wrong; the
 * observed statistic is the share of all such errors that fall on states at least k subjects fail.
 * The null keeps each subject's number of errors and places them uniformly at random, without
 * replacement, over that subject's own facts-right states (independently across subjects), which
 * breaks any sharing of hard states between subjects while keeping each subject's error rate and
 * reading. Reported: the null mean, a central band at `level`, the one-sided permutation p-value
 * (1 + #{null >= observed}) / (1 + B) (Phipson & Smyth 2010, "Permutation p-values should never be
 * zero"), and the number of states every subject fails, observed and its null mean.
 *
 * The null runs in WebAssembly (`concentrationNullWasm`, src/stats/concentration-kernel.ts: the
 * same draws and counts as the JavaScript loop `concentrationNullJs`, about 5x to 7x faster).
 *
 * Degenerate cases: no errors -> observed, mean, band and p null; fewer than one subject or k
 * outside [1, subjects] throws.
 *
 * Throws `dataError` ('stats.badConcentration') for a malformed subject, an error state that is not
 * among its facts-right states, a repeated state within a subject, or a bad option.
 *
 * @example
 * errorConcentration([
 *   { subject: 'a', factsRight: ['s1', 's2'], errors: ['s1'] },
 *   { subject: 'b', factsRight: ['s1', 's2'], errors: ['s1'] },
 * ], { seed: 1, minSubjects: 2 }); // observed 1 (both errors on s1); null mean 0.5
 */
export function errorConcentration(subjects: readonly ConcentrationSubject[], o: ErrorConcentrationOptions): ErrorConcentrationResult {
  const bad = (msg: string): never => {
    throw dataError('stats.badConcentration', `errorConcentration: ${msg}`);
  };
  if (!Array.isArray(subjects) || subjects.length === 0) bad(`requires a non-empty array of subjects, got ${show(subjects)}`);
  const { k, B, level } = checkOptions(subjects.length, o, bad);
  const index = new Map<string, number>();
  const id = (s: string) => {
    let j = index.get(s);
    if (j === undefined) index.set(s, (j = index.size));
    return j;
  };
  const indexed: IndexedConcentrationSubject[] = [];
  subjects.forEach((x, i) => {
    if (!x || !Array.isArray(x.factsRight) || !Array.isArray(x.errors)) bad(`subjects[${i}] needs factsRight and errors arrays`);
    const fr = new Set(x.factsRight);
    if (fr.size !== x.factsRight.length) bad(`subjects[${i}] (${show(x.subject)}) repeats a facts-right state`);
    const er = new Set(x.errors);
    if (er.size !== x.errors.length) bad(`subjects[${i}] (${show(x.subject)}) repeats an error state`);
    for (const e of er) if (!fr.has(e)) bad(`subjects[${i}] (${show(x.subject)}) has error state ${show(e)} that is not among its facts-right states`);
    indexed.push({ subject: x.subject, factsRight: Int32Array.from([...fr].map(id)), errors: Int32Array.from([...er].map(id)) });
  });
  return concentrationCore(indexed, index.size, k, B, level, o.seed);
}

/** One subject with its states as indices in [0, states): facts-right states and, among them, its errors. */
export interface IndexedConcentrationSubject {
  subject: string;
  factsRight: Int32Array;
  errors: Int32Array;
}

/**
 * `errorConcentration` with the states already numbered 0..states-1 (any numbering: the result
 * depends only on which states are equal), for callers that hold millions of (subject, state)
 * pairs in typed arrays. Same checks, same draws, same result as `errorConcentration` on the
 * states' names in the same order.
 */
export function errorConcentrationIndexed(subjects: readonly IndexedConcentrationSubject[], states: number, o: ErrorConcentrationOptions): ErrorConcentrationResult {
  const bad = (msg: string): never => {
    throw dataError('stats.badConcentration', `errorConcentrationIndexed: ${msg}`);
  };
  if (!Array.isArray(subjects) || subjects.length === 0) bad(`requires a non-empty array of subjects, got ${show(subjects)}`);
  if (!Number.isInteger(states) || states < 0) bad(`states must be a non-negative integer, got ${show(states)}`);
  const { k, B, level } = checkOptions(subjects.length, o, bad);
  const mark = new Uint8Array(states);
  subjects.forEach((x, i) => {
    if (!x || !(x.factsRight instanceof Int32Array) || !(x.errors instanceof Int32Array)) bad(`subjects[${i}] needs factsRight and errors Int32Arrays`);
    for (const j of x.factsRight) {
      if (!(j >= 0 && j < states)) bad(`subjects[${i}] (${show(x.subject)}) has state ${j} outside [0, ${states})`);
      if (mark[j] !== 0) bad(`subjects[${i}] (${show(x.subject)}) repeats a facts-right state`);
      mark[j] = 1;
    }
    for (const j of x.errors) {
      if (!(j >= 0 && j < states) || mark[j] === 0) bad(`subjects[${i}] (${show(x.subject)}) has error state ${j} that is not among its facts-right states`);
      if (mark[j] === 2) bad(`subjects[${i}] (${show(x.subject)}) repeats an error state`);
      mark[j] = 2;
    }
    for (const j of x.factsRight) mark[j] = 0;
  });
  return concentrationCore(subjects, states, k, B, level, o.seed);
}

/** One count slot per state, able to hold the number of subjects: a byte up to 255 (a smaller array stays in cache at millions of states). */
function countArray(S: number, states: number): Uint8Array | Int32Array {
  return S < 256 ? new Uint8Array(states) : new Int32Array(states);
}

/**
 * The permutation null in JavaScript: the reference of `concentrationNullWasm` (which the tests
 * hold it to, permutation by permutation) and its fallback. Per permutation, a partial Fisher-Yates
 * shuffle per subject with the draws of `createRng(seed)`, carried on from the previous
 * permutation's order (each subject's first `lengths[s]` entries are then a uniform subset of its
 * facts-right states), then `shareOnShared`. Returns on at 2 b and all at 2 b + 1.
 */
export function concentrationNullJs(factsRight: readonly Int32Array[], lengths: readonly number[], states: number, k: number, B: number, seed: number): Int32Array {
  const count = countArray(factsRight.length, states);
  const rng = new Mt19937Stream(seed);
  const scratch = factsRight.map((r) => Int32Array.from(r));
  const out = new Int32Array(2 * B);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < scratch.length; s++) {
      const r = scratch[s];
      const L = lengths[s];
      const n = r.length;
      for (let i = 0; i < L; i++) {
        const j = i + rng.int(n - i);
        const t = r[i];
        r[i] = r[j];
        r[j] = t;
      }
    }
    const x = shareOnShared(scratch, lengths, count, k);
    out[2 * b] = x.on;
    out[2 * b + 1] = x.all;
  }
  return out;
}

/** k, permutations and level from the options (defaults filled), each checked. */
function checkOptions(S: number, o: ErrorConcentrationOptions, bad: (msg: string) => never): { k: number; B: number; level: number } {
  const k = o.minSubjects ?? Math.ceil(S / 2);
  if (!Number.isInteger(k) || k < 1 || k > S) bad(`minSubjects must be an integer in [1, ${S}], got ${show(k)}`);
  const B = o.permutations ?? 10_000;
  if (!Number.isInteger(B) || B < 1) bad(`permutations must be a positive integer, got ${show(B)}`);
  const level = o.level ?? 0.95;
  if (!(level > 0 && level < 1)) bad(`level must be in (0, 1), got ${show(level)}`);
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff) bad(`seed must be an integer in [0, 2^32), got ${show(o.seed)}`);
  return { k, B, level };
}

/** The observed statistic and the permutation null over checked, indexed subjects. */
function concentrationCore(subjects: readonly IndexedConcentrationSubject[], states: number, k: number, B: number, level: number, seed: number): ErrorConcentrationResult {
  const S = subjects.length;
  const observedSets = subjects.map((x) => x.errors);
  const errors = observedSets.reduce((a, e) => a + e.length, 0);
  const lengths = observedSets.map((e) => e.length);
  const obs = shareOnShared(observedSets, lengths, countArray(S, states), k);
  const factsRight = subjects.map((x) => x.factsRight);
  // The same integers either way; the JavaScript loop only when the kernel's memory is too large or cannot be reserved.
  const counts = concentrationNullWasm(factsRight, lengths, states, k, B, seed) ?? concentrationNullJs(factsRight, lengths, states, k, B, seed);
  const nullShares: number[] = [];
  let ge = 0;
  let allSum = 0;
  for (let b = 0; b < B; b++) {
    const on = counts[2 * b];
    allSum += counts[2 * b + 1];
    if (errors > 0) {
      nullShares.push(on / errors);
      if (on >= obs.on) ge++;
    }
  }
  const has = errors > 0;
  const a = (1 - level) / 2;
  return {
    subjects: S,
    minSubjects: k,
    errors,
    onShared: obs.on,
    observed: has ? obs.on / errors : null,
    statesAllFail: obs.all,
    null: {
      permutations: B,
      seed,
      level,
      mean: has ? nullShares.reduce((s, v) => s + v, 0) / B : null,
      lower: has ? quantile(nullShares, a) : null,
      upper: has ? quantile(nullShares, 1 - a) : null,
      p: has ? (1 + ge) / (1 + B) : null,
      statesAllFailMean: allSum / B,
    },
    nullShares,
  };
}
