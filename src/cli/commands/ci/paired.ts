/**
 * `standoff ci paired`: the paired difference a - b with its paired cluster bootstrap interval,
 * over the store or an --input file (`src/analysis/ci-bootstrap.ts`, `ci-input.ts`).
 */
import { Option, type Command } from 'commander';
import { action, collect, usageError, withExamples } from '../../program.ts';
import { inputFileOptions, metricOptions, maxDrawsOption, statsOptions, threadsOption, type InputShape, type Missing, type Reduce, type StatsCommon } from '../../options.ts';
import { printResult } from '../../output.ts';

export function registerCiPaired(ci: Command): void {
  const paired = inputFileOptions(
    statsOptions(ci.command('paired').description('paired difference a - b: paired cluster bootstrap CI (pairs of one scenario resampled together), clustered paired SE for p and MDE, correlation, and the unpaired SE for contrast'))
      .option('--metric <name>', 'a metric over the store; pairs on scenario x epoch, clustered on scenario_id')
      .option('--a <subject>', 'first arm (subject model, or arm value with --input)')
      .option('--b <subject>', 'second arm')
      .option('--cluster <col>', 'resample clusters of pairs (over the store: scenario_id by default)')
      .option('--no-cluster', 'treat every pair as independent (the output says so)')
      .option('--input <file>', 'a CSV or Parquet file in long form instead of the store')
      .option('--item <cols>', 'with --input: the pairing key, one column or several (sample_id,epoch)')
      .option('--arm <col>', 'with --input: the arm column')
      .option('--value <col>', 'with --input: the numeric column')
      .option('--by <cols>', 'with --input: one comparison per group of these columns (comma-separated)', collect)
      .option('--statistic <s>', 'mean (mean of a - b, with p and MDE) or median (median of the per-pair differences a - b)', 'mean')
      .addOption(threadsOption())
      .addOption(maxDrawsOption())
      .option('--from-aggregates <file>', 'per-cluster pair sums (n, sum_a, sum_b, sum_sq_a, sum_sq_b, sum_ab, only_a, only_b) that any SQL engine wrote with sql/paired-aggregates.sql (CSV or Parquet; docs/scale.md); --a and --b label the arms'),
  )
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'));
  metricOptions(paired)
    .action(
      action(async (o: StatsCommon & InputShape & { metric?: string; metricSql?: string; reduce?: Reduce; a?: string; b?: string; cluster?: string | false; input?: string; item?: string; arm?: string; value?: string; by?: string[]; missing: Missing; method: 'percentile' | 'bca' | 'basic'; statistic: string; threads?: number; maxDraws?: number; fromAggregates?: string }) => {
        if (o.fromAggregates) {
          if (o.input || o.metricSql || o.reduce || o.item || o.arm || o.value || o.by) throw usageError('ci.conflict', '--from-aggregates reads one file of per-cluster pair sums: --input, --item, --arm, --value, --by, --metric-sql and --reduce do not apply');
          if (o.cluster === false) throw usageError('ci.conflict', '--from-aggregates holds per-cluster sums: the interval is clustered (--no-cluster needs the pairs)');
          const { ciPairedAggregates } = await import('../../../analysis/ci-aggregates.ts');
          printResult(await ciPairedAggregates({ ...o, file: o.fromAggregates, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.input) {
          if (o.metricSql || o.reduce) throw usageError('ci.conflict', '--metric-sql and --reduce go with the store, not --input');
          const { ciPairedInput } = await import('../../../analysis/ci-input.ts');
          printResult(await ciPairedInput({ ...o, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.by) throw usageError('ci.missingArg', '--by goes with --input for ci paired');
        const { ciPaired } = await import('../../../analysis/ci-bootstrap.ts');
        printResult(await ciPaired({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    paired,
    'standoff ci paired --metric policy_action --a sim:careful --b sim:hasty',
    'standoff ci paired --traces S --metric correct --a acme-large --b acme-small   # paired on item x epoch',
    'standoff ci paired --input long.csv --item item --arm arm --value score --a A --b B --format json',
    'standoff ci paired --from-aggregates pairs.parquet --a acme-large --b acme-small   # sums from Spark/Trino (docs/scale.md)',
    'standoff ci paired --input results.csv --item sample_id,epoch --arm model --value correct --a acme-large --b acme-small',
    'standoff ci paired --input long.csv --item item --arm arm --value latency --a A --b B --statistic median',
  );
}
