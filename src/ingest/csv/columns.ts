/**
 * Column builders for the CSV ingest: the checked values of a table are kept per column (text by
 * dictionary, numbers and booleans in typed arrays) rather than as one object per row, which keeps
 * a million-row ingest small and lets `writeRun` stage it through data chunks (`ColumnarRows`).
 * Also: key indexes for duplicate detection.
 */
import { fileColumns, type TableName } from '../../schema/tables.ts';
import { columnValue, type ColumnData, type ColumnarRows } from '../../store/write-run.ts';

/** Distinct values a text column keeps in its dictionary before it holds plain strings. */
export const DICT_LIMIT = 1 << 16;
const INITIAL = 1024;

function growInt32(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
function growFloat64(a: Float64Array): Float64Array {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}
function growUint8(a: Uint8Array<ArrayBuffer>, size = a.length * 2): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(size);
  b.set(a);
  return b;
}

/** One column of values; `push` takes the value a row object would hold. */
export interface ColumnBuilder {
  readonly length: number;
  push(value: unknown): void;
  /** The same value `count` times. */
  pushRun(value: unknown, count: number): void;
  get(i: number): unknown;
  data(): ColumnData;
}

/** Text (VARCHAR, TIMESTAMP as ISO text): dictionary codes until `DICT_LIMIT` distinct values, then plain strings. */
export class TextColumn implements ColumnBuilder {
  length = 0;
  private codes: Int32Array | null = new Int32Array(INITIAL);
  private dict: string[] = [];
  private index = new Map<string, number>();
  private plain: (string | null)[] | null = null;
  private lastValue: string | null = null;
  private lastCode = -1;
  private readonly recent: (string | undefined)[] = new Array(64).fill(undefined);
  private readonly recentCodes = new Int32Array(64);
  /** Some dictionary value contains a '/' (see `EpisodeKeys`). */
  slash = false;

  /**
   * The dictionary code of `s` (added when new; kept even when no row is pushed with it), or -1
   * once the column holds plain strings.
   */
  code(s: string): number {
    if (s === this.lastValue) return this.lastCode;
    if (this.codes === null) return -1;
    // A small cache of recent values by length and last character: comparing a fresh string with
    // one candidate is much cheaper than hashing it for the Map.
    const n = s.length;
    const slot = n === 0 ? 0 : (n * 31 + s.charCodeAt(n - 1)) & 63;
    let code: number | undefined;
    if (this.recent[slot] === s) code = this.recentCodes[slot]!;
    else {
      code = this.index.get(s);
      if (code !== undefined) {
        this.recent[slot] = s;
        this.recentCodes[slot] = code;
      }
    }
    if (code === undefined) {
      if (this.dict.length >= DICT_LIMIT) {
        this.toPlain();
        return -1;
      }
      code = this.dict.length;
      this.dict.push(s);
      this.index.set(s, code);
      if (!this.slash && s.includes('/')) this.slash = true;
    }
    this.lastValue = s;
    this.lastCode = code;
    return code;
  }

  /** The dictionary value of a code `code()` returned (also after the column went plain). */
  valueOf(code: number): string {
    return this.dict[code]!;
  }

  push(value: unknown): void {
    const s = value as string | null;
    if (this.codes !== null) {
      const code = s === null ? -1 : this.code(s);
      const codes = this.codes; // null if code() just made the column plain
      if (codes !== null) {
        if (this.length === codes.length) this.codes = growInt32(codes);
        this.codes[this.length++] = code;
        return;
      }
    }
    this.plain!.push(s);
    this.length++;
  }

  pushRun(value: unknown, count: number): void {
    if (count <= 0) return;
    const s = value as string | null;
    const code = s === null ? -1 : this.code(s);
    if (this.codes === null) {
      for (let i = 0; i < count; i++) this.plain!.push(s);
      this.length += count;
      return;
    }
    let codes = this.codes;
    while (codes.length < this.length + count) codes = growInt32(codes);
    this.codes = codes;
    codes.fill(code, this.length, this.length + count);
    this.length += count;
  }

