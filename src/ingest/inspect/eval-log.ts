/**
 * The `.eval` (zip) format of Inspect AI logs (layout: `read-eval.ts`), read in steps, each a
 * function: open the zip (`openZip`), the header or its rebuild from the journal
 * (`readEvalHeader`), the sample units in the run's order (`sampleUnits`), then each unit read by
 * offset as it is asked for: a monolith member (`readMonolith`) or a chunked folder
 * (`readChunked`, its message pool and attachments concatenated by `chunkSequence`).
 */
import type { StandoffError } from '../../errors.ts';
import { isTooDeep, JsonTooDeep } from './json.ts';
import {
  HEADER_MEMBER,
  START_MEMBER,
  checkRaw,
  hashLookup,
  inspectHeaderSchema,
  isRecord,
  journalStartSchema,
  memberKey,
  naturalCompare,
  parseMember,
  problem,
  zipProblem,
  zodProblem,
  type InspectHeader,
  type InspectLogReader,
  type OpenResult,
  type SampleItem,
} from './log-parts.ts';
import { ZipError, ZipReader, type ZipEntry, type ZipLimits } from './zip.ts';

/** One member's text, or its problem (a zip error, or a read that failed). */
function memberText(zip: ZipReader, file: string, entry: ZipEntry): { text: string } | { error: StandoffError } {
  try {
    return { text: zip.readText(entry) };
  } catch (err) {
    return { error: err instanceof ZipError ? zipProblem(file, err) : problem('badZip', file, entry.name, (err as Error).message) };
  }
}

/** One member parsed as JSON (problems go to `problems`; nesting past the limit is one). */
function memberJson(zip: ZipReader, file: string, entry: ZipEntry, problems: StandoffError[]): { ok: true; value: unknown } | { ok: false } {
  const t = memberText(zip, file, entry);
  if ('error' in t) {
    problems.push(t.error);
    return { ok: false };
  }
  const parsed = parseMember(file, entry.name, t.text);
  if (!parsed.ok) problems.push(parsed.error);
  else if (isTooDeep(parsed.value)) {
    problems.push(problem('badJson', file, entry.name, new JsonTooDeep().message));
    return { ok: false };
  }
  return parsed.ok ? parsed : { ok: false };
}

/** The zip of a `.eval` file, or the problem that stops the file. */
function openZip(file: string, limits?: ZipLimits): { zip: ZipReader } | { problems: StandoffError[] } {
  try {
    return { zip: ZipReader.open(file, limits) };
  } catch (err) {
    if (err instanceof ZipError) return { problems: [zipProblem(file, err)] };
    return { problems: [problem('unreadable', file, null, `cannot read the file: ${(err as Error).message}`)] };
  }
}

/** The header (null when bad: its problem is in `problems`), from header.json, else rebuilt from the journal's start.json (a crashed or running eval). */
interface EvalHeader {
  header: InspectHeader | null;
  headerMember: string;
  rebuilt: boolean;
}

export function readEvalHeader(zip: ZipReader, file: string, problems: StandoffError[]): EvalHeader | { notInspect: StandoffError } {
  const headerEntry = zip.entry(HEADER_MEMBER);
  const startEntry = zip.entry(START_MEMBER);
  if (headerEntry) {
    const j = memberJson(zip, file, headerEntry, problems);
    if (!j.ok) return { header: null, headerMember: HEADER_MEMBER, rebuilt: false };
    const r = inspectHeaderSchema.safeParse(j.value);
    if (!r.success) problems.push(zodProblem(file, HEADER_MEMBER, r.error));
    return { header: r.success ? r.data : null, headerMember: HEADER_MEMBER, rebuilt: false };
  }
  if (startEntry) {
    const j = memberJson(zip, file, startEntry, problems);
    if (!j.ok) return { header: null, headerMember: START_MEMBER, rebuilt: true };
    const r = journalStartSchema.safeParse(j.value);
    if (!r.success) {
      problems.push(zodProblem(file, START_MEMBER, r.error));
      return { header: null, headerMember: START_MEMBER, rebuilt: true };
    }
    const header: InspectHeader = { version: r.data.version, status: 'started', eval: r.data.eval, plan: r.data.plan, results: null, stats: null, error: null };
    return { header, headerMember: START_MEMBER, rebuilt: true };
  }
  const names = zip.entries.slice(0, 3).map((e) => e.name);
  const more = zip.entries.length > 3 ? `, ... (${zip.entries.length} members)` : '';
  return {
    notInspect: problem('notInspectLog', file, null, `not an inspect log: the zip has neither header.json nor ${START_MEMBER} (members: ${names.join(', ') || 'none'}${more})`),
  };
}

