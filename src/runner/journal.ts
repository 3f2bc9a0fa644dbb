/**
 * The run journal: durability between "an episode finished" and "the run is in the store".
 *
 * `<traces>/.journal/<run_id>.jsonl` holds one JSON object per line:
 * - line 1, the header: `{"kind":"header","version":1,"run_id",...,"config":<resolved config>}`;
 * - then one `{"kind":"unit", ...}` line per finished episode unit (the episode row, its messages,
 *   scores, judgments and probe rows), already redacted.
 *
 * An append is written and `fdatasync`ed BEFORE it resolves, so an episode counts only once it is
 * on disk. Group commit: appends that arrive while a write+sync is in flight are queued and then
 * written and synced together as the next batch (one write, one sync), so with N episodes
 * finishing at about the same time the cost is one sync per batch, not per episode. Each append
 * still resolves only after the sync that covers its own line. After a failed write or sync the
 * file's tail is unknown, so the journal refuses every later append (the run stops; `--resume`
 * truncates a torn tail and continues).
 *
 * After a crash (SIGKILL, power loss) the last line may be torn. `readJournal` drops a final line
 * that does not parse (or lacks its newline), and `openJournal({resume})` truncates the file back
 * to the last complete line before appending. A damaged line anywhere else is a data error. A
 * unit that appears twice keeps its first copy, unless that copy ended in error: `--resume` runs
 * such episodes again, and the later copy replaces it.
 *
 * One process per run: `openJournal` takes `<traces>/.journal/<run_id>.lock` (the store's lock-file
 * format, `src/store/lock.ts`: pid and start time, stale once that process is gone) and keeps it
 * until `removeJournal`, so a second `standoff run` or `--resume` of a run that is still going is
 * refused (`run.inProgress`, exit 4) instead of racing it. A failed write or sync of the journal
 * (a full disk: ENOSPC) is a store error (`journal.writeFailed`, exit 4).
 */
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StandoffError, dataError, storeError, usageError } from '../errors.ts';
import { acquireLockFile, isOwnerAlive, parseOwner, processStart, readLockOwner, removeLock, type LockOwner } from '../store/lock.ts';
import type { StateManifest } from '../store/state-manifest.ts';
import type {
  EpisodeRow,
  JudgmentRow,
  MessageRow,
  ProbeAnswerRow,
  ProbeDecisionRow,
  ScoreRow,
} from '../schema/tables.ts';

export const JOURNAL_VERSION = 1;
export const JOURNAL_DIR = '.journal';

export const journalPath = (traces: string, runId: string) => join(traces, JOURNAL_DIR, `${runId}.jsonl`);

/** The lock of a journal (`<run_id>.lock` beside `<run_id>.jsonl`; see src/store/lock.ts). */
export const journalLockPath = (path: string) => path.replace(/\.jsonl$/, '') + '.lock';

/** Journals this process has open (its own lock on any other journal is a leftover: stale). */
const openHere = new Set<string>();

/** A failed journal write or sync as a store error (exit 4), naming the file and the OS code. */
function writeFailed(path: string, err: unknown): StandoffError {
  if (err instanceof StandoffError) return err;
  const e = err as NodeJS.ErrnoException;
  const full = e?.code === 'ENOSPC' ? ' (the disk is full)' : '';
  return storeError('journal.writeFailed', `cannot write the run journal ${path}${full}: ${(e?.message ?? String(err)).split('\n')[0]}`, err);
}

/** Takes the run's journal lock, refusing at once when another live process holds it. */
async function lockJournal(path: string, runId: string): Promise<void> {
  const self = processStart(process.pid);
  await acquireLockFile(journalLockPath(path), {
    what: `the journal of run "${runId}"`,
    waitMs: 0,
    isStale: (h: LockOwner) => h.pid === process.pid && h.proc_start === self && !openHere.has(path),
    refuse: (holder) =>
      storeError('run.inProgress', `run "${runId}" is still going in ${holder}: wait for it to finish, or stop it (Ctrl-C, then --resume ${runId}); its journal is ${path}`),
  });
  openHere.add(path);
}

