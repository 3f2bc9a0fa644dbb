/**
 * Hostile names (issue 13's list): text that would inject Markdown structure, HTML, links,
 * remote images, spreadsheet formulas, bidi reordering or NUL bytes if any output passed it
 * through. `hostileBundle` is a valid run whose subject and judge names, scenario ids, suite,
 * notes, invalid reasons and messages are these strings.
 */
import type { RunBundle } from '../../src/schema/tables.ts';
import { sampleBundle } from './fixtures.ts';

export const HOSTILE = {
  /** A newline that would start a heading and a script line in REPORT.md. */
  newline: 'sim:x\n## PWNED heading\n<script>alert(1)</script>',
  script: '<script>alert("x")</script>',
  link: '[click](javascript:alert(1))',
  image: '![](http://127.0.0.1:9/track.png)',
  bidi: 'sim:\u202Egnp.exe',
  pipe: 'a|b|c',
  hyperlink: '=HYPERLINK("http://127.0.0.1:9/x","open")',
  cmd: "+cmd|' /C calc'!A0",
  at: '@SUM(1+1)',
  nul: 'nul\u0000byte',
  esc: 'esc\u001b[31mred',
  // SQL: a name that ends a string literal (values are bound as parameters, never written in)
  quote: "o'brien'); DROP TABLE episodes; --",
} as const;

/** One run: every text field a user's data can fill carries a hostile value. */
export function hostileBundle(runId = 'hostile'): RunBundle {
  const subjects = [HOSTILE.newline, HOSTILE.script, HOSTILE.link, HOSTILE.image, HOSTILE.bidi, HOSTILE.pipe, HOSTILE.hyperlink, HOSTILE.nul, HOSTILE.quote];
  const base = sampleBundle(runId, 3);
  const episodes = subjects.flatMap((subject, s) =>
    base.episodes!.map((e, i) => ({
      ...e,
      episode_id: `${subject}/${i + 1}`,
      subject_model: subject,
      subject_family: s % 2 === 0 ? HOSTILE.at : null,
      scenario_id: i === 0 ? HOSTILE.cmd : e.scenario_id,
      invalid_reason: e.invalid_reason === null ? null : HOSTILE.link + HOSTILE.esc,
    })),
  );
  const judges = [HOSTILE.script, HOSTILE.bidi, HOSTILE.quote];
  return {
    ...base,
    run: { ...base.run, suite: HOSTILE.image, notes: `${HOSTILE.newline} ${HOSTILE.nul}`, config: JSON.stringify({ subjects }) },
    episodes,
    messages: episodes.flatMap((e) => base.messages!.slice(0, 3).map((m) => ({ ...m, episode_id: e.episode_id, content: m.content === null ? null : `${HOSTILE.hyperlink} ${HOSTILE.nul}` }))),
    scores: episodes.map((e) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'policy_compliant_action', value: e.status === 'valid' ? 1 : 0, answer: e.decision_tool, noanswer: false, explanation: HOSTILE.script })),
    judgments: episodes.flatMap((e) =>
      judges.map((j) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'reasoning_action_alignment', judge_model: j, judge_family: HOSTILE.pipe, verdict: 'ALIGNED', value: 1, excluded_self: false, raw: HOSTILE.newline })),
    ),
    probe_answers: [],
    probe_decisions: [],
    aggregates: [],
  };
}
