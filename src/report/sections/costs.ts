/**
 * Section 9: cost and latency per subject (the paper's latency and cost panels): mean tokens per
 * episode, latency median and p95, from the same query as `standoff costs`. The report has no
 * price table, so cost is "not measured" here; `standoff costs --prices FILE` prices it, and
 * `standoff rerun --a RUN --b RUN` gives rerun agreement.
 */
import { COSTS_SQL, buildCostRows, type CostRow } from '../../analysis/costs.ts';
import { cell, fmtCount, table } from '../markdown.ts';
import type { ReportContext } from './context.ts';

export interface CostsSection {
  subjects: CostRow[];
}

export async function costsSection(ctx: ReportContext): Promise<CostsSection> {
  return { subjects: buildCostRows(await ctx.q(COSTS_SQL), null) };
}

const num = (v: number | null, digits = 0) => (v === null ? 'not measured' : v.toFixed(digits));

export function renderCosts(v: CostsSection): string {
  if (v.subjects.length === 0) return '';
  return [
    '## 9. Cost and latency\n',
    'Per completed episode (errored ones left out): mean tokens reported by the endpoint and wall-time latency (median and 95th percentile, linear interpolation). ' +
      'Cost needs a price table: `standoff costs --prices FILE` gives USD per 1,000 episodes; rerun agreement between two runs of the same states is `standoff rerun --a RUN --b RUN`.\n',
    table(
      ['Subject model', 'Episodes', 'Mean input tokens', 'Mean output tokens', 'Latency median (ms)', 'Latency p95 (ms)', 'Cost per 1,000 episodes'],
      v.subjects.map((s) => [cell(s.subject_model), fmtCount(s.episodes), num(s.mean_input_tokens), num(s.mean_output_tokens), num(s.latency_median_ms), num(s.latency_p95_ms), 'not measured (no price table)']),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  ].join('\n');
}
