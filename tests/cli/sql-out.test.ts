/**
 * `standoff sql` output, after issue 13: `--out` is written by the tool (streamed, never by a
 * DuckDB COPY, never inside the store, and without widening what the query may read), the table
 * format shows the first rows and counts the rest, CSV can be made formula-safe, and memory does
 * not grow with the row count (peak RSS measured by the kernel via `process.resourceUsage()`).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, symlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { writeRun } from '../../src/store/write-run.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { runCli, ROOT } from '../helpers/cli.ts';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-sqlout-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('r1'));
});

const readParquet = async (file: string, sql: string) => {
  const db = await createDb();
  return withConnection(db, (c) => query(c, sql.replace('$FILE', `'${file}'`)));
};

describe('standoff sql --out', () => {
  it('does not widen the sandbox: a query cannot read outside the store because of --out', () => {
    const out = join(dir, 'passwd.json');
    const r = runCli(['sql', '--traces', store, '--out', out, "SELECT content FROM read_text('/etc/passwd')"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/Permission Error/);
    expect(existsSync(out)).toBe(false);
  }, 240_000);

  it('refuses a target inside the store (also through a symlink), leaving the store unchanged', () => {
    const before = hashTree(store);
    const part = join(store, 'episodes', 'run_id=r1', 'data.parquet');
    for (const out of [part, join(store, 'x.csv'), join(store, 'runs', 'y.arrow')]) {
      const r = runCli(['sql', '--traces', store, '--out', out, 'SELECT 1 AS x']);
      expect(r.code, out).toBe(2);
      expect(r.stderr).toMatch(/^standoff: --out .* is inside the trace store/);
    }
    const link = join(dir, 'into-store');
    symlinkSync(join(store, 'episodes'), link);
    const r = runCli(['sql', '--traces', store, '--out', join(link, 'z.parquet'), 'SELECT 1 AS x']);
    expect(r.code).toBe(2);
    expect(hashTree(store)).toBe(before);
  }, 240_000);

  it('a query ending in a comment works with every --out format (it is never wrapped in SQL)', async () => {
    for (const ext of ['csv', 'json', 'parquet', 'arrow']) {
      const out = join(dir, `comment.${ext}`);
      const r = runCli(['sql', '--traces', store, '--out', out, 'SELECT 1 AS one -- a trailing comment']);
      expect(r.code, `${ext}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe(`wrote 1 row to ${out}\n`);
    }
    expect((await readParquet(join(dir, 'comment.parquet'), 'SELECT * FROM $FILE')).rows).toEqual([{ one: 1 }]);
    expect(readFileSync(join(dir, 'comment.csv'), 'utf8')).toBe('one\n1\n');
    expect(tableFromIPC(readFileSync(join(dir, 'comment.arrow'))).numRows).toBe(1);
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
  }, 240_000);

  it('parquet keeps DuckDB types exactly (decimals, lists, structs, timestamps, NULL) over several chunks', async () => {
    const out = join(dir, 'types.parquet');
    const r = runCli(['sql', '--traces', store, '--out', out, "SELECT range AS i, (range / 8)::DECIMAL(18,3) AS d, [range, range + 1] AS l, {'k': range} AS s, TIMESTAMP '2026-01-01' + INTERVAL (range) SECOND AS t, CASE WHEN range % 2 = 0 THEN NULL ELSE 'x' || range END AS v FROM range(5000)"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = await readParquet(out, "SELECT count(*)::INT AS n, sum(i)::BIGINT AS si, sum(d)::DOUBLE AS sd, sum(l[2])::BIGINT AS sl, max(s.k)::INT AS sk, max(t)::VARCHAR AS mt, count(v)::INT AS nv, typeof(any_value(d)) AS td FROM $FILE");
    expect(rows.rows[0]).toEqual({ n: 5000, si: 12497500, sd: 12497500 / 8, sl: 12502500, sk: 4999, mt: '2026-01-01 01:23:19', nv: 2500, td: 'DECIMAL(18,3)' });
  }, 240_000);

  it('arrow over several record batches (70,000 rows), and empty results in every format', async () => {
    const out = join(dir, 'many.arrow');
    expect(runCli(['sql', '--traces', store, '--out', out, "SELECT range AS i, 'r' || range AS s FROM range(70000)"]).code).toBe(0);
    const t = tableFromIPC(readFileSync(out));
    expect(t.numRows).toBe(70000);
    expect(t.batches.length).toBe(2);
    expect(t.get(69999)!.toJSON()).toEqual({ i: 69999n, s: 'r69999' });
    for (const ext of ['csv', 'json', 'parquet', 'arrow']) {
      const f = join(dir, `empty.${ext}`);
      const r = runCli(['sql', '--traces', store, '--out', f, "SELECT 1 AS a, 'x' AS b WHERE false"]);
      expect(r.stderr, ext).toBe(`wrote 0 rows to ${f}\n`);
    }
    expect(readFileSync(join(dir, 'empty.json'), 'utf8')).toBe('[]\n');
    expect(readFileSync(join(dir, 'empty.csv'), 'utf8')).toBe('a,b\n');
    expect(tableFromIPC(readFileSync(join(dir, 'empty.arrow'))).schema.fields.map((f) => f.name)).toEqual(['a', 'b']);
    expect((await readParquet(join(dir, 'empty.parquet'), 'SELECT count(*)::INT AS n FROM $FILE')).rows).toEqual([{ n: 0 }]);
  }, 240_000);

  it('CSV to a file is formula-safe by default; --no-csv-safe keeps cells as stored; stdout CSV is raw unless --csv-safe', () => {
    const q = `SELECT '=HYPERLINK("http://127.0.0.1:9/x","open")' AS a, '+cmd|'' /C calc''!A0' AS b, '@SUM(1+1)' AS c, -1 AS n, 'plain' AS p`;
    const out = join(dir, 'safe.csv');
    expect(runCli(['sql', '--traces', store, '--out', out, q]).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`a,b,c,n,p\n"'=HYPERLINK(""http://127.0.0.1:9/x"",""open"")",'+cmd|' /C calc'!A0,'@SUM(1+1),-1,plain\n`);
    expect(runCli(['sql', '--traces', store, '--out', out, '--no-csv-safe', q]).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`a,b,c,n,p\n"=HYPERLINK(""http://127.0.0.1:9/x"",""open"")",+cmd|' /C calc'!A0,@SUM(1+1),-1,plain\n`);
    expect(runCli(['sql', '--traces', store, '-f', 'csv', q]).stdout).toMatch(/^a,b,c,n,p\n"=HYPERLINK/);
    expect(runCli(['sql', '--traces', store, '-f', 'csv', '--csv-safe', q]).stdout).toMatch(/^a,b,c,n,p\n"'=HYPERLINK/);
  }, 240_000);
});

describe('standoff sql table output', () => {
  it('150,000 rows: the first 40, then "... 149960 more rows" (it used to overflow the stack)', () => {
    const r = runCli(['sql', '--traces', store, 'SELECT range FROM range(150000)']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2 + 40 + 2);
    expect(lines[2]!.trim()).toBe('0');
    expect(lines[41]!.trim()).toBe('39');
    expect(lines.slice(-2)).toEqual(['... 149960 more rows', '(150000 rows, 40 shown)']);
    const few = runCli(['sql', '--traces', store, '--max-rows', '3', 'SELECT range FROM range(10)']).stdout.trimEnd().split('\n');
    expect(few.slice(-2)).toEqual(['... 7 more rows', '(10 rows, 3 shown)']);
    expect(runCli(['sql', '--traces', store, '--max-rows', '0', 'SELECT 1']).code).toBe(2);
  }, 240_000);

  it('control and bidi characters are shown as \\uXXXX, a row stays on one line', () => {
    const r = runCli(['sql', '--traces', store, "SELECT 'a' || chr(27) || '[31mred' AS x, 'sim:' || chr(8238) || 'gnp.exe' AS y, 'two' || chr(10) || 'lines' AS z"]);
    expect(r.stdout.split('\n')[2]).toBe('a\\u001B[31mred  sim:\\u202Egnp.exe  two lines');
  }, 240_000);

  it('the REPL goes through the same gate: EXPLAIN ANALYZE is refused', () => {
    const before = hashTree(store);
    const part = join(store, 'episodes', 'run_id=r1', 'data.parquet');
    const r = runCli(['sql', '--traces', store], { input: `EXPLAIN ANALYZE COPY (SELECT * FROM episodes) TO '${part}' (FORMAT parquet);\nSELECT 42 AS x;\n` });
    expect(r.stderr).toMatch(/EXPLAIN ANALYZE, which executes the statement it explains/);
    expect(r.stdout).toMatch(/42/);
    expect(r.code).toBe(2);
    expect(hashTree(store)).toBe(before);
  }, 240_000);
});

describe('standoff sql streams: memory does not grow with the row count', () => {
  it('10,000,000 rows as CSV (to --out and to stdout) stay under 400 MB of peak RSS', () => {
    const out = join(dir, 'big.csv');
    const q = "SELECT range AS i, 'row ' || range AS s FROM range(10000000)";
    for (const args of [['--out', out], ['-f', 'csv']]) {
      const rssFile = join(dir, 'rss.txt');
      const r = spawnSync(process.execPath, ['--import', join(ROOT, 'tests/helpers/max-rss.mjs'), join(ROOT, 'bin/standoff.js'), 'sql', '--traces', store, ...args, q], {
        cwd: ROOT,
        env: { ...process.env, STANDOFF_RSS_FILE: rssFile },
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
        timeout: 240_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const rss = Number(readFileSync(rssFile, 'utf8'));
      expect(rss, `${args[0]}: peak RSS ${Math.round(rss / 1e6)} MB`).toBeLessThan(400e6);
    }
    expect(statSync(out).size).toBeGreaterThan(190e6);
    expect(readFileSync(out, 'utf8').slice(0, 30)).toBe('i,s\n0,row 0\n1,row 1\n2,row 2\n3,');
  }, 600_000);
});
