import { Option, type Command } from 'commander';
import { DEFAULT_TRACES, action, collect, parseIntArg, parseNumberArg, usageError, withExamples } from '../program.ts';
import { formatResult, type Format } from '../../store/format.ts';
import type { Plain } from '../../store/duckdb.ts';

// Libraries load on first use, so `standoff --help` and light commands start fast.
const lib = () => import('../../report/ci.ts');
const bootLib = () => import('../../report/ci-bootstrap.ts');

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

/** Options every statistics command shares. */
const MEASURES = ['nominal', 'ordinal', 'interval', 'ratio'] as const;
type Measure = (typeof MEASURES)[number];

/** `--level`: a confidence level; for `agreement` it may also name the measurement level. */
const parseLevel = (allowMeasure: boolean) => (value: string): number | Measure => {
  if (allowMeasure && (MEASURES as readonly string[]).includes(value)) return value as Measure;
  return parseNumberArg('--level')(value);
};

function common(cmd: Command, opts: { random?: boolean; measureLevel?: boolean } = { random: true }): Command {
  cmd
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--run <id>', 'only these runs (repeatable, or comma-separated)', collect)
    .addOption(new Option('-f, --format <format>', 'output: table or json').choices(OUTPUT_FORMATS).default('table'))
    .option(
      '--level <p>',
      opts.measureLevel ? 'confidence level in (0, 1); or a measurement level (nominal|ordinal|interval|ratio), same as --measure' : 'confidence level, strictly between 0 and 1',
      parseLevel(!!opts.measureLevel),
      0.95,
    );
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
    .option('--input <file>', 'a CSV or Parquet file with successes and trials columns: one interval per row')
    .option('--sided <s>', 'two, upper (one-sided upper bound) or lower', 'two')
    .action(
      action(async (o: Common & { successes?: number; trials?: number; metric?: string; by?: string[]; sided: string; aggregates?: boolean; input?: string }) => {
        const sided = checkSided(o.sided);
        if (o.successes !== undefined || o.trials !== undefined) {
          if (o.successes === undefined || o.trials === undefined) throw usageError('ci.missingArg', '--successes and --trials go together');
          if (o.metric || o.input) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactCounts } = await import('../../report/ci-exact.ts');
          printResult(ciExactCounts({ successes: o.successes, trials: o.trials, level: o.level, sided }), o.format);
          return;
        }
        if (o.input) {
          if (o.metric) throw usageError('ci.conflict', 'give one of --successes/--trials, --input or --metric');
          const { ciExactInput } = await import('../../report/ci-exact.ts');
          printResult(await ciExactInput(o.input, { level: o.level, sided }), o.format);
          return;
        }
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
  );

  const boot = common(ci.command('bootstrap').description('bootstrap interval of a mean (seeded; exact fast paths for 0/1 data), optionally clustered'))
    .option('--metric <name>', 'a metric over the store (see ci --list-metrics)')
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .option('--cluster <col>', 'resample whole clusters of this column (over the store: scenario_id by default, a scenario with its epochs)')
    .option('--no-cluster', 'treat every observation as independent (the output says so)')
    .option('--input <file>', 'a CSV or Parquet file instead of the store')
    .option('--value <col>', 'with --input: the numeric column')
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'))
    .action(
      action(async (o: Common & { metric?: string; by?: string[]; cluster?: string | false; input?: string; value?: string; method: 'percentile' | 'bca' | 'basic' }) => {
        const { ciBootstrap } = await bootLib();
        printResult(await ciBootstrap({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    boot,
    'standoff ci bootstrap --metric policy_action --by subject_model              # clusters on scenario_id',
    'standoff ci bootstrap --metric policy_action --by subject_model --no-cluster # epochs as independent',
    'standoff ci bootstrap --input scores.csv --value score --method bca --format json',
    'standoff ci bootstrap --input scores.csv --value score --cluster item',
  );

  const paired = common(ci.command('paired').description('paired difference a - b: paired cluster bootstrap CI (pairs of one scenario resampled together), clustered paired SE for p and MDE, correlation, and the unpaired SE for contrast'))
    .option('--metric <name>', 'a metric over the store; pairs on scenario x epoch, clustered on scenario_id')
    .option('--a <subject>', 'first arm (subject model, or arm value with --input)')
    .option('--b <subject>', 'second arm')
    .option('--cluster <col>', 'resample clusters of pairs (over the store: scenario_id by default)')
    .option('--no-cluster', 'treat every pair as independent (the output says so)')
    .option('--input <file>', 'a CSV or Parquet file in long form instead of the store')
    .option('--item <col>', 'with --input: the pairing key column')
    .option('--arm <col>', 'with --input: the arm column')
    .option('--value <col>', 'with --input: the numeric column')
    .addOption(new Option('--method <m>', 'interval method').choices(['percentile', 'bca', 'basic']).default('percentile'))
    .action(
      action(async (o: Common & { metric?: string; a?: string; b?: string; cluster?: string | false; input?: string; item?: string; arm?: string; value?: string; method: 'percentile' | 'bca' | 'basic' }) => {
        const { ciPaired } = await bootLib();
        printResult(await ciPaired({ traces: o.traces, runs: o.run }, o), o.format);
      }),
    );
  withExamples(
    paired,
    'standoff ci paired --metric policy_action --a sim:careful --b sim:hasty',
    'standoff ci paired --input long.csv --item item --arm arm --value score --a A --b B --format json',
  );

  const agreement = common(program.command('agreement').description("Krippendorff's alpha with a bootstrap CI over units (judges over the store, or any long-form file)"), { random: true, measureLevel: true })
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--measure <level>', 'measurement level').choices(['nominal', 'ordinal', 'interval', 'ratio']).default('nominal'))
    .option('--input <file>', 'a CSV or Parquet file with columns unit, rater, value (empty value = missing)')
    .option('--by <col>', 'with --input: one alpha per value of this column')
    .action(
      action(async (o: Omit<Common, 'level'> & { level: number | Measure; scorer: string; measure: Measure; input?: string; by?: string }) => {
        const { agreementFromInput, agreementFromStore } = await lib();
        const measure = typeof o.level === 'string' ? o.level : o.measure;
        const opts = { level: measure, ciLevel: typeof o.level === 'number' ? o.level : 0.95, seed: o.seed, resamples: o.resamples };
        if (o.by && !o.input) throw usageError('ci.missingArg', '--by goes with --input');
        printResult(o.input ? await agreementFromInput(o.input, { ...opts, by: o.by }) : await agreementFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, ...opts }), o.format);
      }),
    );
  withExamples(agreement, 'standoff agreement', 'standoff agreement --level ordinal', 'standoff agreement --input ratings.csv --measure interval --level 0.9 --format json');

  const judges = common(program.command('judges').description('median of judges per sample with self-exclusion (judge of the subject\'s own model or family dropped)'), { random: false })
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--exclude-by <what>', 'drop judges sharing the subject\'s model, family, or none').choices(['model', 'family', 'none']).default('model'))
    .option('--input <file>', 'a CSV or Parquet file with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family)')
    .action(
      action(async (o: Common & { scorer: string; excludeBy: 'model' | 'family' | 'none'; input?: string }) => {
        const { judgesFromInput, judgesFromStore } = await lib();
        const r = o.input ? await judgesFromInput(o.input, { excludeBy: o.excludeBy }) : await judgesFromStore({ traces: o.traces, runs: o.run }, { scorer: o.scorer, excludeBy: o.excludeBy });
        if (o.format === 'json') return printResult(r, 'json');
        printResult(r.samples, 'table', ['sample', 'subject_model', 'median', 'judges_used', 'judges_excluded']);
        process.stdout.write('\n');
        printResult(r.totals, 'table');
      }),
    );
  withExamples(judges, 'standoff judges', 'standoff judges --exclude-by family', 'standoff judges --input verdicts.csv --format json');

  const probes = common(program.command('probes').description('paired-probe outcomes over distinct states: facts right/wrong x action right/wrong with intervals that resample whole states, coverage, composition, ambiguous states apart, sufficiency'))
    .option('--by <cols>', 'group by these columns (comma-separated)', collect)
    .action(
      action(async (o: Common & { by?: string[] }) => {
        const { probesFromStore } = await lib();
        const r = await probesFromStore({ traces: o.traces, runs: o.run }, { by: o.by, level: o.level, seed: o.seed, resamples: o.resamples });
        if (o.format === 'json') return printResult(r, 'json');
        const pct = (s: { count: number; n: number; rate: number | null; interval: { lower: number | null; upper: number | null; sampling: string } }) =>
          s.rate === null
            ? `- (0/${s.n})`
            : `${(100 * s.rate).toFixed(1)}% (${s.count}/${s.n}) ${s.interval.sampling === 'clustered' ? 'cl.' : 'ex.'}[${s.interval.lower === null ? '-' : (100 * s.interval.lower).toFixed(1)}, ${s.interval.upper === null ? '-' : (100 * s.interval.upper).toFixed(1)}]`;
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
          'table',
        );
        process.stdout.write(
          `\nstates are distinct decision states; each share is out of their answers (state x epoch), and cl. intervals resample whole states (ex.: exact, no state repeats). Ambiguous states are in no decision or composition denominator.\n`,
        );
        const s = r.sufficiency;
        if (s) {
          const verdict = s.vacuous ? 'VACUOUS (no two states share a group: nothing was compared)' : s.sufficient ? 'sufficient' : `NOT sufficient (${s.counterexamples.length} counterexample group${s.counterexamples.length === 1 ? '' : 's'})`;
          process.stdout.write(`probe sufficiency: ${verdict}; ${s.states} distinct states grouped by ${s.grouped_by} into ${s.answer_groups} groups, ${s.groups_with_several_states} with two or more states\n`);
        }
      }),
    );
  withExamples(probes, 'standoff probes', 'standoff probes --by subject_model,decision_type --format json');
}
