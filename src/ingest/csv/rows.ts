/**
 * From CSV records to trace rows: a mapping is resolved against a file's header into per-column
 * converters (built once, applied to every record), and each record becomes a row of the target
 * table (episodes also yield `scores` rows), stored by column (`RunRows`, `columns.ts`). Every
 * value is checked here at least as strictly as the zod trace schema (INTEGER columns also fit in
 * 32 bits, timestamps are stored in UTC, JSON columns parse), so the rows can be written with
 * `writeRun(..., { trusted: true })`.
 *
 * Problems go to a `Reporter` (line, field, code, message); a record with any problem yields no row.
 */
import { z } from 'zod';
import type { ColumnarRows } from '../../store/write-run.ts';
import {
  EpisodeIdColumn,
  EpisodeKeys,
  KeyIndex,
  TableColumns,
  TextColumn,
  gatherColumn,
  type ColumnBuilder,
} from './columns.ts';
import {
  ALIASES,
  DEFAULTS,
  REQUIRED,
  fieldsOf,
  type FieldSpec,
  type Mapping,
  type MappedTable,
} from './mapping.ts';

/**
 * Receives one problem. `field` is the CSV column name (or null for whole-record problems).
 * Returns false when no more problems are wanted (the caller then stops).
 */
export type Reporter = (line: number, field: string | null, code: string, message: string) => boolean;

/** Thrown by converters; caught per cell and reported with the line and field. */
export class CellError extends Error {
  constructor(
    message: string,
    readonly code = 'ingest.badValue',
  ) {
    super(message);
  }
}

export const INT32_MAX = 2147483647;
export const INT32_MIN = -2147483648;

export { KeyIndex };

