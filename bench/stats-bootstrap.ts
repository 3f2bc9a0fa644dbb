/**
 * Bootstrap benchmarks: the four figures from the stats brief, each timed in Standoff and, on the
 * same data, in scipy.stats.bootstrap (Debian's /usr/bin/python3; skipped with a note when absent).
 *
 *   bootstrap 0/1 mean n=1e6 x 10000     bootstrapMean (exact binomial path)
 *   paired 0/1 n=1e5 x 10000             pairedBootstrap (exact multinomial path)
 *   cluster 1e4 clusters x 10 epochs     clusterBootstrap, 0/1 scores (exact path) and continuous
 *                                        scores (sums-and-counts resampler)
 *   median n=1e5 x 10000                 bootstrap() with a statistic reading the middle of the
 *                                        (sorted) resample, and with a generic quickselect median
 *
 * scipy runs method='percentile', vectorized, in batches (batch=None would materialise e.g. 10^10
 * indices). Where a full scipy run would take minutes it is run with fewer resamples and scaled
 * linearly (its cost is linear in the resamples); the line says so. Peak memory is the process's
 * maxRSS (process.resourceUsage(), a lifetime peak, so it is reported as "peak so far") plus the
 * RSS growth during the run.
 *
 * Whole-process figures (issue 17), run first: `standoff ci bootstrap --input FILE --value v`
 * (the compiled CLI, bin/standoff.js, both cores by default) against a Python process that reads
 * the same CSV with numpy and runs scipy.stats.bootstrap(vectorized=True, batch=1000), each timed
 * from start to exit with its peak RSS (GNU time's %M; for Standoff the whole process, worker
 * threads included):
 *
 *   continuous mean n=1e5 x 10000   target >= 10x faster than scipy
 *   median n=1e5 x 10000            target >= 8x faster than scipy
 *   BCa over percentile (mean, median, same run)   target <= +20%
 *   peak RSS of every Standoff run  target < 300 MB
 *
 * Standoff runs are the median of BENCH_BOOT_ROUNDS (default 3) runs, scipy one run (~20-30 s
 * each) unless BENCH_BOOT_SCIPY_ROUNDS says otherwise. The load average is printed: other work
 * on the machine inflates every figure, the same-run ratios less so.
 *
 * Usage (bench/run.ts calls it): `await benchBootstrap()`; `benchBootstrap({ scipy: false })`
 * skips the Python comparisons.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrap } from '../src/stats/bootstrap.ts';
import { bootstrapMean } from '../src/stats/bootstrap-mean.ts';
import { clusterBootstrap } from '../src/stats/cluster-bootstrap.ts';
import { pairedBootstrap } from '../src/stats/paired-bootstrap.ts';
import { createXoshiro128 } from '../src/stats/xoshiro128.ts';

export interface BenchBootstrapOptions {
  /** Run the scipy comparisons (default true). */
  scipy?: boolean;
  /** Where lines go (default console.log). */
  log?: (line: string) => void;
}

export interface BootstrapBenchFigure {
  name: string;
  seconds: number;
  scipySeconds: number | null;
  scipyNote: string;
  peakRssMB: number;
  rssGrowthMB: number;
}

const PYTHON = '/usr/bin/python3';
const RESAMPLES = 10_000;

