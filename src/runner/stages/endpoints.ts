/**
 * Stage 2, check the endpoints: one small request to every model served from outside
 * (`checkEndpoint`; in-process `sim:` models need none), in parallel, before anything is run.
 */
import { StandoffError, endpointError } from '../../errors.ts';
import type { Redactor } from '../../redact.ts';
import type { ResolvedConfig, ResolvedModel } from '../config.ts';
import { endpointHint } from '../endpoint.ts';
import { ModelCallError, checkEndpoint, isAbort, unitRng, type ModelClient } from '../solver.ts';
import type { RunClients } from './clients.ts';
import type { RunPlan } from './types.ts';

/** The models to check: each (base URL, model) served from outside, once, subjects first. */
function checkTargets(cfg: Pick<ResolvedConfig, 'subjects' | 'judges'>): Array<{ role: 'subject' | 'judge'; m: ResolvedModel }> {
  const seen = new Set<string>();
  const targets: Array<{ role: 'subject' | 'judge'; m: ResolvedModel }> = [];
  for (const [role, list] of [['subject', cfg.subjects], ['judge', cfg.judges]] as const) {
    for (const m of list) {
      const key = `${m.base_url}\u0000${m.model}`;
      if (m.sim || !m.base_url || seen.has(key)) continue;
      seen.add(key);
      targets.push({ role, m });
    }
  }
  return targets;
}

/**
 * The endpoint check before a run. A refused parameter is adjusted (and noticed) here already.
 * Throws `endpointError('run.endpointCheck')` (exit 5) naming the model, the URL and the cause
 * when any check fails; nothing has been written then.
 */
export async function checkEndpoints(
  cfg: Pick<ResolvedConfig, 'subjects' | 'judges' | 'seed'>,
  o: { clientFor: (m: ResolvedModel, baseURL: string) => ModelClient; log: (line: string) => void; signal?: AbortSignal; redactor: Redactor },
): Promise<void> {
  const results = await Promise.all(
    checkTargets(cfg).map(async ({ role, m }) => {
      const t = Date.now();
      try {
        const res = await checkEndpoint(o.clientFor(m, m.base_url!), role, { rng: unitRng(cfg.seed, 'endpoint-check', m.model), signal: o.signal, seed: cfg.seed });
        const ms = Date.now() - t;
        o.log(`standoff run: endpoint check: ${m.model} at ${m.base_url}: ok (${ms} ms)`);
        if (res.truncated) {
          o.log(`standoff run: warning: ${m.model} was cut off at the token limit answering the endpoint check (max_tokens ${m.max_tokens}): raise max_tokens, or its replies in the run will be cut off too`);
        }
        return null;
      } catch (err) {
        if (o.signal?.aborted || isAbort(err)) throw err;
        const description = err instanceof ModelCallError ? err.description : o.redactor.error(err);
        const hint = endpointHint(description, m);
        return `${role} "${m.model}": ${description}${hint ? `; ${hint}` : ''}`;
      }
    }),
  );
  const failed = results.filter((r): r is string => r !== null);
  if (failed.length > 0) {
    throw endpointError('run.endpointCheck', `endpoint check failed for ${failed.join('; and for ')} (nothing was run)`);
  }
}

/** Stage 2: checks the endpoints when any unit is left to run (an interrupt here ran nothing). */
export async function checkRunEndpoints(plan: RunPlan, clients: RunClients, signal: AbortSignal | undefined): Promise<void> {
  if (!plan.units.some((u) => !plan.done.has(u.id))) return;
  await checkEndpoints(plan.cfg, { clientFor: clients.clientFor, log: plan.log, signal, redactor: plan.redactor }).catch((err: unknown) => {
    if (signal?.aborted || isAbort(err)) throw new StandoffError('run.interrupted', 'interrupted', 'interrupted during the endpoint check; nothing was run');
    throw err;
  });
}
