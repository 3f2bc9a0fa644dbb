/**
 * Bench: `ingestCsv` on a 1,000,000-row per-sample CSV, against a plain DuckDB
 * `COPY (SELECT * FROM read_csv(...)) TO '...parquet'` of the same file in the same process.
 *
 * Targets: ingest under 15 s, within 2x of the DuckDB copy, peak RSS under 1 GB.
 * Run alone: `npx tsx bench/ingest-csv.ts [rows]`.
 *
 * A second baseline shows what the 2x bar asks for: DuckDB alone writing the ingest's own output
 * (the episodes and scores tables with every schema column, ZSTD, as `writeRun` does: the file
 * read once with fixed VARCHAR columns into a table, then one COPY per table) with no checks at all.
 * The bench proves it is the same output (EXCEPT ALL both ways against what `ingestCsv` wrote is
 * empty) before it reports the time. That is a floor for any ingest that uses DuckDB's Parquet
 * writer, and it is above 2x of the plain COPY on its own.
 *
 * After the timed ingest (cold, as a user runs it) the parts are timed again, warm: the check
 * alone (a dry run), the write alone (`writeRun` of the checked columns), and the CSV reading
 * alone (parse and hash, no checks): the floors the ingest cannot go under.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { once } from 'node:events';
import { checkCsvRun, ingestCsv } from '../src/ingest/ingest-csv.ts';
import { parseCsvFile } from '../src/ingest/csv/parse-csv.ts';
import { writeRun } from '../src/store/write-run.ts';
import { createHash } from 'node:crypto';
import { createDb, quoteLiteral, withConnection } from '../src/store/duckdb.ts';

export interface IngestCsvBenchResult {
  rows: number;
  fileBytes: number;
  ingestMs: number;
  duckdbMs: number;
  /** The same ingest as a dry run (parse and check only, no write), run after: the breakdown. */
  checkMs: number;
  /** `writeRun` alone of the checked run (columns staged and written as Parquet), warm. */
  writeMs: number;
  /** Reading the CSV alone: parse and SHA-256, no checks, no rows kept (a floor). */
  parseMs: number;
  /**
   * DuckDB alone writing the same episodes + scores tables from the file, no checks (a floor; the
   * bench checks it equals the ingest's output).
   */
  duckdbSameOutputMs: number;
  /** ingestMs / duckdbMs. */
  ratio: number;
  /** duckdbSameOutputMs / duckdbMs: where the floor sits against the issue's baseline. */
  floorRatio: number;
  /** ingestMs / duckdbSameOutputMs. */
  ratioToFloor: number;
  /** Peak resident set size of the process after the ingest (before the DuckDB copy), MiB. */
  peakRssMiB: number;
  /** Peak RSS at the end (DuckDB copy included), MiB. */
  peakRssEndMiB: number;
  targets: { underSeconds: boolean; within2x: boolean; under1GB: boolean };
}

const MODELS = ['openai/gpt-oss-120b', 'nvidia/nemotron-3-super-120b', 'minimax/minimax-m3', 'sim:hasty', 'sim:careful'];
const TOOLS = ['issue_statement', 'escalate', 'request_authorization', 'withdraw'];
const SCORES = ['C', 'I', 'N'];

