/**
 * Issue 28: the report's DuckDB spills into a directory of its own (under the OS temp directory),
 * removed when the store closes. DuckDB's default, ./.tmp, is shared by two builds started in one
 * directory, and the first to close deleted it under the other ("Cannot open file
 * .tmp/duckdb_temp_storage...", seen with the 1e6 bench beside a 1e7 build).
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openReportStore } from '../../src/report/sections/context.ts';
import { query } from '../../src/store/duckdb.ts';

const DEMO = join(import.meta.dirname, '../../traces');

describe('the report spill directory', () => {
  it('is private to the build and removed on close', async () => {
    const a = await openReportStore(DEMO, undefined);
    const b = await openReportStore(DEMO, undefined);
    const dirOf = async (s: typeof a) => String((await query(s.conn, `SELECT current_setting('temp_directory') AS t`)).rows[0].t);
    const da = await dirOf(a);
    const db = await dirOf(b);
    try {
      expect(da.startsWith(join(tmpdir(), `standoff-spill-${process.pid}-`))).toBe(true); // pid-named: a crashed build's is removed by the next open
      expect(db).not.toBe(da);
      expect(existsSync(da)).toBe(true);
    } finally {
      a.close();
    }
    expect(existsSync(da)).toBe(false);
    expect(existsSync(db)).toBe(true);
    b.close();
    expect(existsSync(db)).toBe(false);
  });
});
