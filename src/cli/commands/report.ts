import { Option, type Command } from 'commander';
import { action, collect, parseIntArg, withExamples } from '../program.ts';
import { formatOption, levelOption, resamplingOptions, storeOptions } from '../options.ts';
import { printResult } from '../output.ts';
import type { Format } from '../../store/format.ts';
import type { ProgramFactory } from '../notebook-blocks.ts';

/** `makeProgram` builds the command tree a notebook's `standoff` blocks parse with (main's `buildProgram`). */
export function registerReport(program: Command, makeProgram: ProgramFactory): void {
  const report = withExamples(program.command('report').description('reports generated from the traces'), 'standoff report build');
  const build = report
    .command('build')
    .description('regenerate REPORT.md, figures (Vega-Lite spec, SVG, PNG) and results.json from the traces; deterministic for the same traces, options and seed')
    .option('--out <dir>', 'output directory (replaced atomically)', 'reports')
    .option('--allow-judge-errors <n>', 'ERROR verdicts (failed judge calls) a run may hold and still pass the gate (default 0)', parseIntArg('--allow-judge-errors'))
    .option('--allow-truncated <n>', 'episodes cut off at the token limit a run may have and still pass the gate (default 0)', parseIntArg('--allow-truncated'))
    .option('--allow-missing <n>', 'required scores nobody measured (blank cells, no score row) a run may hold and still pass the gate (default 0)', parseIntArg('--allow-missing'))
    .addOption(new Option('--adjust <method>', 'pairwise p-values adjusted within each family (one task and one scorer; the Standoff O1 suite: one metric): holm, bh (Benjamini-Hochberg) or none').choices(['holm', 'bh', 'none']))
    .option('--quiet', 'no progress lines on stderr')
    .option('--exclude-states <file>', 'state ids (one per line, e.g. from a label audit): the probe section adds the headline numbers with and without them and the largest change')
    .option('--prices <file>', 'JSON price table, as for standoff costs: {"<model>": {"input_per_mtok": USD, "output_per_mtok": USD}}; the cost section gives cost per 1,000 episodes and the cost frontier (without it cost is not measured)')
    .option('--slice <cols>', 'stores that are not a Standoff suite: also slice by these episode columns or sample metadata keys (comma-separated)', collect)
    .action(
      action(async (o: { traces: string; run?: string[]; out: string; seed: number; resamples: number; level: number; allowJudgeErrors?: number; allowTruncated?: number; allowMissing?: number; adjust?: 'holm' | 'bh' | 'none'; quiet?: boolean; slice?: string[]; excludeStates?: string; prices?: string }) => {
        const { buildAnyReport } = await import('../../report/build-report.ts');
        const r = await buildAnyReport({ traces: o.traces, runs: o.run, out: o.out, seed: o.seed, resamples: o.resamples, level: o.level, allowJudgeErrors: o.allowJudgeErrors, allowTruncated: o.allowTruncated, allowMissing: o.allowMissing, adjust: o.adjust, progress: !o.quiet, slices: o.slice, excludeStates: o.excludeStates, prices: o.prices });
        process.stdout.write(`wrote ${r.files.length} files to ${o.out} (REPORT.md, index.html, results.json${r.files.some((f) => f.startsWith('figures/')) ? ', figures/' : ''})\n`);
      }),
    );
  // The shared options (src/cli/options.ts).
  levelOption(resamplingOptions(storeOptions(build), 'every resampling procedure'), 'confidence level of every interval');
  withExamples(build, 'standoff report build', 'standoff report build --traces S --out S-report   # any store: CSV, Inspect, lm-eval', 'standoff report build --traces S --slice subject', 'standoff report build --exclude-states flagged-states.txt', 'standoff report build --prices prices.json   # cost per 1,000 episodes and the cost frontier', 'standoff report build --traces other-store --run demo-s20260810 --out /tmp/report --seed 7');

  const notebook = withExamples(
    program.command('notebook').description('Markdown notebooks of sql, vega-lite and standoff blocks (docs/notebooks.md)'),
    'standoff notebook run notebooks/hasty-without-evidence.md',
    'standoff notebook list',
  );
  const run = notebook
    .command('run')
    .description('execute a notebook against the store and write the rendered Markdown with result tables and figures')
    .argument('<file>', 'notebook (Markdown with fenced sql / vega-lite / standoff blocks), or the name of a shipped one (standoff notebook list)')
    .option('--out <path>', 'output directory, or FILE.md', 'reports/notebooks')
    .action(
      action(async (file: string, o: { traces: string; run?: string[]; out: string; seed: number; resamples: number; level: number }) => {
        const { runNotebook } = await import('../../notebook/notebook.ts');
        const { standoffBlockRunner } = await import('../notebook-blocks.ts');
        const { resolveNotebook } = await import('../../notebook/shipped-notebooks.ts');
        const r = await runNotebook(resolveNotebook(file), { traces: o.traces, runs: o.run, out: o.out, seed: o.seed, resamples: o.resamples, level: o.level, progress: true, standoff: standoffBlockRunner(makeProgram) });
        const b = r.blocks;
        const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
        process.stdout.write(
          `wrote ${r.output}: ${b.sql} sql, ${b['vega-lite']} vega-lite and ${n(b.standoff, 'standoff block')}; ${n(r.figures, 'figure')}${r.figures ? ` (${r.figures * 3} files: .png, .svg, .vl.json)` : ''}\n`,
        );
      }),
    );
  // The shared options (src/cli/options.ts); seed, resamples and level are the defaults of standoff blocks.
  levelOption(resamplingOptions(storeOptions(run), 'standoff blocks'), 'confidence level of standoff blocks');
  withExamples(run, 'standoff notebook run notebooks/hasty-without-evidence.md', 'standoff notebook run judge-disagreement --out reports/judge-disagreement.md');

  const list = notebook
    .command('list')
    .description('the notebooks shipped with Standoff (run one by name: standoff notebook run NAME)')
    .action(
      action(async (o: { format: Format }) => {
        const { listShippedNotebooks } = await import('../../notebook/shipped-notebooks.ts');
        printResult(listShippedNotebooks(), o.format);
      }),
    );
  formatOption(list);
}
