/**
 * The one CSV reader (src/store/read-csv.ts, csv-scan.ts, csv-values.ts) and the SQL path of the
 * ingest: the byte scan gives the same records and lines in any chunking; problems found in SQL
 * late in a large file (past DuckDB's buffers, after multi-line quoted fields and blank lines) name
 * the physical line; the cell conversions agree with JavaScript's own number parser; what
 * `ingestCsv` writes (SQL straight into Parquet) is what the row objects of `buildCsvRun` write
 * through the checked row path; duplicate keys are the joined ids, found across files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CsvScanner, readCsvHeader } from '../../src/store/csv-scan.ts';
import { convertSql } from '../../src/store/csv-values.ts';
import { createDb, withConnection } from '../../src/store/duckdb.ts';
import { buildCsvRun, ingestCsv, IngestError } from '../../src/ingest/ingest-csv.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLES, TABLE_NAMES, sqlColumns, type TableName } from '../../src/schema/tables.ts';

const FIX = resolve(import.meta.dirname, '../fixtures/csv');
const fx = (name: string) => join(FIX, name);
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'standoff-csvreader-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const enc = (s: string) => new TextEncoder().encode(s);

/** Scans bytes fed in chunks of the given sizes (cycled). */
function scan(bytes: Uint8Array, sizes: number[]) {
  const s = new CsvScanner();
  let pos = 0;
  let k = 0;
  while (pos < bytes.length) {
    const n = Math.max(1, sizes[k++ % sizes.length]!);
    s.push(Buffer.from(bytes.subarray(pos, pos + n)));
    pos += n;
  }
  s.end();
  const r = s.result();
  const lines = Array.from({ length: r.records }, (_, i) => r.lines.physLine(i));
  return { header: r.header, records: r.records, lines, problems: r.problems.map((p) => [p.code, p.line, p.field]) };
}

describe('the byte scan', () => {
  const tricky = '\uFEFFa,b,c\r\n1,"x, y",3\r\n"multi\r\nline ""quoted""",é€😀,\r\n\r\n,,\r\n"",plain,last';

  it('places records on their physical lines (quoted line breaks, blank lines, BOM, CRLF, no final newline)', () => {
    const r = scan(enc(tricky), [1 << 20]);
    expect(r.header).toEqual(['a', 'b', 'c']);
    expect(r.records).toBe(5);
    expect(r.lines).toEqual([1, 2, 3, 6, 7]);
    expect(r.problems).toEqual([]);
  });

  it('gives the same result for any chunking', () => {
    const want = scan(enc(tricky), [1 << 20]);
    for (const sizes of [[1], [2], [3], [5, 1, 7], [13], [64]]) expect(scan(enc(tricky), sizes), `chunks ${sizes}`).toEqual(want);
    // A large LF file takes the fast path for whole chunks; the slow path must agree.
    const lines = ['h1,h2'];
    for (let i = 0; i < 5000; i++) lines.push(i % 1000 === 7 ? `"q\n${i}",x` : i % 777 === 3 ? `\n${i},y` : `${i},z`);
    const big = enc(lines.join('\n') + '\n');
    const fast = scan(big, [65536]);
    expect(scan(big, [1])).toEqual(fast);
    expect(scan(big, [4097, 31])).toEqual(fast);
    expect(fast.problems).toEqual([]);
  });

  it('reports UTF-8, quote and line-ending problems with their line and field, in any chunking', () => {
    const bytes = new Uint8Array([...enc('a,b\nok,1\nx'), 0xff, ...enc('y,2\nfine,3\n')]);
    for (const sizes of [[bytes.length], [1], [4]]) expect(scan(bytes, sizes).problems).toEqual([['notUtf8', 3, 0]]);
    expect(scan(new Uint8Array([...enc('a,b\nx,'), 0xe2, 0x82]), [3]).problems).toEqual([['notUtf8', 2, 1]]);
    expect(scan(enc('a,b\nx"y,1\n'), [2]).problems).toEqual([['badQuote', 2, 0]]);
    expect(scan(enc('a,b\n"x"y,1\n'), [2]).problems).toEqual([['badQuote', 2, 0]]);
    expect(scan(enc('a,b\nx\ry,1\n'), [2]).problems).toEqual([['badLineEnding', 2, 0]]);
    expect(scan(enc('a,b\r\n1,2\n3,4\r\n'), [5]).problems).toEqual([['badLineEnding', 2, null]]);
    expect(scan(enc('a,b\n1,2\n"open,3\n4,5\n'), [3]).problems).toEqual([['unterminatedQuote', 3, 0]]);
  });

  it('reads only as far as the header when asked', async () => {
    const d = tempDir();
    const f = join(d, 'h.csv');
    writeFileSync(f, '\n\n"first, name",b\n1,2\n');
    expect(await readCsvHeader(f)).toMatchObject({ header: ['first, name', 'b'], skip: 2, problems: [], headerEnd: 18, multiline: false });
  });
});