  private toPlain(): void {
    const codes = this.codes!;
    const plain: (string | null)[] = new Array(this.length);
    for (let i = 0; i < this.length; i++) plain[i] = codes[i]! < 0 ? null : this.dict[codes[i]!]!;
    this.plain = plain;
    this.codes = null;
    this.index = new Map();
    this.lastValue = null;
  }

  get(i: number): string | null {
    if (this.codes === null) return this.plain![i]!;
    const k = this.codes[i]!;
    return k < 0 ? null : this.dict[k]!;
  }

  data(): ColumnData {
    if (this.codes === null) return { kind: 'values', values: this.plain! };
    const codes = this.codes.subarray(0, this.length);
    const first = codes[0];
    let same = true;
    for (let i = 1; i < codes.length && same; i++) same = codes[i] === first;
    if (same && first !== undefined) return { kind: 'const', value: first < 0 ? null : this.dict[first]! };
    return { kind: 'dict', codes, dict: this.dict };
  }
}

/** Numbers: int32 (INTEGER) or float64 (DOUBLE, BIGINT). */
export class NumberColumn implements ColumnBuilder {
  length = 0;
  private values: Int32Array | Float64Array;
  private nulls: Uint8Array<ArrayBuffer> | null = null;
  constructor(readonly kind: 'int32' | 'float64') {
    this.values = kind === 'int32' ? new Int32Array(INITIAL) : new Float64Array(INITIAL);
  }

  private reserve(size: number): void {
    let values = this.values;
    while (values.length < size) values = values instanceof Int32Array ? growInt32(values) : growFloat64(values);
    if (values !== this.values) {
      this.values = values;
      if (this.nulls !== null) this.nulls = growUint8(this.nulls, values.length);
    }
  }

  push(value: unknown): void {
    if (this.length === this.values.length) this.reserve(this.length + 1);
    if (value === null) {
      if (this.nulls === null) this.nulls = new Uint8Array(this.values.length);
      this.nulls[this.length++] = 1;
      return;
    }
    this.values[this.length++] = value as number;
  }

  pushRun(value: unknown, count: number): void {
    if (count <= 0) return;
    this.reserve(this.length + count);
    if (value === null) {
      if (this.nulls === null) this.nulls = new Uint8Array(this.values.length);
      this.nulls.fill(1, this.length, this.length + count);
    } else this.values.fill(value as number, this.length, this.length + count);
    this.length += count;
  }

  get(i: number): number | null {
    return this.nulls !== null && this.nulls[i] === 1 ? null : this.values[i]!;
  }

  data(): ColumnData {
    const n = this.length;
    const nulls = this.nulls?.subarray(0, n);
    if (n > 0) {
      const first = this.get(0);
      let same = true;
      for (let i = 1; i < n && same; i++) same = Object.is(this.get(i), first);
      if (same) return { kind: 'const', value: first };
    }
    return this.values instanceof Int32Array
      ? { kind: 'int32', data: this.values.subarray(0, n), nulls }
      : { kind: 'float64', data: this.values.subarray(0, n), nulls };
  }
}

/** Booleans. */
export class BoolColumn implements ColumnBuilder {
  length = 0;
  private values: Uint8Array<ArrayBuffer> = new Uint8Array(INITIAL);
  private nulls: Uint8Array<ArrayBuffer> | null = null;

  private reserve(size: number): void {
    let values = this.values;
    while (values.length < size) values = growUint8(values);
    if (values !== this.values) {
      this.values = values;
      if (this.nulls !== null) this.nulls = growUint8(this.nulls, values.length);
    }
  }

  push(value: unknown): void {
    if (this.length === this.values.length) this.reserve(this.length + 1);
    if (value === null) {
      if (this.nulls === null) this.nulls = new Uint8Array(this.values.length);
      this.nulls[this.length++] = 1;
      return;
    }
    this.values[this.length++] = value ? 1 : 0;
  }

  pushRun(value: unknown, count: number): void {
    if (count <= 0) return;
    this.reserve(this.length + count);
    if (value === null) {
      if (this.nulls === null) this.nulls = new Uint8Array(this.values.length);
      this.nulls.fill(1, this.length, this.length + count);
    } else this.values.fill(value ? 1 : 0, this.length, this.length + count);
    this.length += count;
  }

  get(i: number): boolean | null {
    return this.nulls !== null && this.nulls[i] === 1 ? null : this.values[i] === 1;
  }

