import { describe, it, expect, beforeEach } from 'vitest';
import { mkdtempSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { z } from 'zod';
import { writeRun, listCommittedRuns, cleanupStore, deleteRun } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, TABLE_NAMES, sqlColumns } from '../../src/schema/tables.ts';
import { StandoffError } from '../../src/errors.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { ROOT } from '../helpers/cli.ts';

let store: string;
beforeEach(() => {
  store = mkdtempSync(join(tmpdir(), 'standoff-store-'));
});

describe('schema round trip: zod -> Parquet -> DuckDB -> zod', () => {
  it('reads back every table value-for-value, and every row passes its zod schema', async () => {
    const bundle = sampleBundle('rt-1');
    const res = await writeRun(store, bundle);
    expect(res.tables.episodes).toBe(3);
    const s = await openStore(store);
    try {
      for (const table of TABLE_NAMES) {
        const written = table === 'runs' ? [bundle.run] : (bundle[table] as object[]);
        const cols = sqlColumns(table).map((c) => `"${c.name}"`).join(', ');
        const { rows } = await query(s.conn, `SELECT ${cols} FROM ${table} ORDER BY ALL`);
        expect(rows.length, table).toBe(written.length);
        const schema = TABLES[table] as z.ZodObject;
        for (const row of rows) expect(() => schema.parse(row), `${table} row parses`).not.toThrow();
        const norm = (r: object) => JSON.stringify(Object.fromEntries(Object.entries(r).sort()));
        expect(rows.map(norm).sort(), table).toEqual(written.map(norm).sort());
      }
    } finally {
      s.close();
    }
  });

  it('stores ZSTD Parquet under <table>/run_id=<id>/ with run_id only in the path', async () => {
    await writeRun(store, sampleBundle('rt-2'));
    expect(readdirSync(join(store, 'episodes'))).toEqual(['run_id=rt-2']);
    const s = await openStore(store);
    try {
      const file = join(store, 'episodes', 'run_id=rt-2', 'data.parquet');
      const meta = await query(s.conn, `SELECT DISTINCT compression FROM parquet_metadata('${file}')`);
      expect(meta.rows.map((r) => r.compression)).toEqual(['ZSTD']);
      const cols = await query(s.conn, `SELECT name FROM parquet_schema('${file}')`);
      expect(cols.rows.map((r) => r.name)).not.toContain('run_id');
    } finally {
      s.close();
    }
  });

  it('rejects a row that breaks the schema, naming table, row and field, and writes nothing', async () => {
    const bundle = sampleBundle('bad');
    (bundle.episodes![1] as { epoch: unknown }).epoch = 'two';
    const before = hashTree(store);
    const err = await writeRun(store, bundle).catch((e) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect(err.code).toBe('store.invalidRow');
    expect(err.message).toMatch(/^episodes row 2: field "epoch"/);
    expect(hashTree(store)).toBe(before);
  });
});

describe('atomic run writes', () => {
  it('refuses an existing run id unless replace, and replace swaps the run', async () => {
    await writeRun(store, sampleBundle('dup', 3));
    const err = await writeRun(store, sampleBundle('dup', 2)).catch((e) => e);
    expect(err.code).toBe('store.runExists');
    expect(err.exitCode).toBe(4);
    await writeRun(store, sampleBundle('dup', 2), { replace: true });
    const s = await openStore(store);
    try {
      expect((await query(s.conn, 'SELECT count(*)::INT AS n FROM episodes')).rows[0].n).toBe(2);
    } finally {
      s.close();
    }
  });

  for (const point of ['before-commit', 'after-episodes'] as const) {
    it(`a process killed ${point} leaves no visible run, and the next write cleans up`, async () => {
      await writeRun(store, sampleBundle('kept', 1));
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'tests/helpers/crash-writer.ts'), store, 'crashed', point], { cwd: ROOT, encoding: 'utf8' });
      expect(r.signal).toBe('SIGKILL');
      // Something was left behind on disk...
      const leftovers = readdirSync(store).filter((n) => n.startsWith('.tmp-'));
      if (point === 'before-commit') expect(leftovers.length).toBe(1);
      else expect(existsSync(join(store, 'episodes', 'run_id=crashed'))).toBe(true);
      // ...but readers see only the committed run.
      expect(await listCommittedRuns(store)).toEqual(['kept']);
      const s = await openStore(store);
      try {
        const { rows } = await query(s.conn, 'SELECT DISTINCT run_id FROM episodes UNION SELECT DISTINCT run_id FROM messages');
        expect(rows.map((x) => x.run_id)).toEqual(['kept']);
      } finally {
        s.close();
      }
      const removed = await cleanupStore(store);
      expect(removed.length).toBeGreaterThan(0);
      expect(readdirSync(store).filter((n) => n.startsWith('.'))).toEqual([]);
      // The crashed run can now be written normally.
      await writeRun(store, sampleBundle('crashed', 2));
      expect(await listCommittedRuns(store)).toEqual(['crashed', 'kept']);
    });
  }

  it('deleteRun removes a run', async () => {
    await writeRun(store, sampleBundle('a', 1));
    await writeRun(store, sampleBundle('b', 1));
    await deleteRun(store, 'a');
    expect(await listCommittedRuns(store)).toEqual(['b']);
    expect(existsSync(join(store, 'episodes', 'run_id=a'))).toBe(false);
  });
});

describe('openStore', () => {
  it('fails with store.missing (exit 4) for a missing directory', async () => {
    const err = await openStore(join(store, 'nope')).catch((e) => e);
    expect(err.code).toBe('store.missing');
    expect(err.exitCode).toBe(4);
  });

  it('gives typed empty views for an empty store, and store.empty when runs are required', async () => {
    const s = await openStore(store);
    try {
      const { rows, types } = await query(s.conn, 'SELECT * FROM episodes');
      expect(rows).toEqual([]);
      expect(types[sqlColumns('episodes').findIndex((c) => c.name === 'epoch')]).toBe('INTEGER');
    } finally {
      s.close();
    }
    const err = await openStore(store, { requireRuns: true }).catch((e) => e);
    expect(err.code).toBe('store.empty');
  });

  it('restricts to named runs and rejects unknown run ids', async () => {
    await writeRun(store, sampleBundle('a', 1));
    await writeRun(store, sampleBundle('b', 2));
    const s = await openStore(store, { runs: ['b'] });
    try {
      expect((await query(s.conn, 'SELECT count(*)::INT AS n FROM episodes')).rows[0].n).toBe(2);
    } finally {
      s.close();
    }
    const err = await openStore(store, { runs: ['zzz'] }).catch((e) => e);
    expect(err.code).toBe('store.noSuchRun');
    rmSync(store, { recursive: true, force: true });
  });
});
