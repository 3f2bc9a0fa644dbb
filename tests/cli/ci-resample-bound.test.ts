/**
 * The work bound of `ci bootstrap` and `ci paired` (#28, src/analysis/ci-resample-bound.ts):
 * above the draw budget (resamples x units drawn) the commands run floor(budget / units)
 * resamples, at least 1,000, and say so in JSON (`resamples_requested`, `mc_se_lower`,
 * `mc_se_upper`) and in the table's note; the B resamples are the first B of an unbounded run
 * (the same interval as `--resamples B`). Under the budget nothing changes. The exact multinomial
 * path (0/1 data) draws no units and is never cut.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { boundedResamples, drawBudget, quantileMcSe, MIN_RESAMPLES, RESAMPLE_DRAWS } from '../../src/analysis/ci-resample-bound.ts';

const TRACES = join(ROOT, 'traces');
let scores: string;
let long: string;

const json = (args: string[], env?: Record<string, string>) => {
  const r = runCli([...args, '--format', 'json'], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-ci-bound-'));
  // 200 clusters x 3 continuous values: the cluster bootstrap resamples indices (200 draws a resample).
  const rows = ['item,score'];
  const pairs = ['item,epoch,arm,score'];
  let s = 7;
  const u = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < 200; i++) {
    const base = u();
    for (let e = 0; e < 3; e++) {
      rows.push(`q${i},${(base + u() / 3).toFixed(4)}`);
      pairs.push(`q${i},${e},A,${(base + u() / 3).toFixed(4)}`, `q${i},${e},B,${(base + u() / 4).toFixed(4)}`);
    }
  }
  scores = join(dir, 'scores.csv');
  writeFileSync(scores, rows.join('\n') + '\n');
  long = join(dir, 'long.csv');
  writeFileSync(long, pairs.join('\n') + '\n');
});

describe('the draw budget', () => {
  it('bounds resamples x units, with a floor of 1,000, and states the Monte-Carlo SE of a quantile', () => {
    expect(RESAMPLE_DRAWS).toBe(200_000_000);
    expect(boundedResamples(10_000, 18)).toBe(10_000);
    expect(boundedResamples(10_000, 20_000)).toBe(10_000);
    expect(boundedResamples(10_000, 50_000)).toBe(4_000);
    expect(boundedResamples(10_000, 500_000)).toBe(MIN_RESAMPLES);
    expect(boundedResamples(500, 500_000)).toBe(500);
    expect(boundedResamples(10_000, 0)).toBe(10_000);
    // sqrt(0.025 * 0.975 / 1000) / phi(1.96) = 0.0845 bootstrap SEs
    expect(quantileMcSe(0.025, 1000, 1)).toBeCloseTo(0.08447, 4);
    expect(quantileMcSe(0.975, 4000, 2)).toBeCloseTo(0.08447, 4);
    expect(drawBudget(5)).toBe(5);
  });
});

describe('ci bootstrap over the bound', () => {
  let args: string[] = [];
  beforeAll(() => {
    args = ['ci', 'bootstrap', '--input', scores, '--value', 'score', '--cluster', 'item', '--seed', '11'];
  });

  it('runs floor(budget / clusters) resamples, says so, and they are the first B of the unbounded run', () => {
    const cut = json([...args, '--max-draws', '1000000']);
    expect(cut.clusters).toBe(200);
    expect(cut.engine).toBe('resample');
    expect(cut.resamples).toBe(5000);
    expect(cut.resamples_requested).toBe(10_000);
    expect(cut.mc_se_lower).toBeGreaterThan(0);
    expect(cut.mc_se_upper).toBeGreaterThan(0);
    // 0.0845 bootstrap SEs x sqrt(1000 / 5000)
    expect(cut.mc_se_lower).toBeCloseTo(cut.se * 0.08447 * Math.sqrt(1000 / 5000), 6);
    expect(cut.note).toMatch(/ran 5,000 of the 10,000 resamples asked for: 10,000 x 200 units drawn would exceed the draw budget of 1,000,000/);
    const first = json([...args, '--resamples', '5000']);
    expect(first.resamples_requested).toBeUndefined();
    expect([cut.lower, cut.upper, cut.se, cut.estimate]).toEqual([first.lower, first.upper, first.se, first.estimate]);
    // The environment variable sets the same budget.
    expect(json(args, { STANDOFF_RESAMPLE_DRAWS: '1000000' })).toEqual(cut);
  });

  it('prints the cut and the Monte-Carlo errors in the table', () => {
    const r = runCli([...args, '--max-draws', '1000000']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/resamples_requested/);
    expect(r.stdout).toMatch(/mc_se_lower/);
    expect(r.stdout).toMatch(/ran 5,000 of the 10,000 resamples/);
  });

  it('changes nothing under the budget, and keeps at least 1,000 resamples', () => {
    const full = json(args);
    expect(full.resamples).toBe(10_000);
    expect(full).not.toHaveProperty('resamples_requested');
    expect(full).not.toHaveProperty('mc_se_lower');
    expect(full.note).toBeUndefined();
    expect(json([...args, '--max-draws', '2000000'])).toEqual(full);
    const floor = json([...args, '--max-draws', '10']);
    expect(floor.resamples).toBe(MIN_RESAMPLES);
  });

  it('does not cut the exact multinomial path (0/1 data draw no units)', () => {
    const r = json(['ci', 'bootstrap', '--traces', TRACES, '--metric', 'policy_action', '--max-draws', '10']);
    expect(r.engine).toBe('multinomial');
    expect(r.resamples).toBe(10_000);
    expect(r).not.toHaveProperty('resamples_requested');
  });

  it('bounds the general resampler over the store (--statistic median: observations + clusters a resample)', () => {
    const full = json(['ci', 'bootstrap', '--traces', TRACES, '--metric', 'policy_action', '--statistic', 'median', '--seed', '3']);
    const units = full.n + full.clusters;
    const cut = json(['ci', 'bootstrap', '--traces', TRACES, '--metric', 'policy_action', '--statistic', 'median', '--seed', '3', '--max-draws', String(units * 2000)]);
    expect(cut.resamples).toBe(2000);
    expect(cut.resamples_requested).toBe(10_000);
    expect(cut.note).toMatch(/ran 2,000 of the 10,000/);
  });

  it('refuses a budget that is not a positive integer', () => {
    const r = runCli([...args, '--max-draws', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--max-draws must be a positive integer/);
    const e = runCli(args, { env: { STANDOFF_RESAMPLE_DRAWS: 'lots' } });
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/STANDOFF_RESAMPLE_DRAWS must be a positive integer/);
  });
});

describe('ci paired over the bound', () => {
  let args: string[] = [];
  beforeAll(() => {
    args = ['ci', 'paired', '--input', long, '--item', 'item,epoch', '--arm', 'arm', '--value', 'score', '--a', 'A', '--b', 'B', '--cluster', 'item', '--seed', '5'];
  });

  it('runs floor(budget / clusters) resamples of the paired cluster bootstrap and says so', () => {
    const cut = json([...args, '--max-draws', '500000']);
    expect(cut.clusters).toBe(200);
    expect(cut.resamples).toBe(2500);
    expect(cut.resamples_requested).toBe(10_000);
    expect(cut.mc_se_lower).toBeGreaterThan(0);
    expect(cut.note).toMatch(/ran 2,500 of the 10,000 resamples asked for/);
    const first = json([...args, '--resamples', '2500']);
    expect([cut.lower, cut.upper, cut.se_bootstrap, cut.p_value]).toEqual([first.lower, first.upper, first.se_bootstrap, first.p_value]);
    const full = json(args);
    expect(full.resamples).toBe(10_000);
    expect(full).not.toHaveProperty('resamples_requested');
  });
});
