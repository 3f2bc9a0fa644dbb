/**
 * Issue 11, point 1: a CSV as it comes. The natural wide CSV (tests/helpers/natural-csv.ts: 4 models
 * x 150 items x 2 epochs, `model,sample_id,epoch,correct,quality,judge_a,judge_b,judge_c`, a few
 * empty judge cells) goes in through the contract command, through detection (no flags), through a
 * mapping file, and split into two files with a map each (per-file `--map` and a manifest): every
 * way gives the same store. Expected counts and values come from the generated rows, not from the
 * ingest. Repeated options that would override each other are usage errors that leave the store
 * byte-identical.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { JUDGES, NATURAL_HEADER, naturalCsv, writeNaturalCsv, type NaturalRow } from '../helpers/natural-csv.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';

let dir: string;
let csv: string;
let rows: NaturalRow[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-csv-shapes-'));
  csv = join(dir, 'results.csv');
  rows = writeNaturalCsv(csv);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONTRACT = ['--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality'];

/** Every row of the tables a CSV ingest fills, as sorted JSON (run ids left out). */
async function dump(traces: string): Promise<Record<string, string[]>> {
  const s = await openStore(traces);
  try {
    const out: Record<string, string[]> = {};
    for (const t of ['episodes', 'scores', 'judgments']) {
      const { rows: r } = await query(s.conn, `SELECT * EXCLUDE (run_id) FROM ${t} ORDER BY ALL`);
      out[t] = r.map((x) => JSON.stringify(x));
    }
    return out;
  } finally {
    s.close();
  }
}

