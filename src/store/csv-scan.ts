/**
 * The JavaScript half of Standoff's one CSV reader. DuckDB's `read_csv` (see `read-csv.ts`) parses
 * every field; this byte scanner never builds a value (except the header's names). It exists for
 * what DuckDB cannot say:
 *
 * - the header, before DuckDB is given the columns (`readCsvHeader`);
 * - which line each row came from: DuckDB names lines only for the rows it rejects, so the
 *   problems found later in SQL get their line from the scanner's `LineMap` (physical lines, the
 *   line a record starts on; DuckDB's own line numbers skip line breaks inside quoted fields and
 *   are translated back);
 * - the file's SHA-256 (provenance), in the same read;
 * - a quote inside an unquoted field (`a"b`), which DuckDB's strict mode keeps as text;
 * - a carriage return without a line feed, and line endings that change within the file, which
 *   DuckDB's strict mode reports only as "the CSV parser state machine reached an invalid state";
 * - the invalid UTF-8 byte itself and its field, and a field over 1 MiB with its field (DuckDB
 *   names neither).
 *


 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { GrowableInt32 } from '../growable-array.ts';
import { createLineCounter, type LineCounter } from './csv-lines.ts';

/** Largest field in bytes (1 MiB); a longer one is a `fieldTooLarge` problem. */
export const MAX_FIELD_BYTES = 1024 * 1024;
/** Largest number of fields in the header. */
export const MAX_FIELDS = 4096;
/** Problems kept per file (in line order; far more than any error list shows). */
const MAX_PROBLEMS = 1000;

export type CsvProblemCode =
  | 'emptyFile'
  | 'notUtf8'
  | 'badQuote'
  | 'unterminatedQuote'
  | 'badLineEnding'
  | 'fieldTooLarge'
  | 'tooManyFields';

/** A structural problem, at a physical line; `field` is the 0-based field index (null: the whole record). */
export interface CsvProblem {
  code: CsvProblemCode;
  line: number;
  /** Record index (0 = the header). */
  record: number;
  field: number | null;
  message: string;
  /** Nothing after it can be read reliably (the scan stopped). */
  fatal: boolean;
}


/**
 * Where each record starts: its physical line, and DuckDB's line (which counts line breaks outside
 * quotes only). Stored only where either differs from the previous record's + 1, so a file without
 * blank lines or multi-line fields holds one entry.
 */
export class LineMap {
  private readonly rec = new GrowableInt32(64);
  private readonly phys = new GrowableInt32(64);
  private readonly duck = new GrowableInt32(64);

  /** Registers record `record` starting at `phys` / `duck` (records in increasing order). */
  add(record: number, phys: number, duck: number): void {
    const n = this.rec.length;
    if (n > 0) {
      const d = record - this.rec.last;
      if (this.phys.last + d === phys && this.duck.last + d === duck) return;
    }
    this.rec.push(record);
    this.phys.push(phys);
    this.duck.push(duck);
  }

  /** Index of the last entry with `list[i] <= x` (entries are increasing), or -1. */
  private static floor(list: GrowableInt32, x: number): number {
    let lo = 0;
    let hi = list.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list.at(mid) <= x) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }

  /** The physical line record `record` starts on. */
  physLine(record: number): number {
    const i = LineMap.floor(this.rec, record);
    if (i < 0) return record + 1;
    return this.phys.at(i) + (record - this.rec.at(i));
  }

  /** The record starting on DuckDB's line `line`, or null (a blank line, or past the end). */
  recordAtDuckLine(line: number, records: number): number | null {
    const i = LineMap.floor(this.duck, line);
    if (i < 0) return null;
    const r = this.rec.at(i) + (line - this.duck.at(i));
    if (i + 1 < this.rec.length && r >= this.rec.at(i + 1)) return null;
    return r < records ? r : null;
  }

  /** The entries as (record, physical line) pairs, for SQL (`read-csv.ts`). */
  entries(): { record: number; line: number }[] {
    const out: { record: number; line: number }[] = [];
    for (let i = 0; i < this.rec.length; i++) out.push({ record: this.rec.at(i), line: this.phys.at(i) });
    return out;
  }
}

