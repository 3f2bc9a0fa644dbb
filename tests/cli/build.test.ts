/**
 * The compiled CLI (scripts/build.mjs -> dist/) and how bin/standoff.js chooses what to run:
 * - code finds shipped files and worker entries through src/paths.ts, never relative to its own
 *   module (which is somewhere else in the bundle), and every worker is built;
 * - in a checkout whose dist/ is stale, the bin runs the sources (a changed src/version.ts shows
 *   at once), and `scripts/build.mjs --if-stale` (what the tests' setup and `prepare` run) brings
 *   dist/ up to date again.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { WORKERS } from '../../scripts/build.mjs';
import { ROOT } from '../helpers/cli.ts';

const sources = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .map((f) => join(dir, f));

const SRC = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'verifier'))];

describe('the bundle', () => {
  it('every worker thread started through workerUrl(name) is built as dist/workers/<name>.js', () => {
    const names = new Set<string>();
    for (const f of SRC) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/workerUrl\('([^']+)'/g)) if (!f.endsWith('paths.ts')) names.add(m[1]);
      if (/new Worker\(/.test(text)) expect(text, `${relative(ROOT, f)} starts a worker: use workerUrl() from src/paths.ts`).toMatch(/workerUrl\(/);
    }
    expect(names.size).toBeGreaterThan(0);
    for (const n of names) {
      expect(Object.keys(WORKERS), `worker "${n}" is missing from WORKERS in scripts/build.mjs`).toContain(n);
      expect(existsSync(join(ROOT, 'dist', 'workers', `${n}.js`)), n).toBe(true);
    }
  });

  it('no code locates files relative to its own module (it lives elsewhere in the bundle)', () => {
    const offenders: string[] = [];
    for (const f of SRC) {
      if (f.endsWith(join('src', 'paths.ts'))) continue;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/import\.meta\.(url|dirname|filename)/.test(line) && !/workerUrl\(/.test(line)) offenders.push(`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders, 'use packagePath() / workerUrl() from src/paths.ts').toEqual([]);
  });
});

describe('bin/standoff.js in a checkout', () => {
  let copy: string;
  const run = (args: string[]) => spawnSync(process.execPath, [join(copy, 'bin', 'standoff.js'), ...args], { cwd: copy, encoding: 'utf8' });

  beforeAll(() => {
    // A checkout of its own (mtimes kept, so its dist/ is as current as ours), sharing node_modules.
    copy = mkdtempSync(join(tmpdir(), 'standoff-checkout-'));
    for (const e of ['bin', 'scripts', 'src', 'verifier', 'dist', 'package.json', 'package-lock.json']) {
      cpSync(join(ROOT, e), join(copy, e), { recursive: true, preserveTimestamps: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('runs dist/ while it is current, the sources once a source changes, and dist/ again after --if-stale', () => {
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    const cli = join(copy, 'dist', 'cli.js');
    expect(run(['--version']).stdout.trim()).toBe(version);

    writeFileSync(join(copy, 'src', 'version.ts'), `export const STANDOFF_VERSION = '9.9.9-test';\n`);
    const before = statSync(cli).mtimeMs;
    const r = run(['--version']);
    expect(r.stdout.trim(), r.stderr).toBe('9.9.9-test'); // the source, through tsx
    expect(statSync(cli).mtimeMs).toBe(before); // the bin never writes dist/

    const b = spawnSync(process.execPath, [join(copy, 'scripts', 'build.mjs'), '--if-stale'], { cwd: copy, encoding: 'utf8' });
    expect(b.status, b.stderr).toBe(0);
    expect(b.stderr).toMatch(/^built dist\//);
    const chunks = join(copy, 'dist', 'chunks');
    expect(readdirSync(chunks).some((c) => readFileSync(join(chunks, c), 'utf8').includes('"9.9.9-test"'))).toBe(true);
    // Now the bin runs dist/ again: no TypeScript among the modules it loads.
    const log = join(copy, 'modules.log');
    const d = spawnSync(process.execPath, ['--import', join(ROOT, 'tests', 'helpers', 'module-log', 'register.mjs'), join(copy, 'bin', 'standoff.js'), '--version'], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, STANDOFF_MODULE_LOG: log },
    });
    expect(d.stdout.trim()).toBe('9.9.9-test');
    const loaded = readFileSync(log, 'utf8');
    expect(loaded).toContain(join(copy, 'dist', 'cli.js'));
    expect(loaded).not.toMatch(/\.ts$/m);

    const again = spawnSync(process.execPath, [join(copy, 'scripts', 'build.mjs'), '--if-stale'], { cwd: copy, encoding: 'utf8' });
    expect([again.status, again.stderr]).toEqual([0, '']); // current: nothing to do
  });

  it('STANDOFF_FROM_SOURCE=1 forces the sources', () => {
    const r = spawnSync(process.execPath, [join(copy, 'bin', 'standoff.js'), '--version'], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, STANDOFF_FROM_SOURCE: '1' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(readFileSync(join(copy, 'src', 'version.ts'), 'utf8').match(/'([^']+)'/)![1]);
  });
});
