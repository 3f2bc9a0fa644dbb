/**
 * Result files as pandas, R, European Excel and Google Sheets write them (issue 25, points 1-3),
 * from tests/fixtures/csv/exports/ (made by make.py and make.R there): the dialect is sniffed (or
 * given), a pandas or R row index is skipped with a note, an unnamed or duplicate column is an
 * error naming its position, a wide file melts into long rows; by `ingest csv` and by `--input`.
 * Every refused file leaves the store byte-for-byte as it was.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCsvRun, ingestCsv, IngestError, type IngestCsvOptions } from '../../src/ingest/ingest-csv.ts';
import { ciExactInput, ciBootstrapInput } from '../../src/analysis/ci-input.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

const EX = resolve(import.meta.dirname, '../fixtures/csv/exports');
const ex = (name: string) => join(EX, name);

let dir: string;
let traces: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-exports-'));
  traces = join(dir, 'traces');
  await ingestCsv([ex('pandas-index.csv')], { traces, runId: 'existing' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Per model: [successes, trials] of the fixtures' 0/1 column (make.py: (3q + m) % (4 + m) < 2 + m). */
const COUNTS: Record<string, [number, number]> = { 'gpt-4o': [20, 40], claude: [24, 40], llama: [20, 40] };

function countsOf(scores: { value: number | null }[], episodes: { subject_model: string }[]): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  episodes.forEach((e, i) => {
    const c = (out[e.subject_model] ??= [0, 0]);
    c[0] += scores[i]!.value ?? 0;
    c[1] += 1;
  });
  return out;
}

