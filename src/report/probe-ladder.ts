/**
 * The composition ladder in the report ("Reading Right, Acting Wrong" section 6.1): a table of
 * each subject's accuracy per step (a step not run says so), a table of the paired, state-clustered
 * differences between adjacent steps that were run (the figure is `figure-ladder.ts`). Numbers
 * come from `loadProbeLadder` (`src/analysis/probe-ladder.ts`).
 */
import type { ProbeLadder } from '../analysis/probe-ladder.ts';
import type { ProbeCondition } from '../schema/tables.ts';
import { cell, fmtCount, pp, ppInterval, table } from './markdown.ts';
import { shareCell } from './probe-interval-legend.ts';

/** What each step is called in the report. */
export const CONDITION_LABEL: Readonly<Record<ProbeCondition, string>> = Object.freeze({
  raw: 'Raw trace',
  'own-answers': 'Own answers shown',
  facts: 'Correct facts shown',
  composed: 'Composed in code',
});

export const NOT_RUN = 'not run';

export function renderLadder(l: ProbeLadder, level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['### The composition ladder\n'];
  out.push(
    `Each state's decision asked under each condition ("Reading Right, Acting Wrong" §6.1): on the raw trace; again with the subject's own probe answers shown beside the state; with the correct facts shown (the facts-only reference); ` +
      `and composed in code from the subject's own answers (no model call). Non-ambiguous states only. A condition the run did not ask is *${NOT_RUN}*, not 0 (\`standoff run --probe-conditions\`). ` +
      `Differences are between adjacent steps that were run, on the state answers decided under both, with a ${L}% paired cluster bootstrap that resamples whole states.\n`,
  );
  const conditions = Object.keys(CONDITION_LABEL) as ProbeCondition[];
  out.push(
    table(
      ['Subject model', ...conditions.map((c) => CONDITION_LABEL[c])],
      l.subjects.map((s) => [cell(s.subject), ...s.steps.map((x) => (x.accuracy ? shareCell(x.accuracy) : `*${NOT_RUN}*`))]),
      ['l', ...conditions.map(() => 'r' as const)],
    ),
  );
  const rows = l.subjects.flatMap((s) =>
    s.differences.map((d) => [
      cell(s.subject),
      `${CONDITION_LABEL[d.from]} → ${CONDITION_LABEL[d.to]}`,
      `${fmtCount(d.states)} (${fmtCount(d.pairs)})`,
      pp(d.difference),
      d.interval.lower === null ? `— (${d.interval.note?.startsWith('not reported') ? 'no spread' : 'too few states'})` : ppInterval(d.interval.lower, d.interval.upper),
    ]),
  );
  out.push(rows.length ? table(['Subject model', 'Step', 'States (answers)', 'Difference', `${L}% CI`], rows, ['l', 'l', 'r', 'r', 'r']) : 'Only one condition was run, so there is no step to compare.\n');
  return out.join('\n');
}
