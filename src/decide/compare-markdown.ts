/**
 * `standoff compare --format markdown`: one block fit for a pull-request comment (the verdict
 * first, one row per metric and task, unpaired items counted). Untrusted names are escaped.
 */
import { escapeMarkdown } from '../escape.ts';
import type { CompareSummary, ComparisonRow } from './compare.ts';

const num = (x: number | null, digits = 3) => (x === null ? 'not measured' : x.toFixed(digits));
const pv = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x < 1e-4 ? '<0.0001' : x.toFixed(4));
const e = escapeMarkdown;

function line(r: ComparisonRow, margin: boolean): string {
  const ci = r.lower === null || r.upper === null ? 'not measured' : `[${num(r.lower)}, ${num(r.upper)}]`;
  const p = margin ? `${pv(r.p_noninferior)} (adj. ${pv(r.p_noninferior_adjusted)})` : `${pv(r.p)} (adj. ${pv(r.p_adjusted)})`;
  const mark = r.verdict === 'worse' || r.verdict === 'not shown non-inferior' ? '❌ ' : r.verdict === 'better' || r.verdict === 'non-inferior' ? '✅ ' : '';
  return `| ${e(r.metric)} | ${e(r.task)} | ${r.pairs} | ${num(r.baseline_mean)} | ${num(r.candidate_mean)} | ${num(r.difference)} ${ci} | ${p} | ${mark}${e(r.verdict_text)} |`;
}

export function renderCompareMarkdown(s: CompareSummary, baseline: string, candidate: string): string {
  const margin = s.margin !== null;
  const head = s.failed ? `**Result: fail** (--fail-on ${s.fail_on})` : s.fail_on ? `**Result: pass** (--fail-on ${s.fail_on})` : '';
  const out = [
    `### standoff compare: ${e(candidate)} vs ${e(baseline)}`,
    '',
    ...(head ? [head, ''] : []),
    `| metric | task | pairs | baseline | candidate | difference [${Math.round(s.level * 100)}% CI] | ${margin ? 'p non-inferiority' : 'p'} | verdict |`,
    '| --- | --- | ---: | ---: | ---: | --- | --- | --- |',
    ...s.rows.map((r) => line(r, margin)),
    '',
  ];
  const unpaired = s.rows.filter((r) => r.only_baseline || r.only_candidate);
  for (const r of unpaired) out.push(`- ${e(r.metric)} / ${e(r.task)}: ${r.only_baseline} item(s) only in the baseline, ${r.only_candidate} only in the candidate (left out of the paired analysis)`);
  if (s.tasks_only_baseline.length) out.push(`- tasks only in the baseline: ${s.tasks_only_baseline.map((t) => e(t)).join(', ')}`);
  if (s.tasks_only_candidate.length) out.push(`- tasks only in the candidate: ${s.tasks_only_candidate.map((t) => e(t)).join(', ')}`);
  for (const r of s.rows) if (r.four_cell) out.push(`- ${e(r.metric)} / ${e(r.task)}: both right ${r.four_cell.both_right}, only baseline ${r.four_cell.only_baseline}, only candidate ${r.four_cell.only_candidate}, both wrong ${r.four_cell.both_wrong}`);
  if (s.rerun) for (const r of s.rows) if (r.agreement) out.push(`- rerun agreement, ${e(r.metric)} / ${e(r.task)}: ${(100 * r.agreement.share_identical).toFixed(1)}% identical, kappa ${r.agreement.kappa === null ? 'undefined' : r.agreement.kappa.toFixed(3)}`);
  out.push('', `<sub>Paired on item x epoch (scenario after --reduce); interval: paired cluster bootstrap, ${s.resamples} resamples, seed ${s.seed}; p: clustered z-test, ${s.adjust === 'none' ? 'not adjusted' : `${s.adjust === 'bh' ? 'Benjamini-Hochberg' : 'Holm'}-adjusted over ${s.rows.length} comparison(s)`}; alpha ${s.alpha}${margin ? `; non-inferiority: one-sided at alpha/2, margin ${s.margin}` : ''}.</sub>`, '');
  return out.join('\n');
}
