/**
 * Issue 28: a probe part's scan (`partFilterSql` with `$part_lo` / `$part_hi` bound as parameters)
 * must skip the Parquet row groups whose scenario ids lie outside the part, by their min/max
 * statistics: in a run's order (subject, scenario, epoch) that is what keeps eight parts at 1e7
 * from decoding every row group eight times. Timing cannot be asserted, so the test makes
 * skipping observable: the last row group's column chunks are overwritten with garbage (the
 * footer, with its statistics, stays intact), so a scan that reads them fails. A part that ends
 * before that row group must read the store without error; the whole store, or a part reaching
 * into it, must fail (so the check can fail).
 */
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { sampleBundle } from '../helpers/fixtures.ts';
import { writeRun, partitionDir } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query, quoteLiteral } from '../../src/store/duckdb.ts';
import { partFilterSql, partParams, type ProbePart } from '../../src/analysis/probe-parts.ts';

const root = mkdtempSync(join(tmpdir(), 'standoff-prune-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** DuckDB writes row groups of at least its vector size (2,048 rows). */
const PER_GROUP = 2048;
const SCENARIOS = 4 * PER_GROUP;
/** Longer than the 8 bytes DuckDB keeps of a string's min/max in its own statistics: the Parquet reader prunes on the whole value. */
const sid = (k: number) => `scenario_${String(k).padStart(5, '0')}`;

beforeAll(async () => {
  const base = sampleBundle('r1', 3);
  const answers = Array.from({ length: SCENARIOS }, (_, k) => ({
    run_id: 'r1', state_id: `${sid(k)}/1`, subject_model: 'sim:careful', scenario_id: sid(k), epoch: 1,
    probe_id: 'p1', question: 'Is it current?', expected: 'yes', answer: k % 3 === 0 ? null : 'yes', correct: k % 3 !== 0,
  }));
  await writeRun(root, { ...base, probe_answers: answers, probe_decisions: [] });
  // Rewrite the answers in row groups of PER_GROUP scenarios, in order, then spoil the last group's pages.
  const file = join(partitionDir(root, 'probe_answers', 'r1'), 'data.parquet');
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  try {
    await conn.run(`COPY (SELECT * FROM read_parquet(${quoteLiteral(file)}) ORDER BY scenario_id) TO ${quoteLiteral(`${file}.tmp`)} (FORMAT parquet, ROW_GROUP_SIZE ${PER_GROUP})`);
    rmSync(file);
    await conn.run(`COPY (SELECT * FROM read_parquet(${quoteLiteral(`${file}.tmp`)})) TO ${quoteLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE ${PER_GROUP})`);
    rmSync(`${file}.tmp`);
    const meta = (await conn.runAndReadAll(
      `SELECT CAST(row_group_id AS INTEGER) AS g, CAST(coalesce(least(dictionary_page_offset, data_page_offset), data_page_offset) AS BIGINT) AS start, CAST(total_compressed_size AS BIGINT) AS size
       FROM parquet_metadata(${quoteLiteral(file)}) ORDER BY row_group_id, column_id`,
    )).getRowObjectsJS() as { g: number; start: bigint; size: bigint }[];
    expect(new Set(meta.map((m) => m.g)).size).toBe(SCENARIOS / PER_GROUP);
    const fd = openSync(file, 'r+');
    try {
      for (const m of meta.filter((x) => x.g === SCENARIOS / PER_GROUP - 1)) writeSync(fd, Buffer.alloc(Number(m.size), 0xa5), 0, Number(m.size), Number(m.start));
    } finally {
      closeSync(fd);
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
});

/** The answers' aggregate of one part, as the state rows read it (`probeStateSql`). */
async function partAnswers(part: ProbePart): Promise<number> {
  const store = await openStore(root, { bounded: true });
  try {
    const sql = `SELECT CAST(count(*) AS INTEGER) AS n, CAST(count(answer) AS INTEGER) AS answered FROM probe_answers WHERE true${partFilterSql('', part)}`;
    const r = await query(store.conn, sql, part.lo === null && part.hi === null ? undefined : partParams(part));
    return Number(r.rows[0].n);
  } finally {
    store.close();
  }
}

describe('a probe part skips the row groups outside its scenario range', () => {
  it('reads a part that ends before the spoiled row group, with the bounds bound as parameters', async () => {
    expect(await partAnswers({ lo: null, hi: sid(PER_GROUP) })).toBe(PER_GROUP);
    // (DuckDB 1.5 keeps a row group whose first id equals the exclusive upper bound: a part may read one group more.)
    expect(await partAnswers({ lo: sid(1500), hi: sid(3 * PER_GROUP - 1) })).toBe(3 * PER_GROUP - 1 - 1500);
  });

  it('fails on a part that reaches into it, and on the whole store (the check can fail)', async () => {
    await expect(partAnswers({ lo: sid(3 * PER_GROUP - 10), hi: sid(3 * PER_GROUP + 10) })).rejects.toThrow();
    await expect(partAnswers({ lo: null, hi: null })).rejects.toThrow();
  });
});
