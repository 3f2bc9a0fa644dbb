/**
 * `loadJudgePatterns` counts its verdict patterns per hash partition of the samples when a scorer
 * has many judgments (at 1e7 one pass ran DuckDB out of memory). Partitioned or not, the patterns,
 * their counts and their order must be the same, so every statistic built on them (alpha and its
 * seeded bootstrap, pair agreement, medians) is unchanged. Checked on the committed demo store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { agreementFromCounts, loadJudgePatterns, patternMatrix } from '../../src/analysis/judge-patterns.ts';

let store: Store;
beforeAll(async () => {
  store = await openStore('traces');
});
afterAll(() => store?.close());

const q = async (sql: string, params?: Record<string, string | number | boolean | null>) => (await query(store.conn, sql, params)).rows;

describe('judge patterns per hash partition', () => {
  it('1, 7 and 50 partitions give the same patterns, counts, order and alpha', async () => {
    const one = await loadJudgePatterns(q, 'reasoning_action_alignment');
    expect(one.patterns.length).toBeGreaterThan(3);
    const total = one.patterns.reduce((s, p) => s + p.count, 0);
    for (const parts of [7, 50]) {
      const judgments = one.verdicts.reduce((s, v) => s + v.aligned + v.misaligned + v.error, 0);
      const many = await loadJudgePatterns(q, 'reasoning_action_alignment', 'e.subject_model', '', Math.ceil(judgments / parts));
      expect(many).toEqual(one);
      expect(many.patterns.reduce((s, p) => s + p.count, 0)).toBe(total);
    }
    // The statistic on top is the same for a seed (the bootstrap draws over the same pattern order).
    const opts = { level: 'nominal' as const, seed: 7, resamples: 500 };
    const a = agreementFromCounts(patternMatrix(one), one.patterns.map((p) => p.count), opts);
    const judgments = one.verdicts.reduce((s, v) => s + v.aligned + v.misaligned + v.error, 0);
    const split = await loadJudgePatterns(q, 'reasoning_action_alignment', 'e.subject_model', '', Math.ceil(judgments / 13));
    expect(agreementFromCounts(patternMatrix(split), split.patterns.map((p) => p.count), opts)).toEqual(a);
  });
});
