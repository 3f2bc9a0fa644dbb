/**
 * The shared oracle (../shared/oracle/cases.json: R 4.2, scipy 1.10, statsmodels 0.13, NLTK 3.8)
 * for the kinds this library computes without resampling: clopper_pearson, krippendorff_alpha and
 * median_self_exclusion. The tests read a committed copy (tests/fixtures/oracle/cases.json) so
 * they never skip; when the shared folder sits beside the repo (as in CI) the copy must match it.
 * Each field is checked with the tolerance its case declares (`check[field].tol`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clopperPearson } from '../../src/stats/clopper-pearson.ts';
import { krippendorffAlpha, type AlphaLevel } from '../../src/stats/krippendorff-alpha.ts';
import { medianOfJudges } from '../../src/stats/median-of-judges.ts';
import { loadOracleCases, ORACLE_FIXTURE, SHARED_ORACLE_CASES, SHARED_ORACLE_CHECKER, type OracleCase } from '../helpers/stats.ts';

const doc = loadOracleCases();
const ofKind = (kind: string) => doc.cases.filter((c) => c.kind === kind);

/** |got - expected| <= tol, recursively; expected null requires got null. */
function expectWithin(got: unknown, expected: unknown, tol: number, where: string): void {
  if (expected === null) {
    expect(got, where).toBeNull();
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(got), where).toBe(true);
    expect((got as unknown[]).length, where).toBe(expected.length);
    expected.forEach((e, i) => expectWithin((got as unknown[])[i], e, tol, `${where}[${i}]`));
  } else if (typeof expected === 'object') {
    for (const [k, e] of Object.entries(expected as object)) expectWithin((got as any)?.[k], e, tol, `${where}.${k}`);
  } else {
    expect(typeof got, where).toBe('number');
    const diff = Math.abs((got as number) - (expected as number));
    expect(diff, `${where}: got ${String(got)}, expected ${String(expected)}`).toBeLessThanOrEqual(tol);
  }
}

/** Our answers in the oracle's field names (the shape check.py reads). */
function answer(c: OracleCase): Record<string, unknown> {
  if (c.kind === 'clopper_pearson') {
    const { x, n, confidence } = c.input;
    const two = clopperPearson(x, n, { level: confidence });
    return {
      two_sided: [two.lower, two.upper],
      upper_one_sided: clopperPearson(x, n, { level: confidence, sided: 'upper' }).upper,
      lower_one_sided: clopperPearson(x, n, { level: confidence, sided: 'lower' }).lower,
    };
  }
  if (c.kind === 'krippendorff_alpha') {
    const out: Record<string, unknown> = {};
    for (const level of ['nominal', 'ordinal', 'interval', 'ratio'] as AlphaLevel[]) {
      out[level] = krippendorffAlpha(c.input.ratings, level).alpha;
    }
    return out;
  }
  if (c.kind === 'median_self_exclusion') {
    const r = medianOfJudges(c.input);
    return { medians: Object.fromEntries(r.perSample.map((s) => [s.sample, s.median])) };
  }
  throw new Error(`no answer for kind ${c.kind}`);
}

describe('oracle fixture', () => {
  it('is the committed copy of ../shared/oracle/cases.json when that folder is present', () => {
    if (!fs.existsSync(SHARED_ORACLE_CASES)) return; // CI without ../shared: the committed copy is authoritative
    expect(fs.readFileSync(ORACLE_FIXTURE, 'utf8')).toBe(fs.readFileSync(SHARED_ORACLE_CASES, 'utf8'));
  });

  it('holds the expected number of cases for each kind', () => {
    expect(ofKind('clopper_pearson')).toHaveLength(29);
    expect(ofKind('krippendorff_alpha')).toHaveLength(18);
    expect(ofKind('median_self_exclusion')).toHaveLength(6);
  });
});

for (const kind of ['clopper_pearson', 'krippendorff_alpha', 'median_self_exclusion']) {
  describe(`oracle: ${kind}`, () => {
    for (const c of ofKind(kind)) {
      it(c.id, () => {
        const got = answer(c);
        for (const field of c.required) expect(got, `${c.id}: required field ${field}`).toHaveProperty(field);
        for (const [field, expected] of Object.entries(c.expected)) {
          const check = c.check[field];
          expect(check.type).toBe('abs');
          expectWithin(got[field], expected, (check as { tol: number }).tol, `${c.id}.${field}`);
        }
      });
    }
  });
}

describe('oracle checker (check.py), when ../shared and Debian python are present', () => {
  const checker = SHARED_ORACLE_CHECKER;
  const python = '/usr/bin/python3';
  const available = fs.existsSync(checker) && fs.existsSync(python);
  it.skipIf(!available)('reports every clopper_pearson, krippendorff_alpha and median case as passed', () => {
    const kinds = ['clopper_pearson', 'krippendorff_alpha', 'median_self_exclusion'];
    const cases = doc.cases.filter((c) => kinds.includes(c.kind));
    const results = Object.fromEntries(cases.map((c) => [c.id, answer(c)]));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'standoff-oracle-'));
    const file = path.join(dir, 'results.json');
    fs.writeFileSync(file, JSON.stringify({ results }));
    try {
      const out = execFileSync(python, [checker, ORACLE_FIXTURE, file, '--allow-missing'], { encoding: 'utf8' });
      expect(out).toContain(`${cases.length} passed, 0 failed`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
