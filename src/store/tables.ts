/** Store inventory for `standoff tables`: row counts per table and the runs in the store. */
import { TABLE_NAMES } from '../schema/tables.ts';
import { query, quoteIdent, type QueryResult } from './duckdb.ts';
import { openStore } from './open-store.ts';

export interface StoreInventory {
  tables: QueryResult;
  runs: QueryResult;
}

export async function readInventory(traces: string): Promise<StoreInventory> {
  const store = await openStore(traces);
  try {
    const counts = TABLE_NAMES.map(
      (t) => `SELECT '${t}' AS "table", CAST(count(*) AS BIGINT) AS "rows", CAST(count(DISTINCT run_id) AS BIGINT) AS "runs" FROM ${quoteIdent(t)}`,
    ).join(' UNION ALL ');
    const tables = await query(store.conn, `SELECT * FROM (${counts}) ORDER BY "table"`);
    const runs = await query(
      store.conn,
      `SELECT r.run_id, r.source, r.suite, r.status, strftime(r.created_at, '%Y-%m-%dT%H:%M:%SZ') AS created_at,
              CAST(coalesce(e.n, 0) AS BIGINT) AS episodes, coalesce(e.subjects, '') AS subjects
       FROM runs r LEFT JOIN (
         SELECT run_id, count(*) AS n, string_agg(DISTINCT subject_model, ', ' ORDER BY subject_model) AS subjects
         FROM episodes GROUP BY run_id) e USING (run_id)
       ORDER BY r.run_id`,
    );
    return { tables, runs };
  } finally {
    store.close();
  }
}
