/**
 * Spill directories of bounded stores carry their process id (`standoff-spill-<pid>-…`), and a
 * new one removes those whose process no longer exists: a crashed or killed command never ran its
 * `close()` and would otherwise leave DuckDB's spill files in the temp directory for good (#28).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createSpillDirectory, processAlive, removeStaleSpillDirectories } from '../../src/store/duckdb.ts';

/** The pid of a process that has exited (a child that ran and ended). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('stale spill directories', () => {
  it('are removed when their process is gone; live, own and unnamed ones stay', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-spilltest-'));
    try {
      const dead = deadPid();
      expect(processAlive(dead)).toBe(false);
      expect(processAlive(process.pid)).toBe(true);
      const stale = join(dir, `standoff-spill-${dead}-abc123`);
      mkdirSync(stale);
      writeFileSync(join(stale, 'duckdb_temp_storage-0.tmp'), 'x');
      const live = join(dir, `standoff-spill-${process.ppid}-def456`);
      const own = join(dir, `standoff-spill-${process.pid}-ghi789`);
      const old = join(dir, 'standoff-spill-Xy12Ab');
      const other = join(dir, `other-spill-${dead}-abc`);
      for (const d of [live, own, old, other]) mkdirSync(d);

      const fresh = createSpillDirectory(dir);
      expect(basename(fresh)).toMatch(new RegExp(`^standoff-spill-${process.pid}-`));
      expect(existsSync(fresh)).toBe(true);
      expect(existsSync(stale)).toBe(false);
      for (const d of [live, own, old, other]) expect(existsSync(d)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks whether each named process is alive, and keeps the directories of those that are', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-spilltest-'));
    try {
      for (const pid of [111111, 222222]) mkdirSync(join(dir, `standoff-spill-${pid}-x`));
      const asked: number[] = [];
      const removed = removeStaleSpillDirectories(dir, (pid) => (asked.push(pid), pid === 222222));
      expect(asked.sort()).toEqual([111111, 222222]);
      expect(removed).toEqual(['standoff-spill-111111-x']);
      expect(existsSync(join(dir, 'standoff-spill-222222-x'))).toBe(true);
      // A missing temp directory is not an error.
      expect(removeStaleSpillDirectories(join(dir, 'nope'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