function scipyAvailable(): boolean {
  if (!fs.existsSync(PYTHON)) return false;
  try {
    execFileSync(PYTHON, ['-c', 'import scipy.stats, numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs a Python snippet that prints elapsed seconds; the snippet gets the file paths as sys.argv[1:]. */
function runScipy(code: string, files: string[]): number {
  const out = execFileSync(PYTHON, ['-c', code, ...files], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return Number(out.trim().split('\n').pop());
}

function writeF64(dir: string, name: string, x: Float64Array): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, Buffer.from(x.buffer, x.byteOffset, x.byteLength));
  return file;
}

function measure(run: () => void): { seconds: number; peakRssMB: number; rssGrowthMB: number } {
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  run();
  const seconds = (performance.now() - t0) / 1000;
  const rss1 = process.memoryUsage().rss;
  return { seconds, peakRssMB: process.resourceUsage().maxRSS / 1024, rssGrowthMB: Math.max(0, rss1 - rss0) / 2 ** 20 };
}

const fmt = (s: number) => (s >= 10 ? s.toFixed(1) : s >= 0.1 ? s.toFixed(2) : s.toFixed(3));

const PY_HEAD = 'import sys, time, numpy as np, scipy.stats as st\n';

const ROOT = path.join(import.meta.dirname, '..');
const GNU_TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const median3 = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];

/** One whole process: wall seconds and peak RSS (MB, GNU time %M; null without GNU time). */
function processRun(cmd: string, args: string[]): { seconds: number; rssMB: number | null } {
  const t0 = performance.now();
  const r = GNU_TIME
    ? spawnSync(GNU_TIME, ['-f', 'STANDOFF_RSS_KB %M', cmd, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 })
    : spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`bench: ${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  const m = /STANDOFF_RSS_KB (\d+)/.exec(r.stderr ?? '');
  return { seconds, rssMB: m ? Number(m[1]) / 1024 : null };
}

export interface WholeProcessFigure {
  name: string;
  standoffSeconds: number;
  standoffRssMB: number | null;
  scipySeconds: number | null;
  scipyRssMB: number | null;
  ratio: number | null;
}

/** The issue-17 whole-process figures (see the file comment). */
export function benchWholeProcess(log: (line: string) => void, withScipy: boolean, dir: string): WholeProcessFigure[] {
  const rounds = Number(process.env.BENCH_BOOT_ROUNDS ?? 3);
  const scipyRounds = Number(process.env.BENCH_BOOT_SCIPY_ROUNDS ?? 1);
  const bin = path.join(ROOT, 'bin', 'standoff.js');
  if (!fs.existsSync(path.join(ROOT, 'dist', 'workers', 'bootstrap-worker.js'))) throw new Error('bench: run npm run build first (dist/workers/bootstrap-worker.js is missing)');
  const g = createXoshiro128(1717);
  const n = 100_000;
  const lines = ['v'];
  for (let i = 0; i < n; i++) lines.push((-Math.log(1 - g.uniform())).toFixed(6));
  const csv = path.join(dir, 'continuous.csv');
  fs.writeFileSync(csv, lines.join('\n') + '\n');
  log(`whole process, n = 1e5 continuous values (${csv}), 10000 resamples, ${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const standoff = (statistic: string, method: string) => {
    const runs = Array.from({ length: rounds }, () => processRun(process.execPath, [bin, 'ci', 'bootstrap', '--input', csv, '--value', 'v', '--statistic', statistic, '--method', method, '--resamples', String(RESAMPLES), '--seed', '1', '--format', 'json']));
    return { seconds: median3(runs.map((r) => r.seconds)), rssMB: runs.every((r) => r.rssMB !== null) ? Math.max(...runs.map((r) => r.rssMB!)) : null };
  };
  const scipy = (fn: string) => {
    const code = `import sys, numpy as np, scipy.stats as st\nx = np.loadtxt(sys.argv[1], skiprows=1)\nr = st.bootstrap((x,), ${fn}, n_resamples=${RESAMPLES}, method='percentile', vectorized=True, batch=1000, random_state=1)\nprint(r.confidence_interval.low, r.confidence_interval.high)`;
    const runs = Array.from({ length: scipyRounds }, () => processRun(PYTHON, ['-c', code, csv]));
    return { seconds: median3(runs.map((r) => r.seconds)), rssMB: runs.every((r) => r.rssMB !== null) ? Math.max(...runs.map((r) => r.rssMB!)) : null };
  };
  const out: WholeProcessFigure[] = [];
  const mb = (x: number | null) => (x === null ? '?' : `${x.toFixed(0)} MB`);
  const row = (name: string, st: { seconds: number; rssMB: number | null }, sp: { seconds: number; rssMB: number | null } | null, target: number | null) => {
    const ratio = sp ? sp.seconds / st.seconds : null;
    const vs = sp ? `scipy ${fmt(sp.seconds)} s, ${mb(sp.rssMB)}: ${ratio!.toFixed(1)}x faster${target ? ` [target >= ${target}x: ${ratio! >= target ? 'ok' : 'MISSED'}]` : ''}` : 'scipy skipped';
    log(`${name}: standoff ${fmt(st.seconds)} s, peak RSS ${mb(st.rssMB)} [< 300 MB: ${st.rssMB === null ? '?' : st.rssMB < 300 ? 'ok' : 'MISSED'}] (${vs})`);
    out.push({ name, standoffSeconds: st.seconds, standoffRssMB: st.rssMB, scipySeconds: sp?.seconds ?? null, scipyRssMB: sp?.rssMB ?? null, ratio });
  };
  for (const [statistic, fn, target] of [['mean', 'np.mean', 10], ['median', 'np.median', 8]] as const) {
    const perc = standoff(statistic, 'percentile');
    row(`ci bootstrap --statistic ${statistic} n=1e5 x 10000 percentile (whole process)`, perc, withScipy ? scipy(fn) : null, target);
    const bca = standoff(statistic, 'bca');
    row(`ci bootstrap --statistic ${statistic} n=1e5 x 10000 bca (whole process)`, bca, null, null);
    const extra = bca.seconds / perc.seconds - 1;
    log(`  BCa over percentile (${statistic}): ${extra >= 0 ? '+' : ''}${(100 * extra).toFixed(0)}% [target <= +20%: ${extra <= 0.2 ? 'ok' : 'MISSED'}]`);
  }
  return out;
}

export async function benchBootstrap(options: BenchBootstrapOptions = {}): Promise<BootstrapBenchFigure[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const withScipy = options.scipy !== false && scipyAvailable();
  if (options.scipy !== false && !withScipy) log(`bootstrap bench: ${PYTHON} with scipy not found, scipy ratios skipped`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'standoff-bench-boot-'));
  const figures: BootstrapBenchFigure[] = [];
  const g = createXoshiro128(2024);
  const whole = benchWholeProcess(log, withScipy, dir);

  const report = (
    name: string,
    m: { seconds: number; peakRssMB: number; rssGrowthMB: number },
    scipy: (() => { seconds: number; note: string }) | null,
  ): void => {
    let scipySeconds: number | null = null;
    let scipyNote = 'scipy skipped';
    if (withScipy && scipy) {
      const s = scipy();
      scipySeconds = s.seconds;
      scipyNote = `scipy ${fmt(s.seconds)} s${s.note}, ${fmt(s.seconds / m.seconds)}x faster`;
    }
    log(`${name}: ${fmt(m.seconds)} s (${scipyNote}); peak RSS so far ${m.peakRssMB.toFixed(0)} MB, +${m.rssGrowthMB.toFixed(0)} MB during the run`);
    figures.push({ name, seconds: m.seconds, scipySeconds, scipyNote, peakRssMB: m.peakRssMB, rssGrowthMB: m.rssGrowthMB });
  };

  try {
    // JIT warm-up on small inputs
    bootstrapMean([1, 0, 1, 1, 0], { seed: 1, resamples: 200 });
    bootstrapMean([0.1, 0.5, 0.7, 0.2, 0.9], { seed: 1, resamples: 200 });
    bootstrap([1, 2, 3, 4, 5], (x) => x[2], { seed: 1, resamples: 200 });

    // 1. 0/1 mean, n = 1e6
    {
      const n = 1_000_000;
      const x = new Float64Array(n);
      for (let i = 0; i < n; i++) x[i] = g.uniform() < 0.37 ? 1 : 0;
      const m = measure(() => bootstrapMean(x, { seed: 1, resamples: RESAMPLES }));
      const file = writeF64(dir, 'mean01.f64', x);
      const R = 200;
      report('bootstrap 0/1 mean n=1e6 x 10000', m, () => ({
        seconds:
          runScipy(
            `${PY_HEAD}x = np.fromfile(sys.argv[1])\nt = time.time()\nst.bootstrap((x,), np.mean, n_resamples=${R}, method='percentile', vectorized=True, batch=20, random_state=1)\nprint((time.time() - t) * ${RESAMPLES / R})`,
            [file],
          ),
        note: ` est. from ${R} resamples x${RESAMPLES / R}`,
      }));
    }

    // 2. paired 0/1, n = 1e5
    {
      const n = 100_000;
      const a = new Float64Array(n);
      const b = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const hard = g.uniform();
        a[i] = g.uniform() < 0.9 - 0.6 * hard ? 1 : 0;
        b[i] = g.uniform() < 0.85 - 0.6 * hard ? 1 : 0;
      }
      const m = measure(() => pairedBootstrap(a, b, { seed: 1, resamples: RESAMPLES }));
      const fa = writeF64(dir, 'pa.f64', a);
      const fb = writeF64(dir, 'pb.f64', b);
      const R = 1000;
      report('bootstrap paired 0/1 n=1e5 x 10000', m, () => ({
        seconds: runScipy(
          `${PY_HEAD}a = np.fromfile(sys.argv[1]); b = np.fromfile(sys.argv[2])\nt = time.time()\nst.bootstrap((a, b), lambda a, b, axis=-1: np.mean(a - b, axis=axis), paired=True, n_resamples=${R}, method='percentile', vectorized=True, batch=100, random_state=1)\nprint((time.time() - t) * ${RESAMPLES / R})`,
          [fa, fb],
        ),
        note: ` est. from ${R} resamples x${RESAMPLES / R}`,
      }));
    }

    // 3. cluster: 1e4 clusters x 10 epochs, 0/1 and continuous scores
    for (const kind of ['0/1', 'continuous'] as const) {
      const C = 10_000;
      const E = 10;
      const values = new Float64Array(C * E);
      const ids = new Int32Array(C * E);
      for (let c = 0; c < C; c++) {
        const p = g.uniform();
        for (let e = 0; e < E; e++) {
          values[c * E + e] = kind === '0/1' ? (g.uniform() < p ? 1 : 0) : p + 0.2 * g.uniform();
          ids[c * E + e] = c;
        }
      }
      const idList = Array.from(ids);
      const m = measure(() => clusterBootstrap(values, idList, { seed: 1, resamples: RESAMPLES }));
      const sums = new Float64Array(C);
      const counts = new Float64Array(C).fill(E);
      for (let i = 0; i < values.length; i++) sums[ids[i]] += values[i];
      const fs1 = writeF64(dir, 'csum.f64', sums);
      const fc = writeF64(dir, 'ccount.f64', counts);
      report(`bootstrap cluster ${kind} 1e4 clusters x 10 epochs x 10000`, m, () => ({
        seconds: runScipy(
          `${PY_HEAD}s = np.fromfile(sys.argv[1]); c = np.fromfile(sys.argv[2])\nt = time.time()\nst.bootstrap((s, c), lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis), paired=True, n_resamples=${RESAMPLES}, method='percentile', vectorized=True, batch=1000, random_state=1)\nprint(time.time() - t)`,
          [fs1, fc],
        ),
        note: ' on the same per-cluster sums and counts',
      }));
    }

    // 4. median, n = 1e5
    {
      const n = 100_000;
      const x = new Float64Array(n);
      for (let i = 0; i < n; i++) x[i] = -Math.log(1 - g.uniform());
      const file = writeF64(dir, 'median.f64', x);
      let scipyMedian: number | null = null;
      const scipyRun = () => {
        scipyMedian ??= runScipy(
          `${PY_HEAD}x = np.fromfile(sys.argv[1])\nt = time.time()\nst.bootstrap((x,), np.median, n_resamples=${RESAMPLES}, method='percentile', vectorized=True, batch=200, random_state=1)\nprint(time.time() - t)`,
          [file],
        );
        return { seconds: scipyMedian, note: '' };
      };
      const sortedMedian = (s: Float64Array) => (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
      const m1 = measure(() => bootstrap(x, sortedMedian, { seed: 1, resamples: RESAMPLES }));
      report('bootstrap median n=1e5 x 10000 (statistic reads the sorted resample)', m1, scipyRun);
      const m2 = measure(() => bootstrap(x, quickselectMedian, { seed: 1, resamples: RESAMPLES }));
      report('bootstrap median n=1e5 x 10000 (generic quickselect median)', m2, scipyRun);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return Object.assign(figures, { wholeProcess: whole });
}

/** Median by Hoare quickselect, not relying on the input order (rearranges its argument). */
function quickselectMedian(a: Float64Array): number {
  const n = a.length;
  const select = (k: number): number => {
    let lo = 0;
    let hi = n - 1;
    while (hi > lo) {
      const pivot = a[(lo + hi) >> 1];
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i <= j) {
          const t = a[i];
          a[i] = a[j];
          a[j] = t;
          i++;
          j--;
        }
      }
      if (k <= j) hi = j;
      else if (k >= i) lo = i;
      else break;
    }
    return a[k];
  };
  const h = n >> 1;
  if (n % 2 === 1) return select(h);
  const upper = select(h);
  let lower = -Infinity;
  for (let i = 0; i < h; i++) if (a[i] > lower) lower = a[i];
  return (lower + upper) / 2;
}
