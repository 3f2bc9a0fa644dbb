import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { openSandboxedStore, executeReadOnly } from '../../src/store/sql.ts';
import type { Store } from '../../src/store/open-store.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';

let dir: string;
let store: string;
let s: Store;
let outside: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-sandbox-'));
  store = join(dir, 'traces');
  outside = join(dir, 'secret.csv');
  writeFileSync(outside, 'a,b\n1,2\n');
  await writeRun(store, sampleBundle('r1'));
  s = await openSandboxedStore(store);
});
afterAll(() => s?.close());

const refuse = async (sql: string) => {
  const before = hashTree(dir);
  const err = await executeReadOnly(s.conn, sql).catch((e) => e);
  expect(err, sql).toBeInstanceOf(Error);
  expect(err.kind, sql).toBe('usage');
  expect(err.message.split('\n').length).toBe(1);
  expect(hashTree(dir), `${sql} changed files`).toBe(before);
  return err.message as string;
};

describe('standoff sql sandbox', () => {
  it('answers reads over the views', async () => {
    const r = await executeReadOnly(s.conn, 'SELECT subject_model, avg(gathered_evidence::int) AS g FROM episodes GROUP BY 1');
    expect(r.rows).toEqual([{ subject_model: 'sim:careful', g: 2 / 3 }]);
    const d = await executeReadOnly(s.conn, 'DESCRIBE episodes');
    expect(d.rows.length).toBeGreaterThan(10);
  });
  it('cannot write a file inside the store', async () => {
    expect(await refuse(`COPY (SELECT 1) TO '${join(store, 'x.csv')}'`)).toMatch(/read-only|refused/);
    expect(readdirSync(store)).not.toContain('x.csv');
  });
  it('cannot write a file outside the store', async () => {
    await refuse(`COPY (SELECT 1) TO '${join(dir, 'y.csv')}'`);
    expect(existsSync(join(dir, 'y.csv'))).toBe(false);
  });
  it('cannot read files outside the store', async () => {
    expect(await refuse(`SELECT * FROM read_csv('${outside}')`)).toMatch(/Permission|disabled/);
    await refuse(`SELECT * FROM read_text('/etc/passwd')`);
  });
  it('cannot ATTACH a database', async () => {
    await refuse(`ATTACH '${join(dir, 'x.duckdb')}' AS x`);
  });
  it('cannot INSTALL or LOAD extensions', async () => {
    await refuse('INSTALL httpfs');
    await refuse('LOAD httpfs');
  });
  it('cannot change settings', async () => {
    await refuse('SET enable_external_access = true');
    await refuse("SET allowed_directories = ['/']");
    await refuse('SET threads = 8');
    await refuse("SELECT current_setting('threads'); RESET lock_configuration");
  });
  it('cannot create, drop, insert or delete', async () => {
    await refuse('CREATE TABLE t AS SELECT 1');
    await refuse('DROP VIEW episodes');
    await refuse('DELETE FROM episodes');
    await refuse("INSERT INTO episodes (episode_id) VALUES ('x')");
  });
  it('a refused statement in a batch stops the batch before it runs', async () => {
    await refuse(`SELECT 1; COPY (SELECT 1) TO '${join(store, 'z.csv')}'`);
    expect(existsSync(join(store, 'z.csv'))).toBe(false);
  });
});
