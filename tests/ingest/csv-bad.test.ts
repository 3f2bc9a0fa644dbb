/**
 * Bad CSV input: every problem is a one-line data error (exit 3, code `ingest.<problem>`) naming
 * the file, line and field; all problems are listed in `errors`; the store is byte-for-byte
 * unchanged (every file under it hashed before and after).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IngestError, ingestCsv, type IngestCsvOptions } from '../../src/ingest/ingest-csv.ts';
import { StandoffError } from '../../src/errors.ts';

const FIX = resolve(import.meta.dirname, '../fixtures/csv');
const fx = (name: string) => join(FIX, name);

let dir: string;
let traces: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-csv-bad-'));
  traces = join(dir, 'traces');
  // A store that already holds a run, so "unchanged" means something.
  await ingestCsv([fx('episodes.csv')], { traces, runId: 'existing' });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every file and directory under `root` with the SHA-256 of each file. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return { '<absent>': '' };
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const rel = relative(root, p);
      if (statSync(p).isDirectory()) {
        out[`${rel}/`] = 'dir';
        walk(p);
      } else out[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

interface Expect {
  code: string;
  /** Substrings every listed error must contain, in order (one entry per expected error). */
  errors: string[];
}

/** Runs a failing ingest and checks the error shape and the untouched store. */
async function expectDataError(files: string[], opts: Partial<IngestCsvOptions>, want: Expect): Promise<IngestError> {
  const before = snapshot(traces);
  expect(Object.keys(before).length).toBeGreaterThan(3);
  let caught: unknown;
  try {
    await ingestCsv(files, { traces, ...opts });
  } catch (e) {
    caught = e;
  }
  expect(caught, 'ingest should fail').toBeInstanceOf(IngestError);
  const err = caught as IngestError;
  expect(err).toBeInstanceOf(StandoffError);
  expect(err.kind).toBe('data');
  expect(err.exitCode).toBe(3);
  expect(err.code).toBe(want.code);
  expect(err.message).not.toContain('\n');
  expect(err.errors).toHaveLength(want.errors.length);
  want.errors.forEach((w, i) => expect(err.errors[i]).toContain(w));
  // The summary line names the file and the first problem.
  expect(err.message).toContain(want.errors[0]!.slice(want.errors[0]!.indexOf(': ') + 2));
  if (want.errors.length > 1) expect(err.message).toMatch(new RegExp(`${want.errors.length}\\+? errors`));
  expect(snapshot(traces)).toEqual(before);
  return err;
}

