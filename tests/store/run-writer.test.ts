import { describe, it, expect, beforeEach } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunWriter, stagedRow } from '../../src/store/run-writer.ts';
import { writeRun, listCommittedRuns } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLE_NAMES, fileColumns, sqlColumns, type RunBundle, type TableName } from '../../src/schema/tables.ts';
import { StandoffError } from '../../src/errors.ts';
import { sampleBundle as anyBundle, hashTree } from '../helpers/fixtures.ts';

/** The fixture bundle, every table present. */
const sampleBundle = (id: string, n?: number) => anyBundle(id, n) as Required<RunBundle>;

let store: string;
beforeEach(() => {
  store = mkdtempSync(join(tmpdir(), 'standoff-runwriter-'));
});

/** Every table's rows in file order (no ORDER BY: the order the writer chose is what is checked). */
async function readTables(dir: string, runId: string): Promise<Record<string, unknown[]>> {
  const s = await openStore(dir);
  try {
    const out: Record<string, unknown[]> = {};
    for (const t of TABLE_NAMES) {
      const cols = sqlColumns(t).map((c) => `"${c.name}"`).join(', ');
      out[t] = (await query(s.conn, `SELECT ${cols} FROM ${t} WHERE run_id = $1`, [runId])).rows;
    }
    return out;
  } finally {
    s.close();
  }
}

/** Appends a bundle unit by unit (an episode with its rows), in the given unit order. */
async function appendBundle(w: RunWriter, b: Required<RunBundle>, units: number[]): Promise<void> {
  for (const u of units) {
    const ep = b.episodes[u]!;
    const of = <T extends { episode_id: string }>(rows: T[]) => rows.filter((r) => r.episode_id === ep.episode_id);
    await w.append('episodes', [ep], u);
    await w.append('messages', of(b.messages), u);
    await w.append('scores', of(b.scores), u);
    await w.append('judgments', of(b.judgments), u);
  }
  // Tables not keyed by episode go in as one unit after the episodes.
  await w.append('probe_answers', b.probe_answers, units.length);
  await w.append('probe_decisions', b.probe_decisions, units.length);
  await w.append('aggregates', b.aggregates, units.length);
}