export interface CsvScan {
  /** Header names (null: no header record). */
  header: string[] | null;
  /** Blank lines before the header (DuckDB's `skip`). */
  skip: number;
  /** Records, the header included. */
  records: number;
  bytes: number;
  /** SHA-256 of the bytes read (hex; the whole file unless the scan stopped early). */
  sha256: string;
  problems: CsvProblem[];
  /** The first fatal problem, if any (the scan stopped there). */
  fatal: CsvProblem | null;
  lines: LineMap;
}

const QUOTE = 34;
const LF = 10;
const CR = 13;
const NLNL = Buffer.from('\n\n');

const enum S {
  FieldStart,
  Unquoted,
  Quoted,
  QuoteInQuoted,
  AfterCr,
  Stopped,
}

const hex = (b: number) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`;

/** The byte scanner (see the module comment). Feed chunks with `push`, then call `end`. */
export class CsvScanner {
  private st = S.FieldStart;
  private line = 1;
  private duck = 1;
  private rec = 0;
  private field = 0;
  private fieldBytes = 0;
  private recStarted = false;
  private quoteLine = 0;
  private quoteRecord = 0;
  private quoteField = 0;
  /** 0 unknown, 1 LF, 2 CRLF. */
  private eol = 0;
  private atStart = true;
  private skip = 0;
  /** UTF-8 continuation bytes still expected, and the bounds of the next one. */
  private need = 0;
  private lead = 0;
  private lo = 0x80;
  private hi = 0xbf;
  private utf8Record = -1;
  private tooLargeField = -1;
  private badQuoteField = -1;
  /** Offset in the file of the chunk being walked. */
  private chunkBase = 0;
  /** Byte offset just past the header's line ending (-1: not reached). */
  headerEnd = -1;
  /** The header's line ending (1 LF, 2 CRLF). */
  headerEol: 1 | 2 = 1;
  /** A line break inside a quoted header field. */
  headerMultiline = false;
  private headerFields: number[][] | null = [[]];
  private headerNames: string[] | null = null;
  readonly problems: CsvProblem[] = [];
  fatal: CsvProblem | null = null;
  readonly lines = new LineMap();
  bytes = 0;

  /** The field delimiter byte (a comma unless the dialect says otherwise). */
  private readonly delim: number;
  /** The file starts with a UTF-8 byte-order mark. */
  bom = false;

  /**
   * `counter`: chunks read into its buffer are tested and their lines counted by its SIMD kernel
   * on the fast path (`plainLines`); other chunks by `indexOf`.
   */
  constructor(private readonly opts: { stopAfterHeader?: boolean; delimiter?: string; counter?: LineCounter } = {}) {
    this.delim = (opts.delimiter ?? ',').charCodeAt(0);
  }

  /** The scan stopped: a fatal problem, or the header was all that was asked for. */
  get done(): boolean {
    return this.st === S.Stopped;
  }

  private problem(code: CsvProblemCode, field: number | null, message: string, fatal = false, line = this.line, record = this.rec): void {
    const p: CsvProblem = { code, line, record, field, message, fatal };
    if (this.problems.length < MAX_PROBLEMS || fatal) this.problems.push(p);
    if (fatal) {
      this.fatal = p;
      this.st = S.Stopped;
    }
  }

  private startRecord(): void {
    this.recStarted = true;
    this.lines.add(this.rec, this.line, this.duck);
  }

  private endLine(kind: 1 | 2, at: number): void {
    if (this.rec === 0 && this.recStarted) {
      this.headerEnd = this.chunkBase + at + 1;
      this.headerEol = kind;
    }
    if (this.rec === 0 && !this.recStarted) {
      // A blank line before the header: skipped (DuckDB's `skip`), whatever its line ending.
      this.skip++;
      this.line++;
      this.duck++;
      this.st = S.FieldStart;
      return;
    }
    if (this.eol === 0) this.eol = kind;
    else if (this.eol !== kind) {
      const [now, before] = kind === 2 ? ['CRLF', 'LF'] : ['LF', 'CRLF'];
      this.problem('badLineEnding', null, `line ends with ${now} but the lines before end with ${before}; DuckDB's strict CSV reader needs one line ending throughout (convert with dos2unix or unix2dos)`, true);
      return;
    }
    if (!this.recStarted) {
      // A blank line: no record; DuckDB counts it too.
      this.line++;
      this.duck++;
      this.st = S.FieldStart;
      return;
    }
    this.endRecord();
    this.line++;
    this.duck++;
    if (this.st !== S.Stopped) this.st = S.FieldStart;
  }

  private endRecord(): void {
    if (this.rec === 0 && this.headerFields) {
      const dec = new TextDecoder('utf-8', { fatal: true });
      const names: string[] = [];
      for (let i = 0; i < this.headerFields.length; i++) {
        try {
          names.push(dec.decode(Uint8Array.from(this.headerFields[i]!)));
        } catch {
          names.push(`column ${i + 1}`);
        }
      }
      this.headerNames = names;
      this.headerFields = null;
      if (this.opts.stopAfterHeader) {
        this.rec++;
        this.st = S.Stopped;
        return;
      }
    }
    this.rec++;
    this.field = 0;
    this.fieldBytes = 0;
    this.recStarted = false;
    this.utf8Record = -1;
    this.tooLargeField = -1;
    this.badQuoteField = -1;
  }

  private nextField(): void {
    this.field++;
    this.fieldBytes = 0;
    if (this.rec === 0 && this.headerFields) {
      if (this.field >= MAX_FIELDS) {
        this.problem('tooManyFields', this.field, `the header has more than ${MAX_FIELDS} fields`, true);
        return;
      }
      this.headerFields.push([]);
    }
  }

  private content(b: number): void {
    if (++this.fieldBytes > MAX_FIELD_BYTES && this.tooLargeField !== this.field) {
      this.tooLargeField = this.field;
      this.problem('fieldTooLarge', this.field, `field longer than the limit of ${MAX_FIELD_BYTES} bytes`, this.rec === 0);
    }
    if (this.headerFields && this.rec === 0 && this.fieldBytes <= MAX_FIELD_BYTES) this.headerFields[this.field]!.push(b);
  }

  /** UTF-8 validity of byte `b` (RFC 3629 ranges: no overlongs, surrogates or code points above U+10FFFF). */
  private utf8(b: number): void {
    if (this.need > 0) {
      if (b >= this.lo && b <= this.hi) {
        this.need--;
        this.lo = 0x80;
        this.hi = 0xbf;
        return;
      }
      this.badUtf8(this.lead);
      this.need = 0;
      this.lo = 0x80;
      this.hi = 0xbf;
      if (b < 0x80) return;
    }
    if (b < 0x80) return;
    this.lead = b;
    if (b >= 0xc2 && b <= 0xdf) this.need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      this.need = 2;
      if (b === 0xe0) this.lo = 0xa0;
      else if (b === 0xed) this.hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      this.need = 3;
      if (b === 0xf0) this.lo = 0x90;
      else if (b === 0xf4) this.hi = 0x8f;
    } else this.badUtf8(b);
  }

  private badUtf8(b: number): void {
    if (this.utf8Record === this.rec) return; // one per record, as the record is rejected
    this.utf8Record = this.rec;
    const field = this.st === S.FieldStart && !this.recStarted ? 0 : this.field;
    this.problem('notUtf8', field, `invalid UTF-8 byte ${hex(b)} (convert the file to UTF-8 first, e.g. iconv -f latin1 -t utf-8)`);
  }

  /** Feeds one chunk. */
  push(chunk: Uint8Array): void {
    let i = 0;
    const n = chunk.length;
    if (this.atStart && n > 0) {
      // A UTF-8 byte-order mark (split across chunks only in pathological cases; then it is content).
      if (n >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        i = 3;
        this.bom = true;
      }
      this.atStart = false;
    }
    this.bytes += n;
    if (this.st === S.Stopped) return;
    if (i === 0 && this.fast(chunk)) return;
    this.slow(chunk, i, n);
  }

  /** The fast path over a whole chunk, when it applies (see the module comment); true when taken. */
  private fast(chunk: Uint8Array): boolean {
    if (this.rec === 0 || this.need > 0 || this.eol === 2 || (this.st !== S.FieldStart && this.st !== S.Unquoted)) return false;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const last = buf.lastIndexOf(LF);
    if (last < 0) return false;
    const seg = buf.subarray(0, last + 1);
    if (!this.recStarted && seg[0] === LF) return false;
    const count = this.plainLines(seg);
    if (count < 0 || !isUtf8(seg)) return false;
    if (!this.recStarted) this.startRecord();
    this.eol = 1;
    // Records rec .. rec + count - 1 end here; their starts keep the same offsets (no entries).
    this.rec += count;
    this.line += count;
    this.duck += count;
    this.field = 0;
    this.fieldBytes = 0;
    this.recStarted = false;
    this.utf8Record = -1;
    this.tooLargeField = -1;
    this.badQuoteField = -1;
    this.st = S.FieldStart;
    if (last + 1 < chunk.length) this.slow(chunk, last + 1, chunk.length);
    return true;
  }

  /**
   * The lines of a segment that ends with a line feed, or -1 when the fast path does not apply: a
   * quote, a carriage return, a blank line, or a line longer than the field limit (the first line
   * continues the field being read). In the counter's buffer one SIMD pass tests and counts; a
   * segment of at most the limit + 1 bytes can hold a longer line only as its first, which is
   * measured alone. Otherwise `indexOf`, line by line.
   */
  private plainLines(seg: Buffer): number {
    const counter = this.opts.counter;
    if (counter && seg.length <= MAX_FIELD_BYTES + 1 && counter.holds(seg)) {
      return seg.indexOf(LF) + this.fieldBytes > MAX_FIELD_BYTES ? -1 : counter.plainLines(seg);
    }
    if (seg.indexOf(QUOTE) >= 0 || seg.indexOf(CR) >= 0 || seg.indexOf(NLNL) >= 0) return -1;
    let count = 0;
    let prev = -1;
    let first = true;
    for (let j = seg.indexOf(LF); j >= 0; j = seg.indexOf(LF, j + 1)) {
      const len = j - prev - 1 + (first ? this.fieldBytes : 0);
      if (len > MAX_FIELD_BYTES) return -1;
      first = false;
      prev = j;
      count++;
    }
    return count;
  }

  private slow(chunk: Uint8Array, from: number, to: number): void {
    this.chunkBase = this.bytes - chunk.length;
    for (let i = from; i < to; i++) {
      if (this.st === S.Stopped) return;
      const b = chunk[i]!;
      if (b >= 0x80 || this.need > 0) this.utf8(b);
      switch (this.st) {
        case S.FieldStart:
          if (b === QUOTE) {
            if (!this.recStarted) this.startRecord();
            this.st = S.Quoted;
            this.quoteLine = this.line;
            this.quoteRecord = this.rec;
            this.quoteField = this.field;
          } else if (b === this.delim) {
            if (!this.recStarted) this.startRecord();
            this.nextField();
          } else if (b === LF) this.endLine(1, i);
          else if (b === CR) this.st = S.AfterCr;
          else {
            if (!this.recStarted) this.startRecord();
            this.st = S.Unquoted;
            this.content(b);
          }
          break;
        case S.Unquoted:
          if (b === this.delim) {
            this.st = S.FieldStart;
            this.nextField();
          } else if (b === LF) this.endLine(1, i);
          else if (b === CR) this.st = S.AfterCr;
          else {
            if (b === QUOTE && this.badQuoteField !== this.field) {
              this.badQuoteField = this.field;
              this.problem('badQuote', this.field, 'quote inside an unquoted field (quote the whole field and write the quote as "")', this.rec === 0);
            }
            this.content(b);
          }
          break;
        case S.Quoted:
          if (b === QUOTE) this.st = S.QuoteInQuoted;
          else {
            if (b === LF) this.line++;
            if ((b === LF || b === CR) && this.rec === 0) this.headerMultiline = true;
            this.content(b);
          }
          break;
        case S.QuoteInQuoted:
          if (b === QUOTE) {
            this.st = S.Quoted;
            this.content(b);
          } else if (b === this.delim) {
            this.st = S.FieldStart;
            this.nextField();
          } else if (b === LF) this.endLine(1, i);
          else if (b === CR) this.st = S.AfterCr;
          else this.problem('badQuote', this.field, 'text after the closing quote of a quoted field', true);
          break;
        case S.AfterCr:
          if (b === LF) this.endLine(2, i);
          else this.problem('badLineEnding', this.recStarted ? this.field : null, 'carriage return not followed by a line feed', true);
          break;
      }
    }
  }

  /** Ends the input: closes the last record, reports an unterminated quote. */
  end(): void {
    if (this.st === S.Stopped) return;
    if (this.need > 0 && this.utf8Record !== this.rec) {
      this.problem('notUtf8', this.field, 'truncated UTF-8 sequence at the end of the file');
    }
    if (this.st === S.Quoted) {
      this.problem('unterminatedQuote', this.quoteField, `unterminated quoted field (the quote opened on line ${this.quoteLine} is never closed)`, true, this.quoteLine, this.quoteRecord);
      return;
    }
    if (this.st === S.AfterCr) {
      this.problem('badLineEnding', null, 'carriage return not followed by a line feed', true);
      return;
    }
    if (this.recStarted) this.endRecord();
  }

  result(sha256 = ''): CsvScan {
    return {
      header: this.headerNames,
      skip: this.skip,
      records: this.rec,
      bytes: this.bytes,
      sha256,
      problems: this.problems,
      fatal: this.fatal,
      lines: this.lines,
    };
  }
}

