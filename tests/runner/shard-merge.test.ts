/**
 * `standoff run --shard i/N` and `standoff merge`: three shards of a run, each in its own store,
 * merged, equal the unsharded run table by table (real Parquet, read in file order; only the
 * wall-clock columns differ), against the in-process sim endpoint on 127.0.0.1. And what merge
 * refuses (exit 3, OUT left as it was): conflicting run ids, mixed configurations, a missing shard.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StandoffError } from '../../src/errors.ts';
import { parseConfig, type ConfigInput } from '../../src/runner/config.ts';
import { parseShardSpec, planUnits, runEvaluation } from '../../src/runner/run.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';
import { mergeNotes, mergeStores } from '../../src/store/merge-runs.ts';
import { TABLE_NAMES } from '../../src/schema/tables.ts';

const dirs: string[] = [];
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'standoff-shard-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const input = (over: Partial<ConfigInput> = {}): ConfigInput => ({
  name: 't',
  scenarios: ['em_act_a', 'ct_esc_b', 'fc_amb_a'],
  subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }],
  judges: [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }],
  epochs: 2,
  concurrency: 1,
  seed: 11,
  retries: { max: 3, base_ms: 1, max_ms: 10 },
  // Generous: a log read that timed out on a loaded machine would change one run's rows.
  timeouts: { request_ms: 60_000, log_read_ms: 60_000 },
  ...over,
});
const quiet = { progress: 'none' as const, log: () => undefined };
const RUN = 't-s11';

async function run(traces: string, shard?: string, over: Partial<ConfigInput> = {}) {
  return runEvaluation({ config: parseConfig(input(over)), runId: RUN, traces, shard: shard ? parseShardSpec(shard) : undefined, ...quiet });
}

/** Every row of a table of one run, in file order, wall-clock columns left out. */
async function rowsOf(store: string, table: string): Promise<Record<string, unknown>[]> {
  const file = join(store, table, `run_id=${RUN}`, 'data.parquet');
  if (!existsSync(file)) return [];
  const db = await createDb({ threads: 1 });
  try {
    return await withConnection(db, async (c) => {
      const drop = table === 'episodes' ? ' EXCLUDE (started_at, latency_ms)' : table === 'runs' ? ' EXCLUDE (created_at)' : '';
      return (await query(c, `SELECT *${drop} FROM read_parquet('${file.replace(/'/g, "''")}')`)).rows;
    });
  } finally {
    db.closeSync();
  }
}

const listing = (dir: string): string[] => {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, n.name);
      out.push(p);
      if (n.isDirectory()) walk(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
};

