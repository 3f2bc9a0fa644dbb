/**
 * Issue 11, point 5: `--input` takes data as people have it. The natural results CSV
 * (tests/helpers/natural-csv.ts, seeded) goes straight into `ci exact|bootstrap|paired` and
 * `agreement` through the public CLI. Every expected interval comes from tests/oracle/input-shapes.json
 * (R binom.test, scipy.stats.bootstrap, numpy, NLTK; see tests/oracle/gen_input_shapes.py), never
 * from the code under test. Also: `--missing`, composite keys, long and wide ratings, Parquet, and
 * `--input` errors in the one-line `file: line N, field "x": ...` form.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.ts';
import { naturalCsv, naturalRows, withMissingCorrect } from '../helpers/natural-csv.ts';
import { createDb, quoteLiteral, withConnection } from '../../src/store/duckdb.ts';

const ORACLE = JSON.parse(readFileSync(join(ROOT, 'tests/oracle/input-shapes.json'), 'utf8'));

let dir: string;
let csv: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-input-shapes-'));
  csv = join(dir, 'results.csv');
  writeFileSync(csv, naturalCsv(naturalRows()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function json(args: string[]): any {
  const r = runCli([...args, '--format', 'json']);
  if (r.code !== 0) throw new Error(`standoff ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const R = ['--resamples', '10000', '--seed', '7'];
/** Monte Carlo tolerance for a percentile endpoint (10,000 resamples here against scipy's 200,000). */
const MC = 0.02;

it('the oracle was computed on this very file', () => {
  expect(createHash('sha256').update(readFileSync(csv)).digest('hex')).toBe(ORACLE.csv_sha256);
});

describe('ci exact --input --value --by', { timeout: 240_000 }, () => {
  it('counts a 0/1 column per group: Clopper-Pearson as R binom.test', () => {
    const got = json(['ci', 'exact', '--input', csv, '--value', 'correct', '--by', 'model']);
    expect(got.map((g: any) => g.group.model)).toEqual(Object.keys(ORACLE.exact_by_model));
    for (const g of got) {
      const o = ORACLE.exact_by_model[g.group.model];
      expect([g.successes, g.trials]).toEqual([o.successes, o.trials]);
      expect(g.lower).toBeCloseTo(o.ci[0], 9);
      expect(g.upper).toBeCloseTo(o.ci[1], 9);
    }
  });

  it('an empty cell is an error naming --missing; --missing drop skips its row', () => {
    const holes = join(dir, 'holes.csv');
    writeFileSync(holes, withMissingCorrect(readFileSync(csv, 'utf8')));
    const r = runCli(['ci', 'exact', '--input', holes, '--value', 'correct', '--by', 'model']);
    expect(r.code).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(`standoff: ${holes}: line 2, field "correct": empty value (pass --missing drop to skip the rows that have one)`);
    expect(lines.at(-1)).toMatch(new RegExp(`holes\\.csv: ${ORACLE.missing_dropped} errors; first: line 2, field "correct": empty value`));
    const got = json(['ci', 'exact', '--input', holes, '--value', 'correct', '--by', 'model', '--missing', 'drop']);
    for (const g of got) {
      const o = ORACLE.exact_missing_drop[g.group.model];
      expect([g.successes, g.trials]).toEqual([o.successes, o.trials]);
      expect(g.lower).toBeCloseTo(o.ci[0], 9);
      expect(g.upper).toBeCloseTo(o.ci[1], 9);
    }
  });

  it('reads Parquet the same way (rows named instead of lines)', async () => {
    const pq = join(dir, 'results.parquet');
    const db = await createDb({ threads: 1 });
    await withConnection(db, (c) => c.run(`COPY (FROM read_csv(${quoteLiteral(csv)})) TO ${quoteLiteral(pq)} (FORMAT parquet)`));
    db.closeSync();
    expect(json(['ci', 'exact', '--input', pq, '--value', 'correct', '--by', 'model'])).toEqual(json(['ci', 'exact', '--input', csv, '--value', 'correct', '--by', 'model']));
    const r = runCli(['ci', 'exact', '--input', pq, '--value', 'quality', '--by', 'model']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/results\.parquet: row 1, field "quality": expected 0 or 1 \(or true\/false\), got "4"/);
  });
});

describe('ci bootstrap --input --by', { timeout: 240_000 }, () => {
  it('one interval per group: mean and CLT SE as numpy, percentile interval as scipy.stats.bootstrap', () => {
    const got = json(['ci', 'bootstrap', '--input', csv, '--value', 'quality', '--by', 'model', ...R]);
    expect(got.map((g: any) => g.group.model)).toEqual(Object.keys(ORACLE.bootstrap_by_model));
    for (const g of got) {
      const o = ORACLE.bootstrap_by_model[g.group.model];
      expect(g.n).toBe(o.n);
      expect(g.estimate).toBeCloseTo(o.mean, 12);
      expect(g.se_clt).toBeCloseTo(o.se_ddof1, 12);
      expect(Math.abs(g.lower - o.percentile[0])).toBeLessThan(MC);
      expect(Math.abs(g.upper - o.percentile[1])).toBeLessThan(MC);
    }
  });
});