describe('problems found in SQL name the physical line, far into a large file', () => {
  it('after multi-line quoted fields and blank lines, past DuckDB buffer boundaries', async () => {
    const d = tempDir();
    const f = join(d, 'big.csv');
    const lines = ['model,sample_id,epoch,score,notes'];
    let physical = 1;
    const badAt: number[] = [];
    for (let i = 0; i < 120_000; i++) {
      let note = 'plain';
      if (i % 5000 === 1) note = '"two\nlines"';
      if (i % 7000 === 2) lines.push('');
      const bad = i === 119_990 || i === 60_001;
      lines.push(`m${i % 3},s${i},1,${bad ? 'maybe' : 'C'},${note}`);
      physical += (i % 7000 === 2 ? 1 : 0) + 1;
      if (bad) badAt.push(physical);
      physical += note.includes('\n') ? 1 : 0;
    }
    writeFileSync(f, lines.join('\n') + '\n');
    const err = await ingestCsv([f], { traces: join(d, 't') }).catch((e) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect(err.errors).toEqual(badAt.map((l) => `${f}: line ${l}, field "score": expected a score (a number, C/I/P/N, correct/incorrect/NOANSWER, true/false), got "maybe"`));
  }, 120_000);
});

describe('cell conversion in SQL', () => {
  it('numbers: the value of every decimal literal is the one JavaScript parses (Number)', async () => {
    const rnd = (() => {
      let s = 12345;
      return (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff), s % n);
    })();
    const cases = ['0', '-0', '+0', '.5', '5.', '-.5', '0.1', '0.30000000000000004', '123456789012345', '12345678901234567890', '3.7', '1e3', '1E-3', '00012.50', '2.2250738585072014e-308', '1.7976931348623157e308'];
    for (let k = 0; k < 2000; k++) {
      const nd = 1 + rnd(18);
      const dot = rnd(nd + 2);
      let s = ['', '-', '+'][rnd(3)]!;
      for (let j = 0; j < nd; j++) s += (j === dot ? '.' : '') + String(rnd(10));
      if (rnd(4) === 0) s += `e${rnd(2) ? '-' : ''}${rnd(300)}`;
      cases.push(s);
    }
    const db = await createDb({ threads: 1 });
    try {
      const conv = convertSql('num', 'x');
      const rows = await withConnection(db, async (c) => {
        await c.run('CREATE TABLE t (i INTEGER, x VARCHAR)');
        const ap = await c.createAppender('t');
        cases.forEach((x, i) => {
          ap.appendInteger(i);
          ap.appendVarchar(x);
          ap.endRow();
        });
        ap.closeSync();
        return (await c.runAndReadAll(`SELECT i, ${conv.value} AS v, ${conv.why} AS w FROM t ORDER BY i`)).getRowObjectsJS();
      });
      for (const r of rows) {
        const x = cases[r.i as number]!;
        const want = Number(x);
        if (!Number.isFinite(want)) expect(r.w, x).toBe('notFinite');
        else expect(Object.is(r.v, want) || (want === 0 && r.v === 0), x).toBe(true);
      }
    } finally {
      db.closeSync();
    }
  });

  it('rejects what DuckDB alone would take: 3.5 as an integer, NaN, inf, 1_000, 0x10', async () => {
    const db = await createDb({ threads: 1 });
    try {
      const int = convertSql('int', 'x');
      const num = convertSql('num', 'x');
      const r = await withConnection(db, async (c) =>
        (await c.runAndReadAll(`SELECT x, ${int.value} AS i, ${int.why} AS iw, ${num.value} AS n, ${num.why} AS nw FROM (VALUES ('3.5'), ('NaN'), ('inf'), ('1_000'), ('0x10'), (' 3.0 '), ('3e2')) t(x)`)).getRowObjectsJS(),
      );
      expect(r.map((x) => [x.x, x.i, x.iw, x.n, x.nw])).toEqual([
        ['3.5', null, 'notInteger', 3.5, null],
        ['NaN', null, 'notNumber', null, 'notNumber'],
        ['inf', null, 'notNumber', null, 'notNumber'],
        ['1_000', null, 'notNumber', null, 'notNumber'],
        ['0x10', null, 'notNumber', null, 'notNumber'],
        [' 3.0 ', 3, null, 3, null],
        ['3e2', 300, null, 300, null],
      ]);
    } finally {
      db.closeSync();
    }
  });
});

