/**
 * Section 7: paired probes ("Reading Right, Acting Wrong", Li, Krishnan & Padman).
 *
 * Each frozen decision state pairs the decision question with independent factual probes. Per
 * subject: the four observable outcomes (all facts right / some fact wrong x action right / wrong)
 * with exact intervals, the share of decision errors made after correct reading, P(action wrong |
 * facts right), P(action right | a fact wrong), probe accuracy and coverage (unanswerable probes
 * count as wrong), the accuracy of composing the subject's own probe answers in code against its
 * own decision on the same states (with a paired-bootstrap interval of the difference), probe
 * sufficiency (`probeSufficiency`: do states with the same correct probe answers share a gold
 * action?), and calibration (expected calibration error and a reliability table) where the
 * decisions carry option probabilities.
 *
 * SQL reduces the states to counts per (subject, outcome, composed, probes total/answered/right);
 * the shares follow `probeOutcomes` exactly (tests check it on a store small enough to run both).
 * Calibration receives per-subject confidence/correctness vectors as typed arrays.
 */
import { quoteLiteral } from '../../store/duckdb.ts';
import { expectedCalibrationError, pairedBootstrap, probeOutcomeFromTally, probeSufficiency, type CalibrationBin, type Share } from '../../stats/index.ts';
import { StandoffError } from '../../errors.ts';
import { byText, cell, code, fixed, fmtCount, pct, pctInterval, pp, ppInterval, rateCell, table } from '../markdown.ts';
import type { ReportContext } from './context.ts';
import { f64 } from './intervals.ts';

export const CALIBRATION_BINS = 10;

export interface ProbeSubject {
  subject: string;
  states: number;
  states_without_probes: number;
  cells: { facts_right_action_right: Share; facts_right_action_wrong: Share; facts_wrong_action_right: Share; facts_wrong_action_wrong: Share };
  all_facts_correct: Share;
  decision_accuracy: Share;
  errors_after_correct_reading: Share;
  action_wrong_given_facts_right: Share;
  action_right_given_fact_wrong: Share;
  mean_probe_accuracy: number | null;
  pooled_probe_accuracy: number | null;
  coverage: { answered: number; total: number; rate: number | null };
  composed: {
    n: number;
    composed_accuracy: Share;
    decision_accuracy: Share;
    difference: number;
    lower: number | null;
    upper: number | null;
    method: string;
    repaired: number;
    broken: number;
  } | null;
  calibration: { n: number; without_probabilities: number; ece: number | null; mce: number | null; bins: CalibrationBin[] } | null;
}