describe('bad CSV input leaves the store unchanged', () => {
  it('empty file', async () => {
    await expectDataError([fx('empty.csv')], {}, { code: 'ingest.emptyFile', errors: ['empty.csv: line 1: file is empty'] });
  });

  it('a file holding only a BOM and blank lines is empty too', async () => {
    const f = join(dir, 'bom-only.csv');
    writeFileSync(f, Buffer.from([0xef, 0xbb, 0xbf, 0x0d, 0x0a, 0x0a]));
    await expectDataError([f], {}, { code: 'ingest.emptyFile', errors: ['bom-only.csv: line 1: file is empty'] });
  });

  it('header only', async () => {
    await expectDataError([fx('header-only.csv')], {}, { code: 'ingest.noRows', errors: ['header-only.csv: line 2: no data rows after the header'] });
  });

  it('missing required column', async () => {
    const err = await expectDataError([fx('missing-column.csv')], {}, {
      code: 'ingest.missingColumn',
      errors: ['missing-column.csv: line 1, field "scenario_id": required column missing'],
    });
    expect(err.errors[0]).toContain('scenario_id, scenario, sample_id, id');
  });

  it('a map column that is not in the header', async () => {
    await expectDataError([fx('episodes.csv')], { map: fx('unknown-column.map.json') }, {
      code: 'ingest.unknownColumn',
      errors: ['episodes.csv: line 1, field "modle": the map\'s column "modle" (for episodes.subject_model) is not in the header'],
    });
  });

  it('a map naming a column the table does not have', async () => {
    await expectDataError([fx('episodes.csv')], { map: fx('unknown-schema-column.map.json') }, {
      code: 'ingest.unknownColumn',
      errors: ['unknown-schema-column.map.json: columns.temperature: "temperature" is not a column episodes can fill'],
    });
  });

  it('a map that is not valid JSON, or breaks the mapping schema', async () => {
    const bad = join(dir, 'bad.map.json');
    writeFileSync(bad, '{"table": "episodes",');
    await expectDataError([fx('episodes.csv')], { map: bad }, { code: 'ingest.badMap', errors: ['bad.map.json: not valid JSON'] });
    writeFileSync(bad, JSON.stringify({ table: 'messages', colums: {} }));
    await expectDataError([fx('episodes.csv')], { map: bad }, { code: 'ingest.badMap', errors: ['bad.map.json: table:', 'bad.map.json: (top level): unrecognized key: "colums"'] });
    writeFileSync(bad, JSON.stringify({ table: 'episodes', columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch' }, values: { epoch: { first: 'one' } } }));
    await expectDataError([fx('episodes.csv')], { map: bad }, { code: 'ingest.badMap', errors: ['episodes.csv: line 1, field "epoch": values.epoch["first"]: expected an integer, got "one"'] });
  });

  it('wrong types: text in a numeric column, NaN, 1e999, an unknown score token (all listed)', async () => {
    const err = await expectDataError([fx('wrong-type.csv')], {}, {
      code: 'ingest.badType',
      errors: [
        'wrong-type.csv: line 2, field "epoch": expected an integer, got "two"',
        'wrong-type.csv: line 3, field "latency_ms": expected a number, got "NaN"',
        'wrong-type.csv: line 4, field "latency_ms": "1e999" is not a finite number',
        'wrong-type.csv: line 5, field "score": expected a score',
      ],
    });
    expect(err.message).toMatch(/wrong-type\.csv: 4 errors; first: line 2, field "epoch": expected an integer, got "two"$/);
  });

  it('ragged rows', async () => {
    await expectDataError([fx('ragged.csv')], {}, {
      code: 'ingest.raggedRow',
      errors: [
        'ragged.csv: line 3, field "score": expected 4 fields (as in the header), found 3',
        'ragged.csv: line 5, field "column 5": expected 4 fields (as in the header), found 5',
      ],
    });
  });

  it('unterminated quote', async () => {
    await expectDataError([fx('unterminated-quote.csv')], {}, {
      code: 'ingest.unterminatedQuote',
      errors: ['unterminated-quote.csv: line 3, field "sample_id": unterminated quoted field (the quote opened on line 3 is never closed)'],
    });
  });

  it('a quote inside an unquoted field', async () => {
    await expectDataError([fx('bad-quote.csv')], {}, { code: 'ingest.badQuote', errors: ['bad-quote.csv: line 2, field "sample_id": quote inside an unquoted field'] });
  });

  it('duplicate episode keys, within a file and across files', async () => {
    await expectDataError([fx('duplicate-keys.csv')], {}, {
      code: 'ingest.duplicateKey',
      errors: ['duplicate-keys.csv: line 4, field "episode_id": duplicate episode "sim:hasty/em_act_a/1" (first on line 2)'],
    });
    await expectDataError([fx('episodes.csv'), fx('episodes-bom-crlf.csv')], {}, {
      code: 'ingest.duplicateKey',
      errors: [
        'episodes-bom-crlf.csv: line 2, field "episode_id": duplicate episode "sim:hasty/em_act_a/1" (first on line 2 of ',
        'episodes-bom-crlf.csv: line 4, field "episode_id": duplicate episode "sim:hasty/em_amb_a/1" (first on line 4 of ',
        'episodes-bom-crlf.csv: line 5, field "episode_id": duplicate episode "sim:careful/em_act_a/1" (first on line 5 of ',
      ],
    });
  });

  it('aggregate counts: successes > trials, negative, not an integer', async () => {
    await expectDataError([fx('aggregate-bad-counts.csv')], {}, {
      code: 'ingest.badCount',
      errors: [
        'aggregate-bad-counts.csv: line 2, field "successes": successes 91 exceed trials 90',
        'aggregate-bad-counts.csv: line 3, field "successes": successes must be a non-negative integer, got -1',
        'aggregate-bad-counts.csv: line 4, field "successes": expected an integer, got "2.5"',
      ],
    });
  });

  it('non-UTF-8 bytes (reported with their line), in a row and in the header', async () => {
    const f = join(dir, 'latin1.csv');
    writeFileSync(f, Buffer.concat([Buffer.from('model,sample_id,epoch,score\nsim:a,s1,1,C\nsim:'), Buffer.from([0xe9]), Buffer.from('t\xe9,s2,1,C\nsim:b,s3,1,C\n', 'latin1')]));
    await expectDataError([f], {}, { code: 'ingest.notUtf8', errors: ['latin1.csv: line 3, field "model": invalid UTF-8 byte 0xE9'] });
    const h = join(dir, 'latin1-header.csv');
    writeFileSync(h, Buffer.concat([Buffer.from('model,sc'), Buffer.from([0xe9]), Buffer.from('nario\nsim:a,s1\n')]));
    await expectDataError([h], {}, { code: 'ingest.notUtf8', errors: ['latin1-header.csv: line 1, field "column 2": invalid UTF-8 byte 0xE9'] });
  });

  it('a 10 MB field (limit 1 MiB), without buffering it', async () => {
    const f = join(dir, 'huge.csv');
    const huge = 'x'.repeat(10 * 1024 * 1024);
    writeFileSync(f, `model,sample_id,epoch,score\nsim:a,s1,1,C\nsim:b,"${huge}",1,C\nsim:c,s3,1,C\n`);
    await expectDataError([f], {}, { code: 'ingest.fieldTooLarge', errors: ['huge.csv: line 3, field "sample_id": field longer than the limit of 1048576 bytes'] });
    const u = join(dir, 'huge-unquoted.csv');
    writeFileSync(u, `model,sample_id,epoch,score\nsim:a,s1,1,C\n${huge},s2,1,C\n`);
    await expectDataError([u], {}, { code: 'ingest.fieldTooLarge', errors: ['huge-unquoted.csv: line 3, field "model": field longer than the limit'] });
  });

  it('collects at most 20 errors, summarised on one line', async () => {
    const f = join(dir, 'many.csv');
    const lines = ['model,sample_id,epoch,score'];
    for (let i = 0; i < 100; i++) lines.push(`sim:a,s${i},x${i},C`);
    writeFileSync(f, lines.join('\n') + '\n');
    const err = await expectDataError([f], {}, {
      code: 'ingest.badType',
      errors: Array.from({ length: 20 }, (_, i) => `many.csv: line ${i + 2}, field "epoch": expected an integer, got "x${i}"`),
    });
    expect(err.message).toMatch(/many\.csv: 20\+ errors \(stopped after 20\); first: line 2, field "epoch"/);
  });

  it('other value errors: enum, empty required cell, 32-bit overflow, timestamp, JSON, boolean', async () => {
    const f = join(dir, 'values.csv');
    writeFileSync(
      f,
      [
        'model,sample_id,epoch,status,started_at,decision_args,gathered_evidence',
        'm,s1,1,done,,,yes',
        ',s2,1,valid,,,yes',
        'm,s3,3000000000,valid,,,yes',
        'm,s4,1,valid,2026-08-10 15:02,,yes',
        'm,s5,1,valid,,{oops,yes',
        'm,s6,1,valid,,,maybe',
      ].join('\n'),
    );
    await expectDataError([f], {}, {
      code: 'ingest.badValue',
      errors: [
        'values.csv: line 2, field "status": expected one of valid, invalid, error, got "done"',
        'values.csv: line 3, field "model": empty value in a required column',
        'values.csv: line 4, field "epoch": integer "3000000000" is out of range',
        'values.csv: line 5, field "started_at": expected an ISO-8601 date-time',
        'values.csv: line 6, field "decision_args": not valid JSON',
        'values.csv: line 7, field "gathered_evidence": expected a boolean',
      ],
    });
  });

  it('leaves a store that does not exist yet absent', async () => {
    const fresh = join(dir, 'fresh');
    await expect(ingestCsv([fx('wrong-type.csv')], { traces: fresh })).rejects.toBeInstanceOf(IngestError);
    expect(existsSync(fresh)).toBe(false);
  });

  it('usage errors for a missing CSV or map file and a bad run id (exit 2)', async () => {
    await expect(ingestCsv([join(dir, 'nope.csv')], { traces })).rejects.toMatchObject({ code: 'ingest.noSuchFile', kind: 'usage' });
    await expect(ingestCsv([fx('episodes.csv')], { traces, map: join(dir, 'nope.json') })).rejects.toMatchObject({ code: 'ingest.noMap', kind: 'usage' });
    await expect(ingestCsv([fx('episodes.csv')], { traces, runId: '../evil' })).rejects.toMatchObject({ code: 'ingest.badRunId', kind: 'usage' });
    await expect(ingestCsv([], { traces })).rejects.toMatchObject({ code: 'ingest.noFiles', kind: 'usage' });
  });
});
