/**
 * metricRates with a weight column (src/analysis/rates.ts): the report's counted observations are
 * sorted, not grouped again, and rows of one (group, cluster, value) are folded as one row with
 * their counts summed. Counted rows split several ways and shuffled give, bit for bit, the rates of
 * the observations one row each (grouped and counted in SQL), from a connection and from plain rows.
 */
import { describe, expect, it } from 'vitest';
import { createDb, query } from '../../src/store/duckdb.ts';
import { metricRates, type RateOptions } from '../../src/analysis/rates.ts';

// Observations: 3 groups x 60 clusters x ~28 items; values from a few non-dyadic levels (so a
// sum folded in another grouping would differ in the last bits), some NULL (not measured).
const OBS = `SELECT 'g' || (i % 3) AS grp, (i // 3) % 60 AS cluster,
    CASE WHEN hash(i) % 11 = 0 THEN NULL ELSE CAST([0.1, 0.7, 0.3] AS DOUBLE[])[CAST(1 + hash(i * 7) % 3 AS INTEGER)] END AS value, i
  FROM range(0, 6000) t(i) WHERE hash(i * 13) % 6 <> 0`;

describe('metricRates over counted rows', () => {
  it('gives the rates of the rows one observation each, from a connection and from plain rows', async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      await conn.run(`CREATE TABLE obs AS ${OBS}`);
      // Counted per (group, cluster, value) and a split key (i % 7): up to 7 rows of one (group, cluster, value), in random order.
      await conn.run(`CREATE TABLE counted AS SELECT grp, cluster, value, CAST(count(*) AS INTEGER) AS n FROM obs GROUP BY grp, cluster, value, i % 7 ORDER BY hash(grp || cluster || coalesce(value, -1) || min(i))`);
      const split = (await query(conn, `SELECT count(*) - count(DISTINCT (grp, cluster, value)) AS extra FROM counted`)).rows[0].extra;
      expect(Number(split)).toBeGreaterThan(100);
      const o: RateOptions = { level: 0.95, seed: 7, resamples: 500, clusterLabel: 'cluster' };
      const plain = (sql: string) => query(conn, sql).then((r) => r.rows);
      const one = await metricRates({ conn }, `SELECT grp, cluster, value FROM obs`, ['grp'], 'cluster', o);
      const fromConn = await metricRates({ conn }, `SELECT * FROM counted`, ['grp'], 'cluster', { ...o, weight: 'n' });
      const fromRows = await metricRates(plain, `SELECT * FROM counted`, ['grp'], 'cluster', { ...o, weight: 'n' });
      expect(one.length).toBe(3);
      expect(fromConn).toEqual(one);
      expect(fromRows).toEqual(one);
      expect(one.some((r) => r.not_measured > 0 && !r.binary && r.cluster !== null)).toBe(true);
    } finally {
      conn.closeSync();
    }
  });

  it('reads all-number chunks as typed columns: the same rates as plain rows, NULL values and a chunk with a NULL group included', async () => {
    const db = await createDb();
    const conn = await db.connect();
    try {
      // Integer groups and clusters (typed chunks); values with NULLs; a few NULL clusters (sorted last in
      // their group) and a last group of NULL keys make some chunks read value by value, so one stream
      // goes from one reading to the other and back, with rows merged across chunk boundaries.
      await conn.run(`CREATE TABLE nums AS SELECT CASE WHEN i >= 18000 THEN NULL ELSE CAST(i // 4000 AS TINYINT) END AS grp, CASE WHEN i % 997 = 5 THEN NULL ELSE CAST((i // 7) % 500 AS INTEGER) END AS cluster,
          CASE WHEN hash(i) % 9 = 0 THEN NULL ELSE CAST([0.1, 0.7, 1, 0][CAST(1 + hash(i * 5) % 4 AS INTEGER)] AS DOUBLE) END AS value, CAST(1 + i % 3 AS INTEGER) AS n
        FROM range(0, 20000) t(i)`);
      const o: RateOptions = { level: 0.95, seed: 9, resamples: 300, clusterLabel: 'cluster', weight: 'n' };
      const plain = (sql: string) => query(conn, sql).then((r) => r.rows);
      const fromConn = await metricRates({ conn }, `SELECT * FROM nums`, ['grp'], 'cluster', o);
      const fromRows = await metricRates(plain, `SELECT * FROM nums`, ['grp'], 'cluster', o);
      expect(fromConn.map((r) => r.group.grp)).toEqual([0, 1, 2, 3, 4, null]);
      expect(fromConn).toEqual(fromRows);
      expect(fromConn.every((r) => r.not_measured > 0 && !r.binary)).toBe(true);
    } finally {
      conn.closeSync();
    }
  });
});
