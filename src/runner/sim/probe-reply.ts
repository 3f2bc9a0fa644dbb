/**
 * The sim's probe mode (see `behavior.ts` for the keys): the decision question, with or without a
 * facts block (the composition ladder, `../probe-conditions.ts`), and the factual probes.
 *
 * Raw decision: wrong with the state's error rate (`stateErrorRate`: a hard/easy split shared by
 * every model, so errors fall on the same states). With facts shown (`own-answers`, `facts`) the
 * sim reads the block back, re-checks each shown answer against the state (a wrong one is caught
 * with probability `recheckShownAnswers`), applies the state's rule to the answers it now holds
 * and follows that action, slipping with the raw rate times `ownAnswersErrorFactor` /
 * `factsErrorFactor`: uncaught wrong answers lead it astray, so its own-answers accuracy depends on
 * its probe answers, and with the correct facts it is right most often.
 */
import { DECISION_QUESTION, DECISION_TOOLS, NOANSWER, STATE_MARKERS, isDecisionTool, type DecisionTool } from '../protocol.ts';
import { applyDecisionRule, canonicalDecimal, type Probe, type Scenario } from '../../schema/scenario.ts';
import { parseShownFacts } from '../probe-conditions.ts';
import type { SubjectParams } from './profiles.ts';
import { normText, pick, sha256Hex, u, type ReplyContext, type SimLogprob, type SimReply } from './reply-core.ts';

/** Share of states that are "hard" for every model (errors cluster on the same states). */
export const HARD_STATE_SHARE = 0.3;
const HARD_FACTOR = 2.5;

/** Per-state decision error rate with a model-independent hard/easy split averaging to `e`. */
export function stateErrorRate(seed: number, stateId: string, e: number): number {
  const hardE = Math.min(1, e * HARD_FACTOR);
  const easyE = Math.max(0, (e - HARD_STATE_SHARE * hardE) / (1 - HARD_STATE_SHARE));
  return u(sha256Hex('sim-state', seed, stateId), 'hard') < HARD_STATE_SHARE ? hardE : easyE;
}

function parseQuestion(userText: string): { state: string; question: string } {
  const marker = `\n${STATE_MARKERS.question} `;
  const at = userText.lastIndexOf(marker);
  const state = userText.slice(0, at);
  const rest = userText.slice(at + marker.length);
  const nl = rest.indexOf('\n');
  return { state, question: (nl === -1 ? rest : rest.slice(0, nl)).trim() };
}

function styled(answer: string, x: number): string {
  // Surface variation the strict parsers must tolerate (case, trailing period), never words.
  if (x < 0.15) return `${answer.charAt(0).toUpperCase()}${answer.slice(1)}.`;
  if (x < 0.25) return `${answer}\n`;
  return answer;
}

function wrongAnswer(probe: Probe, x: number): string {
  switch (probe.kind) {
    case 'yes_no':
      return probe.answer === 'yes' ? 'no' : 'yes';
    case 'choice':
      return pick(probe.options.filter((o) => o !== probe.answer), x);
    case 'number': {
      const n = Number(probe.answer);
      const deltas = [1, -1, 2, 10];
      const d = pick(deltas, x);
      return canonicalDecimal(Number.isInteger(n) ? n + d : n * (d > 0 ? 1.5 : 0.5));
    }
  }
}

const goldOf = (scenario: Scenario | null): DecisionTool[] => (scenario ? (scenario.target === NOANSWER ? [...scenario.gold_actions] : [scenario.target]) : []);

/** The raw decision: a gold action unless the state's error draw says wrong. */
function rawChoice(key: string, e: number, gold: readonly DecisionTool[]): { chosen: DecisionTool; correct: boolean } {
  const wrong = DECISION_TOOLS.filter((t) => !gold.includes(t));
  const correct = gold.length > 0 && (u(key, 'decision') >= e || wrong.length === 0);
  const chosen: DecisionTool = correct ? pick(gold, u(key, 'gold')) : pick(wrong.length ? wrong : DECISION_TOOLS, u(key, 'wrong'));
  return { chosen, correct };
}

/** With a facts block: follow the rule on the answers shown (NOANSWER: the allowed set), slipping with rate `e`. */
function shownFactsChoice(key: string, e: number, scenario: Scenario, shown: Map<string, string | null>, recheck: number): DecisionTool {
  const byQuestion = new Map([...shown].map(([q, a]) => [normText(q), a]));
  const answers: Record<string, string> = {};
  for (const pr of scenario.probes) {
    const a = byQuestion.get(normText(pr.question));
    // A shown answer that is wrong (or missing) is caught on re-reading the state with probability `recheck`.
    if (a !== pr.answer && u(key, `recheck:${pr.probe_id}`) < recheck) answers[pr.probe_id] = pr.answer;
    else if (a !== undefined && a !== null) answers[pr.probe_id] = a;
  }
  const ruled = applyDecisionRule(scenario.decision_rule, answers);
  const follow: DecisionTool[] = isDecisionTool(ruled) ? [ruled] : scenario.target === NOANSWER ? [...scenario.gold_actions] : [...DECISION_TOOLS];
  const others = DECISION_TOOLS.filter((t) => !follow.includes(t));
  return others.length > 0 && u(key, 'decision') < e ? pick(others, u(key, 'wrong')) : pick(follow, u(key, 'gold'));
}