/** A sample unit: a monolith member, or a chunked folder (its key and members). */
export type SampleUnit = { offset: number; entry?: ZipEntry; folder?: [string, ZipEntry[]] };

/**
 * The sample units (a monolith wins over a folder of the same key), in the run's order as far as
 * the member names tell it (`<id>_epoch_<n>`), so the rows arrive sorted and a large log needs no
 * sort when it is written; the offset breaks ties.
 */
export function sampleUnits(zip: ZipReader): SampleUnit[] {
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
  const units: SampleUnit[] = monoliths.map((entry) => ({ offset: entry.localHeaderOffset, entry }));
  for (const folder of folders) units.push({ offset: folder[1].reduce((a, e) => Math.min(a, e.localHeaderOffset), Infinity), folder });
  const keyed = units.map((u) => ({ u, key: memberKey(u.entry ? u.entry.name.slice('samples/'.length, -'.json'.length) : u.folder![0]) }));
  keyed.sort((a, b) => naturalCompare(a.key.id, b.key.id) || a.key.epoch - b.key.epoch || a.u.offset - b.u.offset);
  return keyed.map((k) => k.u);
}

/** A monolith sample member (`samples/<id>_epoch_<n>.json`), attachments from its own map. */
export function readMonolith(zip: ZipReader, file: string, entry: ZipEntry): SampleItem {
  const member = entry.name;
  const t = memberText(zip, file, entry);
  if ('error' in t) return { member, error: t.error };
  const parsed = parseMember(file, member, t.text);
  if (!parsed.ok) return { member, error: parsed.error };
  const raw = parsed.value;
  if (!isRecord(raw)) return { member, error: problem('badField', file, member, 'a sample must be a JSON object') };
  return checkRaw(file, member, raw, hashLookup(raw));
}

/** A chunked folder's members by path under the folder, and how to read one as JSON. */
export interface Folder {
  zip: ZipReader;
  file: string;
  byPath: Map<string, ZipEntry>;
  bad: (member: string, text: string) => SampleItem;
}

function folderJson(f: Folder, entry: ZipEntry): { value: unknown } | { error: StandoffError } {
  const t = memberText(f.zip, f.file, entry);
  if ('error' in t) return t;
  const p = parseMember(f.file, entry.name, t.text);
  return p.ok ? { value: p.value } : { error: p.error };
}

/** Concatenates a sequence's chunks (`<seq>/<start>.json`), checking they are contiguous. */
export function chunkSequence(f: Folder, seq: string): { items: unknown[] } | { error: SampleItem } {
  const chunks = [...f.byPath.entries()]
    .map(([p, e]) => ({ m: new RegExp(`^${seq}/(\\d+)\\.json$`).exec(p), e }))
    .filter((c) => c.m)
    .map((c) => ({ start: Number(c.m![1]), e: c.e }))
    .sort((a, b) => a.start - b.start);
  const items: unknown[] = [];
  for (const c of chunks) {
    if (c.start !== items.length) return { error: f.bad(c.e.name, `${seq} chunk starts at index ${c.start} but ${items.length} items precede it`) };
    const j = folderJson(f, c.e);
    if ('error' in j) return { error: { member: c.e.name, error: j.error } };
    if (!Array.isArray(j.value)) return { error: f.bad(c.e.name, `a ${seq} chunk must be a JSON array`) };
    for (const v of j.value) items.push(v);
  }
  return { items };
}

