/**
 * One writer per store: a lock file, and owner records for the private directories a writer
 * stages in.
 *
 * The store lock is `<store>/.standoff.lock`, created exclusively (`open(..., 'wx')`) and holding
 * one line of JSON, its owner:
 *
 *   {"pid":4242,"host":"box","proc_start":"1234567","started_at":"2026-...Z","command":"standoff ingest csv","token":"9f..."}
 *
 * `proc_start` is the process's start time in clock ticks since boot (`/proc/<pid>/stat` field
 * 22; null where there is no /proc), so a pid that was reused by another process does not keep a
 * dead owner's lock alive. A lock is stale when its pid is dead on this host (or now names another
 * process); a stale lock is broken (renamed aside, checked, removed) and taken. A lock written on
 * another host is never broken: its owner cannot be checked from here.
 *
 * The lock is held only while the store's visible state changes: cleanup of leftovers, the creation
 * of a staging directory, and a commit, replace or delete (`withStoreLock`). Staging (writing a
 * run's Parquet files into its own `.tmp-*` directory) happens outside it, so two ingests stage at
 * the same time and commit one after the other. A writer that finds the lock held waits (polling,
 * up to `STANDOFF_LOCK_WAIT` seconds, default 60; it says so on stderr after half a second), then
 * gives up with `store.locked` (exit 4). Within one process, writers to the same store queue on an
 * in-process mutex first, so the lock is never taken twice by one process.
 *
 * Each staging directory holds an owner file (`.owner`, the same JSON) written while the lock is
 * held, so cleanup (also under the lock) removes only directories whose owner is dead.
 */
import { readFileSync } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { storeError } from '../errors.ts';

export const LOCK_FILE = '.standoff.lock';
export const OWNER_FILE = '.owner';
/** Default seconds a writer waits for the store lock (`STANDOFF_LOCK_WAIT` overrides). */
export const DEFAULT_LOCK_WAIT_S = 60;
/** A lock file that is still empty or half-written after this long was left by a crash. */
const UNREADABLE_GRACE_MS = 10_000;

export interface LockOwner {
  pid: number;
  host: string;
  /** Process start in clock ticks since boot (Linux), to tell a reused pid from its first owner. */
  proc_start: string | null;
  /** Wall-clock start of the process (for people reading the file). */
  started_at: string;
  /** The command that holds it (`standoff ingest csv`), for the waiting message. */
  command: string;
  /** Random: tells this holder's file from a later one's. */
  token: string;
}

/** Fields of /proc/<pid>/stat from field 3 (state) on, or null without /proc. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) is in parentheses and may hold spaces: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or null. */
export function processStart(pid: number): string | null {
  return procStat(pid)?.[22 - 3] ?? null;
}

const SELF_START = processStart(process.pid);
const SELF_STARTED_AT = new Date(Date.now() - process.uptime() * 1000).toISOString();

function commandLine(): string {
  const words: string[] = [];
  for (const a of process.argv.slice(2)) {
    if (a.startsWith('-') || words.length >= 3) break;
    words.push(a);
  }
  return ['standoff', ...words].join(' ');
}

/** This process as an owner (a fresh token each call). */
export function currentOwner(): LockOwner {
  return {
    pid: process.pid,
    host: hostname(),
    proc_start: SELF_START,
    started_at: SELF_STARTED_AT,
    command: commandLine(),
    token: randomBytes(8).toString('hex'),
  };
}

/**
 * Whether an owner may still be running: false only when it certainly is not (its pid is gone on
 * this host, or belongs to a process that started at another time).
 */
export function isOwnerAlive(o: Pick<LockOwner, 'pid' | 'host' | 'proc_start'>): boolean {
  if (o.host !== hostname()) return true;
  if (!Number.isInteger(o.pid) || o.pid <= 0) return false;
  try {
    process.kill(o.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = procStat(o.pid);
  if (stat === null) return true; // no /proc: the pid exists, which is all we can tell
  // A zombie (killed, not yet reaped) has exited; a different start time is another process.
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  return !(o.proc_start !== null && o.proc_start !== undefined && stat[22 - 3] !== o.proc_start);
}

export function parseOwner(text: string): LockOwner | null {
  try {
    const o = JSON.parse(text) as LockOwner;
    return o && typeof o === 'object' && typeof o.pid === 'number' && typeof o.host === 'string' ? o : null;
  } catch {
    return null;
  }
}

/** The owner recorded in a staging directory (null when it has none or it is unreadable). */
export async function readDirOwner(dir: string): Promise<LockOwner | null> {
  try {
    return parseOwner(await readFile(join(dir, OWNER_FILE), 'utf8'));
  } catch {
    return null;
  }
}

/** Creates a staging directory owned by this process (call with the store lock held). */
export async function makeOwnedDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, OWNER_FILE), JSON.stringify(currentOwner()) + '\n');
}

/** A staging directory may be removed: its owner is dead, or it never got one. */
export async function isDirOrphaned(dir: string): Promise<boolean> {
  const owner = await readDirOwner(dir);
  return owner === null || !isOwnerAlive(owner);
}

export interface StoreLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Throws `store.lockLost` when the lock file is no longer this holder's. */
  verify(): Promise<void>;
}

