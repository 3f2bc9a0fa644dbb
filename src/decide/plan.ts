/**
 * `standoff plan`: items needed to detect an effect, and the MDE at a given number of items, for
 * the four designs a comparison of two models can have (pure; the pilot estimates come from
 * `loadPilot` in load-plan.ts):
 *  - proportions, two independent runs: R `power.prop.test` (`twoProportionSampleSize`);
 *  - a continuous metric (--sd), two independent runs: R `power.t.test` (`tTestSampleSize`);
 *  - paired 0/1 outcomes (--paired --discordance q): the paired z-test of the per-item
 *    differences `standoff compare` runs, whose SD for 0/1 pairs is sqrt(q - effect^2)
 *    (`pairedPower`, Miller 2024);
 *  - paired continuous (--paired --sd of the per-pair differences): `power.t.test(type = "paired")`.
 * Epochs: each item is a cluster of --epochs observations with intraclass correlation --icc, so
 * the variance of an item's mean is sigma^2 DE / epochs, DE = 1 + (epochs - 1) icc
 * (`designEffect`); the items needed are the independent observations needed times DE / epochs.
 */
import { usageError } from '../errors.ts';
import { designEffect, pairedPower, solveIncreasing, tTestMde, tTestPower, tTestSampleSize, twoProportionMde, twoProportionPower, twoProportionSampleSize } from '../stats/index.ts';

export interface PlanInputs {
  /** Baseline rate of a 0/1 metric (proportion designs). */
  baseline?: number;
  /** SD of a continuous metric's observations (or, paired, of the per-pair differences). */
  sd?: number;
  /** Difference to detect, candidate - baseline (may be negative). */
  effect?: number;
  epochs?: number;
  icc?: number;
  paired?: boolean;
  /** Share of discordant pairs (paired 0/1). */
  discordance?: number;
  power?: number;
  alpha?: number;
  /** Items run: report the MDE at this many. */
  items?: number;
}

export type Design = 'two-proportion' | 'two-sample-t' | 'paired-proportion' | 'paired-t';

export interface Plan {
  design: Design;
  method: string;
  baseline: number | null;
  sd: number | null;
  effect: number | null;
  epochs: number;
  icc: number;
  design_effect: number;
  discordance: number | null;
  power: number;
  alpha: number;
  /** Items needed (per run; each run on the same items when paired), rounded up; null without --effect or when no number reaches the power. */
  items_needed: number | null;
  /** The same before rounding, in independent observations (R's n). */
  n_independent: number | null;
  /** Observations per run: items_needed x epochs. */
  observations: number | null;
  /** --items N and the smallest |effect| detected at N with `power` (same direction as --effect). */
  items: number | null;
  mde_at_items: number | null;
}

/** The design the inputs describe (flags named in the error when they do not describe one). */
export function planDesign(o: PlanInputs): Design {
  if (o.paired) {
    if (o.discordance !== undefined) return 'paired-proportion';
    if (o.sd !== undefined) return 'paired-t';
    throw usageError('plan.missingArg', '--paired needs --discordance Q (0/1 metric: share of items the two runs score differently) or --sd S (SD of the per-item differences)');
  }
  if (o.sd !== undefined) return 'two-sample-t';
  if (o.baseline !== undefined) return 'two-proportion';
  throw usageError('plan.missingArg', 'give --baseline RATE (0/1 metric) or --sd S (continuous), or a pilot: --traces S --metric M --a X --b Y');
}

const check = (flag: string, x: number | undefined, lo: number, hi: number, open = false) => {
  if (x === undefined) return;
  if (!(open ? x > lo && x < hi : x >= lo && x <= hi)) throw usageError('plan.badValue', `${flag} must be in ${open ? '(' : '['}${lo}, ${hi}${open ? ')' : ']'}, got ${x}`);
};

/** Items needed and MDE for the design (see the file comment). */
export function buildPlan(o: PlanInputs): Plan {
  const design = planDesign(o);
  check('--baseline', o.baseline, 0, 1);
  check('--power', o.power, 0, 1, true);
  check('--alpha', o.alpha, 0, 1, true);
  check('--discordance', o.discordance, 0, 1);
  if (o.epochs !== undefined && !(Number.isInteger(o.epochs) && o.epochs >= 1)) throw usageError('plan.badValue', `--epochs must be an integer >= 1, got ${o.epochs}`);
  if (o.items !== undefined && !(Number.isInteger(o.items) && o.items >= 2)) throw usageError('plan.badValue', `--items must be an integer >= 2, got ${o.items}`);
  if (o.sd !== undefined && !(o.sd > 0)) throw usageError('plan.badValue', `--sd must be > 0, got ${o.sd}`);
  if (o.effect === undefined && o.items === undefined) throw usageError('plan.missingArg', 'give --effect (e.g. 5pp) for the items needed, or --items N for the MDE');
  if (design === 'two-proportion' && o.effect !== undefined) check('--baseline + --effect', o.baseline! + o.effect, 0, 1);
  if (design === 'paired-proportion' && o.effect !== undefined && Math.abs(o.effect) > o.discordance!) throw usageError('plan.badValue', `--effect ${o.effect} cannot exceed --discordance ${o.discordance} (a difference needs discordant pairs)`);
  const epochs = o.epochs ?? 1;
  const icc = o.icc ?? 0;
  const de = designEffect(epochs, icc);
  const power = o.power ?? 0.8;
  const alpha = o.alpha ?? 0.05;
  const dir: 1 | -1 = o.effect !== undefined && o.effect > 0 ? 1 : -1;
  const s = { design, epochs, de, power, alpha, dir };
  const n = o.effect === undefined || o.effect === 0 ? null : independentN(o, s);
  const items = n === null ? null : Math.ceil((n * de) / epochs - 1e-9);
  return {
    design, method: METHOD[design], baseline: o.baseline ?? null, sd: o.sd ?? null, effect: o.effect ?? null, epochs, icc, design_effect: de,
    discordance: o.discordance ?? null, power, alpha, items_needed: items, n_independent: n, observations: items === null ? null : items * epochs,
    items: o.items ?? null, mde_at_items: o.items === undefined ? null : mdeAt(o, o.items, s),
  };
}

