/**
 * Probe mode ("Reading Right, Acting Wrong", section 2): for each subject x scenario x epoch the
 * decision state is frozen (situation, policy, and the log shown as already read:
 * `buildFrozenState`), and the subject answers, each as an INDEPENDENT request on the identical
 * state:
 * - the decision question once (`buildDecisionQuestionMessages`), asking for logprobs so option
 *   probabilities can be recorded when the endpoint returns them;
 * - every factual probe of the scenario (`buildProbeMessages`).
 *
 * Replies are read strictly (`parseDecisionReply`, `parseProbeReply`); an unparseable reply is
 * `null` and counts as wrong (coverage). `composed_action` applies the scenario's `decision_rule`
 * to the subject's OWN parsed probe answers (unanswered probes match no rule row), i.e. the
 * paper's code composition.
 *
 * `composed_correct`: the composed action is one of `gold_actions`, or equals the agent-mode
 * target. The second clause matters only for ambiguous states, whose rule composes `NOANSWER`
 * ("the policy's conflict exception holds") from correct reading; that is the correct diagnosis
 * (`isComposedCorrect` in the scenario schema), while `gold_actions` lists the decision tools the
 * exception allows. For non-ambiguous states the two clauses agree (gold = [target]).
 *
 * Requests carry the unit's request seed, so epochs are independent draws. A probe request that
 * fails after retries is recorded as unanswered and reported in `errors` (the run summary and
 * notes count them). A reply cut off at the token limit (`finish_reason = length`) is unanswered
 * too, counted in `truncated`, and never re-sent (an identical request would be cut off again;
 * raise `max_tokens`). Probe replies are never resampled. If the endpoint refuses `logprobs`
 * (HTTP 400 naming it), the client stops sending it for the run (`RequestParams`) and
 * `option_probs` is null.
 */
import { applyDecisionRule, DECISION_TOOLS, type DecisionTool, type Scenario } from '../schema/scenario.ts';
import type { ProbeAnswerRow, ProbeDecisionRow } from '../schema/tables.ts';
import type { Rng } from '../stats/rng.ts';
import { buildDecisionQuestionMessages, buildProbeMessages, parseDecisionReply, parseProbeReply } from './protocol.ts';
import { optionProbsFromLogprobs } from '../scorers/option-probs.ts';
import type { ResolvedModel } from './config.ts';
import { ModelCallError, abortError, isAbort, textDegenerate, type ChatResult, type ModelClient } from './solver.ts';
import type { Redactor } from '../redact.ts';
import { truncatedText } from './endpoint.ts';

export interface ProbeStateContext {
  runId: string;
  subject: ResolvedModel;
  scenario: Scenario;
  epoch: number;
  client: ModelClient;
  requestSeed: number;
  rng: Rng;
  redactor: Redactor;
  signal?: AbortSignal;
}

export interface ProbeStateResult {
  answers: ProbeAnswerRow[];
  decision: ProbeDecisionRow;
  /** Requests that failed after retries, or were cut off at the token limit (redacted messages). */
  errors: string[];
  /** Requests whose reply was cut off at the token limit (`finish_reason = length`). */
  truncated: number;
}

export const stateId = (scenarioId: string, epoch: number) => `${scenarioId}/${epoch}`;

async function ask(
  ctx: ProbeStateContext,
  messages: ReturnType<typeof buildProbeMessages>,
  logprobs: boolean,
): Promise<{ res: ChatResult | null; error: string | null; truncated: boolean }> {
  try {
    const res = await ctx.client.chat(
      { messages, seed: ctx.requestSeed, ...(logprobs ? { logprobs: true, top_logprobs: DECISION_TOOLS.length } : {}) },
      { signal: ctx.signal, rng: ctx.rng, degenerate: textDegenerate },
    );
    if (res.truncated) return { res: null, error: `${ctx.subject.model}: ${truncatedText(ctx.subject)}`, truncated: true };
    return { res, error: res.degenerate ? `${ctx.subject.model}: ${res.degenerate}` : null, truncated: false };
  } catch (err) {
    if (ctx.signal?.aborted || isAbort(err)) throw abortError(ctx.signal);
    return { res: null, error: err instanceof ModelCallError ? err.message : ctx.redactor.error(err), truncated: false };
  }
}

const replyText = (res: ChatResult | null) => (res && typeof res.message.content === 'string' ? res.message.content : null);

/** Runs probe mode on one frozen state. Throws only an AbortError. */
export async function runProbeState(ctx: ProbeStateContext): Promise<ProbeStateResult> {
  const { scenario, subject, epoch, runId } = ctx;
  const sid = stateId(scenario.scenario_id, epoch);
  const [decisionAsk, ...probeAsks] = await Promise.all([
    ask(ctx, buildDecisionQuestionMessages(scenario), subject.logprobs),
    ...scenario.probes.map((p) => ask(ctx, buildProbeMessages(scenario, p), false)),
  ]);
  const errors: string[] = [];
  const parsedAnswers: Record<string, string> = {};
  const answers: ProbeAnswerRow[] = scenario.probes.map((p, i) => {
    const r = probeAsks[i];
    if (r.error) errors.push(`probe ${p.probe_id}: ${r.error}`);
    const parsed = parseProbeReply(p, replyText(r.res));
    if (parsed !== null) parsedAnswers[p.probe_id] = parsed;
    return {
      run_id: runId,
      state_id: sid,
      subject_model: subject.model,
      scenario_id: scenario.scenario_id,
      epoch,
      probe_id: p.probe_id,
      question: p.question,
      expected: p.answer,
      answer: parsed,
      correct: parsed !== null && parsed === p.answer,
    };
  });
  if (decisionAsk.error) errors.push(`decision question: ${decisionAsk.error}`);
  const chosen = parseDecisionReply(replyText(decisionAsk.res));
  const gold = [...scenario.gold_actions] as string[];
  const composed = applyDecisionRule(scenario.decision_rule, parsedAnswers);
  const probs = decisionAsk.res ? optionProbsFromLogprobs(decisionAsk.res.choice?.logprobs?.content) : null;
  const decision: ProbeDecisionRow = {
    run_id: runId,
    state_id: sid,
    subject_model: subject.model,
    scenario_id: scenario.scenario_id,
    epoch,
    chosen_action: chosen,
    gold_actions: gold,
    correct: chosen !== null && gold.includes(chosen),
    composed_action: composed,
    composed_correct: gold.includes(composed) || composed === scenario.target,
    decision_rule: JSON.stringify(scenario.decision_rule),
    option_probs: probs ? JSON.stringify(probs) : null,
  };
  const truncated = [decisionAsk, ...probeAsks].filter((a) => a.truncated).length;
  return { answers, decision, errors, truncated };
}