  data(): ColumnData {
    const n = this.length;
    if (n > 0) {
      const first = this.get(0);
      let same = true;
      for (let i = 1; i < n && same; i++) same = this.get(i) === first;
      if (same) return { kind: 'const', value: first };
    }
    return { kind: 'bool', data: this.values.subarray(0, n), nulls: this.nulls?.subarray(0, n) };
  }
}

export function columnFor(sqlType: string): ColumnBuilder {
  switch (sqlType) {
    case 'VARCHAR':
    case 'TIMESTAMP':
      return new TextColumn();
    case 'INTEGER':
      return new NumberColumn('int32');
    case 'BIGINT':
    case 'DOUBLE':
      return new NumberColumn('float64');
    case 'BOOLEAN':
      return new BoolColumn();
    default:
      throw new Error(`no CSV column builder for ${sqlType}`);
  }
}

/** Builders for every file column of a table (all but run_id), by name. */
export class TableColumns {
  readonly builders: Record<string, ColumnBuilder> = {};
  constructor(readonly table: TableName) {
    for (const c of fileColumns(table)) this.builders[c.name] = columnFor(c.type);
  }
  /** Rows added (columns that are the same in a whole file are filled at its end, so may lag). */
  length = 0;
  /** The columns, with `override` for columns built elsewhere (e.g. derived keys). */
  data(override: Record<string, ColumnData> = {}): ColumnarRows {
    const columns: Record<string, ColumnData> = {};
    for (const [name, b] of Object.entries(this.builders)) columns[name] = override[name] ?? b.data();
    return { length: this.length, columns };
  }
}

/**
 * Episode ids: derived (`<subject_model>/<scenario_id>/<epoch>`, not stored: a `join` of those
 * columns when written) or given by the CSV (stored), per file.
 */
export class EpisodeIdColumn {
  private readonly segments: { derived: boolean; count: number }[] = [];
  private readonly given = new TextColumn();

  pushGiven(id: string): void {
    this.given.push(id);
    this.extend(false, 1);
  }

  pushDerived(count: number): void {
    if (count > 0) this.extend(true, count);
  }

  private extend(derived: boolean, count: number): void {
    const last = this.segments[this.segments.length - 1];
    if (last && last.derived === derived) last.count += count;
    else this.segments.push({ derived, count });
  }

  /** The column, given the columns a derived id is built from. */
  data(parts: readonly ColumnData[]): ColumnData {
    if (this.segments.every((s) => s.derived)) return { kind: 'join', sep: '/', parts };
    const out: (string | null)[] = [];
    let g = 0;
    for (const s of this.segments) {
      for (let k = 0; k < s.count; k++) {
        const i = out.length;
        out.push(s.derived ? parts.map((p) => columnValue(p, i)).join('/') : this.given.get(g++));
      }
    }
    return { kind: 'values', values: out };
  }
}

/** `d` at rows `index` (the same object when `index` is 0, 1, 2, ... over all of `d`'s rows). */
export function gatherColumn(d: ColumnData, index: Int32Array, length: number): ColumnData {
  let identity = index.length === length;
  for (let i = 0; i < index.length && identity; i++) identity = index[i] === i;
  if (identity) return d;
  const n = index.length;
  const nullsOf = (nulls: Uint8Array | undefined) => {
    if (nulls === undefined) return undefined;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = nulls[index[i]!]!;
    return out;
  };
  switch (d.kind) {
    case 'const':
      return d;
    case 'values': {
      const out: unknown[] = new Array(n);
      for (let i = 0; i < n; i++) out[i] = d.values[index[i]!];
      return { kind: 'values', values: out };
    }
    case 'int32': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = d.data[index[i]!]!;
      return { kind: 'int32', data: out, nulls: nullsOf(d.nulls) };
    }
    case 'float64': {
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = d.data[index[i]!]!;
      return { kind: 'float64', data: out, nulls: nullsOf(d.nulls) };
    }
    case 'bool': {
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = d.data[index[i]!]!;
      return { kind: 'bool', data: out, nulls: nullsOf(d.nulls) };
    }
    case 'dict': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = d.codes[index[i]!]!;
      return { kind: 'dict', codes: out, dict: d.dict };
    }
    case 'join':
      return { kind: 'join', sep: d.sep, parts: d.parts.map((p) => gatherColumn(p, index, length)) };
  }
}

