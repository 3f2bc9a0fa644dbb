import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { writeRun } from '../../src/store/write-run.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-cli-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('r1'));
});

const Q = 'SELECT subject_model, avg(gathered_evidence::int) AS gathered, count(*) AS n, max(seed) AS seed FROM episodes JOIN runs USING (run_id) GROUP BY 1';

describe('standoff sql', () => {
  it('prints an aligned table with BIGINT as plain numbers', () => {
    const r = runCli(['sql', '--traces', store, Q]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^subject_model\s+gathered\s+n\s+seed$/);
    expect(lines[2]).toMatch(/^sim:careful\s+0\.666667\s+3\s+4294967295$/);
    expect(r.stdout).not.toMatch(/\d+n\b/);
    // Columns line up: every value ends where its header ends (numbers right-aligned).
    expect(lines[2].length).toBe(lines[0].length);
  });
  it('--format json never throws on BIGINT and gives numbers', () => {
    const r = runCli(['sql', '--traces', store, '--format', 'json', Q]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ subject_model: 'sim:careful', gathered: 2 / 3, n: 3, seed: 4294967295 }]);
  });
  it('--format csv and markdown', () => {
    expect(runCli(['sql', '--traces', store, '--format', 'csv', Q]).stdout).toBe('subject_model,gathered,n,seed\nsim:careful,0.6666666666666666,3,4294967295\n');
    const md = runCli(['sql', '--traces', store, '--format', 'markdown', Q]).stdout;
    expect(md.split('\n')[1]).toBe('| --- | ---: | ---: | ---: |');
  });
  it('--out writes csv, json, parquet and arrow files that read back', async () => {
    const out = join(dir, 'out');
    mkdirSync(out, { recursive: true });
    for (const ext of ['csv', 'json', 'parquet', 'arrow']) {
      const r = runCli(['sql', '--traces', store, '--out', join(out, `r.${ext}`), 'SELECT episode_id, epoch, seed, gathered_evidence FROM episodes JOIN runs USING (run_id) ORDER BY epoch']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/wrote 3 rows/);
    }
    expect(JSON.parse(readFileSync(join(out, 'r.json'), 'utf8'))[0].seed).toBe(4294967295);
    const t = tableFromIPC(readFileSync(join(out, 'r.arrow')));
    expect(t.numRows).toBe(3);
    expect(Array.from(t.getChild('epoch')!.toArray() as Int32Array)).toEqual([1, 2, 3]);
    expect(t.getChild('epoch')!.toArray()).toBeInstanceOf(Int32Array);
    const db = await createDb();
    const rows = await withConnection(db, (c) => query(c, `SELECT count(*)::INT AS n, sum(epoch)::INT AS s FROM '${join(out, 'r.parquet')}'`));
    expect(rows.rows[0]).toEqual({ n: 3, s: 6 });
  });
  it('bad --out extension is a usage error', () => {
    const r = runCli(['sql', '--traces', store, '--out', join(dir, 'x.xlsx'), 'SELECT 1']);
    expect(r.code).toBe(2);
  });
});

describe('standoff sql bad input: one line on stderr, documented exit code, nothing changed', () => {
  const bad = (args: string[], code: number, pattern: RegExp) => {
    const before = hashTree(dir);
    const r = runCli(args);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr.trim().split('\n').length).toBe(1);
    expect(r.stderr).toMatch(pattern);
    expect(r.stdout).toBe('');
    expect(hashTree(dir)).toBe(before);
  };
  it('syntax error -> 2, DuckDB message kept', () => bad(['sql', '--traces', store, 'SELEC 1'], 2, /syntax error at or near "SELEC"/));
  it('unknown table -> 2', () => bad(['sql', '--traces', store, 'SELECT * FROM nope'], 2, /Table with name nope does not exist/));
  it('missing store -> 4', () => bad(['sql', '--traces', join(dir, 'missing'), 'SELECT 1'], 4, /does not exist/));
  it('empty store -> 4', () => {
    mkdirSync(join(dir, 'empty'), { recursive: true });
    bad(['sql', '--traces', join(dir, 'empty'), 'SELECT 1'], 4, /holds no runs/);
  });
  it('corrupt Parquet -> 4', async () => {
    const s2 = join(dir, 'corrupt');
    await writeRun(s2, sampleBundle('c1'));
    writeFileSync(join(s2, 'episodes', 'run_id=c1', 'data.parquet'), 'not parquet at all');
    bad(['sql', '--traces', s2, 'SELECT count(*) FROM episodes'], 4, /corrupt|parquet/i);
  });
  it('unreadable Parquet (truncated) -> 4', async () => {
    const s3 = join(dir, 'trunc');
    await writeRun(s3, sampleBundle('t1'));
    const f = join(s3, 'messages', 'run_id=t1', 'data.parquet');
    writeFileSync(f, readFileSync(f).subarray(0, 100));
    bad(['sql', '--traces', s3, 'SELECT count(*) FROM messages'], 4, /parquet/i);
  });
  it('unknown option -> 2', () => bad(['sql', '--traces', store, '--nope', 'SELECT 1'], 2, /unknown option/));
  it('write attempt -> 2', () => bad(['sql', '--traces', store, `COPY (SELECT 1) TO '${join(store, 'x.csv')}'`], 2, /read-only/));
});

describe('standoff sql REPL', () => {
  it('runs dot commands and multi-line statements from stdin', () => {
    const r = runCli(['sql', '--traces', store], {
      input: '.tables\n.schema episodes\n.mode csv\nSELECT count(*) AS n\n  FROM episodes;\n.mode json\nSELECT 1 AS one;\n.quit\nSELECT 2;\n',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/episodes\s+3\s+1/);
    expect(r.stdout).toMatch(/gathered_evidence\s+BOOLEAN/);
    expect(r.stdout).toContain('n\n3\n');
    expect(r.stdout).toContain('"one": 1');
    expect(r.stdout).not.toContain('"2"');
  });
  it('reports an error in a statement and continues', () => {
    const r = runCli(['sql', '--traces', store], { input: 'SELEC 1;\nSELECT 42 AS x;\n' });
    expect(r.stderr).toMatch(/syntax error/);
    expect(r.stdout).toMatch(/42/);
    expect(r.code).toBe(2);
  });
});

describe('standoff tables / --help', () => {
  it('lists tables with row counts and the runs', () => {
    const r = runCli(['tables', '--traces', store]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/episodes\s+3\s+1/);
    expect(r.stdout).toMatch(/r1\s+standoff\s+standoff-o1\s+success/);
  });
  it('--help lists commands and each command has an example', () => {
    const r = runCli(['--help']);
    expect(r.code).toBe(0);
    const commands = [...r.stdout.matchAll(/^  ([a-z-]+)(?: \[options\]| \[command\]|\s)/gm)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(commands).toContain('sql');
    for (const c of commands) {
      const h = runCli([c, '--help']);
      expect(h.code, c).toBe(0);
      expect(h.stdout, `${c} --help has an example`).toMatch(/Examples?:|\$ standoff/);
    }
  });
});
