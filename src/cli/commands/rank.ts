/**
 * `standoff rank`: estimates, ranks with rank intervals, tiers (compact letters over Holm-adjusted
 * paired comparisons), mean rank and mean win rate across tasks (src/decide/rank.ts); with
 * --preferences FILE, Bradley-Terry strengths with bootstrap intervals (src/decide/preferences.ts).
 */
import { Option, type Command } from 'commander';
import { action, collect, withExamples } from '../program.ts';
import { formatOption, levelOption, storeOptions } from '../options.ts';
import { printResult, printText } from '../output.ts';
import { parseIntArg } from '../program.ts';
import type { Format } from '../../store/format.ts';

interface RankCli {
  traces: string;
  run?: string[];
  metric?: string;
  task?: string[];
  by: 'subject_model' | 'run_id';
  reduce?: 'mean' | 'median' | 'mode' | 'max' | 'min' | 'at_least_one';
  preferences?: string;
  format: Format;
  level: number;
  seed: number;
  resamples: number;
}

/** Rank's default resamples: every resample re-ranks every task, so fewer than ci's 10,000. */
export const RANK_RESAMPLES = 2000;

export function registerRank(program: Command): void {
  const cmd = program
    .command('rank')
    .description('rank subjects on a metric: estimate with CI, rank and rank interval (cluster bootstrap), tiers (compact letters over Holm-adjusted paired tests), mean rank and mean win rate across tasks; or Bradley-Terry over --preferences')
    .option('--metric <name>', 'the metric (see standoff ci --list-metrics); higher is better')
    .option('--task <t>', 'only these tasks (run suites; repeatable or comma-separated); default every task', collect)
    .addOption(new Option('--by <col>', 'what is ranked').choices(['subject_model', 'run_id']).default('subject_model'))
    .addOption(new Option('--reduce <reducer>', 'reduce epochs to one value per item first').choices(['mean', 'median', 'mode', 'max', 'min', 'at_least_one']))
    .option('--preferences <file>', 'CSV or Parquet of pairwise preferences (columns a, b, winner: a\'s or b\'s name, or tie): Bradley-Terry');
  storeOptions(cmd);
  formatOption(cmd);
  levelOption(cmd);
  cmd
    .option('--seed <n>', 'seed of the bootstrap (recorded in the output)', parseIntArg('--seed'), 20261129)
    .option('--resamples <n>', 'bootstrap resamples', parseIntArg('--resamples'), RANK_RESAMPLES);
  cmd.action(
    action(async (o: RankCli) => {
      const s = { level: o.level, seed: o.seed, resamples: o.resamples };
      const lib = await import('../../decide/load-rank.ts');
      if (o.preferences) {
        const r = await lib.loadPreferenceRanking(o.preferences, s);
        printResult(o.format === 'json' ? r : r.rows, o.format);
        return;
      }
      const r = await lib.loadRanking({ traces: o.traces, runs: o.run, metric: o.metric, task: o.task, by: o.by, reduce: o.reduce, ...s });
      if (o.format === 'json') return printResult(r, 'json');
      printResult(r.rows, o.format);
      if (r.overall[0]?.tasks > 1) printResult(r.overall, o.format);
      if (o.format === 'table') printText(`tiers: ${r.tier_rule}\n`);
    }),
  );
  withExamples(
    cmd,
    'standoff rank --metric policy_action',
    'standoff rank --traces S --metric correct --task gsm8k,arc --resamples 5000 --format json',
    'standoff rank --preferences prefs.csv            # columns a, b, winner (or tie)',
  );
}
