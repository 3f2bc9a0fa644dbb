/**
 * Reads Inspect AI logs: the `.eval` zip format and the older single-file
 * `.json` format. Samples are produced one at a time ({@link InspectLogReader.samples}); for
 * `.eval` files each sample member is read by offset from the archive, so the archive is never
 * whole in memory.
 *
 * `.eval` layout (see inspect_ai `log/_recorders/eval.py`):
 *
 *   header.json                      EvalLog without samples: version, status, eval, plan, results,
 *                                    stats, error (written when the eval finishes)
 *   _journal/start.json              {version, eval, plan}: written when the eval starts
 *   _journal/summaries/{n}.json      sample summaries, flushed in batches while the eval runs
 *   summaries.json, reductions.json  consolidated summaries / per-epoch reductions (at finish)
 *   samples/{id}_epoch_{n}.json      one EvalSample per member ("monolith" samples)
 *   samples/{id}_epoch_{n}/...       a "chunked" sample (inspect_ai `log/_recorders/chunked/`):
 *       sample.json                  the sample without messages/events/attachments/metadata,
 *                                    plus `message_refs`: [start, end) ranges into the message pool
 *       metadata.json                sample metadata (only when non-empty)
 *       messages/{start}.json        the message pool, as arrays named by their first index
 *       attachments/{start}.json     attachment strings, referenced as `attachment://<index>`
 *       events/..., calls/..., skeleton.json   not needed here (not read)
 *
 * A crashed or still-running eval has no `header.json`: the header is rebuilt from
 * `_journal/start.json` (status `started`, no results) and everything else comes from the sample
 * members. A re-logged sample appends a second member of the same name; the last one wins, as in
 * Inspect. Monolith samples replace long strings with `attachment://<md5>` references into the
 * sample's `attachments` map; they are resolved in the fields this ingest uses.
 *
 * Python's `json` writes bare `NaN`, `Infinity` and `-Infinity` (e.g. a NaN score), which
 * `JSON.parse` rejects: {@link parseJsonTolerant} rewrites those tokens, outside strings only.
 */
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { dataError, type StandoffError } from '../../errors.ts';
import { ZipError, ZipReader, type ZipEntry, type ZipLimits } from './zip.ts';

// ---------------------------------------------------------------------------------------------
// Tolerant JSON
// ---------------------------------------------------------------------------------------------

/**
 * `JSON.parse`, also accepting the bare `NaN`, `Infinity` and `-Infinity` tokens Python writes.
 * The tokens are rewritten only outside strings (`"NaN"` inside a string stays text); `Infinity`
 * becomes `1e999` (which parses to Infinity) and `NaN` a sentinel string turned back into NaN.
 */
export function parseJsonTolerant(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (first) {
    const { text: fixed, nan } = rewriteNonFinite(text);
    if (fixed === text) throw first;
    if (!nan) return JSON.parse(fixed);
    return JSON.parse(fixed, (_k, v) => (v === NAN_SENTINEL ? NaN : v));
  }
}

const NAN_SENTINEL = '\u0000standoff:NaN\u0000';
const NAN_SENTINEL_JSON = JSON.stringify(NAN_SENTINEL);

function rewriteNonFinite(text: string): { text: string; nan: boolean } {
  const parts: string[] = [];
  let last = 0;
  let nan = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // skip the string, honouring escapes
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 78 /* N */ && text.startsWith('NaN', i)) {
      parts.push(text.slice(last, i), NAN_SENTINEL_JSON);
      nan = true;
      i += 2;
      last = i + 1;
    } else if (c === 73 /* I */ && text.startsWith('Infinity', i)) {
      parts.push(text.slice(last, i), '1e999');
      i += 7;
      last = i + 1;
    }
  }
  if (last === 0) return { text, nan: false };
  parts.push(text.slice(last));
  return { text: parts.join(''), nan };
}

// ---------------------------------------------------------------------------------------------
// Inspect structures (only the fields this ingest reads)
// ---------------------------------------------------------------------------------------------

