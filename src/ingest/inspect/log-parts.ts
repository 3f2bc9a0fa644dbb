/**
 * The parts of an Inspect log reader that do not depend on the container (`.eval` zip or `.json`):
 * the zod schemas of the fields this ingest reads, one-line problems naming the file and member,
 * a sample's used fields checked, and the reader's types. `read-eval.ts` opens a log;
 * `eval-log.ts` reads the `.eval` zip format.
 */
import { z } from 'zod';
import { dataError, type StandoffError } from '../../errors.ts';
import { JsonTooDeep, parseJsonTolerant, resolveAttachments } from './json.ts';
import { ZipError } from './zip.ts';
import { sampleLooksValid } from './fast-check.ts';

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

export function zodProblem(file: string, member: string, error: z.ZodError, prefix = ''): StandoffError {
  const issue = error.issues[0]!;
  const field = [prefix, ...issue.path.map(String)].filter((s) => s !== '').join('.');
  return problem('badField', file, member, `field "${field || '(root)'}": ${issue.message.toLowerCase()}`);
}

export function parseMember(file: string, member: string, text: string): { ok: true; value: unknown } | { ok: false; error: StandoffError } {
  try {
    return { ok: true, value: parseJsonTolerant(text) };
  } catch (err) {
    if (err instanceof RangeError) return { ok: false, error: problem('badJson', file, member, new JsonTooDeep().message) };
    return { ok: false, error: problem('badJson', file, member, `not valid JSON: ${(err as Error).message}`) };
  }
}

/** A raw sample's mapped fields, checked; a nesting too deep is this member's data error. */
export function checkRaw(file: string, member: string, raw: Record<string, unknown>, lookup: (ref: string) => string | undefined): SampleItem {
  let used: Record<string, unknown>;
  try {
    used = usedFields(raw, lookup);
  } catch (err) {
    if (err instanceof JsonTooDeep) return { member, error: problem('badJson', file, member, err.message) };
    throw err;
  }
  return checkSample(file, member, used);
}

export function zipProblem(file: string, err: ZipError): StandoffError {
  const code = { empty: 'emptyFile', notZip: 'notZip', truncated: 'truncatedZip', corrupt: 'badZip', unsupported: 'unsupportedZip', tooLarge: 'zipBomb' }[err.problem];
  return problem(code, file, err.member, err.message);
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

export const hashLookup = (raw: Record<string, unknown>) => {
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

export const START_MEMBER = '_journal/start.json';
export const HEADER_MEMBER = 'header.json';
export const journalStartSchema = z.looseObject({
  version: z.int().nullish(),
  eval: inspectEvalSpecSchema,
  plan: z.record(z.string(), z.unknown()).nullish(),
});

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function checkSample(file: string, member: string, raw: Record<string, unknown>): SampleItem {
  // The common shape passes a cheaper check; anything else goes to zod (its first issue is the error).
  if (sampleLooksValid(raw)) return { member, sample: raw as InspectSample };
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
export function memberKey(key: string): { id: string; epoch: number } {
  const m = /^(.*)_epoch_(\d+)$/.exec(key);
  return m ? { id: m[1]!, epoch: Number(m[2]) } : { id: key, epoch: 0 };
}
