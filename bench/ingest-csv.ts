/**
 * Bench: `ingestCsv` on a 1,000,000-row per-sample CSV, against a plain DuckDB
 * `COPY (SELECT * FROM read_csv(...)) TO '...parquet'` of the same file in the same process.
 *
 * Targets: ingest under 15 s, within 2x of the DuckDB copy, peak RSS under 1 GB.
 * Run alone: `npx tsx bench/ingest-csv.ts [rows]`.
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
  /** ingestMs / duckdbMs. */
  ratio: number;
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
      ratio: Math.round(ratio * 100) / 100,
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
