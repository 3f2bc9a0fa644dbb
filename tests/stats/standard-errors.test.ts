/**
 * Analytic standard errors: cltStandardError, clusteredStandardError (CR0, CR1, Miller 2024) and
 * pairedStandardError. Reference values: the shared oracle cases (scipy / numpy, 1e-9; also in
 * bootstrap-oracle.test.ts) and statsmodels 0.13 cluster-robust OLS on an intercept with unequal
 * cluster sizes (tests/oracle/bootstrap-extra.json, section clustered_se: CR1 is statsmodels'
 * default cov_type='cluster' because Stata's (N-1)/(N-K) factor is 1 for one regressor; CR0 is
 * use_correction=False). Identities (Miller's double sum, the paired covariance form) are checked
 * by computing the textbook expressions directly.
 */
import { describe, expect, it } from 'vitest';
import { cltStandardError } from '../../src/stats/clt-standard-error.ts';
import { clusteredStandardError } from '../../src/stats/clustered-standard-error.ts';
import { pairedStandardError } from '../../src/stats/paired-standard-error.ts';
import { clusterCaseValues, expectDataError, loadBootstrapExtra, loadOracleCases } from '../helpers/stats.ts';

const oracle = loadOracleCases();
const extra = loadBootstrapExtra();

describe('cltStandardError', () => {
  it('matches the oracle se_ddof1 / se_ddof0 of every bootstrap_mean case (numpy std / sqrt(n), 1e-9)', () => {
    const cases = oracle.cases.filter((c: any) => c.kind === 'bootstrap_mean');
    expect(cases.length).toBe(8);
    for (const c of cases) {
      expect(Math.abs(cltStandardError(c.input.data) - c.expected.se_ddof1)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(cltStandardError(c.input.data, { ddof: 0 }) - c.expected.se_ddof0)).toBeLessThanOrEqual(1e-9);
    }
  });
  it('degenerate cases: identical values -> 0; n <= ddof, empty, NaN throw', () => {
    expect(cltStandardError([0.4, 0.4, 0.4])).toBe(0);
    expect(cltStandardError([3], { ddof: 0 })).toBe(0);
    expectDataError(() => cltStandardError([3]), 'stats.tooFewValues', /more values than ddof \(1\), got 1/);
    expectDataError(() => cltStandardError([]), 'stats.empty');
    expectDataError(() => cltStandardError([1, NaN]), 'stats.badValue', /values\[1\]/);
    expectDataError(() => cltStandardError([1, 2], { ddof: -1 }), 'stats.badCount', /ddof/);
  });
});

describe('clusteredStandardError', () => {
  it('CR0, CR1 and Miller match the oracle bootstrap_cluster cases (1e-9)', () => {
    for (const c of oracle.cases.filter((x: any) => x.kind === 'bootstrap_cluster')) {
      const { values, ids } = clusterCaseValues(c.input);
      expect(Math.abs(clusteredStandardError(values, ids, { variant: 'cr0' }) - c.expected.se_clustered_cr0)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(clusteredStandardError(values, ids) - c.expected.se_clustered_cr1)).toBeLessThanOrEqual(1e-9); // default cr1
      expect(Math.abs(clusteredStandardError(values, ids, { variant: 'miller' }) - c.expected.se_clustered_miller)).toBeLessThanOrEqual(1e-9);
    }
  });

  it('CR1 and CR0 match statsmodels cluster-robust OLS with unequal cluster sizes (1e-12 relative)', () => {
    expect(extra.clustered_se.length).toBe(3);
    for (const c of extra.clustered_se) {
      const cr1 = clusteredStandardError(c.values, c.cluster_ids, { variant: 'cr1' });
      const cr0 = clusteredStandardError(c.values, c.cluster_ids, { variant: 'cr0' });
      expect(Math.abs(cr1 / c.se_cr1 - 1), c.id).toBeLessThan(1e-12);
      expect(Math.abs(cr0 / c.se_cr0 - 1), c.id).toBeLessThan(1e-12);
    }
  });

  it("Miller's form equals Var(s)/N + (1/N^2) sum_c sum_{i != j} (s_i - m)(s_j - m) computed literally", () => {
    const values = [1, 0, 1, 1, 0.5, 0, 1, 0, 0.25, 1, 1];
    const ids = ['a', 'a', 'a', 'b', 'b', 'c', 'c', 'c', 'c', 'd', 'e'];
    const N = values.length;
    const m = values.reduce((s, v) => s + v, 0) / N;
    const varS = values.reduce((s, v) => s + (v - m) ** 2, 0) / (N - 1);
    let cross = 0;
    for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) if (i !== j && ids[i] === ids[j]) cross += (values[i] - m) * (values[j] - m);
    expect(clusteredStandardError(values, ids, { variant: 'miller' })).toBeCloseTo(Math.sqrt(varS / N + cross / N ** 2), 14);
  });

  it('relations: CR1 = CR0 sqrt(C/(C-1)); singleton clusters give the CLT SEs; equal sizes give SD(cluster means)/sqrt(C)', () => {
    const values = [0.2, 0.9, 0.4, 0.4, 0.7, 0.1, 0.8, 0.3];
    const single = values.map((_, i) => i);
    expect(clusteredStandardError(values, single, { variant: 'cr0' })).toBeCloseTo(cltStandardError(values, { ddof: 0 }), 14);
    expect(clusteredStandardError(values, single, { variant: 'cr1' })).toBeCloseTo(cltStandardError(values), 14);
    const pairsIds = ['a', 'a', 'b', 'b', 'c', 'c', 'd', 'd'];
    const cr0 = clusteredStandardError(values, pairsIds, { variant: 'cr0' });
    expect(clusteredStandardError(values, pairsIds)).toBeCloseTo(cr0 * Math.sqrt(4 / 3), 14);
    const clusterMeans = [0.55, 0.4, 0.4, 0.55];
    expect(clusteredStandardError(values, pairsIds)).toBeCloseTo(cltStandardError(clusterMeans), 14);
  });

  it('degenerate cases and bad input', () => {
    expect(clusteredStandardError([1, 1, 1, 1], ['a', 'a', 'b', 'b'])).toBe(0);
    expectDataError(() => clusteredStandardError([1, 0], ['a', 'a']), 'stats.tooFewClusters', /got 1/);
    expectDataError(() => clusteredStandardError([1, 0], ['a']), 'stats.lengthMismatch');
    expectDataError(() => clusteredStandardError([], []), 'stats.empty');
    expectDataError(() => clusteredStandardError([1, 0], ['a', 'b'], { variant: 'cr2' as never }), 'stats.badOption', /variant/);
    expectDataError(() => clusteredStandardError([1, 0], ['a', { id: 1 } as never]), 'stats.badValue', /clusterIds\[1\]/);
  });
});

