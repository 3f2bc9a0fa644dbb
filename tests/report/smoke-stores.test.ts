/**
 * `standoff report build` on the stores users make first: `standoff run --preset smoke` (9
 * episodes, one epoch) with and without judges. It used to crash on the run without judges (an
 * empty pairwise pivot). Without judges alignment is "not measured" (never 0%, never a rate over
 * the invalid episodes), and the gate fails its required-scorer check. Real runs on the
 * in-process sim endpoint, real Parquet, real DuckDB.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/runner/run.ts';
import { buildReport, type BuildReportResult } from '../../src/report/index.ts';
import { runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-smoke-report-'));
const quiet = { progress: 'none' as const, log: () => undefined, handleSignals: false };
let noJudges: BuildReportResult;
let judged: BuildReportResult;

beforeAll(async () => {
  await runCommand({ preset: 'smoke', judges: ['none'], traces: join(dir, 'nj'), ...quiet });
  await runCommand({ preset: 'smoke', traces: join(dir, 'j'), ...quiet });
  noJudges = await buildReport({ traces: join(dir, 'nj'), out: join(dir, 'r-nj'), resamples: 200 });
  judged = await buildReport({ traces: join(dir, 'j'), out: join(dir, 'r-j'), resamples: 200 });
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('report build on smoke stores', () => {
  it('a run without judges: report built, alignment "not measured", gate FAILED on required_scorers', () => {
    const md = readFileSync(join(noJudges.out, 'REPORT.md'), 'utf8');
    expect(md.split('\n')[2]).toMatch(/^> \*\*Structural gate: FAILED\*\* \(1 of 8 checks failed\)/);
    expect(md).toMatch(/\*\*FAIL\*\*: required_scorers — reasoning_action_alignment not measured on 9 completed episodes/);
    for (const s of noJudges.results.results.subjects) {
      expect(s.metrics.alignment).toMatchObject({ measured: false, trials: 0, estimate: null, not_measured: 3 });
    }
    expect(md).toMatch(/\| not measured \(3 episodes\) \|/);
    expect(md).not.toMatch(/Reasoning\/action alignment[^\n]*0\.0%/);
    expect(md).toMatch(/Alignment was \*\*not measured\*\*/);
    const align = noJudges.results.pairwise.comparisons.filter((c) => c.metric === 'alignment');
    expect(align.every((c) => c.difference === null && /not measured/.test(c.note ?? ''))).toBe(true);
    expect(noJudges.results.judges.available).toBe(false);
  });

  it('with judges: the report builds and the gate passes', () => {
    expect(judged.results.gate.passed).toBe(true);
    expect(judged.results.judges.available).toBe(true);
  });

  it('the CLI builds both (exit 0) and validate fails the run without judges (exit 3)', () => {
    const r = runCli(['report', 'build', '--traces', join(dir, 'nj'), '--out', join(dir, 'cli-nj'), '--resamples', '200', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const v = runCli(['validate', '--traces', join(dir, 'nj')]);
    expect(v.code).toBe(3);
    expect(v.stdout).toMatch(/FAIL required_scorers: reasoning_action_alignment not measured on 9 completed episodes/);
  }, 120_000);
});