/** Every table of a store, rows as sorted JSON (timestamps to the microsecond). */
async function dump(store: string): Promise<Record<string, string[]>> {
  const s = await openStore(store);
  try {
    const out: Record<string, string[]> = {};
    for (const table of TABLE_NAMES) {
      const cols = sqlColumns(table)
        .map((c) => (c.type === 'TIMESTAMP' ? `strftime("${c.name}", '%Y-%m-%dT%H:%M:%S.%fZ') AS "${c.name}"` : `"${c.name}"`))
        .join(', ');
      const { rows } = await query(s.conn, `SELECT ${cols} FROM ${table} ORDER BY ALL`);
      out[table] = rows.map((r) => JSON.stringify(r));
    }
    return out;
  } finally {
    s.close();
  }
}

describe('the SQL path writes what the checked row path writes', () => {
  async function samePaths(files: string[], map?: string) {
    const d = tempDir();
    const now = new Date('2026-08-10T15:02:57.000Z');
    await ingestCsv(files, { traces: join(d, 'sql'), map, runId: 'same', now });
    const { bundle } = await buildCsvRun(files, { traces: join(d, 'rows'), map, runId: 'same', now });
    for (const t of Object.keys(TABLES) as TableName[]) {
      const rows = t === 'runs' ? [bundle.run] : ((bundle[t] as unknown[] | undefined) ?? []);
      for (const row of rows) if (!TABLES[t].safeParse(row).success) expect.fail(`${t}: ${JSON.stringify(row)}`);
    }
    await writeRun(join(d, 'rows'), bundle); // validated by zod on the way in
    const left = await dump(join(d, 'sql'));
    const right = await dump(join(d, 'rows'));
    for (const t of TABLE_NAMES) expect(left[t], t).toEqual(right[t]);
    return left;
  }

  it('for every fixture: episodes with scores and metadata, BOM and CRLF, judgments, probe answers, aggregates, a mapping file', async () => {
    const r = await samePaths([fx('episodes.csv')]);
    expect(r.episodes).toHaveLength(6);
    await samePaths([fx('episodes-bom-crlf.csv')]);
    const all = await samePaths([fx('judgments.csv'), fx('probe-answers.csv'), fx('seed-published-table.csv')]);
    expect([all.judgments!.length, all.probe_answers!.length, all.aggregates!.length]).toEqual([3, 3, 12]);
    expect((await samePaths([fx('mapped-episodes.csv')], fx('mapped-episodes.map.json'))).scores).toHaveLength(8);
  });
});

describe('duplicate episode keys', () => {
  const csv = (dir: string, name: string, lines: string[]) => {
    const f = join(dir, name);
    writeFileSync(f, lines.join('\n') + '\n');
    return f;
  };

  it("are the joined ids: 'a/b' + 'c' and 'a' + 'b/c' collide", async () => {
    const d = tempDir();
    const f = csv(d, 'slash.csv', ['model,sample_id,epoch', 'x/y,s,1', 'a/b,c,1', 'a,b/c,1', 'a,b/c,2']);
    const err = await ingestCsv([f], { traces: join(d, 't') }).catch((e) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect(err.errors).toEqual([`${f}: line 4, field "episode_id": duplicate episode "a/b/c/1" (first on line 3)`]);
  });

  it('are found between a file with its own episode_id column and one whose ids are joined', async () => {
    const d = tempDir();
    const a = csv(d, 'a.csv', ['episode_id,model,sample_id', 'm/s1/1,m,s1', 'm/s9/1,m,s9']);
    const b = csv(d, 'b.csv', ['model,sample_id', 'm,s2', 'm,s1']);
    const err = await ingestCsv([a, b], { traces: join(d, 't') }).catch((e) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect(err.errors).toEqual([`${b}: line 3, field "episode_id": duplicate episode "m/s1/1" (first on line 2 of ${a})`]);
  });

  it('are found when only some rows have a slash in the scenario (the joined ids are hashed then)', async () => {
    const d = tempDir();
    const f = csv(d, 'mixed.csv', ['model,sample_id,epoch', 'm,s1,1', 'm,a/b,1', 'm,s1,01']);
    const err = await ingestCsv([f], { traces: join(d, 't') }).catch((e) => e);
    expect(err.errors).toEqual([`${f}: line 4, field "episode_id": duplicate episode "m/s1/1" (first on line 2)`]);
  });

  it('are found across files, naming the first occurrence', async () => {
    const d = tempDir();
    const a = csv(d, 'a.csv', ['model,sample_id,epoch', 'm,s1,1', 'm,s2,1', 'n,s1,300', 'm,s1,-5']);
    const b = csv(d, 'b.csv', ['model,sample_id,epoch', 'n,s1,300', 'm,s1,-5', 'm,s3,1']);
    const err = await ingestCsv([a, b], { traces: join(d, 't') }).catch((e) => e);
    expect(err.errors).toEqual([
      `${b}: line 2, field "episode_id": duplicate episode "n/s1/300" (first on line 4 of ${a})`,
      `${b}: line 3, field "episode_id": duplicate episode "m/s1/-5" (first on line 5 of ${a})`,
    ]);
  });
});
