/**
 * `standoff costs` over the committed demo store: token means, latency median / p95 (linear
 * interpolation, R type 7, computed here independently from the raw Parquet values) and cost per
 * 1,000 episodes from a price table; without a price, cost is not measured (null), never 0.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';

const TRACES = join(ROOT, 'traces');
const type7 = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const lo = Math.floor(h);
  return s[lo] + (h - lo) * ((s[Math.min(lo + 1, s.length - 1)]) - s[lo]);
};

describe('standoff costs', () => {
  it('tokens, latency median/p95 and cost per 1,000 episodes per subject; cost not measured without a price', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-costs-'));
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'sim:careful': { input_per_mtok: 0.15, output_per_mtok: 0.6 } }));
    const r = runCli(['costs', '--traces', TRACES, '--prices', prices, '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout);
    const db = await createDb({ threads: 1 });
    const rows = (await withConnection(db, (c) => query(c, `SELECT subject_model, input_tokens, output_tokens, latency_ms FROM read_parquet('${TRACES}/episodes/*/*.parquet', hive_partitioning = true) WHERE status <> 'error'`))).rows;
    const scores = (await withConnection(db, (c) => query(c, `SELECT e.subject_model, s.value FROM read_parquet('${TRACES}/episodes/*/*.parquet', hive_partitioning = true) e JOIN read_parquet('${TRACES}/scores/*/*.parquet', hive_partitioning = true) s USING (run_id, episode_id) WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer AND e.status <> 'error'`))).rows;
    db.closeSync();
    for (const s of got.subjects) {
      const mine = rows.filter((x) => x.subject_model === s.subject_model);
      expect(s.episodes).toBe(mine.length);
      const mean = (k: string) => mine.reduce((a, x) => a + Number(x[k]), 0) / mine.length;
      expect(s.mean_input_tokens).toBeCloseTo(mean('input_tokens'), 9);
      expect(s.latency_median_ms).toBeCloseTo(type7(mine.map((x) => Number(x.latency_ms)), 0.5), 9);
      expect(s.latency_p95_ms).toBeCloseTo(type7(mine.map((x) => Number(x.latency_ms)), 0.95), 9);
      if (s.subject_model === 'sim:careful') expect(s.cost_per_1000).toBeCloseTo((1000 * (mean('input_tokens') * 0.15 + mean('output_tokens') * 0.6)) / 1e6, 12);
      else expect(s.cost_per_1000).toBeNull();
      // Policy action accuracy: the policy_compliant_action scores, NOANSWER out of the denominator.
      const sc = scores.filter((x) => x.subject_model === s.subject_model);
      expect([s.accuracy_successes, s.accuracy_trials]).toEqual([sc.filter((x) => Number(x.value) === 1).length, sc.length]);
    }
    // Only sim:careful is priced, so the frontier is over cost and the others are not measured (null, not false).
    expect(got.frontier_axis).toBe('cost_per_1000');
    expect(got.price_table).toMatchObject({ file: 'prices.json', models: ['sim:careful'] });
    expect(got.subjects.map((s: { subject_model: string; on_frontier: boolean | null }) => [s.subject_model, s.on_frontier])).toEqual([['sim:careful', true], ['sim:hasty', null], ['sim:thorough', null]]);
    const plain = runCli(['costs', '--traces', TRACES]);
    expect(plain.stdout).toContain('cost_per_1000: not measured (no --prices table)');
    expect(plain.stdout).toContain('on_frontier: policy action accuracy against mean tokens per episode (cost not measured)');
    writeFileSync(prices, JSON.stringify({ 'sim:careful': { input_per_mtok: -1, output_per_mtok: 0.6 } }));
    const bad = runCli(['costs', '--traces', TRACES, '--prices', prices]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/prices\.json: model "sim:careful": field "input_per_mtok" must be a non-negative number, got -1/);
  });
});
