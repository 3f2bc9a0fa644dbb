/**
 * Bad lm-eval inputs: each gives a one-line data error naming the file and line or field (exit 3),
 * several are reported together, nothing is written across all the files of the ingest, and the
 * trace store is left byte-for-byte unchanged (hashed before and after). The inputs are the real
 * harness files of tests/fixtures/lm-eval (see its README) copied and broken in one place each.
 */
import { describe, it, expect, beforeAll, beforeEach } from 'vitest';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestLmEval } from '../../src/ingest/ingest-lm-eval.ts';
import { IngestProblems } from '../../src/ingest/ingest-inspect.ts';
import { StandoffError } from '../../src/errors.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const FIX = join(ROOT, 'tests', 'fixtures', 'lm-eval');
const PHI_TS = '2025-08-07T11-42-40.066002';
const NEG_TS = '2026-07-08T18-15-33.115417';

let seeded: string; // a store holding one good run, copied per test
let dir: string;
let store: string;

beforeAll(async () => {
  seeded = join(mkdtempSync(join(tmpdir(), 'standoff-lmeval-seed-')), 'traces');
  await ingestLmEval(join(FIX, 'gsm8k', `gsm8k-phi-3-mini_2025-08-11T10-35-08.100989.json`), { traces: seeded, runId: 'seed-gpt2' });
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-lmeval-bad-'));
  store = join(dir, 'traces');
  cpSync(seeded, store, { recursive: true });
});

/** A copy of a fixture directory to break. */
function copy(name: string): string {
  const to = join(dir, 'in', name);
  cpSync(join(FIX, name), to, { recursive: true });
  return to;
}

/** Runs the ingest expecting a data error (exit 3, one line per problem) and checks the store is byte-for-byte unchanged. */
async function expectDataError(path: string): Promise<{ err: StandoffError; lines: string[] }> {
  const before = hashTree(store);
  const lines: string[] = [];
  const err = await ingestLmEval(path, { traces: store, report: (l) => lines.push(l) }).then(
    () => {
      throw new Error('expected the ingest to fail');
    },
    (e: unknown) => e as StandoffError,
  );
  expect(err).toBeInstanceOf(StandoffError);
  expect(err.kind).toBe('data');
  expect(err.exitCode).toBe(3);
  expect(err.message).not.toContain('\n');
  expect(hashTree(store)).toBe(before);
  return { err, lines };
}

/** Replaces line `n` (1-based) of a file. */
function replaceLine(file: string, n: number, text: string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[n - 1] = text;
  writeFileSync(file, lines.join('\n'));
}

