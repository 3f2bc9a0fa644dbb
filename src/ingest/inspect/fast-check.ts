/**
 * Cheaper checks for the common shape, in front of the zod schemas (ingest inspect's hot path):
 * {@link sampleLooksValid} for a sample's mapped fields (`inspectSampleSchema`) and
 * {@link rowChecker} for the rows mapped from it (the table schemas of `src/schema/tables.ts`).
 *
 * Each check is at least as strict as its zod schema: when it says yes, zod would have said yes
 * and the value it returns reads the same in every field the mapping uses (zod's copy only drops
 * keys the mapping never reads); when it says no, or is unsure, the caller runs zod, whose first
 * issue stays the one-line error. So the ingest accepts and refuses exactly what it did, and
 * writes the same values. `useFastChecks(false)` turns them off (tests compare both paths).
 */
import type { z } from 'zod';
import { TABLES, type TableName } from '../../schema/tables.ts';

let enabled = true;

/** Turns the fast paths on or off (default on); returns the previous setting. */
export function useFastChecks(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

export const fastChecksEnabled = (): boolean => enabled;

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A record zod copies key by key: a `__proto__` key (own, from JSON.parse) would not survive the copy, so such records go to zod. */
const plainRec = (v: unknown): v is Rec => isRec(v) && !Object.prototype.hasOwnProperty.call(v, '__proto__');
const nullish = (v: unknown): v is null | undefined => v === null || v === undefined;
const nstr = (v: unknown): boolean => v === null || v === undefined || typeof v === 'string';
const finite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function contentOk(c: unknown): boolean {
  if (nullish(c) || typeof c === 'string') return true;
  if (!Array.isArray(c)) return false;
  for (let i = 0; i < c.length; i++) {
    const p = c[i];
    if (!isRec(p) || typeof p.type !== 'string') return false;
  }
  return true;
}

function toolCallsOk(calls: unknown): boolean {
  if (nullish(calls)) return true;
  if (!Array.isArray(calls)) return false;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    if (!isRec(c) || !nstr(c.id) || typeof c.function !== 'string') return false;
  }
  return true;
}

function messageOk(m: unknown): boolean {
  if (!isRec(m) || typeof m.role !== 'string' || !ROLES.has(m.role)) return false;
  if (!contentOk(m.content) || !nstr(m.reasoning) || !toolCallsOk(m.tool_calls) || !nstr(m.function)) return false;
  const id = m.tool_call_id;
  if (!nstr(id)) {
    if (!Array.isArray(id)) return false;
    for (let i = 0; i < id.length; i++) if (typeof id[i] !== 'string') return false;
  }
  const e = m.error;
  return nullish(e) || (isRec(e) && nstr(e.type) && nstr(e.message));
}

function recordOf(v: unknown, each: (x: unknown) => boolean): boolean {
  if (nullish(v)) return true;
  if (!plainRec(v)) return false;
  for (const k in v) if (!each(v[k])) return false;
  return true;
}

const scoreOk = (s: unknown): boolean => isRec(s);
const usageOk = (u: unknown): boolean => isRec(u) && (nullish(u.input_tokens) || finite(u.input_tokens)) && (nullish(u.output_tokens) || finite(u.output_tokens));

/**
 * True when `raw` (a sample's mapped fields) surely passes `inspectSampleSchema` and can be used as
 * it is; false sends it to zod.
 */
export function sampleLooksValid(raw: Rec): boolean {
  if (!enabled) return false;
  const id = raw.id;
  if (!(Number.isSafeInteger(id) || (typeof id === 'string' && id.length > 0))) return false;
  if (!Number.isSafeInteger(raw.epoch) || (raw.epoch as number) < 1) return false;
  const target = raw.target;
  if (!nstr(target)) {
    if (!Array.isArray(target)) return false;
    for (let i = 0; i < target.length; i++) if (typeof target[i] !== 'string') return false;
  }
  const messages = raw.messages;
  if (!nullish(messages)) {
    if (!Array.isArray(messages)) return false;
    for (let i = 0; i < messages.length; i++) if (!messageOk(messages[i])) return false;
  }
  if (!recordOf(raw.scores, scoreOk) || !recordOf(raw.metadata, () => true) || !recordOf(raw.model_usage, usageOk)) return false;
  const error = raw.error;
  if (!nullish(error) && !(isRec(error) && typeof error.message === 'string')) return false;
  if (!nullish(raw.total_time) && !finite(raw.total_time)) return false;
  return nstr(raw.started_at);
}

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

type FieldCheck = (v: unknown) => boolean;

interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  format?: string;
  checks?: unknown[];
  entries?: Record<string, unknown>;
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: ZodDef } })._zod.def;

/**
 * One field's check, from its zod schema: plain strings, safe integers, finite numbers, booleans
 * and enums are checked here; anything else (a string with a format or pattern: run ids,
 * timestamps) by the field's own schema, remembering the last value it accepted (a run's rows share
 * their run id).
 */
function fieldCheck(schema: z.ZodType): FieldCheck {
  let d = defOf(schema);
  let optional = false;
  let nullable = false;
  for (;;) {
    if (d.type === 'optional') optional = true;
    else if (d.type === 'nullable') nullable = true;
    else break;
    d = defOf(d.innerType!);
  }
  const plain = !d.checks || d.checks.length === 0;
  let base: FieldCheck;
  if (d.type === 'string' && plain && !d.format) base = (v) => typeof v === 'string';
  else if (d.type === 'number' && plain && d.format === 'safeint') base = (v) => Number.isSafeInteger(v);
  else if (d.type === 'number' && plain && !d.format) base = finite;
  else if (d.type === 'boolean' && plain) base = (v) => typeof v === 'boolean';
  else if (d.type === 'enum' && plain && d.entries) {
    const values = new Set(Object.values(d.entries));
    base = (v) => typeof v === 'string' && values.has(v);
  } else {
    let last: unknown = undefined;
    let seen = false;
    base = (v) => {
      if (seen && v === last) return true;
      if (!schema.safeParse(v).success) return false;
      last = v;
      seen = true;
      return true;
    };
  }
  return (v) => (v === undefined ? optional : v === null ? nullable : base(v));
}

const rowCheckers = new Map<TableName, (row: object) => boolean>();

/** A check of one row of `table` that implies its zod schema passes (false: ask zod). */
export function rowChecker(table: TableName): (row: object) => boolean {
  let c = rowCheckers.get(table);
  if (!c) {
    const shape = (TABLES[table] as unknown as z.ZodObject).shape as Record<string, z.ZodType>;
    const names = Object.keys(shape);
    const checks = names.map((k) => fieldCheck(shape[k]!));
    c = (row) => {
      if (!enabled) return false;
      const r = row as Rec;
      for (let i = 0; i < names.length; i++) if (!checks[i]!(r[names[i]!])) return false;
      return true;
    };
    rowCheckers.set(table, c);
  }
  return c;
}
