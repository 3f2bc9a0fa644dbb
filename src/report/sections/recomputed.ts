/**
 * Reported vs recomputed: where an ingested log carries its own value of a quantity Standoff
 * recomputes from the transcript (today `gathered_evidence`: the log's scorer vs
 * `episodes.gathered_evidence` from `analyzeTranscript`), both are shown side by side per subject
 * and each episode where they differ is flagged (the idea of "reported vs recomputed" for
 * aggregates, per episode). The report's evidence column is the recomputation; `standoff ci
 * --metric gathered_evidence` is too, `--metric score:gathered_evidence` the log's. Runs written by
 * Standoff's runner score from the same definition, so the section is empty for them.
 *
 * Why this is a section of the O1 suite and not rows of the core reconciliation section
 * (`reconcile`, generic.ts; issue 21): a reconciliation row compares one aggregate the log
 * reported about itself (`runs.config.reported_metrics`, a run x metric) with the same aggregate
 * recomputed from the log's own per-sample scores. This check compares two different per-sample
 * quantities, the log's `gathered_evidence` score and Standoff's reading of the transcript, on
 * each episode, per subject, and lists the episodes where they differ: two rates can agree while
 * episodes disagree in both directions, which a row of reported vs recomputed aggregates cannot
 * show (and a run is not a subject: a run may hold several). As reconciliation rows it would lose
 * the episode list and flag on the aggregate only; so it stays here, beside the core section
 * (which the O1 suite shows too, for the log's aggregates).
 */
import { STANDOFF_SOURCES, isStandoffSource } from '../../schema/tables.ts';
import { cell, code, fmtCount, pct, table } from '../markdown.ts';
import type { ReportContext } from './context.ts';

export interface RecomputedRow {
  subject: string;
  /** Episodes with both values. */
  both: number;
  reported: number;
  recomputed: number;
  differing: { run_id: string; scenario_id: string; epoch: number; reported: boolean; recomputed: boolean }[];
}

export interface RecomputedSection {
  quantity: 'gathered_evidence';
  subjects: RecomputedRow[];
}

export async function recomputedSection(ctx: ReportContext): Promise<RecomputedSection> {
  if (ctx.runs.every((r) => isStandoffSource(r.source))) return { quantity: 'gathered_evidence', subjects: [] };
  const rows = await ctx.q(
    `SELECT s.subject, e.run_id, e.scenario_id, e.epoch, sc.value = 1 AS reported, e.gathered_evidence AS recomputed
     FROM episodes e JOIN runs ru USING (run_id) JOIN scores sc USING (run_id, episode_id) JOIN r_subject s ON s.run_id = e.run_id AND s.subject_model = e.subject_model
     WHERE sc.scorer = 'gathered_evidence' AND sc.value IS NOT NULL AND e.gathered_evidence IS NOT NULL AND e.status <> 'error'
       AND ru.source NOT IN (${STANDOFF_SOURCES.map((x) => `'${x}'`).join(', ')})
     ORDER BY s.subject, e.run_id, e.scenario_id, e.epoch`,
  );
  const by = new Map<string, RecomputedRow>();
  for (const r of rows) {
    const subject = String(r.subject);
    const row = by.get(subject) ?? { subject, both: 0, reported: 0, recomputed: 0, differing: [] };
    by.set(subject, row);
    row.both++;
    if (r.reported === true) row.reported++;
    if (r.recomputed === true) row.recomputed++;
    if (r.reported !== r.recomputed) row.differing.push({ run_id: String(r.run_id), scenario_id: String(r.scenario_id), epoch: Number(r.epoch), reported: r.reported === true, recomputed: r.recomputed === true });
  }
  return { quantity: 'gathered_evidence', subjects: [...by.values()] };
}

export function renderRecomputed(v: RecomputedSection): string {
  if (v.subjects.length === 0) return '';
  const out = ['### Evidence: the log\'s own scorer vs Standoff\'s recomputation\n'];
  out.push(
    'The log carries its own `gathered_evidence` scorer; Standoff recomputes the same quantity from the transcript (a successful `read_system_log` result strictly before the first decision). ' +
      'The results above use the recomputation (`standoff ci --metric gathered_evidence`); the log\'s value is `--metric score:gathered_evidence`.\n',
  );
  out.push(
    table(
      ['Subject model', 'Reported by the log', 'Recomputed from the transcript', 'Episodes that differ'],
      v.subjects.map((s) => [cell(s.subject), `${pct(s.reported / s.both)} (${fmtCount(s.reported)}/${fmtCount(s.both)})`, `${pct(s.recomputed / s.both)} (${fmtCount(s.recomputed)}/${fmtCount(s.both)})`, s.differing.length ? `**${fmtCount(s.differing.length)}** (FLAG)` : '0']),
      ['l', 'r', 'r', 'r'],
    ),
  );
  const flagged = v.subjects.flatMap((s) => s.differing.slice(0, 20).map((d) => `- ${cell(s.subject)}: ${code(d.scenario_id)} epoch ${d.epoch}: log ${d.reported ? 'gathered' : 'not gathered'}, recomputed ${d.recomputed ? 'gathered' : 'not gathered'}`));
  if (flagged.length) out.push(`Episodes where they differ (up to 20 per subject):\n\n${flagged.join('\n')}\n`);
  return out.join('\n');
}
