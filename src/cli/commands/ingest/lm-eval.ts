/**
 * `standoff ingest lm-eval`: lm-evaluation-harness output into the trace store, one run per task,
 * with the reported aggregates reconciled against the samples (`src/ingest/ingest-lm-eval.ts`).
 */
import type { Command } from 'commander';
import { action, withExamples } from '../../program.ts';
import { formatOption, storeOptions } from '../../options.ts';
import { printTable, printText } from '../../output.ts';
import type { Format } from '../../../store/format.ts';
import { terminalLine } from '../../../escape.ts';
import { tableCounts } from './table-counts.ts';

export function registerIngestLmEval(ingest: Command): void {
  const lmEval = ingest
    .command('lm-eval')
    .description(
      'ingest lm-evaluation-harness output (results_*.json with samples_<task>_*.jsonl, from --log_samples); one run per task, ' +
        'per-sample metrics as scores, and the reported aggregates reconciled with the samples',
    )
    .argument('<dir>', 'the --output_path directory (searched recursively), or one results file')
    .option('--run-id <id>', 'run id (one task); with several tasks each run is <id>.<task> (default: lm-eval-<task>-<hash>)')
    .option('--dry-run', 'validate, reconcile and print what would be written; write nothing')
    .option('--replace', 'replace runs that already exist')
    .action(
      action(async (dir: string, o: { runId?: string; traces: string; dryRun?: boolean; replace?: boolean; format: Format }) => {
        const { ingestLmEval } = await import('../../../ingest/ingest-lm-eval.ts');
        const { reconciliationTable } = await import('../../../ingest/lm-eval/reconcile.ts');
        const { formatResult } = await import('../../../store/format.ts');
        const s = await ingestLmEval(dir, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, report: () => undefined });
        const format = o.format;
        const runLines = s.runs.map(
          (r) =>
            terminalLine(`${s.dryRun ? 'would write' : 'wrote'} run ${r.runId} (${r.task}, ${r.model}, ${r.docs} document${r.docs === 1 ? '' : 's'}, scorers ${r.scorers.join(', ') || 'none'}): ${tableCounts(r.tables)}`),
        );
        if (format === 'json') printText(JSON.stringify(s, null, 2) + '\n');
        else if (format === 'table') {
          // One comparison per results file: the same task may come from several.
          const out = [...runLines, '', `reconciliation: reported vs recomputed from the samples; FLAG when |diff| > ${s.tolerance.abs} + ${s.tolerance.rel} x |reported|`];
          for (const file of [...new Set(s.reconciliation.map((r) => r.results_file))]) {
            const model = s.runs.find((r) => r.resultsFile === file)?.model;
            out.push('', terminalLine(`${file}${model ? ` (${model})` : ''}`), formatResult(reconciliationTable(s.reconciliation.filter((r) => r.results_file === file)), 'table').trimEnd());
          }
          printText(out.join('\n') + '\n');
        } else {
          process.stderr.write(`${runLines.join('\n')}\n`);
          printTable(reconciliationTable(s.reconciliation, true), format);
        }
        if (s.flagged > 0) {
          process.stderr.write(
            `standoff: warning: ${s.flagged} reported aggregate${s.flagged === 1 ? ' differs' : 's differ'} from the samples beyond the tolerance (status FLAG); the reported values are stored as reported\n`,
          );
        }
      }),
    );
  formatOption(storeOptions(lmEval, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(
    lmEval,
    'lm_eval --model hf --model_args pretrained=gpt2 --tasks gsm8k,hellaswag --output_path out/ --log_samples   # writes the input',
    'standoff ingest lm-eval out/',
    'standoff ingest lm-eval out/ --run-id gpt2-base          # runs gpt2-base.gsm8k, gpt2-base.hellaswag',
    'standoff ingest lm-eval out/gpt2/results_2026-08-10T15-02-57.123456.json --dry-run --format markdown',
    'STANDOFF_MAX_LINE_BYTES=500000000 standoff ingest lm-eval out/   # samples lines up to 500 MB (default 256 MiB)',
  );
}
