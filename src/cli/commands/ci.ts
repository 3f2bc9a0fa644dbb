import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { action, collect, parseIntArg, unknownSubcommand, usageError, withExamples } from '../program.ts';
import { delimiterOption, formatOption, levelOption, MEASURES, resamplingOptions, storeOptions, type InputShape } from '../options.ts';
import { printResult, printText } from '../output.ts';
import type { Format } from '../../store/format.ts';
import { storeError } from '../../errors.ts';
import { visibleControls } from '../../escape.ts';
import { SELF_EXCLUSION_DEFAULT } from '../../stats/judge-panel.ts';

// Libraries load on first use (inside the action), so `standoff --help` and light commands start
// fast: a command file imports only commander, ../program.ts, ../options.ts and ../output.ts
// statically, and everything else with `await import(...)` in its action (see src/cli/main.ts).
const lib = () => import('../../analysis/ci.ts');
const bootLib = () => import('../../analysis/ci-bootstrap.ts');
const inputLib = () => import('../../analysis/ci-input.ts');

const MISSING = ['error', 'drop'] as const;
type Missing = (typeof MISSING)[number];
/** `--threads N`: threads of the general resampler (the result is the same for any N). */
const threadsOption = () =>
  new Option('--threads <n>', 'threads for resampling (default: available cores, at most 8); the result is identical for any number').argParser(parseIntArg('--threads'));

/** `--missing`: what an empty cell of an --input file does. */
const missingOption = () =>
  new Option('--missing <policy>', 'with --input: an empty cell in a column used is an error (error), or drops its row (drop)').choices(MISSING).default('error');

interface Common {
  traces: string;
  run?: string[];
  format: Format;
  level: number;
  seed: number;
  resamples: number;
}

type Measure = (typeof MEASURES)[number];

/** Options every statistics command shares: store, format, confidence level (and seed, resamples). */
function common(cmd: Command, opts: { random?: boolean } = { random: true }): Command {
  storeOptions(cmd);
  formatOption(cmd);
  levelOption(cmd);
  if (opts.random) resamplingOptions(cmd);
  return cmd;
}

const REDUCE = ['mean', 'median', 'mode', 'max', 'min', 'at_least_one'] as const;
type Reduce = (typeof REDUCE)[number];

/** `--metric-sql FILE` and `--reduce R`: a SQL metric, and epochs reduced per item (over the store). */
function metricOptions(cmd: Command): Command {
  return cmd
    .option('--metric-sql <file>', 'a metric defined as one SELECT in this file (columns run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, value; read-only, as standoff sql); named after the file, and the metric when --metric is not given')
    .addOption(new Option('--reduce <reducer>', 'reduce epochs to one value per item (run x subject x scenario) before intervals, as Inspect does; default: no reduction, clustered by item').choices(REDUCE));
}

const checkSided = (s: string) => {
  if (!['two', 'upper', 'lower'].includes(s)) throw usageError('ci.badSided', `--sided must be two, upper or lower, got "${s}"`);
  return s as 'two' | 'upper' | 'lower';
};

/** A metric's description in a table: its first sentence, at most 100 characters (`--format json` has it whole). */
function shortDescription(d: string): string {
  const first = d.split(/(?<=\.)\s/)[0]!;
  return first.length <= 100 ? first : `${first.slice(0, 97)}...`;
}

