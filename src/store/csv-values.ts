/**
 * Cell conversion as SQL: one definition of how a CSV cell (VARCHAR, NULL when empty) becomes a
 * typed value, shared by `standoff ingest csv` and every `--input` file. Each conversion gives a
 * `value` expression and a `why` expression (NULL when the cell is fine, else a reason code);
 * `describeProblem` turns a reason and the cell's text into the message a user reads.
 *
 * DuckDB's own casts are not used alone: they round `3.5` to 4 for INTEGER and take `NaN`, `inf`,
 * `1_000` and `0x10`. Numbers here are decimal literals (`TRY_CAST` to DOUBLE, finite, no `_`);
 * integers are such numbers with an integer value in range; booleans, scores, enums, JSON and
 * timestamps are checked as documented in docs/ingest-csv.md.
 */
import { quoteLiteral } from './duckdb.ts';

export type ValueKind = 'text' | 'json' | 'enum' | 'int' | 'bigint' | 'num' | 'bool' | 'ts' | 'score';

export interface Conversion {
  /** SQL of the converted value (NULL when the cell is empty or bad; NaN for a bad score). */
  value: string;
  /** SQL giving NULL when the cell is acceptable, else a reason code (see `describeProblem`). */
  why: string;
  /**
   * A cheaper test of the same thing, given `v`, SQL naming the value already computed: true when
   * `why` is not NULL. (A value is NULL only for an empty or bad cell; a bad score is NaN.)
   */
  bad: (v: string) => string;
}

export interface ConversionOptions {
  /** An empty cell is a problem (`empty`). */
  required?: boolean;
  /** Allowed values of an enum. */
  options?: readonly string[];
}

/**
 * Spaces and tabs around a cell (numbers, booleans, enums, scores and timestamps may have them).
 * `trim` copies every string; most cells have nothing to trim, so it runs only on a cell that
 * starts or ends with a space or a tab (the same value; a tenth of the staging CPU at 1e7 rows).
 */
export const trimmed = (x: string) =>
  `(CASE WHEN prefix(${x}, ' ') OR prefix(${x}, chr(9)) OR suffix(${x}, ' ') OR suffix(${x}, chr(9)) THEN trim(${x}, ' ' || chr(9)) ELSE ${x} END)`;

const INT32: [number, number] = [-2147483648, 2147483647];
const SAFE: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

export const TRUE_TOKENS = ['true', 't', 'yes', 'y', '1', 'c', 'correct'] as const;
export const FALSE_TOKENS = ['false', 'f', 'no', 'n', '0', 'i', 'incorrect'] as const;

/** Built-in score tokens (compared lower-case, trimmed): value, or null for NOANSWER. */
export const SCORE_TOKENS: readonly (readonly [string, number | null])[] = [
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
];

/** The built-in tokens as spelled in lower and upper case, shortest first, upper case before lower. */
const EXACT_SCORE_TOKENS: readonly (readonly [string, number | null])[] = SCORE_TOKENS.flatMap(([k, v]) => [[k.toUpperCase(), v] as const, [k, v] as const]).sort(
  (a, b) => a[0].length - b[0].length,
);

const list = (xs: readonly string[]) => xs.map(quoteLiteral).join(', ');

/** A number's SQL: the DOUBLE of a decimal literal, NULL for anything else (NaN, inf, 1_000, hex, text). */
function number(x: string): { d: string; ok: string } {
  const d = `TRY_CAST(${x} AS DOUBLE)`;
  return { d, ok: `(isfinite(${d}) AND NOT contains(${x}, '_'))` };
}

/** Reason for a cell that is not a finite number: an overflowing literal (`1e999`) or not a number at all. */
const notNumber = (x: string, d: string) =>
  `CASE WHEN isinf(${d}) AND regexp_full_match(${trimmed(x)}, '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)[eE][+-]?[0-9]+') THEN 'notFinite' ELSE 'notNumber' END`;

