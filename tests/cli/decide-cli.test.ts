/**
 * `standoff rank` and `standoff plan` through the real CLI: the demo store ranked with tiers and
 * rank intervals, a preferences file (and a bad row), plan against R's power.prop.test value and
 * the power-curve SVG, and pilot estimates from the demo store.
 */
import { describe, it, expect } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';

const DEMO = join(ROOT, 'traces');
const oracle = JSON.parse(readFileSync(join(ROOT, 'tests', 'oracle', 'power.json'), 'utf8'));

describe('standoff rank', () => {
  it('ranks the demo subjects with intervals, tiers and the tier rule', () => {
    const r = runCli(['rank', '--traces', DEMO, '--metric', 'gathered_evidence', '--resamples', '300', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.rows.map((x: { subject: string }) => x.subject)).toEqual(['sim:thorough', 'sim:careful', 'sim:hasty']);
    expect(out.rows[2]).toMatchObject({ rank: 3, rank_lower: 3, rank_upper: 3, observations: 90 });
    expect(out.tier_rule).toMatch(/Holm/);
    expect(out.pairs).toHaveLength(3);
    expect(out.seed).toBe(20261129);
  });
  it('--preferences fits Bradley-Terry; a winner that is neither side is a data error naming the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standoff-rank-'));
    const rep = (n: number, line: string) => Array<string>(n).fill(line);
    const rows = ['a,b,winner', ...rep(10, 'x,y,y'), ...rep(4, 'x,y,x'), ...rep(8, 'y,z,y'), ...rep(3, 'y,z,z'), ...rep(6, 'z,x,x'), ...rep(3, 'z,x,z'), ...rep(2, 'x,z,tie')];
    writeFileSync(join(dir, 'p.csv'), rows.join('\n') + '\n');
    const r = runCli(['rank', '--preferences', join(dir, 'p.csv'), '--resamples', '100', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rows.map((x: { subject: string }) => x.subject)).toEqual(['y', 'x', 'z']);
    writeFileSync(join(dir, 'bad.csv'), 'a,b,winner\nx,y,x\nx,y,q\n');
    const bad = runCli(['rank', '--preferences', join(dir, 'bad.csv')]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/bad\.csv line 3: winner "q"/);
  });
});

describe('standoff plan', () => {
  it('items needed is the ceiling of R power.prop.test n; --out writes the power curve', () => {
    const c = oracle.cases.find((x: { kind: string }) => x.kind === 'prop.n');
    const out = join(mkdtempSync(join(tmpdir(), 'standoff-plan-')), 'plan.svg');
    const r = runCli(['plan', '--baseline', String(c.args.p1), '--effect', String(c.args.p2 - c.args.p1), '--power', String(c.args.power), '--alpha', String(c.args.alpha), '--format', 'json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).items_needed).toBe(Math.ceil(c.expected));
    expect(readFileSync(out, 'utf8')).toMatch(/^<svg/);
  });
  it('a pilot from the demo store: design estimates and the MDE as run', () => {
    const r = runCli(['plan', '--traces', DEMO, '--metric', 'gathered_evidence', '--a', 'sim:careful', '--b', 'sim:hasty', '--effect', '-5pp', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const p = JSON.parse(r.stdout);
    expect(p.pilot).toMatchObject({ items: 18, pairs: 90, epochs_per_item: 5 });
    expect(p.pilot.discordance).toBeCloseTo(68 / 90, 12);
    expect(p.mde_as_run).toBeGreaterThan(0);
    expect(p.items_needed).toBeGreaterThan(0);
  });
  it('usage errors name the flag', () => {
    const r = runCli(['plan', '--baseline', '0.7']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--effect/);
    expect(existsSync(DEMO)).toBe(true);
  });
});
