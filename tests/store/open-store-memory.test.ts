/**
 * Issue 28: the report's structural gate runs `validateStore` in a DuckDB instance of its own; without
 * a memory limit DuckDB takes up to 80% of RAM (6 GB at 1e7 episodes, before the first section).
 * `openStore({ memoryLimit })` sets it (`validateStore` passes its `memoryLimit` on).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';

const root = mkdtempSync(join(tmpdir(), 'standoff-open-mem-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const limitOf = async (s: Awaited<ReturnType<typeof openStore>>) => String((await query(s.conn, `SELECT current_setting('memory_limit') AS m`)).rows[0].m);

describe('openStore memory limit', () => {
  it('applies memoryLimit to the instance, and leaves DuckDB default without it', async () => {
    const dir = join(root, 'a');
    await writeSyntheticStore(dir, { episodes: 90, seed: 1, probes: false });
    const limited = await openStore(dir, { memoryLimit: '100MB' });
    const free = await openStore(dir);
    try {
      expect(await limitOf(limited)).toBe('95.3 MiB');
      expect(await limitOf(free)).not.toBe('95.3 MiB');
    } finally {
      limited.close();
      free.close();
    }
  });
});
