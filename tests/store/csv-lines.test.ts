/**
 * The CSV byte scan's SIMD line count (src/store/csv-lines.wat, csv-lines.ts):
 * 1. The committed bytes (csv-lines-wasm.ts) are what wabt assembles csv-lines.wat to.
 * 2. The kernel counts exactly the line feeds `indexOf` finds, for every length mod 16, at every
 *    offset, across its 255-block rounds (a buffer of nothing but line feeds: no lane overflows).
 * 3. A scanner fed through a counter's buffer gives the same scan as one without it (records,
 *    lines, problems), including a line longer than the field limit that starts in an earlier chunk.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleWat, CSV_LINES_WAT } from '../../scripts/build-wasm.mjs';
import { CSV_LINES_WASM_BASE64 } from '../../src/store/csv-lines-wasm.ts';
import { createLineCounter, LINE_BUFFER_BYTES } from '../../src/store/csv-lines.ts';
import { CsvScanner, MAX_FIELD_BYTES } from '../../src/store/csv-scan.ts';

function jsCount(b: Uint8Array): number {
  let n = 0;
  for (const x of b) if (x === 10) n++;
  return n;
}

/** Scans `bytes` in chunks of `size`, copied into the counter's buffer when `counted`. */
function scan(bytes: Uint8Array, size: number, counted: boolean) {
  const counter = createLineCounter();
  const s = new CsvScanner(counted ? { counter } : {});
  for (let pos = 0; pos < bytes.length; pos += size) {
    const part = bytes.subarray(pos, Math.min(bytes.length, pos + size));
    if (counted) {
      counter.buffer.set(part, 0);
      s.push(counter.buffer.subarray(0, part.length));
    } else s.push(Buffer.from(part));
  }
  s.end();
  const r = s.result();
  return { header: r.header, records: r.records, lines: r.lines.entries(), problems: r.problems.map((p) => [p.code, p.line, p.field]) };
}

describe('CSV line count kernel', () => {
  it('csv-lines-wasm.ts holds exactly the bytes wabt makes from csv-lines.wat', async () => {
    const bytes = await assembleWat(fs.readFileSync(CSV_LINES_WAT, 'utf8'), 'csv-lines.wat');
    expect(Buffer.from(bytes).toString('base64')).toBe(CSV_LINES_WASM_BASE64);
  });

  it('counts the line feeds indexOf finds, at every length and offset', () => {
    const c = createLineCounter();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    for (let i = 0; i < 4096; i++) c.buffer[i] = rand() < 0.2 ? 10 : Math.floor(rand() * 256);
    for (let off = 0; off < 17; off++) {
      for (let len = 0; len < 200; len++) {
        const part = c.buffer.subarray(off, off + len);
        expect(c.count(part)).toBe(jsCount(part));
      }
    }
    for (let i = 0; i < LINE_BUFFER_BYTES; i++) c.buffer[i] = rand() < 0.05 ? 10 : 65;
    expect(c.count(c.buffer)).toBe(jsCount(c.buffer));
    expect(c.count(c.buffer.subarray(3, LINE_BUFFER_BYTES - 5))).toBe(jsCount(c.buffer.subarray(3, LINE_BUFFER_BYTES - 5)));
    c.buffer.fill(10);
    expect(c.count(c.buffer)).toBe(LINE_BUFFER_BYTES);
    expect(() => c.count(Buffer.alloc(4))).toThrow(/not in the counter/);
  });

  it('a scan through the counter is the scan without it', () => {
    const rows = ['model,sample_id,epoch,score'];
    for (let i = 0; i < 40_000; i++) rows.push(`sim:m${i % 7},s${i},${1 + (i % 5)},${'CIN'[i % 3]}`);
    const plain = Buffer.from(rows.join('\n') + '\n');
    for (const size of [LINE_BUFFER_BYTES, 65536, 4099, 97]) expect(scan(plain, size, true), `chunks of ${size}`).toEqual(scan(plain, size, false));
    // A line over the limit that ends in a later chunk: the kernel's path must refuse it too.
    const long = Buffer.from(`a,b\n1,2\n${'x'.repeat(MAX_FIELD_BYTES + 10)},3\n4,5\n6,7\n`);
    const want = scan(long, LINE_BUFFER_BYTES, false);
    expect(want.problems).toEqual([['fieldTooLarge', 3, 0]]);
    for (const size of [LINE_BUFFER_BYTES, 300_000, 65536]) expect(scan(long, size, true), `chunks of ${size}`).toEqual(scan(long, size, false));
  });
});
