/**
 * Section 3: grounded vs lucky. Per subject, the cross-tab of "gathered evidence before the
 * decision" x "policy-compliant action" on the samples that have a correct action (NOANSWER
 * excluded; invalid episodes count as incorrect; samples whose evidence was not measured are
 * left out and counted), with the accuracy in each row, and the "correct without evidence"
 * episodes listed: an outcome-only benchmark would count them as successes although nothing in
 * the transcript grounds them. Each share comes from `metricRates`: the cluster bootstrap over
 * scenarios where epochs repeat them, and the exact interval (independent samples) beside it.
 */
import { metricSqlWith } from '../../analysis/metrics.ts';
import { cell, code, fmtCount, pctInterval, rateCell, table } from '../markdown.ts';
import { MAIN_METRICS, materializeObservations, type ReportContext } from './context.ts';
import { CLT_METHOD, metricRates, type Interval, type Rate } from '../../analysis/rates.ts';

/** Episodes listed per subject in REPORT.md; results.json keeps up to LIST_JSON. */
export const LIST_MD = 20;
export const LIST_JSON = 1000;

export interface CrossTab {
  gathered_correct: number;
  gathered_incorrect: number;
  not_gathered_correct: number;
  not_gathered_incorrect: number;
}

export interface LuckyEpisode {
  run_id: string;
  episode_id: string;
  scenario_id: string;
  epoch: number;
  decision_tool: string | null;
  log_reads: number;
}

/** A share with the interval shown (clustered by scenario where epochs repeat) and both intervals. */
export interface GroundedShare {
  successes: number;
  trials: number;
  estimate: number | null;
  interval: Interval;
  exact: Interval | null;
  cluster: Interval | null;
}

export interface GroundedSubject {
  subject: string;
  table: CrossTab;
  /** Non-ambiguous samples whose evidence was not measured (left out of the cross-tab). */
  evidence_not_measured: number;
  /** P(correct | gathered) and P(correct | not gathered). */
  accuracy_with_evidence: GroundedShare;
  accuracy_without_evidence: GroundedShare;
  /** Share of correct actions that were not grounded in evidence. */
  lucky_share_of_correct: GroundedShare;
  correct_without_evidence: { total: number; listed: LuckyEpisode[]; truncated: boolean };
}

export interface GroundedSection {
  subjects: GroundedSubject[];
  total_correct_without_evidence: number;
}

const share = (r: Rate | undefined, level: number): GroundedShare =>
  r
    ? { successes: r.successes, trials: r.trials, estimate: r.estimate, interval: r.interval, exact: r.exact, cluster: r.cluster }
    : { successes: 0, trials: 0, estimate: null, interval: { lower: null, upper: null, level, method: 'clopper-pearson', sampling: 'independent', note: 'no observations' }, exact: null, cluster: null };

/**
 * From the report's counted observations (`obs_agg`, `materializeObservations`): the policy-action
 * rows (metric index 1) with their episode's gathered_evidence (`g`), so the cross-tab and both
 * rates need no join back to episodes; only the listed episodes are read from the store.
 */
export async function groundedSection(ctx: ReportContext): Promise<GroundedSection> {
  await materializeObservations(ctx);
  const policy = `FROM obs_agg WHERE mk = ${MAIN_METRICS.indexOf('policy_action')} AND value IS NOT NULL`;
  const counts = (await ctx.q(`SELECT subj, g, value = 1 AS c, CAST(sum(n) AS BIGINT) AS n ${policy} GROUP BY ALL`)).map((r) => ({ subject: ctx.subjects[Number(r.subj)], g: r.g, c: r.c, n: r.n }));
  const opts = { level: ctx.level, seed: ctx.seed, resamples: ctx.resamples, clusterLabel: 'scenario_id', weight: 'n' };
  const named = (rates: Rate[]): Rate[] => rates.map((r) => ({ ...r, group: { ...r.group, subject: ctx.subjects[Number(r.group.subject)] } }));
  // Accuracy given evidence (g true / false), and the share of correct actions taken without evidence.
  // g as 0/1 (TINYINT, in the same order as false/true): every column a number, so the rows are read as typed columns.
  const accuracy = named(await metricRates(ctx, `SELECT subj AS subject, CAST(g AS TINYINT) AS g, sid, value, n ${policy} AND g IS NOT NULL`, ['subject', 'g'], 'sid', opts));
  const lucky = named(await metricRates(ctx, `SELECT subj AS subject, sid, CAST(NOT g AS DOUBLE) AS value, n FROM (SELECT subj, sid, g, n ${policy} AND value = 1 AND g IS NOT NULL)`, ['subject'], 'sid', opts));
  // The listed episodes of every subject in one pass (the first LIST_JSON per subject).
  const listedRows = await ctx.q(`
    SELECT s.subject, p.run_id, p.episode_id, p.scenario_id, p.epoch, p.decision_tool, p.log_reads
    FROM ${metricSqlWith('policy_action', 'e.gathered_evidence AS g, e.decision_tool, e.log_reads')} p JOIN r_subject s USING (run_id, subject_model)
    WHERE p.value = 1 AND NOT p.g
    QUALIFY row_number() OVER (PARTITION BY s.subject ORDER BY p.scenario_id, p.epoch, p.run_id, p.episode_id) <= ${LIST_JSON}
    ORDER BY s.subject, p.scenario_id, p.epoch, p.run_id, p.episode_id`);
  const subjects: GroundedSubject[] = [];
  let total = 0;
  for (const subject of ctx.subjects) {
    const get = (g: boolean, c: boolean) => Number(counts.find((r) => r.subject === subject && r.g === g && r.c === c)?.n ?? 0);
    const t: CrossTab = {
      gathered_correct: get(true, true),
      gathered_incorrect: get(true, false),
      not_gathered_correct: get(false, true),
      not_gathered_incorrect: get(false, false),
    };
    const listed = listedRows
      .filter((r) => r.subject === subject)
      .map((r) => ({
      run_id: String(r.run_id),
      episode_id: String(r.episode_id),
      scenario_id: String(r.scenario_id),
      epoch: Number(r.epoch),
      decision_tool: r.decision_tool === null ? null : String(r.decision_tool),
      log_reads: Number(r.log_reads),
    }));
    total += t.not_gathered_correct;
    const acc = (g: boolean) => accuracy.find((r) => r.group.subject === subject && r.group.g === (g ? 1 : 0));
    subjects.push({
      subject,
      table: t,
      evidence_not_measured: Number(counts.filter((r) => r.subject === subject && r.g === null).reduce((a, r) => a + Number(r.n), 0)),
      accuracy_with_evidence: share(acc(true), ctx.level),
      accuracy_without_evidence: share(acc(false), ctx.level),
      lucky_share_of_correct: share(lucky.find((r) => r.group.subject === subject), ctx.level),
      correct_without_evidence: { total: t.not_gathered_correct, listed, truncated: t.not_gathered_correct > listed.length },
    });
  }
  return { subjects, total_correct_without_evidence: total };
}

