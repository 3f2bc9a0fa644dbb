/**
 * Shared helpers for the statistics tests (tests/stats): reference-data loaders, the StandoffError
 * assertion, and the distribution checks (two-sample Kolmogorov-Smirnov, Monte Carlo moment bands).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { StandoffError } from '../../src/errors.ts';

// ---------------------------------------------------------------------------------------------
// reference data

/** The repository root (this file is tests/helpers/stats.ts). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Parses a JSON file given relative to the repository root. */
function readRepoJson(relative: string): any {
  return JSON.parse(fs.readFileSync(path.join(ROOT, relative), 'utf8'));
}

/** tests/oracle/extra-stats.json (R / numpy / statsmodels / NLTK cases from tests/oracle/gen_extra_stats.py). */
export const loadExtraStats = (): any => readRepoJson('tests/oracle/extra-stats.json');

/** tests/oracle/bootstrap-extra.json (R boot, statsmodels, mpmath, C reference values from tests/oracle/gen_bootstrap_extra.py). */
export const loadBootstrapExtra = (): any => readRepoJson('tests/oracle/bootstrap-extra.json');

/** The committed copy of the shared oracle, tests/fixtures/oracle/cases.json. */
export const ORACLE_FIXTURE = path.join(ROOT, 'tests/fixtures/oracle/cases.json');
/** The shared oracle itself and its checker, present when ../shared sits beside the repo (as in CI). */
export const SHARED_ORACLE_CASES = path.resolve(ROOT, '../shared/oracle/cases.json');
export const SHARED_ORACLE_CHECKER = path.resolve(ROOT, '../shared/oracle/check.py');

/** How a field of an oracle case is compared: |got - expected| <= tol, or got inside a band. */
export type OracleCheck = { type: 'abs'; tol: number } | { type: 'band'; band: any };

/** One case of the shared oracle. */
export interface OracleCase {
  id: string;
  kind: string;
  input: any;
  expected: Record<string, any>;
  required: string[];
  check: Record<string, OracleCheck>;
  info: Record<string, any>;
}

/** Reads the committed oracle fixture (ORACLE_FIXTURE). */
export function loadOracleCases(): { cases: OracleCase[]; exact_tolerance: number } {
  return JSON.parse(fs.readFileSync(ORACLE_FIXTURE, 'utf8'));
}

/** A bootstrap_cluster case's `scores` (items x epochs) flattened to values with each value's item id. */
export function clusterCaseValues(input: { scores: number[][]; item_ids: string[] }): { values: number[]; ids: string[] } {
  const values: number[] = [];
  const ids: string[] = [];
  input.scores.forEach((row, i) => row.forEach((v) => (values.push(v), ids.push(input.item_ids[i]))));
  return { values, ids };
}

// ---------------------------------------------------------------------------------------------
// errors

/**
 * Asserts that `f` throws a StandoffError of kind 'data' with the given code, whose message is a
 * single line starting lower-case (identifiers such as clopperPearson keep their case) and, when
 * `message` is given, contains it (a string) or matches it (a RegExp).
 */
export function expectDataError(f: () => unknown, code: string, message?: string | RegExp): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a StandoffError').toBeInstanceOf(StandoffError);
  const e = caught as StandoffError;
  expect(e.kind).toBe('data');
  expect(e.code).toBe(code);
  expect(e.message).toMatch(/^[a-z]/);
  expect(e.message).not.toMatch(/\n/);
  if (typeof message === 'string') expect(e.message).toContain(message);
  else if (message) expect(e.message).toMatch(message);
}

// ---------------------------------------------------------------------------------------------
// distribution checks

/** sqrt(-ln(0.001 / 2) / 2): the two-sided KS critical coefficient at alpha = 0.001. */
export const KS_C = 1.9495;

/** Two-sample KS statistic, exact with ties (ECDFs compared after each distinct value). */
export function ksTwoSample(a: Float64Array, b: Float64Array): number {
  const x = Float64Array.from(a).sort();
  const y = Float64Array.from(b).sort();
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < x.length || j < y.length) {
    const v = Math.min(i < x.length ? x[i] : Infinity, j < y.length ? y[j] : Infinity);
    while (i < x.length && x[i] === v) i++;
    while (j < y.length && y[j] === v) j++;
    d = Math.max(d, Math.abs(i / x.length - j / y.length));
  }
  return d;
}

/** The asymptotic two-sample KS critical value at alpha = 0.001 for sample sizes n and m. */
export const ksCritical = (n: number, m: number): number => KS_C * Math.sqrt((n + m) / (n * m));

/** Sample mean and sample variance (denominator length - 1). */
export function moments(x: Float64Array): { mean: number; variance: number } {
  let m = 0;
  for (const v of x) m += v;
  m /= x.length;
  let s = 0;
  for (const v of x) s += (v - m) ** 2;
  return { mean: m, variance: s / (x.length - 1) };
}

/**
 * |sample mean - mu| and |sample variance - variance| within 5 Monte Carlo SEs (mu4: the 4th
 * central moment): the mean of B values has SE sqrt(variance / B), the sample variance
 * sqrt((mu4 - variance^2 (B - 3) / (B - 1)) / B).
 */
export function expectMoments(x: Float64Array, mu: number, variance: number, mu4: number, where: string): void {
  const B = x.length;
  const got = moments(x);
  const seMean = Math.sqrt(variance / B);
  const seVar = Math.sqrt((mu4 - (variance * variance * (B - 3)) / (B - 1)) / B);
  expect(Math.abs(got.mean - mu), `${where}: mean ${got.mean} vs ${mu} (5 SE = ${5 * seMean})`).toBeLessThanOrEqual(5 * seMean);
  expect(Math.abs(got.variance - variance), `${where}: variance ${got.variance} vs ${variance} (5 SE = ${5 * seVar})`).toBeLessThanOrEqual(
    5 * seVar,
  );
}

/**
 * Bootstrap replicates of a mean of n = d.length draws from the empirical distribution of d have
 * the exact moments of that distribution, within 5 Monte Carlo SEs (expectMoments): mean d-bar,
 * variance s2 / n and 4th central moment (m4 + 3 (n - 1) s2^2) / n^3, with s2 and m4 the plug-in
 * central moments of d.
 */
export function expectBootstrapMeanMoments(reps: Float64Array, d: number[], where: string): void {
  const n = d.length;
  const m = d.reduce((s, v) => s + v, 0) / n;
  const s2 = d.reduce((s, v) => s + (v - m) ** 2, 0) / n;
  const m4 = d.reduce((s, v) => s + (v - m) ** 4, 0) / n;
  expectMoments(reps, m, s2 / n, (m4 + 3 * (n - 1) * s2 * s2) / n ** 3, where);
}

/** The mean of x. */
export const mean = (x: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return s / x.length;
};

/** The median of x, which must already be sorted. */
export const sortedMedian = (x: Float64Array): number => (x[(x.length - 1) >> 1] + x[x.length >> 1]) / 2;
