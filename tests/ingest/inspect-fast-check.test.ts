/**
 * The cheaper checks in front of zod (src/ingest/inspect/fast-check.ts) change nothing: every
 * shared real log, the zstd copy, the bench's synthetic log and this evaluation's shaped log are
 * ingested with the fast checks on and off, and the stores are compared Parquet for Parquet (same
 * files, same rows in the same order, every value equal, NaN and -0 included through their text).
 * The fast checks imply zod: random mutations of real samples and rows never pass the fast check
 * and fail zod; a check that is too lax is caught by the same harness.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import { loadInspectLog } from '../../src/ingest/inspect/index.ts';
import { inspectSampleSchema } from '../../src/ingest/inspect/read-eval.ts';
import { rowChecker, sampleLooksValid, useFastChecks } from '../../src/ingest/inspect/fast-check.ts';
import { createDb, quoteLiteral } from '../../src/store/duckdb.ts';
import { TABLES, type TableName } from '../../src/schema/tables.ts';
import { buildSyntheticEval } from '../../bench/ingest-inspect.ts';
import { FIXTURES, REAL_LOGS, readMembers, memberText, shapedEvalMembers, shapedSamples, writeZip } from '../fixtures/inspect/make-logs.ts';

const dirs: string[] = [];
afterEach(() => {
  useFastChecks(true);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'standoff-fast-check-'));
  dirs.push(d);
  return d;
};

/** Rows of every table of two stores that differ (by file, row number and every value as text). */
async function storeDiff(a: string, b: string): Promise<Record<string, number[]>> {
  const db = await createDb({ threads: 1 });
  const conn = await db.connect();
  try {
    const out: Record<string, number[]> = {};
    for (const t of readdirSync(a).filter((x) => !x.startsWith('.')).sort()) {
      const src = (s: string) =>
        `(SELECT regexp_replace(filename, '^.*/${t}/', '') AS f, file_row_number, CAST(COLUMNS(* EXCLUDE (filename, file_row_number)) AS VARCHAR) FROM read_parquet(${quoteLiteral(`${s}/${t}/*/*.parquet`)}, filename = true, file_row_number = true, hive_partitioning = false))`;
      const n = async (sql: string) => Number((await conn.runAndReadAll(sql)).getRows()[0]![0]);
      out[t] = [await n(`SELECT count(*) FROM ${src(a)}`), await n(`SELECT count(*) FROM (SELECT * FROM ${src(a)} EXCEPT ALL SELECT * FROM ${src(b)})`), await n(`SELECT count(*) FROM (SELECT * FROM ${src(b)} EXCEPT ALL SELECT * FROM ${src(a)})`)];
    }
    return out;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('fast checks change nothing in the store', () => {
  it('writes the same Parquet with and without them, for every shared log, the zstd copy, the synthetic and the shaped log', async () => {
    const d = tmp();
    const logs = [...REAL_LOGS, join(FIXTURES, 'log_streaming-zstd.eval')].map((p, i) => {
      const to = join(d, `${i}-${p.split('/').pop()}`);
      copyFileSync(p, to);
      return to;
    });
    buildSyntheticEval(join(d, 'synthetic.eval'), 300, 2); // NaN scores, attachments, tool calls
    const odd = shapedSamples().map((s, i) => (i === 0 ? { ...s, metadata: JSON.parse('{"__proto__": {"x": 1}, "b": 2}') } : s));
    logs.push(join(d, 'synthetic.eval'), writeZip(join(d, 'shaped.eval'), shapedEvalMembers({ samples: odd })));
    const fast = await ingestInspect(logs, { traces: join(d, 'fast') });
    useFastChecks(false);
    const slow = await ingestInspect(logs, { traces: join(d, 'slow') });
    expect(fast.runs.map((r) => r.tables)).toEqual(slow.runs.map((r) => r.tables));
    const diff = await storeDiff(join(d, 'fast'), join(d, 'slow'));
    expect(Object.keys(diff)).toEqual(['episodes', 'messages', 'runs', 'scores']);
    for (const [t, [rows, onlyFast, onlySlow]] of Object.entries(diff)) {
      expect(rows, t).toBeGreaterThan(0);
      expect([t, onlyFast, onlySlow]).toEqual([t, 0, 0]);
    }
  }, 120_000);
});

// --- the fast checks imply zod -----------------------------------------------------------------

const VALUES: unknown[] = [null, undefined, 0, -1, 1.5, 2 ** 53, NaN, Infinity, '', 'x', 'tool', true, [], ['a'], [1], {}, { type: 'text' }, { message: 'm' }, { __proto__: null }];

/** Deterministic pseudo-random draws (no seed-dependent flakiness). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s ^ (s >>> 15), 2246822507) + 0x9e3779b9) >>> 0) / 2 ** 32);
}

/** Sets a random path of `obj` (objects and arrays walked) to a random value; returns the mutant. */
function mutate(obj: unknown, r: () => number): unknown {
  const copy = structuredClone(obj) as Record<string, unknown>;
  let at: Record<string, unknown> = copy;
  for (let depth = 0; depth < 6; depth++) {
    const keys = Object.keys(at);
    if (keys.length === 0) break;
    const k = keys[Math.floor(r() * keys.length)]!;
    const next = at[k];
    if (next !== null && typeof next === 'object' && r() < 0.6) {
      at = next as Record<string, unknown>;
      continue;
    }
    at[k] = VALUES[Math.floor(r() * VALUES.length)];
    break;
  }
  return copy;
}

/** Counterexamples: mutants the fast check passes and zod refuses. */
function counterexamples(seeds: unknown[], fast: (x: unknown) => boolean, zod: (x: unknown) => boolean, n: number): unknown[] {
  const r = rng(28);
  const bad: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const m = mutate(seeds[i % seeds.length], r);
    if (fast(m) && !zod(m)) bad.push(m);
  }
  return bad;
}

async function realSamplesAndRows(): Promise<{ samples: Record<string, unknown>[]; rows: Record<TableName, object[]> }> {
  const samples: Record<string, unknown>[] = [];
  for (const p of REAL_LOGS) {
    const members = readMembers(p);
    for (const [name] of members) if (/^samples\/[^/]+\.json$/.test(name)) samples.push(JSON.parse(memberText(members, name).replace(/\bNaN\b/g, 'null')));
  }
  for (const s of shapedSamples()) samples.push(JSON.parse(JSON.stringify(s)));
  const rows = { episodes: [], messages: [], scores: [] } as unknown as Record<TableName, object[]>;
  for (const p of REAL_LOGS) {
    const l = (await loadInspectLog(p)).log!;
    rows.episodes.push(...l.bundle.episodes);
    rows.messages.push(...l.bundle.messages);
    rows.scores.push(...l.bundle.scores);
  }
  return { samples, rows };
}

describe('fast checks imply zod', () => {
  it('accepts the real samples and rows as they are, and no mutant that zod refuses', async () => {
    const { samples, rows } = await realSamplesAndRows();
    const used = samples.map((s) => ({ id: s.id, epoch: s.epoch, target: s.target, messages: s.messages, scores: s.scores, metadata: s.metadata, model_usage: s.model_usage, error: s.error, total_time: s.total_time, started_at: s.started_at }));
    for (const s of used) expect(sampleLooksValid(s)).toBe(true);
    const zodSample = (x: unknown) => inspectSampleSchema.safeParse(x).success;
    expect(counterexamples(used, (x) => sampleLooksValid(x as Record<string, unknown>), zodSample, 20_000)).toEqual([]);
    for (const t of ['episodes', 'messages', 'scores'] as const) {
      const fast = rowChecker(t);
      for (const row of rows[t]) expect(fast(row)).toBe(true);
      const zodRow = (x: unknown) => TABLES[t].safeParse(x).success;
      expect(counterexamples(rows[t], (x) => fast(x as object), zodRow, 10_000), t).toEqual([]);
    }
  }, 60_000);

  it('the harness finds the mutants a too-lax check would let through', async () => {
    const { samples, rows } = await realSamplesAndRows();
    const laxSample = (x: unknown) => typeof x === 'object' && x !== null; // "looks like a sample"
    expect(counterexamples(samples, laxSample, (x) => inspectSampleSchema.safeParse(x).success, 2_000).length).toBeGreaterThan(10);
    const laxRow = (x: unknown) => typeof (x as { episode_id?: unknown }).episode_id === 'string';
    expect(counterexamples(rows.episodes, laxRow, (x) => TABLES.episodes.safeParse(x).success, 2_000).length).toBeGreaterThan(10);
  }, 60_000);

  it('turned off, it sends everything to zod', () => {
    useFastChecks(false);
    expect(sampleLooksValid({ id: 1, epoch: 1 })).toBe(false);
    useFastChecks(true);
    expect(sampleLooksValid({ id: 1, epoch: 1 })).toBe(true);
    expect(sampleLooksValid({ id: 1, epoch: 0 })).toBe(false);
    expect(sampleLooksValid({ id: 1, epoch: 1, metadata: JSON.parse('{"__proto__": 1}') })).toBe(false);
  });
});