/** Option log-probabilities around the chosen option (when the request asks for logprobs). */
function decisionLogprobs(ctx: ReplyContext, p: SubjectParams, chosen: DecisionTool, unparseable: boolean): SimLogprob[] {
  const key = ctx.requestKey;
  const conf = p.confidenceLow + (p.confidenceHigh - p.confidenceLow) * u(key, 'confidence');
  const others = DECISION_TOOLS.filter((t) => t !== chosen);
  const w = others.map((t) => 0.05 + u(key, `w:${t}`));
  const ws = w.reduce((a, b) => a + b, 0);
  const probs = new Map<string, number>([[chosen, conf], ...others.map((t, i) => [t, ((1 - conf) * w[i]) / ws] as [string, number])]);
  const k = Math.max(0, Math.min(20, Number(ctx.body.top_logprobs ?? 0) || 0));
  const top = [...probs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([token, pr]) => ({ token, logprob: Math.log(pr), bytes: [...Buffer.from(token, 'utf8')] }));
  const first = unparseable ? 'I' : chosen;
  const lp = unparseable ? Math.log(0.5) : Math.log(probs.get(chosen)!);
  return [{ token: first, logprob: lp, bytes: [...Buffer.from(first, 'utf8')], top_logprobs: top }];
}

type ReplyBase = Pick<SimReply, 'reasoning' | 'toolCalls' | 'finishReason' | 'scenarioId'>;

function decisionReply(ctx: ReplyContext, p: SubjectParams, state: string, scenario: Scenario | null, base: ReplyBase): SimReply {
  const key = ctx.requestKey;
  const stateId = scenario?.scenario_id ?? sha256Hex(normText(state)).slice(0, 16);
  const eRaw = stateErrorRate(ctx.seed, stateId, 1 - p.probeDecisionAccuracy);
  const gold = goldOf(scenario);
  const shown = scenario ? parseShownFacts(state) : null;
  let chosen: DecisionTool;
  let e = eRaw;
  if (shown && scenario) {
    e = eRaw * (shown.condition === 'facts' ? p.factsErrorFactor : p.ownAnswersErrorFactor);
    chosen = shownFactsChoice(key, e, scenario, shown.answers, p.recheckShownAnswers);
  } else {
    chosen = rawChoice(key, e, gold).chosen;
  }
  const correct = gold.includes(chosen);
  const unparseable = u(key, 'unparseable') < p.probeUnparseableRate;
  const content = unparseable ? `I would probably ${chosen.replace('_', ' ')} here.` : styled(chosen, u(key, 'style'));
  const logprobs = ctx.body.logprobs === true ? decisionLogprobs(ctx, p, chosen, unparseable) : null;
  return { ...base, mode: 'probe_decision', content, logprobs, debug: { chosen, correct, errorRate: e, unparseable, condition: shown?.condition ?? 'raw' } };
}

export function probeReply(ctx: ReplyContext, p: SubjectParams, userText: string): SimReply {
  const key = ctx.requestKey;
  const { state, question } = parseQuestion(userText);
  const scenario = ctx.index.bySituation(state);
  const base: ReplyBase = { reasoning: null, toolCalls: [], finishReason: 'stop', scenarioId: scenario?.scenario_id ?? null };
  if (question.startsWith(DECISION_QUESTION)) return decisionReply(ctx, p, state, scenario, base);

  const probe = scenario?.probes.find((q) => normText(q.question) === normText(question)) ?? null;
  if (!probe) {
    return { ...base, mode: 'probe', content: 'I cannot answer that from the state shown.', logprobs: null, debug: { probe: null } };
  }
  const correct = u(key, 'probe') < p.probeAccuracy;
  const unparseable = u(key, 'unparseable') < p.probeUnparseableRate;
  const answer = correct ? probe.answer : wrongAnswer(probe, u(key, 'wrong'));
  const content = unparseable ? `Based on the log, I believe the answer is ${answer}, but I am not certain.` : styled(answer, u(key, 'style'));
  return { ...base, mode: 'probe', content, logprobs: null, debug: { probe: probe.probe_id, correct, unparseable, answer } };
}
