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
 * unit that appears twice (should not happen) keeps its first copy.
 */
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm, truncate, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { dataError, usageError } from '../errors.ts';
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

export interface JournalHeader {
  kind: 'header';
  version: number;
  run_id: string;
  created_at: string;
  /** Hash of the behaviour-relevant config: a resume must use the same. */
  config_hash: string;
  /** Units the run will have in all. */
  total: number;
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
  /** Probe requests that failed after retries (redacted). */
  probe_errors?: string[];
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

/** Reads a journal, tolerating a torn last line. Throws `dataError('journal.corrupt')` otherwise. */
export async function readJournal(path: string): Promise<JournalContents> {
  const buf = await readFile(path);
  const units = new Map<string, JournalUnit>();
  let header: JournalHeader | null = null;
  let pos = 0;
  let goodBytes = 0;
  let torn = false;
  let duplicates = 0;
  let lineNo = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    const end = nl === -1 ? buf.length : nl;
    const text = buf.subarray(pos, end).toString('utf8');
    lineNo++;
    const isLast = nl === -1 || nl === buf.length - 1;
    let obj: { kind?: string } | null = null;
    try {
      obj = text.trim() === '' ? null : (JSON.parse(text) as { kind?: string });
    } catch {
      obj = null;
    }
    if (nl === -1) {
      // No newline: the write was cut short (even if the fragment happens to parse).
      if (text.trim() !== '') torn = true;
      break;
    }
    if (obj === null) {
      if (text.trim() === '') {
        pos = nl + 1;
        goodBytes = pos;
        continue;
      }
      if (isLast) {
        torn = true;
        break;
      }
      throw dataError('journal.corrupt', `${path}: line ${lineNo} is not valid JSON (only a torn last line is tolerated)`);
    }
    if (obj.kind === 'header') {
      if (header) throw dataError('journal.corrupt', `${path}: line ${lineNo} is a second header`);
      header = obj as JournalHeader;
    } else if (obj.kind === 'unit') {
      const u = obj as JournalUnit;
      if (typeof u.episode_id !== 'string' || !u.episode) throw dataError('journal.corrupt', `${path}: line ${lineNo} is not a complete unit`);
      if (units.has(u.episode_id)) duplicates++;
      else units.set(u.episode_id, u);
    } else {
      throw dataError('journal.corrupt', `${path}: line ${lineNo} has unknown kind ${JSON.stringify(obj.kind)}`);
    }
    pos = nl + 1;
    goodBytes = pos;
  }
  if (header && header.version !== JOURNAL_VERSION) {
    throw dataError('journal.version', `${path}: journal version ${header.version} is not supported (expected ${JOURNAL_VERSION})`);
  }
  return { header, units, goodBytes, torn, duplicates };
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
  let fh: FileHandle;
  if (opts.resume) {
    if (opts.resume.torn || (await readFile(path)).length !== opts.resume.goodBytes) await truncate(path, opts.resume.goodBytes);
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
      const { bytesWritten } = await fh.write(buf, off, buf.length - off);
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
        await fh.datasync();
        syncs++;
        appended += batch.length;
        for (const b of batch) b.resolve();
      } catch (err) {
        failed = err;
        for (const b of batch) b.reject(err);
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
      await fh.close();
    },
  };
}

/** Deletes a journal after its run was committed to the store. */
export async function removeJournal(path: string): Promise<void> {
  await rm(path, { force: true });
  await fsyncDir(dirname(path));
}
