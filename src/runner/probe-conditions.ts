/**
 * The composition ladder's conditions ("Reading Right, Acting Wrong" section 6.1): which ones a
 * run asks (`--probe-conditions`, config `probe_conditions`), and the decision question of the two
 * that show facts beside the frozen state.
 *
 * - `raw`: the decision question on the frozen state (`buildDecisionQuestionMessages`). Required:
 *   every probe table is built on it.
 * - `own-answers`: the same question, with the subject's own parsed probe answers shown between
 *   the state and the question (an unparsed answer is shown as `(no answer)`).
 * - `facts`: the same with the correct answers (the facts-only reference).
 * - `composed`: no model call; the scenario's rule applied in code to the subject's own answers.
 *
 * The facts block is `<header>` then one line per probe, `- <question> => <answer>`, in the
 * scenario's probe order; the sim endpoint reads it back with `parseShownFacts`.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import { usageError } from '../errors.ts';
import { PROBE_CONDITIONS, type ProbeCondition } from '../schema/tables.ts';
import type { Probe } from '../schema/scenario.ts';
import { DECISION_FORMAT, DECISION_QUESTION, PROBE_SYSTEM_PROMPT, STATE_MARKERS, buildFrozenState, type ProbeScenario } from './protocol.ts';

export { PROBE_CONDITIONS, type ProbeCondition };

/** What a run asks when nothing is chosen: the two steps that cost no extra model call. */
export const DEFAULT_PROBE_CONDITIONS: readonly ProbeCondition[] = ['raw', 'composed'];

/** The conditions that send the decision question again, with a facts block. */
export type ShownFactsCondition = Extract<ProbeCondition, 'own-answers' | 'facts'>;

/** Header line of the facts block, per condition (the sim endpoint recognises the condition by it; keep stable). */
export const FACTS_HEADERS: Readonly<Record<ShownFactsCondition, string>> = Object.freeze({
  'own-answers': 'Your own answers to factual questions about this state, each asked separately:',
  facts: 'Verified facts about this state:',
});
export const FACT_ARROW = ' => ';
export const NO_ANSWER_SHOWN = '(no answer)';

/**
 * Reads `--probe-conditions` (comma-separated; also a list from the config): known names only,
 * `raw` included, duplicates dropped, returned in ladder order. Usage error (exit 2) otherwise.
 */
export function parseProbeConditions(value: string | readonly string[]): ProbeCondition[] {
  const items = (typeof value === 'string' ? value.split(',') : [...value]).map((x) => x.trim()).filter((x) => x !== '');
  if (items.length === 0) throw usageError('config.invalid', `--probe-conditions needs at least raw (choose from ${PROBE_CONDITIONS.join(', ')})`);
  for (const x of items) {
    if (!(PROBE_CONDITIONS as readonly string[]).includes(x)) {
      throw usageError('config.invalid', `--probe-conditions: unknown condition "${x}" (choose from ${PROBE_CONDITIONS.join(', ')})`);
    }
  }
  if (!items.includes('raw')) throw usageError('config.invalid', `--probe-conditions must include raw (every probe table is built on the raw decision), got "${items.join(',')}"`);
  return PROBE_CONDITIONS.filter((c) => items.includes(c));
}

/** A config's conditions, normalised (ladder order, no duplicates); the default when it names none. */
export const probeConditionsOf = (cfg: { probe_conditions?: readonly string[] }): ProbeCondition[] => parseProbeConditions(cfg.probe_conditions ?? DEFAULT_PROBE_CONDITIONS);

/** Whether `conditions` are the default (a run config without the key hashes as before). */
export const isDefaultProbeConditions = (conditions: readonly string[] | undefined): boolean =>
  conditions === undefined || (conditions.length === DEFAULT_PROBE_CONDITIONS.length && DEFAULT_PROBE_CONDITIONS.every((c, i) => conditions[i] === c));

/** The facts block: the header, then `- question => answer` per probe (null answer: `(no answer)`). */
export function buildFactsBlock(condition: ShownFactsCondition, probes: readonly Probe[], answers: Readonly<Record<string, string>>): string {
  const lines = probes.map((p) => `- ${p.question.trim()}${FACT_ARROW}${Object.hasOwn(answers, p.probe_id) ? answers[p.probe_id] : NO_ANSWER_SHOWN}`);
  return [FACTS_HEADERS[condition], ...lines].join('\n');
}

/** The decision question of `own-answers` / `facts`: the frozen state, the facts block, then the question. */
export function buildShownFactsDecisionMessages(
  scenario: ProbeScenario & { probes: readonly Probe[] },
  condition: ShownFactsCondition,
  answers: Readonly<Record<string, string>>,
): ChatCompletionMessageParam[] {
  const block = buildFactsBlock(condition, scenario.probes, answers);
  return [
    { role: 'system', content: PROBE_SYSTEM_PROMPT },
    { role: 'user', content: `${buildFrozenState(scenario)}\n\n${block}\n\n${STATE_MARKERS.question} ${DECISION_QUESTION}\n${DECISION_FORMAT}` },
  ];
}

/**
 * The facts block in a decision request, read back: its condition and the answers by question
 * text (as written), or null when the request shows none (the raw decision question).
 */
export function parseShownFacts(stateText: string): { condition: ShownFactsCondition; answers: Map<string, string | null> } | null {
  for (const condition of Object.keys(FACTS_HEADERS) as ShownFactsCondition[]) {
    const at = stateText.lastIndexOf(`\n${FACTS_HEADERS[condition]}\n`);
    if (at < 0) continue;
    const answers = new Map<string, string | null>();
    const body = stateText.slice(at + FACTS_HEADERS[condition].length + 2);
    for (const line of body.split('\n')) {
      if (!line.startsWith('- ')) break;
      const k = line.lastIndexOf(FACT_ARROW);
      if (k < 0) continue;
      const answer = line.slice(k + FACT_ARROW.length).trim();
      answers.set(line.slice(2, k).trim(), answer === NO_ANSWER_SHOWN ? null : answer);
    }
    return { condition, answers };
  }
  return null;
}
