/**
 * Issue 22, point 6: the store lock holds under stale-lock races. Each round leaves a stale lock
 * (a dead owner, a reused pid, or an older Standoff's lock file), then six writer processes go at
 * once, each taking the lock three times as an ingest does (cleanup, staging, commit). Before the
 * lock directory (see `acquireLockFile` in src/store/lock.ts), a breaker could link a lock back
 * after its owner had released it; that owner then waited on its own lock and every writer gave
 * up after 60 s with the lock left behind.
 *
 * Every round must end with all six writers committed (nobody refused, nobody in the critical
 * section twice at once), and nothing left: no lock, no staged lock, no `inside` marker.
 * `LOCK_STRESS_ROUNDS` sets the number of rounds (default 500). A smaller round through the real
 * CLI (`ingest csv`, six at once on a stale lock) runs too.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LOCK_FILE, type LockOwner } from '../../src/store/lock.ts';
import { listCommittedRuns } from '../../src/store/write-run.ts';
import { ROOT } from '../helpers/cli.ts';

const WRITERS = 6;
const ROUNDS = Number(process.env.LOCK_STRESS_ROUNDS ?? 500);
/** A memory file system when there is one (the lock's fsync is then free, so rounds are short); the protocol is the same. */
const STRESS_TMP = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

const workers: ChildProcess[] = [];
afterAll(() => {
  for (const w of workers) w.kill('SIGKILL');
});

function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

/** A stale owner: a dead pid, or a live pid whose start time says it is another process now. */
function staleOwner(pid: number): LockOwner {
  return { pid, host: hostname(), proc_start: '1', started_at: '2026-12-01T00:00:00.000Z', command: 'standoff ingest csv', token: randomBytes(8).toString('hex') };
}

/** Round r's stale lock: the current format for a dead pid, for a reused pid, or an older Standoff's plain file. */
function writeStale(store: string, r: number, dead: number): string {
  const path = join(store, LOCK_FILE);
  const kind = ['dead', 'reused', 'legacy'][r % 3]!;
  const o = staleOwner(kind === 'reused' ? process.pid : dead);
  if (kind === 'legacy') {
    writeFileSync(path, JSON.stringify(o) + '\n');
  } else {
    mkdirSync(path);
    writeFileSync(join(path, `${o.token}.json`), JSON.stringify(o) + '\n');
  }
  return kind;
}

type Reply = { round: number; ok: boolean; error?: string };

function startWorker(i: number): Promise<{ child: ChildProcess; replies: Reply[]; waiters: (() => void)[] }> {
  const child = fork(join(ROOT, 'tests/helpers/lock-stress-worker.ts'), [String(i)], { execArgv: ['--import', 'tsx'], cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  workers.push(child);
  const state = { child, replies: [] as Reply[], waiters: [] as (() => void)[] };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (m: Reply & { ready?: boolean }) => {
      if (m.ready) return resolve(state);
      state.replies.push(m);
      state.waiters.shift()?.();
    });
  });
}

describe('the store lock under stale-lock races', () => {
  it(`${ROUNDS} rounds of a stale lock plus ${WRITERS} concurrent writers: every writer commits, nothing is left behind`, async () => {
    const store = join(mkdtempSync(join(STRESS_TMP, 'standoff-lock-stress-')), 'traces');
    const ws = await Promise.all(Array.from({ length: WRITERS }, (_, i) => startWorker(i)));
    const dead = deadPid();
    const failures: string[] = [];
    const kinds: Record<string, number> = {};
    const t0 = Date.now();
    for (let r = 0; r < ROUNDS; r++) {
      rmSync(store, { recursive: true, force: true });
      mkdirSync(join(store, 'commits'), { recursive: true });
      const kind = writeStale(store, r, dead);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      await Promise.all(
        ws.map((w) => {
          const got = new Promise<void>((res) => w.waiters.push(res));
          w.child.send({ round: r, store });
          return got;
        }),
      );
      for (const w of ws) {
        const reply = w.replies.shift()!;
        if (!reply.ok) failures.push(`round ${r} (${kind}): ${reply.error}`);
      }
      const left = readdirSync(store).filter((n) => n !== 'commits');
      if (left.length) failures.push(`round ${r} (${kind}): left behind ${left.join(', ')}`);
      const commits = readdirSync(join(store, 'commits')).length;
      if (commits !== WRITERS * 3) failures.push(`round ${r} (${kind}): ${commits} commits of ${WRITERS * 3}`);
      if (failures.length > 5) break;
    }
    const seconds = (Date.now() - t0) / 1000;
    process.stderr.write(`lock stress: ${ROUNDS} rounds x ${WRITERS} writers x 3 acquisitions in ${seconds.toFixed(1)} s (${JSON.stringify(kinds)}), ${failures.length} failures\n`);
    expect(failures).toEqual([]);
  }, 900_000);

  it('the real CLI: a stale lock, then six `ingest csv` at once, three times: all exit 0, six runs, no lock left', async () => {
    const csv = join(ROOT, 'tests/fixtures/csv/episodes.csv');
    const dead = deadPid();
    for (let r = 0; r < 3; r++) {
      const store = join(mkdtempSync(join(tmpdir(), 'standoff-lock-cli-')), 'traces');
      mkdirSync(store, { recursive: true });
      writeStale(store, r, dead);
      const results = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => {
          const child = spawn(process.execPath, [join(ROOT, 'bin', 'standoff.js'), 'ingest', 'csv', csv, '--run-id', `w${i}`, '--traces', store], {
            cwd: ROOT,
            env: { ...process.env, NO_COLOR: '1', STANDOFF_LOCK_WAIT: '60' },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr!.on('data', (d) => (stderr += d));
          return new Promise<{ code: number | null; stderr: string }>((res) => child.on('close', (code) => res({ code, stderr })));
        }),
      );
      for (const x of results) expect(x.code, x.stderr).toBe(0);
      expect(await listCommittedRuns(store)).toEqual(Array.from({ length: WRITERS }, (_, i) => `w${i}`));
      expect(existsSync(join(store, LOCK_FILE))).toBe(false);
      expect(readdirSync(store).filter((n) => n.startsWith('.'))).toEqual([]);
    }
  }, 600_000);
});
