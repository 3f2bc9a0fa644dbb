/**
 * One denominator convention (issue 24, point 3): on a run with truncated episodes
 * (`--allow-truncated`) and ambiguous states, the end-of-run summary, `ci` and the report print
 * the same fractions. Truncated episodes are invalid: incorrect in action accuracy, not gathered,
 * alignment 0 (Standoff O1's convention for a trajectory with no valid decision), and reported
 * apart; ambiguous states leave the probe-decision denominator as in the report.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.ts';

const SUBJECT = 'sim:hasty+faults=length@0.15';
let dir: string;
let summary: string;

const frac = (label: string, line: string) => line.match(new RegExp(`${label} [0-9.]+% \\(([0-9.]+/\\d+)\\)`))?.[1];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-denominators-'));
  const r = runCli(['run', '--preset', 'demo', '--subjects', SUBJECT, '--allow-truncated', '100', '--traces', join(dir, 't'), '--progress', 'none']);
  expect(r.code, r.stderr).toBe(0);
  summary = r.stdout.split('\n').find((l) => l.trim().startsWith(`${SUBJECT}:`))!;
  expect(summary).toBeDefined();
}, 120_000);

describe('one denominator convention', () => {
  it("the run summary uses O1's convention: truncated episodes stay in every denominator; ambiguous states leave the probe decision's", () => {
    const truncated = Number(summary.match(/invalid \d+ \((\d+) truncated\)/)![1]);
    expect(truncated).toBeGreaterThan(0);
    // 18 scenarios x 5 epochs: 60 non-ambiguous samples and 90 in all, truncated ones included
    // (the example gave 12/60, 10/90, 44/90 under protocol 2; the counts moved with the
    // neutral prompt's text, the denominators did not).
    expect(frac('action', summary)).toMatch(/^\d+\/60$/);
    expect(frac('evidence', summary)).toMatch(/^\d+\/90$/);
    expect(frac('alignment', summary)).toMatch(/^\d+(\.5)?\/90$/);
    expect(frac('probe decision', summary)).toMatch(/\/60$/);
  });

  it('ci, validate and the report print the same fractions as the summary', () => {
    const t = join(dir, 't');
    const ci = (metric: string) => {
      const r = runCli(['ci', 'exact', '--traces', t, '--metric', metric, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const [g] = JSON.parse(r.stdout);
      return `${g.successes}/${g.trials}`;
    };
    const want = { action: ci('policy_action'), evidence: ci('gathered_evidence'), alignment: ci('alignment'), 'probe decision': ci('probe_decision') };
    for (const [label, f] of Object.entries(want)) expect(frac(label, summary), label).toBe(f);
    const v = runCli(['validate', '--traces', t, '--allow-truncated', '100']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/ok {3}truncated_episodes: \d+ episode\(s\) cut off at the token limit/);
    const out = join(dir, 'report');
    const b = runCli(['report', 'build', '--traces', t, '--out', out, '--resamples', '200']);
    expect(b.code, b.stderr).toBe(0);
    const md = readFileSync(join(out, 'REPORT.md'), 'utf8');
    const resultsRow = md.slice(md.indexOf('## 2. Results per subject')).split('\n').find((l) => l.startsWith(`| ${SUBJECT} | `))!;
    for (const f of [want.evidence, want.action, want.alignment]) expect(resultsRow).toContain(`(${f})`);
    expect(md).toContain(`(${want['probe decision']})`);
    // reported apart
    expect(md).toMatch(/\*\*Cut off at the token limit:\*\* \d+ episodes/);
  });
});
