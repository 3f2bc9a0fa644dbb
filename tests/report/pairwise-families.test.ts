/**
 * Issue 21 point 8: multiple comparisons, stated, in every suite. The one pairwise implementation
 * (src/report/sections/pairwise.ts) adjusts p-values within each family (one task's comparisons on
 * one scorer; the O1 suite: one metric), never across unrelated scorers; `--adjust holm|bh|none`
 * works for every store, the Standoff O1 one included; the table says which family it adjusted.
 * Adjusted values are R's `p.adjust` per family (tests/oracle/p-adjust.json, from
 * tests/oracle/gen_p_adjust.py).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, ROOT } from '../helpers/cli.ts';
import { adjustWithinFamilies, type Comparison } from '../../src/report/sections/pairwise.ts';
import { benjaminiHochberg, holm } from '../../src/stats/index.ts';

interface Family { family: string; p: (number | null)[]; holm: (number | null)[]; bh: (number | null)[] }
const oracle = JSON.parse(readFileSync(join(ROOT, 'tests', 'oracle', 'p-adjust.json'), 'utf8')) as { families: Family[]; across: { holm: (number | null)[] } };

const comparisons = (): Comparison[] =>
  oracle.families.flatMap((f) => f.p.map((p, i) => ({ suite: 'task', scorer: f.family, metric: f.family, a: `a${i}`, b: `b${i}`, p_value: p, p_holm: null, p_adjusted: null }) as unknown as Comparison));

const close = (got: (number | null)[], want: (number | null)[]) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => (want[i] === null ? expect(g).toBeNull() : expect(Math.abs(g! - want[i]!)).toBeLessThanOrEqual(1e-12 * Math.max(1e-300, Math.abs(want[i]!)))));
};

describe('adjustment within each family, as R p.adjust', () => {
  it('holm and BH per family equal R; across all families they would not', () => {
    for (const method of ['holm', 'bh'] as const) {
      const cs = comparisons();
      adjustWithinFamilies(cs, method);
      for (const f of oracle.families) {
        const mine = cs.filter((c) => c.scorer === f.family);
        close(mine.map((c) => c.p_adjusted), f[method]);
        close(mine.map((c) => c.p_holm), f.holm);
      }
      // The family matters for these p-values: adjusting all of them at once gives other numbers.
      if (method === 'holm') expect(cs.map((c) => c.p_adjusted)).not.toEqual(oracle.across.holm);
    }
    const none = comparisons();
    adjustWithinFamilies(none, 'none');
    expect(none.every((c) => c.p_adjusted === null)).toBe(true);
    close(none.filter((c) => c.scorer === 'quality').map((c) => c.p_holm), oracle.families[3].holm);
  });
});

let dir: string;
const build = (out: string, adjust?: string) => {
  const r = runCli(['report', 'build', '--traces', join(ROOT, 'traces'), '--out', join(dir, out), '--resamples', '200', '--quiet', ...(adjust ? ['--adjust', adjust] : [])]);
  expect(r.code, r.stderr).toBe(0);
  return { json: JSON.parse(readFileSync(join(dir, out, 'results.json'), 'utf8')), md: readFileSync(join(dir, out, 'REPORT.md'), 'utf8') };
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-pairwise-families-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the Standoff O1 suite: Holm within each metric, --adjust bh and none', { timeout: 240_000 }, () => {
  it('holm (default): within each metric, and the table says so', () => {
    const { json, md } = build('holm');
    const cmp = json.pairwise.comparisons as Comparison[];
    expect(json.pairwise).toMatchObject({ adjust: 'holm', family: 'task x scorer' });
    for (const m of ['gathered_evidence', 'policy_action', 'alignment']) {
      const mine = cmp.filter((c) => c.metric === m);
      expect(mine.length).toBe(3);
      expect(mine.map((c) => c.p_holm)).toEqual(holm(mine.map((c) => c.p_value)));
      expect(mine.map((c) => c.p_adjusted)).toEqual(mine.map((c) => c.p_holm));
    }
    expect(cmp.map((c) => c.p_holm)).not.toEqual(holm(cmp.map((c) => c.p_value)));
    expect(md).toMatch(/Holm-adjusted within each family of one metric \(3 families of 3 comparisons/);
    expect(md).toMatch(/\| r \| p \| p \(Holm, within metric\) \| MDE \|/);
  });

  it('bh and none on request (the O1 suite no longer refuses them)', () => {
    const bh = build('bh', 'bh');
    expect(bh.json.pairwise.adjust).toBe('bh');
    for (const m of ['gathered_evidence', 'policy_action', 'alignment']) {
      const mine = (bh.json.pairwise.comparisons as Comparison[]).filter((c) => c.metric === m);
      expect(mine.map((c) => c.p_adjusted)).toEqual(benjaminiHochberg(mine.map((c) => c.p_value)));
    }
    expect(bh.md).toMatch(/Benjamini-Hochberg-adjusted within each family of one metric/);
    expect(bh.md).toMatch(/\| p \(BH, within metric\) \|/);
    const none = build('none', 'none');
    expect(none.md).toMatch(/not adjusted for multiple comparisons \(--adjust none\)/);
    expect(none.md).not.toMatch(/p \(Holm|p \(BH/);
    // The figure marks significance by the method asked for.
    const fig = JSON.parse(readFileSync(join(dir, 'none', 'figures', 'pairwise.vl.json'), 'utf8'));
    for (const c of none.json.pairwise.comparisons as Comparison[]) {
      const v = fig.data.values.find((x: { pair: string; p_adjusted: number }) => x.pair === `${c.a} − ${c.b}` && x.p_adjusted === c.p_value);
      expect(v.significant).toBe(c.p_value! < 0.05 ? 'unadjusted p < 0.05' : 'p ≥ 0.05');
    }
  });
});
