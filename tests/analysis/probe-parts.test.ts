/**
 * Issue 28: the probe loaders run part by part over scenario ranges (`loadProbeParts`) so that at
 * 1e7 episodes each GROUP BY holds a bounded share of the states. The numbers must not depend on
 * the number of parts: on the committed demo store, the tables (with sufficiency), the ladder and
 * the error concentration are equal, to the last bit, in one part and in several. The check can
 * fail: taking the same parts in the wrong order changes the bootstrap intervals (the clusters
 * are resampled in scenario order), and the test sees it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { openStore, type Store } from '../../src/store/open-store.ts';
import { query, type SqlParams } from '../../src/store/duckdb.ts';
import { ALL_PARTS, compareGroupValues, loadProbeParts, partCount, type ProbePart } from '../../src/analysis/probe-parts.ts';
import { loadProbeTables } from '../../src/analysis/probe-tables.ts';
import { loadProbeLadder } from '../../src/analysis/probe-ladder.ts';
import { ConcentrationCollector, loadConcentration } from '../../src/analysis/probe-concentration.ts';

let store: Store;
const q = async (sql: string, params?: SqlParams) => (await query(store.conn, sql, params)).rows;
const src = () => ({ conn: store.conn, q });
const OPTS = { level: 0.95, seed: 20261129, resamples: 2000 };

beforeAll(async () => {
  store = await openStore(join(ROOT, 'traces'), { bounded: true });
});
afterAll(() => store?.close());

async function everything(parts: ProbePart[]) {
  const tables = await loadProbeTables(src(), { by: ['subject_model', 'domain'], ...OPTS, parts });
  const collected = new ConcentrationCollector();
  const bySubject = await loadProbeTables(src(), { by: ['subject_model'], ...OPTS, parts, onStateRow: (g, s, f, e) => collected.add(String(g[0]), s, f, e) });
  const ladder = await loadProbeLadder(src(), { ...OPTS, parts });
  const concentration = await loadConcentration(src(), { seed: 5, permutations: 500, level: 0.95, minSubjects: 2, parts });
  const fromTables = await loadConcentration(q, { seed: 5, permutations: 500, level: 0.95, minSubjects: 2, collected });
  return { tables, bySubject, ladder, concentration, fromTables };
}

describe('probe loaders part by part (scenario ranges)', () => {
  it('one part and several give the same tables, sufficiency, ladder and concentration', async () => {
    const [{ n }] = await q('SELECT CAST(count(*) AS BIGINT) AS n FROM probe_answers');
    const per = Math.ceil(Number(n) / 4);
    expect(partCount(Number(n), per)).toBe(4);
    const parts = await loadProbeParts(q, { answersPerPart: per });
    expect(parts.length).toBe(4);
    expect(parts[0].lo).toBeNull();
    expect(parts[3].hi).toBeNull();
    expect(await loadProbeParts(q)).toEqual(ALL_PARTS);
    const one = await everything(ALL_PARTS);
    const four = await everything(parts);
    expect(one.tables.groups.length).toBeGreaterThan(3);
    expect(one.tables.sufficiency).not.toBeNull();
    expect(one.concentration).not.toBeNull();
    // Bit for bit (JSON keeps every digit of every double).
    expect(JSON.stringify(four)).toBe(JSON.stringify(one));
    // The concentration read off the tables' rows is the one its own query gives.
    expect(JSON.stringify(one.fromTables)).toBe(JSON.stringify(one.concentration));
  }, 120_000);

  it('the comparison sees an order change: the parts taken backwards resample the states in another order', async () => {
    const [{ n }] = await q('SELECT CAST(count(*) AS BIGINT) AS n FROM probe_answers');
    const parts = await loadProbeParts(q, { answersPerPart: Math.ceil(Number(n) / 4) });
    const one = await loadProbeTables(src(), { by: ['subject_model'], ...OPTS, parts: ALL_PARTS });
    const backwards = await loadProbeTables(src(), { by: ['subject_model'], ...OPTS, parts: [...parts].reverse() });
    // Same counts (a sum does not care), other bootstrap intervals (the clusters come in another order).
    expect(backwards.groups.map((g) => g.decision_accuracy.count)).toEqual(one.groups.map((g) => g.decision_accuracy.count));
    expect(JSON.stringify(backwards.groups)).not.toBe(JSON.stringify(one.groups));
  }, 120_000);

  it('groups met part by part are put back in ORDER BY order: NULLs last, strings by UTF-8 bytes', () => {
    const shuffled = [[null, 0], ['b', 2], ['b', 1], ['a', '\uFF5E'], ['a', '\u{1F600}'], ['a', 'é'], ['a', 'b'], ['a', null]];
    shuffled.sort(compareGroupValues);
    // U+FF5E sorts before U+1F600 in UTF-16 code units but after it in UTF-8 bytes (DuckDB's order).
    expect(shuffled).toEqual([['a', 'b'], ['a', 'é'], ['a', '\uFF5E'], ['a', '\u{1F600}'], ['a', null], ['b', 1], ['b', 2], [null, 0]]);
  });
});
