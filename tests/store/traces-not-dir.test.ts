/**
 * Issue 22 (LOW): `--traces` naming a regular file crashed writers with EEXIST / ENOTDIR (exit 1)
 * while readers said the store "does not exist". Now every command says the same thing, one line,
 * exit 4 (`store.notDirectory`), and the file is left as it was. The CLI's error handler maps any
 * operating-system error that escapes its source to a one-line exit 4 as a backstop.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportError, systemError } from '../../src/cli/program.ts';
import { createDb } from '../../src/store/duckdb.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

describe('--traces that is a regular file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-traces-file-'));
  const file = join(dir, 'traces');
  writeFileSync(file, 'not a store\n');
  const commands: string[][] = [
    ['sql', 'SELECT 1'],
    ['tables'],
    ['validate'],
    ['report', 'build', '--out', join(dir, 'report')],
    ['ingest', 'csv', join(ROOT, 'tests/fixtures/csv/episodes.csv')],
    ['ingest', 'lm-eval', join(ROOT, 'tests/fixtures/lm-eval/gsm8k')],
    ['ingest', 'inspect', join(ROOT, 'tests/fixtures/inspect/log_read_sample.eval')],
    ['run', '--preset', 'smoke', '--progress', 'none'],
  ];
  for (const traces of [file, join(file, 'below')]) {
    it(`every command: "${traces === file ? 'a file' : 'below a file'}" is not a directory, one line, exit 4`, () => {
      for (const args of commands) {
        const r = runCli([...args, '--traces', traces]);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(4);
        expect(r.stderr.trim(), args.join(' ')).toBe(`standoff: trace store ${traces} is not a directory (a file is in the way): pass --traces DIR`);
      }
      expect(readFileSync(file, 'utf8')).toBe('not a store\n');
    }, 240_000);
  }
});

describe('the CLI backstop for operating-system errors', () => {
  it('maps ENOSPC, EISDIR, ELOOP, EACCES, ENOTDIR to one line with the path; other errors stay internal', () => {
    const err = (code: string, path?: string) => Object.assign(new Error(`${code}: boom`), { code, path, syscall: 'write' });
    expect(systemError(err('ENOSPC', '/x/out.md'))).toBe('/x/out.md: the disk is full (ENOSPC on write)');
    expect(systemError(err('EISDIR', '/s/.standoff.lock'))).toBe('/s/.standoff.lock: a directory is in the way of a file (EISDIR on write)');
    expect(systemError(err('ELOOP', '/d/l'))).toBe('/d/l: a symlink loop (ELOOP on write)');
    expect(systemError(err('EACCES', '/d'))).toBe('/d: permission denied (EACCES on write)');
    expect(systemError(err('ENOTDIR'))).toBe('a file is in the way of a directory (ENOTDIR on write)');
    expect(systemError(new TypeError('x is not a function'))).toBeNull();
    expect(systemError(err('ECONNRESET'))).toBeNull();
  });
});

describe('the CLI backstop for DuckDB running out of memory', () => {
  it('a real out-of-memory error from DuckDB is one line, exit 4 (a resource limit, not an internal error)', async () => {
    const db = await createDb({ threads: 1, memoryLimit: '20MB' });
    const conn = await db.connect();
    let err: unknown;
    try {
      await conn.run(`SET temp_directory = ''`);
      await conn.run(`CREATE TABLE big AS SELECT i, repeat('x', 100) || i AS s FROM range(2000000) t(i)`);
    } catch (e) {
      err = e;
    } finally {
      conn.closeSync();
    }
    expect(String((err as Error)?.message)).toMatch(/^Out of Memory Error/);
    const line = systemError(err)!;
    expect(line).toMatch(/^DuckDB ran out of memory \(the statistics commands hold it to 1GB, spilling to disk where it can\): Out of Memory Error: .*; read fewer runs with --run$/);
    expect(line).not.toContain('Possible solutions');
    const write = process.stderr.write.bind(process.stderr);
    let printed = '';
    process.stderr.write = ((s: string) => ((printed += s), true)) as typeof process.stderr.write;
    try {
      expect(reportError(err)).toBe(4);
    } finally {
      process.stderr.write = write;
    }
    expect(printed.trim().split('\n')).toHaveLength(1);
  });
});

