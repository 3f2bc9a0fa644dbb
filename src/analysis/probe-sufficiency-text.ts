/**
 * The probe-sufficiency verdict in words, shared by the report's probe section (Markdown) and
 * `standoff probes` (plain text), so both say the same thing: sufficient; not sufficient, with the
 * number of counterexample groups and states and the first few examples; or vacuous. The
 * conclusion that a facts-right, action-wrong outcome "points at the decision" is stated only when
 * the check passed and was not vacuous; otherwise the text says what cannot be concluded.
 *
 * Criterion: Li, Krishnan & Padman, "Reading Right, Acting Wrong", section 2.4 and appendix B.4.
 */
import type { ProbeSufficiencyReport } from './probe-tables.ts';

/** Counterexample groups shown by name; the rest are counted (all of them are in results.json). */
export const SUFFICIENCY_EXAMPLES = 3;

export type SufficiencyVerdict = 'sufficient' | 'not sufficient' | 'vacuous';

export function sufficiencyVerdict(s: ProbeSufficiencyReport): SufficiencyVerdict {
  return s.vacuous ? 'vacuous' : s.sufficient ? 'sufficient' : 'not sufficient';
}

/** True only when facts-right, action-wrong outcomes may be read as decision errors. */
export function pointsAtDecision(s: ProbeSufficiencyReport | null): boolean {
  return s !== null && s.sufficient && !s.vacuous;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** One counterexample: `family: a=yes, b=no -> state1 [withdraw] vs state2 [escalate]`. */
export function describeCounterexample(c: ProbeSufficiencyReport['counterexamples'][number], quote: (s: string) => string, text: (s: string) => string): string {
  const answers = Object.entries(c.answers).map(([k, v]) => `${k}=${v}`).join(', ') || '(no probes)';
  const states = c.states.slice(0, 2).map((st, i) => `${quote(st)} [${c.gold_sets[i].join('/')}]`);
  const more = c.states.length > 2 ? ` and ${plural(c.states.length - 2, 'more state')}` : '';
  return `${c.family === null ? '' : `${text(c.family)}: `}${text(answers)} -> ${states.join(' vs ')}${more}`;
}

/**
 * The verdict paragraph. `strong` wraps the verdict word (Markdown `**x**` or plain), `quote` a
 * state id (Markdown code span or plain), `text` escapes untrusted family names and probe ids.
 */
export function sufficiencyText(s: ProbeSufficiencyReport, fmt: { strong: (t: string) => string; quote: (t: string) => string; text: (t: string) => string }): string {
  const compared =
    `${plural(s.states, 'distinct state')} compared, grouped by ${s.grouped_by} into ${plural(s.answer_groups, 'group')}; ` +
    `${plural(s.groups_with_several_states, 'group holds', 'groups hold')} two or more states.`;
  const verdict = sufficiencyVerdict(s);
  if (verdict === 'vacuous') {
    return (
      `${fmt.strong('Vacuous')}: ${compared} No two states of a family share their correct probe answers (here every state has its own probes), so there was nothing to compare: ` +
      `this check says nothing about whether the probes determine the action, and a facts-right, action-wrong outcome cannot be attributed to the decision rather than to an unprobed fact. ` +
      `(The scenario loader checks each rule by enumerating its answer space instead.)`
    );
  }
  if (verdict === 'sufficient') {
    return (
      `${fmt.strong('Sufficient')} on these states: ${compared} In every group one action is correct for all its states, so correct answers determine a correct action; ` +
      `a facts-right, action-wrong outcome therefore points at the decision rather than at an unprobed fact. ` +
      `(No counterexample among these states is evidence, not proof, of sufficiency; and sufficiency does not show that a subject used the facts.)`
    );
  }
  const shown = s.counterexamples.slice(0, SUFFICIENCY_EXAMPLES).map((c) => describeCounterexample(c, fmt.quote, fmt.text));
  const rest = s.counterexamples.length - shown.length;
  return (
    `${fmt.strong('Not sufficient')}: ${compared} ${plural(s.counterexamples.length, 'counterexample group')} (${plural(s.counterexample_states, 'state')}) share their correct probe answers but no single action is correct for every state in them, ` +
    `for example ${shown.join('; ')}${rest > 0 ? `; and ${plural(rest, 'more group')}` : ''}. ` +
    `So correct reading does not determine the action here, and a facts-right, action-wrong outcome cannot be read as a decision error: it may reflect something the probes do not ask.`
  );
}
