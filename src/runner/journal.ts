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
  /** Unit id -> whether its kept copy ended in error. */
  const seen = new Map<string, boolean>();
  let header: JournalHeader | null = null;
  let goodBytes = 0;
  let torn = false;
  let duplicates = 0;
  let lineNo = 0;
  const handle = async (text: string, isLast: boolean, offset: number, bytes: number): Promise<'ok' | 'blank' | 'torn'> => {
    lineNo++;
    if (text.trim() === '') return 'blank';
    let obj: { kind?: string } | null;
    try {
      obj = JSON.parse(text) as { kind?: string };
    } catch {
      if (isLast) return 'torn';
      throw dataError('journal.corrupt', `${path}: line ${lineNo} is not valid JSON (only a torn last line is tolerated)`);
    }
    if (obj === null || typeof obj !== 'object') {
      if (isLast) return 'torn';
      throw dataError('journal.corrupt', `${path}: line ${lineNo} is not valid JSON (only a torn last line is tolerated)`);
    }
    if (obj.kind === 'header') {
      if (header) throw dataError('journal.corrupt', `${path}: line ${lineNo} is a second header`);
      header = obj as JournalHeader;
      if (header.version !== JOURNAL_VERSION) {
        throw dataError('journal.version', `${path}: journal version ${header.version} is not supported (expected ${JOURNAL_VERSION})`);
      }
    } else if (obj.kind === 'unit') {
      const u = obj as JournalUnit;
      if (typeof u.episode_id !== 'string' || !u.episode) throw dataError('journal.corrupt', `${path}: line ${lineNo} is not a complete unit`);
      const earlier = seen.get(u.episode_id);
      if (earlier === false) duplicates++;
      else {
        if (earlier === true) duplicates++;
        seen.set(u.episode_id, u.episode.status === 'error');
        await onUnit(u, { offset, bytes });
      }
    } else {
      throw dataError('journal.corrupt', `${path}: line ${lineNo} has unknown kind ${JSON.stringify(obj.kind)}`);
    }
    return 'ok';
  };
  try {
    const size = (await fh.stat()).size;
    const chunk = Buffer.allocUnsafe(1 << 20);
    let carry: Buffer = Buffer.alloc(0);
    let filePos = 0;
    let carryStart = 0; // file offset of carry[0]
    outer: while (filePos < size) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, filePos);
      if (bytesRead === 0) break;
      filePos += bytesRead;
      const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      let pos = 0;
      for (;;) {
        const nl = buf.indexOf(0x0a, pos);
        if (nl === -1) break;
        const isLast = carryStart + nl + 1 === size;
        const r = await handle(buf.subarray(pos, nl).toString('utf8'), isLast, carryStart + pos, nl - pos);
        if (r === 'torn') {
          torn = true;
          break outer;
        }
        pos = nl + 1;
        goodBytes = carryStart + pos;
      }
      carry = Buffer.from(buf.subarray(pos)); // a copy: chunk is reused
      carryStart += pos;
    }
    // A final line without its newline was cut short (even if the fragment happens to parse).
    if (!torn && goodBytes < size) {
      const rest = (await fh.read(Buffer.alloc(size - goodBytes), 0, size - goodBytes, goodBytes)).buffer.toString('utf8');
      if (rest.trim() !== '') torn = true;
    }
  } finally {
    await fh.close();
  }
  return { header, goodBytes, torn, duplicates, unitCount: seen.size };
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
    if (opts.resume) {
      if (opts.resume.torn || (await stat(path)).size !== opts.resume.goodBytes) await truncate(path, opts.resume.goodBytes);
      fh = await open(path, 'a');
      if (!opts.resume.header) {
        await fh.write(`${JSON.stringify(header)}\n`);
        await fh.datasync();
      }
    } else {
      if (existsSync(path)) {
        throw usageError('run.journalExists', `a journal for run "${header.run_id}" already exists (${path}): resume it with --resume ${header.run_id}, or delete the file to start over`);
      }
      fh = await open(path, 'wx');
      await fh.write(`${JSON.stringify(header)}\n`);
      await fh.sync();
      await fsyncDir(dirname(path));
    }
  } catch (err) {
    await fh?.close().catch(() => undefined);
    openHere.delete(path);
    throw writeFailed(path, err);
  }
  const file = fh;

  let pending: Array<{ line: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  let writing: Promise<void> | null = null;
  let appended = 0;
  let syncs = 0;
  let closed = false;
  /** Set by a failed write or sync: the tail of the file is unknown, nothing more may be appended. */
  let failed: unknown = null;

  const writeAll = async (text: string) => {
    const buf = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await file.write(buf, off, buf.length - off);
      off += bytesWritten;
    }
  };

  // One drain loop at a time: each turn takes everything queued so far as one batch.
  const drain = async (): Promise<void> => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      if (failed !== null) {
        for (const b of batch) b.reject(failed);
        continue;
      }
      try {
        await writeAll(batch.length === 1 ? batch[0].line : batch.map((b) => b.line).join(''));
        await file.datasync();
        syncs++;
        appended += batch.length;
        for (const b of batch) b.resolve();
      } catch (err) {
        failed = writeFailed(path, err);
        for (const b of batch) b.reject(failed);
      }
    }
    writing = null;
  };

  return {
    path,
    get appended() {
      return appended;
    },
    get syncs() {
      return syncs;
    },
    append(unit: JournalUnit): Promise<void> {
      if (closed) return Promise.reject(new Error('journal is closed'));
      if (failed !== null) return Promise.reject(failed);
      const line = `${JSON.stringify(unit)}\n`;
      const p = new Promise<void>((resolve, reject) => pending.push({ line, resolve, reject }));
      writing ??= drain();
      return p;
    },
    async flush() {
      while (writing) await writing;
    },
    async close() {
      if (closed) return;
      while (writing) await writing;
      closed = true;
      openHere.delete(path);
      await file.close();
    },
  };
}

/** Deletes a journal after its run was committed to the store, then its lock. */
export async function removeJournal(path: string): Promise<void> {
  await rm(path, { force: true });
  await removeLock(journalLockPath(path));
  await fsyncDir(dirname(path));
}