// Plain (stripping) objects: only the fields mapped are kept, which is also the fastest to check.
const nstr = z.string().nullish();
/** Content parts keep every field (text, reasoning, summary, redacted, ...). */
const contentPart = z.looseObject({ type: z.string() });
export const inspectMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(contentPart)]).nullish(),
  reasoning: nstr,
  tool_calls: z
    .array(z.object({ id: nstr, function: z.string(), arguments: z.unknown().optional() }))
    .nullish(),
  tool_call_id: z.union([z.string(), z.array(z.string())]).nullish(),
  function: nstr,
  error: z.object({ type: nstr, message: nstr }).nullish(),
});
const usageSchema = z.object({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() });
export const inspectScoreSchema = z.object({ value: z.unknown().optional(), answer: z.unknown().optional(), explanation: z.unknown().optional() });
export const inspectSampleSchema = z.object({
  id: z.union([z.int(), z.string().min(1)]),
  epoch: z.int().min(1),
  target: z.union([z.string(), z.array(z.string())]).nullish(),
  messages: z.array(inspectMessageSchema).nullish(),
  scores: z.record(z.string(), inspectScoreSchema).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  model_usage: z.record(z.string(), usageSchema).nullish(),
  error: z.object({ message: z.string() }).nullish(),
  total_time: z.number().nullish(),
  started_at: nstr,
});
export type InspectMessage = z.infer<typeof inspectMessageSchema>;
export type InspectScore = z.infer<typeof inspectScoreSchema>;
export type InspectSample = z.infer<typeof inspectSampleSchema>;

export const inspectEvalSpecSchema = z.looseObject({
  run_id: nstr,
  eval_id: nstr,
  created: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not a date-time'),
  task: z.string().min(1),
  model: z.string().min(1),
  config: z.record(z.string(), z.unknown()).nullish(),
  task_args: z.record(z.string(), z.unknown()).nullish(),
  packages: z.record(z.string(), z.unknown()).nullish(),
});
export const inspectHeaderSchema = z.looseObject({
  version: z.int().nullish(),
  status: z.enum(['started', 'success', 'cancelled', 'error']).nullish(),
  eval: inspectEvalSpecSchema,
  plan: z.record(z.string(), z.unknown()).nullish(),
  results: z
    .looseObject({ total_samples: z.int().nullish(), completed_samples: z.int().nullish() })
    .nullish(),
  stats: z.record(z.string(), z.unknown()).nullish(),
  error: z.looseObject({ message: z.string() }).nullish(),
});
export type InspectHeader = z.infer<typeof inspectHeaderSchema>;

// ---------------------------------------------------------------------------------------------
// Problems
// ---------------------------------------------------------------------------------------------

