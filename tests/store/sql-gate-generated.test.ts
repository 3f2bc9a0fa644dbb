/**
 * One tokenizer (issue 22, point 1): 10,000 generated statements, from a seeded generator, mix every
 * comment, quote and newline form DuckDB knows (`--` ended by \n, \r or \r\n; nested block
 * comments; '' and E'' strings; quoted identifiers; $$, $tag$ and $é$ dollar quotes; Unicode) with
 * every way DuckDB has to write a file or change a setting (enable_logging with file storage, into
 * a partition path or onto the lock file; enable_profiling; COPY; EXPORT/IMPORT DATABASE; ATTACH;
 * PRAGMA/SET of profiling and logging output; query() and json_execute_serialized_sql; CALL ...).
 * Each goes through the query gate as `standoff sql` runs it, as a notebook `sql` block runs it and
 * as a SQL metric file is read; the store must never change. The issue's exact reproductions are
 * in the list. A control runs a sample of the same payloads on a bare, unlocked DuckDB with no gate
 * and checks that they do write files there: the payloads are live, so the check can fail.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writeRun } from '../../src/store/write-run.ts';
import { executeReadOnly, openSandboxedStore } from '../../src/store/sql.ts';
import { sqlMetricFromFile } from '../../src/store/metrics.ts';
import { runNotebook } from '../../src/notebook/notebook.ts';
import { LOCK_FILE } from '../../src/store/lock.ts';
import type { Store } from '../../src/store/open-store.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { spawnSync } from 'node:child_process';

const N = 10_000;
const SEED = 22;

/** mulberry32: a small seeded generator (the statements are the same on every run). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every file-writing or setting-changing form, aimed at `store` (as a table function or a statement). */
function payloads(store: string): { fn: string[]; stmt: string[] } {
  const part = join(store, 'runs', 'run_id=zzz', 'data.parquet');
  const lock = join(store, LOCK_FILE);
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  return {
    fn: [
      `enable_logging(storage='file', storage_path=${q(part)})`,
      `enable_logging(storage='file', storage_path=${q(lock)})`,
      `enable_logging(storage = 'file', storage_path = ${q(join(store, 'logs'))}, level = 'trace')`,
      `system.main.enable_logging(storage='file', storage_path=${q(join(store, 'l2'))})`,
      `"Enable_Logging"(storage='file', storage_path=${q(join(store, 'l3'))})`,
      `enable_profiling(save_location=${q(join(store, 'p.txt'))})`,
      `query(${q(`COPY (SELECT 1) TO ${q(join(store, 'q.csv'))}`)})`,
      `json_execute_serialized_sql(json_serialize_sql('SELECT 1'))`,
      'checkpoint()',
      'force_checkpoint()',
      "write_log('x', level := 'error')",
      'truncate_duckdb_logs()',
      `copy_database('memory', 'memory')`,
      'disable_logging()',
    ],
    stmt: [
      `COPY (SELECT 1 AS x) TO ${q(join(store, 'c.csv'))}`,
      `COPY (SELECT * FROM runs) TO ${q(part)} (FORMAT parquet)`,
      `EXPORT DATABASE ${q(join(store, 'exported'))}`,
      `IMPORT DATABASE ${q(store)}`,
      `ATTACH ${q(join(store, 'a.duckdb'))} AS a`,
      `PRAGMA profiling_output = ${q(join(store, 'prof.json'))}`,
      `SET profiling_output = ${q(join(store, 'prof2.json'))}`,
      "SET logging_storage = 'file'",
      `SET log_query_path = ${q(join(store, 'ql.log'))}`,
      'PRAGMA enable_profiling',
      `CALL enable_logging(storage='file', storage_path=${q(join(store, 'l4'))})`,
      `EXPLAIN ANALYZE COPY (SELECT 1) TO ${q(join(store, 'e.csv'))}`,
      'SET lock_configuration = false',
      'CREATE TABLE t AS SELECT 1',
      'INSTALL httpfs',
    ],
  };
}

/** Text that hides what follows from a lexer that reads comments or quotes differently. */
const HIDERS = [
  '--\r',
  '-- x\r\n',
  '--\n',
  ' /* a */ ',
  ' /* /* nested */ -- */ ',
  ' $é$ -- $é$ AS a ',
  ' $tag$ -- $tag$ AS a ',
  ' $$ -- $$ AS a ',
  " E'\\' --' AS a ",
  " 'it''s -- ' AS a ",
  ' "col -- ;" ',
  ' "ñ…" ',
  ' \u00e9 ',
  '\r',
  '\r\n',
  '\t',
  ' -- é\u2028 ',
];

