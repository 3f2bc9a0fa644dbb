/**
 * The size limits of issue 27 hold (scripts/function-sizes.mjs --check, run by `npm run lint`): no
 * function over 100 lines and no file over 600 lines in src/, except generated files and data
 * tables (EXEMPT), and the pending list of oversized code other branches are splitting only
 * shrinks. The check is also run on a small tree that breaks each limit, to see it fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXEMPT, MAX_FILE, MAX_FUNCTION, checkLimits, functionSizes, loadPending } from '../scripts/function-sizes.mjs';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'function-sizes.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

/** A function `name` whose text spans exactly `lines` lines. */
const fn = (name: string, lines: number) => `export function ${name}(): number {\n${'  void 0;\n'.repeat(lines - 3)}  return 1;\n}\n`;

describe('size limits of src/', () => {
  it('hold on the repository, with the pending list only', () => {
    const r = checkLimits(ROOT);
    expect(r.files).toBeGreaterThan(100);
    expect(r.violations).toEqual([]);
    expect(r.stale).toEqual([]);
  });

  it('list no pending entry under src/ingest, and exempt only generated or data files', () => {
    const pending = loadPending(ROOT);
    for (const p of [...pending.functions, ...pending.files]) expect(p.file).not.toMatch(/^src\/ingest\//);
    expect(Object.keys(EXEMPT)).toEqual(['src/stats/kernels/draws-wasm.ts']);
  });

  it('exits 0 on the repository and says so', () => {
    const p = run('--check');
    expect(p.stderr).toBe('');
    expect(p.stdout).toMatch(/; 0 over the limits .*, 0 stale pending entries/);
    expect(p.status).toBe(0);
  });
});

describe('the check fails when a limit is broken', () => {
  const tree = mkdtempSync(join(tmpdir(), 'standoff-sizes-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  const file = (rel: string, text: string) => {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  };
  // A 101-line function, a 100-line one (allowed), a 601-line file, a 600-line file (allowed).
  file('src/a/long-function.ts', fn('tooLong', MAX_FUNCTION + 1) + fn('justRight', MAX_FUNCTION));
  file('src/b/long-file.ts', 'export const x = 1;\n'.repeat(MAX_FILE + 1));
  file('src/b/full-file.ts', 'export const y = 1;\n'.repeat(MAX_FILE));

  it('measures the fixture as written', () => {
    const sizes = functionSizes(fn('f', 101));
    expect(sizes).toEqual([{ name: 'f', line: 1, lines: 101 }]);
  });

  it('names the 101-line function and the 601-line file, and exits 1', () => {
    const r = checkLimits(tree);
    expect(r.violations).toEqual([
      'src/a/long-function.ts:1: function tooLong is 101 lines (limit 100)',
      'src/b/long-file.ts: 601 lines (limit 600)',
    ]);
    const p = run('--check', '--root', tree);
    expect(p.status).toBe(1);
    expect(p.stdout).toContain('function tooLong is 101 lines');
    expect(p.stdout).toContain('src/b/long-file.ts: 601 lines');
  });

  it('lets pending entries pass, and fails on a pending entry that is no longer over its limit', () => {
    file(
      'scripts/size-limit-pending.json',
      JSON.stringify({
        functions: [{ file: 'src/a/long-function.ts', name: 'tooLong' }, { file: 'src/a/long-function.ts', name: 'justRight' }],
        files: [{ file: 'src/b/long-file.ts' }, { file: 'src/b/gone.ts' }],
      }),
    );
    try {
      const r = checkLimits(tree);
      expect(r.violations).toEqual([]);
      expect(r.stale).toEqual([
        'src/a/long-function.ts: function justRight is 100 lines, within the limit: remove it from scripts/size-limit-pending.json',
        'src/b/gone.ts: gone: remove it from scripts/size-limit-pending.json',
      ]);
      const p = run('--check', '--root', tree);
      expect(p.status).toBe(1);
      expect(p.stdout).toContain('0 over the limits');
      expect(p.stdout).toContain('2 stale pending entries');
    } finally {
      rmSync(join(tree, 'scripts'), { recursive: true, force: true });
    }
  });

  it('exempts only the listed generated files', () => {
    file('src/stats/kernels/draws-wasm.ts', 'export const w = 1;\n'.repeat(MAX_FILE + 5));
    try {
      expect(checkLimits(tree).violations).toHaveLength(2);
    } finally {
      rmSync(join(tree, 'src/stats'), { recursive: true, force: true });
    }
  });
});
