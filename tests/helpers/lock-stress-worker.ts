/**
 * A writer for tests/store/lock-stress.test.ts, run as a child process (`node --import tsx`,
 * IPC). For each `{ round, store }` message it takes the store lock three times, as an ingest
 * does (cleanup, staging, commit), and inside each: creates `<store>/inside` exclusively (an
 * EEXIST there means two holders at once), records a commit file, yields, removes `inside`.
 * Replies `{ round, ok }` or `{ round, error }` (the StandoffError's code and message).
 */
import { open, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withStoreLock } from '../../src/store/lock.ts';

const id = process.argv[2] ?? String(process.pid);
const waitMs = Number(process.env.LOCK_STRESS_WAIT_MS ?? 30_000);
const pollMs = Number(process.env.LOCK_STRESS_POLL_MS ?? 5);

async function critical(store: string, name: string): Promise<void> {
  const fh = await open(join(store, 'inside'), 'wx').catch((err) => {
    throw Object.assign(new Error(`two holders at once: ${(err as Error).message}`), { code: 'test.overlap' });
  });
  await fh.close();
  await writeFile(join(store, 'commits', name), id);
  await new Promise((r) => setImmediate(r));
  await unlink(join(store, 'inside'));
}

process.on('message', (msg: { round: number; store: string }) => {
  const run = async () => {
    for (let k = 0; k < 3; k++) await withStoreLock(msg.store, () => critical(msg.store, `${msg.round}-${id}-${k}`), { waitMs, pollMs, onWait: () => undefined });
  };
  run().then(
    () => process.send!({ round: msg.round, ok: true }),
    (err: { code?: string; message?: string }) => process.send!({ round: msg.round, ok: false, error: `${err.code}: ${err.message}` }),
  );
});
process.send!({ ready: true });
