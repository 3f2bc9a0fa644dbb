/**
 * Bench: `ingestCsv` on a 1,000,000-row per-sample CSV, against DuckDB's own
 * `COPY (FROM read_csv(...)) TO '...parquet'` of the same file in the same process, in the same
 * run; and a 10,000,000-row CSV ingested in a child process of its own (its peak RSS is the
 * ingest's alone).
 *
 * Targets (issue 14): ingest within 1.5x of the DuckDB COPY, peak RSS below 729 MB (the figure
 * before the ingest went through DuckDB), and the 10M-row ingest in bounded memory (its peak is
 * printed). The COPY and the ingest alternate over three rounds; the ratio is of the best time of
 * each (the machine is shared: the load average is printed beside each figure), with every round's
 * ratio shown too. Run alone: `npx tsx bench/ingest-csv.ts [rows]`.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { once } from 'node:events';
import { ingestCsv } from '../src/ingest/ingest-csv.ts';
import { createDb, quoteLiteral, withConnection } from '../src/store/duckdb.ts';

export interface IngestCsvBenchResult {
  rows: number;
  fileBytes: number;
  /** Best of three, cold first. */
  ingestMs: number;
  duckdbMs: number;
  rounds: { ingestMs: number; duckdbMs: number; load: number }[];
  /** ingestMs / duckdbMs (best of each). */
  ratio: number;
  /** Peak resident set size of the process after the first ingest (before any DuckDB COPY), MiB. */
  peakRssMiB: number;
  /** The 10M-row ingest in its own process. */
  large: { rows: number; fileBytes: number; ingestMs: number; peakRssMiB: number; load: number } | null;
  targets: { within15x: boolean; under729MB: boolean };
}

const MODELS = ['openai/gpt-oss-120b', 'nvidia/nemotron-3-super-120b', 'minimax/minimax-m3', 'sim:hasty', 'sim:careful'];
const TOOLS = ['issue_statement', 'escalate', 'request_authorization', 'withdraw'];
const SCORES = ['C', 'I', 'N'];

/** Writes a per-sample CSV: one row per (model, scenario, epoch), unique episode keys. */
export async function generate(file: string, rows: number): Promise<void> {
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
const load1 = () => Math.round(loadavg()[0]! * 100) / 100;

async function timeIngest(file: string, traces: string, runId: string): Promise<number> {
  const t0 = performance.now();
  const s = await ingestCsv([file], { traces, runId });
  const ms = performance.now() - t0;
  if (!s.tables.episodes) throw new Error('no episodes written');
  return ms;
}

async function timeCopy(file: string, out: string): Promise<number> {
  const db = await createDb({ threads: 2 });
  try {
    return await withConnection(db, async (conn) => {
      const t0 = performance.now();
      await conn.run(`COPY (FROM read_csv(${quoteLiteral(file)})) TO ${quoteLiteral(out)} (FORMAT parquet)`);
      return performance.now() - t0;
    });
  } finally {
    db.closeSync();
  }
}

/** The 10M-row case in a child process (see the module comment). */
function runLarge(rows: number): IngestCsvBenchResult['large'] {
  const r = spawnSync(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'ingest-csv.ts'), String(rows), '--large'], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('{')) {
    console.log(`  10M-row ingest failed (exit ${r.status}): ${r.stderr.trim().split('\n').pop()}`);
    return null;
  }
  return JSON.parse(line);
}

/** Child: generate `rows`, ingest once, print the figures as one JSON line. */
async function large(rows: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'standoff-bench-csv-large-'));
  try {
    const file = join(dir, 'samples.csv');
    await generate(file, rows);
    const fileBytes = (await stat(file)).size;
    const load = load1();
    const ingestMs = await timeIngest(file, join(dir, 'traces'), 'bench-large');
    process.stdout.write(JSON.stringify({ rows, fileBytes, ingestMs: Math.round(ingestMs), peakRssMiB: mib(process.resourceUsage().maxRSS), load }) + '\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchIngestCsv(rows = 1_000_000, largeRows = 10_000_000): Promise<IngestCsvBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'standoff-bench-csv-'));
  try {
    const file = join(dir, 'samples.csv');
    await generate(file, rows);
    const fileBytes = (await stat(file)).size;
    const rounds: IngestCsvBenchResult['rounds'] = [];
    let peakRssMiB = 0;
    for (let k = 0; k < 3; k++) {
      const load = load1();
      // Cold ingest first (as a user runs it), then the COPY; the order alternates after that.
      let ingestMs: number;
      let duckdbMs: number;
      if (k % 2 === 0) {
        ingestMs = await timeIngest(file, join(dir, `traces-${k}`), 'bench-csv');
        if (k === 0) peakRssMiB = mib(process.resourceUsage().maxRSS);
        duckdbMs = await timeCopy(file, join(dir, `copy-${k}.parquet`));
      } else {
        duckdbMs = await timeCopy(file, join(dir, `copy-${k}.parquet`));
        ingestMs = await timeIngest(file, join(dir, `traces-${k}`), 'bench-csv');
      }
      rounds.push({ ingestMs: Math.round(ingestMs), duckdbMs: Math.round(duckdbMs), load });
      await rm(join(dir, `traces-${k}`), { recursive: true, force: true });
    }
    const ingestMs = Math.min(...rounds.map((r) => r.ingestMs));
    const duckdbMs = Math.min(...rounds.map((r) => r.duckdbMs));
    const ratio = Math.round((ingestMs / duckdbMs) * 100) / 100;
    const mark = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    console.log(`ingest csv: ${rows.toLocaleString('en-US')} rows, ${(fileBytes / 1048576).toFixed(1)} MiB`);
    for (const [i, r] of rounds.entries()) {
      console.log(`  round ${i + 1}: ingestCsv ${(r.ingestMs / 1000).toFixed(2)} s, DuckDB COPY read_csv -> parquet ${(r.duckdbMs / 1000).toFixed(2)} s, ratio ${(r.ingestMs / r.duckdbMs).toFixed(2)}x (load ${r.load})`);
    }
    console.log(`  best: ingestCsv ${(ingestMs / 1000).toFixed(2)} s vs DuckDB COPY ${(duckdbMs / 1000).toFixed(2)} s: ${ratio}x  [target <= 1.5x: ${mark(ratio <= 1.5)}]`);
    console.log(`  peak RSS after the ingest: ${peakRssMiB} MiB  [target < 729 MiB: ${mark(peakRssMiB < 729)}]`);
    const big = largeRows > 0 ? runLarge(largeRows) : null;
    if (big) {
      console.log(
        `  ${big.rows.toLocaleString('en-US')} rows (${(big.fileBytes / 1048576).toFixed(0)} MiB) in a process of their own: ${(big.ingestMs / 1000).toFixed(1)} s, peak RSS ${big.peakRssMiB} MiB (load ${big.load})`,
      );
    }
    return {
      rows,
      fileBytes,
      ingestMs,
      duckdbMs,
      rounds,
      ratio,
      peakRssMiB,
      large: big,
      targets: { within15x: ratio <= 1.5, under729MB: peakRssMiB < 729 },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  if (process.argv.includes('--large')) await large(n ?? 10_000_000);
  else await benchIngestCsv(n, process.argv.includes('--no-large') ? 0 : undefined);
}
