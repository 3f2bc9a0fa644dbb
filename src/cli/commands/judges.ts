/**
 * `standoff judges`: the median of judges per sample with self-exclusion (`src/analysis/ci.ts`).
 */
import { Option, type Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { delimiterOption, INPUT_DELIMITER_HELP, missingOption, statsOptions, type InputShape, type Missing, type StatsCommon } from '../options.ts';
import { printResult, printText } from '../output.ts';
import { SELF_EXCLUSION_DEFAULT } from '../../stats/judge-panel.ts';

export function registerJudges(program: Command): void {
  const judges = statsOptions(program.command('judges').description('median of judges per sample with self-exclusion (judge of the subject\'s own model or family dropped)'), { random: false })
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--exclude-by <what>', 'drop judges sharing the subject\'s model, family, or none').choices(['model', 'family', 'none']).default(SELF_EXCLUSION_DEFAULT))
    .option('--input <file>', 'a CSV or Parquet file with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family)')
    .option('--totals', 'print only the totals (not one row per sample)')
    .addOption(missingOption())
    .option('--delimiter <c>', INPUT_DELIMITER_HELP, delimiterOption)
    .action(
      action(async (o: StatsCommon & InputShape & { scorer: string; excludeBy: 'model' | 'family' | 'none'; input?: string; totals?: boolean; missing: Missing }) => {
        const { judgesFromInput, judgesFromStore } = await import('../../analysis/ci.ts');
        const r = o.input ? await judgesFromInput(o.input, { excludeBy: o.excludeBy, missing: o.missing, delimiter: o.delimiter }) : await judgesFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, excludeBy: o.excludeBy });
        const scorer = o.input ? null : o.scorer;
        if (o.format === 'json') return printResult(o.totals ? { scorer, exclude_by: r.exclude_by, totals: r.totals } : r, 'json');
        const totals = () => printResult({ scorer, exclude_by: r.exclude_by, ...r.totals }, o.format);
        if (o.totals) return totals();
        printResult(r.samples, o.format, ['sample', 'subject_model', 'median', 'judges_used', 'judges_excluded']);
        // csv holds one table: the per-sample rows (the totals are --totals, or in --format json).
        if (o.format === 'csv') return;
        printText('\n');
        totals();
      }),
    );
  withExamples(judges, 'standoff judges', 'standoff judges --exclude-by model --totals', 'standoff judges --input verdicts.csv --format json');
}
