/**
 * Issue 22 (LOW), lm-eval: a 700 MB samples line crashed with `RangeError: Invalid string length`
 * and a symlink loop in the directory with ELOOP (both exit 1). Now a line past the cap
 * (`STANDOFF_MAX_LINE_BYTES`, default 256 MiB; lowered here to 1 MB so the test writes 3 MB, not
 * 700 MB) is a data error naming the file and line, refused while it streams; the directory walk
 * follows each directory once (a cycle ends) and an unresolvable samples or results file is a data
 * error naming it. Each: one line, exit 3, store unchanged.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { cpSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { hashTree, sampleBundle } from '../helpers/fixtures.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const FIX = join(ROOT, 'tests', 'fixtures', 'lm-eval', 'gsm8k');
const TS = '2025-08-07T11-42-40.066002';
let dir: string;
let store: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-lmeval-limits-'));
  store = join(dir, 'traces');
  await writeRun(store, sampleBundle('kept', 2));
});

/** A copy of one gsm8k evaluation (results + samples) in its own directory. */
function evaluation(name: string): string {
  const to = join(dir, name);
  for (const f of readdirSync(FIX).filter((n) => n.includes(TS))) cpSync(join(FIX, f), join(to, f));
  return to;
}

function expectOneLine(args: string[], env: Record<string, string> = {}): string {
  const before = hashTree(store);
  const r = runCli([...args, '--traces', store], { env });
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(hashTree(store)).toBe(before);
  return r.stderr.trim();
}

describe('lm-eval limits', () => {
  it('a samples line past the cap: one line naming file and line, exit 3; under the default cap it is not refused for its length', () => {
    const d = evaluation('long');
    const samples = join(d, `samples_gsm8k_${TS}.jsonl`);
    const lines = readFileSync(samples, 'utf8').split('\n');
    lines.splice(2, 0, `{"doc_id": 999, "x": "${'a'.repeat(3_000_000)}"}`);
    writeFileSync(samples, lines.join('\n'));
    const msg = expectOneLine(['ingest', 'lm-eval', d], { STANDOFF_MAX_LINE_BYTES: '1000000' });
    expect(msg).toBe(`standoff: ${samples}: line 3: longer than 1000000 bytes (STANDOFF_MAX_LINE_BYTES sets the cap; default 268435456): not one sample per line?`);
    // Under the default cap the long line is read (and refused for what it is, not for its length).
    const r = runCli(['ingest', 'lm-eval', d, '--traces', store, '--dry-run']);
    expect(r.stderr).not.toMatch(/longer than/);
  }, 120_000);

  it('symlink cycles in the directory end (each directory once); a looping samples file is a data error naming it', () => {
    const d = evaluation('loops');
    symlinkSync('..', join(d, 'up'));
    symlinkSync('.', join(d, 'here'));
    symlinkSync('loop', join(d, 'loop'));
    const ok = runCli(['ingest', 'lm-eval', d, '--traces', store, '--dry-run']);
    expect(ok.code, ok.stderr).toBe(0);
    symlinkSync(`samples_gsm8k_${TS}.jsonl.x`, join(d, `samples_gsm8k_${TS}.jsonl.x`));
    symlinkSync('self.jsonl', join(d, 'self.jsonl'));
    const msg = expectOneLine(['ingest', 'lm-eval', d]);
    expect(msg).toBe(`standoff: ${join(d, 'self.jsonl')}: cannot read the file: symlink loop (ELOOP)`);
  }, 120_000);

  it('JSON nested 1e5 deep in a samples line or the results file: one line naming file (and line), exit 3', () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const d = evaluation('deep-line');
    const samples = join(d, `samples_gsm8k_${TS}.jsonl`);
    const lines = readFileSync(samples, 'utf8').split('\n');
    lines[0] = lines[0]!.replace(/^\{/, `{"deep": ${deep}, `);
    writeFileSync(samples, lines.join('\n'));
    expect(expectOneLine(['ingest', 'lm-eval', d])).toBe(`standoff: ${samples}: line 1: JSON nested more than 1000 levels deep (a damaged or hostile log)`);
    const r = evaluation('deep-results');
    const results = join(r, `gsm8k-phi-3-mini_${TS}.json`);
    writeFileSync(results, readFileSync(results, 'utf8').replace(/^\{/, `{"deep": ${deep}, `));
    expect(expectOneLine(['ingest', 'lm-eval', r])).toBe(`standoff: ${results}: JSON nested more than 1000 levels deep (a damaged or hostile log)`);
  }, 120_000);
});
