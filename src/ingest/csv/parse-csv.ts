/**
 * A strict, streaming RFC 4180 CSV parser.
 *
 * Bytes arrive in chunks (from a file read stream); each chunk is cut at a UTF-8 sequence
 * boundary and decoded with a fatal `TextDecoder`, and the text is scanned by a hand-written
 * character state machine (no regular expressions, no per-line splitting). Records are handed to
 * a callback as an array of field strings plus the physical line the record starts on.
 *
 * Accepted: comma-separated fields; fields quoted with `"` (a quote inside is written `""`, and a
 * quoted field may span lines); LF or CRLF line endings (mixed is fine); a UTF-8 byte-order mark
 * at the start of the file; blank lines (skipped, but counted for line numbers); a missing final
 * line ending.
 *
 * Rejected (reported through `onError` with the line and the field index):
 * - bytes that are not UTF-8 (`ingest.notUtf8`; the rest of the record is dropped, parsing goes on);
 * - a field longer than `maxFieldChars` (`ingest.fieldTooLarge`; the field is not buffered);
 * - a quote inside an unquoted field, or anything but a comma or line end after a closing quote
 *   (`ingest.badQuote`; fatal: the parser stops, as the record boundaries are no longer known);
 * - a carriage return not followed by a line feed outside quotes (`ingest.badLineEnding`; fatal);
 * - an opening quote never closed (`ingest.unterminatedQuote`; fatal, found at end of input);
 * - a record with more than `maxFields` fields (`ingest.tooManyFields`; fatal).
 */
import { createReadStream } from 'node:fs';

/** Default largest field, in UTF-16 code units (characters for all practical text): 1 MiB. */
export const MAX_FIELD_CHARS = 1024 * 1024;
/** Default largest number of fields in one record. */
export const MAX_FIELDS = 4096;

export type CsvProblem =
  | 'notUtf8'
  | 'fieldTooLarge'
  | 'badQuote'
  | 'badLineEnding'
  | 'unterminatedQuote'
  | 'tooManyFields';

export interface CsvError {
  problem: CsvProblem;
  /** Physical line (1-based) where the problem is. */
  line: number;
  /** 0-based index of the field in its record. */
  field: number;
  message: string;
  /** The parser stopped after this error. */
  fatal: boolean;
}

export interface CsvHandlers {
  /**
   * Called once per record with its fields (the array is reused: copy what you keep) and the
   * physical line the record starts on. Return `false` to stop parsing.
   */
  onRecord(fields: string[], line: number): boolean | void;
  /** Called for each problem. Return `false` to stop parsing. Records with a problem are not passed to onRecord. */
  onError(error: CsvError): boolean | void;
}

export interface CsvParserOptions {
  maxFieldChars?: number;
  maxFields?: number;
}

const QUOTE = 34; // "
const COMMA = 44; // ,
const LF = 10;
const CR = 13;

const enum State {
  /** At the start of a field (after a comma, or at the start of a record). */
  FieldStart,
  /** Inside an unquoted field; `start` marks where its text begins in the current chunk. */
  Unquoted,
  /** Inside a quoted field. */
  Quoted,
  /** Just read a quote inside a quoted field: either an escaped quote or the closing one. */
  QuoteInQuoted,
  /** Read a CR at a record end; an LF must follow. */
  AfterCr,
  /** Stopped (fatal error or the handler asked to stop). */
  Done,
}

/**
 * UTF-8 validation as the WHATWG decoder does it (so it agrees with `TextDecoder`): returns the
 * index of the first byte that starts an invalid or truncated sequence in `[from, to)`, or `to`.
 */
export function firstInvalidUtf8(bytes: Uint8Array, from: number, to: number): number {
  let i = from;
  while (i < to) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= to) return i; // truncated
    const b1 = bytes[i + 1]!;
    if (b1 < lo || b1 > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return to;
}

/** Length of the longest prefix of `bytes[0, n)` that does not end inside a multi-byte sequence. */
function completeLength(bytes: Uint8Array, n: number): number {
  for (let k = n - 1; k >= 0 && k >= n - 3; k--) {
    const b = bytes[k]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    if (b < 0xc0) return n; // ASCII
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return n - k < len ? k : n;
  }
  return n;
}

