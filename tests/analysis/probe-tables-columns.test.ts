/**
 * The probe tables keep their per-state columns (sums of answer counts) in Int32 arrays (issue 28:
 * half the heap of JS arrays at 1e7 episodes). A per-state sum never exceeds its group's answers,
 * so the columns are exact while a group holds at most 2^31 - 1 answers; past that the tables
 * refuse rather than wrap. Real store (the committed demo traces), real DuckDB: the state rows'
 * answer counts are scaled in the SQL to cross the bound.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { openStore, type Store } from '../../src/store/open-store.ts';
import { query, type SqlParams } from '../../src/store/duckdb.ts';
import { ALL_PARTS } from '../../src/analysis/probe-parts.ts';
import { loadProbeTables } from '../../src/analysis/probe-tables.ts';

let store: Store;
const OPTS = { by: ['subject_model'], level: 0.95, seed: 20261129, resamples: 200, parts: ALL_PARTS };
const COUNT = 'CAST(count(*) AS BIGINT) AS n';
/** The demo store's rows, with each state row's answer count multiplied by `k`. */
const scaled = (k: number) => async (sql: string, params?: SqlParams) => (await query(store.conn, sql.replace(COUNT, `CAST(count(*) AS BIGINT) * ${k} AS n`), params)).rows;

beforeAll(async () => {
  store = await openStore(join(ROOT, 'traces'), { bounded: true });
});
afterAll(() => store?.close());

describe('probe tables: Int32 per-state columns', () => {
  it('the answer-count column the check scales is the one the tables read', async () => {
    const plain = await loadProbeTables(scaled(1), OPTS);
    const doubled = await loadProbeTables(scaled(2), OPTS);
    expect(plain.groups.length).toBeGreaterThan(0);
    expect(doubled.groups.map((g) => g.answers)).toEqual(plain.groups.map((g) => 2 * g.answers));
    expect(doubled.groups.map((g) => g.max_answers_per_state)).toEqual(plain.groups.map((g) => 2 * g.max_answers_per_state));
  });

  it('a group of more than 2^31 - 1 answers is refused, not wrapped', async () => {
    await expect(loadProbeTables(scaled(2 ** 30), OPTS)).rejects.toThrow(/more than 2147483647 answers in one group/);
  });
});
