/**
 * `bootstrapStatistic` on several cores: the blocks of resamples (src/stats/resample-blocks.ts)
 * are claimed one at a time from a shared counter by the calling thread and by `threads - 1`
 * worker threads, each writing its blocks' replicates into one shared array. A block's replicates
 * depend only on (seed, block index), so the result is byte-identical for any number of threads
 * (tests/compute/parallel-bootstrap.test.ts checks it). Thread plumbing only: the statistics, the
 * streams and the interval are src/stats.
 *
 *   await parallelBootstrapStatistic(values, { name: 'median' }, { seed: 1 }, { threads: 2 })
 *
 * Threads: default `defaultThreads()` = available cores, at most 8. Work too small to gain from a
 * thread (under ~4 million index draws, a few ms) runs in the calling thread.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerUrl } from '../paths.ts';
import {
  blockCount,
  computeBlocks,
  finishBootstrapStatistic,
  prepareBootstrapStatistic,
  type BootstrapStatisticOptions,
  type BootstrapStatisticResult,
  type StatisticSpec,
} from '../stats/index.ts';

export const MAX_THREADS = 8;
const MIN_DRAWS_PER_THREAD = 4_000_000;

export const defaultThreads = (): number => Math.max(1, Math.min(MAX_THREADS, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length));

const WORKER_ENTRY = workerUrl('bootstrap-worker', new URL('./bootstrap-worker-boot.mjs', import.meta.url));

function shared<T extends Float64Array | Int32Array>(Ctor: { new (b: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, from: ArrayLike<number> | number): T {
  const len = typeof from === 'number' ? from : from.length;
  const a = new Ctor(new SharedArrayBuffer(Math.max(1, len) * Ctor.BYTES_PER_ELEMENT));
  if (typeof from !== 'number') a.set(from);
  return a;
}

export interface ParallelOptions {
  /** Threads including the calling one (default `defaultThreads()`). */
  threads?: number;
}

export async function parallelBootstrapStatistic(
  values: Float64Array | readonly number[],
  spec: StatisticSpec,
  options: BootstrapStatisticOptions,
  parallel: ParallelOptions = {},
): Promise<BootstrapStatisticResult> {
  const p = prepareBootstrapStatistic(values, spec, options);
  const R = p.opts.resamples;
  const K = blockCount(R);
  // index draws, plus the per-value weights of a clustered resample
  const draws = R * (p.input.units + (p.input.unit ? p.input.sorted.length : 0));
  const threads = Math.max(1, Math.min(parallel.threads ?? defaultThreads(), K, Math.floor(draws / MIN_DRAWS_PER_THREAD) || 1));
  if (threads === 1) {
    const reps = new Float64Array(R);
    let b = 0;
    computeBlocks(p.input, () => (b < K ? b++ : -1), reps);
    return finishBootstrapStatistic(p, reps);
  }
  const input = {
    ...p.input,
    sorted: shared(Float64Array, p.input.sorted),
    unit: p.input.unit ? shared(Int32Array, p.input.unit) : null,
  };
  const counter = shared(Int32Array, 1);
  const out = shared(Float64Array, R);
  const workers: Promise<void>[] = [];
  for (let t = 1; t < threads; t++) {
    workers.push(
      new Promise<void>((resolve, reject) => {
        const w = new Worker(WORKER_ENTRY, { workerData: { input, counter, blocks: K, out }, execArgv: [] });
        let done = false;
        w.once('message', (m: { ok: boolean; message?: string }) => {
          done = true;
          if (m.ok) resolve();
          else reject(new Error(`bootstrap worker: ${m.message}`));
        });
        w.once('error', reject);
        w.once('exit', (code) => {
          if (!done) reject(new Error(`bootstrap worker exited with code ${code} before finishing`));
        });
      }),
    );
  }
  // The calling thread claims blocks too (while the workers start up).
  computeBlocks(input, () => {
    const b = Atomics.add(counter, 0, 1);
    return b < K ? b : -1;
  }, out);
  await Promise.all(workers);
  return finishBootstrapStatistic(p, Float64Array.from(out));
}
