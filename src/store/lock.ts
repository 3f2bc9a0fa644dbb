/**
 * One writer per store: a lock file, and owner records for the private directories a writer
 * stages in.
 *
 * The store lock is `<store>/.standoff.lock`, a directory holding one entry, `<token>.json`: one
 * line of JSON, its owner:
 *
 *   {"pid":4242,"host":"box","proc_start":"1234567","started_at":"2026-...Z","command":"standoff ingest csv","token":"9f..."}
 *
 * `proc_start` is the process's start time in clock ticks since boot (`/proc/<pid>/stat` field
 * 22; null where there is no /proc), so a pid that was reused by another process does not keep a
 * dead owner's lock alive. A lock is stale when its pid is dead on this host (or now names another
 * process); a stale lock is broken (its entry removed by name) and taken. A lock written on
 * another host is never broken: its owner cannot be checked from here. How a lock is taken,
 * released and broken so that no interleaving gives two holders or brings a lock back: see
 * `acquireLockFile`.
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
import { lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { oneLine, storeError } from '../errors.ts';

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
  /** The longest pause in milliseconds between two looks at a held lock (default 200; from 10, doubling). */
  pollMs?: number;
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

/** The owner entry inside a lock directory: `<token>.json` (the token is 16 hex digits). */
const ENTRY = /^([0-9a-f]{16})\.json$/;

/** What `rename(tmp, lock)` fails with when the lock is held (a non-empty directory, or a legacy file). */
const HELD = new Set(['ENOTEMPTY', 'EEXIST', 'ENOTDIR']);

const code = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

/** Runs `fn`, treating the listed error codes as "nothing to do". */
async function ignoring(codes: string[], fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!codes.includes(code(err) ?? '')) throw err;
  }
}

function lockFailed(path: string, err: unknown): Error {
  return storeError('store.lockFailed', `cannot take the lock ${path}: ${oneLine((err as Error).message)}`, err);
}

function notALock(path: string, why: string): Error {
  return storeError('store.lockFailed', `the lock path ${path} is not a Standoff lock (${why}): remove it if no Standoff process is using it`);
}

/** A lock as found on disk: its holder, and how to remove exactly that holder's lock. */
interface FoundLock {
  /** Null when the owner record does not parse (a torn legacy file, or a crash before a sync). */
  holder: LockOwner | null;
  /** Milliseconds since the owner record was written. */
  ageMs: number;
  /** Removes this holder's lock and never a later holder's (see the protocol above `acquireLockFile`). */
  breakIt: () => Promise<void>;
}

/** A lock left as one plain file by an older Standoff (the format before the lock directory). */
async function readLegacyLock(path: string, mtimeMs: number): Promise<FoundLock | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'EISDIR') return null; // changed meanwhile: look again
    throw lockFailed(path, err);
  }
  // unlink never removes a directory (EISDIR / EPERM): a lock taken in the current format since is safe.
  const breakIt = () => ignoring(['ENOENT', 'EISDIR', 'EPERM'], () => unlink(path));
  return { holder: parseOwner(text), ageMs: Date.now() - mtimeMs, breakIt };
}