const hex = (b: number) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * The push parser. Feed it byte chunks with `push`, then call `end`. Used by `parseCsvFile`, and
 * directly by tests (any chunking gives the same records).
 */
export class CsvParser {
  private readonly maxFieldChars: number;
  private readonly maxFields: number;
  private readonly h: CsvHandlers;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  private state: State = State.FieldStart;
  /** Fields of the current record (reused across records); `nfields` of them are set. */
  private readonly fields: string[] = [];
  private nfields = 0;
  /** Text of the current field carried over from earlier chunks (or built from escaped quotes). */
  private partial = '';
  private partialLen = 0;
  /** The current field exceeded the size limit (its text is no longer kept). */
  private oversize = false;
  /** The current field was quoted (so an empty line `""` is a record, not a blank line). */
  private quoted = false;
  /** The current record had a problem: it is dropped at its end. */
  private bad = false;
  private line = 1;
  private recordLine = 1;
  /** Line where the current field starts (a quoted field may span lines). */
  private fieldLine = 1;
  /** Bytes of an incomplete UTF-8 sequence at the end of the last chunk. */
  private carry: Uint8Array | null = null;
  private first = true;
  private sawBytes = false;
  /** Number of records passed to onRecord. */
  records = 0;

  constructor(handlers: CsvHandlers, opts: CsvParserOptions = {}) {
    this.h = handlers;
    this.maxFieldChars = opts.maxFieldChars ?? MAX_FIELD_CHARS;
    this.maxFields = opts.maxFields ?? MAX_FIELDS;
  }

  /** True once parsing stopped (fatal error, or a handler returned false). */
  get stopped(): boolean {
    return this.state === (State.Done as State);
  }

  /** True when the input had any bytes besides a byte-order mark. */
  get hadContent(): boolean {
    return this.sawBytes;
  }

  push(chunk: Uint8Array): void {
    if (this.stopped || chunk.length === 0) return;
    let bytes = chunk;
    if (this.carry) {
      const joined = new Uint8Array(this.carry.length + chunk.length);
      joined.set(this.carry, 0);
      joined.set(chunk, this.carry.length);
      bytes = joined;
      this.carry = null;
    }
    if (this.first) {
      if (bytes.length < 3 && bytes[0] === 0xef && (bytes.length < 2 || bytes[1] === 0xbb)) {
        // Too short to tell whether this is a BOM: wait for more.
        this.carry = bytes.slice();
        return;
      }
      this.first = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
      if (bytes.length === 0) return;
    }
    this.sawBytes = true;
    const n = completeLength(bytes, bytes.length);
    if (n < bytes.length) this.carry = bytes.slice(n);
    this.decodeAndScan(bytes, n);
  }

  end(): void {
    if (this.carry) {
      // An incomplete sequence at the end of the input (or a lone partial BOM): decoding reports it.
      const rest = this.carry;
      this.carry = null;
      this.first = false;
      this.sawBytes = true;
      this.decodeAndScan(rest, rest.length);
    }
    switch (this.state) {
      case State.Done:
        return;
      case State.Quoted:
        this.fatal('unterminatedQuote', this.fieldLine, `unterminated quoted field (the quote opened on line ${this.fieldLine} is never closed)`);
        return;
      case State.QuoteInQuoted:
        this.endField(this.partial);
        break;
      case State.Unquoted:
        this.endField(this.partial);
        break;
      case State.AfterCr:
        break; // a final CR: the record already ended its last field
      case State.FieldStart:
        if (this.nfields > 0) this.endField('');
        break;
    }
    if (this.nfields > 0 || this.bad) this.endRecord();
    this.state = State.Done;
  }

