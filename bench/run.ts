/**
 * `npm run bench [-- NAME...]`: every performance figure, printed with its target and its ratio
 * against a baseline measured in the same run (scipy / NLTK through Debian's python3, or a plain
 * DuckDB COPY). Benches write to temp directories, use only 127.0.0.1, and never assert: they
 * report. Names: stats, alpha, ingest-csv, ingest-inspect, runner, report (default: all).
 * A machine that is busy with other work gives noisy figures; the ratios are the stable part.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchBootstrap } from './stats-bootstrap.ts';
import { benchAlpha } from './stats-alpha.ts';
import { benchIngestCsv } from './ingest-csv.ts';
import { benchIngestInspect } from './ingest-inspect.ts';
import { benchRunner } from './runner.ts';
import { benchReport } from './report.ts';

const BENCHES: Record<string, () => Promise<unknown>> = {
  stats: () => benchBootstrap(),
  alpha: () => benchAlpha(),
  'ingest-csv': () => benchIngestCsv(),
  'ingest-inspect': () => benchIngestInspect(),
  runner: () => benchRunner(),
  report: () => benchReport(),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const w of wanted) {
  if (!BENCHES[w]) {
    process.stderr.write(`bench: unknown bench "${w}"; known: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exit(2);
  }
}
const results: Record<string, unknown> = {};
for (const [name, run] of Object.entries(BENCHES)) {
  if (wanted.length && !wanted.includes(name)) continue;
  process.stdout.write(`\n== ${name}\n`);
  const t0 = performance.now();
  results[name] = await run();
  process.stdout.write(`(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}
mkdirSync('bench/out', { recursive: true });
writeFileSync(join('bench/out', 'results.json'), JSON.stringify(results, (_k, v) => (typeof v === 'bigint' ? Number(v) : ArrayBuffer.isView(v) ? undefined : v), 2) + '\n');
process.stdout.write('\nwrote bench/out/results.json\n');
