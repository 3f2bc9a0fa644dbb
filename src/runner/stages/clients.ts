/**
 * The model clients of a run: one limiter of `concurrency` slots shared by every request, request
 * parameters shared per endpoint (model at base URL), so that a parameter the endpoint refused is
 * adjusted once for the run (and noticed once), and counters of attempts and retries.
 */
import type { Redactor } from '../../redact.ts';
import type { ResolvedConfig, ResolvedModel } from '../config.ts';
import { RequestParams, type ParamAdjustment } from '../endpoint.ts';
import { Limiter, ModelClient } from '../solver.ts';

export interface RunClients {
  clientFor: (m: ResolvedModel, baseURL: string) => ModelClient;
  /** Request parameters changed after an endpoint refused them, in the order they happened. */
  adjustments: ParamAdjustment[];
  counters: { retries: number; requests: number };
}

export function buildClients(cfg: ResolvedConfig, redactor: Redactor, log: (line: string) => void): RunClients {
  const adjustments: ParamAdjustment[] = [];
  const counters = { retries: 0, requests: 0 };
  const paramsByEndpoint = new Map<string, RequestParams>();
  const paramsFor = (m: ResolvedModel) => {
    const key = `${m.base_url ?? 'sim'}\u0000${m.model}`;
    let p = paramsByEndpoint.get(key);
    if (!p) paramsByEndpoint.set(key, (p = new RequestParams(m)));
    return p;
  };
  const onAdjust = (a: ParamAdjustment) => {
    adjustments.push(a);
    log(`standoff run: notice: ${a.model} at ${a.base_url ?? 'the sim endpoint'} refused ${a.param} (${a.reason}); ${a.action} for the rest of the run${a.param.startsWith('max_') ? ` (set "max_tokens_param" in the config to skip this)` : ` (add it to "omit_params" in the config to skip this)`}`);
  };
  const limiter = new Limiter(cfg.concurrency);
  const clientFor = (m: ResolvedModel, baseURL: string) =>
    new ModelClient(m, {
      baseURL,
      apiKey: m.api_key_env ? (process.env[m.api_key_env] ?? '') : m.sim ? 'sim-no-key' : 'no-key',
      retries: cfg.retries,
      timeoutMs: cfg.timeouts.request_ms,
      limiter,
      redactor,
      retryDegenerate: cfg.retry_degenerate,
      params: paramsFor(m),
      onAdjust,
      onAttempt: () => {
        counters.requests++;
      },
      onRetry: () => {
        counters.retries++;
      },
    });
  return { clientFor, adjustments, counters };
}
