/**
 * `standoff compare`: the candidate against the baseline, paired by item, per metric and task,
 * with a verdict and, with --fail-on, exit code 6 when the condition holds (src/decide/compare.ts).
 */
import { Option, type Command } from 'commander';
import { action, collect, withExamples } from '../program.ts';
import { formatOption, levelOption, resamplingOptions, storeOptions } from '../options.ts';
import { currentSink, printMarkdown, printResult } from '../output.ts';
import type { Format } from '../../store/format.ts';

const REDUCE = ['mean', 'median', 'mode', 'max', 'min', 'at_least_one'] as const;

interface CompareCli {
  baseline?: string;
  candidate?: string;
  traces: string;
  baselineTraces?: string;
  metric?: string[];
  reduce?: (typeof REDUCE)[number];
  margin?: string;
  failOn?: 'worse' | 'any';
  adjust: 'holm' | 'bh' | 'none';
  format: Format;
  level: number;
  seed: number;
  resamples: number;
}

export function registerCompare(program: Command): void {
  const cmd = program
    .command('compare')
    .description('did the candidate get worse? paired difference per metric and task (paired cluster bootstrap CI, clustered p, adjusted p, MDE), a verdict, and exit code 6 when a --fail-on condition holds')
    .option('--baseline <side>', 'run:ID or subject:NAME (in --baseline-traces, default --traces)')
    .option('--candidate <side>', 'run:ID or subject:NAME (in --traces)')
    .option('--baseline-traces <dir>', 'trace store of the baseline, when it is another store (another source: lm-eval, Inspect, CSV)')
    .option('--metric <name>', 'metric to compare (repeatable or comma-separated; see standoff ci --list-metrics); higher is better', collect)
    .addOption(new Option('--reduce <reducer>', 'reduce epochs to one value per item before pairing (default: pair item x epoch, clustered by item)').choices(REDUCE))
    .option('--margin <m>', 'non-inferiority margin in the metric\'s units or percentage points (2pp = 0.02): verdicts become non-inferior / not shown non-inferior')
    .addOption(new Option('--fail-on <what>', 'exit 6 when some verdict is worse (or not shown non-inferior) [worse], or any detected change [any]').choices(['worse', 'any']))
    .addOption(new Option('--adjust <method>', 'p adjustment over the metrics x tasks compared').choices(['holm', 'bh', 'none']).default('holm'));
  storeOptions(cmd, { runs: false }); // --traces: the candidate's store (and the baseline's unless --baseline-traces)
  formatOption(cmd);
  levelOption(cmd);
  resamplingOptions(cmd);
  cmd.action(
    action(async (o: CompareCli) => {
      const { loadComparison } = await import('../../decide/load-side.ts');
      const { parseAmount } = await import('../../decide/units.ts');
      const { EXIT_FAIL_ON } = await import('../../errors.ts');
      const r = await loadComparison({
        baseline: o.baseline!, candidate: o.candidate!, traces: o.traces, baselineTraces: o.baselineTraces, metrics: o.metric ?? [], reduce: o.reduce,
        margin: o.margin === undefined ? undefined : parseAmount('--margin', o.margin), failOn: o.failOn, adjust: o.adjust, level: o.level, seed: o.seed, resamples: o.resamples,
      });
      if (o.format === 'markdown') {
        const { renderCompareMarkdown } = await import('../../decide/compare-markdown.ts');
        printMarkdown(renderCompareMarkdown(r, r.baseline.ref, r.candidate.ref));
      } else if (o.format === 'json') printResult(r, 'json');
      else {
        const rows = r.rows.map(({ four_cell, agreement, ...x }) => ({ ...x, ...(four_cell ? { both_right: four_cell.both_right, only_baseline_right: four_cell.only_baseline, only_candidate_right: four_cell.only_candidate, both_wrong: four_cell.both_wrong } : {}), share_identical: agreement?.share_identical ?? null, kappa: agreement?.kappa ?? null }));
        printResult(rows, o.format);
        if (o.format === 'table') process.stderr.write(`standoff: ${r.candidate.ref} vs ${r.baseline.ref}: ${r.failed ? `--fail-on ${r.fail_on} holds (exit ${EXIT_FAIL_ON})` : r.fail_on ? `--fail-on ${r.fail_on} does not hold` : `${r.rows.length} comparison(s)`}\n`);
      }
      // A notebook block reports the verdict in its output; only the command line exits 6.
      if (r.failed && !currentSink().rethrow) process.exitCode = EXIT_FAIL_ON;
    }),
  );
  withExamples(
    cmd,
    'standoff compare --baseline subject:sim:careful --candidate subject:sim:hasty --metric correct',
    'standoff compare --baseline run:main-nightly --candidate run:pr-123 --metric correct --fail-on worse --format markdown > comment.md',
    'standoff compare --baseline-traces lm-eval-store --baseline run:gsm8k-base --traces csv-store --candidate subject:my-model --metric acc --reduce mean',
    'standoff compare --baseline subject:old --candidate subject:new --metric correct --margin 2pp --fail-on worse',
  );
}
