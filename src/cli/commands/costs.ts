/**
 * `standoff costs` (tokens, latency and cost per 1,000 episodes per subject) and `standoff rerun`
 * (rerun agreement between two runs): `src/analysis/costs.ts`.
 */
import type { Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { formatOption, levelOption, storeOptions } from '../options.ts';
import { printResult, printText } from '../output.ts';
import type { Format } from '../../store/format.ts';

export function registerCosts(program: Command): void {
  const costs = formatOption(storeOptions(program.command('costs').description('per subject: tokens, latency (median, p95), cost per 1,000 episodes from a price table (cost is not measured without --prices), policy action accuracy and the cost frontier (accuracy against cost, or against tokens when no cost is measured)')))
    .option('--prices <file>', 'JSON price table: {"<model>": {"input_per_mtok": USD, "output_per_mtok": USD}}')
    .action(
      action(async (o: { traces: string; run?: string[]; prices?: string; format: Format }) => {
        const { costsFromStore, loadPrices } = await import('../../analysis/costs.ts');
        const r = await costsFromStore({ traces: o.traces, runs: o.run }, o.prices ? loadPrices(o.prices) : null);
        if (o.format === 'json') return printResult(r, 'json');
        printResult(r.subjects, o.format, ['subject_model', 'episodes', 'with_tokens', 'mean_input_tokens', 'mean_output_tokens', 'latency_median_ms', 'latency_p95_ms', 'cost_per_1000', 'accuracy', 'on_frontier']);
        if (o.format !== 'table') return;
        if (!r.prices) printText('cost_per_1000: not measured (no --prices table)\n');
        if (r.frontier_axis) printText(`on_frontier: policy action accuracy against ${r.frontier_axis === 'cost_per_1000' ? 'cost per 1,000 episodes' : 'mean tokens per episode (cost not measured)'}\n`);
      }),
    );
  withExamples(costs, 'standoff costs', 'standoff costs --prices prices.json --format json');
}

export function registerRerun(program: Command): void {
  const rerun = levelOption(formatOption(storeOptions(program.command('rerun').description('rerun agreement: two runs of the same subjects on the same states, paired on (subject, scenario, epoch): the share with the same terminal decision, with an exact interval'), { runs: false })))
    .requiredOption('--a <run>', 'first run id')
    .requiredOption('--b <run>', 'second run id (the rerun)')
    .action(
      action(async (o: { traces: string; a: string; b: string; level: number; format: Format }) => {
        const { rerunAgreement } = await import('../../analysis/costs.ts');
        const r = await rerunAgreement({ traces: o.traces, a: o.a, b: o.b }, o.level);
        if (o.format === 'json') return printResult(r, 'json');
        printResult(r.subjects, o.format);
      }),
    );
  withExamples(rerun, 'standoff rerun --a demo-s20260810 --b demo-rerun');
}