describe('--shard i/N', () => {
  it('splits the plan round robin: the shards are disjoint and together the whole plan, in order', () => {
    const cfg = parseConfig(input({ epochs: 3 }));
    const scenarios = loadScenarios(cfg.scenarios_dir).filter((s) => cfg.scenarios!.includes(s.scenario_id));
    const all = planUnits(cfg, scenarios).map((u) => u.id);
    const shards = [1, 2, 3, 4].map((i) => planUnits(cfg, scenarios, { index: i, count: 4 }).map((u) => u.id));
    expect(shards.flat().sort()).toEqual([...all].sort());
    expect(new Set(shards.flat()).size).toBe(all.length);
    expect(Math.max(...shards.map((s) => s.length)) - Math.min(...shards.map((s) => s.length))).toBeLessThanOrEqual(1);
    expect(shards[1]![0]).toBe(all[1]);
  });

  it('refuses malformed shards as usage errors', () => {
    for (const bad of ['0/3', '4/3', '1/0', '3', 'a/b', '1/3/5', '-1/3', '']) {
      let err: unknown;
      try {
        parseShardSpec(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(StandoffError);
      expect((err as StandoffError).kind).toBe('usage');
    }
    expect(parseShardSpec(' 2 / 3 ')).toEqual({ index: 2, count: 3 });
  });
});

describe('three shards and a merge equal the unsharded run', () => {
  let whole: string;
  const shards: string[] = [];
  beforeAll(async () => {
    whole = await tmp();
    await run(whole);
    for (const i of [1, 2, 3]) {
      const d = await tmp();
      const s = await run(d, `${i}/3`);
      expect(s.shard).toEqual({ index: i, count: 3 });
      expect(s.episodes).toBe(4);
      shards.push(d);
    }
  }, 240_000);

  it('records the shard in each shard run', async () => {
    const [row] = await rowsOf(shards[1]!, 'runs');
    expect(JSON.parse(row!.config as string).shard).toEqual({ index: 2, count: 3 });
  });

  it('merges into one run whose every table equals the unsharded run, row for row', async () => {
    const out = join(await tmp(), 'merged');
    const r = await mergeStores(out, shards);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0]).toMatchObject({ runId: RUN, kind: 'shards', tables: { episodes: 12 } });
    for (const t of TABLE_NAMES) {
      const a = await rowsOf(whole, t);
      const b = await rowsOf(out, t);
      expect(b, t).toEqual(a);
    }
    const [merged] = await rowsOf(out, 'runs');
    expect(JSON.parse(merged!.config as string).shard).toBeUndefined();
    expect((await rowsOf(out, 'episodes')).map((e) => e.episode_id)).toHaveLength(12);
  }, 120_000);

  it('refuses a missing shard, a shard given twice, and a run id OUT already holds (exit 3), leaving OUT as it was', async () => {
    const out = join(await tmp(), 'o');
    await expect(mergeStores(out, [shards[0]!, shards[2]!])).rejects.toMatchObject({ kind: 'data', code: 'merge.missingShards', message: expect.stringContaining('2/3') });
    expect(existsSync(out)).toBe(false);
    const twice = await tmp();
    await run(twice, '1/3');
    await expect(mergeStores(out, [shards[0]!, twice, shards[1]!, shards[2]!])).rejects.toMatchObject({ kind: 'data', code: 'merge.conflict' });
    await mergeStores(out, shards);
    const before = listing(out);
    await expect(mergeStores(out, shards)).rejects.toMatchObject({ kind: 'data', code: 'merge.conflict', message: expect.stringContaining('already exists') });
    expect(listing(out)).toEqual(before);
  }, 120_000);

  it('refuses shards of one run id with different configurations (exit 3)', async () => {
    const other = await tmp();
    await run(other, '3/3', { max_turns: 2 });
    const out = join(await tmp(), 'o');
    await expect(mergeStores(out, [shards[0]!, shards[1]!, other])).rejects.toMatchObject({ kind: 'data', code: 'merge.mixedConfig', message: expect.stringContaining('max_turns') });
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('refuses two unsharded runs with one id (exit 3) and copies runs with distinct ids byte for byte', async () => {
    const out = join(await tmp(), 'o');
    await expect(mergeStores(out, [whole, whole + '/'])).rejects.toMatchObject({ kind: 'usage' });
    const again = await tmp();
    await run(again);
    await expect(mergeStores(out, [whole, again])).rejects.toMatchObject({ kind: 'data', code: 'merge.conflict', message: expect.stringContaining('conflicting') });
    const r = await mergeStores(out, [whole]);
    expect(r.runs[0]).toMatchObject({ kind: 'copy', tables: { episodes: 12 } });
    for (const t of TABLE_NAMES) expect(await rowsOf(out, t), t).toEqual(await rowsOf(whole, t));
  }, 120_000);

  it('the CLI: exit 2 for a malformed --shard, exit 3 for a conflicting merge, OUT unchanged', async () => {
    const cli = (args: string[]) => spawnSync(process.execPath, [join(__dirname, '../../bin/standoff.js'), ...args], { encoding: 'utf8' });
    const bad = cli(['run', '--preset', 'smoke', '--shard', '0/3', '--traces', await tmp()]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--shard must be i\/N/);
    const out = join(await tmp(), 'o');
    await mergeStores(out, shards);
    const before = listing(out);
    const p = cli(['merge', out, ...shards]);
    expect(p.status).toBe(3);
    expect(p.stderr.trim().split('\n')).toHaveLength(1);
    expect(listing(out)).toEqual(before);
  }, 60_000);
});

describe('more shards than units', () => {
  it('an empty shard is a run of no episodes, and the merge is still the whole run', async () => {
    const one = { subjects: [{ model: 'sim:careful' }], scenarios: ['em_act_a'], epochs: 1 };
    const whole = await tmp();
    await run(whole, undefined, one);
    const a = await tmp();
    const b = await tmp();
    expect((await run(a, '1/2', one)).episodes).toBe(1);
    expect((await run(b, '2/2', one)).episodes).toBe(0);
    const out = join(await tmp(), 'o');
    await mergeStores(out, [b, a]);
    for (const t of TABLE_NAMES) expect(await rowsOf(out, t), t).toEqual(await rowsOf(whole, t));
  }, 120_000);
});

describe('mergeNotes', () => {
  it('sums leading counts over shards and keeps every other part once', () => {
    expect(mergeNotes(['simulated subjects; 2 episode(s) ended in error after retries; protocol 3', 'simulated subjects; protocol 3', 'simulated subjects; 1 episode(s) ended in error after retries; resumed: 2 of 4 episodes came from the journal; protocol 3'])).toBe(
      'simulated subjects; 3 episode(s) ended in error after retries; protocol 3; resumed: 2 of 4 episodes came from the journal',
    );
    expect(mergeNotes([null, null])).toBeNull();
  });
});
