/**
 * Bounded inflation of `.eval` members (issue 13): a 2 MB `.eval` whose sample member inflates to
 * 2 GiB used to kill node (V8 `kMaxInt >= len`, 4.4 GB RSS) and leave a `.tmp-*` directory. Now
 * a member over the size cap (default 256 MiB, `--max-member-size`) or the ratio cap (default
 * 1000x above 1 MiB, `--max-ratio`) is refused when the archive is opened: one line, exit 3, store
 * unchanged. A directory that understates a member's size cannot make it inflate further either.
 *
 * The bomb is a real deflate stream: 2,048 copies of the non-final blocks zlib writes for 1 MiB of
 * zeros (sync-flushed, so they concatenate), closed by a final empty block; it inflates to exactly
 * 2 GiB (checked below on a 16 MiB version with node's inflateRawSync).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { writeRun } from '../../src/store/write-run.ts';
import { ZipReader, ZipError } from '../../src/ingest/inspect/zip.ts';
import { buildZip, shapedEvalMembers, zstdRawFrame, type ZipMember } from '../fixtures/inspect/make-logs.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

const MiB = 1024 * 1024;
const ONE_MIB_OF_ZEROS = zlib.deflateRawSync(Buffer.alloc(MiB), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
/** Raw deflate that inflates to `mib` MiB of zeros. */
function zeros(mib: number): Buffer {
  return Buffer.concat([...Array.from({ length: mib }, () => ONE_MIB_OF_ZEROS), Buffer.from([0x03, 0x00])]);
}

let dir: string;
let store: string;
const evalWith = (name: string, extra: ZipMember): string => {
  const members = shapedEvalMembers();
  const i = members.findIndex((m) => m.name.startsWith('samples/'));
  members.splice(i, 1, { ...extra, name: members[i]!.name });
  const p = join(dir, name);
  writeFileSync(p, buildZip(members));
  return p;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-bomb-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('kept', 2));
});