/** The lock at `path` as it is now, or null when there is none (absent, or an empty directory). */
async function readLock(path: string): Promise<FoundLock | null> {
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if (code(err) === 'ENOENT') return null;
    throw lockFailed(path, err);
  }
  if (st.isFile()) return readLegacyLock(path, st.mtimeMs);
  if (!st.isDirectory()) throw notALock(path, st.isSymbolicLink() ? 'it is a symbolic link' : 'it is not a directory');
  let names: string[];
  try {
    names = await readdir(path);
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return null;
    throw lockFailed(path, err);
  }
  if (names.length === 0) return null;
  const m = names.length === 1 ? ENTRY.exec(names[0]!) : null;
  if (!m) throw notALock(path, `it is a directory holding ${names.slice(0, 3).map((n) => JSON.stringify(n)).join(', ')}${names.length > 3 ? ', ...' : ''}`);
  const entry = join(path, names[0]!);
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([readFile(entry, 'utf8'), stat(entry).then((s) => s.mtimeMs)]);
  } catch (err) {
    if (code(err) === 'ENOENT') return null; // released or broken meanwhile: look again
    throw lockFailed(path, err);
  }
  const parsed = parseOwner(text);
  const breakIt = async () => {
    // By its unique name: a later holder's entry has another name, so it can never be removed here.
    await ignoring(['ENOENT'], () => unlink(entry));
    // rmdir removes only an empty directory: if a new holder moved in meanwhile, its lock stays.
    await ignoring(['ENOENT', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'], () => rmdir(path));
  };
  return { holder: parsed !== null && parsed.token === m[1] ? parsed : null, ageMs: Date.now() - mtimeMs, breakIt };
}

/** Writes this holder's lock, ready to be moved into place: `<path>.new-<token>/<token>.json`. */
async function stageLock(path: string, owner: LockOwner, text: string): Promise<string> {
  const tmp = `${path}.new-${owner.token}`;
  try {
    await mkdir(tmp);
    const fh = await open(join(tmp, `${owner.token}.json`), 'wx');
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw lockFailed(path, err);
  }
  return tmp;
}

/** Removes `<lock>.new-*` directories left by writers that died before moving theirs into place. */
async function removeDeadStaged(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `${basename(path)}.new-`;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const staged = join(dir, name);
    const owner = parseOwner(await readFile(join(staged, `${name.slice(prefix.length)}.json`), 'utf8').catch(() => ''));
    // Without a readable owner it may be a writer's, being written right now: removed only when old.
    const dead = owner !== null ? !isOwnerAlive(owner) : await stat(staged).then((s) => Date.now() - s.mtimeMs > UNREADABLE_GRACE_MS, () => false);
    if (dead) await rm(staged, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Takes a lock (see the module comment), waiting up to `waitMs`; returns the lock and how to
 * release it. Used for the store lock and for a run's journal (`src/runner/journal.ts`).
 *
 * The protocol (correct by construction: no interleaving of takers, breakers and releasers can
 * give two holders, or bring back a lock that was released or broken):
 *
 * - The lock is a directory `L` holding exactly one entry, `<token>.json`, its holder (a fresh
 *   random token per acquisition). A holder holds the lock exactly while its entry exists.
 * - Take: write the entry into a private directory `L.new-<token>`, then `rename` that directory
 *   to `L`. The kernel does it atomically and only when `L` is absent or an empty directory, so
 *   an entry appears whole (never half-written) and never beside another holder's.
 * - Release: unlink our own entry by name, then `rmdir(L)`. `rmdir` removes only an empty
 *   directory: if a new holder moved in between the two steps, its lock stays.
 * - Break (the holder is dead, or `isStale` says so): unlink the entry by the name that was read,
 *   then `rmdir(L)`. A name is one holder's, once: a breaker that read a stale entry can remove
 *   that entry and no other, however late it runs, and a dead holder never comes back, so removing
 *   its entry is right whoever does it first (the others get ENOENT and look again).
 * - Nothing is ever renamed aside, linked back or re-created. (The older scheme renamed a stale
 *   lock file aside and linked it back when it turned out to be a live one; when that holder had
 *   released meanwhile, the link brought its lock back, and its next write waited on it until
 *   every writer gave up: issue 22.)
 * - A plain file at `L` is a lock of an older Standoff: honoured, and broken with `unlink`, which
 *   cannot remove a directory (a lock in the current format). Do not run an older Standoff on the
 *   same store at the same time. Anything else at `L` (a symlink, a directory of other files) is
 *   refused with `store.lockFailed` (exit 4).
 */
export async function acquireLockFile(path: string, opts: LockFileOptions): Promise<{ lock: StoreLock; release: () => Promise<void> }> {
  const owner = currentOwner();
  const mine = JSON.stringify(owner) + '\n';
  const entry = join(path, `${owner.token}.json`);
  const waitMs = opts.waitMs ?? defaultWaitMs();
  const started = Date.now();
  let told = false;
  const pollMs = opts.pollMs ?? 200;
  let delay = Math.min(10, pollMs);
  const tmp = await stageLock(path, owner, mine);
  try {
    for (;;) {
      try {
        await rename(tmp, path);
        break;
      } catch (err) {
        if (!HELD.has(code(err) ?? '')) throw lockFailed(path, err);
      }
      const found = await readLock(path);
      if (found === null) continue; // released meanwhile
      const { holder } = found;
      const stale = holder === null ? found.ageMs > UNREADABLE_GRACE_MS : !isOwnerAlive(holder) || (opts.isStale?.(holder) ?? false);
      if (stale) {
        await found.breakIt();
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
      delay = Math.min(delay * 2, pollMs);
    }
  } finally {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
  await removeDeadStaged(path);
  const lock: StoreLock = {
    path,
    owner,
    async verify() {
      const now = await readFile(entry, 'utf8').catch(() => '');
      if (now !== mine) throw storeError('store.lockLost', `the lock on ${opts.what} (${path}) was taken over while this write held it; nothing more was changed`);
    },
  };
  const release = async () => {
    // Only our own entry, by its name; then the directory, only if it is empty.
    try {
      await unlink(entry);
    } catch {
      return; // broken as stale (this process was thought dead): whatever is there now is not ours
    }
    await ignoring(['ENOENT', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'], () => rmdir(path)).catch(() => undefined);
  };
  return { lock, release };
}

/** The holder of the lock at `path` (either format), or null when there is none or it does not parse. */
export async function readLockOwner(path: string): Promise<LockOwner | null> {
  const found = await readLock(path).catch(() => null);
  return found?.holder ?? null;
}

/** Removes a lock whatever holds it (a journal's, by the process that holds it, when its run is committed). */
export async function removeLock(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
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