describe('ci paired --input --item with a composite key', { timeout: 240_000 }, () => {
  it('pairs on sample_id,epoch: mean difference, paired SE and p-value as numpy/scipy, interval as scipy.stats.bootstrap', () => {
    const g = json(['ci', 'paired', '--input', csv, '--item', 'sample_id,epoch', '--arm', 'model', '--value', 'correct', '--a', 'acme-large', '--b', 'acme-small', ...R]);
    const o = ORACLE.paired;
    expect(g.n).toBe(o.n);
    expect(g.dropped_unpaired).toBe(0);
    expect(g.mean_diff).toBeCloseTo(o.mean_diff, 12);
    expect(g.se_paired).toBeCloseTo(o.se_paired, 12);
    expect(g.p_value).toBeCloseTo(o.p_value, 9);
    expect(Math.abs(g.lower - o.percentile[0])).toBeLessThan(MC);
    expect(Math.abs(g.upper - o.percentile[1])).toBeLessThan(MC);
  });

  it('--by gives one comparison per group', () => {
    const got = json(['ci', 'paired', '--input', csv, '--item', 'sample_id', '--by', 'epoch', '--arm', 'model', '--value', 'correct', '--a', 'acme-large', '--b', 'acme-small', ...R]);
    expect(got.map((g: any) => g.group.epoch)).toEqual(['1', '2']);
    for (const g of got) {
      const o = ORACLE.paired_by_epoch[g.group.epoch];
      expect(g.n).toBe(o.n);
      expect(g.mean_diff).toBeCloseTo(o.mean_diff, 12);
      expect(g.se_paired).toBeCloseTo(o.se_paired, 12);
      expect(Math.abs(g.lower - o.percentile[0])).toBeLessThan(MC);
      expect(Math.abs(g.upper - o.percentile[1])).toBeLessThan(MC);
    }
  });

  it('a one-column item over several epochs is an error that says to add the epoch', () => {
    const r = runCli(['ci', 'paired', '--input', csv, '--item', 'sample_id', '--arm', 'model', '--value', 'correct', '--a', 'acme-large', '--b', 'acme-small']);
    expect(r.code).toBe(3);
    expect(r.stderr.trim()).toBe(`standoff: ${csv}: line 3: item "q000" appears twice for arm "acme-large" (an item over several epochs? pass --item COL,epoch)`);
  });
});

describe('agreement --input: long or wide ratings', { timeout: 240_000 }, () => {
  it('wide (--raters, a composite --unit) and long (--unit/--rater/--value) give NLTK\'s interval alpha', () => {
    const wide = json(['agreement', '--input', csv, '--unit', 'sample_id,epoch,model', '--raters', 'judge_a,judge_b,judge_c', '--measure', 'interval', '--resamples', '200']);
    expect(wide.alpha).toBeCloseTo(ORACLE.alpha_interval.alpha, 10);
    // The same ratings long, under other column names, one row per rating (empty judge cells left out).
    const long = join(dir, 'long.csv');
    const lines = ['item,grader,grade'];
    for (const x of naturalRows()) x.judges.forEach((v, k) => v !== null && lines.push(`${x.sample_id}/${x.epoch}/${x.model},judge_${'abc'[k]},${v}`));
    writeFileSync(long, lines.join('\n') + '\n');
    const got = json(['agreement', '--input', long, '--unit', 'item', '--rater', 'grader', '--value', 'grade', '--measure', 'interval', '--resamples', '200']);
    expect(got.alpha).toBeCloseTo(ORACLE.alpha_interval.alpha, 10);
    expect([got.units, got.raters, got.pairable_values]).toEqual([wide.units, wide.raters, wide.pairable_values]);
  });

  it('--level is the confidence level only; the measurement level is --measure', () => {
    const r = runCli(['agreement', '--input', csv, '--raters', 'judge_a,judge_b', '--level', 'ordinal']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--level is the confidence level \(e\.g\. 0\.95\); for the measurement level use --measure ordinal/);
    const g = json(['agreement', '--input', csv, '--raters', 'judge_a,judge_b', '--measure', 'ordinal', '--level', '0.9', '--resamples', '200']);
    expect([g.level, g.measurement]).toEqual([0.9, 'ordinal']);
  });
});

describe('--input errors are one line per problem in the ingest format; the sniffer never speaks', { timeout: 240_000 }, () => {
  const bad = (name: string, body: string | Buffer, args: string[], want: RegExp) => {
    const f = join(dir, name);
    writeFileSync(f, body);
    const r = runCli(['ci', 'bootstrap', '--input', f, '--value', 'value', ...args]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(want);
    expect(r.stderr).not.toMatch(/sniff|Possible fixes|state machine|DuckDB/i);
    for (const line of r.stderr.trim().split('\n')) expect(line.length).toBeLessThan(300);
  };
  it('a ragged row', () => bad('ragged.csv', 'item,value\na,1\nb\nc,2\n', [], /ragged\.csv: line 3, field "value": expected 2 fields \(as in the header\), found 1/));
  it('a carriage return alone', () => bad('cr.csv', 'item,value\na,1\rb,2\n', [], /cr\.csv: line 2, field "value": carriage return not followed by a line feed/));
  it('a stray quote', () => bad('quote.csv', 'item,value\na"x,1\nb,2\n', [], /quote\.csv: line 2, field "item": quote inside an unquoted field/));
  it('an unterminated quote', () => bad('open.csv', 'item,value\n"a,1\nb,2\n', [], /open\.csv: line 2, field "item": unterminated quoted field/));
  it('text in a number column', () => bad('text.csv', 'item,value\na,1\nb,x\n', [], /text\.csv: line 3, field "value": expected a number, got "x"/));
  it('non-UTF-8 bytes', () => bad('latin1.csv', Buffer.concat([Buffer.from('item,value\na,1\n'), Buffer.from([0xe9]), Buffer.from(',2\n')]), [], /latin1\.csv: line 3, field "item": invalid UTF-8 byte 0xE9/));
  it('a column that is not in the file names the flag', () => bad('ok.csv', 'item,value\na,1\nb,2\n', ['--cluster', 'nope'], /ok\.csv: column "nope" \(--cluster\) does not exist \(columns: item, value\)/));
});
