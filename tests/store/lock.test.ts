/**
 * The store lock (`src/store/lock.ts`) and what it guards in the write path: exclusive create,
 * owner = pid + start time, stale when that process is gone; a held lock makes a writer wait
 * (bounded, with a message) and then refuse with exit 4; cleanup removes only staging directories
 * whose owner is dead; a commit checks every staged partition before it renames anything.
 * Live and dead owners are real processes (`sleep`, and a process that has exited).
 */
import { describe, it, expect, beforeEach, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LOCK_FILE, OWNER_FILE, isOwnerAlive, processStart, readLockOwner, withStoreLock, type LockOwner } from '../../src/store/lock.ts';
import { cleanupStore, listCommittedRuns, partitionDir, writeRun } from '../../src/store/write-run.ts';
import { RunWriter } from '../../src/store/run-writer.ts';
import { TABLE_NAMES } from '../../src/schema/tables.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { runCli, ROOT } from '../helpers/cli.ts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** A process that stays alive until the tests end. */
function liveProcess(): number {
  const c = spawn('sleep', ['120'], { stdio: 'ignore' });
  children.push(c);
  return c.pid!;
}

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function owner(pid: number, over: Partial<LockOwner> = {}): LockOwner {
  return { pid, host: hostname(), proc_start: processStart(pid), started_at: '2026-12-01T00:00:00.000Z', command: 'standoff ingest csv', token: randomBytes(8).toString('hex'), ...over };
}

/** Writes a lock in the current format: the directory `path` holding `<token>.json`. */
function writeLock(path: string, o: LockOwner): void {
  mkdirSync(path);
  writeFileSync(join(path, `${o.token}.json`), JSON.stringify(o) + '\n');
}

let dir: string;
let store: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-lock-'));
  store = join(dir, 'traces');
  mkdirSync(store, { recursive: true });
});

describe('lock owners', () => {
  it('a live pid is alive; an exited pid and a pid that now names a process with another start time are not', () => {
    const live = liveProcess();
    expect(isOwnerAlive(owner(live))).toBe(true);
    expect(isOwnerAlive(owner(process.pid))).toBe(true);
    expect(isOwnerAlive(owner(deadPid()))).toBe(false);
    // The same pid, but the lock says it started at another time: the pid was reused.
    expect(isOwnerAlive(owner(live, { proc_start: '1' }))).toBe(false);
    // Another host's owner cannot be checked from here: treated as alive, never broken.
    expect(isOwnerAlive(owner(deadPid(), { host: 'elsewhere.invalid' }))).toBe(true);
  }, 240_000);
});