describe('RunWriter', () => {
  it('writes the same rows as writeRun, in the same order, when units arrive in order', async () => {
    const b = sampleBundle('rw-1', 4);
    const other = mkdtempSync(join(tmpdir(), 'standoff-runwriter-ref-'));
    await writeRun(other, b);
    const w = await RunWriter.open(store, 'rw-1');
    await appendBundle(w, b, [0, 1, 2, 3]);
    expect(w.rowCounts()).toMatchObject({ episodes: 4, messages: 12, scores: 4 });
    await w.finish(b.run);
    const res = await w.commit();
    expect(res.tables).toMatchObject({ runs: 1, episodes: 4, messages: 12, probe_answers: 2 });
    expect(await readTables(store, 'rw-1')).toEqual(await readTables(other, 'rw-1'));
  });

  it('orders units by rank (a DuckDB sort) and keeps the append order within a unit', async () => {
    const b = sampleBundle('rw-2', 4);
    const w = await RunWriter.open(store, 'rw-2');
    // Units arrive as 2, 0, 3, 1; unit numbers follow arrival; rank puts them back as episodes 0..3.
    const arrival = [2, 0, 3, 1];
    for (let k = 0; k < arrival.length; k++) {
      const ep = b.episodes[arrival[k]!]!;
      await w.append('episodes', [ep], k);
      await w.append('messages', b.messages.filter((m) => m.episode_id === ep.episode_id), k);
    }
    const rank = Int32Array.from(arrival);
    await w.finish(b.run, rank);
    await w.commit();
    const t = await readTables(store, 'rw-2');
    expect(t.episodes!.map((e) => (e as { epoch: number }).epoch)).toEqual([1, 2, 3, 4]);
    const msgs = t.messages as { episode_id: string; seq: number }[];
    expect(msgs.map((m) => `${m.episode_id.split('/')[2]}.${m.seq}`)).toEqual(
      ['1', '2', '3', '4'].flatMap((e) => [`${e}.0`, `${e}.1`, `${e}.2`]),
    );
  });

  it('without a rank, or with the identity rank, rows stay in append order', async () => {
    const b = sampleBundle('rw-3', 3);
    for (const rank of [undefined, Int32Array.from([0, 1, 2])]) {
      const w = await RunWriter.open(store, 'rw-3', { replace: true });
      for (const [k, u] of [2, 0, 1].entries()) await w.append('episodes', [b.episodes[u]!], k);
      await w.finish(b.run, rank);
      await w.commit();
      const t = await readTables(store, 'rw-3');
      expect(t.episodes!.map((e) => (e as { epoch: number }).epoch)).toEqual([3, 1, 2]);
    }
  });

  it('shows nothing before commit, and abort leaves the store as it was', async () => {
    await writeRun(store, sampleBundle('keep'));
    const before = hashTree(store);
    const b = sampleBundle('rw-4');
    const w = await RunWriter.open(store, 'rw-4');
    await appendBundle(w, b, [0, 1, 2]);
    await w.finish(b.run);
    expect(await listCommittedRuns(store)).toEqual(['keep']);
    expect(readdirSync(store).filter((n) => n.startsWith('.tmp-'))).toHaveLength(1);
    await w.abort();
    await w.abort(); // twice is fine
    expect(hashTree(store)).toBe(before);
    await expect(w.commit()).rejects.toThrow(/commit before finish \(writer is aborted\)/);
  });

  it('refuses an existing run unless replace, at open and at commit', async () => {
    const b = sampleBundle('rw-5');
    await writeRun(store, b);
    await expect(RunWriter.open(store, 'rw-5')).rejects.toMatchObject({ code: 'store.runExists', kind: 'store' });
    // A run that appears between open and commit is refused too (and the staged run dropped).
    const other = mkdtempSync(join(tmpdir(), 'standoff-runwriter-race-'));
    const w = await RunWriter.open(other, 'rw-5');
    await appendBundle(w, b, [0, 1, 2]);
    await w.finish(b.run);
    await writeRun(other, b);
    // The other write left this writer's staging directory alone (its owner is alive).
    expect(readdirSync(other).filter((n) => n.startsWith('.tmp-'))).toHaveLength(1);
    const before = hashTree(other, (n) => n.startsWith('.tmp-'));
    await expect(w.commit()).rejects.toMatchObject({ code: 'store.runExists' });
    expect(hashTree(other)).toBe(before);
    // replace swaps the run in.
    const changed = { ...b, episodes: b.episodes.map((e) => ({ ...e, turns: 9 })) };
    const r = await RunWriter.open(store, 'rw-5', { replace: true });
    await appendBundle(r, changed, [0, 1, 2]);
    await r.finish(b.run);
    await r.commit();
    const t = await readTables(store, 'rw-5');
    expect(t.episodes!.every((e) => (e as { turns: number }).turns === 9)).toBe(true);
  });

  it('a staging failure is a store error (exit 4) and abort leaves the store as it was', async () => {
    await writeRun(store, sampleBundle('keep'));
    const before = hashTree(store);
    const b = sampleBundle('rw-9', 1);
    const w = await RunWriter.open(store, 'rw-9', { trusted: true });
    const tmp = readdirSync(store).find((n) => n.startsWith('.tmp-'))!;
    rmSync(join(store, tmp, '.parts'), { recursive: true }); // the staging directory vanishes
    const big = Array.from({ length: 80 }, (_, i) => ({ ...b.messages[0]!, seq: i, content: 'y'.repeat(65536) }));
    // Row objects go to DuckDB's appender and the part is converted in the background: the
    // failure surfaces when the writer next waits for it (here at finish). Staged JSON lines fail
    // as they are written.
    const err = await w
      .append('messages', big, 0)
      .then(() => w.finish(b.run))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect(err).toMatchObject({ code: 'store.writeFailed', exitCode: 4 });
    expect((err as StandoffError).message).toMatch(/^could not write run "rw-9" to .*: IO Error: .*No such file or directory/);
    const lines = Array.from({ length: 80 }, (_, i) => stagedRow(fileColumns('messages'), big[i]!));
    const w2 = await RunWriter.open(store, 'rw-10', { trusted: true });
    const tmp2 = readdirSync(store).find((n) => n.startsWith('.tmp-') && n !== tmp)!;
    rmSync(join(store, tmp2, '.parts'), { recursive: true });
    const err2 = await w2.appendStaged('messages', lines, 0).catch((e: unknown) => e);
    expect(err2).toMatchObject({ code: 'store.writeFailed', exitCode: 4 });
    expect((err2 as StandoffError).message).toMatch(/^could not stage run "rw-10" in .*: ENOENT/);
    await w2.abort();
    await w.abort();
    expect(hashTree(store)).toBe(before);
  });

  it('a value DuckDB refuses (an INTEGER beyond 32 bits) is a store error at append, and abort leaves the store as it was', async () => {
    await writeRun(store, sampleBundle('keep'));
    const before = hashTree(store);
    const b = sampleBundle('rw-12', 1);
    const w = await RunWriter.open(store, 'rw-12', { trusted: true });
    const err = await w.append('episodes', [{ ...b.episodes[0]!, input_tokens: 3_000_000_000 }], 0).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'store.writeFailed', exitCode: 4 });
    expect((err as StandoffError).message).toMatch(/^could not stage run "rw-12" in .*: number out of int32 range$/);
    await w.abort();
    expect(hashTree(store)).toBe(before);
  });

  it('checks appended rows against the schema unless trusted', async () => {
    const b = sampleBundle('rw-6');
    const w = await RunWriter.open(store, 'rw-6');
    const bad = { ...b.episodes[0]!, epoch: 'one' };
    const err = await w.append('episodes', [bad], 7).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StandoffError);
    expect((err as StandoffError).message).toBe('episodes row 1 of unit 7: field "epoch": invalid input: expected number, received string');
    const wrongRun = await w.append('episodes', [{ ...b.episodes[0]!, run_id: 'other' }]).catch((e: unknown) => e);
    expect((wrongRun as StandoffError).code).toBe('store.runIdMismatch');
    await expect(w.append('runs' as TableName, [b.run])).rejects.toThrow(/runs row is given to finish/);
    await w.abort();
    expect(readdirSync(store)).toEqual([]);
  });

  it('stages more text than its memory cap (rows spill to disk) and writes it all', async () => {
    const b = sampleBundle('rw-7', 1);
    const ep = b.episodes[0]!;
    const w = await RunWriter.open(store, 'rw-7', { memoryLimit: '128MB', trusted: true });
    await w.append('episodes', [ep], 0);
    // 6,000 messages of 64 KiB each: about 380 MiB of text through a 128 MB cap.
    const text = 'x'.repeat(65536);
    for (let k = 0; k < 60; k++) {
      const rows = Array.from({ length: 100 }, (_, i) => ({ ...b.messages[0]!, seq: k * 100 + i, content: `${k * 100 + i}:${text}` }));
      await w.append('messages', rows, 0);
    }
    await w.finish(b.run);
    await w.commit();
    const s = await openStore(store);
    try {
      const { rows } = await query(s.conn, 'SELECT count(*)::INTEGER AS n, sum(length(content))::BIGINT AS chars, min(seq) AS lo, max(seq) AS hi FROM messages');
      expect(rows[0]).toEqual({ n: 6000, chars: 6000 * 65536 + [...Array(6000).keys()].reduce((a, i) => a + String(i).length + 1, 0), lo: 0, hi: 5999 });
    } finally {
      s.close();
    }
  });

  it('keeps every value writeRun keeps: text escapes, unicode, long text, doubles at the edges, nulls', async () => {
    const b = sampleBundle('rw-8', 1);
    const ep = b.episodes[0]!;
    const texts = [
      'quote " backslash \\ newline \n tab \t cr \r',
      'nul \u0000 inside',
      'ünïcode ✓ 𝛼 😀 中文',
      'lone surrogate \ud800 here', // both writers store U+FFFD for it
      '{"json": [1, 2.5, null]}',
      'x'.repeat(20 * 1024 * 1024), // over DuckDB's default JSON object size
      '',
    ];
    const messages = texts.map((content, seq) => ({ ...b.messages[0]!, seq, content, reasoning: seq % 2 ? null : content.slice(0, 10) }));
    const doubles = [0.1, 0.1 + 0.2, 1e-300, 5e-324, 1.7976931348623157e308, 123456789.123456789, -2.5e-8, 2 ** 53 - 1];
    const episodes = doubles.map((latency_ms, i) => ({
      ...ep,
      episode_id: `e/${i}`,
      epoch: 2147483647 - i,
      latency_ms,
      input_tokens: i % 2 ? null : 2147483647,
      gathered_evidence: i % 2 === 0,
      started_at: i % 3 ? null : '2026-11-29T10:00:01.123Z',
    }));
    const bundle = { ...b, episodes, messages, scores: [], judgments: [], probe_answers: [], aggregates: [] };
    const ref = mkdtempSync(join(tmpdir(), 'standoff-runwriter-ref-'));
    await writeRun(ref, bundle);
    const w = await RunWriter.open(store, 'rw-8');
    await w.append('episodes', episodes, 0);
    await w.append('messages', messages, 0);
    await w.append('probe_decisions', b.probe_decisions, 0);
    await w.finish(b.run);
    await w.commit();
    const got = await readTables(store, 'rw-8');
    const want = await readTables(ref, 'rw-8');
    expect(got).toEqual(want);
    expect((got.messages![3] as { content: string }).content).toBe('lone surrogate \ufffd here');
    expect((got.messages![5] as { content: string }).content).toHaveLength(20 * 1024 * 1024);
    expect((got.episodes! as { latency_ms: number }[]).map((e) => e.latency_ms)).toEqual(doubles);
  });
  it('row objects (DuckDB appender) and staged JSON lines give byte-identical Parquet files, edge values included', async () => {
    const b = sampleBundle('rw-11', 2);
    const texts = ['quote " backslash \\ newline \n', 'nul \u0000 inside', 'ünïcode ✓ 𝛼 😀', 'lone surrogate \ud800 here', '', 'x'.repeat(300_000)];
    const messages = texts.map((content, seq) => ({ ...b.messages[0]!, seq, content, reasoning: seq % 2 ? undefined : content.slice(0, 7), tool_ok: seq % 3 === 0 ? null : seq % 2 === 0 }));
    // -0 and non-finite doubles: JSON writes 0 and null, and so must the appender path.
    const doubles = [0.1 + 0.2, -0, 5e-324, 1.7976931348623157e308, Number.NaN, Number.POSITIVE_INFINITY, -2.5e-8];
    const episodes = doubles.map((latency_ms, i) => ({ ...b.episodes[0]!, episode_id: `e/${i}`, epoch: i, latency_ms, started_at: i % 2 ? null : '2026-11-29T10:00:01.123Z' }));
    const scores = b.scores.map((r, i) => ({ ...r, value: i % 2 ? -0 : 0.75 }));
    const tables = { episodes, messages, scores } as const;
    const rank = [1, 0, 2];
    const direct = await RunWriter.open(store, 'rw-11', { trusted: true });
    const staged = await RunWriter.open(join(store, 'other'), 'rw-11', { trusted: true });
    for (const [u, table] of (['episodes', 'messages', 'scores'] as const).entries()) {
      const rows = tables[table] as readonly Record<string, unknown>[];
      await direct.append(table, rows.slice(0, 2), u);
      await staged.appendStaged(table, rows.slice(0, 2).map((r) => stagedRow(fileColumns(table), r)), u);
      await direct.append(table, rows.slice(2), u); // mixed with the other path in one writer too
      await direct.appendStaged(table, [], u);
      await staged.appendStaged(table, rows.slice(2).map((r) => stagedRow(fileColumns(table), r)), u);
    }
    await direct.finish(b.run, rank);
    await staged.finish(b.run, rank);
    await direct.commit();
    await staged.commit();
    for (const table of ['episodes', 'messages', 'scores'] as const) {
      const file = (root: string) => readFileSync(join(root, table, 'run_id=rw-11', 'data.parquet'));
      expect(file(store).equals(file(join(store, 'other'))), table).toBe(true);
    }
  });
  it('appended rows across DuckDB vector (2,048-row) and call boundaries give the same Parquet as JSON lines', async () => {
    const b = sampleBundle('rw-13', 3);
    // Two DuckDB vectors and a bit, NULLs and values changing at and around their edges, appended
    // in calls of uneven sizes (one call spans two vectors; one ends exactly on a vector's end).
    const n = 2 * 2048 + 5;
    const nullAt = (i: number) => i % 7 === 0 || i === 2047 || i === 2048 || i === 4095;
    const episodes = Array.from({ length: n }, (_, i) => ({
      ...b.episodes[i % 3]!,
      episode_id: `e/${i}`,
      epoch: i,
      subject_family: nullAt(i) ? null : `fam ${i % 5}`,
      latency_ms: nullAt(i + 1) ? null : i % 11 === 0 ? -0 : i / 3,
      input_tokens: nullAt(i + 2) ? null : 2147483647 - i,
      truncated: nullAt(i + 3) ? null : i % 2 === 0,
      started_at: nullAt(i + 4) ? null : '2026-11-29T10:00:01.123Z',
    }));
    const cuts = [0, 1, 2047, 2048, 3000, 4096, n];
    const direct = await RunWriter.open(store, 'rw-13', { trusted: true });
    const staged = await RunWriter.open(join(store, 'other'), 'rw-13', { trusted: true });
    for (let k = 0; k + 1 < cuts.length; k++) {
      const rows = episodes.slice(cuts[k], cuts[k + 1]);
      await direct.append('episodes', rows, k);
      await staged.appendStaged('episodes', rows.map((r) => stagedRow(fileColumns('episodes'), r)), k);
    }
    expect(direct.rowCounts().episodes).toBe(n);
    await direct.finish(b.run);
    await staged.finish(b.run);
    await direct.commit();
    await staged.commit();
    const file = (root: string) => readFileSync(join(root, 'episodes', 'run_id=rw-13', 'data.parquet'));
    expect(file(store).equals(file(join(store, 'other')))).toBe(true);
    const got = (await readTables(store, 'rw-13')).episodes as { epoch: number; subject_family: string | null; input_tokens: number | null }[];
    expect(got.length).toBe(n);
    expect(got.map((e) => e.epoch)).toEqual(episodes.map((e) => e.epoch));
    expect(got[2048]).toMatchObject({ subject_family: null, input_tokens: 2147483647 - 2048 });
    expect(got[2046]).toMatchObject({ subject_family: 'fam 1', input_tokens: null });
  });
});
