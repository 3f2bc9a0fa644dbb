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