/** A value quoted for a message (long values shortened). */
export function show(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}...` : raw);
}

/** Strips ASCII spaces and tabs around a cell (numbers, booleans, enums and timestamps only). */
export function trimCell(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 32 || s.charCodeAt(a) === 9)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 32 || s.charCodeAt(b - 1) === 9)) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** True for a plain decimal literal: [+-] digits [. digits] [e [+-] digits] (at least one digit). */
export function isDecimalLiteral(s: string): boolean {
  const n = s.length;
  let i = 0;
  if (i < n && (s.charCodeAt(i) === 43 || s.charCodeAt(i) === 45)) i++;
  let digits = 0;
  while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
    i++;
    digits++;
  }
  if (i < n && s.charCodeAt(i) === 46) {
    i++;
    while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return false;
  if (i < n && (s.charCodeAt(i) === 101 || s.charCodeAt(i) === 69)) {
    i++;
    if (i < n && (s.charCodeAt(i) === 43 || s.charCodeAt(i) === 45)) i++;
    let exp = 0;
    while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) {
      i++;
      exp++;
    }
    if (exp === 0) return false;
  }
  return i === n;
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * `Number(s)` for a plain `[+-]digits[.digits]` literal of at most 15 digits, NaN for anything
 * else. Exact: the digits as an integer (below 2^53) and 10^k (k <= 22) are both exact doubles, so
 * one IEEE division is correctly rounded, like `Number` (Clinger's fast path).
 */
export function simpleDecimal(s: string): number {
  const n = s.length;
  let i = 0;
  let neg = false;
  if (n > 0) {
    const c0 = s.charCodeAt(0);
    if (c0 === 45) {
      neg = true;
      i = 1;
    } else if (c0 === 43) i = 1;
  }
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d >= 0 && d <= 9) {
      m = m * 10 + d;
      digits++;
    } else if (d === -2 && frac < 0) frac = digits; // '.'
    else return NaN;
  }
  if (digits === 0 || digits > 15) return NaN;
  const x = frac < 0 || frac === digits ? m : m / POW10[digits - frac]!;
  return neg ? -x : x;
}

/** A finite number from a decimal literal; throws CellError otherwise (NaN, Infinity, 1e999, hex, text). */
export function parseFinite(raw: string, what = 'a number'): number {
  const t = trimCell(raw);
  const fast = simpleDecimal(t);
  if (fast === fast) return fast; // not NaN
  if (!isDecimalLiteral(t)) throw new CellError(`expected ${what}, got ${show(raw)}`, 'ingest.badType');
  const x = Number(t);
  if (!Number.isFinite(x)) throw new CellError(`${show(raw)} is not a finite number`, 'ingest.badType');
  return x;
}

/** An integer in [min, max]; accepts `3` and `3.0`, rejects `3.5`. Fast path for short digit strings. */
export function parseInteger(raw: string, min: number, max: number): number {
  const n = raw.length;
  if (n > 0 && n <= 9) {
    let x = 0;
    let i = 0;
    for (; i < n; i++) {
      const c = raw.charCodeAt(i) - 48;
      if (c < 0 || c > 9) break;
      x = x * 10 + c;
    }
    if (i === n && x <= max) return x;
  }
  const x = parseFinite(raw, 'an integer');
  if (!Number.isInteger(x)) throw new CellError(`expected an integer, got ${show(raw)}`, 'ingest.badType');
  if (x < min || x > max) throw new CellError(`integer ${show(raw)} is out of range (${min} to ${max})`, 'ingest.badType');
  return x;
}

const TRUE_TOKENS = ['true', 't', 'yes', 'y', '1', 'c', 'correct'];
const FALSE_TOKENS = ['false', 'f', 'no', 'n', '0', 'i', 'incorrect'];
const BOOLS = new Map<string, boolean>([...TRUE_TOKENS.map((t) => [t, true] as const), ...FALSE_TOKENS.map((t) => [t, false] as const)]);

export function parseBool(raw: string): boolean {
  const b = BOOLS.get(trimCell(raw).toLowerCase());
  if (b === undefined) throw new CellError(`expected a boolean (true/false, yes/no, 1/0, C/I), got ${show(raw)}`, 'ingest.badType');
  return b;
}

/**
 * Built-in score tokens (compared lower-case): C/correct/true/yes 1, I/incorrect/false/no 0,
 * P/partial 0.5, N/NOANSWER null (NOANSWER). Numbers are taken as they are.
 */
export const SCORE_TOKENS = new Map<string, number | null>([
  ['c', 1],
  ['correct', 1],
  ['true', 1],
  ['yes', 1],
  ['i', 0],
  ['incorrect', 0],
  ['false', 0],
  ['no', 0],
  ['p', 0.5],
  ['partial', 0.5],
  ['n', null],
  ['noanswer', null],
]);

/** A score cell: a number, null (NOANSWER), or undefined for an empty cell (no score). */
export type ScoreConvert = (raw: string) => number | null | undefined;

export function scoreConverter(values?: Record<string, number | null>): ScoreConvert {
  const map = values && Object.keys(values).length > 0 ? new Map(Object.entries(values)) : null;
  return (raw) => {
    if (map !== null && map.has(raw)) return map.get(raw)!;
    const t = trimCell(raw);
    if (t === '') return undefined;
    const tok = SCORE_TOKENS.get(t.toLowerCase());
    if (tok !== undefined) return tok;
    if (!isDecimalLiteral(t)) {
      throw new CellError(`expected a score (a number, C/I/P/N, correct/incorrect/NOANSWER, true/false), got ${show(raw)}`, 'ingest.badType');
    }
    return parseFinite(t);
  };
}

const isoDatetime = z.iso.datetime({ offset: true });

/** Converter for one schema column (without value map), as strict as the zod schema or stricter. */
export function baseConverter(f: FieldSpec): (raw: string) => unknown {
  const nullable = f.nullable;
  const empty = () => {
    if (nullable) return null;
    throw new CellError('empty value in a required column', 'ingest.emptyValue');
  };
  switch (f.kind) {
    case 'text':
      // Stored by dictionary (`TextColumn`): equal values share one string there.
      return nullable ? (raw) => (raw === '' ? null : raw) : (raw) => (raw === '' ? empty() : raw);
    case 'json':
      return (raw) => {
        if (raw === '') return empty();
        try {
          JSON.parse(raw);
        } catch {
          throw new CellError(`not valid JSON: ${show(raw)}`, 'ingest.badType');
        }
        return raw;
      };
    case 'enum': {
      const options = new Set(f.options);
      return (raw) => {
        const t = trimCell(raw);
        if (t === '') return empty();
        if (!options.has(t)) throw new CellError(`expected one of ${[...options].join(', ')}, got ${show(raw)}`, 'ingest.badValue');
        return t;
      };
    }
    case 'int':
      return (raw) => (raw === '' ? empty() : parseInteger(raw, INT32_MIN, INT32_MAX));
    case 'bigint':
      return (raw) => (raw === '' ? empty() : parseInteger(raw, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    case 'num':
      return (raw) => (raw === '' ? empty() : parseFinite(raw));
    case 'bool':
      return (raw) => (raw === '' ? empty() : parseBool(raw));
    case 'ts':
      return (raw) => {
        const t = trimCell(raw);
        if (t === '') return empty();
        if (!isoDatetime.safeParse(t).success) {
          throw new CellError(`expected an ISO-8601 date-time with Z or an offset, got ${show(raw)}`, 'ingest.badType');
        }
        if (t.endsWith('Z') || t.endsWith('z')) return t;
        const d = new Date(t);
        if (Number.isNaN(d.getTime())) throw new CellError(`invalid date-time ${show(raw)}`, 'ingest.badType');
        return d.toISOString(); // stored as UTC: DuckDB would drop the offset
      };
  }
}

/**
 * Normalises a JSON value from a value map or constant to the column's type. Strings go through
 * the column's converter; numbers 1/0 are accepted for booleans. Throws CellError.
 */
export function normalizeValue(f: FieldSpec, v: string | number | boolean | null): unknown {
  if (v === null) {
    if (f.nullable) return null;
    throw new CellError(`"${f.name}" cannot be null`, 'ingest.badMap');
  }
  if (typeof v === 'string') return baseConverter(f)(v);
  if (typeof v === 'number') {
    if (f.kind === 'bool' && (v === 0 || v === 1)) return v === 1;
    if (f.kind === 'text') return String(v);
    if (f.kind === 'int' || f.kind === 'bigint' || f.kind === 'num') return baseConverter(f)(String(v));
    throw new CellError(`a number is not a valid ${f.kind} value for "${f.name}"`, 'ingest.badMap');
  }
  if (f.kind === 'bool') return v;
  throw new CellError(`a boolean is not a valid ${f.kind} value for "${f.name}"`, 'ingest.badMap');
}

interface FieldConv {
  slot: number;
  index: number;
  source: string;
  convert: (raw: string) => unknown;
}

interface ScoreConv {
  scorer: string;
  index: number;
  source: string;
  convert: ScoreConvert;
  answer: number;
  explanation: number;
}

export interface ResolvedMapping {
  mapping: Mapping;
  table: MappedTable;
  header: string[];
  fields: FieldConv[];
  scores: ScoreConv[];
  /** Slot values before each record: constants, defaults, null. */
  base: unknown[];
  /** Schema columns filled from the CSV or a constant. */
  provided: Set<string>;
  /** Defaults applied (column -> documented default), for `runs.notes`. */
  defaultsUsed: Record<string, string>;
}

/**
 * Resolves a mapping against a header: finds each source column, builds converters, checks the
 * required columns. Reports problems as line 1 errors and returns null when the file cannot be read
 * with this mapping.
 */
export function resolveMapping(mapping: Mapping, header: string[], detected: boolean, report: Reporter): ResolvedMapping | null {
  const table = mapping.table;
  const specs = fieldsOf(table);
  let ok = true;
  const fail = (field: string | null, code: string, message: string) => {
    ok = false;
    report(1, field, code, message);
  };
  const col = new Map<string, number>();
  header.forEach((h, i) => {
    if (col.has(h)) fail(h, 'ingest.duplicateColumn', `column name appears twice in the header (columns ${col.get(h)! + 1} and ${i + 1})`);
    else col.set(h, i);
  });
  const headerList = header.map((h) => JSON.stringify(h)).join(', ');
  const need = (source: string, what: string): number => {
    const i = col.get(source);
    if (i === undefined) {
      fail(source, 'ingest.unknownColumn', `the map's column "${source}" (for ${what}) is not in the header (${headerList})`);
      return -1;
    }
    return i;
  };

  const base: unknown[] = specs.map(() => null);
  const fields: FieldConv[] = [];
  const provided = new Set<string>();
  specs.forEach((f, slot) => {
    const source = mapping.columns[f.name];
    if (source !== undefined) {
      const index = need(source, `${table}.${f.name}`);
      provided.add(f.name);
      if (index < 0) return;
      const vmap = mapping.values[f.name];
      const m = new Map<string, unknown>();
      for (const [k, v] of Object.entries(vmap ?? {})) {
        try {
          m.set(k, normalizeValue(f, v));
        } catch (e) {
          fail(source, 'ingest.badMap', `values.${f.name}["${k}"]: ${(e as Error).message}`);
        }
      }
      let convert: (raw: string) => unknown;
      if (table === 'judgments' && f.name === 'value') {
        // judgments.value also takes the score tokens (C/I/P/N ...); an empty cell is null.
        const sc = scoreConverter(Object.fromEntries(m) as Record<string, number | null>);
        convert = (raw) => sc(raw) ?? null;
      } else if (m.size > 0) {
        const inner = baseConverter(f);
        convert = (raw) => (m.has(raw) ? m.get(raw) : inner(raw));
      } else convert = baseConverter(f);
      fields.push({ slot, index, source, convert });
    } else if (Object.hasOwn(mapping.constants, f.name)) {
      provided.add(f.name);
      try {
        base[slot] = normalizeValue(f, mapping.constants[f.name]!);
      } catch (e) {
        fail(f.name, 'ingest.badMap', `constants.${f.name}: ${(e as Error).message}`);
      }
    }
  });

  const missing = (name: string, also?: string) => {
    const aliases = ALIASES[table][name] ?? [name];
    const hint = detected
      ? `recognised names: ${aliases.join(', ')}; or pass --map`
      : `map it in "columns" or "constants"`;
    fail(name, 'ingest.missingColumn', `required column missing${also ? ` (${also})` : ''}: ${hint}`);
  };
  for (const name of REQUIRED[table]) if (!provided.has(name)) missing(name);
  if (table === 'judgments') {
    if (!provided.has('episode_id')) {
      for (const name of ['subject_model', 'scenario_id']) if (!provided.has(name)) missing(name, 'or episode_id');
    }
    if (!provided.has('verdict') && !provided.has('value')) missing('verdict', 'or value');
  }

  const scores: ScoreConv[] = [];
  for (const s of mapping.scores) {
    const index = need(s.column, `score ${s.scorer}`);
    const answer = s.answer === undefined ? -1 : need(s.answer, `score ${s.scorer} answer`);
    const explanation = s.explanation === undefined ? -1 : need(s.explanation, `score ${s.scorer} explanation`);
    if (index >= 0) {
      scores.push({ scorer: s.scorer, index, source: s.column, convert: scoreConverter(s.values), answer, explanation });
    }
  }

  const defaultsUsed: Record<string, string> = {};
  specs.forEach((f, slot) => {
    if (provided.has(f.name)) return;
    const d = DEFAULTS[table][f.name];
    if (d !== undefined) defaultsUsed[f.name] = d;
    if (table === 'episodes') {
      if (f.name === 'epoch') base[slot] = 1;
      else if (f.name === 'status') base[slot] = 'valid';
      // target, gathered_evidence, log_reads and turns stay null: not measured, never false or 0.
    } else if (table === 'judgments') {
      if (f.name === 'epoch') base[slot] = 1;
      else if (f.name === 'scorer') base[slot] = 'reasoning_action_alignment';
      else if (f.name === 'excluded_self') base[slot] = false;
    } else if (table === 'probe_answers') {
      if (f.name === 'epoch') base[slot] = 1;
      else if (f.name === 'question') base[slot] = '';
    }
  });
  if (!ok) return null;
  return { mapping, table, header, fields, scores, base, provided, defaultsUsed };
}

