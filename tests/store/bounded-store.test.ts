/**
 * The statistics commands open the store bounded (`ANALYSIS_DB`, #28): DuckDB's memory limit and
 * threads as the report's, and a private spill directory that survives the sandbox's lock-down
 * and is removed on close. Without `bounded` (standoff sql) the sandbox keeps no spill directory.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, ANALYSIS_DB } from '../../src/store/open-store.ts';
import { withStore } from '../../src/analysis/ci.ts';
import { ROOT } from '../helpers/cli.ts';

const TRACES = join(ROOT, 'traces');
const SETTINGS = "SELECT current_setting('memory_limit') AS m, current_setting('threads')::INT AS t, current_setting('temp_directory') AS d, current_setting('allowed_directories')::VARCHAR AS a";

describe('a bounded store', () => {
  it('has the report\'s memory limit and threads, and a spill directory that close() removes', async () => {
    const s = await openStore(TRACES, { requireRuns: true, sandbox: true, bounded: true });
    const row = (await s.conn.runAndReadAll(SETTINGS)).getRowObjectsJS()[0]!;
    s.close();
    expect(ANALYSIS_DB).toEqual({ threads: 2, memoryLimit: '1GB' });
    expect(String(row.m)).toMatch(/^(953\.6 MiB|1\.0 GiB|1000\.0 MB)$/);
    expect(row.t).toBe(2);
    expect(String(row.d)).toMatch(/standoff-spill-/);
    // The sandbox allows that one directory (DuckDB adds it), no other.
    expect(String(row.a)).toBe(`[${row.d}/]`);
    expect(existsSync(String(row.d))).toBe(false);
  });

  it('is what withStore (every statistics command) opens; the unbounded sandbox has no spill directory', async () => {
    const row = await withStore({ traces: TRACES }, async (conn) => (await conn.runAndReadAll(SETTINGS)).getRowObjectsJS()[0]!);
    expect(String(row.d)).toMatch(/standoff-spill-/);
    const s = await openStore(TRACES, { requireRuns: true, sandbox: true });
    const plain = (await s.conn.runAndReadAll(SETTINGS)).getRowObjectsJS()[0]!;
    s.close();
    expect(plain.d).toBe('');
    expect(String(plain.m)).not.toBe(String(row.m));
  });
});