export function registerCi(program: Command): void {
  const ci = program
    .command('ci')
    .description('confidence intervals: exact (Clopper-Pearson), bootstrap (percentile/BCa/basic, clustered), paired')
    .option('--list-metrics', 'list the metrics defined over the trace store')
    // ci's own options (for --list-metrics) count only before a subcommand; after it they are the subcommand's.
    .enablePositionalOptions()
    // A word that is no subcommand (`ci exct --successes 3`) reaches the action with what follows it.
    .argument('[command...]')
    .usage('[options] [command]')
    .passThroughOptions();
  storeOptions(ci);
  formatOption(ci);
  ci.option('--metric-sql <file>', 'with --list-metrics: list this SQL metric too');
  ci.action(
    action(async (words: string[], opts: { listMetrics?: boolean; traces: string; run?: string[]; format: Format; metricSql?: string }) => {
      if (words.length > 0) throw unknownSubcommand(ci, words[0]!);
      if (!opts.listMetrics) {
        ci.outputHelp();
        return;
      }
      // Without a store (the default --traces absent), the built-in metrics; a --traces that names no store is an error.
      if (!existsSync(opts.traces)) {
        if (ci.getOptionValueSource('traces') === 'cli') throw storeError('store.missing', `trace store ${opts.traces} does not exist (pass --traces DIR, or create runs with standoff run / standoff ingest)`);
        const { METRICS } = await import('../../analysis/metrics.ts');
        const rows = Object.values(METRICS).map((m) => ({ metric: m.name, source: 'built-in', kind: null, observations: null, not_measured: null, description: m.description }));
        printResult(opts.format === 'json' ? rows : rows.map((r) => ({ ...r, description: shortDescription(r.description) })), opts.format);
        return;
      }
      const { listStoreMetrics } = await lib();
      const rows = await listStoreMetrics({ traces: opts.traces, runs: opts.run }, { metricSql: opts.metricSql });
      if (opts.format === 'json') {
        printResult(rows, opts.format);
        return;
      }
      // Tables: the metrics with data, descriptions cut to one short line (--format json has them whole);
      // built-ins without data on one line.
      printResult(rows.filter((r) => r.available).map(({ available: _, ...r }) => ({ ...r, description: shortDescription(r.description) })), opts.format);
      const none = rows.filter((r) => !r.available).map((r) => r.metric);
      if (none.length) {
        const line = `unavailable (built-in, no data in this store): ${none.join(', ')}\n`;
        if (opts.format === 'table') printText(`\n${line}`);
        else process.stderr.write(`standoff: ${line}`);
      }
    }),
  );
  withExamples(ci, 'standoff ci --list-metrics --traces S   # built-in metrics and one per scorer, with its kind', 'standoff ci exact --successes 20 --trials 90');

  const exact = common(ci.command('exact').description('exact Clopper-Pearson interval for a proportion'), { random: false })
    .option('--successes <k>', 'successes (with --trials)', parseIntArg('--successes'))
    .option('--trials <n>', 'trials (with --successes)', parseIntArg('--trials'))
    .option('--metric <name>', 'a binary metric over the store: built-in, a scorer, or a SQL metric (see ci --list-metrics)')
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--aggregates', 'use the aggregates table (ingested results tables) for --metric')
    .option('--input <file>', 'a CSV or Parquet file: with --value, a 0/1 column to count; without, successes and trials columns (one interval per row, or per --by group)')
    .option('--value <col>', 'with --input: the 0/1 column (also true/false, yes/no, C/I) whose successes and trials are counted')
    .addOption(missingOption())
    .option('--delimiter <c>', "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)", delimiterOption)
    .option('--wide', 'with --input: one column per subject, melted into columns subject and value (use --value value, --by subject)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column the command does not use otherwise", collect)
    .option('--sided <s>', 'two, upper (one-sided upper bound) or lower', 'two');
  metricOptions(exact)
    .action(
      action(async (o: Common & InputShape & { successes?: number; trials?: number; metric?: string; metricSql?: string; reduce?: Reduce; by?: string[]; sided: string; aggregates?: boolean; input?: string; value?: string; missing: Missing }) => {
        const sided = checkSided(o.sided);
        if (o.successes !== undefined || o.trials !== undefined) {
          if (o.successes === undefined || o.trials === undefined) throw usageError('ci.missingArg', '--successes and --trials go together');
          if (o.metric || o.metricSql || o.input) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactCounts } = await import('../../analysis/ci-exact.ts');
          printResult(ciExactCounts({ successes: o.successes, trials: o.trials, level: o.level, sided }), o.format);
          return;
        }
        if (o.input) {
          if (o.metric || o.metricSql || o.aggregates || o.reduce) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric (--reduce and --metric-sql go with the store)');
          const { ciExactInput } = await inputLib();
          printResult(await ciExactInput(o.input, { value: o.value, by: o.by, missing: o.missing, level: o.level, sided, delimiter: o.delimiter, wide: o.wide, subjectsFromColumns: o.subjectsFromColumns }), o.format);
          return;
        }
        if (o.value) throw usageError('ci.missingArg', '--value goes with --input (over the store, use --metric)');
        const { ciExactMetric } = await lib();
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
    'standoff ci exact --input results.csv --value correct --by model',
    "standoff ci exact --input export.csv --value score --by model --delimiter ';'   # the delimiter is detected anyway",
  );

  const boot = common(ci.command('bootstrap').description('bootstrap interval of a mean, median, trimmed mean, quantile, sd or proportion (seeded; exact fast paths for 0/1 data; both cores), optionally clustered'))
    .option('--metric <name>', 'a metric over the store (see ci --list-metrics)')
    .option('--statistic <s>', 'mean, median, trimmed-mean:P (P in [0, 0.5) cut from each end), quantile:P (P in (0, 1)), sd (n - 1) or proportion (mean of 0/1 values)', 'mean')
    .addOption(threadsOption())
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--cluster <col>', 'resample whole clusters of this column (over the store: scenario_id by default, a scenario with its epochs; with --input, comma-separated columns form one key)')
    .option('--no-cluster', 'treat every observation as independent (the output says so)')
    .option('--input <file>', 'a CSV or Parquet file instead of the store')
    .option('--value <col>', 'with --input: the numeric column')
    .option('--item <cols>', 'with --input: the item column(s); rows of one item are resampled together (the same as --cluster; over the store the item is the cluster by default)')
    .addOption(missingOption())
    .option('--delimiter <c>', "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)", delimiterOption)
    .option('--wide', 'with --input: one column per subject, melted into columns subject and value (use --value value, --by subject)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column the command does not use otherwise", collect)
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'));
  metricOptions(boot)
    .action(
      action(async (o: Common & InputShape & { metric?: string; metricSql?: string; reduce?: Reduce; by?: string[]; cluster?: string | false; item?: string; input?: string; value?: string; missing: Missing; method: 'percentile' | 'bca' | 'basic'; statistic: string; threads?: number }) => {
        if (o.input) {
          if (o.metricSql || o.reduce) throw usageError('ci.conflict', '--metric-sql and --reduce go with the store, not --input');
          const { ciBootstrapInput } = await inputLib();
          printResult(await ciBootstrapInput({ ...o, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.item) throw usageError('ci.conflict', '--item goes with --input (over the store, the item, scenario_id, is the cluster by default; see --cluster)');
        const { ciBootstrap } = await bootLib();
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
    'standoff ci bootstrap --input scores.csv --value score --cluster item',
    'standoff ci bootstrap --input results.csv --value quality --by model --cluster sample_id',
    'standoff ci bootstrap --input results.csv --value quality --by model --item sample_id   # --item: the same as --cluster',
    'standoff ci bootstrap --input sheet.csv --wide --subjects-from-columns \'*\' --value value --by subject --item "Question ID"',
    'standoff ci bootstrap --input scores.csv --value latency --statistic median --method bca',
    'standoff ci bootstrap --input scores.csv --value latency --statistic quantile:0.9 --threads 2',
    'standoff ci bootstrap --input scores.csv --value score --statistic trimmed-mean:0.1',
    'standoff ci bootstrap --metric policy_action --statistic proportion --by subject_model',
  );

  const paired = common(ci.command('paired').description('paired difference a - b: paired cluster bootstrap CI (pairs of one scenario resampled together), clustered paired SE for p and MDE, correlation, and the unpaired SE for contrast'))
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
    .addOption(missingOption())
    .option('--delimiter <c>', "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)", delimiterOption)
    .option('--wide', 'with --input: one column per subject, melted into columns subject and value (use --value value, --by subject)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column the command does not use otherwise", collect)
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'));
  metricOptions(paired)
    .action(
      action(async (o: Common & InputShape & { metric?: string; metricSql?: string; reduce?: Reduce; a?: string; b?: string; cluster?: string | false; input?: string; item?: string; arm?: string; value?: string; by?: string[]; missing: Missing; method: 'percentile' | 'bca' | 'basic'; statistic: string; threads?: number }) => {
        if (o.input) {
          if (o.metricSql || o.reduce) throw usageError('ci.conflict', '--metric-sql and --reduce go with the store, not --input');
          const { ciPairedInput } = await inputLib();
          printResult(await ciPairedInput({ ...o, cluster: o.cluster || undefined }), o.format);
          return;
        }
        if (o.by) throw usageError('ci.missingArg', '--by goes with --input for ci paired');
        const { ciPaired } = await bootLib();
        printResult(await ciPaired({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    paired,
    'standoff ci paired --metric policy_action --a sim:careful --b sim:hasty',
    'standoff ci paired --traces S --metric correct --a acme-large --b acme-small   # paired on item x epoch',
    'standoff ci paired --input long.csv --item item --arm arm --value score --a A --b B --format json',
    'standoff ci paired --input results.csv --item sample_id,epoch --arm model --value correct --a acme-large --b acme-small',
    'standoff ci paired --input long.csv --item item --arm arm --value latency --a A --b B --statistic median',
  );

  const agreement = common(program.command('agreement').description("Krippendorff's alpha with a bootstrap CI over units (judges over the store, or any file of ratings, long or wide)"))
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--measure <level>', 'measurement level of the ratings').choices(MEASURES).default('nominal'))
    .option('--input <file>', 'a CSV or Parquet file of ratings: long (--unit, --rater, --value) or wide (--raters); an empty rating is missing')
    .option('--unit <cols>', 'with --input: the unit column(s) (long default: unit; wide default: each row is a unit)', collect)
    .option('--rater <col>', 'with --input, long ratings: the rater column (default: rater)')
    .option('--value <col>', 'with --input, long ratings: the rating column (default: value)')
    .option('--raters <cols>', 'with --input, wide ratings: one column per rater (comma-separated)', collect)
    .option('--by <cols>', 'with --input: one alpha per group of these columns', collect)
    .addOption(missingOption())
    .option('--delimiter <c>', "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)", delimiterOption)
    .option('--wide', 'with --input: one column per subject, melted into columns subject and value (use --value value, --by subject)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column the command does not use otherwise", collect)
    .action(
      action(async (o: Common & InputShape & { scorer: string; measure: Measure; input?: string; unit?: string[]; rater?: string; value?: string; raters?: string[]; by?: string[]; missing: Missing }) => {
        const opts = { level: o.measure, ciLevel: o.level, seed: o.seed, resamples: o.resamples };
        if (!o.input) {
          for (const [flag, v] of [['--by', o.by], ['--unit', o.unit], ['--rater', o.rater], ['--value', o.value], ['--raters', o.raters]] as const) {
            if (v) throw usageError('ci.missingArg', `${flag} goes with --input`);
          }
          const { agreementFromStore } = await lib();
          printResult(await agreementFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, ...opts }), o.format);
          return;
        }
        const { agreementInput } = await inputLib();
        printResult(await agreementInput(o.input, { ...opts, unit: o.unit, rater: o.rater, value: o.value, raters: o.raters, by: o.by, missing: o.missing, delimiter: o.delimiter, wide: o.wide, subjectsFromColumns: o.subjectsFromColumns }), o.format);
      }),
    );
  withExamples(
    agreement,
    'standoff agreement',
    'standoff agreement --measure ordinal',
    'standoff agreement --input ratings.csv --measure interval --level 0.9 --format json',
    'standoff agreement --input results.csv --unit sample_id,epoch,model --raters judge_a,judge_b,judge_c --measure ordinal',
  );

  const judges = common(program.command('judges').description('median of judges per sample with self-exclusion (judge of the subject\'s own model or family dropped)'), { random: false })
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--exclude-by <what>', 'drop judges sharing the subject\'s model, family, or none').choices(['model', 'family', 'none']).default(SELF_EXCLUSION_DEFAULT))
    .option('--input <file>', 'a CSV or Parquet file with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family)')
    .option('--totals', 'print only the totals (not one row per sample)')
    .addOption(missingOption())
    .option('--delimiter <c>', "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)", delimiterOption)
    .action(
      action(async (o: Common & InputShape & { scorer: string; excludeBy: 'model' | 'family' | 'none'; input?: string; totals?: boolean; missing: Missing }) => {
        const { judgesFromInput, judgesFromStore } = await lib();
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

  const costs = formatOption(storeOptions(program.command('costs').description('per subject: tokens, latency (median, p95) and cost per 1,000 episodes from a price table (cost is not measured without --prices)')))
    .option('--prices <file>', 'JSON price table: {"<model>": {"input_per_mtok": USD, "output_per_mtok": USD}}')
    .action(
      action(async (o: { traces: string; run?: string[]; prices?: string; format: Format }) => {
        const { costsFromStore, loadPriceTable } = await import('../../analysis/costs.ts');
        const r = await costsFromStore({ traces: o.traces, runs: o.run }, o.prices ? loadPriceTable(o.prices) : null);
        if (o.format === 'json') return printResult(r, 'json');
        printResult(r.subjects, o.format, ['subject_model', 'episodes', 'with_tokens', 'mean_input_tokens', 'mean_output_tokens', 'latency_median_ms', 'latency_p95_ms', 'cost_per_1000']);
        if (!r.prices && o.format === 'table') printText('cost_per_1000: not measured (no --prices table)\n');
      }),
    );
  withExamples(costs, 'standoff costs', 'standoff costs --prices prices.json --format json');

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

  const probes = common(program.command('probes').description('paired-probe outcomes over distinct states: facts right/wrong x action right/wrong with intervals that resample whole states, coverage, composition, ambiguous states apart, sufficiency'))
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--concentration', 'also: do facts-right, action-wrong errors fall on the same states across subjects? share on states >= k subjects fail vs a seeded permutation null (--resamples permutations; "Reading Right, Acting Wrong" section 5.3)')
    .option('--exclude-states <file>', 'state ids to leave out (one per line, e.g. from a label audit): the tables are without them, followed by the headline numbers with and without them and the largest change')
    .option('--min-subjects <k>', 'with --concentration: a state is shared when at least k subjects fail it (default: half the subjects, rounded up)', parseIntArg('--min-subjects'))
    .action(
      action(async (o: Common & InputShape & { by?: string[]; concentration?: boolean; minSubjects?: number; excludeStates?: string }) => {
        const { probesFromStore, sufficiencyText, concentrationText, loadExcludedStates } = await lib();
        const excludeStates = o.excludeStates === undefined ? undefined : loadExcludedStates(o.excludeStates);
        if (o.minSubjects !== undefined && !o.concentration) throw usageError('probes.minSubjects', '--min-subjects needs --concentration');
        const r = await probesFromStore({ traces: o.traces, runs: o.run }, { by: o.by, level: o.level, seed: o.seed, resamples: o.resamples, concentration: o.concentration, minSubjects: o.minSubjects, excludeStates });
        if (o.format === 'json') return printResult(r, 'json');
        const mark = { cluster: 'cl.', exact: 'ex.', states: 'st.', independent: 'ind.' } as const;
        const pct = (s: { count: number; n: number; rate: number | null; shown: keyof typeof mark; interval: { lower: number | null; upper: number | null } }) =>
          s.rate === null
            ? `- (0/${s.n})`
            : `${(100 * s.rate).toFixed(1)}% (${s.count}/${s.n}) ${mark[s.shown]}[${s.interval.lower === null ? '-' : (100 * s.interval.lower).toFixed(1)}, ${s.interval.upper === null ? '-' : (100 * s.interval.upper).toFixed(1)}]`;
        printResult(
          r.groups.map((g) => ({
            group: g.group,
            states: g.states,
            answers: g.answers,
            'facts right, action right': pct(g.cells.facts_right_action_right),
            'facts right, action wrong': pct(g.cells.facts_right_action_wrong),
            'facts wrong, action right': pct(g.cells.facts_wrong_action_right),
            'facts wrong, action wrong': pct(g.cells.facts_wrong_action_wrong),
            'errors after correct reading': pct(g.errors_after_correct_reading),
            'P(action wrong | facts right)': pct(g.action_wrong_given_facts_right),
            'mean probe accuracy': g.mean_probe_accuracy,
            coverage: g.coverage.rate,
            'composed accuracy': g.composed ? pct(g.composed.composed_accuracy) : null,
            'decision accuracy': pct(g.decision_accuracy),
            'ambiguous states (answers)': g.ambiguous ? `${g.ambiguous.states} (${g.ambiguous.answers})` : 0,
          })),
          o.format,
        );
        if (o.format !== 'csv') {
          printText(
            `\nstates are distinct decision states; each share is out of their answers (state x epoch), and cl. intervals resample whole states (ex.: Clopper-Pearson where each state is answered once; st.: every state has the same outcome, so Clopper-Pearson over the distinct states, each counted once; ind.: Clopper-Pearson over the answers as independent samples although states repeat). Ambiguous states are in no decision or composition denominator.\n`,
          );
        }
        const s = r.sufficiency;
        if (s && o.format !== 'csv') {
          const plain = (t: string) => visibleControls(t, ' ');
          printText(`probe sufficiency: ${sufficiencyText(s, { strong: (t) => t.toUpperCase(), quote: plain, text: plain })}\n`);
        }
        const af = r.accuracy_form;
        if (af?.spearman && o.format !== 'csv') {
          const n = (x: number | null) => (x === null ? '-' : x.toFixed(2));
          const sp = af.spearman;
          const iv = sp.lower !== null && sp.lower === sp.upper ? 'the bootstrap over subjects has no spread (no interval)' : `${Math.round(sp.level * 100)}% bootstrap over subjects [${n(sp.lower)}, ${n(sp.upper)}]`;
          printText(`accuracy vs errors after correct reading across ${af.used} subjects: Spearman ${n(sp.estimate)}, ${iv}\n`);
        }
        if (r.sensitivity && o.format !== 'csv') {
          const sv = r.sensitivity;
          const f = (x: { rate: number | null; count: number; n: number }) => (x.rate === null ? '-' : `${(100 * x.rate).toFixed(1)}% (${x.count}/${x.n})`);
          printText(`\nexcluded states: ${sv.listed} listed, ${sv.found} among the probed states; the tables above leave them out. With all states -> without:\n`);
          for (const x of sv.rows) printText(`  ${visibleControls(JSON.stringify(x.group))} ${x.metric}: ${f(x.with)} -> ${f(x.without)}${x.change === null ? '' : ` (${x.change >= 0 ? '+' : ''}${(100 * x.change).toFixed(1)} pp)`}\n`);
          printText(sv.largest ? `largest change: ${(100 * Math.abs(sv.largest.change!)).toFixed(1)} pp (${sv.largest.metric}, ${visibleControls(JSON.stringify(sv.largest.group))})\n` : 'largest change: none defined\n');
        }
        if (o.concentration && o.format !== 'csv') {
          const c = r.concentration;
          printText(`error concentration: ${c ? concentrationText(c, (x) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`)) : 'no subject read every fact right on any state, so there is nothing to concentrate'}\n`);
        }
      }),
    );
  withExamples(probes, 'standoff probes', 'standoff probes --by subject_model,decision_type --format json', 'standoff probes --concentration --min-subjects 2 --seed 7', 'standoff probes --exclude-states flagged-states.txt');
}
