/**
 * Section 9: cost, latency and stability per subject (the paper's latency and cost panels, cost
 * frontier and rerun agreement): mean tokens per episode, latency median and p95, cost per 1,000
 * episodes from `report build --prices FILE` (the format of `standoff costs --prices`; without
 * it cost is "not measured"), policy action accuracy with the cost frontier, and rerun agreement
 * for every two runs of one subject in the store. The same builders as `standoff costs` and
 * `standoff rerun` (src/analysis/costs.ts, rerun.ts), so the CLI prints the same numbers.
 */
import { buildCostReport, costsSql, type CostReport, type CostRow } from '../../analysis/costs.ts';
import { findReruns, type RerunPair } from '../../analysis/rerun.ts';
import { cell, code, fixed, fmtCount, pct, pctInterval, table } from '../markdown.ts';
import { MAIN_METRICS, materializeObservations, type ReportContext } from './context.ts';

export interface CostsSection extends CostReport {
  /** Two runs of the same subject in the store, paired on (scenario, epoch). */
  reruns: RerunPair[];
  level: number;
}

/** The report labels subjects as every section does (`model @ run` when a model is in several runs). */
const REPORT_COSTS_SQL = costsSql(
  's.subject',
  'JOIN r_subject s USING (run_id, subject_model)',
  // Policy action per subject from the counted observations (`obs_agg`), not a second join of scores to episodes.
  `SELECT s.subject, s.subject_model, CAST(sum(o.value * o.n) AS BIGINT) AS k, CAST(coalesce(sum(o.n) FILTER (WHERE o.value IS NOT NULL), 0) AS BIGINT) AS n
   FROM obs_agg o JOIN r_subject s USING (subj) WHERE o.mk = ${MAIN_METRICS.indexOf('policy_action')} GROUP BY ALL`,
);

export async function costsSection(ctx: ReportContext): Promise<CostsSection> {
  await materializeObservations(ctx);
  const report = buildCostReport(await ctx.q(REPORT_COSTS_SQL), ctx.prices ?? null);
  const configs = Object.fromEntries(ctx.runs.map((r) => [r.run_id, r.config]));
  return { ...report, reruns: await findReruns(ctx.conn, configs, ctx.level), level: ctx.level };
}

const num = (v: number | null, digits = 0) => (v === null ? 'not measured' : fixed(v, digits));
const usd = (s: CostRow) => (s.cost_per_1000 === null ? `not measured (${s.cost_note})` : `$${fixed(s.cost_per_1000, 4)}`);
const frontierCell = (s: CostRow) =>
  s.on_frontier === null ? 'not measured' : s.on_frontier ? 'yes' : `no (dominated by ${s.dominated_by.map(cell).join(', ')})`;
const accuracyCell = (s: CostRow) => (s.accuracy === null ? 'not measured' : `${pct(s.accuracy)} (${fmtCount(s.accuracy_successes)}/${fmtCount(s.accuracy_trials)})`);

function pricesText(v: CostsSection): string {
  if (!v.price_table) return 'Cost is not measured: the report was built without a price table (`standoff report build --prices FILE`, the format of `standoff costs --prices`).';
  const unpriced = v.subjects.filter((s) => s.cost_note === 'no price for this model').map((s) => cell(s.subject_model));
  return (
    `Prices: ${code(v.price_table.file)} (SHA-256 ${code(v.price_table.sha256.slice(0, 16))}), USD per million input and output tokens; cost per 1,000 episodes = 1,000 × (mean input tokens × input price + mean output tokens × output price) / 10^6.` +
    (unpriced.length ? ` No price for ${unpriced.join(', ')}: not measured.` : '')
  );
}

function frontierText(v: CostsSection): string {
  const on = v.subjects.filter((s) => s.on_frontier).map((s) => cell(s.subject));
  if (v.frontier_axis === null) return 'No cost frontier: neither cost nor token counts are measured.';
  const against = v.frontier_axis === 'cost_per_1000' ? 'cost per 1,000 episodes' : 'mean tokens per episode (input + output)';
  return (
    `Cost frontier: policy action accuracy against ${against}. On the frontier (no other subject is at most as costly and at least as accurate, and better on one): ${on.join(', ') || 'none'}.` +
    (v.frontier_axis === 'mean_tokens' ? ' Cost is not measured, so the frontier is drawn against tokens instead of cost.' : '')
  );
}

function rerunText(v: CostsSection): string {
  const L = Math.round(v.level * 100);
  if (v.reruns.length === 0) return '### Rerun agreement\n\nNo subject appears in two runs of this store, so there is no rerun agreement to report (`standoff rerun --a RUN --b RUN` pairs two runs).\n';
  const states = (r: RerunPair) => (r.same_states === null ? 'not recorded' : r.same_states ? 'same' : 'differ');
  return [
    '### Rerun agreement\n',
    `Two runs of the same subject, paired on (scenario, epoch): the share of pairs with the same terminal decision (two invalid episodes match; errored ones left out), with a ${L}% Clopper-Pearson interval that treats pairs as independent. *States* compares the runs' sealed state manifests. Same numbers as \`standoff rerun --a A --b B\`.\n`,
    table(
      ['Run A', 'Run B', 'Subject model', 'Paired episodes', 'Same decision', `Agreement (${L}% CI)`, 'States'],
      v.reruns.map((r) => [code(r.a), code(r.b), cell(r.subject_model), fmtCount(r.paired), fmtCount(r.matched), `${pct(r.agreement)} ${pctInterval(r.lower, r.upper)}`, states(r)]),
      ['l', 'l', 'l', 'r', 'r', 'r', 'l'],
    ),
  ].join('\n');
}

export function renderCosts(v: CostsSection): string {
  if (v.subjects.length === 0) return '';
  return [
    '## 9. Cost and latency\n',
    'Per completed episode (errored ones left out): mean tokens reported by the endpoint and wall-time latency (median and 95th percentile, linear interpolation). ' +
      'The same numbers as `standoff costs` (with the same `--prices`).\n',
    pricesText(v) + '\n',
    table(
      ['Subject model', 'Episodes', 'Mean input tokens', 'Mean output tokens', 'Latency median (ms)', 'Latency p95 (ms)', 'Cost per 1,000 episodes (USD)', 'Policy action accuracy', 'On the cost frontier'],
      v.subjects.map((s) => [cell(s.subject), fmtCount(s.episodes), num(s.mean_input_tokens), num(s.mean_output_tokens), num(s.latency_median_ms), num(s.latency_p95_ms), usd(s), accuracyCell(s), frontierCell(s)]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
    '<!-- figure:latency -->\n',
    '<!-- figure:tokens -->\n',
    frontierText(v) + '\n',
    '<!-- figure:cost-frontier -->\n',
    rerunText(v),
  ].join('\n');
}
