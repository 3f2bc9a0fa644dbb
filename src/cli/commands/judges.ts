/**
 * `standoff judges`: the median of judges per sample with self-exclusion. Over the store the
 * totals come from verdict patterns and the per-sample rows are streamed (`src/analysis/judge-medians.ts`);
 * with `--input` a file's judgments are read whole (`src/analysis/ci.ts`).
 */
import { Option, type Command } from 'commander';
import { action, withExamples } from '../program.ts';
import { delimiterOption, INPUT_DELIMITER_HELP, missingOption, statsOptions, type InputShape, type Missing, type StatsCommon } from '../options.ts';
import { printEncoded, printResult, printText } from '../output.ts';
import { SELF_EXCLUSION_DEFAULT } from '../../stats/judge-panel.ts';
import { csvCell, DEFAULT_MAX_ROWS, encoderFor, type Encoder, type Format } from '../../store/format.ts';
import type { JudgeMedians, JudgeSampleRow } from '../../analysis/judge-medians.ts';

type JudgesOptions = StatsCommon & InputShape & { scorer: string; excludeBy: 'model' | 'family' | 'none'; input?: string; totals?: boolean; missing: Missing };

const SAMPLE_COLUMNS = ['sample', 'subject_model', 'median', 'judges_used', 'judges_excluded'];
/** The table, like `standoff sql`'s, shows the first rows and counts the rest; csv, json and markdown have every sample. */
const TABLE_ROWS = DEFAULT_MAX_ROWS;

export function registerJudges(program: Command): void {
  const judges = statsOptions(program.command('judges').description('median of judges per sample with self-exclusion (judge of the subject\'s own model or family dropped)'), { random: false })
    .option('--scorer <name>', 'model-graded scorer', 'reasoning_action_alignment')
    .addOption(new Option('--exclude-by <what>', 'drop judges sharing the subject\'s model, family, or none').choices(['model', 'family', 'none']).default(SELF_EXCLUSION_DEFAULT))
    .option('--input <file>', 'a CSV or Parquet file with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family)')
    .option('--totals', 'print only the totals (not one row per sample)')
    .addOption(missingOption())
    .option('--delimiter <c>', INPUT_DELIMITER_HELP, delimiterOption)
    .action(
      action(async (o: JudgesOptions) => {
        if (o.input) return printJudgesFromInput(o);
        const { withJudgeMedians } = await import('../../analysis/judge-medians.ts');
        await withJudgeMedians({ traces: o.traces, runs: o.run }, { scorer: o.scorer, excludeBy: o.excludeBy }, (m) => printJudgeMedians(m, o.format, o.totals === true));
      }),
    );
  withExamples(judges, 'standoff judges', 'standoff judges --exclude-by model --totals', 'standoff judges --format csv > medians.csv', 'standoff judges --input verdicts.csv --format json');
}

async function printJudgesFromInput(o: JudgesOptions): Promise<void> {
  const { judgesFromInput } = await import('../../analysis/ci.ts');
  const r = await judgesFromInput(o.input!, { excludeBy: o.excludeBy, missing: o.missing, delimiter: o.delimiter });
  if (o.format === 'json') return printResult(o.totals ? { scorer: null, exclude_by: r.exclude_by, totals: r.totals } : r, 'json');
  const totals = () => printResult({ scorer: null, exclude_by: r.exclude_by, ...r.totals }, o.format);
  if (o.totals) return totals();
  printResult(r.samples, o.format, SAMPLE_COLUMNS);
  // csv holds one table: the per-sample rows (the totals are --totals, or in --format json).
  if (o.format === 'csv') return;
  printText('\n');
  totals();
}

/** JSON of a judge list; a sample's lists are its verdict pattern's (shared by every sample with that pattern), so each is written once. */
const listJson = new WeakMap<string[], string>();
const jsonOf = (list: string[]): string => {
  let s = listJson.get(list);
  if (s === undefined) listJson.set(list, (s = JSON.stringify(list)));
  return s;
};
const flat = (s: JudgeSampleRow) => ({ ...s, judges_used: jsonOf(s.judges_used), judges_excluded: jsonOf(s.judges_excluded), judges_missing: jsonOf(s.judges_missing) });

