/**
 * Worker thread of `parallelBootstrapStatistic`: computes the blocks of resamples it claims from
 * the shared counter (`Atomics.add`) into the shared replicate array, then says "done". The
 * arithmetic is `computeBlocks` from src/stats; this file only wires it to the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
// The kernel's own module, not the stats barrel: the worker loads only what it runs.
import { computeBlocks, type BlockInput } from '../stats/resample-blocks.ts';

interface Job {
  input: BlockInput;
  counter: Int32Array;
  blocks: number;
  out: Float64Array;
}

const job = workerData as Job;
try {
  computeBlocks(job.input, () => {
    const b = Atomics.add(job.counter, 0, 1);
    return b < job.blocks ? b : -1;
  }, job.out);
  parentPort!.postMessage({ ok: true });
} catch (err) {
  parentPort!.postMessage({ ok: false, message: (err as Error).message });
}