const METHOD: Record<Design, string> = {
  'two-proportion': 'two-sample test of proportions (R power.prop.test), n inflated by the design effect over epochs',
  'two-sample-t': 'two-sample t-test (R power.t.test), n inflated by the design effect over epochs',
  'paired-proportion': 'paired z-test of per-item differences (as standoff compare), SD sqrt(discordance - effect^2), design effect over epochs',
  'paired-t': 'paired t-test (R power.t.test type = "paired"), design effect over epochs',
};

type S = { design: Design; epochs: number; de: number; power: number; alpha: number; dir: 1 | -1 };

/** Independent observations (per run) needed: R's n. */
function independentN(o: PlanInputs, s: S): number | null {
  const { power, alpha } = s;
  if (s.design === 'two-proportion') return twoProportionSampleSize({ p1: o.baseline!, p2: o.baseline! + o.effect!, power, alpha });
  if (s.design === 'two-sample-t') return tTestSampleSize({ delta: o.effect!, sd: o.sd!, power, alpha });
  if (s.design === 'paired-t') return tTestSampleSize({ delta: o.effect!, sd: o.sd!, power, alpha, type: 'paired' });
  const sdDiff = Math.sqrt(Math.max(0, o.discordance! - o.effect! ** 2));
  return solveIncreasing((n) => pairedPower({ n, sdDiff, effect: o.effect!, alpha }) - power, 1e-6, 10);
}

/** Smallest |effect| detected at `items` items (epochs and DE applied). */
function mdeAt(o: PlanInputs, items: number, s: S): number | null {
  const n = (items * s.epochs) / s.de;
  const { power, alpha } = s;
  if (s.design === 'two-proportion') return twoProportionMde({ p1: o.baseline!, n, power, alpha, direction: s.dir });
  if (s.design === 'two-sample-t') return tTestMde({ n, sd: o.sd!, power, alpha });
  if (s.design === 'paired-t') return tTestMde({ n, sd: o.sd!, power, alpha, type: 'paired' });
  const q = o.discordance!;
  const f = (e: number) => pairedPower({ n, sdDiff: Math.sqrt(Math.max(0, q - e * e)), effect: e, alpha }) - power;
  return f(q) < 0 ? null : solveIncreasing(f, 0, q, q);
}

/** Power at `items` items for the design (the power-curve figure). */
export function planPowerAt(o: PlanInputs, items: number): number {
  const design = planDesign(o);
  const epochs = o.epochs ?? 1;
  const n = (items * epochs) / designEffect(epochs, o.icc ?? 0);
  const alpha = o.alpha ?? 0.05;
  const e = o.effect ?? 0;
  if (design === 'two-proportion') return twoProportionPower({ p1: o.baseline!, p2: o.baseline! + e, n, alpha });
  if (design === 'two-sample-t' || design === 'paired-t') return n > 1 ? tTestPower({ n, delta: e, sd: o.sd!, alpha, type: design === 'paired-t' ? 'paired' : 'two.sample' }) : alpha / 2;
  return pairedPower({ n, sdDiff: Math.sqrt(Math.max(0, o.discordance! - e * e)), effect: e, alpha });
}

/** A Vega-Lite spec of power against items, with the target power and the items needed marked. */
export function powerCurveSpec(power: (items: number) => number, o: { needed: number | null; target: number; title: string; maxItems: number }): object {
  const values: { items: number; power: number }[] = [];
  const steps = 80;
  for (let i = 1; i <= steps; i++) {
    const items = Math.max(2, Math.round((o.maxItems * i) / steps));
    values.push({ items, power: power(items) });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: o.title,
    width: 480,
    height: 260,
    layer: [
      { data: { values }, mark: { type: 'line' }, encoding: { x: { field: 'items', type: 'quantitative', title: 'items' }, y: { field: 'power', type: 'quantitative', scale: { domain: [0, 1] }, title: 'power' } } },
      { data: { values: [{ power: o.target }] }, mark: { type: 'rule', strokeDash: [4, 4], color: 'gray' }, encoding: { y: { field: 'power', type: 'quantitative' } } },
      ...(o.needed !== null ? [{ data: { values: [{ items: o.needed }] }, mark: { type: 'rule', color: 'firebrick' }, encoding: { x: { field: 'items', type: 'quantitative' } } }] : []),
    ],
  };
}