/** One-line data error naming the file and (when known) the member and field. */
export function problem(code: string, file: string, member: string | null, text: string): StandoffError {
  return dataError(`ingest.${code}`, `${file}: ${member ? `${member}: ` : ''}${oneLine(text)}`);
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ').trim();

function zodProblem(file: string, member: string, error: z.ZodError, prefix = ''): StandoffError {
  const issue = error.issues[0]!;
  const field = [prefix, ...issue.path.map(String)].filter((s) => s !== '').join('.');
  return problem('badField', file, member, `field "${field || '(root)'}": ${issue.message.toLowerCase()}`);
}

function parseMember(file: string, member: string, text: string): { ok: true; value: unknown } | { ok: false; error: StandoffError } {
  try {
    return { ok: true, value: parseJsonTolerant(text) };
  } catch (err) {
    if (err instanceof RangeError) return { ok: false, error: problem('badJson', file, member, new JsonTooDeep().message) };
    return { ok: false, error: problem('badJson', file, member, `not valid JSON: ${(err as Error).message}`) };
  }
}

/** A raw sample's mapped fields, checked; a nesting too deep is this member's data error. */
function checkRaw(file: string, member: string, raw: Record<string, unknown>, lookup: (ref: string) => string | undefined): SampleItem {
  let used: Record<string, unknown>;
  try {
    used = usedFields(raw, lookup);
  } catch (err) {
    if (err instanceof JsonTooDeep) return { member, error: problem('badJson', file, member, err.message) };
    throw err;
  }
  return checkSample(file, member, used);
}

function zipProblem(file: string, err: ZipError): StandoffError {
  const code = { empty: 'emptyFile', notZip: 'notZip', truncated: 'truncatedZip', corrupt: 'badZip', unsupported: 'unsupportedZip', tooLarge: 'zipBomb' }[err.problem];
  return problem(code, file, err.member, err.message);
}

// ---------------------------------------------------------------------------------------------
// Attachments
// ---------------------------------------------------------------------------------------------

const ATTACHMENT = 'attachment://';

/** Deepest nesting of arrays and objects a sample's mapped fields may have (deeper is refused). */
export const MAX_JSON_DEPTH = 1000;

/** A value nested deeper than {@link MAX_JSON_DEPTH}: a data error for the member that holds it. */
export class JsonTooDeep extends Error {
  constructor() {
    super(`JSON nested more than ${MAX_JSON_DEPTH} levels deep (a damaged or hostile log)`);
  }
}

/** Whether a parsed JSON value nests arrays and objects more than {@link MAX_JSON_DEPTH} deep (walked without recursion). */
export function isTooDeep(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [o, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) return true;
    if (Array.isArray(o)) {
      for (let i = 0; i < o.length; i++) if (o[i] !== null && typeof o[i] === 'object') stack.push([o[i], depth + 1]);
    } else {
      for (const k in o) {
        const x = (o as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
      }
    }
  }
  return false;
}

/**
 * Replaces whole-string `attachment://<ref>` values (deeply, in place) using `lookup`; unknown refs
 * stay. Walks with its own stack, so no nesting overflows the call stack; throws
 * {@link JsonTooDeep} past {@link MAX_JSON_DEPTH} levels, so later steps (serializing metadata and
 * tool arguments) never meet a deeper value either.
 */
export function resolveAttachments<T>(value: T, lookup: (ref: string) => string | undefined): T {
  const one = (v: string): string => (v.startsWith(ATTACHMENT) ? (lookup(v.slice(ATTACHMENT.length)) ?? v) : v);
  if (typeof value === 'string') return one(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const stack: Array<[Record<string | number, unknown>, number]> = [[value as Record<string, unknown>, 1]];
  while (stack.length > 0) {
    const [o, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) throw new JsonTooDeep();
    const visit = (k: string | number) => {
      const x = o[k];
      if (typeof x === 'string') {
        const r = one(x);
        if (r !== x) o[k] = r;
      } else if (x !== null && typeof x === 'object') stack.push([x as Record<string, unknown>, depth + 1]);
    };
    if (Array.isArray(o)) for (let i = 0; i < o.length; i++) visit(i);
    else for (const k in o) visit(k);
  }
  return value;
}

/**
 * The fields of a sample this ingest maps, with attachments resolved. Everything else (events,
 * output, store, attachments: often most of a sample's bytes) is left behind.
 */
function usedFields(raw: Record<string, unknown>, lookup: (ref: string) => string | undefined): Record<string, unknown> {
  return {
    id: raw.id,
    epoch: raw.epoch,
    target: resolveAttachments(raw.target, lookup),
    messages: resolveAttachments(raw.messages, lookup),
    scores: resolveAttachments(raw.scores, lookup),
    metadata: resolveAttachments(raw.metadata, lookup),
    model_usage: raw.model_usage,
    error: resolveAttachments(raw.error, lookup),
    total_time: raw.total_time,
    started_at: raw.started_at,
  };
}

const hashLookup = (raw: Record<string, unknown>) => {
  const attachments = isRecord(raw.attachments) ? raw.attachments : {};
  return (ref: string) => (typeof attachments[ref] === 'string' ? (attachments[ref] as string) : undefined);
};

// ---------------------------------------------------------------------------------------------
// Readers
// ---------------------------------------------------------------------------------------------

export type SampleItem =
  | { member: string; sample: InspectSample; error?: undefined }
  | { member: string; sample?: undefined; error: StandoffError };

export interface InspectLogReader {
  /** The path as given (used in messages). */
  readonly file: string;
  readonly format: 'eval' | 'json';
  /** Null when the header member is bad (its problem is in {@link OpenResult.problems}); the
   * samples can still be checked so every bad member is reported at once. */
  readonly header: InspectHeader | null;
  /** `header.json`, `_journal/start.json`, or `(header)` for the single-file format. */
  readonly headerMember: string;
  /** True when no `header.json` existed and the header was rebuilt from `_journal/start.json`. */
  readonly rebuiltFromJournal: boolean;
  /** Number of sample units (members or chunked folders) that {@link samples} will yield. */
  readonly sampleUnits: number;
  /** Samples (attachments resolved, shape checked) or one problem per bad sample. */
  samples(): Generator<SampleItem>;
  close(): void;
}

export interface OpenResult {
  reader: InspectLogReader | null;
  /** Problems that stop the whole file (bad zip, not an Inspect log, bad header). */
  problems: StandoffError[];
}

/** Opens an Inspect log (`.eval` or `.json`, sniffed when the extension is neither); `limits` bound a `.eval`'s members. */
export function openInspectLog(path: string, limits?: ZipLimits): OpenResult {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) return { reader: null, problems: [problem('notAFile', path, null, 'is a directory, not an inspect log file')] };
    size = st.size;
  } catch (err) {
    return { reader: null, problems: [problem('missingFile', path, null, `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)] };
  }
  if (size === 0) return { reader: null, problems: [problem('emptyFile', path, null, 'the file is empty')] };
  const lower = path.toLowerCase();
  if (lower.endsWith('.json')) return openJsonLog(path);
  if (lower.endsWith('.eval')) return openEvalLog(path, limits);
  const head = readFileHead(path);
  if (head[0] === 0x50 && head[1] === 0x4b) return openEvalLog(path, limits);
  if (head.toString('utf8').trimStart().startsWith('{')) return openJsonLog(path);
  return { reader: null, problems: [problem('unknownFormat', path, null, 'not an inspect log: expected a .eval (zip) or .json log')] };
}

function readFileHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(16);
    return b.subarray(0, readSync(fd, b, 0, 16, 0));
  } finally {
    closeSync(fd);
  }
}

const START_MEMBER = '_journal/start.json';
const HEADER_MEMBER = 'header.json';
const journalStartSchema = z.looseObject({
  version: z.int().nullish(),
  eval: inspectEvalSpecSchema,
  plan: z.record(z.string(), z.unknown()).nullish(),
});

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkSample(file: string, member: string, raw: Record<string, unknown>): SampleItem {
  const r = inspectSampleSchema.safeParse(raw);
  if (!r.success) return { member, error: zodProblem(file, member, r.error) };
  return { member, sample: r.data };
}

/**
 * Orders sample ids as the run's rows are ordered: two ids that are both numbers by value, any
 * other pair as strings (code units).
 */
export function naturalCompare(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (a !== '' && b !== '' && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sample id and epoch as a member name (or chunked folder) spells them: `<id>_epoch_<n>`. */
function memberKey(key: string): { id: string; epoch: number } {
  const m = /^(.*)_epoch_(\d+)$/.exec(key);
  return m ? { id: m[1]!, epoch: Number(m[2]) } : { id: key, epoch: 0 };
}

function openEvalLog(file: string, limits?: ZipLimits): OpenResult {
  let zip: ZipReader;
  try {
    zip = ZipReader.open(file, limits);
  } catch (err) {
    if (err instanceof ZipError) return { reader: null, problems: [zipProblem(file, err)] };
    return { reader: null, problems: [problem('unreadable', file, null, `cannot read the file: ${(err as Error).message}`)] };
  }
  const problems: StandoffError[] = [];
  const readJson = (entry: ZipEntry): { ok: true; value: unknown } | { ok: false } => {
    let text: string;
    try {
      text = zip.readText(entry);
    } catch (err) {
      problems.push(err instanceof ZipError ? zipProblem(file, err) : problem('badZip', file, entry.name, (err as Error).message));
      return { ok: false };
    }
    const parsed = parseMember(file, entry.name, text);
    if (!parsed.ok) problems.push(parsed.error);
    else if (isTooDeep(parsed.value)) {
      problems.push(problem('badJson', file, entry.name, new JsonTooDeep().message));
      return { ok: false };
    }
    return parsed.ok ? parsed : { ok: false };
  };

  // Header: header.json, else rebuilt from the journal's start.json (crashed / running eval).
  let header: InspectHeader | null = null;
  let headerMember = HEADER_MEMBER;
  let rebuilt = false;
  const headerEntry = zip.entry(HEADER_MEMBER);
  const startEntry = zip.entry(START_MEMBER);
  if (headerEntry) {
    const j = readJson(headerEntry);
    if (j.ok) {
      const r = inspectHeaderSchema.safeParse(j.value);
      if (r.success) header = r.data;
      else problems.push(zodProblem(file, HEADER_MEMBER, r.error));
    }
  } else if (startEntry) {
    headerMember = START_MEMBER;
    rebuilt = true;
    const j = readJson(startEntry);
    if (j.ok) {
      const r = journalStartSchema.safeParse(j.value);
      if (r.success) {
        header = { version: r.data.version, status: 'started', eval: r.data.eval, plan: r.data.plan, results: null, stats: null, error: null };
      } else problems.push(zodProblem(file, START_MEMBER, r.error));
    }
  } else {
    const names = zip.entries.slice(0, 3).map((e) => e.name);
    const more = zip.entries.length > 3 ? `, ... (${zip.entries.length} members)` : '';
    zip.close();
    return {
      reader: null,
      problems: [
        problem('notInspectLog', file, null, `not an inspect log: the zip has neither header.json nor ${START_MEMBER} (members: ${names.join(', ') || 'none'}${more})`),
      ],
    };
  }

  // Sample units: monolith members and chunked folders (a monolith wins over a folder of the same key).
  const monoliths: ZipEntry[] = [];
  const folders = new Map<string, ZipEntry[]>();
  for (const e of zip.entriesInFileOrder()) {
    if (!e.name.startsWith('samples/')) continue;
    const rest = e.name.slice('samples/'.length);
    const slash = rest.indexOf('/');
    if (slash < 0) {
      if (rest.endsWith('.json')) monoliths.push(e);
      continue;
    }
    const key = rest.slice(0, slash);
    const list = folders.get(key);
    if (list) list.push(e);
    else folders.set(key, [e]);
  }
  for (const m of monoliths) folders.delete(m.name.slice('samples/'.length, -'.json'.length));
  type Unit = { offset: number; entry?: ZipEntry; folder?: [string, ZipEntry[]] };
  const units: Unit[] = monoliths.map((entry) => ({ offset: entry.localHeaderOffset, entry }));
  for (const folder of folders) units.push({ offset: folder[1].reduce((a, e) => Math.min(a, e.localHeaderOffset), Infinity), folder });
  // Read in the run's order as far as the member names tell it (`<id>_epoch_<n>`), so the rows
  // arrive sorted and a large log needs no sort when it is written; the offset breaks ties.
  const keyed = units.map((u) => ({ u, key: memberKey(u.entry ? u.entry.name.slice('samples/'.length, -'.json'.length) : u.folder![0]) }));
  keyed.sort((a, b) => naturalCompare(a.key.id, b.key.id) || a.key.epoch - b.key.epoch || a.u.offset - b.u.offset);
  for (let i = 0; i < keyed.length; i++) units[i] = keyed[i]!.u;

  function* samples(): Generator<SampleItem> {
    for (const u of units) {
      if (u.entry) yield readMonolith(u.entry);
      else yield readChunked(u.folder![0], u.folder![1]);
    }
  }

  function readText(entry: ZipEntry): { text: string } | { error: StandoffError } {
    try {
      return { text: zip.readText(entry) };
    } catch (err) {
      return { error: err instanceof ZipError ? zipProblem(file, err) : problem('badZip', file, entry.name, (err as Error).message) };
    }
  }

  function readMonolith(entry: ZipEntry): SampleItem {
    const member = entry.name;
    const t = readText(entry);
    if ('error' in t) return { member, error: t.error };
    const parsed = parseMember(file, member, t.text);
    if (!parsed.ok) return { member, error: parsed.error };
    const raw = parsed.value;
    if (!isRecord(raw)) return { member, error: problem('badField', file, member, 'a sample must be a JSON object') };
    return checkRaw(file, member, raw, hashLookup(raw));
  }

  function readChunked(key: string, entries: ZipEntry[]): SampleItem {
    const prefix = `samples/${key}/`;
    const shellName = `${prefix}sample.json`;
    const bad = (member: string, text: string): SampleItem => ({ member, error: problem('badChunkedSample', file, member, text) });
    const byPath = new Map(entries.map((e) => [e.name.slice(prefix.length), e]));
    const shellEntry = byPath.get('sample.json');
    if (!shellEntry) {
      return bad(prefix, `chunked sample folder without sample.json (has: ${[...byPath.keys()].slice(0, 4).join(', ')})`);
    }
    const json = (entry: ZipEntry): { value: unknown } | { error: StandoffError } => {
      const t = readText(entry);
      if ('error' in t) return t;
      const p = parseMember(file, entry.name, t.text);
      return p.ok ? { value: p.value } : { error: p.error };
    };
    /** Concatenates a sequence's chunks (`<seq>/<start>.json`), checking they are contiguous. */
    const sequence = (seq: string): { items: unknown[] } | { error: SampleItem } => {
      const chunks = [...byPath.entries()]
        .map(([p, e]) => ({ m: new RegExp(`^${seq}/(\\d+)\\.json$`).exec(p), e }))
        .filter((c) => c.m)
        .map((c) => ({ start: Number(c.m![1]), e: c.e }))
        .sort((a, b) => a.start - b.start);
      const items: unknown[] = [];
      for (const c of chunks) {
        if (c.start !== items.length) return { error: bad(c.e.name, `${seq} chunk starts at index ${c.start} but ${items.length} items precede it`) };
        const j = json(c.e);
        if ('error' in j) return { error: { member: c.e.name, error: j.error } };
        if (!Array.isArray(j.value)) return { error: bad(c.e.name, `a ${seq} chunk must be a JSON array`) };
        for (const v of j.value) items.push(v);
      }
      return { items };
    };

    const shellJson = json(shellEntry);
    if ('error' in shellJson) return { member: shellEntry.name, error: shellJson.error };
    const shell = shellJson.value;
    if (!isRecord(shell)) return bad(shellEntry.name, 'sample.json must be a JSON object');
    const metaEntry = byPath.get('metadata.json');
    if (metaEntry) {
      const m = json(metaEntry);
      if ('error' in m) return { member: metaEntry.name, error: m.error };
      shell.metadata = m.value;
    }
    const pool = sequence('messages');
    if ('error' in pool) return pool.error;
    const atts = sequence('attachments');
    if ('error' in atts) return atts.error;
    const refs = shell.message_refs ?? [];
    const messages: unknown[] = [];
    if (!Array.isArray(refs)) return bad(shellEntry.name, 'field "message_refs": expected an array of [start, end] ranges');
    for (const r of refs) {
      if (!Array.isArray(r) || r.length !== 2 || !Number.isInteger(r[0]) || !Number.isInteger(r[1]) || r[0] < 0 || r[1] < r[0] || r[1] > pool.items.length) {
        return bad(shellEntry.name, `field "message_refs": range ${JSON.stringify(r)} is not within the ${pool.items.length} pooled messages`);
      }
      for (let i = r[0]; i < r[1]; i++) messages.push(pool.items[i]);
    }
    shell.messages = messages;
    const list = atts.items;
    const lookup = (ref: string) => {
      if (!/^\d+$/.test(ref)) return undefined;
      const v = list[Number(ref)];
      return typeof v === 'string' ? v : undefined;
    };
    return checkRaw(file, shellEntry.name, shell, lookup);
  }

  const reader: InspectLogReader = {
    file,
    format: 'eval',
    header,
    headerMember,
    rebuiltFromJournal: rebuilt,
    sampleUnits: units.length,
    samples,
    close: () => zip.close(),
  };
  return { reader, problems };
}

function openJsonLog(file: string): OpenResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { reader: null, problems: [problem('unreadable', file, null, `cannot read the file: ${(err as Error).message}`)] };
  }
  let doc: unknown;
  try {
    doc = parseJsonTolerant(text);
  } catch (err) {
    return { reader: null, problems: [problem('badJson', file, null, `not valid JSON: ${(err as Error).message}`)] };
  }
  if (!isRecord(doc) || !isRecord(doc.eval)) {
    return { reader: null, problems: [problem('notInspectLog', file, null, 'not an inspect log: a .json log must be an object with an "eval" field')] };
  }
  const rawSamples = Array.isArray(doc.samples) ? (doc.samples as unknown[]) : [];
  delete doc.samples;
  if (isTooDeep(doc)) return { reader: null, problems: [problem('badJson', file, '(header)', new JsonTooDeep().message)] };
  const problems: StandoffError[] = [];
  const r = inspectHeaderSchema.safeParse(doc);
  if (!r.success) problems.push(zodProblem(file, '(header)', r.error));
  function* samples(): Generator<SampleItem> {
    for (let i = 0; i < rawSamples.length; i++) {
      const member = `samples[${i}]`;
      const raw = rawSamples[i];
      rawSamples[i] = null; // let each sample go once mapped
      if (!isRecord(raw)) {
        yield { member, error: problem('badField', file, member, 'a sample must be a JSON object') };
        continue;
      }
      yield checkRaw(file, member, raw, hashLookup(raw));
    }
  }
  return {
    reader: {
      file,
      format: 'json',
      header: r.success ? r.data : null,
      headerMember: '(header)',
      rebuiltFromJournal: false,
      sampleUnits: rawSamples.length,
      samples,
      close: () => undefined,
    },
    problems,
  };
}

/** SHA-256 of a file, computed by streaming it (never whole in memory). */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path, { highWaterMark: 1 << 20 })
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
