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
  it('EXPLAIN ANALYZE (which executes what it wraps) is refused, in every spelling: the committed run stays as it was', async () => {
    const part = join(store, 'episodes', 'run_id=r1', 'data.parquet');
    const copy = `COPY (SELECT * REPLACE ('sim:PWNED' AS subject_model) FROM episodes) TO '${part}' (FORMAT parquet)`;
    expect(await refuse(`EXPLAIN ANALYZE ${copy}`)).toMatch(/statement 1 is EXPLAIN ANALYZE, which executes the statement it explains/);
    await refuse(`EXPLAIN ANALYSE ${copy}`);
    await refuse(`explain /* c */ analyze ${copy}`);
    await refuse(`EXPLAIN -- c\n ANALYZE ${copy}`);
    await refuse(`EXPLAIN (ANALYZE) ${copy}`);
    await refuse(`EXPLAIN (FORMAT json, ANALYZE) SELECT 1`);
    await refuse(`EXPLAIN ANALYZE SELECT 1`);
    // A fake committed run, and PARTITION_BY ... OVERWRITE deleting one.
    await refuse(`EXPLAIN ANALYZE COPY (SELECT * REPLACE ('fake' AS run_id) FROM runs) TO '${join(store, 'runs', 'run_id=fake', 'data.parquet')}' (FORMAT parquet)`);
    await refuse(`EXPLAIN ANALYZE COPY (SELECT 1 AS x, 'r1' AS run_id) TO '${join(store, 'episodes')}' (FORMAT parquet, PARTITION_BY (run_id), OVERWRITE)`);
    // EXPLAIN of anything but a read is refused too; EXPLAIN of a read plans it.
    await refuse(`EXPLAIN ${copy}`);
    expect((await executeReadOnly(s.conn, 'EXPLAIN SELECT count(*) FROM episodes')).rows.length).toBeGreaterThan(0);
    expect((await executeReadOnly(s.conn, 'SELECT DISTINCT subject_model FROM episodes')).rows).toEqual([{ subject_model: 'sim:careful' }]);
  });
  it("refuses DuckDB's other write paths: EXPORT DATABASE, COPY ... FROM, CREATE SECRET, PRAGMA writes, writing table functions", async () => {
    expect(await refuse(`EXPORT DATABASE '${join(store, 'exported')}'`)).toMatch(/statement 1 is a EXPORT statement/);
    expect(existsSync(join(store, 'exported'))).toBe(false); // preparing EXPORT would create it: the gate runs before
    await refuse(`IMPORT DATABASE '${store}'`);
    await refuse(`COPY episodes FROM '${join(store, 'episodes', 'run_id=r1', 'data.parquet')}'`);
    await refuse("CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')");
    await refuse("CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')");
    await refuse('PRAGMA enable_profiling');
    await refuse(`PRAGMA profiling_output = '${join(store, 'p.json')}'`);
    await refuse(`PRAGMA import_database('${store}')`);
    await refuse('PRAGMA force_checkpoint');
    await refuse("CALL enable_logging(storage = 'file')");
    expect(await refuse(`SELECT * FROM enable_logging(storage = 'file', storage_path = '${join(store, 'logs')}')`)).toMatch(/calls enable_logging\(\)/);
    await refuse(`SELECT * FROM "Enable_Logging"(storage = 'file', storage_path = '${join(store, 'logs')}')`);
    await refuse(`SELECT * FROM system.main.enable_logging /* x */ (storage = 'file', storage_path = '${join(store, 'logs')}')`);
    await refuse("SELECT write_log('x')");
    await refuse(`SELECT * FROM enable_profiling(save_location = '${join(store, 'p.txt')}')`);
    await refuse('SELECT * FROM checkpoint()');
    await refuse('SELECT * FROM force_checkpoint()');
    expect(await refuse(`SELECT * FROM query('SELECT * FROM enable_logging(storage = ''file'')')`)).toMatch(/runs SQL held in a string/);
    await refuse("SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))");
    await refuse('SET VARIABLE x = 1');
    expect(await refuse('PIVOT episodes ON subject_model USING count(*)')).toMatch(/PIVOT without IN/);
    expect((await executeReadOnly(s.conn, "PIVOT (SELECT subject_model FROM episodes) ON subject_model IN ('sim:careful') USING count(*)")).rows).toEqual([{ 'sim:careful': 3 }]);
    expect(await refuse('SELECT 1 AS a\u0000, 2 AS b')).toMatch(/NUL/);
    expect(await refuse(`SELECT 1; EXPORT DATABASE '${join(store, 'ex2')}'`)).toMatch(/not a plain read/);
    await refuse('CALL pragma_version()');
    await refuse('CHECKPOINT');
    await refuse('BEGIN');
    await refuse('VACUUM');
    await refuse('CREATE MACRO m(a) AS a');
    await refuse('PREPARE p AS SELECT 1');
    await refuse("USE memory");
    expect(readdirSync(store).sort()).toEqual(['episodes', 'judgments', 'messages', 'probe_answers', 'probe_decisions', 'runs', 'scores', 'aggregates'].sort());
  });
  it('reads in every read form work: EXPLAIN, DESCRIBE, SHOW, SUMMARIZE, read-only PRAGMAs, FROM-first, strings holding keywords', async () => {
    for (const q of [
      'EXPLAIN SELECT 1',
      'EXPLAIN (FORMAT json) SELECT 1',
      'DESCRIBE episodes',
      'SHOW TABLES',
      'SUMMARIZE episodes',
      'PRAGMA version',
      "PRAGMA table_info('episodes')",
      'FROM episodes LIMIT 1',
      'WITH a AS (SELECT 1 AS x) SELECT * FROM a',
      '(SELECT 1)',
      'VALUES (1), (2)',
      "SELECT 'EXPLAIN ANALYZE COPY; enable_logging(' AS s -- ; COPY",
      "SELECT $$ ; COPY $$ AS s",
      'SELECT "query"(1) FROM (SELECT 1)'.replace('"query"(1)', '1 AS "query"'),
    ]) {
      await expect(executeReadOnly(s.conn, q), q).resolves.toBeDefined();
    }
    expect((await executeReadOnly(s.conn, "SELECT 'a;b' AS s; SELECT 2 AS two")).rows).toEqual([{ two: 2 }]);
  });
  it('the instance can open only the files its views read: no directory, no spill directory, logging in memory', async () => {
    const r = await executeReadOnly(s.conn, "SELECT current_setting('allowed_directories') AS a, current_setting('temp_directory') AS t, current_setting('logging_storage') AS l");
    expect(r.rows).toEqual([{ a: [], t: '', l: 'memory' }]);
    const paths = (await executeReadOnly(s.conn, "SELECT current_setting('allowed_paths') AS p")).rows[0]!.p as string[];
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => p.startsWith(store) && p.endsWith('.parquet'))).toBe(true);
  });
  it("reads statements as DuckDB's parser does (strings, quoted names, comments, dollar quotes)", async () => {
    expect((await executeReadOnly(s.conn, "SELECT ';' AS \"a;b\" /* ; */ -- ;\n; SELECT E'\\';' ; SELECT $t$;$t$ AS z;;")).rows).toEqual([{ z: ';' }]);
    expect(await refuse("SELECT 'open")).toMatch(/unterminated quoted string/);
    await refuse('SELECT /* open');
  });
  it('a refused statement in a batch stops the batch before it runs', async () => {
    await refuse(`SELECT 1; COPY (SELECT 1) TO '${join(store, 'z.csv')}'`);
    expect(existsSync(join(store, 'z.csv'))).toBe(false);
  });
});
