/**
 * Bad Inspect inputs: each gives a one-line data error naming the file and member (exit kind
 * `data`), several are reported together, and the trace store is left byte-for-byte unchanged.
 */
import { describe, it, expect, beforeAll, beforeEach } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync, strToU8 } from 'fflate';
import { ingestInspect, IngestProblems } from '../../src/ingest/ingest-inspect.ts';
import { StandoffError } from '../../src/errors.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { FIXTURES, buildZip, readMembers, shapedEvalMembers, shapedSamples, chunkedSampleMembers, writeZip } from '../fixtures/inspect/make-logs.ts';

const GOOD = join(FIXTURES, 'log_streaming.eval');
let seeded: string; // a store holding one good run, copied per test
let dir: string;
let store: string;

beforeAll(async () => {
  seeded = join(mkdtempSync(join(tmpdir(), 'standoff-inspect-seed-')), 'traces');
  await ingestInspect([join(FIXTURES, 'log_read_sample.eval')], { traces: seeded });
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-inspect-bad-'));
  store = join(dir, 'traces');
  cpSync(seeded, store, { recursive: true });
});

/** Runs the ingest expecting a data error (exit 3, one line) and checks the store is byte-for-byte unchanged. */
async function expectDataError(paths: string[]): Promise<{ err: StandoffError; lines: string[] }> {
  const before = hashTree(store);
  const lines: string[] = [];
  const err = await ingestInspect(paths, { traces: store, report: (l) => lines.push(l) }).then(
    () => {
      throw new Error('expected the ingest to fail');
    },
    (e: unknown) => e as StandoffError,
  );
  expect(err).toBeInstanceOf(StandoffError);
  expect(err).toBeInstanceOf(IngestProblems);
  expect(err.kind).toBe('data');
  expect(err.exitCode).toBe(3);
  expect(err.message).not.toContain('\n');
  expect(hashTree(store)).toBe(before);
  return { err, lines };
}

function rezip(members: Array<[string, Uint8Array]>, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, zipSync(Object.fromEntries(members)));
  return path;
}