function withInterval(x: GroundedShare): string {
  if (x.trials === 0) return rateCell(0, 0);
  const i = x.interval;
  return `${rateCell(x.successes, x.trials)} ${i.sampling === 'clustered' ? (i.method.endsWith(CLT_METHOD) ? 'cl. CLT ' : 'cl. ') : ''}${pctInterval(i.lower, i.upper)}`;
}

export function renderGrounded(g: GroundedSection, level: number): string {
  const L = Math.round(level * 100);
  const out: string[] = ['## 3. Grounded vs lucky\n'];
  out.push(
    `Policy action (non-ambiguous samples; invalid episodes count as incorrect) crossed with whether a successful log read came before the decision. ` +
      `The informative cells are *gathered and incorrect* (read the evidence, still acted wrongly) and *not gathered and correct* (right by luck: ` +
      `an outcome-only benchmark would miss the difference). Intervals: *cl.* is a cluster bootstrap over scenarios (epochs of a scenario together); without the mark, exact Clopper-Pearson (no scenario repeats). ` +
      `${fmtCount(g.total_correct_without_evidence)} correct action${g.total_correct_without_evidence === 1 ? '' : 's'} came without evidence` +
      (g.subjects.length > 1 ? ` (${g.subjects.map((s) => `${cell(s.subject)}: ${fmtCount(s.table.not_gathered_correct)}`).join(', ')}).` : '.') +
      '\n',
  );
  out.push(
    table(
      ['Subject model', 'Gathered, correct', 'Gathered, incorrect', 'Not gathered, correct', 'Not gathered, incorrect', `Accuracy with evidence [${L}%]`, `Accuracy without evidence [${L}%]`, 'Correct actions without evidence'],
      g.subjects.map((s) => [
        cell(s.subject),
        fmtCount(s.table.gathered_correct),
        fmtCount(s.table.gathered_incorrect),
        fmtCount(s.table.not_gathered_correct),
        fmtCount(s.table.not_gathered_incorrect),
        withInterval(s.accuracy_with_evidence),
        withInterval(s.accuracy_without_evidence),
        rateCell(s.lucky_share_of_correct.successes, s.lucky_share_of_correct.trials),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  out.push('### Correct without evidence\n');
  for (const s of g.subjects) {
    const c = s.correct_without_evidence;
    if (c.total === 0) {
      out.push(`- **${cell(s.subject)}**: none.`);
      continue;
    }
    const shown = c.listed.slice(0, LIST_MD);
    out.push(
      `- **${cell(s.subject)}**: ${fmtCount(c.total)} episode${c.total === 1 ? '' : 's'}: ` +
        shown.map((e) => `${code(e.scenario_id)} epoch ${e.epoch} (${e.decision_tool ?? 'no decision'}, ${e.log_reads} log read${e.log_reads === 1 ? '' : 's'})`).join(', ') +
        (c.total > shown.length ? `, … and ${fmtCount(c.total - shown.length)} more (${c.truncated ? `the first ${fmtCount(c.listed.length)} are` : 'all are'} in results.json; notebook \`notebooks/hasty-without-evidence.md\` queries them all)` : '') +
        '.',
    );
  }
  out.push('');
  return out.join('\n');
}
