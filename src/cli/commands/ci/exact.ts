/**
 * `standoff ci exact`: the Clopper-Pearson interval of a proportion, from counts, an --input file
 * or a binary metric over the store (`src/analysis/ci-exact.ts`, `ci-input.ts`, `ci.ts`).
 */
import type { Command } from 'commander';
import { action, collect, parseIntArg, usageError, withExamples } from '../../program.ts';
import { inputFileOptions, metricOptions, statsOptions, type InputShape, type Missing, type Reduce, type StatsCommon } from '../../options.ts';
import { printResult } from '../../output.ts';

const checkSided = (s: string) => {
  if (!['two', 'upper', 'lower'].includes(s)) throw usageError('ci.badSided', `--sided must be two, upper or lower, got "${s}"`);
  return s as 'two' | 'upper' | 'lower';
};

export function registerCiExact(ci: Command): void {
  const exact = inputFileOptions(
    statsOptions(ci.command('exact').description('exact Clopper-Pearson interval for a proportion'), { random: false })
      .option('--successes <k>', 'successes (with --trials)', parseIntArg('--successes'))
      .option('--trials <n>', 'trials (with --successes)', parseIntArg('--trials'))
      .option('--metric <name>', 'a binary metric over the store: built-in, a scorer, or a SQL metric (see ci --list-metrics)')
      .option('--by <cols>', 'group by these columns (comma-separated)', collect)
      .option('--aggregates', 'use the aggregates table (ingested results tables) for --metric')
      .option('--input <file>', 'a CSV or Parquet file: with --value, a 0/1 column to count; without, successes and trials columns (one interval per row, or per --by group)')
      .option('--value <col>', 'with --input: the 0/1 column (also true/false, yes/no, C/I) whose successes and trials are counted')
      .option('--from-aggregates <file>', 'per-cluster sums that any SQL engine wrote with sql/cluster-aggregates.sql (CSV or Parquet; docs/scale.md); --by picks its group columns, --metric labels it'),
  )
    .option('--sided <s>', 'two, upper (one-sided upper bound) or lower', 'two');
  metricOptions(exact)
    .action(
      action(async (o: StatsCommon & InputShape & { successes?: number; trials?: number; metric?: string; metricSql?: string; reduce?: Reduce; by?: string[]; sided: string; aggregates?: boolean; input?: string; value?: string; missing: Missing; fromAggregates?: string }) => {
        const sided = checkSided(o.sided);
        if (o.fromAggregates) {
          if (o.successes !== undefined || o.trials !== undefined || o.input || o.metricSql || o.reduce || o.aggregates || o.value) throw usageError('ci.conflict', '--from-aggregates reads one file of per-cluster sums: --successes, --trials, --input, --value, --metric-sql, --reduce and --aggregates do not apply (--metric only labels it)');
          const { ciExactAggregates } = await import('../../../analysis/ci-aggregates.ts');
          printResult(await ciExactAggregates({ file: o.fromAggregates, metric: o.metric, by: o.by, level: o.level, sided, delimiter: o.delimiter }), o.format);
          return;
        }
        if (o.successes !== undefined || o.trials !== undefined) {
          if (o.successes === undefined || o.trials === undefined) throw usageError('ci.missingArg', '--successes and --trials go together');
          if (o.metric || o.metricSql || o.input) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactCounts } = await import('../../../analysis/ci-exact.ts');
          printResult(ciExactCounts({ successes: o.successes, trials: o.trials, level: o.level, sided }), o.format);
          return;
        }
        if (o.input) {
          if (o.metric || o.metricSql || o.aggregates || o.reduce) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric (--reduce and --metric-sql go with the store)');
          const { ciExactInput } = await import('../../../analysis/ci-input.ts');
          printResult(await ciExactInput(o.input, { value: o.value, by: o.by, missing: o.missing, level: o.level, sided, delimiter: o.delimiter, wide: o.wide, subjectsFromColumns: o.subjectsFromColumns }), o.format);
          return;
        }
        if (o.value) throw usageError('ci.missingArg', '--value goes with --input (over the store, use --metric)');
        const { ciExactMetric } = await import('../../../analysis/ci.ts');
        if (!o.metric && !o.metricSql) throw usageError('ci.missingArg', 'give --successes K --trials N, or --metric NAME (see standoff ci --list-metrics)');
        if (o.aggregates && (o.metricSql || o.reduce)) throw usageError('ci.conflict', '--aggregates reads published counts: --metric-sql and --reduce do not apply');
        printResult(await ciExactMetric({ traces: o.traces, runs: o.run }, { metric: o.metric, metricSql: o.metricSql, reduce: o.reduce, by: o.by, level: o.level, sided, aggregates: o.aggregates }), o.format);
      }),
    );
  withExamples(
    exact,
    'standoff ci exact --successes 20 --trials 90',
    'standoff ci exact --successes 0 --trials 30 --sided upper --format json',
    'standoff ci exact --metric gathered_evidence --by subject_model',
    'standoff ci exact --traces S --metric correct --by subject_model            # a scorer ingested from a CSV',
    'standoff ci exact --traces S --metric correct --by subject_model --reduce at_least_one',
    'standoff ci exact --aggregates --metric gathered_evidence --by subject_model',
    'standoff ci exact --input published-table.csv   # columns successes, trials (+ any labels)',
    'standoff ci exact --from-aggregates clusters.parquet --by subject_model --metric correct   # sums from Spark/Trino (docs/scale.md)',
    'standoff ci exact --input results.csv --value correct --by model',
    "standoff ci exact --input export.csv --value score --by model --delimiter ';'   # the delimiter is detected anyway",
  );
}
