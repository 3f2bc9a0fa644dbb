/**
 * `npm run bench [-- NAME...]`: every performance figure, printed with its target and its ratio
 * against a baseline measured in the same run (scipy / NLTK through Debian's python3, or a plain
 * DuckDB COPY). Each bench runs in its own process, so memory figures are not inflated by the
 * benches before it. Benches write to temp directories, use only 127.0.0.1, and never assert:
 * they report. Names: stats, alpha, ingest-csv, ingest-inspect, ingest-inspect-large, ingest-inspect-fixtures, runner, report,
 * cli, decide (default: all).
 * A machine busy with other work gives noisy figures; the same-run ratios are the stable part.
 * Results: bench/out/<name>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixedCostLine } from './report-fixed-cost.ts';

const BENCHES: Record<string, () => Promise<unknown>> = {
  stats: async () => (await import('./stats-bootstrap.ts')).benchBootstrap(),
  alpha: async () => (await import('./stats-alpha.ts')).benchAlpha(),
  'ingest-csv': async () => (await import('./ingest-csv.ts')).benchIngestCsv(),
  'ingest-inspect': async () => (await import('./ingest-inspect.ts')).benchIngestInspect(),
  'ingest-inspect-large': async () => (await import('./ingest-inspect-large.ts')).benchIngestInspectLarge(),
  'ingest-inspect-fixtures': async () => (await import('./ingest-inspect-fixtures.ts')).benchIngestInspectFixtures(),
  runner: async () => (await import('./runner.ts')).benchRunner(),
  report: async () => (await import('./report.ts')).benchReport(),
  cli: async () => (await import('./cli.ts')).benchCli(),
  decide: async () => (await import('./decide.ts')).benchDecide(),
};

const yesNo = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** One-line figures for benches whose functions return numbers without printing them. */
const SUMMARIES: Record<string, (r: any) => string[]> = {
  'ingest-inspect': (r) => [
    `ingest inspect .eval: ${r.samples} samples (${(r.fileBytes / 1e6).toFixed(1)} MB) in ${r.seconds} s = ${r.samplesPerSecond} samples/s [target >= ${r.target}: ${yesNo(r.samplesPerSecond >= r.target)}]; dry run ${r.dryRunSamplesPerSecond}/s; peak RSS ${r.peakRssMb} MB`,
  ],
  'ingest-inspect-fixtures': (r) => [
    `ingest inspect, the shared real logs replicated (${r.logs} logs, ${r.samples} samples): ${r.seconds} s = ${r.samplesPerSecond} samples/s, ${r.samplesPerCpuSecond} per CPU second [target >= ${r.target}: ${yesNo(r.samplesPerSecond >= r.target)}]; peak RSS ${r.peakRssMb} MB`,
    `  floor (same files, same run: inflate + CRC + JSON.parse of every sample, one thread): ${r.floor.seconds} s = ${r.floor.samplesPerSecond}/s, ${r.floor.samplesPerCpuSecond} per CPU second; ingest / floor ${r.floorRatio}x wall, ${r.floorCpuRatio}x CPU [15,000/s here needs <= ${r.floorRatioLimit}x: ${yesNo(r.floorRatio <= r.floorRatioLimit)}]; load ${r.load.before.toFixed(1)} -> ${r.load.after.toFixed(1)} (2 cores, shared)`,
    `  the default (one thread) above; the same ingest with --workers ${r.workers}: ${r.withWorkers.seconds} s = ${r.withWorkers.samplesPerSecond} samples/s, ${r.withWorkers.samplesPerCpuSecond} per CPU second`,
  ],
  runner: (r) => [
    `runner demo preset (270 episodes + probes + 3 judges, zero-latency sim): ${(r.demo.wallMs / 1000).toFixed(1)} s [target < 20 s: ${yesNo(r.demo.wallMs < 20000)}]`,
    `runner throughput c=${r.throughput.concurrency}, ${r.throughput.latencyMs} ms latency: ${r.throughput.steadyRequestsPerSec} req/s steady = ${(100 * r.throughput.steadyEfficiency).toFixed(0)}% of ideal ${r.throughput.idealPerSec}/s (whole run ${(100 * r.throughput.efficiency).toFixed(0)}%) [target >= 80%: ${yesNo(r.throughput.steadyEfficiency >= 0.8)}]`,
    `runner overhead per episode (c=1, model time excluded): ${r.overhead.overheadPerEpisodeMs} ms [target < 5 ms: ${yesNo(r.overhead.overheadPerEpisodeMs < 5)}]`,
    ...(r.memory
      ? [`runner memory, ${r.memory.episodes} episodes: RSS start ${r.memory.rssStartMb} MB, peak ${r.memory.rssPeakMb} MB, end ${r.memory.rssAtMb['100%']} MB [target < 500 MB: ${yesNo(r.memory.rssPeakMb < 500)}]`]
      : []),
  ],
  report: (r) => [
    `report build, demo (${r.demo.episodes} episodes): ${(r.demo.buildMs / 1000).toFixed(1)} s (+${(r.demo.importMs / 1000).toFixed(1)} s module load), peak RSS ${r.demo.peakRssMb} MB [target < 5 s: ${yesNo(r.demo.buildMs + r.demo.importMs < 5000)}]`,
    `report build, ${r.large.episodes.toLocaleString('en')} episodes: ${(r.large.buildMs / 1000).toFixed(1)} s, peak RSS ${r.large.peakRssMb} MB [targets < 60 s, < 2048 MB: ${yesNo(r.large.buildMs < 60000)}, ${yesNo(r.large.peakRssMb < 2048)}]`,
    `  DuckDB floor (same store, same run): ${(r.large.floorMs / 1000).toFixed(1)} s; build / floor ${r.large.floorRatio.toFixed(1)}x [target <= ${r.large.floorLimit}x at 1e6: ${yesNo(r.large.floorRatio <= r.large.floorLimit)}]; load average ${r.load.before.toFixed(1)} -> ${r.load.after.toFixed(1)} (2 cores, shared)`,
    `  CPU time (load inflates wall time, not this): build ${(r.large.cpuMs / 1000).toFixed(1)} s, floor ${(r.large.floorCpuMs / 1000).toFixed(1)} s: ${r.large.floorCpuRatio.toFixed(1)}x`,
    fixedCostLine(r),
    ...r.large.floor.map((f: { name: string; ms: number; cpuMs: number; steps: string[] }) => `    floor ${(f.ms / 1000).toFixed(1)} s (cpu ${(f.cpuMs / 1000).toFixed(1)} s)  ${f.name}  (report steps: ${f.steps.join('; ')})`),
    ...r.large.steps.map((s: { step: string; atMs: number; cpuMs: number }, i: number, all: { atMs: number; cpuMs: number }[]) => `    step  ${((s.atMs - (i ? all[i - 1].atMs : 0)) / 1000).toFixed(1)} s (cpu ${((s.cpuMs - (i ? all[i - 1].cpuMs : 0)) / 1000).toFixed(1)} s)  ${s.step}`),
    ...(r.commands ?? []).map((c: { name: string; ms: number; peakRssMb: number; exit: number | null; load: number }) => `    command ${c.name}: ${(c.ms / 1000).toFixed(1)} s, peak RSS ${c.peakRssMb} MB, exit ${c.exit} (load ${c.load.toFixed(1)}) [targets < 60 s, < 2048 MB: ${yesNo(c.exit === 0 && c.ms < 60_000 && c.peakRssMb < 2048)}]`),
  ],
};

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : ArrayBuffer.isView(x) ? undefined : x), 2) + '\n';

const args = process.argv.slice(2);
if (args[0] === '--child') {
  const name = args[1]!;
  const t0 = performance.now();
  const result = await BENCHES[name]!();
  for (const line of SUMMARIES[name]?.(result) ?? []) process.stdout.write(line + '\n');
  mkdirSync('bench/out', { recursive: true });
  writeFileSync(join('bench/out', `${name}.json`), json(result));
  process.stdout.write(`(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s; bench/out/${name}.json)\n`);
} else {
  const wanted = args.filter((a) => !a.startsWith('-'));
  for (const w of wanted) {
    if (!BENCHES[w]) {
      process.stderr.write(`bench: unknown bench "${w}"; known: ${Object.keys(BENCHES).join(', ')}\n`);
      process.exit(2);
    }
  }
  let failed = 0;
  for (const name of Object.keys(BENCHES)) {
    if (wanted.length && !wanted.includes(name)) continue;
    process.stdout.write(`\n== ${name}\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--child', name], { stdio: 'inherit' });
    if (r.status !== 0) failed++;
  }
  process.exit(failed ? 1 : 0);
}
