/**
 * The CSV byte scan's SIMD line count (src/store/csv-lines.wat, csv-lines.ts):
 * 1. The committed bytes (csv-lines-wasm.ts) are what wabt assembles csv-lines.wat to.
 * 2. The kernel says -1 exactly when `indexOf` finds a quote, a carriage return or two line feeds
 *    in a row, and otherwise counts exactly the line feeds, for every length mod 16, at every
 *    offset, across its 255-block rounds (no lane overflows).
 * 3. A scanner fed through a counter's buffer gives the same scan as one without it (records,
 *    lines, problems), including a line longer than the field limit that starts in an earlier chunk.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assembleWat, CSV_LINES_WAT } from '../../scripts/build-wasm.mjs';
import { CSV_LINES_WASM_BASE64 } from '../../src/store/csv-lines-wasm.ts';
import { createLineCounter, LINE_BUFFER_BYTES } from '../../src/store/csv-lines.ts';
import { CsvScanner, MAX_FIELD_BYTES } from '../../src/store/csv-scan.ts';

/** The kernel's answer, byte by byte. */
function jsLines(b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    if (b[i] === 34 || b[i] === 13 || (b[i] === 10 && b[i + 1] === 10 && i + 1 < b.length)) return -1;
    if (b[i] === 10) n++;
  }
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

  it('tests and counts as a byte-by-byte walk does, at every length and offset', () => {
    const c = createLineCounter();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const fill = (n: number, special: number[]) => {
      for (let i = 0; i < n; i++) c.buffer[i] = rand() < 0.15 ? 10 : 65 + Math.floor(rand() * 26);
      for (const at of special) c.buffer[at] = rand() < 0.5 ? 34 : 13;
    };
    let plain = 0;
    let refused = 0;
    for (let round = 0; round < 40; round++) {
      fill(600, round % 3 === 0 ? [Math.floor(rand() * 600)] : []);
      for (let off = 0; off < 17; off++) {
        for (let len = 0; len < 80; len += 1 + (round % 3)) {
          const part = c.buffer.subarray(off, off + len);
          const want = jsLines(part);
          expect(c.plainLines(part), `round ${round} offset ${off} length ${len}`).toBe(want);
          if (want < 0) refused++;
          else plain++;
        }
      }
    }
    expect(plain).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
    // Long runs: one line feed per 20 bytes (never two in a row), then one blank line or quote at the end.
    for (let i = 0; i < LINE_BUFFER_BYTES; i++) c.buffer[i] = i % 20 === 19 ? 10 : 65;
    expect(c.plainLines(c.buffer)).toBe(Math.floor(LINE_BUFFER_BYTES / 20));
    expect(c.plainLines(c.buffer.subarray(3, LINE_BUFFER_BYTES - 5))).toBe(jsLines(c.buffer.subarray(3, LINE_BUFFER_BYTES - 5)));
    // A line feed after the one at 20k + 19: mid-buffer, and across the last block and the tail.
    for (const at of [400_000, LINE_BUFFER_BYTES - 16]) {
      expect(c.buffer[at - 1]).toBe(10);
      c.buffer[at] = 10;
      expect(c.plainLines(c.buffer), `blank line at ${at}`).toBe(-1);
      c.buffer[at] = 65;
    }
    c.buffer[LINE_BUFFER_BYTES - 1] = 34;
    expect(c.plainLines(c.buffer)).toBe(-1);
    // Every lane full: 255 * 16 line feeds in a row at the start would be blank lines, so alternate.
    for (let i = 0; i < LINE_BUFFER_BYTES; i++) c.buffer[i] = i % 2 === 0 ? 10 : 65;
    expect(c.plainLines(c.buffer)).toBe(LINE_BUFFER_BYTES / 2);
    // A range ending with a line feed at the very end of the memory (as a full chunk does).
    c.buffer[LINE_BUFFER_BYTES - 2] = 65;
    c.buffer[LINE_BUFFER_BYTES - 1] = 10;
    expect(c.plainLines(c.buffer)).toBe(LINE_BUFFER_BYTES / 2);
    expect(c.plainLines(c.buffer.subarray(LINE_BUFFER_BYTES - 1))).toBe(1);
    expect(() => c.plainLines(Buffer.alloc(4))).toThrow(/not in the counter/);
  });

  it('a scan through the counter is the scan without it', () => {
    const rows = ['model,sample_id,epoch,score'];
    for (let i = 0; i < 40_000; i++) rows.push(`sim:m${i % 7},s${i},${1 + (i % 5)},${'CIN'[i % 3]}`);
    const plain = Buffer.from(rows.join('\n') + '\n');
    for (const size of [LINE_BUFFER_BYTES, 65536, 4099, 97]) expect(scan(plain, size, true), `chunks of ${size}`).toEqual(scan(plain, size, false));
    // Quotes, blank lines and CRLF in some chunks: those chunks take the slow path either way.
    const mixed = Buffer.from(rows.map((r, i) => (i % 5000 === 7 ? `${r}\n` : i % 7000 === 3 ? r.replace('s', '"s"') : r)).join('\n') + '\n');
    for (const size of [65536, 4099]) expect(scan(mixed, size, true), `mixed, chunks of ${size}`).toEqual(scan(mixed, size, false));
    const crlf = Buffer.from(rows.join('\r\n') + '\r\n');
    expect(scan(crlf, 65536, true)).toEqual(scan(crlf, 65536, false));
    // A line over the limit that ends in a later chunk: the kernel's path must refuse it too.
    const long = Buffer.from(`a,b\n1,2\n${'x'.repeat(MAX_FIELD_BYTES + 10)},3\n4,5\n6,7\n`);
    const want = scan(long, LINE_BUFFER_BYTES, false);
    expect(want.problems).toEqual([['fieldTooLarge', 3, 0]]);
    for (const size of [LINE_BUFFER_BYTES, 300_000, 65536]) expect(scan(long, size, true), `chunks of ${size}`).toEqual(scan(long, size, false));
  });
});
