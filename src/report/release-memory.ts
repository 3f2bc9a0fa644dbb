/**
 * A full garbage collection between report steps on large stores.
 *
 * At 1e7 episodes a section leaves hundreds of megabytes of typed arrays behind (the probe
 * tables' per-state columns, ~750 MB) that V8 collects only when it decides to; the next section
 * then fills DuckDB's 1 GB on top, and the build peaked at 2.4-2.7 GB resident although no step
 * needs more than ~1.9 GB live (measured with a full collection after every step: 1,926 MB).
 * So, once the process is above `RELEASE_ABOVE_BYTES` resident, the end of a step asks V8 for a
 * full collection. It changes no output, only when memory is returned. Small stores (the demo's
 * ~400 MB) never reach the threshold and pay nothing.
 *
 * The collector is reached as Jest's leak detector reaches it: `v8.setFlagsFromString('--expose-gc')`
 * and `gc` from a new VM context (or `globalThis.gc` when node runs with `--expose-gc`). Where that
 * is not available, nothing happens.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Resident set above which a step ends with a full collection (768 MiB). */
export const RELEASE_ABOVE_BYTES = 768 * 1024 * 1024;

let collector: (() => void) | null | undefined;

function fullCollector(): (() => void) | null {
  if (collector !== undefined) return collector;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (collector = exposed as () => void);
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    collector = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    collector = null;
  }
  return collector;
}

/** A full collection when the resident set is above `aboveBytes`; true when one ran. */
export function releaseMemory(aboveBytes = RELEASE_ABOVE_BYTES): boolean {
  if (process.memoryUsage.rss() <= aboveBytes) return false;
  const gc = fullCollector();
  if (!gc) return false;
  gc();
  return true;
}
