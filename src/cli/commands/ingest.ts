import type { Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { formatOption, storeOptions } from '../options.ts';
import { printSummary } from '../output.ts';
import type { Format } from '../../store/format.ts';

const counts = (t: Partial<Record<string, number>>) =>
  Object.entries(t)
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

export function registerIngest(program: Command): void {
  const ingest = withExamples(
    program.command('ingest').description('bring outside results into the trace store (validated, all-or-nothing)'),
    'standoff ingest csv results.csv --map map.json',
    'standoff ingest inspect logs/',
  );

  const csv = ingest
    .command('csv')
    .description('ingest per-sample CSVs (episodes, judgments or probe answers) or aggregate results tables (subject, metric, successes, trials)')
    .argument('<files...>', 'CSV files (UTF-8; a BOM and CRLF line endings are fine)')
    .option('--map <file>', 'mapping file (JSON; see docs/ingest-csv.md); without it, well-known column names are recognised and the mapping is printed')
    .option('--run-id <id>', 'run id (default: csv-<time>-<hash>)')
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace an existing run with the same id')
    .action(
      action(async (files: string[], o: { map?: string; runId?: string; traces: string; dryRun?: boolean; replace?: boolean; format: Format }) => {
        const { ingestCsv } = await import('../../ingest/ingest-csv.ts');
        const s = await ingestCsv(files, { traces: o.traces, map: o.map, runId: o.runId, dryRun: o.dryRun, replace: o.replace });
        const detected = s.files.some((f) => f.detected);
        if (detected && o.format !== 'json') process.stderr.write(`standoff: no --map given; detected mapping: ${s.mappingJson}\n`);
        printSummary(
          s,
          o.format,
          [
            `${s.dryRun ? 'would write' : 'wrote'} run ${s.runId} to ${s.store}: ${counts(s.tables)}`,
            ...s.files.map((f) => `  ${f.file}: ${f.rows} rows -> ${f.table}${f.ignoredColumns.length ? ` (ignored columns: ${f.ignoredColumns.join(', ')})` : ''}`),
          ],
          s.files.map((f) => ({ run_id: s.runId, dry_run: s.dryRun, file: f.file, table: f.table, rows: f.rows, ignored_columns: f.ignoredColumns })),
        );
      }),
    );
  formatOption(storeOptions(csv, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(
    csv,
    'standoff ingest csv results.csv --map map.json --run-id vendor-a',
    'standoff ingest csv published-table.csv            # subject,metric,successes,trials -> aggregates',
    'standoff ingest csv results.csv --dry-run',
  );

  const inspect = ingest
    .command('inspect')
    .description('ingest Inspect AI logs (.eval archives, including crashed journal-only ones, and .json logs); one run per log')
    .argument('<paths...>', 'log files or directories')
    .option('--run-id <id>', 'run id (only with a single log; default: inspect-<eval run id>-<hash>)')
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace runs that already exist')
    .action(
      action(async (paths: string[], o: { runId?: string; traces: string; dryRun?: boolean; replace?: boolean; format: Format }) => {
        const { ingestInspect } = await import('../../ingest/ingest-inspect.ts');
        const s = await ingestInspect(paths, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, report: () => undefined });
        printSummary(
          s,
          o.format,
          s.runs.map(
            (r) =>
              `${s.dryRun ? 'would write' : 'wrote'} run ${r.runId} (${r.file}: ${r.suite}, ${r.model}, ${r.samples} samples${r.rebuiltFromJournal ? ', rebuilt from the journal' : ''}): ${counts(r.tables)}`,
          ),
          s.runs.map((r) => ({ dry_run: s.dryRun, run_id: r.runId, file: r.file, suite: r.suite, model: r.model, samples: r.samples, rebuilt_from_journal: !!r.rebuiltFromJournal, ...r.tables })),
        );
      }),
    );
  formatOption(storeOptions(inspect, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(inspect, 'standoff ingest inspect logs/', 'standoff ingest inspect logs/2026-08-10T15-02-57_task.eval --run-id o1-full --dry-run');
}
