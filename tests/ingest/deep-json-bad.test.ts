/**
 * Issue 22 (LOW): an Inspect sample nested 1e5 deep crashed with "Maximum call stack size
 * exceeded" (exit 1) in the attachment walk, and a deep header in the secret stripper. Now every
 * member's nesting is bounded (MAX_JSON_DEPTH, 1000): deeper is a data error naming the file and
 * member (exit 3, one line) and the store is unchanged; 999 levels still ingest. The deep values
 * carry no NaN token, so JSON.parse takes its fast (non-recursive) path and the walk is reached.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_JSON_DEPTH } from '../../src/ingest/inspect/read-eval.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { buildZip, shapedEvalMembers, shapedHeader, shapedSamples } from '../fixtures/inspect/make-logs.ts';
import { hashTree, sampleBundle } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-deep-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('kept', 2));
});

const nested = (depth: number, obj: boolean) => (obj ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth));
const finite = (text: string) => text.replaceAll('-Infinity', '-1').replaceAll('Infinity', '1').replaceAll('NaN', '0');

/** An .eval whose first sample (or header) holds `"DEEP"` replaced by a value nested `depth` deep. */
function deepEval(name: string, place: (sample: Record<string, unknown>, header: Record<string, unknown>) => void, depth: number, obj = true): string {
  const samples = shapedSamples();
  const header = shapedHeader();
  place(samples[0]!, header);
  const members = shapedEvalMembers({ samples }).map((m) => (m.name === 'header.json' ? { ...m, data: JSON.stringify(header) } : m));
  for (const m of members) if (typeof m.data === 'string') m.data = finite(m.data).replace('"DEEP"', nested(depth, obj));
  const path = join(dir, name);
  writeFileSync(path, buildZip(members));
  return path;
}

describe('JSON nested too deep', () => {
  const cases: Array<[string, (s: Record<string, unknown>, h: Record<string, unknown>) => void, string]> = [
    ['metadata', (s) => (s.metadata = { d: 'DEEP' }), 'samples/em_act_a_epoch_1.json'],
    ['tool-args', (s) => ((s.messages as Array<Record<string, unknown>>).find((m) => m.tool_calls) as { tool_calls: Array<{ arguments: unknown }> }).tool_calls[0]!.arguments = { d: 'DEEP' }, 'samples/em_act_a_epoch_1.json'],
    ['header', (_s, h) => ((h.eval as Record<string, unknown>).metadata = { d: 'DEEP' }), 'header.json'],
  ];
  for (const [what, place, member] of cases) {
    it(`1e5 levels in the ${what}: one line naming file and member, exit 3, store unchanged`, () => {
      for (const obj of [true, false]) {
        const file = deepEval(`deep-${what}-${obj}.eval`, place, 100_000, obj);
        const before = hashTree(store);
        const r = runCli(['ingest', 'inspect', file, '--traces', store]);
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr.trim()).toBe(`standoff: ${file}: ${member}: JSON nested more than ${MAX_JSON_DEPTH} levels deep (a damaged or hostile log)`);
        expect(hashTree(store)).toBe(before);
      }
    }, 120_000);
  }

  it(`a value nested ${MAX_JSON_DEPTH - 2} deep in metadata (within the bound) ingests`, () => {
    const file = deepEval('deep-ok.eval', (s) => (s.metadata = { d: 'DEEP' }), MAX_JSON_DEPTH - 2);
    const r = runCli(['ingest', 'inspect', file, '--traces', store, '--run-id', 'deep-ok']);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);
});
