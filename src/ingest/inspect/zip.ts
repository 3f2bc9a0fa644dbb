/**
 * A small streaming zip reader for Inspect `.eval` logs.
 *
 * The archive is never loaded whole: the end-of-central-directory record (and its Zip64 variant)
 * is found in the last 64 KiB of the file, the central directory is read once, and each member is
 * then read by offset through a bounded window buffer and decompressed on its own. Members are
 * small (one sample each), so one member in memory at a time is the peak cost; reading members in
 * offset order ({@link ZipReader.entriesInFileOrder}) makes the window turn sequential reads into
 * few large syscalls.
 *
 * Supported: compression methods 0 (stored), 8 (deflate, via node:zlib) and 93 (zstd, via fzstd);
 * Zip64 end records and Zip64 extra fields (archives with more than 65,535 members or above
 * 4 GiB); data descriptors (sizes are taken from the central directory, which is authoritative).
 * CRC-32 is verified for every member. Not supported: encryption, multi-disk archives and other
 * compression methods; they raise a {@link ZipError} naming the member.
 *
 * Bounded: an archive whose central directory declares a member larger than
 * `limits.maxMemberBytes` (default 256 MiB) or, above 1 MiB, inflating more than
 * `limits.maxRatio` times its compressed size (default 1000; deflate cannot do much better on
 * honest data) is refused when it is opened (`tooLarge`), before anything is inflated. Each member
 * is then inflated chunk by chunk up to its declared size and no further (node's zlib stops at
 * `maxOutputLength`; zstd goes through fzstd's streaming decoder with a running count), so a
 * directory that lies about a size cannot make a member larger either. Two more checks when it is
 * opened: members whose bytes overlap (directory entries sharing compressed data, each inflating
 * it again) are refused, and so is an archive whose members together inflate to more than
 * `maxRatio` times the file's size; so the work an archive can cause is bounded by its size.
 *
 * Errors are {@link ZipError}s with a `problem` (`empty`, `notZip`, `truncated`, `corrupt`,
 * `unsupported`, `tooLarge`) and, where it applies, the member name; callers turn them into data
 * errors.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';

export type ZipProblem = 'empty' | 'notZip' | 'truncated' | 'corrupt' | 'unsupported' | 'tooLarge';

/** Caps on what one member may inflate to (see the module comment). */
export interface ZipLimits {
  /** Largest inflated member, in bytes. */
  maxMemberBytes: number;
  /** Largest inflated / compressed size ratio, for members above {@link RATIO_FLOOR_BYTES}. */
  maxRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxMemberBytes: 256 * 1024 * 1024, maxRatio: 1000 };
/** Small members may compress very well (a run of spaces); the ratio cap starts above this. */
export const RATIO_FLOOR_BYTES = 1024 * 1024;

export class ZipError extends Error {
  readonly problem: ZipProblem;
  readonly member: string | null;
  constructor(problem: ZipProblem, message: string, member: string | null = null) {
    super(message);
    this.name = 'ZipError';
    this.problem = problem;
    this.member = member;
  }
}

export interface ZipEntry {
  /** Member name (path inside the archive, `/`-separated). */
  name: string;
  /** Compression method: 0 stored, 8 deflate, 93 zstd (others are refused on read). */
  method: number;
  flags: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  /** Position in the central directory (later entries win on duplicate names). */
  index: number;
}

export const METHOD_STORED = 0;
export const METHOD_DEFLATE = 8;
export const METHOD_ZSTD = 93;

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;
const LOCAL_HEADER_SIZE = 30;
/** Read-ahead window: members are read through it so neighbouring members cost one syscall. */
const WINDOW_BYTES = 1 << 20;

// --- CRC-32 (zlib.crc32 when the runtime has it: Node >= 20.15) -------------------------------

