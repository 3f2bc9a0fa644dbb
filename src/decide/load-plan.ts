/**
 * `standoff plan --traces S --metric M --a X --b Y`: design parameters estimated from a pilot
 * (the two subjects' paired outcomes, as `standoff compare` pairs them), then the items needed for
 * --effect at the pilot's epochs and the MDE of the pilot as run.
 */
import { usageError } from '../errors.ts';
import { intraclassCorrelation, minimumDetectableEffect, pairedPower, solveIncreasing } from '../stats/index.ts';
import type { Reducer } from '../analysis/metrics.ts';
import { compareTask } from './compare.ts';
import { loadSides } from './load-side.ts';
import { matchTasks, parseSideRef, type TaskValues } from './side.ts';

export interface PilotOptions {
  traces: string;
  metric: string;
  a: string;
  b: string;
  task?: string;
  reduce?: Reducer;
  effect?: number;
  power: number;
  alpha: number;
  seed: number;
  resamples: number;
}

export interface PilotPlan {
  pilot: {
    a: string; b: string; metric: string; task: string;
    items: number; pairs: number; epochs_per_item: number;
    /** Mean of a (the baseline) and mean difference b - a over the pairs. */
    baseline_rate: number; mean_difference: number;
    /** SD of the per-item mean difference b - a (what the clustered SE scales), and of the per-pair difference. */
    sd_item_difference: number; sd_pair_difference: number;
    /** ANOVA ICC of the per-epoch differences within items; null with one epoch. */
    icc_difference: number | null;
    /** Share of pairs scored differently (0/1 metrics); null otherwise. */
    discordance: number | null;
    only_a: number; only_b: number;
  };
  power: number;
  alpha: number;
  /** MDE of the pilot as run (clustered SE, as compare). */
  mde_as_run: number | null;
  effect: number | null;
  /** Items needed for --effect at the pilot's epochs per item. */
  items_needed: number | null;
  sd_item: number;
}

const sd = (x: number[]) => {
  const m = x.reduce((s, v) => s + v, 0) / x.length;
  return Math.sqrt(x.reduce((s, v) => s + (v - m) ** 2, 0) / (x.length - 1));
};

/** The pilot's estimates and the plan from them. */
export async function loadPilot(o: PilotOptions): Promise<PilotPlan> {
  const ref = (flag: string, s: string) => parseSideRef(flag, /^(run|subject):/.test(s) ? s : `subject:${s}`);
  const [[A, B]] = await loadSides({ baseline: ref('--a', o.a), candidate: ref('--b', o.b), traces: o.traces, metrics: [o.metric], reduce: o.reduce });
  const m = matchTasks(A, B);
  const pick = o.task ? m.pairs.find((p) => p[0] === o.task) : m.pairs.length === 1 ? m.pairs[0] : undefined;
  if (!pick) throw usageError('plan.task', `${o.task ? `no task "${o.task}" on both sides` : 'several tasks'}: pick one with --task (tasks: ${m.pairs.map((p) => p[0]).join(', ') || 'none shared'})`);
  const ta = A.tasks.get(pick[1])!;
  const tb = B.tasks.get(pick[2])!;
  const row = compareTask(o.metric, pick[0], ta, tb, { level: 1 - o.alpha, seed: o.seed, resamples: o.resamples, adjust: 'none' });
  const est = estimate(ta, tb);
  const mde = row.se === null || row.se === 0 ? null : minimumDetectableEffect({ n: 1, sdDiff: row.se, alpha: o.alpha, power: o.power });
  const need = o.effect === undefined || o.effect === 0 || est.sd_item_difference === 0 ? null : solveIncreasing((n) => pairedPower({ n, sdDiff: est.sd_item_difference, effect: o.effect!, alpha: o.alpha }) - o.power, 1e-6, 10);
  return {
    pilot: { a: A.ref.label, b: B.ref.label, metric: o.metric, task: pick[0], ...est, only_a: row.only_baseline, only_b: row.only_candidate },
    power: o.power, alpha: o.alpha, mde_as_run: mde, effect: o.effect ?? null, items_needed: need === null ? null : Math.ceil(need - 1e-9), sd_item: est.sd_item_difference,
  };
}

function estimate(a: TaskValues, b: TaskValues) {
  const byItem = new Map<string, number[]>();
  let sa = 0;
  let pairs = 0;
  let discord = 0;
  let binary = true;
  const diffs: number[] = [];
  for (const [k, x] of a.values) {
    const y = b.values.get(k);
    if (y === undefined) continue;
    pairs++;
    sa += x;
    if (x !== y) discord++;
    if ((x !== 0 && x !== 1) || (y !== 0 && y !== 1)) binary = false;
    diffs.push(y - x);
    const c = a.cluster.get(k)!;
    const l = byItem.get(c);
    if (l) l.push(y - x);
    else byItem.set(c, [y - x]);
  }
  if (byItem.size < 2) throw usageError('plan.pilotTooSmall', `the pilot has ${byItem.size} paired item(s); estimating a design needs at least 2`);
  const itemMeans = [...byItem.values()].map((d) => d.reduce((s, v) => s + v, 0) / d.length);
  const multi = pairs > byItem.size;
  return {
    items: byItem.size, pairs, epochs_per_item: pairs / byItem.size,
    baseline_rate: sa / pairs, mean_difference: diffs.reduce((s, v) => s + v, 0) / pairs,
    sd_item_difference: sd(itemMeans), sd_pair_difference: sd(diffs),
    icc_difference: multi ? intraclassCorrelation([...byItem.values()]) : null,
    discordance: binary ? discord / pairs : null,
  };
}