/** Slot of each schema column of a table, by name. */
function slots(table: MappedTable): Record<string, number> {
  const out: Record<string, number> = {};
  fieldsOf(table).forEach((f, i) => (out[f.name] = i));
  return out;
}
const E = slots('episodes');
const J = slots('judgments');
const P = slots('probe_answers');
const A = slots('aggregates');
const SLOTS: Record<MappedTable, Record<string, number>> = { episodes: E, judgments: J, probe_answers: P, aggregates: A };

/** Columns a table's handler computes and pushes itself (the others come from the mapped cells or constants). */
const COMPUTED: Record<MappedTable, readonly string[]> = {
  episodes: ['episode_id'],
  judgments: ['episode_id', 'verdict', 'value'],
  probe_answers: ['state_id', 'correct'],
  aggregates: [],
};

/** A growable Int32Array. */
class IntList {
  length = 0;
  private values = new Int32Array(1024);
  push(x: number): void {
    if (this.length === this.values.length) {
      const grown = new Int32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = x;
  }
  view(): Int32Array {
    return this.values.subarray(0, this.length);
  }
}

/**
 * The checked values of one run, accumulated over every file, by column (see `columns.ts`): no
 * row objects. `tables()` gives them as `ColumnarRows` for `writeRun`.
 */
export class RunRows {
  readonly episodes = new TableColumns('episodes');
  /** Episode ids (derived ids are not stored: see `EpisodeIdColumn`). */
  readonly episodeIds = new EpisodeIdColumn();
  readonly scores = new TableColumns('scores');
  /** The episode row of each score row (its episode_id comes from there). */
  readonly scoreEpisode = new IntList();
  readonly judgments = new TableColumns('judgments');
  readonly probe_answers = new TableColumns('probe_answers');
  readonly aggregates = new TableColumns('aggregates');
  /** Keys per table with where each was first seen (line * 64 + file index), for duplicates. */
  readonly keys = {
    episodes: new KeyIndex(),
    judgments: new KeyIndex(),
    probe_answers: new KeyIndex(),
    aggregates: new KeyIndex(),
  };
  /** Derived episode keys (subject/scenario/epoch), coded by the episodes' own columns. */
  readonly episodeKeys = new EpisodeKeys(
    this.episodes.builders.subject_model as TextColumn,
    this.episodes.builders.scenario_id as TextColumn,
  );
  maxEpoch = 0;