/**
 * The store's medians: what `printResult` printed for the whole result, written a chunk of samples
 * at a time (the same bytes for csv, json and markdown; the table shows its first rows).
 */
async function printJudgeMedians(m: JudgeMedians, format: Format, totalsOnly: boolean): Promise<void> {
  const { scorer, exclude_by, totals } = m;
  if (format === 'json' && totalsOnly) return printResult({ scorer, exclude_by, totals }, 'json');
  const totalsTable = () => printResult({ scorer, exclude_by, ...totals }, format);
  if (totalsOnly) return totalsTable();
  if (format === 'json') return printJudgeMediansJson(m);
  const medians = totals.samples_with_no_judge < totals.samples;
  const enc = encoderFor(format, SAMPLE_COLUMNS, { maxRows: TABLE_ROWS, numeric: SAMPLE_COLUMNS.map((c) => c === 'median' && medians) });
  let n = 0;
  await printEncoded(enc.head());
  // The table shows its first rows and the count: only those are read (the count is the totals' samples, counted from the same per-sample rows).
  const shown = format === 'table' ? TABLE_ROWS : Infinity;
  const encode = format === 'csv' ? csvByPattern(enc) : (rows: JudgeSampleRow[]) => enc.rows(rows.map(flat));
  await m.forEachSample(async (rows) => {
    n += rows.length;
    await printEncoded(encode(rows));
  }, shown);
  await printEncoded(enc.tail(format === 'table' ? totals.samples : n));
  // csv holds one table: the per-sample rows (the totals are --totals, or in --format json).
  if (format === 'csv') return;
  printText('\n');
  totalsTable();
}

/**
 * CSV rows as `enc` (the csv encoder) writes them, faster: every field after `sample` is the
 * sample's verdict pattern's (subject, median, judge lists: one `judges_used` list per pattern), so
 * they are encoded once per pattern and only the sample is encoded per row.
 */
function csvByPattern(enc: Encoder): (rows: JudgeSampleRow[]) => string {
  const rest = new WeakMap<string[], string>();
  return (rows) => {
    let out = '';
    for (const r of rows) {
      let tail = rest.get(r.judges_used);
      if (tail === undefined) rest.set(r.judges_used, (tail = enc.rows([flat({ ...r, sample: '' })])));
      out += csvCell(r.sample) + tail;
    }
    return out;
  };
}

/** `JSON.stringify({scorer, samples, totals, exclude_by}, null, 2)`, the samples written a chunk at a time. */
async function printJudgeMediansJson(m: JudgeMedians): Promise<void> {
  const indent = (json: string, pad: string) => json.replace(/\n/g, `\n${pad}`);
  let first = true;
  await printEncoded(`{\n  "scorer": ${JSON.stringify(m.scorer)},\n  "samples": [`, true);
  // Every field after `sample` is the sample's verdict pattern's (one `judges_used` list per pattern): written once per pattern.
  const rest = new WeakMap<string[], string>();
  const head = '{\n      "sample": ';
  await m.forEachSample(async (rows) => {
    let out = '';
    for (const s of rows) {
      let tail = rest.get(s.judges_used);
      if (tail === undefined) rest.set(s.judges_used, (tail = indent(JSON.stringify({ ...s, sample: '' }, null, 2), '    ').slice(head.length + 2)));
      out += `${first ? '\n' : ',\n'}    ${head}${JSON.stringify(s.sample)}${tail}`;
      first = false;
    }
    await printEncoded(out, true);
  });
  await printEncoded(`${first ? '' : '\n  '}],\n  "totals": ${indent(JSON.stringify(m.totals, null, 2), '  ')},\n  "exclude_by": ${JSON.stringify(m.exclude_by)}\n}\n`, true);
}
