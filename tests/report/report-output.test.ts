/**
 * `report build` output directory (issue 13, LOW): it was left at mode 700 (it is the temp
 * directory from mkdtemp, renamed), and a killed build left `.NAME.tmp-*` directories that nothing
 * removed. Now the output has the mode a plain mkdir gives (0777 less the umask), and a build
 * removes temp directories of builds whose process is gone (and pid-less ones of older versions),
 * but never those of a build that is still running.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { buildReport } from '../../src/report/build-report.ts';
import { sampleBundle } from '../helpers/fixtures.ts';

let dir: string;
let store: string;
let live: ChildProcess;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-repout-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('r1', 3));
  live = spawn('sleep', ['120'], { stdio: 'ignore' });
});
afterAll(() => live?.kill('SIGKILL'));

const deadPid = () => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

describe('report build output directory', () => {
  it('has the mode of a plain directory (umask applied), not 0700', async () => {
    const out = join(dir, 'reports');
    await buildReport({ traces: store, out, resamples: 200 });
    const umask = process.umask();
    expect(statSync(out).mode & 0o777).toBe(0o777 & ~umask);
    expect(statSync(out).mode & 0o077).not.toBe(0);
  });

  it('removes temp directories of killed builds, keeps a live build\'s', async () => {
    const out = join(dir, 'reports2');
    const dead = join(dir, `.reports2.tmp-${deadPid()}-abcd1234`);
    const deadOld = join(dir, `.reports2.tmp-${deadPid()}-abcd1234.old`);
    const legacy = join(dir, '.reports2.tmp-Xy12Zq');
    const running = join(dir, `.reports2.tmp-${live.pid}-beef0001`);
    for (const d of [dead, deadOld, legacy, running]) {
      mkdirSync(d);
      writeFileSync(join(d, 'REPORT.md'), 'partial');
    }
    await buildReport({ traces: store, out, resamples: 200 });
    expect(existsSync(join(out, 'REPORT.md'))).toBe(true);
    expect(readdirSync(dir).filter((n) => n.startsWith('.reports2.tmp-'))).toEqual([`.reports2.tmp-${live.pid}-beef0001`]);
  });
});