/**
 * Scans a whole file (hashing it); see `CsvScanner`. One 1 MiB buffer, read into again and again
 * (the scanner copies what it keeps): a read stream's fresh buffer per chunk cost a fifth more CPU.
 * The buffer is a line counter's (`csv-lines.ts`), so the fast path tests and counts in place.
 */
export async function scanCsvFile(file: string, delimiter = ','): Promise<CsvScan> {
  const counter = createLineCounter();
  const scanner = new CsvScanner({ delimiter, counter });
  const hash = createHash('sha256');
  const fh = await open(file, 'r');
  try {
    const buf = counter.buffer;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      hash.update(chunk);
      scanner.push(chunk);
    }
  } finally {
    await fh.close();
  }
  scanner.end();
  return scanner.result(hash.digest('hex'));
}

/**
 * Reads only as far as the header. Returns the header names (null when the file has no record),
 * the blank lines before it, and the problems met on the way (a broken header is fatal).
 */
export interface CsvHead {
  header: string[] | null;
  /** Blank lines before the header. */
  skip: number;
  problems: CsvProblem[];
  /** Byte offset just past the header's line ending (-1: the file ends in the header). */
  headerEnd: number;
  /** The header's line ending. */
  eol: '\n' | '\r\n';
  /** The file starts with a UTF-8 byte-order mark. */
  bom: boolean;
  /** The field delimiter the header was split on. */
  delimiter: string;
  /** A quoted header field holds a line break (DuckDB 1.5's strict reader then loses every row of a CRLF file; see `csvSourceFor`). */
  multiline: boolean;
}

export async function readCsvHeader(file: string, delimiter = ','): Promise<CsvHead> {
  const scanner = new CsvScanner({ stopAfterHeader: true, delimiter });
  const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream) {
      scanner.push(chunk as Buffer);
      if (scanner.done) break;
    }
  } finally {
    stream.destroy();
  }
  if (!scanner.done) scanner.end();
  const r = scanner.result();
  // Problems inside the header make it unusable (DuckDB would get wrong columns).
  const problems = r.problems.filter((p) => p.record === 0);
  if (problems.length > 0 && !problems.some((p) => p.fatal)) problems[0] = { ...problems[0]!, fatal: true };
  return {
    header: problems.length > 0 ? null : r.header,
    skip: r.skip,
    problems,
    headerEnd: scanner.headerEnd,
    eol: scanner.headerEol === 2 ? '\r\n' : '\n',
    bom: scanner.bom,
    delimiter,
    multiline: scanner.headerMultiline,
  };
}
