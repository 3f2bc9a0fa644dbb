/**
 * `report build` on a store that holds only a paired-probe import (`standoff ingest csv --probes`,
 * the long file shaped like the paper's data in tests/fixtures/csv/): the report says there are no
 * episodes and gives the probe sections, rebuilds byte-identically, and `--exclude-states` works
 * on it. A store without episodes and without probes still stops with "holds no episodes".
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.ts';
import { writeRun } from '../../src/store/write-run.ts';
import type { RunRow } from '../../src/schema/tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-probes-only-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = join(dir, 'traces');

beforeAll(() => {
  const csv = join(ROOT, 'tests/fixtures/csv/paired-probes-long.csv');
  const map = join(ROOT, 'tests/fixtures/csv/paired-probes-long.map.json');
  const r = runCli(['ingest', 'csv', csv, '--map', map, '--traces', store, '--run-id', 'paper']);
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

describe('report build on a paired-probe import', () => {
  it('reports the probe sections and says there are no episodes; byte-identical from build to build', () => {
    const out = join(dir, 'r1');
    const r = runCli(['report', 'build', '--traces', store, '--out', out, '--resamples', '500']);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    expect(md).toContain('**The store holds no episodes**');
    expect(md).toMatch(/\| `paper` \| paired-probes-long \| csv \| success \| Clef, JEV \| 3 \| 6 \|/);
    expect(md).toContain('## 2. Paired probes: reading vs acting');
    expect(md).toContain('| Clef | 3 (3) | 33.3% (1/3) [0.8, 90.6] | 33.3% (1/3) [0.8, 90.6] | 33.3% (1/3) [0.8, 90.6] | 0.0% (0/3) [0.0, 70.8] |');
    // The import holds the raw decision only: composition and the ladder's other steps were not run.
    expect(md).toMatch(/\| Clef \| 66\.7% \(2\/3\) \[9\.4, 99\.2\] \| \*not run\* \| \*not run\* \| \*not run\* \|/);
    expect(md).not.toContain('Structural gate');
    const res = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(res.report).toBe('probes');
    expect(res.probes.available).toBe(true);
    expect(res.probes.ladder.conditions_run).toEqual(['raw']);
    const again = join(dir, 'r2');
    expect(runCli(['report', 'build', '--traces', store, '--out', again, '--resamples', '500']).code).toBe(0);
    for (const f of ['REPORT.md', 'results.json', 'index.html', 'figures/probes.svg']) expect(readFileSync(join(again, f)), f).toEqual(readFileSync(join(out, f)));
  }, 120_000);

  it('--exclude-states applies to the import', () => {
    const flagged = join(dir, 'flagged.txt');
    writeFileSync(flagged, 'alf-001\n');
    const out = join(dir, 'r3');
    const r = runCli(['report', 'build', '--traces', store, '--out', out, '--resamples', '500', '--exclude-states', flagged]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(out, 'REPORT.md'), 'utf8')).toContain('Sensitivity to flagged states');
  }, 120_000);

  it('a run with neither episodes nor probes still has nothing to report', async () => {
    const empty = join(dir, 'empty');
    const run = { run_id: 'none', created_at: '2026-01-01T00:00:00.000Z', source: 'csv', suite: 's', status: 'success', config: '{}', seed: null, epochs: null, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null } as RunRow;
    await writeRun(empty, { run });
    const r = runCli(['report', 'build', '--traces', empty, '--out', join(dir, 'r4')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/run none holds no episodes; nothing to report/);
  }, 60_000);
});