  /** Decodes `bytes[0, n)` (which ends on a sequence boundary) and scans the text. */
  private decodeAndScan(bytes: Uint8Array, n: number): void {
    let pos = 0;
    while (pos < n && !this.stopped) {
      const view = bytes.subarray(pos, n);
      let text: string;
      try {
        text = this.decoder.decode(view);
      } catch {
        // Slow path, only for bad input: scan the valid prefix, report the bad byte, skip it.
        const bad = firstInvalidUtf8(bytes, pos, n);
        if (bad >= n) {
          // Should not happen (the validator mirrors the decoder); never loop forever.
          this.scan(new TextDecoder('utf-8', { ignoreBOM: true }).decode(view));
          return;
        }
        if (bad > pos) this.scan(this.decodeLenient(bytes.subarray(pos, bad)));
        if (this.stopped) return;
        this.problem('notUtf8', this.line, `invalid UTF-8 byte ${hex(bytes[bad]!)} (the file must be UTF-8)`);
        pos = bad + 1;
        continue;
      }
      this.scan(text);
      return;
    }
  }

  /** Decodes bytes the validator found valid; falls back to replacement characters if the decoder disagrees. */
  private decodeLenient(bytes: Uint8Array): string {
    try {
      return this.decoder.decode(bytes);
    } catch {
      return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    }
  }

  private problem(problem: CsvProblem, line: number, message: string): void {
    if (this.bad && problem === 'notUtf8') return; // one encoding error per record is enough
    this.bad = true;
    const go = this.h.onError({ problem, line, field: this.nfields, message, fatal: false });
    if (go === false) this.state = State.Done;
  }

  private fatal(problem: CsvProblem, line: number, message: string): void {
    this.bad = true;
    this.h.onError({ problem, line, field: this.nfields, message, fatal: true });
    this.state = State.Done;
  }

  private endField(value: string): void {
    if (this.oversize) {
      this.oversize = false;
      this.problem('fieldTooLarge', this.fieldLine, `field longer than the limit of ${this.maxFieldChars} characters`);
      value = '';
    }
    if (this.nfields >= this.maxFields) {
      this.fatal('tooManyFields', this.recordLine, `more than ${this.maxFields} fields in one record`);
      return;
    }
    this.fields[this.nfields++] = value;
    this.partial = '';
    this.partialLen = 0;
  }

  private endRecord(): void {
    // One array for every record: its length only changes when the field count does.
    const fields = this.fields;
    if (fields.length !== this.nfields) fields.length = this.nfields;
    const blank = this.nfields === 1 && fields[0] === '' && !this.quoted;
    if (!this.bad && !blank) {
      this.records++;
      if (this.h.onRecord(fields, this.recordLine) === false) this.state = State.Done;
    }
    this.nfields = 0;
    this.bad = false;
    this.quoted = false;
  }

  /** Appends text to the current field, enforcing the size limit without buffering past it. */
  private append(text: string): void {
    if (this.oversize) return;
    const len = this.partialLen + text.length;
    if (len > this.maxFieldChars) {
      this.oversize = true;
      this.partial = '';
      this.partialLen = 0;
      return;
    }
    this.partial = this.partialLen === 0 ? text : this.partial + text;
    this.partialLen = len;
  }

  /** Counts line feeds in s[from, to). */
  private countLines(s: string, from: number, to: number): void {
    let k = s.indexOf('\n', from);
    while (k !== -1 && k < to) {
      this.line++;
      k = s.indexOf('\n', k + 1);
    }
  }

