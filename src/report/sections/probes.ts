/**
 * Section 7: paired probes ("Reading Right, Acting Wrong", Li, Krishnan & Padman).
 *
 * Each frozen decision state pairs the decision question with independent factual probes. The
 * tables are `loadProbeTables` (the same function as `standoff probes`): per subject, the distinct
 * states and their answers (epochs), the four observable outcomes, the share of decision errors
 * made after correct reading, P(action wrong | facts right), P(action right | a fact wrong), probe
 * accuracy and coverage (unanswerable probes count as wrong), code composition against the
 * subject's own decision on the same states, with intervals that resample whole states; ambiguous
 * states apart (no single correct action: in no decision or composition denominator); and probe
 * sufficiency over the distinct states by the paper's criterion (within a family, grouped by the
 * correct answers alone; `sufficiencyText`), saying plainly what cannot be concluded when it
 * fails or compared nothing. Calibration (expected calibration error and a
 * reliability table, `loadCalibration`) where the decisions carry option probabilities, on the
 * non-ambiguous states.
 */
import { CalibrationBins } from '../../stats/index.ts';
import { byText, cell, code, fixed, fmtCount, pct, pp, ppInterval, rateCell, table } from '../markdown.ts';
import type { ReportContext } from './context.ts';
import { sufficiencyText } from '../../analysis/probe-sufficiency-text.ts';
import { accuracyForm, renderAccuracyForm, type AccuracyForm } from '../probe-accuracy-form.ts';
import { createExcludedStates, loadSensitivity, renderSensitivity, type ProbeSensitivity } from '../../analysis/probe-sensitivity.ts';
import { ConcentrationCollector, loadConcentration, renderConcentration, type ConcentrationReport } from '../../analysis/probe-concentration.ts';
import { loadProbeParts } from '../../analysis/probe-parts.ts';
import { fallbackLegend, shareCell } from '../probe-interval-legend.ts';
import { loadLadderConditions, loadProbeLadder, type ProbeLadder } from '../../analysis/probe-ladder.ts';
import { renderLadder } from '../probe-ladder.ts';
import { finishCalibration, loadCalibration, type Calibration } from '../../analysis/probe-calibration.ts';
import { loadProbeTables, type ProbeGroupTable, type ProbeSufficiencyReport, type ShareInterval } from '../../analysis/probe-tables.ts';

export const CALIBRATION_BINS = 10;

export type ProbeSubject = { subject: string } & Omit<ProbeGroupTable, 'group'> & {
  calibration: Calibration | null;
};

export interface ProbesSection {
  available: boolean;
  message?: string;
  level: number;
  subjects: ProbeSubject[];
  sufficiency: ProbeSufficiencyReport | null;
  /** Decision accuracy against the share of errors after correct reading, across subjects. */
  accuracy_form?: AccuracyForm;
  /** With `--exclude-states`: the headline numbers with and without the flagged states. */
  sensitivity?: ProbeSensitivity;
  /** The composition ladder (section 6.1): accuracy per condition and adjacent differences, per subject; absent when the runs asked exactly raw and composed (the composition table). */
  ladder?: ProbeLadder;
  /** Error concentration across subjects (section 5.3); null when no subject read a state right. */
  concentration?: ConcentrationReport | null;
  calibration_available: boolean;
}

const SUBJECT = { expr: 'coalesce(s.subject, d.subject_model)', join: 'LEFT JOIN r_subject s ON s.run_id = d.run_id AND s.subject_model = d.subject_model' };

