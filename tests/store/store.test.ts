import { describe, it, expect, beforeEach } from 'vitest';
import { mkdtempSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { z } from 'zod';
import {
  writeRun,
  listCommittedRuns,
  cleanupStore,
  deleteRun,
  columnarRow,
  materializeRows,
  type ColumnData,
  type ColumnarRows,
  type WritableRunBundle,
} from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, TABLE_NAMES, fileColumns, sqlColumns, type TableName } from '../../src/schema/tables.ts';
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

describe('columnar input', () => {
  type Row = Record<string, unknown>;
  /** The same rows by column, each column in the kind given for its SQL type (or `values`). */
  function columnar(table: TableName, rows: Row[], plain: boolean): ColumnarRows {
    const columns: Record<string, ColumnData> = {};
    const n = rows.length;
    for (const c of fileColumns(table)) {
      const vals = rows.map((r) => r[c.name] ?? null);
      const nulls = Uint8Array.from(vals, (v) => (v === null ? 1 : 0));
      if (plain) columns[c.name] = { kind: 'values', values: vals };
      else if (vals.every((v) => v === vals[0])) columns[c.name] = { kind: 'const', value: vals[0] as string | number | boolean | null };
      else if (c.type === 'VARCHAR' || c.type === 'TIMESTAMP') {
        const dict = [...new Set(vals.filter((v) => v !== null) as string[])];
        columns[c.name] = { kind: 'dict', dict, codes: Int32Array.from(vals, (v) => (v === null ? -1 : dict.indexOf(v as string))) };
      } else if (c.type === 'INTEGER') columns[c.name] = { kind: 'int32', data: Int32Array.from(vals, (v) => (v as number) ?? 0), nulls };
      else if (c.type === 'DOUBLE' || c.type === 'BIGINT') columns[c.name] = { kind: 'float64', data: Float64Array.from(vals, (v) => (v as number) ?? 0), nulls };
      else if (c.type === 'BOOLEAN') columns[c.name] = { kind: 'bool', data: Uint8Array.from(vals, (v) => (v ? 1 : 0)), nulls };
      else columns[c.name] = { kind: 'values', values: vals };
    }
    if (!plain && table === 'episodes') {
      // episode_id as a join of its parts, as the CSV ingest writes derived ids.
      columns.episode_id = { kind: 'join', sep: '/', parts: [columns.subject_model!, columns.scenario_id!, columns.epoch!] };
    }
    return { length: n, columns };
  }
  const COLUMNAR = ['episodes', 'messages', 'scores', 'judgments', 'probe_answers', 'aggregates'] as const;
  function columnarBundle(runId: string, plain: boolean, episodes = 3): WritableRunBundle {
    const b = sampleBundle(runId, episodes) as Record<string, unknown>;
    const out: Record<string, unknown> = { ...b };
    for (const t of COLUMNAR) if (b[t]) out[t] = columnar(t, b[t] as Row[], plain);
    return out as WritableRunBundle; // probe_decisions stays as rows: a bundle may mix both
  }
  async function tableRows(dir: string): Promise<Record<string, string[]>> {
    const s = await openStore(dir);
    try {
      const out: Record<string, string[]> = {};
      for (const table of TABLE_NAMES) {
        const cols = sqlColumns(table).map((c) => `"${c.name}"`).join(', ');
        const { rows } = await query(s.conn, `SELECT ${cols} FROM ${table} ORDER BY ALL`);
        out[table] = rows.map((r) => JSON.stringify(r));
      }
      return out;
    } finally {
      s.close();
    }
  }

  for (const [plain, episodes] of [[false, 3], [true, 3], [false, 1]] as const) {
    const what = plain ? 'values columns' : episodes === 1 ? 'one row: every column a constant' : 'dict, typed, const and join columns';
    it(`writes the same Parquet values as row objects (${what})`, async () => {
      const rowsStore = join(store, 'rows');
      const colsStore = join(store, 'cols');
      await writeRun(rowsStore, sampleBundle('same', episodes));
      const res = await writeRun(colsStore, columnarBundle('same', plain, episodes));
      expect(res.tables.episodes).toBe(episodes);
      expect(res.tables.probe_decisions).toBe(sampleBundle("same").probe_decisions!.length);
      const a = await tableRows(rowsStore);
      const b = await tableRows(colsStore);
      for (const table of TABLE_NAMES) expect(b[table], table).toEqual(a[table]);
      // Same Parquet types too.
      const s = await openStore(colsStore);
      try {
        const file = join(colsStore, 'episodes', 'run_id=same', 'data.parquet');
        const { rows } = await query(s.conn, `SELECT name, type, converted_type FROM parquet_schema('${file}') ORDER BY name`);
        const ref = await query(s.conn, `SELECT name, type, converted_type FROM parquet_schema('${join(rowsStore, 'episodes', 'run_id=same', 'data.parquet')}') ORDER BY name`);
        expect(rows).toEqual(ref.rows);
      } finally {
        s.close();
      }
    });
  }

  it('materializes columns back into the very row objects', () => {
    const b = sampleBundle('m') as Record<string, unknown>;
    for (const t of COLUMNAR) {
      for (const plain of [false, true]) {
        const rows = b[t] as Row[];
        const back = materializeRows(t, columnar(t, rows, plain), 'm');
        expect(back, t).toEqual(rows);
        rows.forEach((r, i) => expect(columnarRow(t, columnar(t, rows, plain), 'm', i)).toEqual(r));
      }
    }
  });

  it('validates untrusted columnar rows with zod, naming table, row and field, and writes nothing', async () => {
    const bundle = columnarBundle('bad-cols', false);
    const eps = bundle.episodes as ColumnarRows;
    const status = { kind: 'dict', dict: ['valid', 'bogus'], codes: Int32Array.from([0, 1, 0]) } as const;
    const broken = { ...bundle, episodes: { length: eps.length, columns: { ...eps.columns, status } } } as WritableRunBundle;
    const before = hashTree(store);
    const err = await writeRun(store, broken).catch((e) => e);
    expect(err.code).toBe('store.invalidRow');
    expect(err.message).toMatch(/^episodes row 2: field "status"/);
    expect(hashTree(store)).toBe(before);
  });

  it('refuses column data that does not fit the column type, and leaves no run behind', async () => {
    const bundle = columnarBundle('bad-kind', false);
    const eps = bundle.episodes as ColumnarRows;
    const wrong = { ...bundle, episodes: { length: eps.length, columns: { ...eps.columns, epoch: { kind: 'bool', data: Uint8Array.from([1, 0, 1]) } } } } as WritableRunBundle;
    const err = await writeRun(store, wrong, { trusted: true }).catch((e) => e);
    expect(err.code).toBe('store.writeFailed');
    expect(err.message).toMatch(/cannot hold INTEGER values/);
    const outOfRange = { ...bundle, episodes: { length: eps.length, columns: { ...eps.columns, target: { kind: 'dict', dict: ['x'], codes: Int32Array.from([0, 1, 0]) } } } } as WritableRunBundle;
    expect((await writeRun(store, outOfRange, { trusted: true }).catch((e) => e)).message).toMatch(/dictionary code 1 out of range/);
    expect(await listCommittedRuns(store)).toEqual([]);
    expect(readdirSync(store).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});

describe('stores written before a column was added', () => {
  /** Rewrites one run's episodes file without the given column, with DuckDB itself. */
  async function dropColumn(runId: string, column: string): Promise<void> {
    const { createDb } = await import('../../src/store/duckdb.ts');
    const file = join(store, 'episodes', `run_id=${runId}`, 'data.parquet');
    const db = await createDb({ threads: 1 });
    const conn = await db.connect();
    try {
      await conn.run(`COPY (SELECT * EXCLUDE ("${column}") FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    const { renameSync } = await import('node:fs');
    renameSync(`${file}.new`, file);
  }

  it('reads a missing nullable column as NULL (not measured)', async () => {
    await writeRun(store, sampleBundle('old-1'));
    await dropColumn('old-1', 'metadata');
    const s = await openStore(store);
    try {
      const { rows } = await query(s.conn, 'SELECT count(*) AS n, count(metadata) AS m FROM episodes');
      expect(rows).toEqual([{ n: 3, m: 0 }]);
    } finally {
      s.close();
    }
  });

  it('refuses a store whose files lack a required column (store.unreadable, exit 4)', async () => {
    await writeRun(store, sampleBundle('old-2'));
    await dropColumn('old-2', 'subject_model');
    const err = await openStore(store).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect((err as StandoffError).code).toBe('store.unreadable');
    expect((err as StandoffError).message).toMatch(/episodes files have no column "subject_model"/);
  });
});
