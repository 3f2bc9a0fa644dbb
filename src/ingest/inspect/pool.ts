/**
 * Worker threads for `ingest inspect`: the sample units of a `.eval` log are cut into jobs of
 * {@link JOB_UNITS} consecutive units; idle workers take the next job (each reads its units by
 * offset, inflates, parses, maps, checks and stages them: `worker.ts`), while the calling thread
 * takes the results back **in unit order** and writes them (the run writer, DuckDB). A job's
 * results depend only on the file and its unit range, never on which worker ran it or when, so
 * the rows, their order, the problems and the store are the same for any number of workers (the
 * tests compare the Parquet files of 0 and 2 workers). At most {@link AHEAD} jobs per worker wait
 * unread, which bounds memory.
 *
 *   const pool = InspectPool.start(2);
 *   for await (const r of pool.scan(file, limits, units, ctx)) ...
 *   await pool.close();
 */
import { once } from 'node:events';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { dataError } from '../../errors.ts';
import { workerUrl } from '../../paths.ts';
import type { ZipLimits } from './zip.ts';
import type { JobResult, StagedBlock, UnitContext, UnitJob, UnitResult, WireResult } from './unit.ts';

/** Consecutive units per job. */
export const JOB_UNITS = 32;
/** Jobs per worker dispatched ahead of the one the calling thread waits for. */
const AHEAD = 4;
/** How long `close` waits for a worker asked to close before terminating it. */
const CLOSE_GRACE_MS = 30_000;
/** Worker threads at most, by default. */
export const MAX_INGEST_WORKERS = 4;

/**
 * Worker threads for `--workers` when a caller wants them all: the available cores, at most
 * {@link MAX_INGEST_WORKERS}. Not the default: measured on the 2-core development machine, the
 * compiled CLI ingesting 20,000 replicated fixture samples took 9.4 s wall / 7.6-7.9 s CPU in one
 * thread and 10.5-11.5 s / 9.4-10.4 s with 2 workers (docs/bring-your-own-results.md).
 */
export const availableIngestWorkers = (): number =>
  Math.max(1, Math.min(MAX_INGEST_WORKERS, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length));

const revive = (w: WireResult): UnitResult => {
  if ('error' in w && w.error) return { member: w.member, error: dataError(w.error.code, w.error.message) };
  const s = w as Exclude<WireResult, { error: unknown }>;
  const { invalid, ...rest } = s;
  return invalid ? { ...rest, invalid: dataError(invalid.code, invalid.message) } : rest;
};

const WORKER_ENTRY = workerUrl('inspect-worker', new URL('./worker-boot.mjs', import.meta.url));

interface Pending {
  job: UnitJob;
  resolve: (r: JobResult) => void;
  reject: (e: Error) => void;
}

export class InspectPool {
  private readonly idle: Worker[] = [];
  private readonly queue: Pending[] = [];
  private readonly running = new Map<Worker, Pending>();
  private readonly exited = new Set<Worker>();
  private failure: Error | null = null;
  private nextId = 0;

  private constructor(private readonly workers: Worker[]) {
    for (const w of workers) {
      w.on('message', (m: { id: number; results?: WireResult[]; block?: StagedBlock; failed?: string }) => this.done(w, m));
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        this.exited.add(w);
        if (this.running.has(w) || code !== 0) this.fail(new Error(`ingest worker exited with code ${code}`));
      });
      this.idle.push(w);
    }
  }

  /** Starts `threads` workers. */
  static start(threads: number): InspectPool {
    const workers: Worker[] = [];
    for (let i = 0; i < threads; i++) workers.push(new Worker(WORKER_ENTRY, { execArgv: [] }));
    return new InspectPool(workers);
  }

  get size(): number {
    return this.workers.length;
  }

  private done(w: Worker, m: { id: number; results?: WireResult[]; block?: StagedBlock; failed?: string }): void {
    const p = this.running.get(w);
    this.running.delete(w);
    this.idle.push(w);
    if (p) {
      if (m.results) p.resolve({ results: m.results, block: m.block! });
      else p.reject(new Error(`ingest worker: ${m.failed}`));
    }
    this.pump();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.running.values()) p.reject(err);
    this.running.clear();
    for (const p of this.queue.splice(0)) p.reject(err);
  }

  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const w = this.idle.shift()!;
      const p = this.queue.shift()!;
      this.running.set(w, p);
      w.postMessage(p.job);
    }
  }

  private run(job: Omit<UnitJob, 'id'>): Promise<JobResult> {
    if (this.failure) return Promise.reject(this.failure);
    const r = new Promise<JobResult>((resolve, reject) => this.queue.push({ job: { ...job, id: this.nextId++ }, resolve, reject }));
    r.catch(() => undefined); // awaited in order by scan; this only keeps a later job's failure from going unhandled
    this.pump();
    return r;
  }

  /**
   * The results of units [0, units) of a `.eval` file, in unit order, each job's followed by the
   * staged lines of its valid units (`{ block }`; written only when every unit so far was clean,
   * and then `_unit` is the unit's index, as the calling thread counts it). Stopping early (a `break`
   * or `return` in the caller's loop) drops the jobs not yet started.
   */
  async *scan(file: string, limits: ZipLimits | undefined, units: number, ctx: UnitContext): AsyncGenerator<UnitResult | { block: StagedBlock }> {
    const jobs = Math.ceil(units / JOB_UNITS);
    const inFlight: Promise<JobResult>[] = [];
    let next = 0;
    const fill = () => {
      while (next < jobs && inFlight.length < AHEAD * this.workers.length) {
        const from = next * JOB_UNITS;
        inFlight.push(this.run({ file, limits, ctx, from, to: Math.min(units, from + JOB_UNITS), units }));
        next++;
      }
    };
    try {
      for (let j = 0; j < jobs; j++) {
        fill();
        const { results, block } = await inFlight.shift()!;
        for (const w of results) yield revive(w);
        yield { block };
      }
    } finally {
      // Jobs of this file not yet started are dropped (the caller stopped reading).
      const mine = new Set(this.queue.filter((p) => p.job.file === file));
      if (mine.size > 0) this.queue.splice(0, this.queue.length, ...this.queue.filter((p) => !mine.has(p)));
    }
  }

  /**
   * Stops the workers without cutting a job short: jobs not yet started are dropped, running jobs
   * finish, then each worker is asked to close (it closes its log and its port, and its thread
   * ends by itself). `Worker.terminate()` on a thread in the middle of a job can abort the whole
   * process (nodejs/node#38418: a native callback meets the stopped isolate), so it is only the
   * fallback for a worker that has not ended {@link CLOSE_GRACE_MS} after being asked. Resolves
   * to the number of workers it had to terminate.
   */
  async close(): Promise<{ terminated: number }> {
    const dropped = new Error('ingest worker pool closed');
    for (const p of this.queue.splice(0)) p.reject(dropped);
    const ended = await Promise.all(this.workers.map((w) => this.closeWorker(w)));
    return { terminated: ended.filter((x) => x === 'terminated').length };
  }

  private async closeWorker(w: Worker): Promise<'closed' | 'terminated'> {
    if (this.exited.has(w)) return 'closed';
    const exit = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    // A running job ends with its result (the pool's listener, registered first, has taken it) or with the thread.
    while (this.running.has(w) && !this.exited.has(w)) await Promise.race([once(w, 'message').catch(() => undefined), exit]);
    w.postMessage({ close: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_GRACE_MS)));
    try {
      if ((await Promise.race([exit, late])) !== 'late') return 'closed';
      await w.terminate();
      return 'terminated';
    } finally {
      clearTimeout(timer);
    }
  }
}
