/**
 * No silent empty ingest (issue 22, point 2): a CSV whose header has a quoted line feed and whose
 * records end in CRLF (as Python's csv module and Excel write it) ingests every row, by `ingest csv`
 * and by `--input`; and the row-count check that guards against DuckDB losing rows fails on
 * purpose on the file DuckDB 1.5 reads as empty.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCsvRun } from '../../src/ingest/ingest-csv.ts';
import { readInputFile, texts } from '../../src/analysis/input-file.ts';
import { createDb, withConnection } from '../../src/store/duckdb.ts';
import { readCsvHeader, scanCsvFile } from '../../src/store/csv-scan.ts';
import { combineCsvProblems, readCsvSql, rowCountProblem } from '../../src/store/read-csv.ts';

const HEADER_LF_CRLF = 'model,item,score,"me\nta"\r\nm1,i1,1,x\r\nm1,i2,0,y\r\nm2,i1,1,z\r\n';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-rowcount-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a header with a quoted line feed in a CRLF file', () => {
  it('ingests every row, the metadata column keeping its name', async () => {
    const f = join(dir, 'h.csv');
    writeFileSync(f, HEADER_LF_CRLF);
    const { bundle, summary } = await buildCsvRun([f], { traces: join(dir, 'S'), flags: { subject: 'model', item: 'item', scores: ['score'] } });
    expect(summary.files[0]!.rows).toBe(3);
    expect(bundle.episodes!.map((e) => [e.subject_model, e.scenario_id, e.metadata])).toEqual([
      ['m1', 'i1', '{"me\\nta":"x"}'],
      ['m1', 'i2', '{"me\\nta":"y"}'],
      ['m2', 'i1', '{"me\\nta":"z"}'],
    ]);
    expect(bundle.scores!.map((s) => s.value)).toEqual([1, 0, 1]);
  });

  it('keeps line numbers: a bad value after the header is reported on its physical line', async () => {
    const f = join(dir, 'h.csv');
    writeFileSync(f, 'model,item,score,"me\nta"\r\nm1,i1,1,x\r\nm1,i2,seven,y\r\n');
    await expect(buildCsvRun([f], { traces: join(dir, 'S'), flags: { subject: 'model', item: 'item', scores: ['score'] } })).rejects.toThrow(/h\.csv: line 4, field "score"/);
  });

  it('reads every row through --input', async () => {
    const f = join(dir, 'h.csv');
    writeFileSync(f, HEADER_LF_CRLF);
    const t = await readInputFile(f, [{ name: 'model', kind: 'text' }, { name: 'me\nta', kind: 'text' }]);
    expect(t.rows).toBe(3);
    expect(texts(t, 'me\nta')).toEqual(['x', 'y', 'z']);
    expect(t.lines).toEqual([3, 4, 5]);
  });
});

describe('the row-count check', () => {
  it('fails when DuckDB reads fewer rows than the file holds (DuckDB 1.5 on the original file)', async () => {
    const f = join(dir, 'h.csv');
    writeFileSync(f, HEADER_LF_CRLF);
    const head = await readCsvHeader(f);
    expect(head.multiline).toBe(true);
    const db = await createDb({ threads: 1 });
    try {
      await withConnection(db, async (conn) => {
        // The original file, not the copy csvSourceFor would give: DuckDB silently reads no row.
        const n = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${readCsvSql(f, 4, 0, 'rej')}`)).getRowObjectsJS()[0]!.n);
        const scan = await scanCsvFile(f);
        const load = await combineCsvProblems(conn, f, head.header!, scan, 'rej');
        expect(rowCountProblem(f, scan, load, n)?.message).toBe(`DuckDB read ${n} rows but the file holds 3 records after the header; nothing was read (please report this file)`);
        expect(rowCountProblem(f, scan, load, 3)).toBeNull();
      });
    } finally {
      db.closeSync();
    }
  });
});
