import type { Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { formatOption } from '../options.ts';
import { printSummary } from '../output.ts';
import type { Format } from '../../store/format.ts';

export function registerMerge(program: Command): void {
  const merge = program
    .command('merge')
    .description("copy the committed runs of several stores into OUT, under OUT's store lock; the shards of one run (`run --shard i/N`, one store each) become that one run, in the unsharded run's row order")
    .argument('<out>', 'store to merge into (created when missing)')
    .argument('<stores...>', 'source stores')
    .action(
      action(async (out: string, stores: string[], o: { format: Format }) => {
        const { mergeStores } = await import('../../store/merge-runs.ts');
        const r = await mergeStores(out, stores);
        const rows = r.runs.map((x) => ({ run_id: x.runId, kind: x.kind, sources: x.sources.join(', '), episodes: x.tables.episodes ?? 0 }));
        const lines = [
          `merged ${r.runs.length} run(s) into ${r.out}`,
          ...rows.map((x) => `  ${x.run_id}: ${x.kind === 'shards' ? `${x.sources.split(', ').length} shards merged` : 'copied'}, ${x.episodes} episodes (from ${x.sources})`),
        ];
        printSummary(r, o.format, lines, rows);
      }),
    );
  formatOption(merge);
  withExamples(
    merge,
    'standoff merge traces shard-1 shard-2 shard-3     # the shards of `run --shard i/3`, one store each',
    'standoff merge all-runs lab-a/traces lab-b/traces  # runs with distinct ids are copied as they are',
  );
}
