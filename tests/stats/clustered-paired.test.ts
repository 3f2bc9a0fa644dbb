/**
 * Paired comparisons when pairs repeat within clusters (epochs of a scenario), against
 * tests/oracle/clustered-paired.json (tests/oracle/gen_clustered_paired.py: statsmodels 0.13
 * cluster-robust OLS for the clustered paired SE, scipy 1.10 norm.sf for p, statsmodels
 * NormalIndPower + scipy brentq for the MDE, R boot 1.3-28 over clusters for the paired cluster
 * bootstrap's acceptance bands), plus the count-based and pattern-based entry points checked
 * against the functions they stand for on the expanded data.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  clusterBootstrap,
  clusterBootstrapTotals,
  clusteredPairedStandardError,
  cohenKappa,
  judgePairAgreement,
  krippendorffAlpha,
  krippendorffAlphaBootstrapCounts,
  leaveOneJudgeOut,
  pairedClusterBootstrap,
  pairedStandardError,
  pairedZTest,
  probeOutcomes,
  probeTally,
  type ProbeRow,
} from '../../src/stats/index.ts';

interface OracleCase {
  id: string;
  a: number[];
  b: number[];
  cluster_ids: string[];
  level: number;
  mean_a: number;
  mean_b: number;
  mean_diff: number;
  se_cr1: number;
  se_cr0: number;
  se_independent: number;
  z: number;
  p: number;
  mde: number;
  mde_statsmodels: number;
  alpha: number;
  power: number;
  bootstrap: { estimate: number; band: { percentile: [number, number][]; bca: [number, number][]; se: [number, number] } };
}

const doc = JSON.parse(readFileSync(join(import.meta.dirname, '../oracle/clustered-paired.json'), 'utf8')) as { cases: OracleCase[] };
const within = (x: number, [lo, hi]: [number, number], what: string) => {
  expect(x, `${what}: ${x} not in [${lo}, ${hi}]`).toBeGreaterThanOrEqual(lo);
  expect(x, `${what}: ${x} not in [${lo}, ${hi}]`).toBeLessThanOrEqual(hi);
};

describe('oracle: clustered paired SE, z-test and paired cluster bootstrap', () => {
  it('holds the five datasets', () => {
    expect(doc.cases.map((c) => c.id)).toEqual([
      'paired-cluster-binary-18x5',
      'paired-cluster-binary-12x5-close',
      'paired-cluster-binary-unequal-c15',
      'paired-cluster-binary-30x1',
      'paired-cluster-continuous-15x3',
    ]);
  });

  for (const c of doc.cases) {
    it(`${c.id}: CR1 / CR0 equal statsmodels, p equals scipy, MDE equals statsmodels + brentq`, () => {
      const r = clusteredPairedStandardError(c.a, c.b, c.cluster_ids);
      expect(r.meanDiff).toBeCloseTo(c.mean_diff, 14);
      expect(r.meanA).toBeCloseTo(c.mean_a, 14);
      expect(r.meanB).toBeCloseTo(c.mean_b, 14);
      expect(Math.abs(r.se - c.se_cr1)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(clusteredPairedStandardError(c.a, c.b, c.cluster_ids, { variant: 'cr0' }).se - c.se_cr0)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(r.seIndependent - c.se_independent)).toBeLessThanOrEqual(1e-12);
      const t = pairedZTest({ difference: r.meanDiff, se: r.se, alpha: c.alpha, power: c.power });
      expect(Math.abs(t.z! - c.z)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(t.p! - c.p)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(t.mde! - c.mde)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(t.mde! - c.mde_statsmodels) / c.mde).toBeLessThan(1e-5); // solve_power's own tolerance
    });

    it(`${c.id}: the paired cluster bootstrap (10,000 resamples) lands in R boot's bands (percentile and BCa)`, () => {
      for (const seed of [1, 20261129]) {
        const p = pairedClusterBootstrap(c.a, c.b, c.cluster_ids, { seed, resamples: 10_000, method: 'percentile' });
        expect(p.estimate).toBeCloseTo(c.bootstrap.estimate, 14);
        expect(p.clusters).toBe(new Set(c.cluster_ids).size);
        within(p.lower, c.bootstrap.band.percentile[0], 'percentile lower');
        within(p.upper, c.bootstrap.band.percentile[1], 'percentile upper');
        within(p.se, c.bootstrap.band.se, 'bootstrap se');
        expect(Math.abs(p.seClustered - c.se_cr1)).toBeLessThanOrEqual(1e-12);
        const b = pairedClusterBootstrap(c.a, c.b, c.cluster_ids, { seed, resamples: 10_000, method: 'bca' });
        within(b.lower, c.bootstrap.band.bca[0], 'bca lower');
        within(b.upper, c.bootstrap.band.bca[1], 'bca upper');
      }
    });
  }

  it('with one pair per cluster the clustered SE is the ordinary paired SE (ddof 1)', () => {
    const c = doc.cases.find((x) => x.id === 'paired-cluster-binary-30x1')!;
    const r = clusteredPairedStandardError(c.a, c.b, c.cluster_ids);
    expect(r.se).toBeCloseTo(pairedStandardError(c.a, c.b).sePaired, 14);
  });

  it('clustering widens the SE when epochs of a scenario move together (18 x 5 case)', () => {
    const c = doc.cases.find((x) => x.id === 'paired-cluster-binary-unequal-c15')!;
    expect(c.se_cr1).toBeLessThan(c.se_independent); // a case where it narrows: clustering is not a fudge factor
    const d = doc.cases.find((x) => x.id === 'paired-cluster-continuous-15x3')!;
    expect(d.se_cr1).toBeGreaterThan(d.se_independent);
  });
});

describe('pairedZTest', () => {
  it('matches scipy on a worked value and is undefined (null) without spread', () => {
    const t = pairedZTest({ difference: 0.1, se: 0.04 });
    expect(t.z).toBe(2.5);
    expect(t.p!).toBeCloseTo(0.01241933065155227, 15); // scipy: 2 * norm.sf(2.5)
    expect(pairedZTest({ difference: 0.3, se: 0 })).toMatchObject({ z: null, p: null, mde: null });
    expect(() => pairedZTest({ difference: 0.1, se: -1 })).toThrow(/se >= 0/);
  });
});

describe('clusterBootstrapTotals: the count-based entry point', () => {
  it('equals clusterBootstrap on the expanded values bitwise (both engines, every method)', () => {
    let x = 99;
    const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296);
    for (let trial = 0; trial < 12; trial++) {
      const C = 3 + Math.floor(rnd() * 20);
      const values: number[] = [];
      const ids: number[] = [];
      const sums: number[] = [];
      const sizes: number[] = [];
      for (let c = 0; c < C; c++) {
        const k = 1 + Math.floor(rnd() * 6);
        let s = 0;
        for (let j = 0; j < k; j++) {
          const v = trial % 3 === 2 ? Math.round(rnd() * 4) / 2 : rnd() < 0.4 ? 1 : 0; // 0/1 or halves
          values.push(v);
          ids.push(c);
          s += v;
        }
        sums.push(s);
        sizes.push(k);
      }
      for (const method of ['percentile', 'bca', 'basic'] as const) {
        for (const engine of ['auto', 'resample'] as const) {
          const o = { seed: trial, resamples: 500, method, engine, returnReplicates: true };
          const e = clusterBootstrap(values, ids, o);
          const t = clusterBootstrapTotals(sums, sizes, o);
          expect([t.estimate, t.lower, t.upper, t.se, t.engine, t.clusters, t.n]).toEqual([e.estimate, e.lower, e.upper, e.se, e.engine, e.clusters, e.n]);
          expect(t.replicates).toEqual(e.replicates);
        }
      }
    }
  });

  it('leaves out clusters without observations and needs two that have some', () => {
    const a = clusterBootstrapTotals([3, 0, 1], [5, 0, 5], { seed: 1, resamples: 200 });
    expect([a.clusters, a.n, a.estimate]).toEqual([2, 10, 0.4]);
    expect(() => clusterBootstrapTotals([3, 0], [5, 0], { seed: 1 })).toThrow(/at least 2 clusters/);
    expect(() => clusterBootstrapTotals([1], [0], { seed: 1 })).toThrow(/to be 0 for an empty cluster/);
    expect(() => clusterBootstrapTotals([1, 1], [1.5, 2], { seed: 1 })).toThrow(/integer >= 0/);
  });
});

describe('weight-based entry points equal the expanded computation', () => {
  it('krippendorffAlphaBootstrapCounts: alpha equals krippendorffAlpha on the expanded matrix; order and merging do not matter', () => {
    const patterns = [
      [1, 0, 1, null],
      [1, 0, 0, 1],
      [1, 0, 1, 1],
    ];
    const counts = [60, 30, 10, 4];
    const expanded: (number | null)[][] = patterns.map((row) => row.flatMap((v, p) => new Array(counts[p]).fill(v)));
    const r = krippendorffAlphaBootstrapCounts(patterns, counts, 'nominal', { seed: 3, resamples: 500 });
    expect(r.estimate!).toBeCloseTo(krippendorffAlpha(expanded, 'nominal').alpha!, 14);
    expect(r.n).toBe(104);
    // The same units listed one by one (counts 1), in another order: the same result.
    const ones = expanded[0].map(() => 1);
    const shuffled = expanded.map((row) => [...row].reverse());
    expect(krippendorffAlphaBootstrapCounts(shuffled, ones, 'nominal', { seed: 3, resamples: 500 })).toEqual(r);
    expect(krippendorffAlphaBootstrapCounts(patterns, counts, 'interval', { seed: 3, resamples: 200 }).estimate!).toBeCloseTo(krippendorffAlpha(expanded, 'interval').alpha!, 14);
  });

  it('cohenKappa and judgePairAgreement with weights equal the expanded data; the interval follows level', () => {
    const a = ['y', 'y', 'n', 'n', null];
    const b = ['y', 'n', 'n', 'n', 'y'];
    const w = [3, 1, 2, 5, 7];
    const ea = a.flatMap((v, i) => new Array(w[i]).fill(v));
    const eb = b.flatMap((v, i) => new Array(w[i]).fill(v));
    expect(cohenKappa(a, b, w)).toEqual(cohenKappa(ea, eb));
    const [p] = judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [a, b], weights: w }, { level: 0.9 });
    const [q] = judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [ea, eb] }, { level: 0.9 });
    expect(p).toEqual(q);
    const [r95] = judgePairAgreement({ judges: [{ id: 'j1' }, { id: 'j2' }], verdicts: [ea, eb] });
    expect(r95.agreementLower!).toBeLessThan(q.agreementLower!);
  });

  it('leaveOneJudgeOut with weights equals the expanded samples', () => {
    const judges = [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }];
    const samples = [{ id: 'p1', subject_model: 'x' }, { id: 'p2', subject_model: 'x' }, { id: 'p3', subject_model: 'y' }];
    const scores = [[1, 0, 1], [1, 1, null], [0, 1, 1]];
    const w = [4, 2, 3];
    const ex = {
      judges,
      samples: samples.flatMap((s, i) => Array.from({ length: w[i] }, (_, k) => ({ ...s, id: `${s.id}.${k}` }))),
      scores: scores.map((row) => row.flatMap((v, i) => new Array(w[i]).fill(v))),
    };
    expect(leaveOneJudgeOut({ judges, samples, scores }, { excludeBy: 'none', weights: w })).toEqual(leaveOneJudgeOut(ex, { excludeBy: 'none' }));
  });

  it('probeTally with weights equals probeOutcomes on the expanded states', () => {
    const base: Omit<ProbeRow, 'state_id'>[] = [
      { subject_model: 'm', all_facts_correct: true, action_correct: false, probes_answered: 4, probes_total: 4, probe_accuracy: 1, composed_correct: true },
      { subject_model: 'm', all_facts_correct: false, action_correct: true, probes_answered: 3, probes_total: 4, probe_accuracy: 0.5, composed_correct: false },
      { subject_model: 'm', all_facts_correct: true, action_correct: true, probes_answered: 3, probes_total: 3, probe_accuracy: 1, composed_correct: null },
    ];
    const w = [3, 2, 5];
    const expanded = base.flatMap((r, i) => Array.from({ length: w[i] }, (_, k) => ({ ...r, state_id: `s${i}.${k}` })));
    const [g] = probeOutcomes(expanded);
    const t = probeTally(base.map((r, i) => ({ ...r, weight: w[i] })));
    expect(t).toMatchObject({ frar: 5, fraw: 3, fwar: 2, fwaw: 0, cn: 5, repaired: 3, broken: 2 });
    expect(g.meanProbeAccuracy).toBeCloseTo(t.accSum / 10, 15);
    expect(g.pooledProbeAccuracy).toBeCloseTo(t.pooledNum / t.total, 15);
  });
});