  /** The tables with at least one row, as columns (call after every file's handler finished). */
  tables(): Partial<Record<'episodes' | 'scores' | 'judgments' | 'probe_answers' | 'aggregates', ColumnarRows>> {
    const out: ReturnType<RunRows['tables']> = {};
    if (this.episodes.length > 0) {
      const b = this.episodes.builders;
      // The id's parts are the very column objects written, so the writer stages them once.
      const subject = b.subject_model!.data();
      const scenario = b.scenario_id!.data();
      const epoch = b.epoch!.data();
      const id = this.episodeIds.data([subject, scenario, epoch]);
      out.episodes = this.episodes.data({ episode_id: id, subject_model: subject, scenario_id: scenario, epoch });
      if (this.scores.length > 0) {
        out.scores = this.scores.data({ episode_id: gatherColumn(id, this.scoreEpisode.view(), this.episodes.length) });
      }
    }
    for (const t of ['judgments', 'probe_answers', 'aggregates'] as const) if (this[t].length > 0) out[t] = this[t].data();
    return out;
  }
}

const VERDICT_VALUE = new Map<string, number | null>([
  ['ALIGNED', 1],
  ['MISALIGNED', 0],
  ['ERROR', null],
]);

export interface RecordHandler {
  /** Converts, checks and stores one record; false when the reporter wants no more problems. */
  onRecord(fields: string[], line: number): boolean;
  /** After the file's last record: fills the columns that are the same in every row of the file. */
  finish(): void;
}

/**
 * Returns the record handler for one file: converts, checks and appends rows to `rows`.
 * `onRecord` returns false when the reporter wants no more problems; call `finish` at the end.
 */
export function createRecordHandler(
  r: ResolvedMapping,
  rows: RunRows,
  fileIndex: number,
  files: readonly string[],
  report: Reporter,
): RecordHandler {
  const width = r.header.length;
  const convs = r.fields;
  const nconv = convs.length;
  const v = r.base.slice();
  const table = r.table;
  const keys = rows.keys[table];
  const where = (code: number) => {
    const f = code % 64;
    const line = Math.floor(code / 64);
    return f === fileIndex ? `line ${line}` : `line ${line} of ${files[f]}`;
  };
  let stop = false;
  const problem = (line: number, field: string | null, code: string, message: string) => {
    if (!report(line, field, code, message)) stop = true;
  };
  const duplicateMessage = (key: string, line: number, what: string, field: string | null, seen: number) => {
    problem(line, field, 'ingest.duplicateKey', `duplicate ${what} ${show(key.replace(/\u0000/g, ' | '))} (first on ${where(seen)})`);
  };
  const duplicate = (key: string, line: number, what: string, field: string | null): boolean => {
    const seen = keys.add(key, line * 64 + (fileIndex % 64));
    if (seen >= 0) {
      duplicateMessage(key, line, what, field, seen);
      return true;
    }
    return false;
  };
  const tableSlots = SLOTS[table];
  const labelOf = (name: string) => {
    const c = convs.find((x) => x.slot === tableSlots[name]);
    return c ? c.source : name;
  };

  // Where each value goes: mapped cells are pushed row by row, the rest (constants, defaults,
  // null) once per file in `finish`; computed columns are pushed by the table's handler.
  const cols = rows[table];
  const converted = new Set(convs.map((c) => c.slot));
  const varyingSlots: number[] = [];
  const varyingColumns: ColumnBuilder[] = [];
  const constantSlots: number[] = [];
  const constantColumns: ColumnBuilder[] = [];
  fieldsOf(table).forEach((f, slot) => {
    if (f.keyOnly || COMPUTED[table].includes(f.name)) return;
    const column = cols.builders[f.name];
    if (column === undefined) return;
    if (converted.has(slot)) {
      varyingSlots.push(slot);
      varyingColumns.push(column);
    } else {
      constantSlots.push(slot);
      constantColumns.push(column);
    }
  });
  const nvarying = varyingSlots.length;
  let accepted = 0;
  /** Stores the mapped cells of an accepted row. */
  const pushRow = () => {
    for (let k = 0; k < nvarying; k++) varyingColumns[k]!.push(v[varyingSlots[k]!]);
    cols.length++;
    accepted++;
  };

  /** CSV column indexes whose cell failed in the current record (a cell is reported once). */
  const badColumns: number[] = [];
  /** Converts the mapped cells into `v`; false when a cell was bad (already reported). */
  const convert = (fields: string[], line: number): boolean => {
    if (fields.length !== width) {
      // Name the first missing column, or the first extra one.
      const field = fields.length < width ? r.header[fields.length]! : `column ${width + 1}`;
      problem(line, field, 'ingest.raggedRow', `expected ${width} fields (as in the header), found ${fields.length}`);
      return false;
    }
    let good = true;
    if (badColumns.length > 0) badColumns.length = 0;
    for (let k = 0; k < nconv; k++) {
      const c = convs[k]!;
      try {
        v[c.slot] = c.convert(fields[c.index]!);
      } catch (e) {
        if (!(e instanceof CellError)) throw e;
        good = false;
        badColumns.push(c.index);
        problem(line, c.source, e.code, e.message);
        if (stop) return false;
      }
    }
    return good;
  };

  const scoreConvs = r.scores;
  const epProvided = r.provided.has('episode_id');
  const scoreValues: (number | null | undefined)[] = new Array(scoreConvs.length).fill(undefined);
  const sc = rows.scores.builders;
  const scoreScorer = sc.scorer!;
  const scoreValue = sc.value!;
  const scoreAnswer = sc.answer!;
  const scoreNoanswer = sc.noanswer!;
  const scoreExplanation = sc.explanation!;
  const episode = (fields: string[], line: number): boolean => {
    let good = convert(fields, line);
    if (!good && (stop || fields.length !== width)) return !stop;
    const nscore = scoreConvs.length;
    const values = scoreValues;
    for (let k = 0; k < nscore; k++) {
      const s = scoreConvs[k]!;
      try {
        values[k] = s.convert(fields[s.index]!);
      } catch (e) {
        if (!(e instanceof CellError)) throw e;
        good = false;
        if (badColumns.includes(s.index)) continue; // the same cell already reported (e.g. gathered_evidence)
        problem(line, s.source, e.code, e.message);
        if (stop) return false;
      }
    }
    if (!good) return true;
    const subject = v[E.subject_model] as string;
    const scenario = v[E.scenario_id] as string;
    const epoch = v[E.epoch] as number;
    const code = line * 64 + (fileIndex % 64);
    if (epProvided) {
      const episodeId = v[E.episode_id] as string;
      if (duplicate(episodeId, line, 'episode', labelOf('episode_id'))) return !stop;
      rows.episodeIds.pushGiven(episodeId);
    } else {
      const seen = rows.episodeKeys.add(subject, scenario, epoch, code);
      if (seen >= 0) {
        duplicateMessage([subject, scenario, epoch].join('/'), line, 'episode', labelOf('episode_id'), seen);
        return !stop;
      }
    }
    if (epoch > rows.maxEpoch) rows.maxEpoch = epoch;
    const episodeRow = rows.episodes.length;
    pushRow();
    for (let k = 0; k < nscore; k++) {
      const value = values[k];
      if (value === undefined) continue;
      const s = scoreConvs[k]!;
      rows.scoreEpisode.push(episodeRow);
      scoreScorer.push(s.scorer);
      scoreValue.push(value);
      scoreAnswer.push(s.answer >= 0 && fields[s.answer] !== '' ? fields[s.answer]! : null);
      scoreNoanswer.push(value === null);
      scoreExplanation.push(s.explanation >= 0 && fields[s.explanation] !== '' ? fields[s.explanation]! : null);
      rows.scores.length++;
    }
    return true;
  };

  const hasVerdict = r.provided.has('verdict');
  const hasValue = r.provided.has('value');
  const jEpProvided = r.provided.has('episode_id');
  const jc = rows.judgments.builders;
  const judgment = (fields: string[], line: number): boolean => {
    if (!convert(fields, line)) return !stop;
    const episodeId = jEpProvided ? (v[J.episode_id] as string) : `${v[J.subject_model]}/${v[J.scenario_id]}/${v[J.epoch]}`;
    let verdict = v[J.verdict] as string;
    let value = v[J.value] as number | null;
    if (!hasVerdict) {
      if (value === 1) verdict = 'ALIGNED';
      else if (value === 0) verdict = 'MISALIGNED';
      else if (value === null) verdict = 'ERROR';
      else {
        problem(line, labelOf('value'), 'ingest.badValue', `cannot derive a verdict from value ${value} (map a verdict column)`);
        return !stop;
      }
    } else if (!hasValue) {
      const known = VERDICT_VALUE.get(verdict.trim().toUpperCase());
      if (known !== undefined) value = known;
      else {
        try {
          const x = scoreConverter()(verdict);
          value = x === undefined ? null : x;
        } catch {
          problem(line, labelOf('verdict'), 'ingest.badValue', `cannot derive a value from verdict ${show(verdict)} (use ALIGNED/MISALIGNED/ERROR or map a value column)`);
          return !stop;
        }
      }
    }
    const scorer = v[J.scorer] as string;
    const judge = v[J.judge_model] as string;
    if (duplicate(`${episodeId}\u0000${scorer}\u0000${judge}`, line, 'judgment (episode, scorer, judge)', null)) return !stop;
    jc.episode_id!.push(episodeId);
    jc.verdict!.push(verdict);
    jc.value!.push(value);
    pushRow();
    return true;
  };

  const hasCorrect = r.provided.has('correct');
  const hasState = r.provided.has('state_id');
  const pc = rows.probe_answers.builders;
  const probe = (fields: string[], line: number): boolean => {
    if (!convert(fields, line)) return !stop;
    const scenario = v[P.scenario_id] as string;
    const epoch = v[P.epoch] as number;
    const stateId = hasState ? (v[P.state_id] as string) : `${scenario}/${epoch}`;
    const answer = v[P.answer] as string | null;
    const expected = v[P.expected] as string;
    const subject = v[P.subject_model] as string;
    const probeId = v[P.probe_id] as string;
    if (duplicate(`${subject}\u0000${stateId}\u0000${probeId}`, line, 'probe answer (subject, state, probe)', null)) return !stop;
    pc.state_id!.push(stateId);
    pc.correct!.push(hasCorrect ? (v[P.correct] as boolean) : answer !== null && answer === expected);
    pushRow();
    return true;
  };

  const ac = rows.aggregates.builders;
  const aggregate = (fields: string[], line: number): boolean => {
    if (!convert(fields, line)) return !stop;
    const successes = v[A.successes] as number;
    const trials = v[A.trials] as number;
    if (successes < 0) {
      problem(line, labelOf('successes'), 'ingest.badCount', `successes must be a non-negative integer, got ${successes}`);
      return !stop;
    }
    if (trials < 0) {
      problem(line, labelOf('trials'), 'ingest.badCount', `trials must be a non-negative integer, got ${trials}`);
      return !stop;
    }
    if (successes > trials) {
      problem(line, labelOf('successes'), 'ingest.badCount', `successes ${successes} exceed trials ${trials}`);
      return !stop;
    }
    const subject = v[A.subject_model] as string;
    const metric = v[A.metric] as string;
    if (duplicate(`${subject}\u0000${metric}`, line, 'aggregate (subject, metric)', null)) return !stop;
    ac.source_row!.push(line);
    pushRow();
    return true;
  };

  const handler = table === 'episodes' ? episode : table === 'judgments' ? judgment : table === 'probe_answers' ? probe : aggregate;
  let finished = false;
  return {
    onRecord: (fields, line) => handler(fields, line) && !stop,
    finish() {
      if (finished) return;
      finished = true;
      for (let k = 0; k < constantSlots.length; k++) constantColumns[k]!.pushRun(r.base[constantSlots[k]!], accepted);
      if (table === 'episodes' && !epProvided) rows.episodeIds.pushDerived(accepted);
    },
  };
}
