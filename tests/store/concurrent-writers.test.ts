/**
 * Stress: several `standoff` processes write into one store at once (CSV ingests, an Inspect
 * ingest, a simulated run, and an ingest that collides with a committed run). Before the store
 * lock, a writer's cleanup deleted the other's staging directory: one process printed `wrote run B`
 * and exited 0 while run B did not exist, others died with ENOENT / ENOTEMPTY. Now every process
 * that exits 0 has its run complete (every table's row count equals the same write done alone),
 * every other process exits 4 with its run absent, the committed run nobody was allowed to touch
 * is byte-for-byte unchanged, and nothing is left behind (no `.tmp-*`, `.trash-*` or lock file).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun, listCommittedRuns } from '../../src/store/write-run.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { TABLE_NAMES } from '../../src/schema/tables.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import { runEvaluation } from '../../src/runner/run.ts';
import { presetConfig } from '../../src/runner/config.ts';
import { sampleBundle, hashTree } from '../helpers/fixtures.ts';
import { ROOT } from '../helpers/cli.ts';

const CSV = join(ROOT, 'tests/fixtures/csv/episodes.csv');
const EVAL = join(ROOT, 'tests/fixtures/inspect/log_streaming.eval');

type Kind = 'csv' | 'inspect' | 'run';
type Counts = Record<string, number>;

async function countsOf(store: string, runId: string): Promise<Counts> {
  const s = await openStore(store, { runs: [runId] });
  try {
    const out: Counts = {};
    for (const t of TABLE_NAMES) out[t] = Number((await query(s.conn, `SELECT count(*) AS n FROM "${t}"`)).rows[0]!.n);
    return out;
  } finally {
    s.close();
  }
}

function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin', 'standoff.js'), ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => done({ code: code ?? -1, stderr }));
  });
}

/** Row counts of each kind of write done alone, in a store of its own. */
const reference = {} as Record<Kind, Counts>;
beforeAll(async () => {
  const ref = mkdtempSync(join(tmpdir(), 'standoff-concurrent-ref-'));
  await ingestCsv([CSV], { traces: ref, runId: 'csv' });
  await ingestInspect([EVAL], { traces: ref, runId: 'inspect' });
  await runEvaluation({ config: presetConfig('smoke'), runId: 'run', traces: ref, progress: 'none', log: () => undefined });
  for (const k of ['csv', 'inspect', 'run'] as const) reference[k] = await countsOf(ref, k);
}, 120_000);

describe('concurrent writers into one store', () => {
  for (const round of [1, 2]) {
    it(`round ${round}: every process that exits 0 has its run complete; no other run is touched`, async () => {
      const store = join(mkdtempSync(join(tmpdir(), 'standoff-concurrent-')), 'traces');
      await writeRun(store, sampleBundle('keep', 3));
      const keep = () => TABLE_NAMES.map((t) => hashTree(join(store, t, 'run_id=keep'))).join();
      const keepBefore = keep();

      const jobs: { runId: string; kind: Kind | 'collide'; args: string[] }[] = [
        ...['c1', 'c2', 'c3', 'c4'].map((id) => ({ runId: id, kind: 'csv' as const, args: ['ingest', 'csv', CSV, '--run-id', id, '--traces', store] })),
        { runId: 'i1', kind: 'inspect', args: ['ingest', 'inspect', EVAL, '--run-id', 'i1', '--traces', store] },
        { runId: 'r1', kind: 'run', args: ['run', '--preset', 'smoke', '--run-id', 'r1', '--traces', store, '--progress', 'none'] },
        { runId: 'keep', kind: 'collide', args: ['ingest', 'csv', CSV, '--run-id', 'keep', '--traces', store] },
      ];
      const results = await Promise.all(jobs.map((j) => cli(j.args)));

      const committed = await listCommittedRuns(store);
      for (const [i, j] of jobs.entries()) {
        const r = results[i]!;
        if (j.kind === 'collide') {
          expect(r.code, r.stderr).toBe(4);
          expect(r.stderr).toMatch(/run "keep" already exists/);
          continue;
        }
        if (r.code === 0) {
          expect(committed, `${j.runId} exited 0`).toContain(j.runId);
          expect(await countsOf(store, j.runId), `${j.runId} is complete`).toEqual(reference[j.kind]);
        } else {
          // Waiting for the lock is bounded; a refusal is a store error and leaves no trace of the run.
          expect(r.code, r.stderr).toBe(4);
          expect(committed).not.toContain(j.runId);
        }
      }
      // With the default 60 s wait, nobody should have been turned away.
      expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0, 4]);
      expect(keep()).toBe(keepBefore);
      expect(committed).toEqual(['c1', 'c2', 'c3', 'c4', 'i1', 'keep', 'r1']);
      expect(readdirSync(store).filter((n) => n.startsWith('.') && n !== '.journal')).toEqual([]);
      expect(readdirSync(join(store, '.journal'))).toEqual([]);
    }, 300_000);
  }
});