/** A refused ingest: a data error whose message matches, and the store unchanged. */
async function refused(files: string[], opts: Partial<IngestCsvOptions>, message: RegExp): Promise<void> {
  const before = hashTree(traces);
  const err = await ingestCsv(files, { traces, ...opts }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(IngestError);
  expect((err as Error).message).toMatch(message);
  expect(hashTree(traces)).toBe(before);
}

describe('index columns (pandas to_csv, R write.csv)', () => {
  it("pandas' unnamed 0..n-1 first column is skipped with a note, never a scorer", async () => {
    const { bundle, summary } = await buildCsvRun([ex('pandas-index.csv')], { traces });
    const f = summary.files[0]!;
    expect(f.indexColumn).toBe('pandas');
    expect(f.notes).toEqual(["column 1 (unnamed, 0..n-1) skipped as pandas' row index"]);
    expect(new Set(bundle.scores!.map((s) => s.scorer))).toEqual(new Set(['correct']));
    expect(bundle.scores).toHaveLength(120);
    expect(countsOf(bundle.scores!, bundle.episodes!)).toEqual(COUNTS);
    expect(f.ignoredColumns).toEqual([]);
    expect(bundle.run.notes).toContain("pandas-index.csv: column 1 (unnamed, 0..n-1) skipped as pandas' row index");
  });

  it("R's quoted \"\" first column holding 1..n is skipped as row names", async () => {
    const { bundle, summary } = await buildCsvRun([ex('r-write-csv.csv')], { traces, flags: { item: 'question_id' } });
    expect(summary.files[0]!.indexColumn).toBe('R');
    expect(countsOf(bundle.scores!, bundle.episodes!)).toEqual(COUNTS);
    expect(bundle.scores!.every((s) => s.scorer === 'score')).toBe(true);
  });

  it('an unnamed column that is not a 0..n-1 / 1..n first column is an error naming its position', async () => {
    const mid = join(dir, 'mid.csv');
    writeFileSync(mid, 'model,,sample_id,correct\nm,x,q1,1\nm,y,q2,0\n');
    await refused([mid], {}, /mid\.csv: line 1, field "column 2": column 2 of the header has no name/);
    const notIndex = join(dir, 'not-index.csv');
    writeFileSync(notIndex, ',model,sample_id,correct\n5,m,q1,1\n7,m,q2,0\n');
    await refused([notIndex], {}, /column 1 of the header has no name; name it, or write the file without it \(pandas: to_csv\(index=False\)/);
    const dup = join(dir, 'dup.csv');
    writeFileSync(dup, 'model,sample_id,correct,correct\nm,q1,1,0\n');
    await refused([dup], {}, /field "correct": column name appears twice in the header \(columns 3 and 4\)/);
  });
});

describe('dialects', () => {
  it('a semicolon file with a BOM and CRLF (European Excel) is sniffed, and the summary names the dialect', async () => {
    const { bundle, summary } = await buildCsvRun([ex('excel-semicolon-bom.csv')], { traces, flags: { item: 'question_id' } });
    expect(summary.files[0]!.dialect).toBe(`delimiter ';' (semicolon, detected), quote '"', BOM, CRLF`);
    expect(countsOf(bundle.scores!, bundle.episodes!)).toEqual(COUNTS);
    // The decimal-comma column is kept as text in the metadata (not read as a number).
    expect(JSON.parse(bundle.episodes![1]!.metadata!)).toEqual({ quality: '0,375' });
  });

  it('tab and pipe files are sniffed; --delimiter overrides', async () => {
    for (const [d, name] of [['\t', 'tab (detected)'], ['|', "'|' (pipe, detected)"]] as const) {
      const f = join(dir, `d${name.length}.csv`);
      writeFileSync(f, ['model', 'sample_id', 'correct'].join(d) + '\n' + ['m', 'q1', '1'].join(d) + '\n' + ['m', 'q2', '0'].join(d) + '\n');
      const { summary, bundle } = await buildCsvRun([f], { traces });
      expect(summary.files[0]!.dialect).toBe(`delimiter ${name}, quote '"', LF`);
      expect(bundle.scores!.map((s) => s.value)).toEqual([1, 0]);
      const given = await buildCsvRun([f], { traces, delimiter: d });
      expect(given.summary.files[0]!.dialect).toContain('given');
    }
  });

  it('a header that does not split is an error naming the delimiter tried and the likely one', async () => {
    await refused([ex('excel-semicolon-bom.csv')], { delimiter: ',', flags: { item: 'question_id' } }, /line 1: the header does not split on ',' \(comma\) \(--delimiter\): it is one column "model;question_id;score;quality"; it looks ';' \(semicolon\)-separated: pass --delimiter ';'/);
  });

  it('a missing required column lists the header and the flags', async () => {
    await refused([ex('excel-semicolon-bom.csv')], {}, /required column missing: recognised names: scenario_id, scenario, sample_id, id; the header has "model", "question_id", "score", "quality"; name the column with --item COLUMN \(flags: --subject, --item, --epoch, --scores, --delimiter; or --map MAP\.json\)/);
  });

  it('--input reads the same shapes', async () => {
    for (const [file, value] of [['excel-semicolon-bom.csv', 'score'], ['r-write-csv.csv', 'score'], ['pandas-index.csv', 'correct']]) {
      const r = await ciExactInput(ex(file), { value, by: ['model'] });
      expect(Object.fromEntries(r.map((x) => [x.group!.model, [x.successes, x.trials]]))).toEqual(COUNTS);
    }
    await expect(ciExactInput(ex('excel-semicolon-bom.csv'), { value: 'score', by: ['model'], delimiter: '|' })).rejects.toThrow(/does not split on '\|' \(pipe\).*pass --delimiter ';'/);
  });
});

describe("Python's csv module: a header cell with a line feed, CRLF records (issue 22.2)", () => {
  it('ingests every row, by ingest csv and by --input', async () => {
    const { bundle } = await buildCsvRun([ex('python-header-newline.csv')], { traces });
    expect(bundle.episodes).toHaveLength(6);
    expect(JSON.parse(bundle.episodes![0]!.metadata!)).toEqual({ 'grader\nnote': 'ok' });
    const r = await ciExactInput(ex('python-header-newline.csv'), { value: 'correct', by: ['model'] });
    expect(r.map((x) => [x.group!.model, x.trials])).toEqual([['gpt-4o', 6]]);
  });
});

describe('wide files (Google Sheets: one column per model, a header with spaces)', () => {
  it("ingest csv --wide --subjects-from-columns '*' melts one column per model into long rows", async () => {
    const { bundle, summary } = await buildCsvRun([ex('sheets-wide.csv')], { traces, flags: { item: 'Question ID' }, wide: { subjects: '*', scorer: 'correct' } });
    const byName = { 'GPT-4o': 'gpt-4o', 'Claude 3.5 Sonnet': 'claude', 'Llama 3 70B': 'llama' } as Record<string, string>;
    const got = countsOf(bundle.scores!, bundle.episodes!);
    expect(Object.fromEntries(Object.entries(got).map(([k, v]) => [byName[k], v]))).toEqual(COUNTS);
    expect(bundle.episodes!.filter((e) => e.scenario_id === 'q07').map((e) => e.subject_model)).toEqual(['GPT-4o', 'Claude 3.5 Sonnet', 'Llama 3 70B']);
    expect(new Set(bundle.scores!.map((s) => s.scorer))).toEqual(new Set(['correct']));
    expect(summary.files[0]!.rows).toBe(40);
    expect(JSON.parse(bundle.run.config!)).toEqual({ table: 'episodes', wide: { item: 'Question ID', subjects: ['GPT-4o', 'Claude 3.5 Sonnet', 'Llama 3 70B'], scorer: 'correct' } });
    const listed = await buildCsvRun([ex('sheets-wide.csv')], { traces, flags: { item: 'Question ID' }, wide: { subjects: ['GPT-4o', 'Llama 3 70B'] } });
    expect(new Set(listed.bundle.episodes!.map((e) => e.subject_model))).toEqual(new Set(['GPT-4o', 'Llama 3 70B']));
    expect(listed.bundle.scores!.every((s) => s.scorer === 'score')).toBe(true);
  });

  it('a bad value in a wide file names its line and column; an unknown subject column is refused', async () => {
    const f = join(dir, 'wide-bad.csv');
    writeFileSync(f, 'item,a,b\nq1,1,0\nq2,1,maybe\n');
    await refused([f], { flags: { item: 'item' }, wide: { subjects: '*' } }, /wide-bad\.csv: line 3, field "b"/);
    await refused([ex('sheets-wide.csv')], { flags: { item: 'Question ID' }, wide: { subjects: ['GPT-5'] } }, /--subjects-from-columns: column "GPT-5" is not in the header/);
  });

  it('--input --wide melts into subject and value', async () => {
    const r = (await ciBootstrapInput({ input: ex('sheets-wide.csv'), wide: true, subjectsFromColumns: ['*'], value: 'value', by: ['subject'], cluster: 'Question ID', resamples: 200, seed: 1, method: 'percentile', level: 0.95 })) as unknown as { group: { subject: string }; n: number; estimate: number }[];
    expect(r.map((x) => [x.group.subject, x.n, x.estimate])).toEqual([
      ['Claude 3.5 Sonnet', 40, 0.6],
      ['GPT-4o', 40, 0.5],
      ['Llama 3 70B', 40, 0.5],
    ]);
  });
});

describe('the CLI', () => {
  it('prints the dialect and the index note, and takes --delimiter / --wide', () => {
    const store = join(dir, 'cli');
    const r = runCli(['ingest', 'csv', ex('pandas-index.csv'), '--traces', store, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`read as delimiter ',' (comma, detected), quote '"', LF`);
    expect(r.stdout).toContain("column 1 (unnamed, 0..n-1) skipped as pandas' row index");
    const w = runCli(['ingest', 'csv', ex('sheets-wide.csv'), '--traces', store, '--wide', '--item', 'Question ID', '--subjects-from-columns', '*', '--scorer', 'correct', '--delimiter', 'comma']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/episodes 120, scores 120/);
    const bad = runCli(['ingest', 'csv', ex('pandas-index.csv'), '--traces', store, '--delimiter', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--delimiter must be one of/);
  });
});
