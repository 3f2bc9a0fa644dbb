import { Option, type Command } from 'commander';
import { DEFAULT_TRACES, action, collect, parseIntArg, parseNumberArg, usageError, withExamples } from '../program.ts';
import { formatResult, type Format } from '../../store/format.ts';
import type { Plain } from '../../store/duckdb.ts';

// Libraries load on first use, so `standoff --help` and light commands start fast.
const lib = () => import('../../report/ci.ts');
const bootLib = () => import('../../report/ci-bootstrap.ts');
const inputLib = () => import('../../report/ci-input.ts');

const MISSING = ['error', 'drop'] as const;
type Missing = (typeof MISSING)[number];
/** `--missing`: what an empty cell of an --input file does. */
const missingOption = () =>
  new Option('--missing <policy>', 'with --input: an empty cell in a column used is an error (error), or drops its row (drop)').choices(MISSING).default('error');

const OUTPUT_FORMATS = ['table', 'json'] as const;

interface Common {
  traces: string;
  run?: string[];
  format: 'table' | 'json';
  level: number;
  seed: number;
  resamples: number;
}

const DEFAULT_SEED = 20261129;

/** Measurement levels of `agreement --measure`. */
const MEASURES = ['nominal', 'ordinal', 'interval', 'ratio'] as const;
type Measure = (typeof MEASURES)[number];

/** Options every statistics command shares. `--level` is always the confidence level. */
function common(cmd: Command, opts: { random?: boolean } = { random: true }): Command {
  cmd
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--run <id>', 'only these runs (repeatable, or comma-separated)', collect)
    .addOption(new Option('-f, --format <format>', 'output: table or json').choices(OUTPUT_FORMATS).default('table'))
    .option('--level <p>', 'confidence level, strictly between 0 and 1', parseNumberArg('--level'), 0.95);
  if (opts.random) {
    cmd
      .option('--seed <n>', 'seed of the resampling (recorded in the output)', parseIntArg('--seed'), DEFAULT_SEED)
      .option('--resamples <n>', 'bootstrap resamples', parseIntArg('--resamples'), 10000);
  }
  return cmd;
}

/** Flattens nested result objects into table columns (a.b), arrays as JSON text. */
function flatten(obj: Record<string, unknown>, prefix = '', out: Record<string, Plain> = {}): Record<string, Plain> {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, key, out);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else out[key] = (v ?? null) as Plain;
  }
  return out;
}

/** Prints a result (object or array of objects) as JSON or as a table. */
export function printResult(result: unknown, format: 'table' | 'json' | Format, columns?: string[]): void {
  if (format === 'json') {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return;
  }
  const list = (Array.isArray(result) ? result : [result]).map((r) => flatten(r as Record<string, unknown>));
  const cols = columns ?? [...new Set(list.flatMap((r) => Object.keys(r)))];
  process.stdout.write(formatResult({ columns: cols, types: [], rows: list.map((r) => Object.fromEntries(cols.map((c) => [c, r[c] ?? null]))) }, format as Format));
}

const checkSided = (s: string) => {
  if (!['two', 'upper', 'lower'].includes(s)) throw usageError('ci.badSided', `--sided must be two, upper or lower, got "${s}"`);
  return s as 'two' | 'upper' | 'lower';
};