/** Writes a per-sample CSV: one row per (model, scenario, epoch), unique episode keys. */
async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  out.write('model,sample_id,epoch,target,decision_tool,score,latency_ms\n');
  const scenarios = 1000;
  const perEpoch = MODELS.length * scenarios;
  let buf = '';
  for (let i = 0; i < rows; i++) {
    const model = MODELS[i % MODELS.length]!;
    const scenario = `scn_${String(Math.floor(i / MODELS.length) % scenarios).padStart(4, '0')}`;
    const epoch = Math.floor(i / perEpoch) + 1;
    const target = TOOLS[i % 3]!;
    const tool = TOOLS[(i * 7) % 4]!;
    const score = SCORES[i % 3]!;
    const latency = ((i * 37) % 100000) / 10;
    buf += `${model},${scenario},${epoch},${target},${tool},${score},${latency}\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}

const mib = (kb: number) => Math.round(kb / 1024);

const CSV_COLUMNS = ['model', 'sample_id', 'epoch', 'target', 'decision_tool', 'score', 'latency_ms'];

/** The ingest's output for the bench file, as DuckDB SQL over the raw VARCHAR columns (no checks). */
const EPISODES_SQL = `SELECT concat(model, '/', sample_id, '/', epoch) AS episode_id, model AS subject_model,
  NULL::VARCHAR AS subject_family, sample_id AS scenario_id, NULL::VARCHAR AS domain, NULL::VARCHAR AS decision_type,
  NULL::VARCHAR AS variant, CAST(epoch AS INTEGER) AS epoch, target, 'valid' AS status, NULL::VARCHAR AS invalid_reason,
  decision_tool, NULL::VARCHAR AS decision_args, false AS gathered_evidence, 0 AS log_reads, 0 AS turns,
  NULL::INTEGER AS input_tokens, NULL::INTEGER AS output_tokens, CAST(latency_ms AS DOUBLE) AS latency_ms,
  NULL::TIMESTAMP AS started_at, NULL::VARCHAR AS error FROM src`;
const SCORES_SQL = `SELECT concat(model, '/', sample_id, '/', epoch) AS episode_id, 'score' AS scorer,
  CASE score WHEN 'C' THEN 1.0 WHEN 'I' THEN 0.0 ELSE NULL END AS value, NULL::VARCHAR AS answer,
  score = 'N' AS noanswer, NULL::VARCHAR AS explanation FROM src`;

/**
 * DuckDB alone writing the ingest's two tables from `file` (see the module comment); returns the
 * time of the read and the two COPYs, after checking the files equal the ingest's partitions.
 */
async function duckdbSameOutput(file: string, dir: string, traces: string, runId: string): Promise<number> {
  const db = await createDb({ threads: 2 });
  try {
    const ep = join(dir, 'floor-episodes.parquet');
    const sc = join(dir, 'floor-scores.parquet');
    const columns = `{${CSV_COLUMNS.map((c) => `${quoteLiteral(c)}: 'VARCHAR'`).join(', ')}}`;
    const t0 = performance.now();
    await withConnection(db, (c) =>
      c.run(`CREATE TABLE src AS SELECT * FROM read_csv(${quoteLiteral(file)}, auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', strict_mode = true, columns = ${columns})`),
    );
    // One COPY after the other: faster here than two at once (each COPY already uses both threads).
    for (const [sql, out] of [
      [EPISODES_SQL, ep],
      [SCORES_SQL, sc],
    ]) {
      await withConnection(db, (c) => c.run(`COPY (${sql}) TO ${quoteLiteral(out!)} (FORMAT parquet, COMPRESSION zstd)`));
    }
    const ms = performance.now() - t0;
    await withConnection(db, async (c) => {
      for (const [table, out] of [
        ['episodes', ep],
        ['scores', sc],
      ] as const) {
        const ours = `read_parquet(${quoteLiteral(join(traces, table, `run_id=${runId}`, 'data.parquet'))}, hive_partitioning = false)`;
        const floor = `read_parquet(${quoteLiteral(out)})`;
        const r = await c.runAndReadAll(
          `SELECT (SELECT count(*) FROM (FROM ${ours} EXCEPT ALL FROM ${floor}))::INTEGER + (SELECT count(*) FROM (FROM ${floor} EXCEPT ALL FROM ${ours}))::INTEGER AS d`,
        );
        const d = r.getRowObjectsJS()[0]!.d as number;
        if (d !== 0) throw new Error(`the DuckDB floor does not write the ingest's ${table} (${d} rows differ)`);
      }
    });
    return ms;
  } finally {
    db.closeSync();
  }
}