/** Statement n of the generated list (deterministic in SEED). */
function generate(store: string): string[] {
  const r = rng(SEED);
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const { fn, stmt } = payloads(store);
  const out: string[] = [];
  for (let i = 0; i < N; i++) {
    const h1 = pick(HIDERS);
    const h2 = pick(HIDERS);
    switch (i % 6) {
      case 0: // SELECT <hider> FROM <write function>
        out.push(`SELECT *${h1} FROM ${pick(fn)}${h2}\n; SELECT 1 AS x`);
        break;
      case 1: // a write function in the select list or a subquery
        out.push(`SELECT 1${h1}, (SELECT count(*) FROM ${pick(fn)}) AS n${h2}`);
        break;
      case 2: // a read, then a write statement after a hider
        out.push(`SELECT 1 AS a${h1};${h2}${pick(stmt)}`);
        break;
      case 3: // a write statement first, dressed as a comment or string
        out.push(`${h1}${pick(stmt)}${h2}`);
        break;
      case 4: // FROM-first and CTE forms
        out.push(`WITH w AS (FROM ${pick(fn)}) ${h1} FROM w${h2}`);
        break;
      default: // lateral and nested forms
        out.push(`SELECT * FROM range(1)${h1}, LATERAL (SELECT * FROM ${pick(fn)})${h2}`);
    }
  }
  return out;
}

let root: string;
let store: string;
let s: Store;
let statements: string[];

/** Names, sizes and mtimes of every entry under dir (cheap; the full hash is taken every 500). */
function listing(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${p}:${st.size}:${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.join('\n');
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-gate-gen-'));
  store = join(root, 'traces');
  await writeRun(store, sampleBundle('r1'));
  writeFileSync(join(store, LOCK_FILE), ''); // a lock file to aim at (as a stale one would be)
  mkdirSync(join(store, 'metrics'));
  s = await openSandboxedStore(store);
  statements = generate(store);
}, 60_000);
afterAll(() => {
  s?.close();
  rmSync(root, { recursive: true, force: true });
});

const issueCases = () => {
  const part = join(store, 'runs', 'run_id=zzz', 'data.parquet');
  return [
    `SELECT * --\r FROM enable_logging(storage='file', storage_path='${part}')\n; SELECT 1 AS x`,
    `SELECT $é$ -- $é$ AS a FROM enable_logging(storage='file', storage_path='${part}')`,
    `SELECT * --\r FROM enable_logging(storage='file', storage_path='${join(store, LOCK_FILE)}')\n; SELECT 1 AS x`,
  ];
};