export interface LockOptions {
  /** Milliseconds to wait for a held lock (default `STANDOFF_LOCK_WAIT` seconds, else 60 s). */
  waitMs?: number;
  /** Where the one waiting message goes (default stderr). */
  onWait?: (message: string) => void;
}

export interface LockFileOptions extends LockOptions {
  /** What the lock guards, for messages (`trace store traces`). */
  what: string;
  /** The error when the wait is over and the lock is still held (default `store.locked`). */
  refuse?: (holder: string, waitedMs: number) => Error;
  /** Also stale when this says so (e.g. this process's own lock of a journal it has closed). */
  isStale?: (holder: LockOwner) => boolean;
}

function defaultWaitMs(): number {
  const env = process.env.STANDOFF_LOCK_WAIT;
  const s = env !== undefined && env.trim() !== '' ? Number(env) : DEFAULT_LOCK_WAIT_S;
  return Number.isFinite(s) && s >= 0 ? s * 1000 : DEFAULT_LOCK_WAIT_S * 1000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describe(o: LockOwner | null): string {
  if (!o) return 'another writer';
  return `pid ${o.pid}${o.host !== hostname() ? ` on ${o.host}` : ''} (${o.command}, since ${o.started_at})`;
}

/** Moves a stale lock aside and removes it, unless it turned out to be another (live) one. */
async function breakStale(path: string, staleText: string): Promise<void> {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else broke it
    throw err;
  }
  const text = await readFile(aside, 'utf8').catch(() => '');
  // A live holder's lock replaced the stale one between our read and the rename: put it back.
  if (text !== staleText) await link(aside, path).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

async function tryCreate(path: string, owner: LockOwner): Promise<boolean> {
  let fh;
  try {
    fh = await open(path, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw storeError('store.lockFailed', `cannot create the store lock ${path}: ${(err as Error).message}`, err);
  }
  try {
    await fh.writeFile(JSON.stringify(owner) + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
  return true;
}

/**
 * Takes a lock file (exclusive create; stale when its owner is dead; see the module comment),
 * waiting up to `waitMs`; returns the lock and how to release it. Used for the store lock and for
 * a run's journal (`src/runner/journal.ts`).
 */
export async function acquireLockFile(path: string, opts: LockFileOptions): Promise<{ lock: StoreLock; release: () => Promise<void> }> {
  const owner = currentOwner();
  const mine = JSON.stringify(owner) + '\n';
  const waitMs = opts.waitMs ?? defaultWaitMs();
  const started = Date.now();
  let told = false;
  let delay = 10;
  for (;;) {
    if (await tryCreate(path, owner)) break;
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
      throw err;
    }
    const holder = parseOwner(text);
    let stale = holder !== null && (!isOwnerAlive(holder) || (opts.isStale?.(holder) ?? false));
    if (holder === null) {
      // Empty or half-written: being written right now, or left by a crash during creation.
      const age = await stat(path).then((s) => Date.now() - s.mtimeMs, () => 0);
      stale = age > UNREADABLE_GRACE_MS;
    }
    if (stale) {
      await breakStale(path, text);
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= waitMs) {
      if (opts.refuse) throw opts.refuse(describe(holder), waited);
      throw storeError(
        'store.locked',
        `${opts.what} is locked by ${describe(holder)}: another write is in progress; retry when it ends (waited ${Math.round(waited / 1000)} s; STANDOFF_LOCK_WAIT sets the wait), or delete ${path} if that process is gone`,
      );
    }
    if (!told && waited >= 500) {
      told = true;
      (opts.onWait ?? ((m: string) => process.stderr.write(`standoff: ${m}\n`)))(
        `waiting for the lock on ${opts.what}, held by ${describe(holder)} (up to ${Math.round(waitMs / 1000)} s)`,
      );
    }
    await sleep(Math.min(delay, Math.max(1, waitMs - waited)));
    delay = Math.min(delay * 2, 200);
  }
  const lock: StoreLock = {
    path,
    owner,
    async verify() {
      const now = await readFile(path, 'utf8').catch(() => '');
      if (now !== mine) throw storeError('store.lockLost', `the lock on ${opts.what} (${path}) was taken over while this write held it; nothing more was changed`);
    },
  };
  const release = async () => {
    // Only our own file: a lock broken as stale and taken by someone else is theirs now.
    const now = await readFile(path, 'utf8').catch(() => '');
    if (now === mine) await unlink(path).catch(() => undefined);
  };
  return { lock, release };
}

/** In-process queue per store, so one process never contends with itself for the file lock. */
const queues = new Map<string, Promise<void>>();

/**
 * Runs `fn` holding the store's write lock (see the module comment); the lock is released however
 * `fn` ends. The store directory must exist. Not re-entrant: `fn` must not take it again.
 */
export async function withStoreLock<T>(storeDir: string, fn: (lock: StoreLock) => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const store = resolve(storeDir);
  const previous = queues.get(store) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((r) => (done = r));
  const tail = previous.then(() => mine);
  queues.set(store, tail);
  await previous;
  try {
    const { lock, release } = await acquireLockFile(join(store, LOCK_FILE), { ...opts, what: `trace store ${storeDir}` });
    try {
      return await fn(lock);
    } finally {
      await release();
    }
  } finally {
    done();
    if (queues.get(store) === tail) queues.delete(store);
  }
}
