/**
 * Limitations, generated from the data: each item appears only when the data call for it.
 */
import { cell, fixed, fmtCount, md, pp } from '../markdown.ts';
import type { JudgesSection } from './judges.ts';
import type { PairwiseSection } from './pairwise.ts';
import type { ProbesSection } from './probes.ts';
import type { ResultsSection } from './results.ts';
import type { SummaryResult } from './summary.ts';

export function limitations(s: SummaryResult, r: ResultsSection, j: JudgesSection, p: ProbesSection, pw: PairwiseSection): string[] {
  const out: string[] = [];
  const temps = [...new Set(s.runs.flatMap((x) => (Object.keys(x.subject_temperatures).length ? Object.values(x.subject_temperatures) : x.temperature === null ? [] : [x.temperature])))];
  const tempText = temps.length === 1 ? ` at temperature ${temps[0]}` : temps.length > 1 ? ` at temperatures ${temps.join(', ')}` : '';
  const runsPerSubject = s.runs.length;
  out.push(
    `Results are one stochastic run${tempText} per subject arm${runsPerSubject > 1 ? ` (${runsPerSubject} runs combined)` : ''}, not a confidence interval over many independent batches: ` +
      `the intervals describe sampling variation across the scenarios and epochs of this run, not run-to-run or deployment variation (model versions can change).`,
  );
  const clusters = Math.min(...r.subjects.flatMap((x) => Object.values(x.metrics).map((m) => m.cluster?.clusters ?? Infinity)));
  if (Number.isFinite(clusters) && clusters < 30) {
    out.push(`The cluster intervals rest on ${clusters} scenarios; with so few clusters the cluster bootstrap tends to be too narrow, so read them as a lower bound on the uncertainty that scenario choice adds.`);
  }
  const unmeasured = r.subjects.filter((x) => !x.metrics.alignment.measured).map((x) => x.subject);
  if (unmeasured.length) out.push(md`Alignment was not measured for ${unmeasured} (no judge verdict): it is reported as "not measured", not as a rate, and the structural gate fails.`);
  const errors = r.subjects.reduce((a, x) => a + x.judge_verdicts.errors, 0);
  if (errors > 0) out.push(`${fmtCount(errors)} judge verdicts failed (ERROR); samples left without an eligible verdict are not measured and in no alignment denominator.`);
  if (s.totals.scenarios <= 50) {
    out.push(`The benchmark has ${fmtCount(s.totals.scenarios)} scenarios; results generalise to scenarios like these, not to high-stakes decisions in general.`);
  }
  out.push(
    `Policy action accuracy excludes ambiguous (NOANSWER) samples by design, while evidence gathering and alignment include them, so the three columns have different denominators.`,
  );
  if (j.available) {
    const judges = j.judges.map((x) => cell(x.judge)).join(', ');
    let t = `Alignment is a judge-based measurement (${judges}), not ground truth: the judges are models themselves.`;
    if (j.alpha && j.alpha.alpha !== null && j.alpha.alpha < 0.667) t += ` Their agreement is low (Krippendorff's alpha ${fixed(j.alpha.alpha, 2)}), so alignment differences between subjects should be read with caution.`;
    if (j.self_exclusion.removed_verdicts > 0) t += ` Self-exclusion removed ${fmtCount(j.self_exclusion.removed_verdicts)} verdicts, so some subjects are judged by fewer judges than others.`;
    const split = j.per_subject.reduce((a, x) => a + x.split_medians, 0);
    if (split > 0) t += ` ${fmtCount(split)} samples have a split median (0.5).`;
    const big = j.leave_one_out.filter((x) => x.delta !== null && Math.abs(x.delta) >= 0.05);
    if (big.length) t += ` Leaving one judge out moves a subject's alignment by 5 points or more in ${big.length} case${big.length === 1 ? '' : 's'} (largest shift ${pp(Math.max(...big.map((x) => Math.abs(x.delta!)))).replace('+', '')}).`;
    out.push(t);
  } else {
    out.push('No judgments are stored, so judge agreement, self-exclusion and judge sensitivity could not be checked; alignment scores, if present, are taken on trust.');
  }
  const sim = s.runs.filter((x) => x.simulated);
  if (sim.length) {
    out.push(
      `Subjects in ${sim.length === s.runs.length ? 'every run' : `run${sim.length === 1 ? '' : 's'} ${sim.map((x) => cell(x.run_id)).join(', ')}`} are simulated (${[...new Set(sim.flatMap((x) => x.subjects))].map(cell).join(', ')}): ` +
        `the numbers demonstrate the pipeline and its statistics, and say nothing about any real model.`,
    );
  }
  if (!s.gate.passed) out.push(md`The structural gate failed (${s.gate.checks.filter((c) => !c.passed).map((c) => c.check)}); the results are diagnostics until the run is repaired or re-run.`);
  const errored = r.subjects.reduce((a, x) => a + x.errored, 0);
  if (errored > 0) out.push(`${fmtCount(errored)} errored episodes are left out of every metric; if errors are not random (e.g. long transcripts time out), the remaining samples are biased.`);
  if (p.available) {
    out.push(
      `Paired-probe outcomes are behavioural: a correct probe answer does not show the subject used that fact in its decision, and probes may omit facts the decision needs` +
        (p.sufficiency && p.sufficiency.vacuous
          ? ` (the sufficiency check compared nothing here: each of the ${fmtCount(p.sufficiency.states)} distinct states is alone in its group).`
          : p.sufficiency && p.sufficiency.sufficient
            ? ' (here the probe set passed the sufficiency check on the observed states, which is evidence, not proof).'
            : p.sufficiency
              ? ` (here the probe set failed the sufficiency check: ${fmtCount(p.sufficiency.counterexample_states)} states in ${fmtCount(p.sufficiency.counterexamples.length)} groups share their correct answers but no correct action, so facts-right, action-wrong outcomes cannot be read as decision errors).`
              : '.'),
    );
  } else {
    out.push('No paired probes are stored, so errors cannot be split into misreading versus acting wrongly on correct reading.');
  }
  const mdes = pw.comparisons.filter((c) => c.mde !== null).map((c) => c.mde!);
  if (mdes.length) {
    out.push(`At these sample sizes the pairwise comparisons can reliably detect differences of about ${pp(Math.min(...mdes)).replace('+', '')} to ${pp(Math.max(...mdes)).replace('+', '')} (80% power); smaller true differences may go undetected, and a non-significant comparison is not evidence of equality.`);
  }
  return out;
}

export function renderLimitations(items: string[]): string {
  return ['## Limitations\n', ...items.map((t) => `- ${t}`), ''].join('\n');
}
