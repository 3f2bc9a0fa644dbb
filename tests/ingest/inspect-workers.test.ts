/**
 * `ingest inspect` with worker threads (src/ingest/inspect/pool.ts) writes the same store, byte for
 * byte, as without them, and reports the same problems in the same order: the workers read, map,
 * check and stage the units, the calling thread takes the results back in unit order. Logs here
 * are small, so `parallelMinUnits: 0` makes every `.eval` go through the workers.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestInspect, IngestProblems, type IngestInspectOptions } from '../../src/ingest/ingest-inspect.ts';
import { loadInspectLog } from '../../src/ingest/inspect/index.ts';
import { BlockBuilder } from '../../src/ingest/inspect/unit.ts';
import { InspectPool } from '../../src/ingest/inspect/pool.ts';
import { ZipReader } from '../../src/ingest/inspect/zip.ts';
import { sampleUnits } from '../../src/ingest/inspect/eval-log.ts';
import { RunWriter, stagedRow } from '../../src/store/run-writer.ts';
import { fileColumns } from '../../src/schema/tables.ts';
import { StandoffError } from '../../src/errors.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { buildSyntheticEval } from '../../bench/ingest-inspect.ts';
import { FIXTURES, REAL_LOGS, chunkedSampleMembers, shapedEvalMembers, shapedSamples, writeZip, type ZipMember } from '../fixtures/inspect/make-logs.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'standoff-inspect-workers-'));
  dirs.push(d);
  return d;
};

const WORKERS: Partial<IngestInspectOptions> = { workers: 2, parallelMinUnits: 0 };
const IN_THREAD: Partial<IngestInspectOptions> = { workers: 0 };

/** The error and the problem lines of an ingest that must fail. */
async function problemsOf(paths: string[], traces: string, opts: Partial<IngestInspectOptions>): Promise<{ err: StandoffError; lines: string[] }> {
  const lines: string[] = [];
  try {
    await ingestInspect(paths, { traces, report: (l) => lines.push(l), ...opts });
  } catch (err) {
    expect(err).toBeInstanceOf(StandoffError);
    return { err: err as StandoffError, lines };
  }
  throw new Error('expected the ingest to fail');
}

