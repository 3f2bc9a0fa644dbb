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
import type { StandoffError } from '../../errors.ts';
import type { ZipLimits } from './zip.ts';
import { openEvalLog } from './eval-log.ts';
import { JsonTooDeep, isTooDeep, parseJsonTolerant } from './json.ts';
import { checkRaw, hashLookup, inspectHeaderSchema, isRecord, problem, zodProblem, type OpenResult, type SampleItem } from './log-parts.ts';

export { JsonTooDeep, MAX_JSON_DEPTH, isTooDeep, parseJsonTolerant, resolveAttachments } from './json.ts';
export {
  inspectEvalSpecSchema,
  inspectHeaderSchema,
  inspectMessageSchema,
  inspectSampleSchema,
  inspectScoreSchema,
  naturalCompare,
  problem,
  type InspectHeader,
  type InspectLogReader,
  type InspectMessage,
  type InspectSample,
  type InspectScore,
  type OpenResult,
  type SampleItem,
} from './log-parts.ts';

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