export async function benchIngestCsv(rows = 1_000_000): Promise<IngestCsvBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'standoff-bench-csv-'));
  try {
    const file = join(dir, 'samples.csv');
    await generate(file, rows);
    const fileBytes = (await stat(file)).size;

    const t0 = performance.now();
    const summary = await ingestCsv([file], { traces: join(dir, 'traces'), runId: 'bench-csv' });
    const ingestMs = performance.now() - t0;
    const peakRssMiB = mib(process.resourceUsage().maxRSS);
    if (summary.tables.episodes !== rows) throw new Error(`expected ${rows} episodes, got ${summary.tables.episodes}`);

    const db = await createDb({ threads: 2 });
    let duckdbMs = 0;
    try {
      await withConnection(db, async (conn) => {
        const t1 = performance.now();
        await conn.run(`COPY (SELECT * FROM read_csv(${quoteLiteral(file)})) TO ${quoteLiteral(join(dir, 'x.parquet'))} (FORMAT parquet)`);
        duckdbMs = performance.now() - t1;
      });
    } finally {
      db.closeSync();
    }
    const peakRssEndMiB = mib(process.resourceUsage().maxRSS);
    const duckdbSameOutputMs = await duckdbSameOutput(file, dir, join(dir, 'traces'), 'bench-csv');
    const t2 = performance.now();
    await ingestCsv([file], { traces: join(dir, 'traces'), runId: 'bench-csv-dry', dryRun: true });
    const checkMs = performance.now() - t2;
    const { bundle } = await checkCsvRun([file], { traces: join(dir, 'traces-w'), runId: 'bench-csv-w' });
    const t3 = performance.now();
    await writeRun(join(dir, 'traces-w'), bundle, { trusted: true });
    const writeMs = performance.now() - t3;
    const t4 = performance.now();
    const hash = createHash('sha256');
    await parseCsvFile(file, { onRecord: () => undefined, onError: () => undefined }, { onChunk: (c) => hash.update(c) });
    hash.digest('hex');
    const parseMs = performance.now() - t4;
    const ratio = ingestMs / duckdbMs;
    const result: IngestCsvBenchResult = {
      rows,
      fileBytes,
      ingestMs: Math.round(ingestMs),
      duckdbMs: Math.round(duckdbMs),
      checkMs: Math.round(checkMs),
      writeMs: Math.round(writeMs),
      parseMs: Math.round(parseMs),
      duckdbSameOutputMs: Math.round(duckdbSameOutputMs),
      ratio: Math.round(ratio * 100) / 100,
      floorRatio: Math.round((duckdbSameOutputMs / duckdbMs) * 100) / 100,
      ratioToFloor: Math.round((ingestMs / duckdbSameOutputMs) * 100) / 100,
      peakRssMiB,
      peakRssEndMiB,
      targets: { underSeconds: ingestMs < 15_000, within2x: ratio <= 2, under1GB: peakRssMiB < 1024 },
    };
    const mark = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    console.log(`ingest csv: ${rows.toLocaleString('en-US')} rows, ${(fileBytes / 1048576).toFixed(1)} MiB`);
    console.log(`  ingestCsv (parse, check, write episodes+scores Parquet): ${(ingestMs / 1000).toFixed(2)} s  [target < 15 s: ${mark(result.targets.underSeconds)}]`);
    console.log(`    parts, warm: parse + check (a dry run) ${(checkMs / 1000).toFixed(2)} s; writeRun of the checked columns ${(writeMs / 1000).toFixed(2)} s`);
    console.log(`    floor: reading the CSV alone (parse + SHA-256, no checks) ${(parseMs / 1000).toFixed(2)} s`);
    console.log(`  DuckDB COPY read_csv -> parquet:                         ${(duckdbMs / 1000).toFixed(2)} s`);
    console.log(`  ratio: ${result.ratio}x  [target <= 2x: ${mark(result.targets.within2x)}]`);
    console.log(`  floor: DuckDB alone writing the same episodes + scores tables, no checks: ${(duckdbSameOutputMs / 1000).toFixed(2)} s = ${result.floorRatio}x the plain COPY; ingest / floor ${result.ratioToFloor}x`);
    console.log(`  peak RSS after ingest: ${peakRssMiB} MiB  [target < 1024 MiB: ${mark(result.targets.under1GB)}]; at end: ${peakRssEndMiB} MiB`);
    return result;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  await benchIngestCsv(n);
}