export interface ProbesSection {
  available: boolean;
  message?: string;
  level: number;
  subjects: ProbeSubject[];
  sufficiency: {
    sufficient: boolean;
    states: number;
    answer_groups: number;
    counterexamples: { answers: Record<string, string>; states: string[]; gold_sets: string[][] }[];
  } | null;
  calibration_available: boolean;
}

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
  // One row per (subject, state), materialized once: outcome, composition, probe counts, and the
  // confidence the subject gave its chosen option (null without option probabilities).
  await ctx.conn.run(`CREATE OR REPLACE TEMP TABLE r_states AS
    SELECT coalesce(s.subject, d.subject_model) AS subject, d.run_id, d.subject_model, d.state_id, d.correct AS action, d.composed_correct AS composed,
           d.chosen_action IS NULL AS unparsed, d.option_probs IS NOT NULL AS has_probs,
           CASE WHEN d.option_probs IS NOT NULL AND d.chosen_action IS NOT NULL
                THEN TRY_CAST(json_extract_string(d.option_probs, '$."' || d.chosen_action || '"') AS DOUBLE) END AS conf,
           CAST(coalesce(a.total, 0) AS INTEGER) AS total, CAST(coalesce(a.answered, 0) AS INTEGER) AS answered, CAST(coalesce(a.right_, 0) AS INTEGER) AS right_,
           coalesce(a.akey, CAST(0 AS UBIGINT)) AS akey, list_sort(d.gold_actions) AS gold
    FROM probe_decisions d
    LEFT JOIN (SELECT run_id, subject_model, state_id, count(*) AS total, count(answer) AS answered, count(*) FILTER (WHERE correct) AS right_,
                      bit_xor(hash(probe_id || chr(0) || expected)) AS akey
               FROM probe_answers GROUP BY ALL) a USING (run_id, subject_model, state_id)
    LEFT JOIN r_subject s USING (run_id, subject_model)`);
  const stateSql = `SELECT * FROM r_states`;
  const rows = await ctx.q(`
    SELECT subject, action, composed, total, answered, right_, CAST(count(*) AS BIGINT) AS n
    FROM (${stateSql}) GROUP BY ALL ORDER BY ALL`);
  const subjects = [...new Set(rows.map((r) => String(r.subject)))].sort(byText);
  const out: ProbeSubject[] = [];
  for (const subject of subjects) {
    let frar = 0, fraw = 0, fwar = 0, fwaw = 0, without = 0;
    let accSum = 0, pooledNum = 0, answered = 0, total = 0;
    let cn = 0, composedRight = 0, decisionRight = 0, repaired = 0, broken = 0;
    const cellsC = { tt: 0, tf: 0, ft: 0, ff: 0 }; // composed x decision counts
    for (const r of rows.filter((x) => x.subject === subject)) {
      const w = Number(r.n);
      const t = Number(r.total);
      if (t === 0) {
        without += w;
        continue;
      }
      const facts = Number(r.right_) === t;
      const action = r.action === true;
      if (facts && action) frar += w;
      else if (facts) fraw += w;
      else if (action) fwar += w;
      else fwaw += w;
      accSum += (w * Number(r.right_)) / t;
      pooledNum += w * Number(r.right_);
      answered += w * Number(r.answered);
      total += w * t;
      if (r.composed !== null) {
        const c = r.composed === true;
        cn += w;
        if (c) composedRight += w;
        if (action) decisionRight += w;
        if (c && !action) repaired += w;
        if (!c && action) broken += w;
        if (c && action) cellsC.tt += w;
        else if (c) cellsC.tf += w;
        else if (action) cellsC.ft += w;
        else cellsC.ff += w;
      }
    }
    // The shares themselves come from the statistics library, from this subject's weighted tally.
    const g = probeOutcomeFromTally(
      subject,
      { frar, fraw, fwar, fwaw, statesWithoutProbes: without, accSum, pooledNum, answered, total, cn, composedRight, decisionRightOnComposed: decisionRight, repaired, broken },
      { level: ctx.level },
    );
    let composed: ProbeSubject['composed'] = null;
    if (g.composed) {
      let lower: number | null = null;
      let upper: number | null = null;
      if (cn >= 2) {
        // Paired (composed, decision) vectors rebuilt from the 2 x 2 counts, in a fixed cell order.
        const a = new Float64Array(cn);
        const b = new Float64Array(cn);
        let i = 0;
        for (const [ca, cb, k] of [[1, 1, cellsC.tt], [1, 0, cellsC.tf], [0, 1, cellsC.ft], [0, 0, cellsC.ff]] as const) {
          for (let j = 0; j < k; j++, i++) {
            a[i] = ca;
            b[i] = cb;
          }
        }
        try {
          const r = pairedBootstrap(a, b, { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, method: 'percentile' });
          lower = r.lower;
          upper = r.upper;
        } catch (err) {
          if (!(err instanceof StandoffError)) throw err;
        }
      }
      composed = {
        n: g.composed.n,
        composed_accuracy: g.composed.composedAccuracy,
        decision_accuracy: g.composed.decisionAccuracy,
        difference: g.composed.difference,
        lower,
        upper,
        method: 'paired-bootstrap-percentile',
        repaired: g.composed.repaired,
        broken: g.composed.broken,
      };
    }
    out.push({
      subject,
      states: g.states,
      states_without_probes: g.statesWithoutProbes,
      cells: {
        facts_right_action_right: g.cells.factsRightActionRight,
        facts_right_action_wrong: g.cells.factsRightActionWrong,
        facts_wrong_action_right: g.cells.factsWrongActionRight,
        facts_wrong_action_wrong: g.cells.factsWrongActionWrong,
      },
      all_facts_correct: g.allFactsCorrect,
      decision_accuracy: g.decisionAccuracy,
      errors_after_correct_reading: g.errorsAfterCorrectReading,
      action_wrong_given_facts_right: g.actionWrongGivenFactsRight,
      action_right_given_fact_wrong: g.actionRightGivenFactWrong,
      mean_probe_accuracy: g.meanProbeAccuracy,
      pooled_probe_accuracy: g.pooledProbeAccuracy,
      coverage: g.coverage,
      composed,
      calibration: null,
    });
  }

  // Calibration: confidence = the probability the subject gave its chosen option.
  const probs = await ctx.q(`SELECT CAST(count(*) FILTER (WHERE has_probs) AS BIGINT) AS n FROM r_states`);
  const calibrationAvailable = Number(probs[0].n) > 0;
  if (calibrationAvailable) {
    const totals = await ctx.q(`SELECT subject, CAST(count(*) AS BIGINT) AS m FROM r_states GROUP BY subject`);
    for (const s of out) {
      const t = await ctx.arrow(`
        SELECT conf, CAST(action AS DOUBLE) AS correct FROM r_states
        WHERE subject = ${quoteLiteral(s.subject)} AND conf BETWEEN 0 AND 1 ORDER BY run_id, state_id`);
      const conf = Array.from(f64(t, 'conf'));
      const correct = Array.from(f64(t, 'correct'), (x) => (x === 1 ? 1 : 0) as 0 | 1);
      const m = Number(totals.find((r) => r.subject === s.subject)?.m ?? 0);
      const e = expectedCalibrationError(conf, correct, { bins: CALIBRATION_BINS });
      s.calibration = { n: e.n, without_probabilities: m - e.n, ece: e.ece, mce: e.maxCalibrationError, bins: e.bins };
    }
  }

  // Sufficiency: one entry per distinct (correct probe answers, gold set) over the states.
  // (A state is the same frozen decision state for every subject: its correct answers and gold set
  // do not depend on who answered.)
  // States are keyed by an order-free 64-bit hash of their (probe, correct answer) pairs; only one
  // example state per distinct (key, gold set) has its answers read back.
  const suffRows = await ctx.q(`
    WITH ex AS (SELECT akey, gold, min(run_id || chr(31) || subject_model || chr(31) || state_id) AS k FROM r_states GROUP BY ALL),
    pa AS (SELECT run_id || chr(31) || subject_model || chr(31) || state_id AS k, probe_id, expected FROM probe_answers)
    SELECT ex.gold, replace(ex.k, chr(31), '/') AS example, coalesce(string_agg(pa.probe_id || '=' || pa.expected, chr(10) ORDER BY pa.probe_id), '') AS answers
    FROM ex LEFT JOIN pa USING (k) GROUP BY ALL ORDER BY answers, example`);
  const [{ states: totalStates }] = await ctx.q(`SELECT CAST(count(*) AS BIGINT) AS states FROM (SELECT DISTINCT run_id, state_id FROM r_states)`);
  const suff = probeSufficiency(
    suffRows.map((r, i) => ({
      state_id: `${r.example}#${i}`,
      probe_answers: Object.fromEntries(
        String(r.answers)
          .split('\n')
          .filter(Boolean)
          .map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]),
      ),
      gold_actions: (r.gold as string[]).length ? (r.gold as string[]).map(String) : ['(none)'],
    })),
  );
  return {
    available: true,
    level: ctx.level,
    subjects: out,
    sufficiency: {
      sufficient: suff.sufficient,
      states: Number(totalStates),
      answer_groups: suff.groups.length,
      counterexamples: suff.counterexamples.map((c) => ({ answers: c.answers, states: c.states.map((s) => s.replace(/#\d+$/, '')), gold_sets: c.goldSets })),
    },
    calibration_available: calibrationAvailable,
  };
}

const shareCell = (s: Share) => `${rateCell(s.count, s.n)} ${pctInterval(s.lower, s.upper)}`;

export function renderProbes(p: ProbesSection): string {
  const L = Math.round(p.level * 100);
  const out: string[] = ['## 7. Paired probes: reading vs acting\n'];
  if (!p.available) {
    out.push(`${p.message}\n`);
    return out.join('\n');
  }
  out.push(
    `Each frozen decision state was asked the decision question and, separately, factual probes about the same state. ` +
      `Crossing "every probe answered correctly" with "decision correct" gives four observable outcomes (shares of states, ${L}% exact intervals). ` +
      `An unanswerable probe counts as wrong. These are behavioural observations: a correct probe answer does not show the subject used that fact.\n`,
  );
  out.push(
    table(
      ['Subject model', 'States', 'Facts right, action right', 'Facts right, action wrong', 'Fact wrong, action right', 'Fact wrong, action wrong'],
      p.subjects.map((s) => [
        cell(s.subject),
        fmtCount(s.states),
        shareCell(s.cells.facts_right_action_right),
        shareCell(s.cells.facts_right_action_wrong),
        shareCell(s.cells.facts_wrong_action_right),
        shareCell(s.cells.facts_wrong_action_wrong),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  out.push(
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
  );
  out.push('### Composing the subject\'s own answers in code\n');
  out.push(
    `The scenario's decision rule applied in code to the subject's own probe answers, against the subject's own decision on the same states. ` +
      `Repaired: composition right where the decision was wrong; broken: the reverse. Interval: ${L}% paired bootstrap of the difference.\n`,
  );
  out.push(
    table(
      ['Subject model', 'States', 'Composed in code', 'Own decision', 'Difference', `${L}% CI`, 'Repaired', 'Broken'],
      p.subjects.map((s) =>
        s.composed
          ? [cell(s.subject), fmtCount(s.composed.n), shareCell(s.composed.composed_accuracy), shareCell(s.composed.decision_accuracy), pp(s.composed.difference), ppInterval(s.composed.lower, s.composed.upper), fmtCount(s.composed.repaired), fmtCount(s.composed.broken)]
          : [cell(s.subject), '—', '— (no composed actions)', '—', '—', '—', '—', '—'],
      ),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  const suf = p.sufficiency!;
  out.push('### Probe sufficiency\n');
  out.push(
    suf.sufficient
      ? `**Sufficient** on these states: all ${fmtCount(suf.states)} states fall into ${fmtCount(suf.answer_groups)} groups of identical correct probe answers, and every group shares a gold action, so correct answers can determine a correct action; a facts-right, action-wrong outcome therefore points at the decision rather than at an unprobed fact. ` +
          `(No counterexample among these states is evidence, not proof, of sufficiency; and sufficiency does not show that a subject used the facts.)\n`
      : `**Not sufficient**: ${suf.counterexamples.length} group${suf.counterexamples.length === 1 ? '' : 's'} of states share their correct probe answers but no gold action, so there facts-right, action-wrong outcomes may reflect unprobed facts. ` +
          suf.counterexamples
            .slice(0, 5)
            .map((c) => `${c.states.slice(0, 3).map(code).join(', ')} (gold sets ${c.gold_sets.map((g) => g.join('/')).join(' vs ')})`)
            .join('; ') +
          '.\n',
  );
  out.push('### Calibration\n');
  if (!p.calibration_available) {
    out.push('No decision in this store carries option probabilities (the endpoints returned no logprobs), so calibration cannot be measured.\n');
  } else {
    out.push(
      `Confidence is the probability the subject gave the option it chose. ECE: expected calibration error over ${CALIBRATION_BINS} equal-width bins (right-closed); MCE: the largest bin gap. ` +
        `Decisions without probabilities or without a parseable choice are left out (counted below).\n`,
    );
    out.push(
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
    );
    out.push('Reliability (accuracy / mean confidence / decisions per confidence bin):\n');
    const bins = p.subjects[0]?.calibration?.bins ?? [];
    out.push(
      table(
        ['Subject model', ...bins.map((b) => `(${fixed(b.lower, 1)}, ${fixed(b.upper, 1)}]`)],
        p.subjects.map((s) => [cell(s.subject), ...(s.calibration?.bins ?? []).map((b) => (b.count ? `${pct(b.accuracy, 0)} / ${pct(b.meanConfidence, 0)} / ${fmtCount(b.count)}` : '—'))]),
        ['l', ...bins.map(() => 'r' as const)],
      ),
    );
  }
  return out.join('\n');
}