describe('withStoreLock', () => {
  it('creates the lock (a directory holding <token>.json) with pid and start time while held, and removes it after', async () => {
    let seen: LockOwner | null = null;
    let entries: string[] = [];
    await withStoreLock(store, async () => {
      entries = readdirSync(join(store, LOCK_FILE));
      seen = await readLockOwner(join(store, LOCK_FILE));
    });
    expect(entries).toEqual([`${seen!.token}.json`]);
    expect(seen).toMatchObject({ pid: process.pid, host: hostname(), proc_start: processStart(process.pid) });
    expect(typeof seen!.started_at).toBe('string');
    expect(existsSync(join(store, LOCK_FILE))).toBe(false);
  }, 240_000);

  it('a lock held by a live process: waits (with one message), then refuses with store.locked (exit 4)', async () => {
    writeLock(join(store, LOCK_FILE), owner(liveProcess()));
    const messages: string[] = [];
    let ran = false;
    const t0 = Date.now();
    const err = await withStoreLock(store, async () => void (ran = true), { waitMs: 1200, onWait: (m) => messages.push(m) }).catch((e) => e);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1100);
    expect(ran).toBe(false);
    expect(err).toMatchObject({ code: 'store.locked', kind: 'store', exitCode: 4 });
    expect(err.message).toMatch(/locked by pid \d+ \(standoff ingest csv/);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/waiting for the lock on trace store .* held by pid/);
    expect(existsSync(join(store, LOCK_FILE))).toBe(true); // not ours to remove
  }, 240_000);

  it('a lock left by a dead process is broken and taken at once', async () => {
    writeLock(join(store, LOCK_FILE), owner(deadPid()));
    const t0 = Date.now();
    let ran = false;
    await withStoreLock(store, async () => void (ran = true), { waitMs: 5000 });
    expect(ran).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(readdirSync(store)).toEqual([]);
  }, 240_000);

  it('a lock file of the older format (one plain file): a live one is honoured, a dead one broken', async () => {
    const path = join(store, LOCK_FILE);
    writeFileSync(path, JSON.stringify(owner(liveProcess())) + '\n');
    await expect(withStoreLock(store, async () => undefined, { waitMs: 300, onWait: () => undefined })).rejects.toMatchObject({ code: 'store.locked' });
    writeFileSync(path, JSON.stringify(owner(deadPid())) + '\n');
    await withStoreLock(store, async () => undefined, { waitMs: 3000 });
    expect(readdirSync(store)).toEqual([]);
  }, 240_000);

  it('a lock path that is something else (a directory of other files, a symlink): one store error (exit 4), left as it is', async () => {
    const path = join(store, LOCK_FILE);
    mkdirSync(path);
    writeFileSync(join(path, 'duckdb_log.csv'), 'x');
    const err = await withStoreLock(store, async () => undefined, { waitMs: 300 }).catch((e) => e);
    expect(err).toMatchObject({ code: 'store.lockFailed', kind: 'store', exitCode: 4 });
    expect(err.message).toBe(`the lock path ${path} is not a Standoff lock (it is a directory holding "duckdb_log.csv"): remove it if no Standoff process is using it`);
    expect(readdirSync(path)).toEqual(['duckdb_log.csv']);
    expect(readdirSync(store)).toEqual([LOCK_FILE]); // its staged entry was removed
    rmSync(path, { recursive: true });
    symlinkSync('/tmp', path);
    await expect(withStoreLock(store, async () => undefined, { waitMs: 300 })).rejects.toThrow(/is not a Standoff lock \(it is a symbolic link\)/);
  }, 240_000);

  it('an empty directory is no lock (taken at once); a leftover staged lock of a dead writer is removed', async () => {
    const path = join(store, LOCK_FILE);
    mkdirSync(path);
    const o = owner(deadPid());
    writeLock(`${path}.new-${o.token}`, o);
    const live = owner(liveProcess());
    writeLock(`${path}.new-${live.token}`, live);
    await withStoreLock(store, async () => undefined, { waitMs: 300 });
    expect(readdirSync(store)).toEqual([`${LOCK_FILE}.new-${live.token}`]);
  }, 240_000);

  it('an unreadable owner (an empty legacy file, a torn entry) is held for a while; one left for long is a crash (stale)', async () => {
    const path = join(store, LOCK_FILE);
    writeFileSync(path, '');
    await expect(withStoreLock(store, async () => undefined, { waitMs: 300, onWait: () => undefined })).rejects.toMatchObject({ code: 'store.locked' });
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    await withStoreLock(store, async () => undefined, { waitMs: 300 });
    expect(existsSync(path)).toBe(false);
    // The current format: an entry that does not parse (a crash before its sync reached the disk).
    mkdirSync(path);
    const entry = join(path, `${'ab'.repeat(8)}.json`);
    writeFileSync(entry, '{"pid":');
    await expect(withStoreLock(store, async () => undefined, { waitMs: 300, onWait: () => undefined })).rejects.toMatchObject({ code: 'store.locked' });
    utimesSync(entry, old, old);
    await withStoreLock(store, async () => undefined, { waitMs: 300 });
    expect(readdirSync(store)).toEqual([]);
  }, 240_000);

  it('writers in one process queue: they never hold the lock at the same time', async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        withStoreLock(store, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 20));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
  }, 240_000);
});