describe('pairedStandardError', () => {
  it('matches the oracle bootstrap_paired cases (se_paired ddof 1 and 0, se_unpaired, means; 1e-9)', () => {
    for (const c of oracle.cases.filter((x: any) => x.kind === 'bootstrap_paired')) {
      const r = pairedStandardError(c.input.a, c.input.b);
      const e = c.expected;
      expect(Math.abs(r.sePaired - e.se_paired_ddof1)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(pairedStandardError(c.input.a, c.input.b, { ddof: 0 }).sePaired - e.se_paired_ddof0)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(r.seUnpaired - e.se_unpaired_ddof1)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(r.meanA - e.mean_a)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(r.meanB - e.mean_b)).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(r.meanDiff - e.mean_diff)).toBeLessThanOrEqual(1e-9);
    }
  });

  it('sePaired = sqrt((Var a + Var b - 2 Cov(a, b)) / n) (Miller 2024), the covariance form computed literally', () => {
    const a = [0.9, 0.4, 0.7, 0.2, 0.8, 0.5, 0.6];
    const b = [0.7, 0.5, 0.6, 0.1, 0.9, 0.3, 0.4];
    const n = a.length;
    const ma = a.reduce((s, v) => s + v, 0) / n;
    const mb = b.reduce((s, v) => s + v, 0) / n;
    const va = a.reduce((s, v) => s + (v - ma) ** 2, 0) / (n - 1);
    const vb = b.reduce((s, v) => s + (v - mb) ** 2, 0) / (n - 1);
    const cov = a.reduce((s, v, i) => s + (v - ma) * (b[i] - mb), 0) / (n - 1);
    const r = pairedStandardError(a, b);
    expect(r.sePaired).toBeCloseTo(Math.sqrt((va + vb - 2 * cov) / n), 14);
    expect(r.seUnpaired).toBeCloseTo(Math.sqrt((va + vb) / n), 14);
    expect(r.covariance).toBeCloseTo(cov, 14);
    expect(r.correlation).toBeCloseTo(cov / Math.sqrt(va * vb), 14);
    expect(r.sdDiff).toBeCloseTo(Math.sqrt(va + vb - 2 * cov), 14);
    expect(r.sePaired).toBeLessThan(r.seUnpaired); // positive correlation
  });

  it('degenerate cases and bad input', () => {
    const same = pairedStandardError([1, 0, 1], [1, 0, 1]);
    expect(same.sePaired).toBe(0);
    expect(same.correlation).toBeCloseTo(1, 15);
    expect(pairedStandardError([1, 1, 1], [1, 0, 1]).correlation).toBeNaN();
    expectDataError(() => pairedStandardError([1, 0], [1]), 'stats.lengthMismatch', /a and b.*got 2 and 1/);
    expectDataError(() => pairedStandardError([1], [0]), 'stats.tooFewValues', /more pairs than ddof/);
    expectDataError(() => pairedStandardError([], []), 'stats.empty');
    expectDataError(() => pairedStandardError([1, 0], [1, Infinity]), 'stats.badValue', /b\[1\]/);
  });
});
