/**
 * The steps of the streamed and CSV ingests, each alone: the CSV maps merged with the flags
 * (csv/file-maps.ts) and the CSV run row (csv/run-row.ts); the `.eval` reader's steps
 * (inspect/eval-log.ts: header, sample units, monolith and chunked samples); the run order of
 * Inspect units and lm-eval documents; the all-or-nothing policy of the streamed ingests
 * (staged-runs.ts).
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CsvProblems } from '../../src/store/read-csv.ts';
import { resolveFileMaps } from '../../src/ingest/csv/file-maps.ts';
import { csvRunNotes, csvRunRow, mappingJsonOf, type CsvFileFacts } from '../../src/ingest/csv/run-row.ts';
import { mappingSchema } from '../../src/ingest/csv/mapping.ts';
import { chunkSequence, readChunked, readEvalHeader, readMonolith, sampleUnits } from '../../src/ingest/inspect/eval-log.ts';
import { ZipReader } from '../../src/ingest/inspect/zip.ts';
import { unitRanks } from '../../src/ingest/inspect/index.ts';
import { docRanks } from '../../src/ingest/lm-eval/index.ts';
import { StagedRuns } from '../../src/ingest/staged-runs.ts';
import { IngestProblems } from '../../src/ingest/ingest-problems.ts';
import { dataError, type StandoffError } from '../../src/errors.ts';
import { chunkedSampleMembers, shapedEvalMembers, shapedSamples, writeZip } from '../fixtures/inspect/make-logs.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-ingest-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fail = (): never => {
  throw new Error('problems');
};

describe('csv/file-maps: what the user said', () => {
  const map = join(dir, 'map.json');
  writeFileSync(map, JSON.stringify({ table: 'episodes', columns: { subject_model: 'm', scenario_id: 's' } }));
  it('gives every file the shared map, or none (detect)', async () => {
    const p = new CsvProblems(20, 'ingest');
    expect((await resolveFileMaps(['a.csv', 'b.csv'], { map }, p, fail)).mapName).toEqual([map, map]);
    expect((await resolveFileMaps(['a.csv'], {}, p, fail)).mapOf).toEqual([null]);
  });
  it('refuses two maps for one file, a map with --wide, and a flag that contradicts the map', async () => {
    const p = new CsvProblems(20, 'ingest');
    await expect(resolveFileMaps(['a.csv'], { map, maps: { 'a.csv': map } }, p, fail)).rejects.toThrow(/a.csv has two maps/);
    await expect(resolveFileMaps(['a.csv'], { map, wide: {} }, p, fail)).rejects.toThrow(/--wide .* does not go with --map/);
    await expect(resolveFileMaps(['a.csv'], { map, flags: { probes: true } }, p, fail)).rejects.toThrow(/--probes is for long paired-probe files/);
    await expect(resolveFileMaps(['a.csv'], { maps: { 'z.csv': map } }, p, fail)).rejects.toThrow(/z.csv is not one of the CSV files given/);
  });
  it('collects a bad map as a problem and calls onProblems', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"table": "nope"}');
    const p = new CsvProblems(20, 'ingest');
    await expect(resolveFileMaps(['a.csv'], { map: bad }, p, fail)).rejects.toThrow('problems');
    expect(p.size).toBe(1);
  });
});

describe('csv/run-row: the runs row (pure)', () => {
  const facts = (file: string, mapping: object, extra: Partial<CsvFileFacts> = {}): CsvFileFacts => ({
    file, sha256: 'ab', table: 'episodes', detected: false, mapping: mappingSchema.parse(mapping), defaults: { epoch: '1' }, notes: [], ...extra,
  });
  const m1 = { table: 'episodes', columns: { subject_model: 'm', scenario_id: 's' } };
  it('stores one compact mapping when the files agree, one per file when they do not', () => {
    expect(JSON.parse(mappingJsonOf([facts('a.csv', m1), facts('b.csv', m1)])).table).toBe('episodes');
    const two = JSON.parse(mappingJsonOf([facts('a.csv', m1), facts('b.csv', { ...m1, constants: { domain: 'x' } })]));
    expect(two.mappings.map((x: { file: string }) => x.file)).toEqual(['a.csv', 'b.csv']);
  });
  it('says how the mapping was found and which defaults were used; masks secrets', () => {
    expect(csvRunNotes(['a.csv'], [facts('a.csv', m1, { detected: true })], [])).toBe('CSV ingest of 1 file; mapping detected from the header; defaults: episodes.epoch=1');
    const run = csvRunRow({
      runId: 'r', now: new Date('2026-01-01T00:00:00Z'), files: ['dir/a.csv'], mapNames: ['map.json'], maxEpoch: 0,
      summaries: [facts('dir/a.csv', { ...m1, notes: 'from http://user:pw@host/x' })], mappingJson: '{"u":"http://user:pw@host/x"}',
    });
    expect(run).toMatchObject({ run_id: 'r', suite: 'a', epochs: null, source_file: 'a.csv', source_sha256: 'ab', created_at: '2026-01-01T00:00:00.000Z' });
    expect(run.config).not.toContain('pw@');
    expect(run.notes).not.toContain('pw@');
  });
});

describe('inspect/eval-log: the .eval reader in steps', () => {
  const samples = shapedSamples();
  it('reads the header, or rebuilds it from the journal, or says the zip is not a log', () => {
    const problems: StandoffError[] = [];
    const z1 = ZipReader.open(writeZip(join(dir, 'h.eval'), shapedEvalMembers()));
    expect(readEvalHeader(z1, 'h.eval', problems)).toMatchObject({ headerMember: 'header.json', rebuilt: false, header: { status: 'success' } });
    const z2 = ZipReader.open(writeZip(join(dir, 'j.eval'), shapedEvalMembers({ header: false })));
    expect(readEvalHeader(z2, 'j.eval', problems)).toMatchObject({ headerMember: '_journal/start.json', rebuilt: true, header: { status: 'started' } });
    const z3 = ZipReader.open(writeZip(join(dir, 'x.eval'), [{ name: 'other.txt', data: 'x' }]));
    expect((readEvalHeader(z3, 'x.eval', problems) as { notInspect: StandoffError }).notInspect.message).toMatch(/neither header.json nor _journal\/start.json/);
    expect(problems).toEqual([]);
    for (const z of [z1, z2, z3]) z.close();
  });
  it('lists sample units in the run order (numbers numerically, then epoch), a monolith winning over a folder', () => {
    const members = shapedEvalMembers({ samples: [] });
    const names = ['samples/10_epoch_1.json', 'samples/2_epoch_2.json', 'samples/2_epoch_1.json', 'samples/b_epoch_1.json'];
    for (const n of names) members.push({ name: n, data: '{}' });
    members.push({ name: 'samples/10_epoch_1/sample.json', data: '{}' }, { name: 'samples/3_epoch_1/sample.json', data: '{}' });
    const z = ZipReader.open(writeZip(join(dir, 'units.eval'), members));
    const keys = sampleUnits(z).map((u) => (u.entry ? u.entry.name : `${u.folder![0]}/`));
    expect(keys).toEqual(['samples/2_epoch_1.json', 'samples/2_epoch_2.json', '3_epoch_1/', 'samples/10_epoch_1.json', 'samples/b_epoch_1.json']);
    z.close();
  });
  it('reads a monolith sample and the same sample chunked to the same checked sample', () => {
    const s = samples[0]!;
    const members = [...shapedEvalMembers({ samples: [s] }), ...chunkedSampleMembers({ ...s, id: 'chunked' })];
    const z = ZipReader.open(writeZip(join(dir, 'both.eval'), members));
    const units = sampleUnits(z);
    const mono = units.find((u) => u.entry)!;
    const folder = units.find((u) => u.folder)!;
    const a = readMonolith(z, 'both.eval', mono.entry!);
    const b = readChunked(z, 'both.eval', folder.folder![0], folder.folder![1]);
    expect(a.error).toBeUndefined();
    expect(b.error).toBeUndefined();
    expect({ ...b.sample, id: s.id }).toEqual(a.sample);
    z.close();
  });
  it('refuses a chunk sequence with a gap', () => {
    const members = chunkedSampleMembers(samples[0]!).filter((m) => !m.name.endsWith('/messages/2.json'));
    const z = ZipReader.open(writeZip(join(dir, 'gap.eval'), [...shapedEvalMembers({ samples: [] }), ...members]));
    const u = sampleUnits(z)[0]!;
    const prefix = `samples/${u.folder![0]}/`;
    const f = { zip: z, file: 'gap.eval', byPath: new Map(u.folder![1].map((e) => [e.name.slice(prefix.length), e])), bad: (member: string, text: string) => ({ member, error: dataError('x', text) }) };
    const seq = chunkSequence(f, 'messages');
    expect('error' in seq && seq.error.error!.message).toMatch(/messages chunk starts at index 4 but 2 items precede it/);
    z.close();
  });
});

describe('run order of units', () => {
  it('ranks Inspect units by sample id (numbers numerically) then epoch', () => {
    expect([...unitRanks([{ id: '10', epoch: 1 }, { id: '2', epoch: 2 }, { id: '2', epoch: 1 }, { id: 'a', epoch: 1 }])]).toEqual([2, 1, 0, 3]);
    // Units already in order (the shortcut) and one out of place at the end.
    const keys = ['1', '2', '9', '10', 'a', 'b'].map((id) => ({ id, epoch: 1 }));
    expect([...unitRanks(keys)]).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...unitRanks([...keys, { id: '3', epoch: 1 }])]).toEqual([0, 1, 3, 4, 5, 6, 2]);
  });
  it('ranks lm-eval documents by doc_id', () => {
    expect([...docRanks(new Map([['10', 0], ['9', 1], ['x', 2]]))]).toEqual([1, 0, 2]);
  });
});

describe('staged-runs: all or nothing', () => {
  it('stops at the problem limit, reports each problem on its own line and throws one error', async () => {
    const traces = join(dir, 'store-new');
    const lines: string[] = [];
    const staged = await StagedRuns.start({ traces, dryRun: true, maxProblems: 2, report: (l) => lines.push(l) });
    expect(staged.full()).toBe(false);
    staged.add([dataError('ingest.a', 'f1: bad'), dataError('ingest.b', 'f2: bad')], false);
    expect(staged.full()).toBe(true);
    expect(() => staged.throwIfProblems()).toThrow(IngestProblems);
    expect(lines).toEqual(['f1: bad', 'f2: bad']);
    await staged.close();
    expect(existsSync(traces)).toBe(false);
  });
  it('a dry run opens no writer', async () => {
    const staged = await StagedRuns.start({ traces: join(dir, 'dry'), dryRun: true });
    await staged.sink().begin('run-1');
    expect(staged.writers).toHaveLength(0);
    staged.throwIfProblems();
    await staged.close();
  });
});