let crcTable: Uint32Array | null = null;
function crc32Js(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = crcTable[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
const nativeCrc = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
export const crc32: (data: Uint8Array) => number =
  typeof nativeCrc === 'function' ? (d) => nativeCrc(d) >>> 0 : crc32Js;

// --- reader ------------------------------------------------------------------------------------

export class ZipReader {
  readonly path: string;
  readonly fileSize: number;
  /** Central directory entries in directory order (duplicates included). */
  readonly entries: ZipEntry[];
  /** Bytes read from the file for members so far (the read-ahead window included). */
  bytesRead = 0;
  private readonly byName = new Map<string, ZipEntry>();
  private fd: number;
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;
  private windowLength = 0;
  /** End of the last range read outside the window (to tell reading on from jumps). */
  private lastEnd = 0;
  /** Ranges read outside the window (see `bytesAt`). */
  private scratch: Buffer = Buffer.alloc(0);

  private constructor(path: string, fd: number, fileSize: number, entries: ZipEntry[]) {
    this.path = path;
    this.fd = fd;
    this.fileSize = fileSize;
    this.entries = entries;
    for (const e of entries) this.byName.set(e.name, e); // last entry of a name wins (as Inspect reads)
  }

  /** Opens an archive and reads its central directory, refusing members over `limits`. Throws {@link ZipError}. */
  static open(path: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipReader {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const entries = readCentralDirectory(fd, size);
      for (const e of entries) checkLimits(e, limits);
      checkOverlaps(entries);
      checkTotal(entries, size, limits);
      return new ZipReader(path, fd, size, entries);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The member of that name (the last one when a name repeats). */
  entry(name: string): ZipEntry | undefined {
    return this.byName.get(name);
  }

  /** Unique members (last entry per name), ordered by their position in the file. */
  entriesInFileOrder(): ZipEntry[] {
    return [...this.byName.values()].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  }

  /** Reads and decompresses one member, verifying its size and CRC-32. */
  read(entry: ZipEntry): Uint8Array {
    const name = entry.name;
    if (entry.flags & 0x1) throw new ZipError('unsupported', 'member is encrypted', name);
    if (entry.method !== METHOD_STORED && entry.method !== METHOD_DEFLATE && entry.method !== METHOD_ZSTD) {
      throw new ZipError('unsupported', `unsupported compression method ${entry.method} (supported: 0 stored, 8 deflate, 93 zstd)`, name);
    }
    const off = entry.localHeaderOffset;
    if (off + LOCAL_HEADER_SIZE > this.fileSize) {
      throw new ZipError('truncated', `member runs past the end of the file (local header at byte ${off}, file is ${this.fileSize} bytes)`, name);
    }
    // Local header + name + a guess at the extra field + data, in one read when possible.
    let bytes = this.bytesAt(off, LOCAL_HEADER_SIZE + Buffer.byteLength(name) + 64 + entry.compressedSize);
    if (bytes.readUInt32LE(0) !== SIG_LOCAL) throw new ZipError('corrupt', `no local file header at byte ${off}`, name);
    const dataStart = off + LOCAL_HEADER_SIZE + bytes.readUInt16LE(26) + bytes.readUInt16LE(28);
    const dataEnd = dataStart + entry.compressedSize;
    if (dataEnd > this.fileSize) {
      throw new ZipError('truncated', `member runs past the end of the file (needs bytes up to ${dataEnd}, file is ${this.fileSize} bytes)`, name);
    }
    if (dataEnd - off > bytes.length) bytes = this.bytesAt(off, dataEnd - off);
    const compressed = bytes.subarray(dataStart - off, dataEnd - off);
    let out: Uint8Array;
    try {
      if (entry.method === METHOD_STORED) out = new Uint8Array(compressed); // a copy: the window is reused
      else if (entry.method === METHOD_DEFLATE) {
        // node's zlib (native) is about twice as fast as fflate here; the bound stops a lying size.
        out = zlib.inflateRawSync(compressed, { maxOutputLength: Math.max(entry.size, 1) });
      } else out = zstdBounded(compressed, entry.size);
    } catch (err) {
      const how = entry.method === METHOD_ZSTD ? 'zstd' : 'deflate';
      throw new ZipError('corrupt', `cannot decompress (${how}): ${(err as Error).message}`, name);
    }
    if (out.length !== entry.size) {
      throw new ZipError('corrupt', `decompressed to ${out.length} bytes, the central directory says ${entry.size}`, name);
    }
    if (crc32(out) !== entry.crc32) throw new ZipError('corrupt', 'CRC-32 mismatch (the member is damaged)', name);
    return out;
  }

  /** Reads and decodes one member as UTF-8 text. */
  readText(entry: ZipEntry): string {
    const b = this.read(entry);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
    }
  }

  /**
   * `length` bytes from `start` (fewer at end of file), served from the read-ahead window. A miss
   * at or after the window's start reads the next window from `start` when it reads on: less than
   * a window past the window's end, or less than a window on from the last range read outside
   * it. Any other range (a step back, or a jump far ahead) is read on its own into a scratch
   * buffer, and the window is kept: a log lists its samples in the order they finished, so reading
   * them in run order steps back a few members and then on again, and each step back used to
   * replace the window, so the next step on read another 1 MiB (830 MB read for a 6 MB log).
   */
  private bytesAt(start: number, length: number): Buffer {
    const end = Math.min(start + length, this.fileSize);
    const windowEnd = this.windowStart + this.windowLength;
    if (start >= this.windowStart && end <= windowEnd) {
      return this.window.subarray(start - this.windowStart, end - this.windowStart);
    }
    // The window only moves forward, so it reads each byte of the file about once at most.
    const readsOn = start >= this.windowStart && (start - windowEnd < WINDOW_BYTES || (start >= this.lastEnd && start - this.lastEnd < WINDOW_BYTES));
    this.lastEnd = end;
    if (readsOn) {
      const want = Math.max(end - start, WINDOW_BYTES);
      if (this.window.length < want) this.window = Buffer.allocUnsafe(want);
      this.windowLength = this.readInto(this.window, start, Math.min(want, this.fileSize - start)).length;
      this.windowStart = start;
      return this.window.subarray(0, Math.min(this.windowLength, end - start));
    }
    // The scratch buffer is kept (at most a window's size); a larger range gets a buffer of its own.
    if (end - start > WINDOW_BYTES) return this.readInto(Buffer.allocUnsafe(end - start), start, end - start);
    if (this.scratch.length < WINDOW_BYTES) this.scratch = Buffer.allocUnsafe(WINDOW_BYTES);
    return this.readInto(this.scratch, start, end - start);
  }

  /** `length` bytes from `position` into the start of `buf` (fewer at end of file), counted in {@link bytesRead}. */
  private readInto(buf: Buffer, position: number, length: number): Buffer {
    const n = readFully(this.fd, buf, length, position);
    this.bytesRead += n;
    return buf.subarray(0, n);
  }
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

/** Refuses a member whose declared size or ratio is over the limits (a zip bomb). */
function checkLimits(e: ZipEntry, limits: ZipLimits): void {
  if (e.size > limits.maxMemberBytes) {
    throw new ZipError('tooLarge', `member inflates to ${mib(e.size)}, more than the ${mib(limits.maxMemberBytes)} allowed (a zip bomb?); raise it with --max-member-size if the log is genuine`, e.name);
  }
  const ratio = e.size / Math.max(e.compressedSize, 1);
  if (e.size > RATIO_FLOOR_BYTES && ratio > limits.maxRatio) {
    throw new ZipError('tooLarge', `member inflates ${Math.round(ratio)} times its compressed size (${mib(e.size)}), more than the ${limits.maxRatio}x allowed (a zip bomb?); raise it with --max-ratio if the log is genuine`, e.name);
  }
}

/**
 * Refuses members whose bytes overlap (an overlapping-member zip bomb: many directory entries
 * pointing at the same compressed data, each inflating it again). A member takes at least its
 * 30-byte local header plus its compressed data from its offset on; honest archives never share
 * a byte between two members.
 */
function checkOverlaps(entries: ZipEntry[]): void {
  const byOffset = [...entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset || a.index - b.index);
  for (let i = 1; i < byOffset.length; i++) {
    const a = byOffset[i - 1]!;
    const b = byOffset[i]!;
    const aEnd = a.localHeaderOffset + LOCAL_HEADER_SIZE + a.compressedSize;
    if (aEnd > b.localHeaderOffset) {
      throw new ZipError(
        'tooLarge',
        `member overlaps member "${a.name}" (it starts at byte ${b.localHeaderOffset}, inside bytes ${a.localHeaderOffset}-${aEnd}): directory entries that share data inflate it again and again (a zip bomb?)`,
        b.name,
      );
    }
  }
}

/**
 * Refuses an archive whose members together inflate to more than `maxRatio` times the file's size
 * (above {@link RATIO_FLOOR_BYTES}): members under the floor are not held to the ratio one by one,
 * but many of them still may not add up to a bomb.
 */
function checkTotal(entries: ZipEntry[], fileSize: number, limits: ZipLimits): void {
  let total = 0;
  for (const e of entries) total += e.size;
  const cap = Math.max(RATIO_FLOOR_BYTES, limits.maxRatio * fileSize);
  if (total > cap) {
    throw new ZipError('tooLarge', `the archive's ${entries.length} members inflate to ${mib(total)}, more than ${limits.maxRatio} times its ${mib(fileSize)} (a zip bomb?); raise it with --max-ratio if the log is genuine`);
  }
}

/** zstd, decoded chunk by chunk and stopped as soon as it passes the declared size. */
function zstdBounded(compressed: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  const d = new ZstdDecompress((chunk) => {
    if (at + chunk.length > size) throw new Error(`inflates past its declared ${size} bytes`);
    out.set(chunk, at);
    at += chunk.length;
  });
  d.push(compressed, true);
  return at === size ? out : out.subarray(0, at);
}

function readFully(fd: number, buf: Buffer, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = readFully(fd, buf, length, position);
  return buf.subarray(0, n);
}

/** Where the central directory is, from the end-of-central-directory record (and its zip64 record). */
interface DirectoryEnd {
  count: number;
  cdSize: number;
  cdOffset: number;
  zip64: boolean;
}

/** Finds the end-of-central-directory record: the last signature whose comment fits the file. */
function findEndRecord(fd: number, size: number, looksZip: boolean): { tail: Buffer; tailStart: number; eocd: number } {
  const tailLen = Math.min(size, EOCD_SIZE + MAX_COMMENT);
  const tailStart = size - tailLen;
  const tail = readAt(fd, tailStart, tailLen);
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail[i] === 0x50 && tail.readUInt32LE(i) === SIG_EOCD && i + EOCD_SIZE + tail.readUInt16LE(i + 20) <= tail.length) return { tail, tailStart, eocd: i };
  }
  if (looksZip) throw new ZipError('truncated', 'no end-of-central-directory record: the zip is truncated (an interrupted copy or write?)');
  throw new ZipError('notZip', 'not a zip archive (no zip signature)');
}

/** The directory's place and entry count, checked: one disk, within the file before its end record. */
function readDirectoryEnd(fd: number, size: number, looksZip: boolean, emptyZip: boolean): DirectoryEnd {
  const { tail, tailStart, eocd } = findEndRecord(fd, size, looksZip);
  const eocdPos = tailStart + eocd;
  const disk = tail.readUInt16LE(eocd + 4);
  const cdDisk = tail.readUInt16LE(eocd + 6);
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  let cdEndLimit = eocdPos;
  let zip64 = false;
  // Zip64: a locator sits right before the EOCD record and points at the Zip64 EOCD record.
  if (eocdPos >= 20) {
    const loc = readAt(fd, eocdPos - 20, 20);
    if (loc.readUInt32LE(0) === SIG_ZIP64_LOCATOR) {
      const z64Pos = Number(loc.readBigUInt64LE(8));
      const rec = z64Pos + 56 <= eocdPos - 20 ? readAt(fd, z64Pos, 56) : Buffer.alloc(0);
      if (rec.length < 56 || rec.readUInt32LE(0) !== SIG_ZIP64_EOCD) {
        throw new ZipError('corrupt', `zip64 end-of-central-directory record missing at byte ${z64Pos}`);
      }
      count = Number(rec.readBigUInt64LE(32));
      cdSize = Number(rec.readBigUInt64LE(40));
      cdOffset = Number(rec.readBigUInt64LE(48));
      cdEndLimit = z64Pos;
      zip64 = true;
    }
  }
  if (disk !== 0 || cdDisk !== 0) throw new ZipError('unsupported', 'multi-disk (split) zip archives are not supported');
  if (cdOffset + cdSize > cdEndLimit) {
    throw new ZipError('truncated', `the central directory (bytes ${cdOffset}-${cdOffset + cdSize}) runs past its end record at byte ${cdEndLimit}: the zip is truncated or damaged`);
  }
  if (count === 0 && !looksZip && !emptyZip) throw new ZipError('notZip', 'not a zip archive');
  return { count, cdSize, cdOffset, zip64 };
}

/** Zip64 extended information: 8-byte values, present only for the fields saturated at 0xFFFFFFFF. */
function zip64Sizes(cd: Buffer, start: number, extraLen: number, v: { uncompressed: number; compressedSize: number; localOffset: number }): void {
  let q = start;
  const extraEnd = q + extraLen;
  while (q + 4 <= extraEnd) {
    const id = cd.readUInt16LE(q);
    const len = cd.readUInt16LE(q + 2);
    if (id === 0x0001) {
      let r = q + 4;
      if (v.uncompressed === 0xffffffff && r + 8 <= q + 4 + len) { v.uncompressed = Number(cd.readBigUInt64LE(r)); r += 8; }
      if (v.compressedSize === 0xffffffff && r + 8 <= q + 4 + len) { v.compressedSize = Number(cd.readBigUInt64LE(r)); r += 8; }
      if (v.localOffset === 0xffffffff && r + 8 <= q + 4 + len) { v.localOffset = Number(cd.readBigUInt64LE(r)); r += 8; }
      break;
    }
    q += 4 + len;
  }
}

/** One central directory entry at `p` (`i` its index), checked to lie within the directory and its member within the file. */
function directoryEntry(cd: Buffer, p: number, i: number, count: number, size: number): { entry: ZipEntry; next: number } {
  if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) {
    throw new ZipError('corrupt', `central directory entry ${i + 1} of ${count} is damaged`);
  }
  const flags = cd.readUInt16LE(p + 8);
  const method = cd.readUInt16LE(p + 10);
  const crc = cd.readUInt32LE(p + 16);
  const v = { compressedSize: cd.readUInt32LE(p + 20), uncompressed: cd.readUInt32LE(p + 24), localOffset: cd.readUInt32LE(p + 42) };
  const nameLen = cd.readUInt16LE(p + 28);
  const extraLen = cd.readUInt16LE(p + 30);
  const commentLen = cd.readUInt16LE(p + 32);
  const nameStart = p + 46;
  if (nameStart + nameLen + extraLen + commentLen > cd.length) {
    throw new ZipError('corrupt', `central directory entry ${i + 1} of ${count} runs past the directory`);
  }
  const name = cd.toString('utf8', nameStart, nameStart + nameLen);
  if (v.uncompressed === 0xffffffff || v.compressedSize === 0xffffffff || v.localOffset === 0xffffffff) zip64Sizes(cd, nameStart + nameLen, extraLen, v);
  if (v.localOffset + LOCAL_HEADER_SIZE + v.compressedSize > size) {
    throw new ZipError('truncated', `member runs past the end of the file (starts at byte ${v.localOffset}, ${v.compressedSize} compressed bytes, file is ${size} bytes)`, name);
  }
  const entry = { name, method, flags, crc32: crc, compressedSize: v.compressedSize, size: v.uncompressed, localHeaderOffset: v.localOffset, index: i };
  return { entry, next: nameStart + nameLen + extraLen + commentLen };
}

function readCentralDirectory(fd: number, size: number): ZipEntry[] {
  if (size === 0) throw new ZipError('empty', 'the file is empty');
  const head = readAt(fd, 0, Math.min(4, size));
  const looksZip = head.length >= 4 && head.readUInt32LE(0) === SIG_LOCAL;
  const emptyZip = head.length >= 4 && head.readUInt32LE(0) === SIG_EOCD;
  const { count, cdSize, cdOffset, zip64 } = readDirectoryEnd(fd, size, looksZip, emptyZip);
  // The directory is read by its size, as Python's zipfile (which writes and reads Inspect logs)
  // does: writers without zip64 records store the entry count modulo 65,536, so the count is only
  // checked against what was read (exactly with a zip64 record, else modulo 65,536).
  const cd = readAt(fd, cdOffset, cdSize);
  const entries: ZipEntry[] = [];
  for (let i = 0, p = 0; p < cd.length; i++) {
    const e = directoryEntry(cd, p, i, count, size);
    entries.push(e.entry);
    p = e.next;
  }
  if (zip64 ? entries.length !== count : entries.length % 65536 !== count) {
    throw new ZipError('corrupt', `the central directory holds ${entries.length} entries, its end record says ${count}`);
  }
  return entries;
}
