/**
 * Child process for the atomic-write test: writes a run and SIGKILLs itself at the named point,
 * as a crash would. Usage: tsx crash-writer.ts STORE RUN_ID before-commit|after-episodes
 */
import { writeRun } from '../../src/store/write-run.ts';
import { sampleBundle } from './fixtures.ts';

const [store, runId, point] = process.argv.slice(2);
const die = () => {
  process.kill(process.pid, 'SIGKILL');
};
await writeRun(store!, sampleBundle(runId!), {
  beforeCommit: point === 'before-commit' ? die : undefined,
  afterRename: point === 'after-episodes' ? (t) => (t === 'episodes' ? die() : undefined) : undefined,
});