/** The conversion of a cell `x` (SQL VARCHAR, NULL when empty) to `kind`. */
export function convertSql(kind: ValueKind, x: string, opts: ConversionOptions = {}): Conversion {
  const empty = opts.required ? `'empty'` : 'NULL';
  const bad = (v: string) => (opts.required ? `(${v} IS NULL)` : `(${v} IS NULL AND ${x} IS NOT NULL)`);
  switch (kind) {
    case 'text':
      return { value: x, why: opts.required ? `CASE WHEN ${x} IS NULL THEN 'empty' END` : 'NULL', bad: (v) => (opts.required ? `(${v} IS NULL)` : 'false') };
    case 'json':
      return { value: `CASE WHEN json_valid(${x}) THEN ${x} END`, why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN NOT json_valid(${x}) THEN 'json' END`, bad };
    case 'enum': {
      const t = trimmed(x);
      const options = list(opts.options ?? []);
      return {
        value: `CASE WHEN ${t} IN (${options}) THEN ${t} END`,
        why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN ${t} NOT IN (${options}) THEN 'enum' END`,
        bad,
      };
    }
    case 'num': {
      const { d, ok } = number(x);
      return { value: `CASE WHEN ${ok} THEN ${d} END`, why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN NOT coalesce(${ok}, false) THEN ${notNumber(x, d)} END`, bad };
    }
    case 'int':
    case 'bigint': {
      const [lo, hi] = kind === 'int' ? INT32 : SAFE;
      const type = kind === 'int' ? 'INTEGER' : 'BIGINT';
      const { d, ok } = number(x);
      const whole = `(${d} = trunc(${d}))`;
      const inRange = `(${d} BETWEEN ${lo} AND ${hi})`;
      return {
        value: `CASE WHEN ${ok} AND ${whole} AND ${inRange} THEN CAST(${d} AS ${type}) END`,
        why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN NOT coalesce(${ok}, false) THEN ${notNumber(x, d)} WHEN NOT ${whole} THEN 'notInteger' WHEN NOT ${inRange} THEN '${kind === 'int' ? 'int32Range' : 'safeRange'}' END`,
        bad,
      };
    }
    case 'bool': {
      const t = `lower(${trimmed(x)})`;
      return {
        value: `CASE WHEN ${t} IN (${list(TRUE_TOKENS)}) THEN true WHEN ${t} IN (${list(FALSE_TOKENS)}) THEN false END`,
        why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN ${t} NOT IN (${list([...TRUE_TOKENS, ...FALSE_TOKENS])}) THEN 'bool' END`,
        bad,
      };
    }
    case 'ts': {
      const t = trimmed(x);
      const iso = `regexp_full_match(${t}, '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})')`;
      const v = `timezone('UTC', TRY_CAST(${t} AS TIMESTAMPTZ))`;
      return {
        value: `CASE WHEN ${iso} THEN ${v} END`,
        why: `CASE WHEN ${x} IS NULL THEN ${empty} WHEN NOT ${iso} OR ${v} IS NULL THEN 'ts' END`,
        bad,
      };
    }
    case 'score': {
      const sc = scoreSql(x);
      return {
        value: sc.value,
        why: opts.required ? `CASE WHEN NOT ${sc.present} THEN 'empty' ELSE ${sc.why} END` : sc.why,
        bad: (v) => (opts.required ? `(isnan(${v}) OR NOT ${sc.present})` : `coalesce(isnan(${v}), false)`),
      };
    }
  }
}

/**
 * A score cell: `present` (a score row exists: the cell is not empty or blank), `value` (NULL for
 * NOANSWER: a present row whose value is NULL is NOANSWER; NaN for a bad cell), and `why`. `values` maps exact cell
 * text to a value (null = NOANSWER), looked up before the built-in tokens.
 */
export function scoreSql(x: string, values?: Record<string, number | null>): Conversion & { present: string } {
  // Tokens by list lookup: a many-branch CASE with NULL results is several times slower in DuckDB.
  // A bad cell's value is NaN (never written: the row is an error), so `bad` needs no second pass.
  const t = `lower(${trimmed(x)})`;
  const { d, ok } = number(x);
  const nums = (vs: readonly (number | null)[]) => `CAST([${vs.map((v) => (v === null ? 'NULL' : String(v))).join(', ')}] AS DOUBLE[])`;
  // The exact tokens and their upper case first (no trim, no lower: most cells are one of them),
  // shortest first (a lookup stops at its match: C/I/P/N in one to eight comparisons, not 13-23);
  // then any other spelling, at positions 25-36 of the values.
  const keys = SCORE_TOKENS.map(([k]) => k);
  const exactTokens = EXACT_SCORE_TOKENS;
  const exact = `list_position([${list(exactTokens.map(([k]) => k))}], ${x})`;
  const token = `coalesce(${exact}, ${exactTokens.length} + list_position([${list(keys)}], ${t}))`;
  const entries = Object.entries(values ?? {});
  const mapPos = `list_position([${list(entries.map(([k]) => k))}], ${x})`;
  const mapBranch = entries.length > 0 ? `WHEN ${mapPos} IS NOT NULL THEN ${nums(entries.map(([, v]) => v))}[${mapPos}] ` : '';
  const mapped = entries.length > 0 ? `${mapPos} IS NOT NULL` : 'false';
  return {
    present: `coalesce(${mapped} OR ${trimmed(x)} <> '', false)`,
    value: `CASE ${mapBranch}WHEN ${token} IS NOT NULL THEN ${nums([...exactTokens, ...SCORE_TOKENS].map(([, v]) => v))}[${token}] WHEN ${ok} THEN ${d} WHEN ${x} IS NULL OR ${trimmed(x)} = '' THEN NULL ELSE CAST('NaN' AS DOUBLE) END`,
    why: `CASE WHEN ${x} IS NULL OR ${mapped} OR ${token} IS NOT NULL OR ${trimmed(x)} = '' THEN NULL WHEN NOT coalesce(${ok}, false) THEN ${notNumber(x, d)} END`,
    bad: (v) => `coalesce(isnan(${v}), false)`,
  };
}

/** A value quoted for a message (long values shortened). */
export function show(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}...` : raw);
}

/** The message for a reason code from `convertSql`/`scoreSql`, and its problem code. */
export function describeProblem(kind: ValueKind, reason: string, raw: string | null, opts: ConversionOptions = {}): { code: string; message: string } {
  const got = show(raw ?? '');
  switch (reason) {
    case 'empty':
      return { code: 'emptyValue', message: 'empty value in a required column' };
    case 'notFinite':
      return { code: 'badType', message: `${got} is not a finite number` };
    case 'notNumber':
      if (kind === 'score') return { code: 'badType', message: `expected a score (a number, C/I/P/N, correct/incorrect/NOANSWER, true/false), got ${got}` };
      return { code: 'badType', message: `expected ${kind === 'num' ? 'a number' : 'an integer'}, got ${got}` };
    case 'notInteger':
      return { code: 'badType', message: `expected an integer, got ${got}` };
    case 'int32Range':
      return { code: 'badType', message: `integer ${got} is out of range (${INT32[0]} to ${INT32[1]})` };
    case 'safeRange':
      return { code: 'badType', message: `integer ${got} is out of range (${SAFE[0]} to ${SAFE[1]})` };
    case 'bool':
      return { code: 'badType', message: `expected a boolean (true/false, yes/no, 1/0, C/I), got ${got}` };
    case 'enum':
      return { code: 'badValue', message: `expected one of ${(opts.options ?? []).join(', ')}, got ${got}` };
    case 'json':
      return { code: 'badType', message: `not valid JSON: ${got}` };
    case 'ts':
      return { code: 'badType', message: `expected an ISO-8601 date-time with Z or an offset, got ${got}` };
    default:
      return { code: 'badValue', message: `${reason}: ${got}` };
  }
}
