/**
 * `forEachNumberChunk` (src/store/duckdb.ts) on a real DuckDB: every column read as numbers from
 * the vectors' typed arrays and validity words gives, chunk for chunk, what `forEachRow`'s
 * per-value readers give (NULL as NaN), for the numeric types it reads directly and for those it
 * reads value by value (BIGINT, BOOLEAN), over several chunks with NULLs at every bit position
 * of the validity words.
 */
import { describe, expect, it } from 'vitest';
import { createDb, forEachNumberChunk, forEachRow, withConnection } from '../../src/store/duckdb.ts';

const SQL = `SELECT i,
    CASE WHEN i % 7 = 3 THEN NULL ELSE CAST(i % 100 AS TINYINT) END AS t,
    CASE WHEN i % 5 = 0 THEN NULL ELSE CAST(i - 2500 AS INTEGER) END AS n,
    CASE WHEN i % 64 = 63 OR i % 11 = 1 THEN NULL ELSE i / 8.0 END AS d,
    CAST(i * 0.25 AS FLOAT) AS f,
    CASE WHEN i % 3 = 0 THEN NULL ELSE CAST(i AS BIGINT) * 1000 END AS big,
    i % 2 = 0 AS b,
    CAST(NULL AS DOUBLE) AS none
  FROM range(5000) r(i) ORDER BY i`;

describe('forEachNumberChunk', () => {
  it('reads every column as forEachRow reads it, NULL as NaN', async () => {
    const db = await createDb();
    const { typed, plain } = await withConnection(db, async (c) => {
      const typed: number[][] = [];
      const plain: number[][] = [];
      await forEachNumberChunk(c, SQL, undefined, (cols, rows) => {
        for (let i = 0; i < rows; i++) typed.push(cols.map((col) => col[i]));
      });
      await forEachRow(c, SQL, undefined, (cols, rows) => {
        for (let i = 0; i < rows; i++) plain.push(cols.map((col) => (col(i) === null ? NaN : Number(col(i)))));
      });
      return { typed, plain };
    });
    expect(typed.length).toBe(5000);
    expect(typed).toEqual(plain);
    expect(typed[63][3]).toBeNaN();
    expect(typed[62][3]).toBe(62 / 8);
    expect(typed[3][1]).toBeNaN();
    expect(typed[4][2]).toBe(4 - 2500);
    expect(typed[5][5]).toBe(5000);
    expect(typed[4999][7]).toBeNaN();
  });
});