describe('bad lm-eval inputs', () => {
  it('a directory without results files', async () => {
    const empty = join(dir, 'in', 'nothing-here');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, 'notes.txt'), 'no lm-eval output\n');
    const { err } = await expectDataError(empty);
    expect(err.code).toBe('ingest.noResults');
    expect(err.message).toBe(`${empty}: no lm-eval results file (results_<date>.json) in this directory or below it`);
  });

  it('a path that does not exist', async () => {
    const { err } = await expectDataError(join(dir, 'nope'));
    expect(err.code).toBe('ingest.notFound');
  });

  it('a malformed JSON line names the file and line', async () => {
    const d = copy('gsm8k');
    const file = join(d, `samples_gsm8k_${PHI_TS}.jsonl`);
    replaceLine(file, 5, '{"doc_id": 4, "doc": {"question": "truncated');
    const { err } = await expectDataError(d);
    expect(err).toBeInstanceOf(IngestProblems);
    expect(err.code).toBe('ingest.badJson');
    expect(err.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 5: not valid JSON: `));
  });

  it('a samples file whose task is not in the results file', async () => {
    const d = copy('gsm8k');
    renameSync(join(d, `samples_gsm8k_${PHI_TS}.jsonl`), join(d, `samples_gsm8k_cot_${PHI_TS}.jsonl`));
    const { err, lines } = await expectDataError(d);
    // two problems: the stray samples file, and the task left without samples
    expect(lines).toEqual([
      `${join(d, `samples_gsm8k_cot_${PHI_TS}.jsonl`)}: task "gsm8k_cot" is not a task of ${join(d, `gsm8k-phi-3-mini_${PHI_TS}.json`)} (its tasks: gsm8k)`,
      `${join(d, `gsm8k-phi-3-mini_${PHI_TS}.json`)}: task "gsm8k" has no samples file (samples_gsm8k_${PHI_TS}.jsonl; run lm_eval with --log_samples)`,
    ]);
    expect(err.code).toBe('ingest.unknownTask');
  });

  it('a duplicated doc id (the same document and filter twice) names both lines', async () => {
    const d = copy('gsm8k');
    const file = join(d, `samples_gsm8k_${PHI_TS}.jsonl`);
    appendFileSync(file, readFileSync(file, 'utf8').split('\n')[2]! + '\n');
    const { err } = await expectDataError(d);
    expect(err.code).toBe('ingest.duplicateDoc');
    expect(err.message).toBe(`${file}: line 21: doc_id 2 with filter "strict-match" also on line 3: a duplicated doc_id`);
  });

  it('a duplicated doc id in the pre-0.4.4 format (no "filter" on the lines)', async () => {
    const d = copy('asdiv-0.4.3');
    const file = join(d, 'meta-llama__Meta-Llama-3-8B-Instruct', 'samples_asdiv_2024-08-21T03-44-09.494230.jsonl');
    appendFileSync(file, readFileSync(file, 'utf8').split('\n')[0]! + '\n');
    const { err } = await expectDataError(d);
    expect(err.message).toBe(`${file}: line 13: doc_id 0 appears 2 times, but the task has 1 filter (none): a duplicated doc_id`);
  });

  it('a line without doc_id, and a metric listed in "metrics" but missing, name the field', async () => {
    const d = copy('gsm8k');
    const file = join(d, `samples_gsm8k_${PHI_TS}.jsonl`);
    const lines = readFileSync(file, 'utf8').split('\n');
    const l2 = JSON.parse(lines[1]!);
    delete l2.doc_id;
    const l4 = JSON.parse(lines[3]!);
    delete l4.exact_match;
    replaceLine(file, 2, JSON.stringify(l2));
    replaceLine(file, 4, JSON.stringify(l4));
    const { err, lines: reported } = await expectDataError(d);
    expect(reported).toEqual([`${file}: line 2: field "doc_id": missing`, `${file}: line 4: field "exact_match": listed in "metrics" but missing`]);
    expect(err.message).toMatch(/^2 problems in 1 input file; nothing was written; first: .*line 2: field "doc_id": missing$/);
  });

  it('a bad results file names the file and field', async () => {
    const d = copy('gsm8k');
    writeFileSync(join(d, `gsm8k-phi-3-mini_${PHI_TS}.json`), JSON.stringify({ results: { gsm8k: 0.5 } }));
    const { err } = await expectDataError(d);
    expect(err.message).toContain(`gsm8k-phi-3-mini_${PHI_TS}.json: field "results.gsm8k": not an object`);
  });

  it('all or nothing: a good task next to a bad one writes neither', async () => {
    const d = copy('negotiationtom');
    const file = join(d, 'Qwen__Qwen3-8B', `samples_negotiationtom_intention_${NEG_TS}.jsonl`);
    replaceLine(file, 20, '[1, 2, 3]');
    const { err } = await expectDataError(d);
    expect(err.message).toBe(`${file}: line 20: not a JSON object`);
  });

  it('a samples file with no results file of its evaluation', async () => {
    const d = copy('gsm8k');
    rmSync(join(d, `gsm8k-phi-3-mini_${PHI_TS}.json`));
    const { err } = await expectDataError(d);
    expect(err.code).toBe('ingest.orphanSamples');
    expect(err.message).toContain(`samples_gsm8k_${PHI_TS}.jsonl: no results file of this evaluation next to it (expected results_${PHI_TS}.json in the same directory)`);
  });

  it('the CLI: one line on stderr, exit 3, store unchanged; an existing run is refused (exit 4) unless --replace', () => {
    const d = copy('gsm8k');
    replaceLine(join(d, `samples_gsm8k_${PHI_TS}.jsonl`), 7, 'not json');
    const before = hashTree(store);
    const bad = runCli(['ingest', 'lm-eval', d, '--traces', store]);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^standoff: .*samples_gsm8k_2025-08-07T11-42-40\.066002\.jsonl: line 7: not valid JSON/);
    expect(hashTree(store)).toBe(before);

    const gpt2 = join(FIX, 'gsm8k', 'gsm8k-phi-3-mini_2025-08-11T10-35-08.100989.json');
    const again = runCli(['ingest', 'lm-eval', gpt2, '--traces', store, '--run-id', 'seed-gpt2']);
    expect(again.code).toBe(4);
    expect(again.stderr).toBe(`standoff: run "seed-gpt2" already exists in ${store}; pass --replace to overwrite it\n`);
    expect(hashTree(store)).toBe(before);
    const replaced = runCli(['ingest', 'lm-eval', gpt2, '--traces', store, '--run-id', 'seed-gpt2', '--replace']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toMatch(/^wrote run seed-gpt2 \(gsm8k, gpt2, 1 document/);
  });

  it('--run-id that would give two runs the same id is a usage error (exit 2)', () => {
    const d = join(dir, 'in', 'two');
    cpSync(join(FIX, 'gsm8k'), d, { recursive: true });
    const r = runCli(['ingest', 'lm-eval', d, '--traces', store, '--run-id', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('standoff: --run-id x gives two runs the id "x.gsm8k" (the same task in several results files); ingest those results files one at a time\n');
  });
});