/**
 * A set of string keys with, for each, where it was first seen: open addressing over an
 * Int32Array with FNV-1a hashes. Much lighter and faster than a Map for a million keys.
 */
export class KeyIndex {
  private table = new Int32Array(1 << 12);
  private mask = (1 << 12) - 1;
  private hashes = new Int32Array(1 << 11);
  private readonly keys: string[] = [];
  private readonly where: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  private static hash(key: string): number {
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
    return h;
  }

  /** Adds `key`; returns -1 when it is new, else the `where` it was first added with. */
  add(key: string, where: number): number {
    const h = KeyIndex.hash(key);
    const table = this.table;
    const mask = this.mask;
    let slot = h & mask;
    for (;;) {
      const e = table[slot]!;
      if (e === 0) break;
      if (this.hashes[e - 1] === h && this.keys[e - 1] === key) return this.where[e - 1]!;
      slot = (slot + 1) & mask;
    }
    const n = this.keys.length;
    if (n === this.hashes.length) {
      const grown = new Int32Array(n * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[n] = h;
    this.keys.push(key);
    this.where.push(where);
    table[slot] = n + 1;
    if ((n + 1) * 2 > table.length) this.grow();
    return -1;
  }

  private grow(): void {
    const size = this.table.length * 2;
    const table = new Int32Array(size);
    const mask = size - 1;
    for (let e = 0; e < this.keys.length; e++) {
      let slot = this.hashes[e]! & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = e + 1;
    }
    this.table = table;
    this.mask = mask;
  }
}

/**
 * A set of (a, b, c) integer keys (a, b >= 0; c any int32) with where each was first seen: open
 * addressing over one interleaved Int32Array of (a, b, c, entry) slots, a = -1 marking an empty
 * one (one cache line per probe); `where` is kept per entry, in insertion order.
 */
export class TripleIndex {
  private slots = new Int32Array(4 << 12).fill(-1);
  private mask = (1 << 12) - 1;
  private where = new Float64Array(1 << 11);
  size = 0;

  private static hash(a: number, b: number, c: number): number {
    let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b) ^ Math.imul(c + 0x1b873593, 0xc2b2ae35);
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    return h ^ (h >>> 15);
  }

  /** Adds (a, b, c); returns -1 when new, else the `where` it was first added with. */
  add(a: number, b: number, c: number, where: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let slot = TripleIndex.hash(a, b, c) & mask;
    for (;;) {
      const k = slot << 2;
      const ka = slots[k]!;
      if (ka < 0) break;
      if (ka === a && slots[k + 1] === b && slots[k + 2] === c) return this.where[slots[k + 3]!]!;
      slot = (slot + 1) & mask;
    }
    const entry = this.size++;
    if (entry === this.where.length) {
      const grown = new Float64Array(entry * 2);
      grown.set(this.where);
      this.where = grown;
    }
    this.where[entry] = where;
    const k = slot << 2;
    slots[k] = a;
    slots[k + 1] = b;
    slots[k + 2] = c;
    slots[k + 3] = entry;
    if (this.size * 2 > mask) this.grow();
    return -1;
  }

  /** Calls `fn` for every key. */
  forEach(fn: (a: number, b: number, c: number, where: number) => void): void {
    const slots = this.slots;
    for (let k = 0; k < slots.length; k += 4) if (slots[k]! >= 0) fn(slots[k]!, slots[k + 1]!, slots[k + 2]!, this.where[slots[k + 3]!]!);
  }

  private grow(): void {
    const old = this.slots;
    const size = (this.mask + 1) * 2;
    const slots = new Int32Array(size * 4).fill(-1);
    const mask = size - 1;
    for (let k = 0; k < old.length; k += 4) {
      const a = old[k]!;
      if (a < 0) continue;
      let slot = TripleIndex.hash(a, old[k + 1]!, old[k + 2]!) & mask;
      while (slots[slot << 2]! >= 0) slot = (slot + 1) & mask;
      const j = slot << 2;
      slots[j] = a;
      slots[j + 1] = old[k + 1]!;
      slots[j + 2] = old[k + 2]!;
      slots[j + 3] = old[k + 3]!;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/**
 * A set of (a, b, c) integer keys (a, b >= 0; c any int32) with where each was first seen, for
 * the usual shape of episode keys: few (subject, scenario) pairs, each with a small range of
 * epochs. Each pair gets a row of bits over the epoch range (the whole set often fits in the CPU
 * cache, unlike a hash table of a million keys); keys are also listed in insertion order. On the
 * first duplicate, or when the bit table would be too large, it turns into a `TripleIndex` (the
 * answers are the same either way).
 */
export class DenseTriples {
  /** (a, b) -> pair id: open addressing over (a, b, id) slots, a = -1 empty. */
  private pairSlots = new Int32Array(3 << 10).fill(-1);
  private pairMask = (1 << 10) - 1;
  private pairs = 0;
  /** Bits: pair id * words + ((c - lo) >> 5). */
  private bits = new Uint32Array(0);
  private words = 0;
  private lo = 0;
  /** Keys in insertion order. */
  private ka = new Int32Array(1024);
  private kb = new Int32Array(1024);
  private kc = new Int32Array(1024);
  private kw = new Float64Array(1024);
  size = 0;
  private hash: TripleIndex | null = null;

  /** Largest bit table, in 32-bit words (64 MiB). */
  static MAX_WORDS = 1 << 24;

  add(a: number, b: number, c: number, where: number): number {
    if (this.hash !== null) return this.hash.add(a, b, c, where);
    const pair = this.pairId(a, b);
    let off = c - this.lo;
    if (this.words === 0 || off < 0 || off >= this.words * 32) {
      if (!this.relayout(c)) {
        this.toHash();
        return this.hash!.add(a, b, c, where);
      }
      off = c - this.lo;
    }
    let word = pair * this.words + (off >>> 5);
    if (word >= this.bits.length) {
      if (!this.fit(pair + 1)) {
        this.toHash();
        return this.hash!.add(a, b, c, where);
      }
      word = pair * this.words + (off >>> 5);
    }
    const bit = 1 << (off & 31);
    if ((this.bits[word]! & bit) !== 0) {
      this.toHash(); // a duplicate (rare: an error): answer it from the hash index
      return this.hash!.add(a, b, c, where);
    }
    this.bits[word]! |= bit;
    this.record(a, b, c, where);
    return -1;
  }

  /** Calls `fn` for every key, in insertion order. */
  forEach(fn: (a: number, b: number, c: number, where: number) => void): void {
    if (this.hash !== null) return this.hash.forEach(fn);
    for (let i = 0; i < this.size; i++) fn(this.ka[i]!, this.kb[i]!, this.kc[i]!, this.kw[i]!);
  }

  private record(a: number, b: number, c: number, where: number): void {
    const n = this.size;
    if (n === this.ka.length) {
      const grow = <T extends Int32Array | Float64Array>(x: T, y: T): T => (y.set(x), y);
      this.ka = grow(this.ka, new Int32Array(n * 2));
      this.kb = grow(this.kb, new Int32Array(n * 2));
      this.kc = grow(this.kc, new Int32Array(n * 2));
      this.kw = grow(this.kw, new Float64Array(n * 2));
    }
    this.ka[n] = a;
    this.kb[n] = b;
    this.kc[n] = c;
    this.kw[n] = where;
    this.size = n + 1;
  }

  private pairId(a: number, b: number): number {
    const slots = this.pairSlots;
    const mask = this.pairMask;
    let slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) >>> 0;
    slot = (slot ^ (slot >>> 15)) & mask;
    for (;;) {
      const k = slot * 3;
      const sa = slots[k]!;
      if (sa < 0) break;
      if (sa === a && slots[k + 1] === b) return slots[k + 2]!;
      slot = (slot + 1) & mask;
    }
    const id = this.pairs++;
    const k = slot * 3;
    slots[k] = a;
    slots[k + 1] = b;
    slots[k + 2] = id;
    if (this.pairs * 2 > mask) this.growPairs();
    return id;
  }

  private growPairs(): void {
    const old = this.pairSlots;
    const size = (this.pairMask + 1) * 2;
    const slots = new Int32Array(size * 3).fill(-1);
    const mask = size - 1;
    for (let k = 0; k < old.length; k += 3) {
      const a = old[k]!;
      if (a < 0) continue;
      const b = old[k + 1]!;
      let slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) >>> 0;
      slot = (slot ^ (slot >>> 15)) & mask;
      while (slots[slot * 3]! >= 0) slot = (slot + 1) & mask;
      slots[slot * 3] = a;
      slots[slot * 3 + 1] = b;
      slots[slot * 3 + 2] = old[k + 2]!;
    }
    this.pairSlots = slots;
    this.pairMask = mask;
  }

  /** Room for `pairs` pairs at the current width; false when too large. */
  private fit(pairs: number): boolean {
    let cap = Math.max(1024, this.bits.length / Math.max(1, this.words));
    while (cap < pairs) cap *= 2;
    if (cap * this.words > DenseTriples.MAX_WORDS) return false;
    const bits = new Uint32Array(cap * this.words);
    bits.set(this.bits);
    this.bits = bits;
    return true;
  }

  /** A new epoch range that includes `c` (at least doubled), bits rebuilt; false when too large. */
  private relayout(c: number): boolean {
    let lo: number;
    let hi: number;
    if (this.words === 0) {
      lo = c;
      hi = c + 32;
    } else {
      lo = this.lo;
      hi = this.lo + this.words * 32;
      const span = hi - lo;
      if (c < lo) lo = Math.min(c, lo - span);
      else hi = Math.max(c + 1, hi + span);
    }
    const words = Math.ceil((hi - lo) / 32);
    const cap = Math.max(1024, this.pairs);
    if (words * cap > DenseTriples.MAX_WORDS || !Number.isSafeInteger(lo) || lo < -2147483648) return false;
    const bits = new Uint32Array(cap * words);
    for (let i = 0; i < this.size; i++) {
      const pair = this.pairId(this.ka[i]!, this.kb[i]!);
      const off = this.kc[i]! - lo;
      bits[pair * words + (off >>> 5)]! |= 1 << (off & 31);
    }
    this.bits = bits;
    this.words = words;
    this.lo = lo;
    return true;
  }

  private toHash(): void {
    const hash = new TripleIndex();
    for (let i = 0; i < this.size; i++) hash.add(this.ka[i]!, this.kb[i]!, this.kc[i]!, this.kw[i]!);
    this.hash = hash;
    this.bits = new Uint32Array(0);
  }
}

/**
 * Derived episode keys `<subject>/<scenario>/<epoch>` (as strings, `[s, c, e].join('/')`), checked
 * for duplicates. Fast path: subjects and scenarios are taken as their dictionary codes in the
 * episodes' own text columns and (subject, scenario, epoch) triples are compared, which is the
 * same as comparing the joined strings as long as the join is one-to-one: that holds while no
 * subject or no scenario contains a '/' (epochs never do). When that stops holding (or a column
 * outgrows its dictionary) every key seen is moved to a string index and the rest are compared as
 * strings.
 */
export class EpisodeKeys {
  private triples: DenseTriples | null = new DenseTriples();
  private strings: KeyIndex | null = null;
  constructor(
    private readonly subjects: TextColumn,
    private readonly scenarios: TextColumn,
  ) {}

  /** True once keys are compared as strings (for tests). */
  get stringMode(): boolean {
    return this.strings !== null;
  }

  /** Adds a key; returns -1 when new, else the `where` (>= 0) of its first occurrence. */
  add(subject: string, scenario: string, epoch: number, where: number): number {
    if (this.triples !== null) {
      const s = this.subjects.code(subject);
      const c = this.scenarios.code(scenario);
      if (s >= 0 && c >= 0 && !(this.subjects.slash && this.scenarios.slash) && (epoch | 0) === epoch) {
        return this.triples.add(s, c, epoch, where);
      }
      this.toStrings();
    }
    return this.strings!.add([subject, scenario, epoch].join('/'), where);
  }

  private toStrings(): void {
    const strings = new KeyIndex();
    this.triples!.forEach((s, c, e, where) => {
      strings.add([this.subjects.valueOf(s), this.scenarios.valueOf(c), e].join('/'), where);
    });
    this.strings = strings;
    this.triples = null;
  }
}