export async function probesSection(ctx: ReportContext): Promise<ProbesSection> {
  const [{ n }] = await ctx.q(`SELECT CAST(count(*) AS BIGINT) AS n FROM probe_decisions`);
  if (Number(n) === 0) {
    return {
      available: false,
      level: ctx.level,
      message: 'No paired probes in this store: the runs were made without probe mode, so the four-outcome analysis (reading right vs acting right), code composition, probe sufficiency and calibration are not available.',
      subjects: [],
      sufficiency: null,
      calibration_available: false,
    };
  }
  // Calibration first, while the heap is small: after the tables, their per-state columns are
  // garbage V8 has not collected yet, and the calibration's sort holds DuckDB's memory (at 1e7
  // episodes the section's peak RSS was there).
  const calibration = await loadCalibration(ctx, { subject: SUBJECT, bins: CALIBRATION_BINS });
  const parts = await loadProbeParts(ctx.q);
  // The concentration's (subject, state) pairs are read off the tables' rows as they are folded.
  const collected = new ConcentrationCollector();
  const t = await loadProbeTables(
    { conn: ctx.conn, q: ctx.q },
    { by: ['subject'], level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, subject: SUBJECT, parts, onStateRow: (g, state, facts, failed) => collected.add(String(g[0]), state, facts, failed) },
  );
  const subjects: ProbeSubject[] = t.groups
    .map(({ group, ...rest }) => ({ subject: String(group.subject), ...rest, calibration: null }))
    .sort((a, b) => byText(a.subject, b.subject));
  const calibrationAvailable = calibration !== null;
  if (calibration) for (const s of subjects) s.calibration = calibration.get(s.subject) ?? finishCalibration(0, new CalibrationBins(CALIBRATION_BINS));
  const concentration = await loadConcentration(ctx.q, { subject: SUBJECT, seed: ctx.seed, permutations: ctx.resamples, level: ctx.level, collected });
  let sensitivity: ProbeSensitivity | undefined;
  if (ctx.excludeStates) {
    await createExcludedStates((sql, params) => ctx.q(sql, params), ctx.excludeStates);
    sensitivity = await loadSensitivity(ctx.q, { by: ['subject'], level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, subject: SUBJECT }, ctx.excludeStates.length, { all: t });
  }
  // The ladder is shown when the runs asked more or less than raw and composed (which the composition table already compares).
  // The states are loaded only then: a store of raw and composed decisions (any store before the
  // column) holds one row per state, which the report does not need twice.
  const ladderOpts = { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, subject: SUBJECT };
  const conditions = await loadLadderConditions(ctx.q, ladderOpts);
  const ladder = conditions.join(',') !== 'raw,composed' ? await loadProbeLadder(ctx, { ...ladderOpts, conditions }) : null;
  ladder?.subjects.sort((a, b) => byText(a.subject, b.subject));
  const accuracy_form = accuracyForm(subjects.map((x) => ({ subject: x.subject, t: x })), { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level });
  return { available: true, level: ctx.level, subjects, sufficiency: t.sufficiency, ...(ladder ? { ladder } : {}), concentration, accuracy_form, ...(sensitivity ? { sensitivity } : {}), calibration_available: calibrationAvailable };
}

function renderIntro(p: ProbesSection): string[] {
  const L = Math.round(p.level * 100);
  const epochs = p.subjects.reduce((a, s) => Math.max(a, s.max_answers_per_state), 0);
  return [
    `Each frozen decision state was asked the decision question and, separately, factual probes about the same state. ` +
      `Crossing "every probe answered correctly" with "decision correct" gives four observable outcomes. An unanswerable probe counts as wrong. ` +
      `These are behavioural observations: a correct probe answer does not show the subject used that fact.\n`,
    `Unit: the distinct state. *States* counts distinct states; *answers* counts their state × epoch answers, the denominator of each share. ` +
      (epochs > 1
        ? `A state is answered up to ${epochs} times (epochs), and its answers are correlated, so each ${L}% interval (*cl.*) is a percentile cluster bootstrap that resamples whole states; ` +
          `the exact Clopper-Pearson interval, which would treat the answers as independent, is in \`results.json\` (\`exact\`). `
        : `Each state is answered once, so the ${L}% intervals are exact (Clopper-Pearson). `) +
      fallbackLegend(p) +
      `Ambiguous states have no single correct action: they are in no decision or composition denominator and are reported apart below.\n`,
  ];
}

