/**
 * `standoff ingest inspect`: Inspect AI logs (.eval, .json) into the trace store, one run per log
 * (`src/ingest/ingest-inspect.ts`).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { action, withExamples } from '../../program.ts';
import { formatOption, storeOptions } from '../../options.ts';
import { printSummary } from '../../output.ts';
import type { Format } from '../../../store/format.ts';
import { tableCounts } from './table-counts.ts';

export function registerIngestInspect(ingest: Command): void {
  const inspect = ingest
    .command('inspect')
    .description('ingest Inspect AI logs (.eval archives, including crashed journal-only ones, and .json logs); one run per log')
    .argument('<paths...>', 'log files or directories')
    .option('--run-id <id>', 'run id (only with a single log; default: inspect-<eval run id>-<hash>)')
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace runs that already exist')
    .option('--max-member-size <size>', 'largest a .eval member may inflate to, e.g. 512MB or 1GiB (default 256MiB; zip-bomb guard)', parseByteSize('--max-member-size'))
    .option('--workers <n>', 'worker threads reading the logs (default 0: none, the faster on 2 cores; try N on more cores); the store is identical for any number', parseCount('--workers'))
    .option('--max-ratio <n>', 'largest inflated/compressed ratio of a .eval member over 1 MiB (default 1000; zip-bomb guard)', parsePositiveNumber('--max-ratio'))
    .action(
      action(async (paths: string[], o: { runId?: string; traces: string; dryRun?: boolean; replace?: boolean; format: Format; maxMemberSize?: number; maxRatio?: number; workers?: number }) => {
        const { ingestInspect } = await import('../../../ingest/ingest-inspect.ts');
        const { DEFAULT_ZIP_LIMITS } = await import('../../../ingest/inspect/zip.ts');
        const zipLimits = { maxMemberBytes: o.maxMemberSize ?? DEFAULT_ZIP_LIMITS.maxMemberBytes, maxRatio: o.maxRatio ?? DEFAULT_ZIP_LIMITS.maxRatio };
        const s = await ingestInspect(paths, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, zipLimits, workers: o.workers, report: () => undefined });
        printSummary(
          s,
          o.format,
          s.runs.map(
            (r) =>
              `${s.dryRun ? 'would write' : 'wrote'} run ${r.runId} (${r.file}: ${r.suite}, ${r.model}, ${r.samples} samples${r.rebuiltFromJournal ? ', rebuilt from the journal' : ''}): ${tableCounts(r.tables)}`,
          ),
          s.runs.map((r) => ({ dry_run: s.dryRun, run_id: r.runId, file: r.file, suite: r.suite, model: r.model, samples: r.samples, rebuilt_from_journal: !!r.rebuiltFromJournal, ...r.tables })),
        );
      }),
    );
  formatOption(storeOptions(inspect, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(inspect, 'standoff ingest inspect logs/', 'standoff ingest inspect logs/2026-08-10T15-02-57_task.eval --run-id o1-full --dry-run');
}

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** `512MB`, `1GiB`, `1048576` -> bytes. */
function parseByteSize(name: string) {
  return (value: string): number => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(value);
    const n = m ? Number(m[1]) * UNITS[(m[2] ?? '').toLowerCase()]! : NaN;
    if (!(n >= 1)) throw new InvalidArgumentError(`${name} must be a size such as 512MB or 1GiB, got "${value}"`);
    return Math.floor(n);
  };
}

function parsePositiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !(n > 0)) throw new InvalidArgumentError(`${name} must be a positive number, got "${value}"`);
    return n;
  };
}

function parseCount(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n > 64) throw new InvalidArgumentError(`${name} must be a whole number from 0 to 64, got "${value}"`);
    return n;
  };
}
