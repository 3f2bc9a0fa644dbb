/**
 * The episode browser's set-query cap (issue 28, point 4: the browser's queries stay bounded at
 * 1e7 and the page says what it left out). Each linked count runs one query over the store, so
 * above ALL_SETS_MAX_SAMPLES samples the report runs at most setQueryCap(samples) of them, in page
 * order; the rest are printed without a link and counted on the page. Built on the demo store
 * (real Parquet, real DuckDB) with the cap forced through `indexHtml.maxSets`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport } from '../../src/report/index.ts';
import { ALL_SETS_MAX_SAMPLES, MIN_SET_QUERIES, SET_SCAN_BUDGET, setQueryCap } from '../../src/report/html/load-episodes.ts';
import { ROOT } from '../helpers/cli.ts';
import { withoutOrder } from '../../src/report/html/episode-sets.ts';

const traces = join(ROOT, 'traces');
let dir: string;
let full: string;
let capped: string;
let lines: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-set-cap-'));
  await buildReport({ traces, out: join(dir, 'full'), resamples: 200 });
  lines = [];
  await buildReport({ traces, out: join(dir, 'capped'), resamples: 200, indexHtml: { maxSets: 5 }, progress: (l) => lines.push(l) });
  full = readFileSync(join(dir, 'full', 'index.html'), 'utf8');
  capped = readFileSync(join(dir, 'capped', 'index.html'), 'utf8');
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const linkedSets = (html: string) => new Set([...html.matchAll(/data-set="(\d+)"/g)].map((m) => Number(m[1])));

describe('the set-query cap', () => {
  it('runs every set query up to 200,000 samples, then as many as keep the scans under the budget', () => {
    expect(setQueryCap(270)).toBe(Number.POSITIVE_INFINITY);
    expect(setQueryCap(ALL_SETS_MAX_SAMPLES)).toBe(Number.POSITIVE_INFINITY);
    expect(setQueryCap(1_000_000)).toBe(SET_SCAN_BUDGET / 1_000_000);
    expect(setQueryCap(10_000_000)).toBe(MIN_SET_QUERIES);
    expect(setQueryCap(ALL_SETS_MAX_SAMPLES + 1)).toBeLessThan(Number.POSITIVE_INFINITY);
  });

  it('the demo links every count and says nothing was left out', () => {
    expect(linkedSets(full).size).toBeGreaterThan(5);
    expect(full).not.toContain('sets-left-out');
  });

  it('a capped build links only the first sets, counts the rest on the page and in its progress line', () => {
    const all = linkedSets(full).size;
    const kept = linkedSets(capped);
    expect([...kept].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    const m = capped.match(/<p class="omitted sets-left-out">(\d+) more counts are shown without a link/);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(all - 5);
    expect(lines.some((l) => l.includes(`${all - 5} more not linked: the set-query cap`))).toBe(true);
  });

  it("the loader drops a set query's own ORDER BY (a full sort of every member) and orders only the rows it keeps", () => {
    const sql = "SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e WHERE e.status = $status\nORDER BY e.run_id, e.scenario_id, e.epoch, e.episode_id";
    expect(withoutOrder(sql)).toBe('SELECT e.run_id, e.episode_id, e.scenario_id, e.epoch FROM episodes e WHERE e.status = $status');
    expect(withoutOrder('SELECT 1 ORDER BY 1')).toBe('SELECT 1 ORDER BY 1');
  });
});
