import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_TRACES, action, collect, usageError, withExamples } from '../program.ts';

/** An option that may be given once: a second value would silently override the first. */
const once = (flag: string) => (value: string, previous: string | undefined) => {
  if (previous !== undefined) throw new InvalidArgumentError(`${flag} given twice ("${previous}" and "${value}"); give it once`);
  return value;
};

/** `--map MAP.json` (every file, or a manifest), or `--map FILE=MAP.json` (one file). */
interface MapArgs {
  all?: string;
  perFile: Record<string, string>;
}
function parseMaps(values: string[] | undefined): MapArgs {
  const out: MapArgs = { perFile: {} };
  for (const v of values ?? []) {
    const eq = v.indexOf('=');
    if (eq > 0 && !/\.json$/i.test(v.slice(0, eq))) {
      const file = v.slice(0, eq);
      if (out.perFile[file] !== undefined) throw usageError('ingest.mapTwice', `--map ${file}=... given twice; give one map per file`);
      out.perFile[file] = v.slice(eq + 1);
    } else {
      if (out.all !== undefined) throw usageError('ingest.mapTwice', `--map given twice (${out.all} and ${v}): one map for every file, or FILE=MAP.json per file, or a manifest`);
      out.all = v;
    }
  }
  return out;
}

/** Prints a summary as JSON on stdout, or a few readable lines on stderr-free stdout. */
function printSummary(summary: unknown, json: boolean, lines: string[]): void {
  process.stdout.write(json ? JSON.stringify(summary, null, 2) + '\n' : lines.join('\n') + '\n');
}

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
    .option('--map <file>', 'mapping file (JSON; see docs/ingest-csv.md) for every file, a manifest of one mapping per file, or FILE=MAP.json for one file (repeatable); without it, columns are detected and the mapping is printed', (v: string, prev: string[] = []) => [...prev, v])
    .option('--subject <col>', 'the column naming the model under evaluation (episodes.subject_model)', once('--subject'))
    .option('--item <col>', 'the column naming the item / sample (episodes.scenario_id)', once('--item'))
    .option('--epoch <col>', 'the epoch column', once('--epoch'))
    .option('--scores <cols>', 'score columns (comma-separated); each gives score rows whose scorer is the column name', collect)
    .option('--judge-columns <cols>', 'wide judge columns (comma-separated); each gives one judge\'s judgments (judge_model = the column name)', collect)
    .option('--judged-scorer <name>', 'the scorer the judge columns grade', once('--judged-scorer'))
    .option('--run-id <id>', 'run id (default: csv-<time>-<hash>)', once('--run-id'))
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace an existing run with the same id')
    .option('--json', 'print the summary as JSON')
    .action(
      action(
        async (
          files: string[],
          o: {
            map?: string[];
            subject?: string;
            item?: string;
            epoch?: string;
            scores?: string[];
            judgeColumns?: string[];
            judgedScorer?: string;
            runId?: string;
            traces: string;
            dryRun?: boolean;
            replace?: boolean;
            json?: boolean;
          },
        ) => {
          const { ingestCsv } = await import('../../ingest/ingest-csv.ts');
          const maps = parseMaps(o.map);
          const flags = { subject: o.subject, item: o.item, epoch: o.epoch, scores: o.scores, judgeColumns: o.judgeColumns, judgedScorer: o.judgedScorer };
          const s = await ingestCsv(files, { traces: o.traces, map: maps.all, maps: maps.perFile, flags, runId: o.runId, dryRun: o.dryRun, replace: o.replace });
          const detected = s.files.some((f) => f.detected);
          if (detected && !o.json) process.stderr.write(`standoff: ${o.map ? 'some files have no map' : 'no --map given'}; mapping used: ${s.mappingJson}\n`);
          const extra = (f: (typeof s.files)[number]) =>
            [f.metadataColumns.length ? `metadata: ${f.metadataColumns.join(', ')}` : '', f.ignoredColumns.length ? `ignored columns: ${f.ignoredColumns.join(', ')}` : ''].filter(Boolean).join('; ');
          printSummary(s, !!o.json, [
            `${s.dryRun ? 'would write' : 'wrote'} run ${s.runId} to ${s.store}: ${counts(s.tables)}`,
            ...s.files.map((f) => `  ${f.file}: ${f.rows} rows -> ${f.table}${extra(f) ? ` (${extra(f)})` : ''}`),
          ]);
        },
      ),
    );
  withExamples(
    csv,
    'standoff ingest csv results.csv --map map.json --run-id vendor-a',
    'standoff ingest csv results.csv --subject model --item sample_id --epoch epoch --scores correct,quality --judge-columns judge_a,judge_b,judge_c --judged-scorer quality',
    'standoff ingest csv results.csv judges.csv --map results.csv=results.map.json --map judges.csv=judges.map.json',
    'standoff ingest csv published-table.csv            # subject,metric,successes,trials -> aggregates',
    'standoff ingest csv results.csv --dry-run',
  );

  const inspect = ingest
    .command('inspect')
    .description('ingest Inspect AI logs (.eval archives, including crashed journal-only ones, and .json logs); one run per log')
    .argument('<paths...>', 'log files or directories')
    .option('--run-id <id>', 'run id (only with a single log; default: inspect-<eval run id>-<hash>)')
    .option('--traces <dir>', 'trace store directory', DEFAULT_TRACES)
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace runs that already exist')
    .option('--json', 'print the summary as JSON')
    .action(
      action(async (paths: string[], o: { runId?: string; traces: string; dryRun?: boolean; replace?: boolean; json?: boolean }) => {
        const { ingestInspect } = await import('../../ingest/ingest-inspect.ts');
        const s = await ingestInspect(paths, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, report: () => undefined });
        printSummary(
          s,
          !!o.json,
          s.runs.map(
            (r) =>
              `${s.dryRun ? 'would write' : 'wrote'} run ${r.runId} (${r.file}: ${r.suite}, ${r.model}, ${r.samples} samples${r.rebuiltFromJournal ? ', rebuilt from the journal' : ''}): ${counts(r.tables)}`,
          ),
        );
      }),
    );
  withExamples(inspect, 'standoff ingest inspect logs/', 'standoff ingest inspect logs/2026-08-10T15-02-57_task.eval --run-id o1-full --dry-run');
}
