/**
 * `standoff ci bootstrap`: the bootstrap interval of a statistic, over the store or an --input
 * file, optionally clustered (`src/analysis/ci-bootstrap.ts`, `ci-input.ts`).
 */
import { Option, type Command } from 'commander';
import { action, collect, usageError, withExamples } from '../../program.ts';
import { inputFileOptions, metricOptions, maxDrawsOption, statsOptions, threadsOption, type InputShape, type Missing, type Reduce, type StatsCommon } from '../../options.ts';
import { printResult } from '../../output.ts';

export function registerCiBootstrap(ci: Command): void {
  const boot = inputFileOptions(
    statsOptions(ci.command('bootstrap').description('bootstrap interval of a mean, median, trimmed mean, quantile, sd or proportion (seeded; exact fast paths for 0/1 data; both cores), optionally clustered'))
      .option('--metric <name>', 'a metric over the store (see ci --list-metrics)')
      .option('--statistic <s>', 'mean, median, trimmed-mean:P (P in [0, 0.5) cut from each end), quantile:P (P in (0, 1)), sd (n - 1) or proportion (mean of 0/1 values)', 'mean')
      .addOption(threadsOption())
      .addOption(maxDrawsOption())
      .option('--by <cols>', 'group by these columns (comma-separated)', collect)
      .option('--cluster <col>', 'resample whole clusters of this column (over the store: scenario_id by default, a scenario with its epochs; with --input, comma-separated columns form one key)')
      .option('--no-cluster', 'treat every observation as independent (the output says so)')
      .option('--input <file>', 'a CSV or Parquet file instead of the store')
      .option('--value <col>', 'with --input: the numeric column')
      .option('--item <cols>', 'with --input: the item column(s); rows of one item are resampled together (the same as --cluster; over the store the item is the cluster by default)')
      .option('--from-aggregates <file>', 'per-cluster n, sum, sum_sq that any SQL engine wrote with sql/cluster-aggregates.sql (CSV or Parquet; docs/scale.md): the clustered bootstrap of the mean, as over the store; --by picks its group columns, --metric labels it'),
  )
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'));
  metricOptions(boot)
    .action(
      action(async (o: StatsCommon & InputShape & { metric?: string; metricSql?: string; reduce?: Reduce; by?: string[]; cluster?: string | false; item?: string; input?: string; value?: string; missing: Missing; method: 'percentile' | 'bca' | 'basic'; statistic: string; threads?: number; maxDraws?: number; fromAggregates?: string }) => {
        if (o.fromAggregates) {
          if (o.input || o.metricSql || o.reduce || o.value || o.item) throw usageError('ci.conflict', '--from-aggregates reads one file of per-cluster sums: --input, --value, --item, --metric-sql and --reduce do not apply (--metric only labels it)');
          if (o.cluster === false) throw usageError('ci.conflict', '--from-aggregates holds per-cluster sums: the interval is clustered (--no-cluster needs the observations)');
          const { ciBootstrapAggregates } = await import('../../../analysis/ci-aggregates.ts');
          printResult(await ciBootstrapAggregates({ ...o, file: o.fromAggregates, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.input) {
          if (o.metricSql || o.reduce) throw usageError('ci.conflict', '--metric-sql and --reduce go with the store, not --input');
          const { ciBootstrapInput } = await import('../../../analysis/ci-input.ts');
          printResult(await ciBootstrapInput({ ...o, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.item) throw usageError('ci.conflict', '--item goes with --input (over the store, the item, scenario_id, is the cluster by default; see --cluster)');
        const { ciBootstrap } = await import('../../../analysis/ci-bootstrap.ts');
        printResult(await ciBootstrap({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    boot,
    'standoff ci bootstrap --metric policy_action --by subject_model              # clusters on scenario_id',
    'standoff ci bootstrap --metric policy_action --by subject_model --no-cluster # epochs as independent',
    'standoff ci bootstrap --traces S --metric quality --by subject_model --reduce mean',
    'standoff ci bootstrap --traces S --metric-sql metrics/hard_items.sql --by subject_model',
    'standoff ci bootstrap --input scores.csv --value score --method bca --format json',
    'standoff ci bootstrap --from-aggregates clusters.csv --by subject_model --seed 7   # sums from Spark/Trino (docs/scale.md)',
    'standoff ci bootstrap --input scores.csv --value score --cluster item',
    'standoff ci bootstrap --input results.csv --value quality --by model --cluster sample_id',
    'standoff ci bootstrap --input results.csv --value quality --by model --item sample_id   # --item: the same as --cluster',
    'standoff ci bootstrap --input sheet.csv --wide --subjects-from-columns \'*\' --value value --by subject --item "Question ID"',
    'standoff ci bootstrap --input scores.csv --value latency --statistic median --method bca',
    'standoff ci bootstrap --input scores.csv --value latency --statistic quantile:0.9 --threads 2',
    'standoff ci bootstrap --input scores.csv --value score --statistic trimmed-mean:0.1',
    'standoff ci bootstrap --metric policy_action --statistic proportion --by subject_model',
  );
}
