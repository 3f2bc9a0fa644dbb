import type { Command } from 'commander';
import { DEFAULT_TRACES, action, collect, parseIntArg, parseNumberArg, withExamples } from '../program.ts';

const DEFAULT_SEED = 20261129;

export function registerReport(program: Command): void {
  const report = withExamples(program.command('report').description('reports generated from the traces'), 'standoff report build');
  const build = report
    .command('build')
    .description('regenerate REPORT.md, figures (Vega-Lite spec, SVG, PNG) and results.json from the traces; deterministic for the same traces, options and seed')
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--run <id>', 'only these runs (repeatable, or comma-separated)', collect)
    .option('--out <dir>', 'output directory (replaced atomically)', 'reports')
    .option('--seed <n>', 'seed of every resampling procedure (recorded in results.json)', parseIntArg('--seed'), DEFAULT_SEED)
    .option('--resamples <n>', 'bootstrap resamples', parseIntArg('--resamples'), 10000)
    .option('--level <p>', 'confidence level of every interval', parseNumberArg('--level'), 0.95)
    .option('--allow-judge-errors <n>', 'ERROR verdicts (failed judge calls) a run may hold and still pass the gate (default 0)', parseIntArg('--allow-judge-errors'))
    .option('--quiet', 'no progress lines on stderr')
    .action(
      action(async (o: { traces: string; run?: string[]; out: string; seed: number; resamples: number; level: number; allowJudgeErrors?: number; quiet?: boolean }) => {
        const { buildReport } = await import('../../report/build-report.ts');
        const r = await buildReport({ traces: o.traces, runs: o.run, out: o.out, seed: o.seed, resamples: o.resamples, level: o.level, allowJudgeErrors: o.allowJudgeErrors, progress: !o.quiet });
        process.stdout.write(`wrote ${r.files.length} files to ${o.out} (REPORT.md, results.json, figures/)\n`);
      }),
    );
  withExamples(build, 'standoff report build', 'standoff report build --traces other-store --run demo-s20260810 --out /tmp/report --seed 7');

  const notebook = withExamples(
    program.command('notebook').description('Markdown notebooks of sql, vega-lite and standoff blocks'),
    'standoff notebook run notebooks/hasty-without-evidence.md',
  );
  const run = notebook
    .command('run')
    .description('execute a notebook against the store and write the rendered Markdown with result tables and figures')
    .argument('<file>', 'notebook (Markdown with fenced sql / vega-lite / standoff blocks)')
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--run <id>', 'only these runs (repeatable, or comma-separated)', collect)
    .option('--out <path>', 'output directory, or FILE.md', 'reports/notebooks')
    .option('--seed <n>', 'seed for standoff blocks', parseIntArg('--seed'), DEFAULT_SEED)
    .option('--resamples <n>', 'bootstrap resamples for standoff blocks', parseIntArg('--resamples'), 10000)
    .option('--level <p>', 'confidence level for standoff blocks', parseNumberArg('--level'), 0.95)
    .action(
      action(async (file: string, o: { traces: string; run?: string[]; out: string; seed: number; resamples: number; level: number }) => {
        const { runNotebook } = await import('../../report/notebook.ts');
        const r = await runNotebook(file, { traces: o.traces, runs: o.run, out: o.out, seed: o.seed, resamples: o.resamples, level: o.level, progress: true });
        process.stdout.write(`wrote ${r.output} (${r.files.length} figure files)\n`);
      }),
    );
  withExamples(run, 'standoff notebook run notebooks/hasty-without-evidence.md', 'standoff notebook run notebooks/judge-disagreement.md --out reports/judge-disagreement.md');
}