/**
 * Refuses at once (`run.inProgress`, exit 4) when another live process holds the run's journal
 * lock: lets `run` say "still going" before its other checks (an existing journal, the endpoint
 * check), which run before `openJournal` takes the lock itself.
 */
export async function refuseLiveJournal(path: string, runId: string): Promise<void> {
  const holder = await readLockOwner(journalLockPath(path));
  if (holder && holder.pid !== process.pid && isOwnerAlive(holder)) {
    throw storeError('run.inProgress', `run "${runId}" is still going (pid ${holder.pid}): wait for it to finish, or stop it (Ctrl-C, then --resume ${runId}); its journal is ${path}`);
  }
}

export interface JournalHeader {
  kind: 'header';
  version: number;
  run_id: string;
  created_at: string;
  /** Hash of the behaviour-relevant config: a resume must use the same. */
  config_hash: string;
  /** The states' manifest when the run began (runner/manifest.ts; absent in older journals). */
  state_manifest?: StateManifest;
  /** Units the run will have in all (this shard's, when sharded). */
  total: number;
  /** The shard this journal runs (`--shard i/N`); absent for a whole run. */
  shard?: { index: number; count: number };
  /** The resolved config (no secrets: only env var names). */
  config: unknown;
}

export interface JournalUnit {
  kind: 'unit';
  episode_id: string;
  episode: EpisodeRow;
  messages: MessageRow[];
  scores: ScoreRow[];
  judgments: JudgmentRow[];
  probe_answers: ProbeAnswerRow[];
  probe_decisions: ProbeDecisionRow[];
  /** Probe requests that failed after retries, or were cut off at the token limit (redacted). */
  probe_errors?: string[];
  /** Probe requests whose reply was cut off at the token limit. */
  probe_truncated?: number;
}

export interface JournalContents {
  header: JournalHeader | null;
  units: Map<string, JournalUnit>;
  /** Byte length of the complete lines (where appending resumes). */
  goodBytes: number;
  /** A torn final line was dropped. */
  torn: boolean;
  /** Duplicate units ignored. */
  duplicates: number;
}

/** What `scanJournal` found besides the units it handed over. */
export type JournalScan = Omit<JournalContents, 'units'> & { unitCount: number };

/**
 * Reads a journal line by line (in 1 MiB chunks: memory holds one chunk and one line, not the
 * file), handing each unit to `onUnit` in file order with where its line is (`readJournalUnit`
 * reads it again); a unit id seen before is skipped (the first copy wins), unless its earlier copy
 * ended in error: then the later copy is handed over too and replaces it (callers keep the last
 * copy they are given per id). Tolerates a torn last line; throws `dataError('journal.corrupt')`
 * for any other damaged line, and `journal.version` for an unknown version.
 */
export async function scanJournal(
  path: string,
  onUnit: (unit: JournalUnit, line: { offset: number; bytes: number }) => void | Promise<void>,
): Promise<JournalScan> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw usageError('run.noJournal', `no journal at ${path} (a run that was still going may just have finished and removed it): nothing to resume`);
  }
  const scan = new JournalLines(path, onUnit);
  try {
    const { goodBytes, torn } = await forEachLine(fh, (text, isLast, offset, bytes) => scan.line(text, isLast, offset, bytes));
    return { header: scan.header, goodBytes, torn, duplicates: scan.duplicates, unitCount: scan.seen.size };
  } finally {
    await fh.close();
  }
}

/** The meaning of a journal's lines, one at a time (see `scanJournal`). */
class JournalLines {
  /** Unit id -> whether its kept copy ended in error. */
  readonly seen = new Map<string, boolean>();
  header: JournalHeader | null = null;
  duplicates = 0;
  private lineNo = 0;
  constructor(
    private readonly path: string,
    private readonly onUnit: (unit: JournalUnit, line: { offset: number; bytes: number }) => void | Promise<void>,
  ) {}

