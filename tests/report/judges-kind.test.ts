/**
 * The judges section reads its scorer's kind off the distinct values the judge pivot already
 * loaded (`kindOfValues`) instead of scanning the judgments with `KIND_SQL`: the two agree on every
 * boundary of the rule (0/1, [0, 1], integers, the ordinal level cap, negative zero).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createDb, query } from '../../src/store/duckdb.ts';
import { KIND_SQL, ORDINAL_MAX_LEVELS } from '../../src/analysis/metrics.ts';
import { kindOfValues } from '../../src/report/sections/judges.ts';

let db: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  db = await createDb();
  conn = await db.connect();
});
afterAll(() => conn?.closeSync());

const levels = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const SETS: number[][] = [[], [0], [1], [0, 1], [-0, 1], [0.5], [0, 0.5, 1], [0, 1, 2], [-1, 0, 1], [2.5, 3], [1, 2], levels(ORDINAL_MAX_LEVELS), levels(ORDINAL_MAX_LEVELS + 1), [0, 1e-9, 1], [0, 1, 1.0000001], [-3, 4, 7]];

describe('kindOfValues', () => {
  it('gives KIND_SQL\'s kind for each set of values (each value judged twice, with NULLs beside)', async () => {
    for (const set of SETS) {
      const rows = set.flatMap((v) => [v, v]);
      const values = rows.length ? `(VALUES ${[...rows.map((v) => `(CAST('${Object.is(v, -0) ? '-0.0' : String(v)}' AS DOUBLE))`), '(CAST(NULL AS DOUBLE))'].join(', ')}) t(value)` : `(SELECT CAST(NULL AS DOUBLE) AS value) t`;
      const [{ kind }] = (await query(conn, `SELECT ${KIND_SQL} AS kind FROM ${values}`)).rows;
      const distinct = (await query(conn, `SELECT DISTINCT value FROM ${values} WHERE value IS NOT NULL ORDER BY value`)).rows.map((r) => Number(r.value));
      expect([set, kindOfValues(distinct)]).toEqual([set, kind]);
    }
    expect(kindOfValues(levels(ORDINAL_MAX_LEVELS + 1))).toBe('continuous');
  });
});
