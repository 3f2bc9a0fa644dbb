/**
 * `standoff rank` statistics: Bradley-Terry against R glm (tests/oracle/bradley-terry.json), the
 * compact letter display's defining property on random significance patterns, rank intervals and
 * HELM win rates on constructed data, and the tiers of buildRanking from Holm-adjusted clustered
 * paired z-tests computed independently.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapRanks, bradleyTerry, clusteredPairedStandardError, compactLetterDisplay, createRng, holm, pairedZTest } from '../../src/stats/index.ts';
import { buildRanking, type RankData } from '../../src/decide/rank.ts';
import { buildPreferenceRanking } from '../../src/decide/preferences.ts';
import { itemKey, type TaskValues } from '../../src/decide/side.ts';

const bt = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'oracle', 'bradley-terry.json'), 'utf8'));

describe('Bradley-Terry against R glm(binomial, logit)', () => {
  bt.cases.forEach((c: { subjects: number; preferences: [number, number, number][]; coefficients: number[]; se: number[] }, k: number) => {
    it(`case ${k + 1}: ${c.subjects} subjects, ${c.preferences.length} preferences`, () => {
      const f = bradleyTerry(c.preferences.map(([a, b, y]) => ({ a, b, y: y as 0 | 0.5 | 1 })), c.subjects);
      f.coefficients.forEach((x, i) => expect(x).toBeCloseTo(c.coefficients[i], 10));
      f.se.forEach((x, i) => expect(Math.abs(x - c.se[i])).toBeLessThan(1e-6 * Math.max(1, c.se[i])));
    });
  });
  it('a subject that wins every comparison has no finite estimate (an error, not a huge number)', () => {
    expect(() => bradleyTerry([{ a: 0, b: 1, y: 1 }, { a: 0, b: 1, y: 1 }, { a: 1, b: 2, y: 0.5 }], 3)).toThrow(/no finite estimate/);
  });
  it('the preference ranking orders by strength and counts wins, losses and ties', () => {
    const rows = bt.cases[1].preferences.map(([a, b, y]: number[]) => ({ a: `m${a}`, b: `m${b}`, y }));
    const r = buildPreferenceRanking(rows, { level: 0.95, seed: 1, resamples: 200 }, 'prefs.csv');
    expect(r.rows.map((x) => x.subject)).toEqual(['m3', 'm4', 'm2', 'm0', 'm1']);
    expect(r.rows[0].strength).toBeCloseTo(bt.cases[1].coefficients[3], 10);
    for (const x of r.rows) expect(x.wins + x.losses + x.ties).toBe(rows.filter((p: { a: string; b: string }) => p.a === x.subject || p.b === x.subject).length);
    expect(r.rows[0].lower!).toBeLessThan(r.rows[0].strength);
    expect(r.rows[0].upper!).toBeGreaterThan(r.rows[0].strength);
  });
});

describe('compact letter display', () => {
  it('subjects share a letter exactly when they are not significantly different (random patterns)', () => {
    const rng = createRng(5);
    for (let t = 0; t < 300; t++) {
      const S = 2 + rng.int(7);
      const d = Array.from({ length: S }, () => Array<boolean>(S).fill(false));
      for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) d[i][j] = d[j][i] = rng.uniform() < 0.4;
      const L = compactLetterDisplay(d);
      for (let i = 0; i < S; i++) for (let j = i + 1; j < S; j++) expect([...L[i]].some((c) => L[j].includes(c))).toBe(!d[i][j]);
    }
  });
  it('known patterns (Piepho 2004 style): best first gets a', () => {
    const D = (n: number, pairs: [number, number][]) => {
      const m = Array.from({ length: n }, () => Array<boolean>(n).fill(false));
      for (const [i, j] of pairs) m[i][j] = m[j][i] = true;
      return m;
    };
    expect(compactLetterDisplay(D(3, [[0, 2]]))).toEqual(['a', 'ab', 'b']);
    expect(compactLetterDisplay(D(4, [[0, 2], [0, 3], [1, 3]]))).toEqual(['a', 'ab', 'bc', 'c']);
    expect(compactLetterDisplay(D(3, []))).toEqual(['a', 'a', 'a']);
  });
});

const task = (values: number[][]): TaskValues => {
  const t: TaskValues = { values: new Map(), cluster: new Map() };
  values.forEach((eps, i) => eps.forEach((v, e) => {
    t.values.set(itemKey(`i${i}`, e + 1), v);
    t.cluster.set(itemKey(`i${i}`, e + 1), `i${i}`);
  }));
  return t;
};

describe('rank intervals and win rates', () => {
  it('clearly separated subjects get point rank intervals; identical ones share [1, 2]', () => {
    const C = 50;
    const mk = (f: (c: number) => number[]) => ({ clusters: C, sums: Float64Array.from({ length: 2 * C }, (_, k) => f(k % C)[Math.floor(k / C)]), counts: new Float64Array(2 * C).fill(1) });
    const far = bootstrapRanks([mk((c) => [0.9 + (c % 2) * 0.05, 0.1 + (c % 3) * 0.05])], 2, { resamples: 500, seed: 1, level: 0.95 });
    expect(far[0].tasks[0]).toMatchObject({ rank: 1, rank_lower: 1, rank_upper: 1 });
    expect(far[1].tasks[0]).toMatchObject({ rank: 2, rank_lower: 2, rank_upper: 2 });
    const same = bootstrapRanks([mk((c) => [c % 2, c % 2])], 2, { resamples: 200, seed: 1, level: 0.95 });
    expect(same.map((s) => [s.tasks[0].rank, s.tasks[0].rank_lower, s.tasks[0].rank_upper, s.win_rate])).toEqual([[1.5, 1.5, 1.5, 0.5], [1.5, 1.5, 1.5, 0.5]]);
  });
  it('mean rank and HELM win rate across two tasks (ties half), by hand', () => {
    // Task 1: A 0.9, B 0.5, C 0.5 -> ranks 1, 2.5, 2.5; win rates 1, 0.25, 0.25.
    // Task 2: A 0.2, B 0.8, C 0.4 -> ranks 3, 1, 2; win rates 0, 1, 0.5.
    const one = (ms: number[]) => ({ clusters: 1, sums: Float64Array.from(ms), counts: new Float64Array(3).fill(1) });
    const r = bootstrapRanks([one([0.9, 0.5, 0.5]), one([0.2, 0.8, 0.4])], 3, { resamples: 10, seed: 1, level: 0.95 });
    expect(r.map((s) => s.mean_rank)).toEqual([2, 1.75, 2.25]);
    expect(r.map((s) => s.win_rate)).toEqual([0.5, 0.625, 0.375]);
  });
  it('buildRanking: tiers follow the Holm-adjusted clustered paired z-tests', () => {
    const rng = createRng(9);
    const items = 120;
    const gen = (p: number) => Array.from({ length: items }, (_, i) => [0, 1].map(() => (rng.uniform() < p + (i % 3) * 0.05 ? 1 : 0)));
    const raw = { A: gen(0.8), B: gen(0.75), C: gen(0.4), D: gen(0.38) };
    const data: RankData = new Map([['t', new Map(Object.entries(raw).map(([k, v]) => [k, task(v)]))]]);
    const r = buildRanking(data, 'correct', 'subject_model', { level: 0.95, seed: 3, resamples: 300 });
    expect(r.rows.map((x) => x.subject)).toEqual(['A', 'B', 'C', 'D']);
    const names = ['A', 'B', 'C', 'D'] as const;
    const p: number[] = [];
    for (let i = 0; i < 4; i++) for (let j = i + 1; j < 4; j++) {
      const a = raw[names[i]].flat();
      const b = raw[names[j]].flat();
      const ids = raw[names[i]].flatMap((eps, k) => eps.map(() => `i${k}`));
      const se = clusteredPairedStandardError(Float64Array.from(a), Float64Array.from(b), ids, { variant: 'cr1' });
      p.push(pairedZTest({ difference: se.meanDiff, se: se.se }).p!);
    }
    const adj = holm(p);
    r.pairs.forEach((x, k) => expect(x.p_holm).toBeCloseTo(adj[k]!, 12));
    let k = 0;
    for (let i = 0; i < 4; i++) for (let j = i + 1; j < 4; j++, k++) {
      const share = [...r.rows[i].tier].some((c) => r.rows[j].tier.includes(c));
      expect(share).toBe(adj[k]! >= 0.05);
    }
    expect(r.rows[0].tier).toContain('a');
    expect(r.rows[3].tier).not.toContain('a');
  });
});