describe('zip bombs', () => {
  it('the bomb stream is honest: 16 copies inflate to exactly 16 MiB of zeros', () => {
    const out = zlib.inflateRawSync(zeros(16));
    expect(out.length).toBe(16 * MiB);
    expect(out.every((b) => b === 0)).toBe(true);
  });

  it('a 2 MB .eval whose member inflates to 2 GiB: one line, exit 3, store unchanged, no temp directory', () => {
    const bomb = zeros(2048);
    expect(bomb.length).toBeLessThan(3 * MiB);
    const file = evalWith('bomb.eval', { name: '', data: '', raw: { compressed: bomb, size: 2048 * MiB, crc: 0 } });
    const before = hashTree(store);
    const r = runCli(['ingest', 'inspect', file, '--traces', store]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^standoff: .*bomb\.eval: samples\/.*: member inflates to 2048 MiB, more than the 256 MiB allowed \(a zip bomb\?\); raise it with --max-member-size/);
    expect(hashTree(store)).toBe(before);
  }, 120_000);

  it('the ratio cap: 64 MiB of zeros from 64 KB is refused by default, allowed (and then read) with --max-ratio', () => {
    const file = evalWith('ratio.eval', { name: '', data: '', raw: { compressed: zeros(64), size: 64 * MiB, crc: 0 } });
    const before = hashTree(store);
    const r = runCli(['ingest', 'inspect', file, '--traces', store, '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/member inflates \d+ times its compressed size \(64 MiB\), more than the 1000x allowed/);
    const allowed = runCli(['ingest', 'inspect', file, '--traces', store, '--dry-run', '--max-ratio', '1e6']);
    expect(allowed.code).toBe(3);
    expect(allowed.stderr).not.toMatch(/zip bomb/); // read this time: zeros are not a sample (CRC or JSON error)
    expect(hashTree(store)).toBe(before);
  }, 120_000);

  it('the size cap is an option: a genuine 3 MB member is refused under --max-member-size 1MB and read by default', () => {
    const members = shapedEvalMembers();
    const i = members.findIndex((m) => m.name.startsWith('samples/'));
    const padding = Array.from({ length: 60_000 }, (_, k) => `item-${k}-${(k * 2654435761) % 1000003}`).join(' ');
    members[i] = { ...members[i]!, data: String(members[i]!.data).replace(/^\{/, `{"standoff_padding": "${padding}", `) };
    const file = join(dir, 'big-member.eval');
    writeFileSync(file, buildZip(members));
    const small = runCli(['ingest', 'inspect', file, '--traces', store, '--dry-run', '--max-member-size', '1MB']);
    expect(small.code).toBe(3);
    expect(small.stderr).toMatch(/more than the 1\.0 MiB allowed/);
    const ok = runCli(['ingest', 'inspect', file, '--traces', store, '--dry-run']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(runCli(['ingest', 'inspect', file, '--max-member-size', 'lots']).code).toBe(2);
  }, 120_000);

  it('a directory that understates a size cannot inflate past it (deflate and zstd)', () => {
    const p = join(dir, 'liar.zip');
    writeFileSync(p, buildZip([
      { name: 'd.json', data: '', raw: { compressed: zeros(8), size: 1000, crc: 0 } },
      { name: 'z.json', data: '', method: 93, raw: { compressed: zstdRawFrame(new Uint8Array(4 * MiB)), size: 1000, crc: 0 } },
    ]));
    const z = ZipReader.open(p);
    try {
      for (const name of ['d.json', 'z.json']) {
        const err = (() => {
          try {
            z.read(z.entry(name)!);
          } catch (e) {
            return e;
          }
        })();
        expect(err, name).toBeInstanceOf(ZipError);
        expect((err as ZipError).problem, name).toBe('corrupt');
      }
    } finally {
      z.close();
    }
  });
});

/**
 * An overlapping-member bomb (issue 22): one local header and ~500 KB of real deflate data (per
 * MiB: 1 MiB of zeros, sync-flushed, then a stored block of 1,000 random bytes, so each member is
 * about 500x its compressed size and under both per-member caps), and 21 directory entries all
 * pointing at it. Every entry alone passes; together they inflated 21 x 250 MiB = 5.5 GB before
 * the archive was refused.
 */
function overlappingZip(copies: number, mibs: number): Buffer {
  const stored = zlib.deflateRawSync(Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 2654435761) >>> 24)), { level: 0, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const data = Buffer.concat([...Array.from({ length: mibs }, () => Buffer.concat([ONE_MIB_OF_ZEROS, stored])), Buffer.from([0x03, 0x00])]);
  const size = mibs * (MiB + 1000);
  const name = Buffer.from('samples/s_epoch_1.json');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Array.from({ length: copies }, (_, k) => {
    const n = Buffer.from(`samples/s${k}_epoch_1.json`);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(0, 42); // every entry: the same local header
    return Buffer.concat([c, n]);
  });
  const cd = Buffer.concat(central);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(copies, 8);
  eocd.writeUInt16LE(copies, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(30 + name.length + data.length, 16);
  return Buffer.concat([local, name, data, cd, eocd]);
}

describe('bombs made of many members', () => {
  it('21 directory entries x 250 MiB sharing one 500 KB stream: refused when opened (overlap), one line, exit 3, store unchanged', () => {
    const zip = overlappingZip(21, 250);
    expect(zip.length).toBeLessThan(600_000);
    const file = join(dir, 'overlap.eval');
    writeFileSync(file, zip);
    // The library refuses at open, before anything is inflated, naming the second entry.
    const err = (() => {
      try {
        ZipReader.open(file);
      } catch (e) {
        return e as ZipError;
      }
    })();
    expect(err).toBeInstanceOf(ZipError);
    expect(err!.problem).toBe('tooLarge');
    expect(err!.member).toBe('samples/s1_epoch_1.json');
    expect(err!.message).toMatch(/^member overlaps member "samples\/s0_epoch_1\.json" \(it starts at byte 0, inside bytes 0-\d+\)/);
    const before = hashTree(store);
    const r = runCli(['ingest', 'inspect', file, '--traces', store]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^standoff: .*overlap\.eval: samples\/s1_epoch_1\.json: member overlaps member .*\(a zip bomb\?\)$/m);
    expect(hashTree(store)).toBe(before);
    // The same data in one entry is an ordinary (large) member: nothing overlaps, the caps pass.
    const one = join(dir, 'one.zip');
    writeFileSync(one, overlappingZip(1, 250));
    const z = ZipReader.open(one);
    expect(z.entries).toHaveLength(1);
    z.close();
  }, 120_000);

  it('many small members under the per-member ratio floor still may not add up past maxRatio x the file size', () => {
    const p = join(dir, 'many-small.zip');
    writeFileSync(p, buildZip(Array.from({ length: 200 }, (_, k) => ({ name: `m${k}.json`, data: '', raw: { compressed: zeros(1), size: MiB, crc: 0 } }))));
    expect(() => ZipReader.open(p, { maxMemberBytes: 256 * MiB, maxRatio: 1000 }).close()).not.toThrow();
    let err: ZipError | null = null;
    try {
      ZipReader.open(p, { maxMemberBytes: 256 * MiB, maxRatio: 100 });
    } catch (e) {
      err = e as ZipError;
    }
    expect(err).toBeInstanceOf(ZipError);
    expect(err!.problem).toBe('tooLarge');
    expect(err!.message).toMatch(/^the archive's 200 members inflate to 200 MiB, more than 100 times its 0\.2 MiB \(a zip bomb\?\)/);
  });
});