  /** One line: 'torn' when the last line does not parse (the scan stops there). */
  async line(text: string, isLast: boolean, offset: number, bytes: number): Promise<'ok' | 'blank' | 'torn'> {
    const path = this.path;
    const lineNo = ++this.lineNo;
    if (text.trim() === '') return 'blank';
    let obj: { kind?: string } | null;
    try {
      obj = JSON.parse(text) as { kind?: string };
    } catch {
      obj = null;
    }
    if (obj === null || typeof obj !== 'object') {
      if (isLast) return 'torn';
      throw dataError('journal.corrupt', `${path}: line ${lineNo} is not valid JSON (only a torn last line is tolerated)`);
    }
    if (obj.kind === 'header') this.headerLine(obj as JournalHeader, lineNo);
    else if (obj.kind === 'unit') await this.unitLine(obj as JournalUnit, lineNo, { offset, bytes });
    else throw dataError('journal.corrupt', `${path}: line ${lineNo} has unknown kind ${JSON.stringify(obj.kind)}`);
    return 'ok';
  }

  private headerLine(h: JournalHeader, lineNo: number): void {
    if (this.header) throw dataError('journal.corrupt', `${this.path}: line ${lineNo} is a second header`);
    this.header = h;
    if (h.version !== JOURNAL_VERSION) {
      throw dataError('journal.version', `${this.path}: journal version ${h.version} is not supported (expected ${JOURNAL_VERSION})`);
    }
  }

  private async unitLine(u: JournalUnit, lineNo: number, line: { offset: number; bytes: number }): Promise<void> {
    if (typeof u.episode_id !== 'string' || !u.episode) throw dataError('journal.corrupt', `${this.path}: line ${lineNo} is not a complete unit`);
    const earlier = this.seen.get(u.episode_id);
    if (earlier === false) {
      this.duplicates++;
      return;
    }
    if (earlier === true) this.duplicates++;
    this.seen.set(u.episode_id, u.episode.status === 'error');
    await this.onUnit(u, line);
  }
}

/**
 * Hands each newline-terminated line of a file to `onLine` in order, reading 1 MiB chunks (memory
 * holds one chunk and one line). Stops at a line `onLine` calls torn. Returns the byte length of
 * the complete lines, and whether the file ends torn: a torn line, or a final line without its
 * newline (even if the fragment happens to parse).
 */
async function forEachLine(
  fh: FileHandle,
  onLine: (text: string, isLast: boolean, offset: number, bytes: number) => Promise<'ok' | 'blank' | 'torn'>,
): Promise<{ goodBytes: number; torn: boolean }> {
  const size = (await fh.stat()).size;
  const chunk = Buffer.allocUnsafe(1 << 20);
  let carry: Buffer = Buffer.alloc(0);
  let filePos = 0;
  let carryStart = 0; // file offset of carry[0]
  let goodBytes = 0;
  while (filePos < size) {
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, filePos);
    if (bytesRead === 0) break;
    filePos += bytesRead;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, pos);
      if (nl === -1) break;
      const isLast = carryStart + nl + 1 === size;
      if ((await onLine(buf.subarray(pos, nl).toString('utf8'), isLast, carryStart + pos, nl - pos)) === 'torn') return { goodBytes, torn: true };
      pos = nl + 1;
      goodBytes = carryStart + pos;
    }
    carry = Buffer.from(buf.subarray(pos)); // a copy: chunk is reused
    carryStart += pos;
  }
  if (goodBytes < size) {
    const rest = (await fh.read(Buffer.alloc(size - goodBytes), 0, size - goodBytes, goodBytes)).buffer.toString('utf8');
    if (rest.trim() !== '') return { goodBytes, torn: true };
  }
  return { goodBytes, torn: false };
}

/** Reads one unit again from where `scanJournal` found it. */
export async function readJournalUnit(fh: FileHandle, line: { offset: number; bytes: number }): Promise<JournalUnit> {
  const buf = Buffer.allocUnsafe(line.bytes);
  const { bytesRead } = await fh.read(buf, 0, line.bytes, line.offset);
  return JSON.parse(buf.subarray(0, bytesRead).toString('utf8')) as JournalUnit;
}

/** Reads a whole journal into memory (`scanJournal`, units kept by id). */
export async function readJournal(path: string): Promise<JournalContents> {
  const units = new Map<string, JournalUnit>();
  const { unitCount: _n, ...rest } = await scanJournal(path, (u) => {
    units.set(u.episode_id, u);
  });
  return { ...rest, units };
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    /* some filesystems refuse directory fsync; the file sync still holds */
  }
}

