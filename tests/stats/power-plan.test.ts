/**
 * `standoff plan`'s statistics against R (tests/oracle/power.json, from gen_power.py:
 * power.prop.test, power.t.test, pt with ncp, the ANOVA ICC), and the clustered and paired designs
 * by seeded simulation: data drawn at the planned number of items, analysed as `standoff compare`
 * would, reject at the planned power within Monte Carlo error.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createRng, intraclassCorrelation, noncentralTCdf, tTestMde, tTestPower, tTestSampleSize, twoProportionMde, twoProportionPower, twoProportionSampleSize, designEffect, type TTestType,
} from '../../src/stats/index.ts';
import { buildPlan, planPowerAt } from '../../src/decide/plan.ts';

type Case = { kind: string; args: Record<string, never>; expected: number; source: string };
const oracle: { cases: Case[] } = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'oracle', 'power.json'), 'utf8'));
const rel = (got: number, want: number, tol: number) => expect(Math.abs(got - want) / Math.max(1e-300, Math.abs(want)), `got ${got}, want ${want}`).toBeLessThan(tol);

describe('plan statistics against R (tests/oracle/power.json)', () => {
  for (const c of oracle.cases) {
    it(`${c.kind}: ${c.source}`, () => {
      const a = c.args as Record<string, number & string & number[][]>;
      const type = a.type as TTestType;
      if (c.kind === 'prop.power') rel(twoProportionPower({ n: a.n, p1: a.p1, p2: a.p2, alpha: a.alpha }), c.expected, 1e-12);
      else if (c.kind === 'prop.n') rel(twoProportionSampleSize({ p1: a.p1, p2: a.p2, power: a.power, alpha: a.alpha })!, c.expected, 1e-8);
      else if (c.kind === 'prop.p2') rel(a.p1 + twoProportionMde({ p1: a.p1, n: a.n, power: a.power, alpha: a.alpha, direction: 1 })!, c.expected, 1e-8);
      else if (c.kind === 't.power') rel(tTestPower({ n: a.n, delta: a.delta, sd: a.sd, alpha: a.alpha, type }), c.expected, 1e-10);
      else if (c.kind === 't.n') rel(tTestSampleSize({ delta: a.delta, sd: a.sd, power: a.power, alpha: a.alpha, type })!, c.expected, 1e-8);
      else if (c.kind === 't.delta') rel(tTestMde({ n: a.n, sd: a.sd, power: a.power, alpha: a.alpha, type }), c.expected, 1e-8);
      else if (c.kind === 'pt') rel(noncentralTCdf(a.t, a.df, a.ncp), c.expected, 1e-10);
      else if (c.kind === 'icc') rel(intraclassCorrelation(a.clusters)!, c.expected, 1e-12);
      else throw new Error(`unknown case ${c.kind}`);
    });
  }
  it('the oracle covers every kind', () => {
    expect(new Set(oracle.cases.map((c) => c.kind))).toEqual(new Set(['prop.power', 'prop.n', 'prop.p2', 't.power', 't.n', 't.delta', 'pt', 'icc']));
  });
  it('buildPlan without epochs is R: items = ceiling(power.prop.test n)', () => {
    const c = oracle.cases.find((x) => x.kind === 'prop.n')!;
    const a = c.args as Record<string, number>;
    const p = buildPlan({ baseline: a.p1, effect: a.p2 - a.p1, power: a.power, alpha: a.alpha });
    expect(p.items_needed).toBe(Math.ceil(c.expected));
    expect(designEffect(2, 0.15)).toBeCloseTo(1.15, 15);
    expect(buildPlan({ baseline: 0.7, effect: -0.05, epochs: 2, icc: 0.15 }).items_needed).toBe(Math.ceil((p.n_independent! * 1.15) / 2 - 1e-9));
  });
});

/** z test rejects at two-sided 0.05. */
const rejects = (z: number) => Math.abs(z) > 1.959963984540054;
const meanVar = (x: Float64Array) => {
  let m = 0;
  for (const v of x) m += v;
  m /= x.length;
  let s = 0;
  for (const v of x) s += (v - m) ** 2;
  return [m, s / (x.length - 1)];
};
// 1000 replications: Monte Carlo SE of a power near 0.8 is 0.0126; the band is +-4 SE.
const REPS = 1000;
const BAND = 4 * Math.sqrt((0.8 * 0.2) / REPS);

describe('plan by seeded simulation (clustered and paired designs)', () => {
  it('two independent runs, 3 epochs per item, icc 0.2: the planned items reach 80% power', () => {
    const plan = buildPlan({ baseline: 0.7, effect: -0.1, epochs: 3, icc: 0.2 });
    const n = plan.items_needed!;
    const rng = createRng(31);
    // An item's epochs share one draw with probability icc, else are independent: corr = icc.
    const item = (p: number) => {
      if (rng.uniform() < 0.2) return rng.uniform() < p ? 1 : 0;
      let s = 0;
      for (let e = 0; e < 3; e++) s += rng.uniform() < p ? 1 : 0;
      return s / 3;
    };
    let hits = 0;
    for (let r = 0; r < REPS; r++) {
      const a = Float64Array.from({ length: n }, () => item(0.7));
      const b = Float64Array.from({ length: n }, () => item(0.6));
      const [ma, va] = meanVar(a);
      const [mb, vb] = meanVar(b);
      if (rejects((mb - ma) / Math.sqrt(va / n + vb / n))) hits++;
    }
    expect(Math.abs(hits / REPS - 0.8)).toBeLessThan(BAND);
  });
  it('paired 0/1 runs with discordance 0.2: the planned items reach 80% power with compare\'s paired z-test', () => {
    const plan = buildPlan({ baseline: 0.7, effect: -0.05, paired: true, discordance: 0.2 });
    const n = plan.items_needed!;
    const rng = createRng(32);
    let hits = 0;
    for (let r = 0; r < REPS; r++) {
      // d = cand - base: +1 with prob (q + e) / 2, -1 with (q - e) / 2, else 0.
      const d = Float64Array.from({ length: n }, () => {
        const u = rng.uniform();
        return u < 0.075 ? 1 : u < 0.2 ? -1 : 0;
      });
      const [m, v] = meanVar(d);
      if (rejects(m / Math.sqrt(v / n))) hits++;
    }
    expect(Math.abs(hits / REPS - 0.8)).toBeLessThan(BAND);
  });
  it('the MDE at --items is the effect whose power is the target', () => {
    for (const inputs of [{ baseline: 0.7, effect: -0.05, epochs: 2, icc: 0.15, items: 500 }, { baseline: 0.7, effect: -0.05, paired: true, discordance: 0.2, items: 500 }, { sd: 12, effect: 3, items: 300 }]) {
      const p = buildPlan(inputs);
      expect(planPowerAt({ ...inputs, effect: Math.sign(inputs.effect) * p.mde_at_items! }, 500 === inputs.items ? 500 : 300)).toBeCloseTo(0.8, 8);
    }
  });
  it('bad designs are usage errors naming the flag', () => {
    expect(() => buildPlan({ baseline: 0.7 })).toThrow(/--effect/);
    expect(() => buildPlan({ paired: true, effect: 0.1 })).toThrow(/--discordance/);
    expect(() => buildPlan({ baseline: 0.7, effect: 0.1, paired: true, discordance: 0.05 })).toThrow(/cannot exceed --discordance/);
    expect(() => buildPlan({ baseline: 0.98, effect: 0.05 })).toThrow(/--baseline \+ --effect/);
  });
});