describe('the contract command (issue 11, point 1)', { timeout: 240_000 }, () => {
  let traces: string;
  beforeAll(() => {
    traces = join(dir, 'contract');
    const r = runCli(['ingest', 'csv', csv, '--traces', traces, '--run-id', 'r1', ...CONTRACT]);
    // Without a map the mapping used (flags, and detection for the rest) is printed, once.
    expect(r.stderr).toMatch(/^standoff: no --map given; read as delimiter ',' \(comma, detected\), quote '"', LF; mapping used: \{.*\}\n$/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^wrote run r1 to .*: runs 1, episodes 1200, scores 2400, judgments \d+/);
  }, 120_000);

  it('writes one episode per row: the item is scenario_id, unmapped Standoff columns stay NULL', async () => {
    const s = await openStore(traces);
    try {
      const e = await query(
        s.conn,
        `SELECT count(*)::INT AS n, count(DISTINCT subject_model)::INT AS models, count(DISTINCT scenario_id)::INT AS items, max(epoch) AS epochs,
                count(gathered_evidence)::INT AS ge, count(log_reads)::INT AS lr, count(turns)::INT AS turns, count(target)::INT AS target, count(metadata)::INT AS meta,
                count(*) FILTER (WHERE episode_id = subject_model || '/' || scenario_id || '/' || epoch)::INT AS ids
         FROM episodes`,
      );
      expect(e.rows[0]).toEqual({ n: 1200, models: 4, items: 150, epochs: 2, ge: 0, lr: 0, turns: 0, target: 0, meta: 0, ids: 1200 });
    } finally {
      s.close();
    }
  });

  it('turns each --scores column into score rows named after it, with the values of the file', async () => {
    const s = await openStore(traces);
    try {
      const r = await query(s.conn, `SELECT scorer, count(*)::INT AS n, sum(value) AS total, count(*) FILTER (WHERE noanswer)::INT AS na FROM scores GROUP BY scorer ORDER BY scorer`);
      const sum = (f: (x: NaturalRow) => number) => rows.reduce((a, x) => a + f(x), 0);
      expect(r.rows).toEqual([
        { scorer: 'correct', n: 1200, total: sum((x) => x.correct), na: 0 },
        { scorer: 'quality', n: 1200, total: sum((x) => x.quality), na: 0 },
      ]);
      // One value checked cell by cell: the score of each episode is the file's.
      const q = await query(s.conn, `SELECT e.subject_model AS m, e.scenario_id AS i, e.epoch AS ep, s.value FROM scores s JOIN episodes e USING (run_id, episode_id) WHERE s.scorer = 'quality'`);
      const want = new Map(rows.map((x) => [`${x.model}/${x.sample_id}/${x.epoch}`, x.quality]));
      for (const row of q.rows) expect(row.value).toBe(want.get(`${row.m}/${row.i}/${row.ep}`));
    } finally {
      s.close();
    }
  });

  it("turns each judge column into that judge's judgments of the judged scorer; empty cells give no row, never 0; numeric values need no verdict", async () => {
    const s = await openStore(traces);
    try {
      const r = await query(
        s.conn,
        `SELECT judge_model, scorer, count(*)::INT AS n, sum(value) AS total, count(verdict)::INT AS verdicts, count(*) FILTER (WHERE value = 0)::INT AS zeros
         FROM judgments GROUP BY ALL ORDER BY judge_model`,
      );
      expect(r.rows).toEqual(
        JUDGES.map((j, k) => {
          const cells = rows.map((x) => x.judges[k]).filter((v): v is number => v !== null);
          return { judge_model: j, scorer: 'quality', n: cells.length, total: cells.reduce((a, b) => a + b, 0), verdicts: 0, zeros: 0 };
        }),
      );
      const empty = rows.reduce((a, x) => a + x.judges.filter((v) => v === null).length, 0);
      expect(empty).toBeGreaterThan(20); // the fixture does have empty judge cells
      const total = await query(s.conn, 'SELECT count(*)::INT AS n FROM judgments j JOIN episodes e USING (run_id, episode_id)');
      expect(total.rows[0]!.n).toBe(3 * 1200 - empty);
    } finally {
      s.close();
    }
  });

  it('records provenance: file SHA-256, the mapping used, the time', async () => {
    const s = await openStore(traces);
    try {
      const r = await query(s.conn, 'SELECT source, suite, config, source_file, source_sha256, epochs FROM runs');
      const { createHash } = await import('node:crypto');
      const { readFileSync } = await import('node:fs');
      expect(r.rows[0]).toMatchObject({ source: 'csv', suite: 'results', source_file: 'results.csv', source_sha256: createHash('sha256').update(readFileSync(csv)).digest('hex'), epochs: 2 });
      expect(JSON.parse(r.rows[0]!.config as string)).toMatchObject({
        table: 'episodes',
        columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch' },
        scores: [
          { scorer: 'correct', column: 'correct' },
          { scorer: 'quality', column: 'quality' },
        ],
        judges: { scorer: 'quality', columns: [...JUDGES] },
      });
    } finally {
      s.close();
    }
  });

  it('gives the same store without flags (detection, printed), and from a mapping file', async () => {
    const detected = join(dir, 'detected');
    const r = runCli(['ingest', 'csv', csv, '--traces', detected, '--run-id', 'r1']);
    expect(r.code).toBe(0);
    const printed = JSON.parse(/mapping used: (.*)$/m.exec(r.stderr)![1]!);
    expect(printed).toEqual({
      table: 'episodes',
      columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch' },
      scores: [
        { scorer: 'correct', column: 'correct' },
        { scorer: 'quality', column: 'quality' },
      ],
      judges: { scorer: 'quality', columns: [...JUDGES] },
    });
    expect(await dump(detected)).toEqual(await dump(traces));
    // The printed mapping, saved and passed back, is a mapping file that says all of it.
    const map = join(dir, 'printed.map.json');
    writeFileSync(map, JSON.stringify(printed));
    const mapped = join(dir, 'mapped');
    await ingestCsv([csv], { traces: mapped, map, runId: 'r1' });
    expect(await dump(mapped)).toEqual(await dump(traces));
  }, 120_000);

  it('judge columns without --judged-scorer grade the one score that is not 0/1', async () => {
    const t = join(dir, 'judged');
    const sum = await ingestCsv([csv], { traces: t, runId: 'r1', dryRun: true, flags: { subject: 'model', item: 'sample_id', epoch: 'epoch', scores: ['correct', 'quality'], judgeColumns: [...JUDGES] } });
    expect(sum.mapping.judges).toEqual({ scorer: 'quality', columns: [...JUDGES] });
    // With two scores that are not 0/1 there is no telling: the ingest asks.
    const two = join(dir, 'two-scales.csv');
    const lines = naturalCsv(rows).trim().split('\n');
    writeFileSync(two, lines.map((l, i) => (i === 0 ? `${l},effort` : `${l},${rows[i - 1]!.quality}`)).join('\n') + '\n');
    const err = await ingestCsv([two], { traces: t, flags: { judgeColumns: [...JUDGES] }, dryRun: true }).catch((e) => e);
    expect(err.code).toBe('ingest.noJudgedScorer');
    expect(err.message).toMatch(/judge columns judge_a, judge_b, judge_c found, but not which scorer they grade: pass --judged-scorer NAME \(scores: correct, quality, effort\)/);
  });

  it('takes several files, each with its own map (--map FILE=MAP, or a manifest), as one run', async () => {
    // The first two models as the file above; the others exported by another tool, other names.
    const a = join(dir, 'part-a.csv');
    const b = join(dir, 'part-b.csv');
    const half = rows.filter((x) => x.model === 'acme-large' || x.model === 'acme-small');
    const rest = rows.filter((x) => !half.includes(x));
    writeFileSync(a, naturalCsv(half));
    const renamed = ['Model', 'Task ID', 'Try', 'is_correct', 'grade', 'gpt_judge', 'claude_judge', 'gemini_judge'];
    writeFileSync(b, naturalCsv(rest).replace(`${NATURAL_HEADER.join(',')}\n`, `${renamed.join(',')}\n`));
    const mapB = {
      table: 'episodes',
      columns: { subject_model: 'Model', scenario_id: 'Task ID', epoch: 'Try' },
      scores: [
        { scorer: 'correct', column: 'is_correct' },
        { scorer: 'quality', column: 'grade' },
      ],
      judges: { scorer: 'quality', columns: ['gpt_judge', 'claude_judge', 'gemini_judge'] },
    };
    const mapBFile = join(dir, 'b.map.json');
    writeFileSync(mapBFile, JSON.stringify(mapB));
    const mapAFile = join(dir, 'a.map.json');
    writeFileSync(mapAFile, JSON.stringify({ ...mapB, columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch' }, scores: [{ scorer: 'correct', column: 'correct' }, { scorer: 'quality', column: 'quality' }], judges: { scorer: 'quality', columns: [...JUDGES] } }));
    const split = join(dir, 'split');
    const r = runCli(['ingest', 'csv', a, b, '--traces', split, '--run-id', 'r1', '--map', `${a}=${mapAFile}`, '--map', `${b}=${mapBFile}`]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = await openStore(split);
    try {
      const runs = await query(s.conn, 'SELECT count(*)::INT AS n, any_value(source_file) AS f FROM runs');
      expect(runs.rows[0]).toEqual({ n: 1, f: 'part-a.csv;part-b.csv' });
      const e = await query(s.conn, 'SELECT count(*)::INT AS n, count(DISTINCT subject_model)::INT AS m FROM episodes');
      expect(e.rows[0]).toEqual({ n: 1200, m: 4 });
      const j = await query(s.conn, `SELECT count(*)::INT AS n FROM judgments`);
      expect(j.rows[0]!.n).toBe(rows.reduce((acc, x) => acc + x.judges.filter((v) => v !== null).length, 0));
      const judges = await query(s.conn, `SELECT DISTINCT judge_model FROM judgments ORDER BY 1`);
      expect(judges.rows.map((x) => x.judge_model)).toEqual(['claude_judge', 'gemini_judge', 'gpt_judge', 'judge_a', 'judge_b', 'judge_c']);
    } finally {
      s.close();
    }
    // The same run from a manifest (one --map holding both mappings).
    const manifest = join(dir, 'manifest.json');
    writeFileSync(manifest, JSON.stringify({ files: { 'part-a.csv': JSON.parse(JSON.stringify({ ...mapB, columns: { subject_model: 'model', scenario_id: 'sample_id', epoch: 'epoch' }, scores: [{ scorer: 'correct', column: 'correct' }, { scorer: 'quality', column: 'quality' }], judges: { scorer: 'quality', columns: [...JUDGES] } })), 'part-b.csv': mapB } }));
    const viaManifest = join(dir, 'manifest-store');
    await ingestCsv([a, b], { traces: viaManifest, map: manifest, runId: 'r1' });
    expect(await dump(viaManifest)).toEqual(await dump(split));
  }, 120_000);
});

describe('a repeated option that would silently override another is an error', { timeout: 240_000 }, () => {
  it('exits 2 and leaves the store byte-identical', async () => {
    const traces = join(dir, 'refused');
    await ingestCsv([csv], { traces, runId: 'first' });
    const before = hashTree(traces);
    const map = join(dir, 'm.json');
    writeFileSync(map, JSON.stringify({ table: 'episodes', columns: { subject_model: 'model', scenario_id: 'sample_id' } }));
    const cases: [string[], RegExp][] = [
      [['--subject', 'model', '--subject', 'sample_id'], /--subject given twice \("model" and "sample_id"\)/],
      [['--judged-scorer', 'quality', '--judged-scorer', 'correct', '--judge-columns', 'judge_a'], /--judged-scorer given twice/],
      [['--map', map, '--map', map], /--map given twice/],
      [['--map', map, '--subject', 'epoch'], /--subject epoch conflicts with the map's columns\.subject_model \("model"\)/],
      [['--map', map, '--map', `${csv}=${map}`], /has two maps/],
    ];
    for (const [args, message] of cases) {
      const r = runCli(['ingest', 'csv', csv, '--traces', traces, '--run-id', 'second', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(hashTree(traces)).toBe(before);
    }
  }, 120_000);

  it('a judge column that is not in the file, or judge columns without a scorer, are errors too', async () => {
    const traces = join(dir, 'refused-2');
    const r = runCli(['ingest', 'csv', csv, '--traces', traces, '--judge-columns', 'judge_a,judge_x', '--judged-scorer', 'quality']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/results\.csv: line 1, field "judge_x": column "judge_x" \(--judge-columns\) \(for judge judge_x\) is not in the header/);
    const map = join(dir, 'j.json');
    writeFileSync(map, JSON.stringify({ table: 'episodes', columns: { subject_model: 'model', scenario_id: 'sample_id' }, judges: { columns: ['judge_a'] } }));
    const r2 = runCli(['ingest', 'csv', csv, '--traces', traces, '--map', map]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/judge columns need the scorer they grade: pass --judged-scorer NAME/);
    expect(hashTree(traces)).toBe('absent');
  }, 120_000);
});
