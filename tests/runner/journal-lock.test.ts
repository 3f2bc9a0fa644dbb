/**
 * One process per run, and journal I/O failures as store errors.
 *
 * - `--resume` of a run that is still going used to run the remaining episodes a second time and
 *   then die with `internal error: ENOENT ... .journal/...` when the first process finished and
 *   removed the journal. Now the live run's journal lock refuses it at once (exit 4, naming the
 *   pid), and so does a second start of the same run id; once the first process is gone, the
 *   resume proceeds.
 * - A journal write on a full disk exited 1 ("internal error"); it is a store error (exit 4). The
 *   disk-full case uses /dev/full, which fails every write with ENOSPC; the end-to-end case uses a
 *   file-size limit (`ulimit -f`), which fails the journal's appends with EFBIG.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { journalLockPath, journalPath, openJournal, type JournalHeader, type JournalUnit } from '../../src/runner/journal.ts';
import { listCommittedRuns } from '../../src/store/write-run.ts';
import { readLockOwner } from '../../src/store/lock.ts';
import { runCli, ROOT } from '../helpers/cli.ts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) process.kill(-c.pid!, 'SIGKILL');
  }
});

async function waitFor(cond: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const units = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l.includes('"kind":"unit"')).length : 0);

describe('a run that is still going', () => {
  it('refuses --resume and a second start of the same run id (exit 4); after it is gone, --resume completes it', async () => {
    const traces = join(mkdtempSync(join(tmpdir(), 'standoff-live-')), 'traces');
    const jp = journalPath(traces, 'live');
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'standoff.js'), 'run', '--preset', 'smoke', '--run-id', 'live', '--traces', traces, '--sim-latency', '1500', '--concurrency', '1', '--progress', 'none'], {
      cwd: ROOT,
      stdio: 'ignore',
      detached: true,
    });
    children.push(child);
    await waitFor(() => units(jp) >= 1 || child.exitCode !== null, 90_000, 'the first episode in the journal');
    expect(child.exitCode).toBeNull();
    const lock = await readLockOwner(journalLockPath(jp));
    expect(lock?.pid).toBe(child.pid);

    const resume = runCli(['run', '--resume', 'live', '--traces', traces, '--progress', 'none']);
    expect(resume.code, resume.stderr).toBe(4);
    expect(resume.stderr.trim().split('\n')).toHaveLength(1);
    expect(resume.stderr).toMatch(new RegExp(`^standoff: run "live" is still going in pid ${child.pid} \\(standoff run`));
    const again = runCli(['run', '--preset', 'smoke', '--run-id', 'live', '--traces', traces, '--progress', 'none']);
    expect(again.code, again.stderr).toBe(4);
    expect(again.stderr).toMatch(/run "live" is still going/);
    expect(child.exitCode).toBeNull(); // the live run was not disturbed

    process.kill(-child.pid!, 'SIGKILL');
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, 10_000, 'the run to die');
    const saved = units(jp);
    // Latency and concurrency are not part of the run's identity: the resume may go faster.
    const done = runCli(['run', '--resume', 'live', '--traces', traces, '--progress', 'none', '--sim-latency', '0', '--concurrency', '4']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`, ${saved} from the journal`));
    expect(await listCommittedRuns(traces)).toEqual(['live']);
    expect(existsSync(jp)).toBe(false);
    expect(existsSync(journalLockPath(jp))).toBe(false);
  }, 180_000);
});

const header: JournalHeader = { kind: 'header', version: 1, run_id: 'full', created_at: '2026-12-01T00:00:00.000Z', config_hash: 'h', total: 1, config: {} };
const unit = { kind: 'unit', episode_id: 'e1', episode: { episode_id: 'e1' }, messages: [], scores: [], judgments: [], probe_answers: [], probe_decisions: [] } as unknown as JournalUnit;

describe('journal write failures are store errors (exit 4)', () => {
  it('ENOSPC (/dev/full) on an append: journal.writeFailed, and later appends are refused too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-enospc-'));
    mkdirSync(join(dir, '.journal'));
    const path = join(dir, '.journal', 'full.jsonl');
    symlinkSync('/dev/full', path);
    const j = await openJournal(path, header, { resume: { header, units: new Map(), goodBytes: 0, torn: false, duplicates: 0 } });
    const err = await j.append(unit).catch((e) => e);
    expect(err).toMatchObject({ code: 'journal.writeFailed', kind: 'store', exitCode: 4 });
    expect(err.message).toMatch(/^cannot write the run journal .*full\.jsonl \(the disk is full\): ENOSPC/);
    await expect(j.append(unit)).rejects.toMatchObject({ code: 'journal.writeFailed' });
    await j.close();
  });

  it('ENOSPC on the header of a resumed journal that had none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-enospc-'));
    const path = join(dir, 'h.jsonl');
    symlinkSync('/dev/full', path);
    await expect(openJournal(path, { ...header, run_id: 'h' }, { resume: { header: null, units: new Map(), goodBytes: 0, torn: false, duplicates: 0 } })).rejects.toMatchObject({
      code: 'journal.writeFailed',
      kind: 'store',
    });
  });

  it('standoff run whose journal cannot grow (EFBIG under ulimit -f) exits 4, naming the journal and the resume command', () => {
    const traces = join(mkdtempSync(join(tmpdir(), 'standoff-efbig-')), 'traces');
    // 40 blocks of 512 bytes: the header fits, the episodes do not. SIGXFSZ ignored so the write fails instead.
    const cmd = `trap '' XFSZ; ulimit -f 40; exec "${process.execPath}" "${join(ROOT, 'bin', 'standoff.js')}" run --preset smoke --run-id fb --traces "${traces}" --progress none`;
    const r = spawnSync('sh', ['-c', cmd], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^standoff: cannot write the run journal .*fb\.jsonl: EFBIG.*resume with --resume fb\)$/m);
  }, 150_000);
});
