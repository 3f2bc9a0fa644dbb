/** Stage: probe mode on one unit's frozen state, when the run has probes (`../probes.ts` holds the logic). */
import type { ModelClient } from '../solver.ts';
import { runProbeState, type ProbeStateResult } from '../probes.ts';
import { probeConditionsOf } from '../probe-conditions.ts';
import type { Rng } from '../../stats/rng.ts';
import type { UnitContext, UnitPlan } from './types.ts';

export function probeUnit(ctx: UnitContext, u: UnitPlan, client: ModelClient, requestSeed: number, rng: Rng): Promise<ProbeStateResult | null> {
  if (!ctx.cfg.probes) return Promise.resolve(null);
  return runProbeState({ runId: ctx.runId, subject: u.subject, scenario: u.scenario, epoch: u.epoch, client, requestSeed, rng, redactor: ctx.redactor, signal: ctx.signal }, probeConditionsOf(ctx.cfg));
}
