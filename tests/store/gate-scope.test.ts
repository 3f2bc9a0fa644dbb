/**
 * Issue 21 point 5, one gate and one scope: `standoff validate` without `--run` checks every run
 * of the store, as `report build` does, and both give one verdict (exit 3 when any check fails);
 * the report's gate is a list grouped by run, failures first, and a passing gate is one line;
 * `--allow-missing N` allows blank score cells (and fails at N - 1); `ci exact|bootstrap --metric`
 * counts not-measured samples exactly as the report does, on a CSV store with blank cells.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, ROOT } from '../helpers/cli.ts';
import { MODELS, naturalCsv, naturalRows, withMissingCorrect } from '../helpers/natural-csv.ts';

const INSPECT = ['input-task-graded-fact.eval', 'log_read_sample.eval', 'log_streaming.eval', 'mmlu-summary-choices.eval'].map((f) => join(ROOT, 'tests/fixtures/inspect', f));
let dir: string;
const blankStore = () => join(dir, 'blank');
const inspectStore = () => join(dir, 'inspect');
/** Blank `correct` cells the file has (every 97th data row), counted from the file itself. */
let blanks: { model: string }[];

function build(traces: string, out: string, extra: string[] = []) {
  const r = runCli(['report', 'build', '--traces', traces, '--out', join(dir, out), '--resamples', '200', '--quiet', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return { md: readFileSync(join(dir, out, 'REPORT.md'), 'utf8'), json: JSON.parse(readFileSync(join(dir, out, 'results.json'), 'utf8')) };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-gate-scope-'));
  const csv = withMissingCorrect(naturalCsv(naturalRows()));
  writeFileSync(join(dir, 'blank.csv'), csv);
  blanks = csv
    .split('\n')
    .slice(1)
    .filter((l) => l !== '' && l.split(',')[3] === '')
    .map((l) => ({ model: l.split(',')[0]! }));
  const a = runCli(['ingest', 'csv', join(dir, 'blank.csv'), '--traces', blankStore(), '--run-id', 'r1', '--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality']);
  expect(a.code, a.stderr).toBe(0);
  const b = runCli(['ingest', 'inspect', ...INSPECT, '--traces', inspectStore()]);
  expect(b.code, b.stderr).toBe(0);
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('one scope: validate without --run checks every run, as the report does', { timeout: 240_000 }, () => {
  it('the four Inspect logs: the same verdict, exit 3, and a gate grouped by run with failures first', () => {
    const { md, json } = build(inspectStore(), 'inspect-report');
    const v = runCli(['validate', '--traces', inspectStore(), '--json']);
    const vj = JSON.parse(v.stdout);
    expect(vj.runs.length).toBe(INSPECT.length);
    expect(vj.ok).toBe(json.gate.passed);
    expect(v.code).toBe(vj.ok ? 0 : 3);
    // The report's checks are validate's checks, run by run.
    const fromValidate = vj.runs.flatMap((r: { runId: string; checks: { name: string; ok: boolean; detail: string }[] }) => r.checks.map((c) => ({ run: r.runId, ok: c.ok, detail: c.detail })));
    const fromReport = json.gate.checks.filter((c: { run: string | null }) => c.run !== null).map((c: { run: string; passed: boolean; detail: string }) => ({ run: c.run, ok: c.passed, detail: c.detail }));
    expect(fromReport).toEqual(fromValidate);
    expect(json.gate.passed).toBe(false); // these logs hold errored and unscored samples
    const gate = md.slice(md.indexOf('> **Structural gate'), md.indexOf('\n\n', md.indexOf('> **Structural gate')));
    const lines = gate.split('\n');
    // Grouped by run: one line per run, failed runs first; no run-on paragraph.
    const runLines = lines.filter((l) => /^> - run `/.test(l));
    expect(runLines.length).toBe(INSPECT.length);
    const failedAt = runLines.map((l) => /FAILED/.test(l));
    expect(failedAt.indexOf(false) === -1 || failedAt.lastIndexOf(true) < failedAt.indexOf(false)).toBe(true);
    for (const l of lines) expect(l.length).toBeLessThan(1200);
    // The verdict line is said once.
    expect(md.match(/Structural gate: FAILED/g)!.length).toBe(1);
  });

  it('a passing gate is one line, and a store of several runs says it once', () => {
    const one = build(join(ROOT, 'traces'), 'demo-report');
    const gate = one.md.split('\n').filter((l) => l.startsWith('>') && /Structural gate/.test(l));
    expect(gate).toEqual([`> **Structural gate: PASSED** (${one.json.gate.checks.length}/${one.json.gate.checks.length} checks; each check in the run summary below).`]);
    expect(one.md.split('\n').filter((l) => l.startsWith('> ') && /gate/i.test(l)).length).toBe(1);
    // Point 9: the demo's subjects are simulated, and the first screen says so under the gate.
    expect(one.md.split('\n')[4]).toBe('> **Simulated subjects**: sim:careful, sim:hasty, sim:thorough (every run) are simulated, not real model output: these numbers show the method, not any model.');
  });
});

describe('--allow-missing and not measured, counted one way', { timeout: 240_000 }, () => {
  it('blank cells fail the gate; --allow-missing N passes it, N - 1 does not (validate and report)', () => {
    const n = blanks.length;
    expect(n).toBeGreaterThan(0);
    const fail = runCli(['validate', '--traces', blankStore()]);
    expect(fail.code).toBe(3);
    expect(fail.stdout).toMatch(new RegExp(`FAIL required_scorers: ${n} missing score\\(s\\)`));
    const pass = runCli(['validate', '--traces', blankStore(), '--allow-missing', String(n)]);
    expect(pass.code, pass.stdout).toBe(0);
    expect(pass.stdout).toMatch(new RegExp(`${n} scores not measured, allowed by --allow-missing ${n}`));
    expect(runCli(['validate', '--traces', blankStore(), '--allow-missing', String(n - 1)]).code).toBe(3);
    expect(runCli(['validate', '--traces', blankStore(), '--allow-missing', '-1']).code).toBe(2);
    expect(build(blankStore(), 'blank-report').json.gate.passed).toBe(false);
    const allowed = build(blankStore(), 'blank-allowed', ['--allow-missing', String(n)]).json;
    expect([allowed.gate.passed, allowed.options.allow_missing]).toEqual([true, n]);
    expect(build(blankStore(), 'blank-short', ['--allow-missing', String(n - 1)]).json.gate.passed).toBe(false);
  });

  it('ci exact and ci bootstrap --metric correct count the blank cells as the report does', () => {
    const { json } = build(blankStore(), 'blank-ci');
    const rows = json.generic.results.filter((x: { scorer: string }) => x.scorer === 'correct');
    const exact = runCli(['ci', 'exact', '--traces', blankStore(), '--metric', 'correct', '--json']);
    expect(exact.code, exact.stderr).toBe(0);
    const e = JSON.parse(exact.stdout)[0];
    const sum = (f: (x: { n: number; sum: number; not_measured: number }) => number) => rows.reduce((a: number, x: { n: number; sum: number; not_measured: number }) => a + f(x), 0);
    expect([e.trials, e.successes, e.not_measured]).toEqual([sum((x) => x.n), sum((x) => x.sum), sum((x) => x.not_measured)]);
    expect(e.not_measured).toBe(blanks.length);
    const boot = runCli(['ci', 'bootstrap', '--traces', blankStore(), '--metric', 'correct', '--by', 'subject_model', '--resamples', '200', '--json']);
    expect(boot.code, boot.stderr).toBe(0);
    for (const b of JSON.parse(boot.stdout)) {
      const model = b.group.subject_model;
      const mine = rows.find((x: { subject: string }) => x.subject === model);
      expect([b.n, b.not_measured], model).toEqual([mine.n, mine.not_measured]);
      expect(b.not_measured, model).toBe(blanks.filter((x) => x.model === model).length);
    }
    expect(MODELS.every((m) => rows.some((x: { subject: string }) => x.subject === m))).toBe(true);
  });
});
