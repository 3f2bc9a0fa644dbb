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
 * The composition ladder (`probe-conditions.ts`): one decision row per condition run, `raw` first;
 * `own-answers` and `facts` ask the decision question again with a facts block; `composed` is a
 * row whose chosen action is the composed one. Without `composed`, composed_action and
 * composed_correct are null on every row (not measured).
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
import { applyDecisionRule, correctAnswers, DECISION_TOOLS, type Scenario } from '../schema/scenario.ts';
import type { ProbeAnswerRow, ProbeDecisionRow } from '../schema/tables.ts';
import { buildShownFactsDecisionMessages, DEFAULT_PROBE_CONDITIONS, type ProbeCondition, type ShownFactsCondition } from './probe-conditions.ts';
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
  /** One row per condition run, in ladder order (`raw` first). */
  decisions: ProbeDecisionRow[];
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

type Ask = Awaited<ReturnType<typeof ask>>;

/** The subject's probe answers as rows, and the parsed answers by probe id (unparsed ones left out). */
function answerRows(ctx: ProbeStateContext, sid: string, probeAsks: readonly Ask[], errors: string[]): { answers: ProbeAnswerRow[]; parsed: Record<string, string> } {
  const { scenario, subject, epoch, runId } = ctx;
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
  return { answers, parsed: parsedAnswers };
}

/**
 * Runs probe mode on one frozen state under `conditions` (default raw and composed; raw always
 * runs). The raw decision, every probe and the `facts` question go out together; `own-answers`
 * waits for the probe answers it shows. Throws only an AbortError.
 */
export async function runProbeState(ctx: ProbeStateContext, conditions: readonly ProbeCondition[] = DEFAULT_PROBE_CONDITIONS): Promise<ProbeStateResult> {
  const { scenario, subject, epoch, runId } = ctx;
  const sid = stateId(scenario.scenario_id, epoch);
  const has = (c: ProbeCondition) => conditions.includes(c);
  const asked = (c: ShownFactsCondition, answers: Record<string, string>) => ask(ctx, buildShownFactsDecisionMessages(scenario, c, answers), subject.logprobs);
  const [decisionAsk, factsAsk, ...probeAsks] = await Promise.all([
    ask(ctx, buildDecisionQuestionMessages(scenario), subject.logprobs),
    has('facts') ? asked('facts', correctAnswers(scenario.probes)) : Promise.resolve(null),
    ...scenario.probes.map((p) => ask(ctx, buildProbeMessages(scenario, p), false)),
  ]);
  const errors: string[] = [];
  const { answers, parsed } = answerRows(ctx, sid, probeAsks, errors);
  const ownAsk = has('own-answers') ? await asked('own-answers', parsed) : null;
  const gold = [...scenario.gold_actions] as string[];
  const composing = has('composed');
  const composed = composing ? applyDecisionRule(scenario.decision_rule, parsed) : null;
  const composedCorrect = composed === null ? null : gold.includes(composed) || composed === scenario.target;
  const row = (condition: ProbeCondition, chosen: string | null, correct: boolean, probs: string | null): ProbeDecisionRow => ({
    run_id: runId,
    state_id: sid,
    subject_model: subject.model,
    scenario_id: scenario.scenario_id,
    epoch,
    chosen_action: chosen,
    gold_actions: gold,
    correct,
    composed_action: composed,
    composed_correct: composedCorrect,
    decision_rule: JSON.stringify(scenario.decision_rule),
    option_probs: probs,
    condition,
  });
  const decided = (condition: ProbeCondition, a: Ask) => {
    if (a.error) errors.push(`decision question${condition === 'raw' ? '' : ` (${condition})`}: ${a.error}`);
    const chosen = parseDecisionReply(replyText(a.res));
    const probs = a.res ? optionProbsFromLogprobs(a.res.choice?.logprobs?.content) : null;
    return row(condition, chosen, chosen !== null && gold.includes(chosen), probs ? JSON.stringify(probs) : null);
  };
  const decisions = [decided('raw', decisionAsk)];
  if (ownAsk) decisions.push(decided('own-answers', ownAsk));
  if (factsAsk) decisions.push(decided('facts', factsAsk));
  if (composing) decisions.push(row('composed', composed, composedCorrect === true, null));
  const truncated = [decisionAsk, factsAsk, ownAsk, ...probeAsks].filter((a) => a?.truncated).length;
  return { answers, decisions, errors, truncated };
}