describe('ingest inspect with worker threads', () => {
  it('writes the same store, byte for byte, as the calling thread alone (real logs, zstd, synthetic, chunked)', async () => {
    const d = tmp();
    const logs = [...REAL_LOGS, join(FIXTURES, 'log_streaming-zstd.eval')].map((p, i) => {
      const to = join(d, `${i}-${p.split('/').pop()}`);
      copyFileSync(p, to);
      return to;
    });
    buildSyntheticEval(join(d, 'synthetic.eval'), 150, 2); // NaN scores, attachments, tool calls; more units than one job
    logs.push(join(d, 'synthetic.eval'));
    const samples = shapedSamples();
    const chunked: ZipMember[] = shapedEvalMembers({ samples: samples.slice(1) });
    chunked.push(...chunkedSampleMembers(samples[0]!));
    logs.push(writeZip(join(d, 'chunked.eval'), chunked));
    const a = await ingestInspect(logs, { traces: join(d, 'a'), ...IN_THREAD });
    const b = await ingestInspect(logs, { traces: join(d, 'b'), ...WORKERS });
    expect(b.runs).toEqual(a.runs.map((r) => ({ ...r })));
    expect(a.runs.reduce((n, r) => n + r.samples, 0)).toBeGreaterThan(300);
    expect(hashTree(join(d, 'b'))).toBe(hashTree(join(d, 'a')));
    // A third store written with one worker is the same too: the store does not depend on scheduling.
    await ingestInspect(logs, { traces: join(d, 'c'), workers: 1, parallelMinUnits: 0 });
    expect(hashTree(join(d, 'c'))).toBe(hashTree(join(d, 'a')));
  }, 120_000);

  it('reports the same problems, in the same order, and leaves the store unchanged (bad JSON, bad field, duplicate, invalid row)', async () => {
    const d = tmp();
    const samples = shapedSamples();
    samples[1]!.epoch = 'one';
    (samples[2]!.messages as Array<Record<string, unknown>>)[1]!.role = 'narrator';
    const members = shapedEvalMembers({ samples });
    members.push({ name: 'samples/zz_bad_epoch_1.json', data: '{"id": "zz_bad", "epoch": 1, ' }); // does not parse
    members.push({ name: `samples/${samples[0]!.id}_epoch_${samples[0]!.epoch}/sample.json`, data: '{}' }); // a folder a monolith of the same key wins over
    const bad = writeZip(join(d, 'bad.eval'), members);
    const good = join(d, 'good.eval');
    copyFileSync(REAL_LOGS[0]!, good);
    const traces = join(d, 'store');
    await ingestInspect([REAL_LOGS[1]!], { traces, ...IN_THREAD });
    const before = hashTree(traces);
    const x = await problemsOf([good, bad], traces, IN_THREAD);
    const y = await problemsOf([good, bad], traces, WORKERS);
    expect(x.lines.length).toBeGreaterThanOrEqual(3);
    expect(y.lines).toEqual(x.lines);
    expect(y.err.message).toBe(x.err.message);
    expect(y.err.exitCode).toBe(3);
    expect(y.lines.some((l) => /bad\.eval: samples\/zz_bad_epoch_1\.json: not valid JSON/.test(l))).toBe(true);
    expect(hashTree(traces)).toBe(before);
  }, 120_000);

  it('stops at the problem limit where the calling thread stops', async () => {
    const d = tmp();
    const many = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, epoch: 1, messages: i % 3 === 0 ? 'not a list' : [] }));
    const path = writeZip(join(d, 'many.eval'), shapedEvalMembers({ samples: many }));
    const x = await problemsOf([path], join(d, 's'), { ...IN_THREAD, maxProblems: 7 });
    const y = await problemsOf([path], join(d, 's'), { ...WORKERS, maxProblems: 7 });
    expect(y.err).toBeInstanceOf(IngestProblems);
    expect(y.lines).toHaveLength(7);
    expect(y.lines).toEqual(x.lines);
    expect(y.err.message).toBe(x.err.message);
  }, 120_000);

  it('append, appendStaged and appendBlock write the same Parquet as each other and as the ingest', async () => {
    const d = tmp();
    const log = join(d, 'synthetic.eval');
    buildSyntheticEval(log, 120, 2);
    await ingestInspect([log], { traces: join(d, 'ingest'), runId: 'r', workers: 0 });
    const { bundle } = (await loadInspectLog(log, { runId: 'r' })).log!;
    const units = bundle.episodes.map((e) => ({
      episodes: [e],
      messages: bundle.messages.filter((m) => m.episode_id === e.episode_id),
      scores: bundle.scores.filter((x) => x.episode_id === e.episode_id),
    }));
    const tables = ['episodes', 'messages', 'scores'] as const;
    const staged = (u: (typeof units)[number]) => ({
      episodes: u.episodes.map((r) => stagedRow(fileColumns('episodes'), r as unknown as Record<string, unknown>)),
      messages: u.messages.map((r) => stagedRow(fileColumns('messages'), r as unknown as Record<string, unknown>)),
      scores: u.scores.map((r) => stagedRow(fileColumns('scores'), r as unknown as Record<string, unknown>)),
    });
    const write = async (store: string, how: 'append' | 'staged' | 'block') => {
      const w = await RunWriter.open(store, 'r', { trusted: true });
      let block = new BlockBuilder();
      for (let u = 0; u < units.length; u++) {
        for (const t of tables) {
          if (how === 'append') await w.append(t, units[u]![t], u);
          if (how === 'staged') await w.appendStaged(t, staged(units[u]!)[t], u);
        }
        if (how === 'block') block.add(u, staged(units[u]!));
        if (how === 'block' && u % 7 === 6) {
          const b = block.build();
          for (const t of tables) await w.appendBlock(t, b[t]);
          block = new BlockBuilder();
        }
      }
      const b = block.build();
      for (const t of tables) if (how === 'block') await w.appendBlock(t, b[t]);
      await w.finish(bundle.run);
      await w.commit();
    };
    await write(join(d, 'append'), 'append');
    await write(join(d, 'staged'), 'staged');
    await write(join(d, 'block'), 'block');
    const want = hashTree(join(d, 'ingest'));
    expect(hashTree(join(d, 'append'))).toBe(want);
    expect(hashTree(join(d, 'staged'))).toBe(want);
    expect(hashTree(join(d, 'block'))).toBe(want);
  }, 120_000);

  it('closes with jobs in flight by letting them finish and asking each worker to end: none is terminated', async () => {
    // Worker.terminate() in the middle of a job can abort the whole process (nodejs/node#38418);
    // the pool terminates only a worker that does not end when asked.
    const d = tmp();
    const path = join(d, 'synthetic.eval');
    buildSyntheticEval(path, 600, 1); // 19 jobs: 8 in flight when the caller stops after the first unit
    const zip = ZipReader.open(path);
    const units = sampleUnits(zip).length;
    zip.close();
    const ctx = { file: path, runId: 'r', model: 'm', map: true, keepMapped: false, stage: true };
    for (let round = 0; round < 3; round++) {
      const pool = InspectPool.start(2);
      let read = 0;
      for await (const r of pool.scan(path, undefined, units, ctx)) {
        if ('member' in r) read++;
        break;
      }
      expect(read).toBe(1);
      await expect(pool.close()).resolves.toEqual({ terminated: 0 });
    }
  }, 120_000);
});
