/**
 * `standoff ci`: the parent of `ci exact`, `ci bootstrap` and `ci paired` (one file each in this
 * folder), and `ci --list-metrics`, the metrics defined over the trace store.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { action, unknownSubcommand, withExamples } from '../../program.ts';
import { formatOption, storeOptions } from '../../options.ts';
import { printResult, printText } from '../../output.ts';
import type { Format } from '../../../store/format.ts';
import { storeError } from '../../../errors.ts';
import { registerCiExact } from './exact.ts';
import { registerCiBootstrap } from './bootstrap.ts';
import { registerCiPaired } from './paired.ts';

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
        const { METRICS } = await import('../../../analysis/metrics.ts');
        const rows = Object.values(METRICS).map((m) => ({ metric: m.name, source: 'built-in', kind: null, observations: null, not_measured: null, description: m.description }));
        printResult(opts.format === 'json' ? rows : rows.map((r) => ({ ...r, description: shortDescription(r.description) })), opts.format);
        return;
      }
      const { listStoreMetrics } = await import('../../../analysis/ci.ts');
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

  registerCiExact(ci);
  registerCiBootstrap(ci);
  registerCiPaired(ci);
}
