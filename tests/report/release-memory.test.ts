/**
 * releaseMemory (src/report/release-memory.ts): below its threshold it does nothing; above it a
 * full collection runs and garbage is gone (a WeakRef to an unreachable 64 MB buffer is cleared).
 */
import { describe, expect, it } from 'vitest';
import { releaseMemory } from '../../src/report/release-memory.ts';

function garbage(): WeakRef<ArrayBuffer> {
  const b = new ArrayBuffer(64 * 1024 * 1024);
  new Uint8Array(b).fill(1);
  return new WeakRef(b);
}

describe('releaseMemory', () => {
  it('below the threshold: no collection', () => {
    expect(releaseMemory(Number.POSITIVE_INFINITY)).toBe(false);
  });

  it('above the threshold: a full collection clears an unreachable buffer', async () => {
    const ref = garbage();
    // A WeakRef's target is kept until the job that created (or last dereferenced) it ends, so
    // it is not looked at before the collection; booleans keep a failure from printing 64 MB.
    await new Promise((r) => setTimeout(r, 0));
    expect(releaseMemory(0)).toBe(true);
    expect(ref.deref() === undefined).toBe(true);
  });
});