describe('bad Inspect inputs', () => {
  it('a truncated .eval (no end-of-central-directory record)', async () => {
    const bytes = readFileSync(GOOD);
    const path = join(dir, 'truncated.eval');
    writeFileSync(path, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.truncatedZip');
    expect(err.message).toMatch(/^.*truncated\.eval: no end-of-central-directory record: the zip is truncated/);
  });

  it('a member running past the end of the file names the member', async () => {
    const bytes = Buffer.from(buildZip([{ name: 'header.json', data: '{}', method: 0 }, { name: 'samples/1_epoch_1.json', data: '{"id":1}', method: 0 }]));
    // bump the second central-directory entry's compressed size past EOF
    const cd = bytes.lastIndexOf(Buffer.from('PK\x01\x02', 'latin1'));
    bytes.writeUInt32LE(10_000, cd + 20);
    const path = join(dir, 'past-eof.eval');
    writeFileSync(path, bytes);
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.truncatedZip');
    expect(err.message).toContain('past-eof.eval: samples/1_epoch_1.json: member runs past the end of the file');
  });

  it('a sample member whose JSON does not parse (re-zipped with fflate) names file and member', async () => {
    const members = readMembers(GOOD).map(([n, d]): [string, Uint8Array] => [n, n === 'samples/2_epoch_1.json' ? strToU8('{"id": 2, "epoch": 1, "messages": [') : d]);
    const path = rezip(members, 'corrupt-sample.eval');
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.badJson');
    expect(err.message).toMatch(/corrupt-sample\.eval: samples\/2_epoch_1\.json: not valid JSON: /);
  });

  it('a zip with unrelated members is not an Inspect log', async () => {
    const path = rezip([['readme.txt', strToU8('hello')], ['data/x.csv', strToU8('a,b\n1,2\n')]], 'unrelated.eval');
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.notInspectLog');
    expect(err.message).toContain('unrelated.eval: not an inspect log: the zip has neither header.json nor _journal/start.json (members: readme.txt, data/x.csv)');
  });

  it('an empty file', async () => {
    const path = join(dir, 'empty.eval');
    writeFileSync(path, '');
    const { err, lines } = await expectDataError([path]);
    expect(lines).toEqual([]); // a single problem is the error itself, not also printed
    expect((err as IngestProblems).errors).toEqual([err.message]);
    expect(err.code).toBe('ingest.emptyFile');
    expect(err.message).toContain('empty.eval: the file is empty');
  });

  it('a non-zip file with the .eval extension', async () => {
    const path = join(dir, 'text.eval');
    writeFileSync(path, 'this is not a zip archive at all\n'.repeat(10));
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.notZip');
    expect(err.message).toContain('text.eval: not a zip archive');
  });

  it('a sample missing a field names the member and field', async () => {
    const samples = shapedSamples();
    samples[1]!.epoch = 'one';
    (samples[2]!.messages as Array<Record<string, unknown>>)[1]!.role = 'narrator';
    const path = writeZip(join(dir, 'fields.eval'), shapedEvalMembers({ samples }));
    const { err, lines } = await expectDataError([path]);
    expect(err).toBeInstanceOf(IngestProblems);
    // Members are read (and problems listed) in the run's order, by sample id then epoch.
    expect(lines).toEqual([
      expect.stringMatching(/fields\.eval: samples\/em_act_a_epoch_2\.json: field "messages\.1\.role": invalid option/),
      expect.stringMatching(/fields\.eval: samples\/em_amb_a_epoch_one\.json: field "epoch": invalid input: expected number, received string$/),
    ]);
  });

  it('a damaged member (CRC mismatch) and an unsupported compression method', async () => {
    const bytes = Buffer.from(buildZip([{ name: 'header.json', data: '{"eval": {}}', method: 0 }, { name: 'samples/1_epoch_1.json', data: '{"id": 1, "epoch": 1}', method: 0 }]));
    bytes[bytes.indexOf('"epoch"') + 2] ^= 0x20; // flip a bit inside the stored sample
    const crc = join(dir, 'crc.eval');
    writeFileSync(crc, bytes);
    const bz = writeZip(join(dir, 'bzip2.eval'), [...shapedEvalMembers().slice(0, 1), { name: 'samples/1_epoch_1.json', data: '{}', method: 12 }]);
    const { err, lines } = await expectDataError([crc, bz]);
    expect(err.message).toMatch(/^\d+ problems in 2 input files; nothing was written; first: /);
    expect(lines.some((l) => /crc\.eval: samples\/1_epoch_1\.json: CRC-32 mismatch/.test(l))).toBe(true);
    expect(lines.some((l) => /bzip2\.eval: samples\/1_epoch_1\.json: unsupported compression method 12/.test(l))).toBe(true);
  });

  it('a chunked sample folder without its sample.json', async () => {
    const members = shapedEvalMembers({ samples: [] });
    members.splice(1, 0, ...chunkedSampleMembers(shapedSamples()[0]!).filter((m) => !m.name.endsWith('/sample.json')));
    const path = writeZip(join(dir, 'chunked.eval'), members);
    const { err } = await expectDataError([path]);
    expect(err.code).toBe('ingest.badChunkedSample');
    expect(err.message).toContain('chunked.eval: samples/em_act_a_epoch_1/: chunked sample folder without sample.json');
  });

  it('several bad files at once: every problem on its own line, one summarizing error, good files not written', async () => {
    const empty = join(dir, 'empty.eval');
    writeFileSync(empty, '');
    const notZip = join(dir, 'text.eval');
    writeFileSync(notZip, 'nope');
    const members = readMembers(GOOD).map(([n, d]): [string, Uint8Array] => [n, n.startsWith('samples/') ? strToU8('{') : d]);
    const corrupt = rezip(members, 'corrupt.eval');
    const { err, lines } = await expectDataError([GOOD, empty, notZip, corrupt]);
    expect(err).toBeInstanceOf(IngestProblems);
    expect((err as IngestProblems).problems).toHaveLength(6);
    expect((err as IngestProblems).errors).toEqual(lines);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/empty\.eval: the file is empty/);
    expect(lines[1]).toMatch(/text\.eval: not a zip archive/);
    expect(lines.slice(2).every((l) => /corrupt\.eval: samples\/\d_epoch_\d\.json: not valid JSON/.test(l))).toBe(true);
    expect(err.message).toMatch(/^6 problems in 3 input files; nothing was written; first: .*empty\.eval: the file is empty$/);
  });

  it('stops collecting at the problem limit', async () => {
    const samples = Array.from({ length: 30 }, (_, i) => ({ id: i + 1, epoch: 1, messages: 'not a list' }));
    const path = writeZip(join(dir, 'many.eval'), shapedEvalMembers({ samples }));
    const { err, lines } = await expectDataError([path]);
    expect(lines).toHaveLength(20);
    expect(err.message).toMatch(/^20\+ problems \(stopped after 20\) in 1 input file; nothing was written; first: .*many\.eval: samples\/1_epoch_1\.json: field "messages": /);
  });

  it('a file that does not exist', async () => {
    const { err } = await expectDataError([join(dir, 'missing.eval')]);
    expect(err.code).toBe('ingest.missingFile');
    expect(err.message).toContain('missing.eval: cannot read the file: ENOENT');
  });
});
