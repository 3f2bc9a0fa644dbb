/**
 * `standoff ingest csv`: per-sample CSVs or aggregate results tables into the trace store
 * (`src/ingest/ingest-csv.ts`; the mapping format is docs/ingest-csv.md).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { action, collect, usageError, withExamples } from '../../program.ts';
import { delimiterOption, formatOption, storeOptions } from '../../options.ts';
import { printSummary } from '../../output.ts';
import type { Format } from '../../../store/format.ts';
import { terminalLine } from '../../../escape.ts';
import type { MappingFlags } from '../../../ingest/csv/mapping.ts';
import { tableCounts } from './table-counts.ts';

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

export function registerIngestCsv(ingest: Command): void {
  const csv = ingest
    .command('csv')
    .description('ingest per-sample CSVs (episodes, judgments or probe answers) or aggregate results tables (subject, metric, successes, trials)')
    .argument('<files...>', 'CSV files (UTF-8; a BOM and CRLF line endings are fine)')
    .option('--map <file>', 'mapping file (JSON; see docs/ingest-csv.md) for every file, a manifest of one mapping per file, or FILE=MAP.json for one file (repeatable); without it, columns are detected and the mapping is printed', (v: string, prev: string[] = []) => [...prev, v])
    .option('--subject <col>', 'the column naming the model under evaluation (episodes.subject_model)', once('--subject'))
    .option('--item <col>', 'the column naming the item / sample (episodes.scenario_id)', once('--item'))
    .option('--epoch <col>', 'the epoch column', once('--epoch'))
    .option('--scores <cols>', 'score columns (comma-separated); each gives score rows whose scorer is the column name', collect)
    .option('--judge-columns <cols>', "wide judge columns (comma-separated); each gives one judge's judgments (judge_model = the column name)", collect)
    .option('--judged-scorer <name>', 'the scorer the judge columns grade', once('--judged-scorer'))
    .option('--wide', 'one column per subject (model): melt the --subjects-from-columns columns into long rows, one episode per (item, column)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column but --item (and --epoch)", collect)
    .option('--scorer <name>', 'with --wide: the scorer the values are scores of (default: score)', once('--scorer'))
    .option('--delimiter <c>', "the field delimiter: ',' ';' '|' or tab (default: detected by DuckDB's sniffer, printed after the ingest)", delimiterOption)
    .option('--probes', "long paired-probe files: one row per subject, state and probe with the answer, the gold answer and, for probe_decisions, the decision and the gold actions ('|'-separated); names recognised or mapped (docs/ingest-csv.md)")
    .option('--run-id <id>', 'run id (default: csv-<time>-<hash>)', once('--run-id'))
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace an existing run with the same id')
    .action(action(ingestCsvAction));
  formatOption(storeOptions(csv, { runs: false })); // the shared options (src/cli/options.ts)
  withExamples(
    csv,
    'standoff ingest csv results.csv --map map.json --run-id vendor-a',
    'standoff ingest csv probes.csv --probes --item state   # long paired-probe file; then standoff probes',
    'standoff ingest csv results.csv --subject model --item sample_id --epoch epoch --scores correct,quality --judge-columns judge_a,judge_b,judge_c --judged-scorer quality',
    'standoff ingest csv results.csv judges.csv --map results.csv=results.map.json --map judges.csv=judges.map.json',
    'standoff ingest csv published-table.csv            # subject,metric,successes,trials -> aggregates',
    'standoff ingest csv results.csv --dry-run',
    "standoff ingest csv export.csv --delimiter ';'            # European Excel; detected anyway, printed after the ingest",
    'standoff ingest csv sheet.csv --wide --item "Question ID" --subjects-from-columns \'*\' --scorer correct',
    'standoff ingest csv wide.csv --wide --item question_id --subjects-from-columns gpt-4o,claude,llama --scorer correct',
  );
}

/** The action of `ingest csv`: parse the map and flag options, call `ingestCsv`, print the summary. */
async function ingestCsvAction(
  files: string[],
  o: MappingFlags & {
    map?: string[];
    delimiter?: string;
    wide?: boolean;
    subjectsFromColumns?: string[];
    scorer?: string;
    runId?: string;
    traces: string;
    dryRun?: boolean;
    replace?: boolean;
    format: Format;
  },
): Promise<void> {
  const { ingestCsv } = await import('../../../ingest/ingest-csv.ts');
  const maps = parseMaps(o.map);
  const flags = { subject: o.subject, item: o.item, epoch: o.epoch, scores: o.scores, judgeColumns: o.judgeColumns, judgedScorer: o.judgedScorer, probes: o.probes };
  if (!o.wide && (o.subjectsFromColumns || o.scorer)) throw usageError('ingest.missingArg', '--subjects-from-columns and --scorer go with --wide');
  if (o.wide && !o.subjectsFromColumns) throw usageError('ingest.missingArg', "--wide needs --subjects-from-columns COLS (or '*' for every column but --item)");
  const cols = o.subjectsFromColumns ?? [];
  const wide = o.wide ? { subjects: cols.length === 1 && cols[0] === '*' ? ('*' as const) : cols, scorer: o.scorer } : undefined;
  const s = await ingestCsv(files, { traces: o.traces, map: maps.all, maps: maps.perFile, flags, runId: o.runId, dryRun: o.dryRun, replace: o.replace, delimiter: o.delimiter, wide });
  const detected = s.files.some((f) => f.detected);
  const dialects = [...new Set(s.files.map((f) => f.dialect))];
  if (detected && o.format !== 'json') process.stderr.write(`standoff: ${o.map ? 'some files have no map' : 'no --map given'}; read as ${terminalLine(dialects.join(' / '))}; mapping used: ${terminalLine(s.mappingJson)}\n`);
  const extra = (f: (typeof s.files)[number]) =>
    [
      f.dialect,
      ...f.notes,
      f.metadataColumns.length ? `metadata: ${f.metadataColumns.join(', ')}` : '',
      f.ignoredColumns.length ? `ignored columns: ${f.ignoredColumns.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
  printSummary(
    s,
    o.format,
    [
      `${s.dryRun ? 'would write' : 'wrote'} run ${s.runId} to ${s.store}: ${tableCounts(s.tables)}`,
      ...s.files.map((f) => `  ${f.file}: ${f.rows} rows -> ${f.table}${extra(f) ? ` (${extra(f)})` : ''}`),
    ],
    s.files.map((f) => ({ run_id: s.runId, dry_run: s.dryRun, file: f.file, table: f.table, rows: f.rows, dialect: f.dialect, index_column: f.indexColumn, metadata_columns: f.metadataColumns, ignored_columns: f.ignoredColumns })),
  );
}
