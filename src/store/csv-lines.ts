/**
 * The CSV byte scan's fast-path test and line count in WebAssembly (csv-lines.wat, 128-bit SIMD):
 * one pass over a chunk for what took three `indexOf` passes (quote, carriage return, blank line)
 * and one `indexOf` call per line (1e7 lines: ~0.38 s of CPU). Each counter owns its memory and
 * read buffer, so scans never share one.
 */
import { CSV_LINES_WASM_BASE64 } from './csv-lines-wasm.ts';

/** Bytes of the read buffer (1 MiB, the scan's chunk). */
export const LINE_BUFFER_BYTES = 1 << 20;
const PAGE = 65536;

let compiled: WebAssembly.Module | null = null;

/** A read buffer in WebAssembly memory, and the fast-path test of a part of it. */
export interface LineCounter {
  /** The read buffer: read chunks into it (the memory never grows, so it stays valid). */
  readonly buffer: Buffer;
  /**
   * -1 when `part` (which must lie in `buffer`; see `holds`) holds a quote, a carriage return or two
   * line feeds in a row, else its line feeds.
   */
  plainLines(part: Uint8Array): number;
  /** `part` lies in `buffer`'s memory. */
  holds(part: Uint8Array): boolean;
}

export function createLineCounter(): LineCounter {
  compiled ??= new WebAssembly.Module(Buffer.from(CSV_LINES_WASM_BASE64, 'base64'));
  const pages = LINE_BUFFER_BYTES / PAGE;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const instance = new WebAssembly.Instance(compiled, { env: { memory } });
  const lines = instance.exports.lines as (p: number, n: number) => number;
  const buffer = Buffer.from(memory.buffer, 0, LINE_BUFFER_BYTES);
  const holds = (part: Uint8Array) => part.buffer === memory.buffer;
  return {
    buffer,
    holds,
    plainLines(part) {
      if (!holds(part)) throw new Error('createLineCounter: the part is not in the counter\'s buffer');
      return lines(part.byteOffset, part.length);
    },
  };
}