  /** The state machine over one decoded chunk. */
  private scan(s: string): void {
    const n = s.length;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case State.Done:
          return;
        case State.FieldStart: {
          const c = s.charCodeAt(i);
          if (this.nfields === 0) this.recordLine = this.line;
          this.fieldLine = this.line;
          if (c === QUOTE) {
            this.state = State.Quoted;
            this.quoted = true;
            i++;
            continue;
          }
          this.state = State.Unquoted;
          // fall through to the unquoted scan from i
          i = this.scanUnquoted(s, i, n);
          continue;
        }
        case State.Unquoted:
          i = this.scanUnquoted(s, i, n);
          continue;
        case State.Quoted: {
          const j = s.indexOf('"', i);
          const stop = j === -1 ? n : j;
          this.countLines(s, i, stop);
          if (stop > i) this.append(s.slice(i, stop));
          if (j === -1) return;
          this.state = State.QuoteInQuoted;
          i = j + 1;
          continue;
        }
        case State.QuoteInQuoted: {
          const c = s.charCodeAt(i);
          if (c === QUOTE) {
            this.append('"');
            this.state = State.Quoted;
            i++;
          } else if (c === COMMA) {
            this.endField(this.partial);
            if (this.stopped) return;
            this.state = State.FieldStart;
            i++;
          } else if (c === LF) {
            this.endField(this.partial);
            if (this.stopped) return;
            this.endRecord();
            this.line++;
            if (this.stopped) return;
            this.state = State.FieldStart;
            i++;
          } else if (c === CR) {
            this.endField(this.partial);
            if (this.stopped) return;
            this.state = State.AfterCr;
            i++;
          } else {
            this.fatal('badQuote', this.line, `unexpected character ${JSON.stringify(s[i])} after a closing quote (a quote inside a quoted field is written "")`);
            return;
          }
          continue;
        }
        case State.AfterCr: {
          if (s.charCodeAt(i) !== LF) {
            this.fatal('badLineEnding', this.line, 'carriage return not followed by a line feed (use LF or CRLF line endings)');
            return;
          }
          this.endRecord();
          this.line++;
          if (this.stopped) return;
          this.state = State.FieldStart;
          i++;
          continue;
        }
      }
    }
  }

  /**
   * Scans an unquoted field from `i`; returns the next position. At the chunk end the text so far
   * is kept in `partial` and the state stays Unquoted.
   */
  private scanUnquoted(s: string, i: number, n: number): number {
    let j = i;
    let c = 0;
    for (; j < n; j++) {
      c = s.charCodeAt(j);
      // Every delimiter is below 45 ('-'): one comparison for most characters.
      if (c < 45 && (c === COMMA || c === LF || c === CR || c === QUOTE)) break;
    }
    if (j === n) {
      if (j > i) this.append(s.slice(i, j));
      return n;
    }
    if (c === QUOTE) {
      this.fatal('badQuote', this.line, 'quote inside an unquoted field (quote the whole field and write a quote as "")');
      return n;
    }
    let value: string;
    if (this.partialLen === 0 && !this.oversize) {
      if (j - i > this.maxFieldChars) {
        this.oversize = true;
        value = '';
      } else value = s.slice(i, j);
    } else {
      this.append(s.slice(i, j));
      value = this.partial;
    }
    this.endField(value);
    if (this.stopped) return n;
    if (c === COMMA) {
      this.state = State.FieldStart;
    } else if (c === LF) {
      this.endRecord();
      this.line++;
      if (this.stopped) return n;
      this.state = State.FieldStart;
    } else {
      this.state = State.AfterCr;
    }
    return j + 1;
  }
}

export interface ParseFileResult {
  /** Records passed to onRecord. */
  records: number;
  /** The file had bytes other than a byte-order mark. */
  hadContent: boolean;
  /** The parser stopped before the end of the file (fatal error or a handler returned false); the hash is then partial. */
  stopped: boolean;
  /** Bytes read (the file size when not stopped). */
  bytes: number;
}

/**
 * Streams a file through a `CsvParser`. `onChunk` sees every raw chunk read (used to hash the file
 * in the same pass). Read errors reject.
 */
export async function parseCsvFile(
  path: string,
  handlers: CsvHandlers,
  opts: CsvParserOptions & { onChunk?: (chunk: Buffer) => void; highWaterMark?: number } = {},
): Promise<ParseFileResult> {
  const parser = new CsvParser(handlers, opts);
  const stream = createReadStream(path, { highWaterMark: opts.highWaterMark ?? 1024 * 1024 });
  let bytes = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      opts.onChunk?.(chunk);
      parser.push(chunk);
      if (parser.stopped) break;
    }
  } finally {
    stream.destroy();
  }
  const stopped = parser.stopped;
  if (!stopped) parser.end();
  return { records: parser.records, hadContent: parser.hadContent, stopped, bytes };
}
