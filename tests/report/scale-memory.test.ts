/**
 * Issue 28: every report section runs on a 1e6-episode store (4 subjects x 50,000 scenarios x 5
 * epochs, with ~3M judgments, 4.5M probe answers and 1M probe decisions) in a process whose
 * JavaScript heap is capped at HEAP_MB. A section that held one JavaScript value per episode (an
 * array of a million rows, a row object per state answer) runs out of heap and the child dies;
 * sections that read per-cluster aggregates and patterns from SQL pass. DuckDB's own memory is
 * native (the report caps it at 1 GB) and is not part of the cap.
 *
 * `standoff judges` (every sample listed, as csv), `standoff agreement`, `standoff ci
 * exact|bootstrap|paired --metric` and `standoff probes --concentration` run as whole CLI
 * processes under the same heap cap.
 *
 * Cost: the store is written once for the file (~50 s on an idle 2-core machine); each section
 * then runs in a fresh child (2-20 s each idle). The whole file takes ~3 minutes idle.
 * STANDOFF_SCALE_STORE=DIR reuses a store of the same shape (the bench's cached
 * `standoff-bench-report-1000000-20261129-v2` in the temp directory) and skips the write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';

/** The heap cap: a million JS numbers in a plain array alone is ~8-16 MB, a million row objects ~200 MB. */
const HEAP_MB = 160;
const EPISODES = 1_000_000;
const root = mkdtempSync(join(tmpdir(), 'standoff-scale-'));
/** STANDOFF_SCALE_STORE: an existing store of this shape (e.g. the bench's cached one) instead of writing one. */
const store = process.env.STANDOFF_SCALE_STORE ?? join(root, 'traces');
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(async () => {
  if (process.env.STANDOFF_SCALE_STORE) return;
  await writeSyntheticStore(store, { episodes: EPISODES, seed: 20261129, subjects: ['sim:hasty', 'sim:careful', 'sim:thorough', 'sim:steady'] });
}, 900_000);

const runSection = (section: string, heapMb: number) =>
  spawnSync(process.execPath, [`--max-old-space-size=${heapMb}`, '--import', 'tsx', join(import.meta.dirname, '../helpers/run-section.ts'), store, section], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });

describe(`report sections on ${EPISODES.toLocaleString('en-US')} episodes with a ${HEAP_MB} MB heap`, () => {
  for (const section of ['summary', 'results', 'grounded', 'slices', 'pairwise', 'ranking', 'judges', 'probes', 'episodes']) {
    it(section, () => {
      const r = runSection(section, HEAP_MB);
      expect(r.stderr.includes('heap out of memory') ? 'heap out of memory' : r.status === 0 ? '' : r.stderr.split('\n').slice(-5).join('\n')).toBe('');
      expect(r.stdout).toMatch(new RegExp(`^ok ${section} \\d+`));
    }, 900_000);
  }

  // The commands over the store, whole process (compiled CLI), output to a file: `judges` lists
  // every judged sample (streamed), `agreement` bootstraps over verdict patterns.
  const BIN = join(import.meta.dirname, '../../bin/standoff.js');
  const runCli = (name: string, args: string[]) => {
    const out = join(root, `${name}.out`);
    const fd = openSync(out, 'w');
    try {
      const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, BIN, ...args, '--traces', store], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      return { ...r, out };
    } finally {
      closeSync(fd);
    }
  };
  const countLines = async (file: string) => {
    let n = 0;
    for await (const chunk of createReadStream(file)) for (const b of chunk as Buffer) if (b === 10) n++;
    return n;
  };
  const ok = (r: { status: number | null; stderr: string }) => (r.stderr.includes('heap out of memory') ? 'heap out of memory' : r.status === 0 ? '' : r.stderr.split('\n').slice(-5).join('\n'));

  it('standoff judges: totals from verdict patterns, and every sample listed', async () => {
    const t = runCli('judges-totals', ['judges', '--totals', '--format', 'json']);
    expect(ok(t)).toBe('');
    const { totals } = JSON.parse(readFileSync(t.out, 'utf8'));
    expect(totals.samples).toBeGreaterThan(900_000);
    const r = runCli('judges-csv', ['judges', '--format', 'csv']);
    expect(ok(r)).toBe('');
    expect(await countLines(r.out)).toBe(totals.samples + 1);
  }, 900_000);

  it('standoff agreement', () => {
    const r = runCli('agreement', ['agreement', '--format', 'json']);
    expect(ok(r)).toBe('');
    expect(JSON.parse(readFileSync(r.out, 'utf8'))).toMatchObject({ raters: 3, resamples: 10_000 });
  }, 900_000);

  it('standoff ci exact, bootstrap and paired --metric: values and cluster codes as numbers, pairs formed in SQL', () => {
    // Before: the clustered paths read one cluster-id string per observation (and paired, per pair
    // key Maps over every subject) and died at this cap on this store.
    const pair = ['--a', 'sim:careful', '--b', 'sim:hasty'];
    for (const [name, args] of [
      ['ci-exact', ['ci', 'exact', '--metric', 'policy_action', '--by', 'subject_model']],
      ['ci-bootstrap', ['ci', 'bootstrap', '--metric', 'policy_action', '--by', 'subject_model']],
      ['ci-paired', ['ci', 'paired', '--metric', 'policy_action', ...pair]],
    ] as const) {
      const r = runCli(name, [...args, '--format', 'json']);
      expect([name, ok(r)]).toEqual([name, '']);
      const out = JSON.parse(readFileSync(r.out, 'utf8'));
      if (name === 'ci-paired') {
        expect(out).toMatchObject({ a: 'sim:careful', b: 'sim:hasty', sampling: 'clustered' });
        expect(out.clusters).toBeGreaterThan(30_000);
      } else expect(out).toHaveLength(4);
    }
  }, 900_000);

  it('standoff probes --concentration: tables, ladder and concentration streamed part by part', () => {
    // Before: the ladder's per-state rows came back as row objects (one per subject x scenario) and died at this cap.
    const r = runCli('probes', ['probes', '--concentration', '--format', 'json']);
    expect(ok(r)).toBe('');
    const out = JSON.parse(readFileSync(r.out, 'utf8'));
    expect(out.groups).toHaveLength(4);
    expect(out.ladder.subjects).toHaveLength(4);
    expect(out.concentration.errors).toBeGreaterThan(10_000);
  }, 900_000);

  it('the cap can fail: reading one row object per episode dies at the same cap', () => {
    const r = runSection('rows-per-episode', HEAP_MB);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/heap out of memory|Allocation failed/);
  }, 900_000);
});