export function registerCi(program: Command): void {
  const ci = program
    .command('ci')
    .description('confidence intervals: exact (Clopper-Pearson), bootstrap (percentile/BCa/basic, clustered), paired')
    .option('--list-metrics', 'list the metrics defined over the trace store')
    .action(
      action(async (opts: { listMetrics?: boolean }) => {
        if (!opts.listMetrics) {
          ci.outputHelp();
          return;
        }
        const { METRICS } = await import('../../report/metrics.ts');
        printResult(
          Object.values(METRICS).map((m) => ({ metric: m.name, binary: m.binary, description: m.description })),
          'table',
        );
      }),
    );
  withExamples(ci, 'standoff ci --list-metrics', 'standoff ci exact --successes 20 --trials 90');

  const exact = common(ci.command('exact').description('exact Clopper-Pearson interval for a proportion'), { random: false })
    .option('--successes <k>', 'successes (with --trials)', parseIntArg('--successes'))
    .option('--trials <n>', 'trials (with --successes)', parseIntArg('--trials'))
    .option('--metric <name>', 'a binary metric over the store (see ci --list-metrics)')
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--aggregates', 'use the aggregates table (ingested results tables) for --metric')
    .option('--input <file>', 'a CSV or Parquet file: with --value, a 0/1 column to count; without, successes and trials columns (one interval per row, or per --by group)')
    .option('--value <col>', 'with --input: the 0/1 column (also true/false, yes/no, C/I) whose successes and trials are counted')
    .addOption(missingOption())
    .option('--sided <s>', 'two, upper (one-sided upper bound) or lower', 'two')
    .action(
      action(async (o: Common & { successes?: number; trials?: number; metric?: string; by?: string[]; sided: string; aggregates?: boolean; input?: string; value?: string; missing: Missing }) => {
        const sided = checkSided(o.sided);
        if (o.successes !== undefined || o.trials !== undefined) {
          if (o.successes === undefined || o.trials === undefined) throw usageError('ci.missingArg', '--successes and --trials go together');
          if (o.metric || o.input) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactCounts } = await import('../../report/ci-exact.ts');
          printResult(ciExactCounts({ successes: o.successes, trials: o.trials, level: o.level, sided }), o.format);
          return;
        }
        if (o.input) {
          if (o.metric || o.aggregates) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactInput } = await inputLib();
          printResult(await ciExactInput(o.input, { value: o.value, by: o.by, missing: o.missing, level: o.level, sided }), o.format);
          return;
        }
        if (o.value) throw usageError('ci.missingArg', '--value goes with --input (over the store, use --metric)');
        const { ciExactMetric } = await lib();
        if (!o.metric) throw usageError('ci.missingArg', 'give --successes K --trials N, or --metric NAME (see standoff ci --list-metrics)');
        printResult(await ciExactMetric({ traces: o.traces, runs: o.run }, { metric: o.metric, by: o.by, level: o.level, sided, aggregates: o.aggregates }), o.format);
      }),
    );
  withExamples(
    exact,
    'standoff ci exact --successes 20 --trials 90',
    'standoff ci exact --successes 0 --trials 30 --sided upper --format json',
    'standoff ci exact --metric gathered_evidence --by subject_model',
    'standoff ci exact --aggregates --metric gathered_evidence --by subject_model',
    'standoff ci exact --input published-table.csv   # columns successes, trials (+ any labels)',
    'standoff ci exact --input results.csv --value correct --by model',
  );

  const boot = common(ci.command('bootstrap').description('bootstrap interval of a mean (seeded; exact fast paths for 0/1 data), optionally clustered'))
    .option('--metric <name>', 'a metric over the store (see ci --list-metrics)')
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--cluster <col>', 'resample whole clusters (e.g. scenario_id: items with their epochs; with --input, comma-separated columns form one key)')
    .option('--input <file>', 'a CSV or Parquet file instead of the store')
    .option('--value <col>', 'with --input: the numeric column')
    .addOption(missingOption())
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'))
    .action(
      action(async (o: Common & { metric?: string; by?: string[]; cluster?: string; input?: string; value?: string; missing: Missing; method: 'percentile' | 'bca' | 'basic' }) => {
        if (o.input) {
          const { ciBootstrapInput } = await inputLib();
          printResult(await ciBootstrapInput(o), o.format);
          return;
        }
        const { ciBootstrap } = await bootLib();
        printResult(await ciBootstrap({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    boot,
    'standoff ci bootstrap --metric policy_action --by subject_model --cluster scenario_id',
    'standoff ci bootstrap --input scores.csv --value score --method bca --format json',
    'standoff ci bootstrap --input scores.csv --value score --cluster item',
    'standoff ci bootstrap --input results.csv --value quality --by model --cluster sample_id',
  );

  const paired = common(ci.command('paired').description('paired difference a - b with a paired bootstrap CI, paired SE, correlation, and the unpaired SE for contrast'))
    .option('--metric <name>', 'a metric over the store; pairs on scenario x epoch')
    .option('--a <subject>', 'first arm (subject model, or arm value with --input)')
    .option('--b <subject>', 'second arm')
    .option('--cluster <col>', 'resample clusters of pairs (e.g. scenario_id; with --input, comma-separated columns form one key)')
    .option('--input <file>', 'a CSV or Parquet file in long form instead of the store')
    .option('--item <cols>', 'with --input: the pairing key, one column or several (sample_id,epoch)')
    .option('--arm <col>', 'with --input: the arm column')
    .option('--value <col>', 'with --input: the numeric column')
    .option('--by <cols>', 'with --input: one comparison per group of these columns (comma-separated)', collect)
    .addOption(missingOption())
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'))
    .action(
      action(async (o: Common & { metric?: string; a?: string; b?: string; cluster?: string; input?: string; item?: string; arm?: string; value?: string; by?: string[]; missing: Missing; method: 'percentile' | 'bca' | 'basic' }) => {
        if (o.input) {
          const { ciPairedInput } = await inputLib();
          printResult(await ciPairedInput(o), o.format);
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
    'standoff ci paired --input long.csv --item item --arm arm --value score --a A --b B --format json',
    'standoff ci paired --input results.csv --item sample_id,epoch --arm model --value correct --a acme-large --b acme-small',
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
    .action(
      action(async (o: Common & { scorer: string; measure: Measure; input?: string; unit?: string[]; rater?: string; value?: string; raters?: string[]; by?: string[]; missing: Missing }) => {
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
        printResult(await agreementInput(o.input, { ...opts, unit: o.unit, rater: o.rater, value: o.value, raters: o.raters, by: o.by, missing: o.missing }), o.format);
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
    .addOption(new Option('--exclude-by <what>', 'drop judges sharing the subject\'s model, family, or none').choices(['model', 'family', 'none']).default('model'))
    .option('--input <file>', 'a CSV or Parquet file with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family)')
    .addOption(missingOption())
    .action(
      action(async (o: Common & { scorer: string; excludeBy: 'model' | 'family' | 'none'; input?: string; missing: Missing }) => {
        const { judgesFromInput, judgesFromStore } = await lib();
        const r = o.input ? await judgesFromInput(o.input, { excludeBy: o.excludeBy, missing: o.missing }) : await judgesFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, excludeBy: o.excludeBy });
        if (o.format === 'json') return printResult(r, 'json');
        printResult(r.samples, 'table', ['sample', 'subject_model', 'median', 'judges_used', 'judges_excluded']);
        process.stdout.write('\n');
        printResult(r.totals, 'table');
      }),
    );
  withExamples(judges, 'standoff judges', 'standoff judges --exclude-by family', 'standoff judges --input verdicts.csv --format json');

  const probes = common(program.command('probes').description('paired-probe outcomes: facts right/wrong x action right/wrong, with Clopper-Pearson intervals, coverage, composition and sufficiency'), { random: false })
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .action(
      action(async (o: Common & { by?: string[] }) => {
        const { probesFromStore } = await lib();
        const r = await probesFromStore({ traces: o.traces, runs: o.run }, { by: o.by, level: o.level });
        if (o.format === 'json') return printResult(r, 'json');
        const pct = (s: { count: number; n: number; rate: number | null; lower: number | null; upper: number | null }) =>
          s.rate === null ? `- (0/${s.n})` : `${(100 * s.rate).toFixed(1)}% (${s.count}/${s.n}) [${(100 * s.lower!).toFixed(1)}, ${(100 * s.upper!).toFixed(1)}]`;
        printResult(
          r.groups.map((g) => ({
            group: g.group,
            states: g.states,
            'facts right, action right': pct(g.cells.factsRightActionRight),
            'facts right, action wrong': pct(g.cells.factsRightActionWrong),
            'facts wrong, action right': pct(g.cells.factsWrongActionRight),
            'facts wrong, action wrong': pct(g.cells.factsWrongActionWrong),
            'errors after correct reading': pct(g.errorsAfterCorrectReading),
            'P(action wrong | facts right)': pct(g.actionWrongGivenFactsRight),
            'mean probe accuracy': g.meanProbeAccuracy,
            coverage: g.coverage.rate,
            'composed accuracy': g.composed ? pct(g.composed.composedAccuracy) : null,
            'decision accuracy': pct(g.decisionAccuracy),
          })),
          'table',
        );
        if (r.sufficiency) {
          process.stdout.write(
            `\nprobe sufficiency: ${r.sufficiency.sufficient ? 'sufficient' : 'NOT sufficient'} over ${r.sufficiency.states} states (${r.sufficiency.counterexamples.length} counterexample group${r.sufficiency.counterexamples.length === 1 ? '' : 's'})\n`,
          );
        }
      }),
    );
  withExamples(probes, 'standoff probes', 'standoff probes --by subject_model,decision_type --format json');
}