export interface Journal {
  path: string;
  /** Appends one unit; resolves once it is durable (fdatasync). */
  append(unit: JournalUnit): Promise<void>;
  /** Waits for pending appends. */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Units appended (and synced) through this handle. */
  readonly appended: number;
  /** Batches written (= data syncs) through this handle: `appended / syncs` is the mean batch size. */
  readonly syncs: number;
}

/**
 * Creates a new journal (`header` written and synced) or, with `resume`, reopens an existing one
 * for appending after truncating a torn tail. Refuses to overwrite an existing journal without
 * `resume` (usage error naming the resume command).
 */
export async function openJournal(
  path: string,
  header: JournalHeader,
  opts: { resume?: JournalContents } = {},
): Promise<Journal> {
  await mkdir(dirname(path), { recursive: true });
  await lockJournal(path, header.run_id);
  let fh: FileHandle | undefined;
  try {
    fh = opts.resume ? await reopenFile(path, header, opts.resume) : await createFile(path, header);
  } catch (err) {
    await fh?.close().catch(() => undefined);
    openHere.delete(path);
    throw writeFailed(path, err);
  }
  return new GroupCommitJournal(path, fh);
}

/** A resumed journal's file, for appending after its last complete line (a missing header written). */
async function reopenFile(path: string, header: JournalHeader, resume: JournalContents): Promise<FileHandle> {
  if (resume.torn || (await stat(path)).size !== resume.goodBytes) await truncate(path, resume.goodBytes);
  const fh = await open(path, 'a');
  try {
    if (!resume.header) {
      await fh.write(`${JSON.stringify(header)}\n`);
      await fh.datasync();
    }
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
  return fh;
}

/** A new journal's file with its header, synced (and its directory entry). */
async function createFile(path: string, header: JournalHeader): Promise<FileHandle> {
  if (existsSync(path)) {
    throw usageError('run.journalExists', `a journal for run "${header.run_id}" already exists (${path}): resume it with --resume ${header.run_id}, or delete the file to start over`);
  }
  const fh = await open(path, 'wx');
  try {
    await fh.write(`${JSON.stringify(header)}\n`);
    await fh.sync();
    await fsyncDir(dirname(path));
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
  return fh;
}

/** The journal's appends with group commit (see the module comment). */
class GroupCommitJournal implements Journal {
  private pending: Array<{ line: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  private writing: Promise<void> | null = null;
  private closed = false;
  /** Set by a failed write or sync: the tail of the file is unknown, nothing more may be appended. */
  private failed: unknown = null;
  appended = 0;
  syncs = 0;
  constructor(
    readonly path: string,
    private readonly file: FileHandle,
  ) {}

  private async writeAll(text: string): Promise<void> {
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await this.file.write(buf, off, buf.length - off);
      off += bytesWritten;
    }
  }

  /** One drain loop at a time: each turn takes everything queued so far as one batch. */
  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      if (this.failed !== null) {
        for (const b of batch) b.reject(this.failed);
        continue;
      }
      try {
        await this.writeAll(batch.length === 1 ? batch[0]!.line : batch.map((b) => b.line).join(''));
        await this.file.datasync();
        this.syncs++;
        this.appended += batch.length;
        for (const b of batch) b.resolve();
      } catch (err) {
        this.failed = writeFailed(this.path, err);
        for (const b of batch) b.reject(this.failed);
      }
    }
    this.writing = null;
  }

  append(unit: JournalUnit): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal is closed'));
    if (this.failed !== null) return Promise.reject(this.failed);
    const line = `${JSON.stringify(unit)}\n`;
    const p = new Promise<void>((resolve, reject) => this.pending.push({ line, resolve, reject }));
    this.writing ??= this.drain();
    return p;
  }

  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    while (this.writing) await this.writing;
    this.closed = true;
    openHere.delete(this.path);
    await this.file.close();
  }
}

/** Deletes a journal after its run was committed to the store, then its lock. */
export async function removeJournal(path: string): Promise<void> {
  await rm(path, { force: true });
  await removeLock(journalLockPath(path));
  await fsyncDir(dirname(path));
}