describe('writes under the lock', () => {
  it('ingest csv against a store locked by a live process: a waiting message, then exit 4 and the store unchanged', () => {
    writeLock(join(store, LOCK_FILE), owner(liveProcess()));
    const before = hashTree(store);
    const r = runCli(['ingest', 'csv', join(ROOT, 'tests/fixtures/csv/episodes.csv'), '--run-id', 'blocked', '--traces', store], { env: { STANDOFF_LOCK_WAIT: '1' } });
    expect(r.code, r.stderr).toBe(4);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^standoff: waiting for the lock on trace store .* held by pid \d+/);
    expect(lines.at(-1)).toMatch(/^standoff: trace store .* is locked by pid \d+ .*another write is in progress/);
    expect(hashTree(store)).toBe(before);
  }, 240_000);

  it('ingest csv when the lock path is a directory of other files (DuckDB logging wrote it): one line, exit 4, store unchanged', () => {
    mkdirSync(join(store, LOCK_FILE));
    writeFileSync(join(store, LOCK_FILE, 'duckdb_log_1.csv'), 'x\n');
    const before = hashTree(store);
    const r = runCli(['ingest', 'csv', join(ROOT, 'tests/fixtures/csv/episodes.csv'), '--run-id', 'eisdir', '--traces', store]);
    expect(r.code, r.stderr).toBe(4);
    const errors = r.stderr.trim().split('\n').filter((l) => !l.startsWith('standoff: no --map given'));
    expect(errors).toEqual([`standoff: the lock path ${join(store, LOCK_FILE)} is not a Standoff lock (it is a directory holding "duckdb_log_1.csv"): remove it if no Standoff process is using it`]);
    expect(hashTree(store)).toBe(before);
  }, 240_000);

  it('cleanup removes staging directories whose owner is dead or missing, and keeps a live owner\'s', async () => {
    await writeRun(store, sampleBundle('kept', 1));
    const mk = (name: string, o: LockOwner | null) => {
      mkdirSync(join(store, name, 'episodes', 'run_id=x'), { recursive: true });
      writeFileSync(join(store, name, 'episodes', 'run_id=x', 'data.parquet'), 'staged');
      if (o) writeFileSync(join(store, name, OWNER_FILE), JSON.stringify(o));
    };
    mk('.tmp-live-1', owner(liveProcess()));
    mk('.tmp-dead-1', owner(deadPid()));
    mk('.tmp-none-1', null);
    const removed = await cleanupStore(store);
    expect(removed.sort()).toEqual(['.tmp-dead-1', '.tmp-none-1']);
    expect(readdirSync(store).filter((n) => n.startsWith('.'))).toEqual(['.tmp-live-1']);
    // A write (which cleans first) also leaves the live writer's directory alone.
    await writeRun(store, sampleBundle('next', 1));
    expect(readdirSync(store).filter((n) => n.startsWith('.'))).toEqual(['.tmp-live-1']);
    expect(await listCommittedRuns(store)).toEqual(['kept', 'next']);
  });

  it('a commit whose staged partition vanished fails loudly (store.stagingLost) and renames nothing', async () => {
    await writeRun(store, sampleBundle('kept', 1));
    const b = sampleBundle('lost', 2);
    const w = await RunWriter.open(store, 'lost');
    await w.append('episodes', b.episodes!, 0);
    await w.append('messages', b.messages!, 0);
    await w.finish(b.run);
    const tmp = readdirSync(store).find((n) => n.startsWith('.tmp-lost-'))!;
    rmSync(partitionDir(join(store, tmp), 'messages', 'lost'), { recursive: true });
    const before = hashTree(store, (n) => n.startsWith('.tmp-'));
    const err = await w.commit().catch((e) => e);
    expect(err).toMatchObject({ code: 'store.stagingLost', kind: 'store' });
    expect(err.message).toMatch(/staged messages partition .* is missing; nothing was committed/);
    expect(hashTree(store)).toBe(before);
    for (const t of TABLE_NAMES) expect(existsSync(partitionDir(store, t, 'lost')), t).toBe(false);

    // The same through writeRun: a partition removed between staging and commit.
    const err2 = await writeRun(store, sampleBundle('lost2', 2), {
      beforeCommit: () => {
        const t2 = readdirSync(store).find((n) => n.startsWith('.tmp-lost2-'))!;
        rmSync(partitionDir(join(store, t2), 'scores', 'lost2'), { recursive: true });
      },
    }).catch((e) => e);
    expect(err2).toMatchObject({ code: 'store.stagingLost' });
    expect(hashTree(store)).toBe(before);
    expect(await listCommittedRuns(store)).toEqual(['kept']);
  }, 240_000);
});