/** The conversation of a chunked sample: its `message_refs` ranges over the message pool. */
function pooledMessages(f: Folder, shellName: string, refs: unknown, pool: unknown[]): { messages: unknown[] } | { error: SampleItem } {
  const messages: unknown[] = [];
  if (!Array.isArray(refs)) return { error: f.bad(shellName, 'field "message_refs": expected an array of [start, end] ranges') };
  for (const r of refs) {
    if (!Array.isArray(r) || r.length !== 2 || !Number.isInteger(r[0]) || !Number.isInteger(r[1]) || r[0] < 0 || r[1] < r[0] || r[1] > pool.length) {
      return { error: f.bad(shellName, `field "message_refs": range ${JSON.stringify(r)} is not within the ${pool.length} pooled messages`) };
    }
    for (let i = r[0]; i < r[1]; i++) messages.push(pool[i]);
  }
  return { messages };
}

/** A chunked sample folder (`samples/<id>_epoch_<n>/...`): the shell, its metadata, messages from the pool, attachments by index. */
export function readChunked(zip: ZipReader, file: string, key: string, entries: ZipEntry[]): SampleItem {
  const prefix = `samples/${key}/`;
  const f: Folder = {
    zip,
    file,
    byPath: new Map(entries.map((e) => [e.name.slice(prefix.length), e])),
    bad: (member, text) => ({ member, error: problem('badChunkedSample', file, member, text) }),
  };
  const shellEntry = f.byPath.get('sample.json');
  if (!shellEntry) return f.bad(prefix, `chunked sample folder without sample.json (has: ${[...f.byPath.keys()].slice(0, 4).join(', ')})`);
  const shellJson = folderJson(f, shellEntry);
  if ('error' in shellJson) return { member: shellEntry.name, error: shellJson.error };
  const shell = shellJson.value;
  if (!isRecord(shell)) return f.bad(shellEntry.name, 'sample.json must be a JSON object');
  const metaEntry = f.byPath.get('metadata.json');
  if (metaEntry) {
    const m = folderJson(f, metaEntry);
    if ('error' in m) return { member: metaEntry.name, error: m.error };
    shell.metadata = m.value;
  }
  const pool = chunkSequence(f, 'messages');
  if ('error' in pool) return pool.error;
  const atts = chunkSequence(f, 'attachments');
  if ('error' in atts) return atts.error;
  const conversation = pooledMessages(f, shellEntry.name, shell.message_refs ?? [], pool.items);
  if ('error' in conversation) return conversation.error;
  shell.messages = conversation.messages;
  const list = atts.items;
  const lookup = (ref: string) => {
    if (!/^\d+$/.test(ref)) return undefined;
    const v = list[Number(ref)];
    return typeof v === 'string' ? v : undefined;
  };
  return checkRaw(file, shellEntry.name, shell, lookup);
}

/** One sample unit read: a monolith member or a chunked folder. */
export const readUnit = (zip: ZipReader, file: string, u: SampleUnit): SampleItem =>
  u.entry ? readMonolith(zip, file, u.entry) : readChunked(zip, file, u.folder![0], u.folder![1]);

/** Opens a `.eval` log: the header read (or rebuilt), the sample units listed; samples read one at a time. */
export function openEvalLog(file: string, limits?: ZipLimits): OpenResult {
  const opened = openZip(file, limits);
  if ('problems' in opened) return { reader: null, problems: opened.problems };
  const zip = opened.zip;
  const problems: StandoffError[] = [];
  const h = readEvalHeader(zip, file, problems);
  if ('notInspect' in h) {
    zip.close();
    return { reader: null, problems: [h.notInspect] };
  }
  const units = sampleUnits(zip);
  function* samples(): Generator<SampleItem> {
    for (const u of units) yield readUnit(zip, file, u);
  }
  const reader: InspectLogReader = {
    file,
    format: 'eval',
    header: h.header,
    headerMember: h.headerMember,
    rebuiltFromJournal: h.rebuilt,
    sampleUnits: units.length,
    samples,
    close: () => zip.close(),
  };
  return { reader, problems };
}
