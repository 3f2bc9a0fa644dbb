import { InvalidArgumentError, type Command } from 'commander';
import { action, collect, usageError, withExamples } from '../program.ts';
import { delimiterOption, formatOption, storeOptions } from '../options.ts';
import { printSummary, printTable, printText } from '../output.ts';
import type { Format } from '../../store/format.ts';
import { terminalLine } from '../../escape.ts';

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
    'standoff ingest lm-eval out/',
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
            delimiter?: string;
            wide?: boolean;
            subjectsFromColumns?: string[];
            scorer?: string;
            probes?: boolean;
            runId?: string;
            traces: string;
            dryRun?: boolean;
            replace?: boolean;
            format: Format;
          },
        ) => {
          const { ingestCsv } = await import('../../ingest/ingest-csv.ts');
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
              `${s.dryRun ? 'would write' : 'wrote'} run ${s.runId} to ${s.store}: ${counts(s.tables)}`,
              ...s.files.map((f) => `  ${f.file}: ${f.rows} rows -> ${f.table}${extra(f) ? ` (${extra(f)})` : ''}`),
            ],
            s.files.map((f) => ({ run_id: s.runId, dry_run: s.dryRun, file: f.file, table: f.table, rows: f.rows, dialect: f.dialect, index_column: f.indexColumn, metadata_columns: f.metadataColumns, ignored_columns: f.ignoredColumns })),
          );
        },
      ),
    );
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

  const inspect = ingest
    .command('inspect')
    .description('ingest Inspect AI logs (.eval archives, including crashed journal-only ones, and .json logs); one run per log')
    .argument('<paths...>', 'log files or directories')
    .option('--run-id <id>', 'run id (only with a single log; default: inspect-<eval run id>-<hash>)')
    .option('--dry-run', 'validate and print what would be written; write nothing')
    .option('--replace', 'replace runs that already exist')
    .option('--max-member-size <size>', 'largest a .eval member may inflate to, e.g. 512MB or 1GiB (default 256MiB; zip-bomb guard)', parseByteSize('--max-member-size'))
    .option('--max-ratio <n>', 'largest inflated/compressed ratio of a .eval member over 1 MiB (default 1000; zip-bomb guard)', parsePositiveNumber('--max-ratio'))
    .action(
      action(async (paths: string[], o: { runId?: string; traces: string; dryRun?: boolean; replace?: boolean; format: Format; maxMemberSize?: number; maxRatio?: number }) => {
        const { ingestInspect } = await import('../../ingest/ingest-inspect.ts');
        const { DEFAULT_ZIP_LIMITS } = await import('../../ingest/inspect/zip.ts');
        const zipLimits = { maxMemberBytes: o.maxMemberSize ?? DEFAULT_ZIP_LIMITS.maxMemberBytes, maxRatio: o.maxRatio ?? DEFAULT_ZIP_LIMITS.maxRatio };
        const s = await ingestInspect(paths, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, zipLimits, report: () => undefined });
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
        const { ingestLmEval } = await import('../../ingest/ingest-lm-eval.ts');
        const { reconciliationTable } = await import('../../ingest/lm-eval/reconcile.ts');
        const { formatResult } = await import('../../store/format.ts');
        const s = await ingestLmEval(dir, { traces: o.traces, runId: o.runId, dryRun: o.dryRun, replace: o.replace, report: () => undefined });
        const format = o.format;
        const runLines = s.runs.map(
          (r) =>
            terminalLine(`${s.dryRun ? 'would write' : 'wrote'} run ${r.runId} (${r.task}, ${r.model}, ${r.docs} document${r.docs === 1 ? '' : 's'}, scorers ${r.scorers.join(', ') || 'none'}): ${counts(r.tables)}`),
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