describe('the query gate over 10,000 generated statements', () => {
  it('generates the same statements for the same seed, mixing every form', () => {
    expect(statements.length).toBe(N);
    expect(generate(store)).toEqual(statements);
    for (const h of HIDERS) expect(statements.some((x) => x.includes(h)), JSON.stringify(h)).toBe(true);
  });

  it('standoff sql (the library call it makes): no statement changes the store; every refusal is one line', async () => {
    const before = hashTree(store);
    const list = listing(store);
    let refused = 0;
    for (const [i, sql] of [...issueCases(), ...statements].entries()) {
      const err = await executeReadOnly(s.conn, sql).then(() => null, (e: Error & { kind?: string }) => e);
      if (err) {
        refused++;
        expect(err.name, sql).toBe('StandoffError');
        expect(err.message.includes('\n'), sql).toBe(false);
      }
      expect(listing(store), `statement ${i} changed the store: ${JSON.stringify(sql)}`).toBe(list);
      if (i % 500 === 0) expect(hashTree(store)).toBe(before);
    }
    expect(hashTree(store)).toBe(before);
    expect(refused).toBeGreaterThan(N * 0.9);
  }, 600_000);

  it('SQL metric files (the function ci and the metrics view call): no file changes the store', async () => {
    const file = join(store, 'metrics', 'gen.sql');
    const skip = (n: string) => n === 'metrics';
    const before = hashTree(store, skip);
    for (const [i, sql] of [...issueCases(), ...statements].entries()) {
      if (i % 2 === 1 && i > 10) continue; // half of them: the other half runs through sql above
      writeFileSync(file, sql);
      await sqlMetricFromFile(s.conn, file).catch(() => null);
      if (i % 250 === 0) expect(hashTree(store, skip), `metric ${i}: ${JSON.stringify(sql)}`).toBe(before);
    }
    // Opening the store reads every metric file there (as ci, the REPL and notebooks do).
    for (const sql of [...issueCases(), ...statements.slice(0, 30)]) {
      writeFileSync(file, sql);
      const t = await openSandboxedStore(store);
      t.close();
    }
    rmSync(file);
    expect(hashTree(store, skip)).toBe(before);
  }, 600_000);

  it('notebook sql blocks: a sample of 120 notebooks, each failing or not, never change the store', async () => {
    const before = hashTree(store);
    const sample = [...issueCases(), ...statements.filter((_, i) => i % 85 === 0)];
    for (const [i, sql] of sample.entries()) {
      const nb = join(root, `nb-${i}.md`);
      writeFileSync(nb, '```sql\n' + sql + '\n```\n');
      await runNotebook(nb, { traces: store, out: join(root, `nb-out-${i}`) }).catch(() => null);
    }
    expect(sample.length).toBeGreaterThanOrEqual(120);
    expect(hashTree(store)).toBe(before);
  }, 600_000);

  it('the CLI (a sample): standoff sql and ci with a metric file refuse the issue reproductions, exit 2, store unchanged', () => {
    const before = hashTree(store);
    for (const sql of issueCases()) {
      const r = runCli(['sql', '--traces', store, sql]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/calls enable_logging\(\)/);
      expect(r.stderr.trim().split('\n').length).toBe(1);
    }
    const metric = join(store, 'metrics', 'pwn.sql');
    writeFileSync(metric, issueCases()[0]!);
    const ci = runCli(['ci', 'exact', '--traces', store, '--metric', 'pwn']);
    expect(ci.code, ci.stderr).toBe(2);
    expect(ci.stderr).toMatch(/pwn\.sql.*enable_logging/);
    rmSync(metric);
    const later = runCli(['sql', '--traces', store, 'SELECT count(*) AS n FROM runs']);
    expect(later.code, later.stderr).toBe(0);
    expect(hashTree(store)).toBe(before);
  }, 120_000);

  it('defence in depth: payloads run straight on the sandboxed instance, past the gate, create no file', async () => {
    const before = hashTree(store);
    const { fn, stmt } = payloads(store);
    const all = [...fn.map((f) => `SELECT * FROM ${f}`), ...stmt];
    // DuckDB 1.5.6 aborts the process when an instance whose logging was switched to a file it
    // may not write is closed, so those run in a child process (the gate never lets one exist).
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', `
      const { openSandboxedStore } = await import(${JSON.stringify(join(ROOT, 'src/store/sql.ts'))});
      for (const sql of JSON.parse(process.env.PAYLOADS)) {
        const t = await openSandboxedStore(process.env.STORE);
        await t.conn.run(sql).catch(() => null);
        await t.conn.run('SELECT count(*) FROM episodes').catch(() => null);
        console.log('ran');
      }
      process.stdout.write('', () => process.exit(0));
    `], { env: { ...process.env, PAYLOADS: JSON.stringify(all.filter((x) => /logging/i.test(x))), STORE: store }, encoding: 'utf8', timeout: 120_000 });
    expect(child.stdout.split('ran').length - 1, child.stderr).toBe(all.filter((x) => /logging/i.test(x)).length);
    expect(hashTree(store)).toBe(before);
    for (const sql of all.filter((x) => !/logging/i.test(x))) {
      const t = await openSandboxedStore(store);
      try {
        await t.conn.run(sql).catch(() => null);
        await t.conn.run('SELECT count(*) FROM episodes').catch(() => null);
      } finally {
        t.close();
      }
      expect(hashTree(store), sql).toBe(before);
    }
  }, 120_000);

  it('control: the same payloads, run on a bare unlocked DuckDB without the gate, do write files', async () => {
    const scratch = join(root, 'scratch');
    mkdirSync(scratch);
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
    const conn = await db.connect();
    try {
      for (const sql of generate(scratch).filter((_, i) => i % 6 === 0).slice(0, 40)) await conn.run(sql).catch(() => null);
      await conn.run(issueCases()[0]!.replaceAll(store, scratch)).catch(() => null);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    expect(readdirSync(scratch).length).toBeGreaterThan(0);
  }, 120_000);
});