function renderOutcomes(p: ProbesSection): string[] {
  return [
    table(
      ['Subject model', 'States (answers)', 'Facts right, action right', 'Facts right, action wrong', 'Fact wrong, action right', 'Fact wrong, action wrong'],
      p.subjects.map((s) => [
        cell(s.subject),
        `${fmtCount(s.states)} (${fmtCount(s.answers)})`,
        shareCell(s.cells.facts_right_action_right),
        shareCell(s.cells.facts_right_action_wrong),
        shareCell(s.cells.facts_wrong_action_right),
        shareCell(s.cells.facts_wrong_action_wrong),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
    table(
      ['Subject model', 'Decision accuracy', 'Errors after correct reading (share of errors)', 'P(action wrong \\| facts right)', 'P(action right \\| a fact wrong)', 'Probe accuracy (mean / pooled)', 'Probe coverage'],
      p.subjects.map((s) => [
        cell(s.subject),
        shareCell(s.decision_accuracy),
        shareCell(s.errors_after_correct_reading),
        shareCell(s.action_wrong_given_facts_right),
        shareCell(s.action_right_given_fact_wrong),
        `${pct(s.mean_probe_accuracy)} / ${pct(s.pooled_probe_accuracy)}`,
        rateCell(s.coverage.answered, s.coverage.total),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
}

function renderComposition(p: ProbesSection): string[] {
  const L = Math.round(p.level * 100);
  return [
    '### Composing the subject\'s own answers in code\n',
    `The state's decision rule applied in code to the subject's own probe answers, against the subject's own decision on the same states (ambiguous states excluded: composing NOANSWER there is not a repaired decision). ` +
      `Repaired: composition right where the decision was wrong; broken: the reverse. Interval: ${L}% paired cluster bootstrap of the difference (whole states resampled).\n`,
    table(
      ['Subject model', 'States (answers)', 'Composed in code', 'Own decision', 'Difference', `${L}% CI`, 'Repaired', 'Broken'],
      p.subjects.map((s) =>
        s.composed
          ? [cell(s.subject), `${fmtCount(s.composed.states)} (${fmtCount(s.composed.answers)})`, shareCell(s.composed.composed_accuracy), shareCell(s.composed.decision_accuracy), pp(s.composed.difference), ppInterval(s.composed.interval.lower, s.composed.interval.upper), fmtCount(s.composed.repaired), fmtCount(s.composed.broken)]
          : [cell(s.subject), '—', '— (no composed actions)', '—', '—', '—', '—', '—'],
      ),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
}

function renderAmbiguous(p: ProbesSection): string[] {
  const amb = p.subjects.filter((s) => s.ambiguous);
  if (!amb.length) return [];
  return [
    '### Ambiguous states, reported apart\n',
    `On an ambiguous state the policy's own conflict exception holds, so no single action is correct. Reported: reading (every probe right), whether the decision stayed inside the set of actions the exception allows, ` +
      `and whether composing the subject's own answers in code reached NOANSWER (the exception holds).\n`,
    table(
      ['Subject model', 'States (answers)', 'Facts right', 'Decision among the allowed actions', 'Composition reached NOANSWER'],
      amb.map((s) => [cell(s.subject), `${fmtCount(s.ambiguous!.states)} (${fmtCount(s.ambiguous!.answers)})`, shareCell(s.ambiguous!.all_facts_correct), shareCell(s.ambiguous!.allowed_action), shareCell(s.ambiguous!.composed_noanswer)]),
      ['l', 'r', 'r', 'r', 'r'],
    ),
  ];
}

function renderCalibration(p: ProbesSection): string[] {
  if (!p.calibration_available) {
    return ['### Calibration\n', 'No decision in this store carries option probabilities (the endpoints returned no logprobs), so calibration cannot be measured.\n'];
  }
  const bins = p.subjects[0]?.calibration?.bins ?? [];
  return [
    '### Calibration\n',
    `Confidence is the probability the subject gave the option it chose. ECE: expected calibration error over ${CALIBRATION_BINS} equal-width bins (right-closed); MCE: the largest bin gap. ` +
      `Decisions without probabilities or without a parseable choice are left out (counted below).\n`,
    table(
      ['Subject model', 'Decisions with probabilities', 'Left out', 'ECE', 'MCE', 'Mean confidence', 'Accuracy'],
      p.subjects.map((s) => {
        const c = s.calibration;
        if (!c) return [cell(s.subject), '0', '—', '—', '—', '—', '—'];
        const conf = c.bins.reduce((a, b) => a + (b.meanConfidence ?? 0) * b.count, 0);
        const acc = c.bins.reduce((a, b) => a + (b.accuracy ?? 0) * b.count, 0);
        return [cell(s.subject), fmtCount(c.n), fmtCount(c.without_probabilities), pct(c.ece), pct(c.mce), c.n ? pct(conf / c.n) : '—', c.n ? pct(acc / c.n) : '—'];
      }),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    'Reliability (accuracy / mean confidence / decisions per confidence bin):\n',
    table(
      ['Subject model', ...bins.map((b) => `(${fixed(b.lower, 1)}, ${fixed(b.upper, 1)}]`)],
      p.subjects.map((s) => [cell(s.subject), ...(s.calibration?.bins ?? []).map((b) => (b.count ? `${pct(b.accuracy, 0)} / ${pct(b.meanConfidence, 0)} / ${fmtCount(b.count)}` : '—'))]),
      ['l', ...bins.map(() => 'r' as const)],
    ),
  ];
}

/** Section `n` (7 in the Standoff report) of the report. */
export function renderProbes(p: ProbesSection, n = 7): string {
  const out: string[] = [`## ${n}. Paired probes: reading vs acting\n`];
  if (!p.available) {
    out.push(`${p.message}\n`);
    return out.join('\n');
  }
  out.push(...renderIntro(p), ...renderOutcomes(p), ...renderComposition(p));
  if (p.ladder) out.push(renderLadder(p.ladder, p.level));
  out.push(...renderAmbiguous(p));
  out.push('### Probe sufficiency\n');
  out.push(p.sufficiency ? `${sufficiencyText(p.sufficiency, { strong: (t) => `**${t}**`, quote: code, text: cell })}\n` : 'No state with probe answers.\n');
  if (p.concentration !== undefined) out.push(renderConcentration(p.concentration, p.sufficiency));
  if (p.accuracy_form && p.subjects.length >= 2) out.push(renderAccuracyForm(p.accuracy_form));
  if (p.sensitivity) out.push(renderSensitivity(p.sensitivity, 'subject'));
  out.push(...renderCalibration(p));
  return out.join('\n');
}
