/**
 * One gate (issue 11 point 4): `standoff validate` and the report's structural gate are the same
 * function with the same defaults, so they give the same verdict, check by check, on the same run:
 * a Standoff run (the committed demo; it requires the three O1 scorers), a researcher's CSV (it
 * requires the scorers it holds, `correct` and `quality`) and every real Inspect log in
 * tests/fixtures/inspect (from Inspect AI's own test suite; see its README).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { ingestInspect } from '../../src/ingest/ingest-inspect.ts';
import { buildAnyReport } from '../../src/report/index.ts';
import { validateRun } from '../../src/store/validate-run.ts';
import { naturalCsv, naturalRows } from '../helpers/natural-csv.ts';
import { runCli, ROOT } from '../helpers/cli.ts';

const INSPECT = ['input-task-graded-fact.eval', 'log_read_sample.eval', 'log_streaming.eval', 'mmlu-summary-choices.eval'].map((f) => join(ROOT, 'tests/fixtures/inspect', f));
let dir: string;
let csvStore: string;
let inspectStore: string;
let inspectRuns: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-one-gate-'));
  const csv = join(dir, 'results.csv');
  writeFileSync(csv, naturalCsv(naturalRows()));
  csvStore = join(dir, 'csv-store');
  await ingestCsv([csv], {
    traces: csvStore,
    runId: 'r1',
    flags: { subject: 'model', item: 'sample_id', epoch: 'epoch', scores: ['correct', 'quality'], judgeColumns: ['judge_a', 'judge_b', 'judge_c'], judgedScorer: 'quality' },
  });
  inspectStore = join(dir, 'inspect-store');
  inspectRuns = (await ingestInspect(INSPECT, { traces: inspectStore })).runs.map((r) => r.runId);
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The report's gate rows and validate's checks for one run, in the same shape. */
async function bothGates(traces: string, runId: string) {
  const v = await validateRun(traces, { runId });
  const out = join(dir, `report-${runId}`);
  const { results } = await buildAnyReport({ traces, runs: [runId], out, resamples: 200 });
  const report = results.gate.checks.map((c: { check: string; passed: boolean; detail: string }) => ({ name: c.check, ok: c.passed, detail: c.detail }));
  return { v, report, reportPassed: results.gate.passed as boolean };
}

describe('validate and the report give the same verdict', { timeout: 240_000 }, () => {
  it('a CSV run requires the scorers it holds: both pass, check by check', async () => {
    const { v, report, reportPassed } = await bothGates(csvStore, 'r1');
    expect(v.checks.map(({ name, ok, detail }) => ({ name, ok, detail }))).toEqual(report);
    expect([v.ok, reportPassed]).toEqual([true, true]);
    expect(v.checks.find((c) => c.name === 'required_scorers')!.detail).toBe('correct, quality present on all 1200 episodes and measured on every completed one');
    const cli = runCli(['validate', '--traces', csvStore]);
    expect(cli.code, cli.stderr).toBe(0);
  });

  it('every real Inspect log: the same checks and the same verdict', async () => {
    expect(inspectRuns.length).toBe(INSPECT.length);
    for (const runId of inspectRuns) {
      const { v, report, reportPassed } = await bothGates(inspectStore, runId);
      expect(v.checks.map(({ name, ok, detail }) => ({ name, ok, detail })), runId).toEqual(report);
      expect(v.ok, runId).toBe(reportPassed);
      const cli = runCli(['validate', '--traces', inspectStore, '--run', runId]);
      expect(cli.code, `${runId}: ${cli.stderr}`).toBe(v.ok ? 0 : 3);
    }
  });

  it('the Standoff demo run requires the three O1 scorers and the scenarios x epochs it records', async () => {
    const traces = join(ROOT, 'traces');
    const v = await validateRun(traces);
    const { report, reportPassed } = await bothGates(traces, v.runId);
    expect(v.checks.map(({ name, ok, detail }) => ({ name, ok, detail }))).toEqual(report);
    expect(v.ok).toBe(reportPassed);
    expect(v.checks.find((c) => c.name === 'required_scorers')!.detail).toMatch(/^gathered_evidence, policy_compliant_action, reasoning_action_alignment present on all/);
  });
});
