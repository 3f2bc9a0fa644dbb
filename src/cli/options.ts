/**
 * The options every command spells the same way. A command adds them with these helpers, never
 * with its own `.option(...)` for the same flag:
 *
 * - {@link storeOptions}: `--traces DIR` (default `traces`) and `--run ID...`, on every command
 *   that reads or writes a store;
 * - {@link formatOption}: `-f, --format table|csv|json|markdown` on every command that prints
 *   results, plus `--json`, a hidden alias of `--format json`;
 * - {@link levelOption}: `--level P`, always the confidence level (the measurement level of
 *   `agreement` is `--measure`);
 * - {@link resamplingOptions}: `--seed N` and `--resamples N`.
 *
 * `tests/cli/dialect.test.ts` walks every command's `--help` and checks these.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { FORMATS, type Format } from '../store/format.ts';
import { MAX_RESAMPLES } from '../stats/index.ts';
import { DEFAULT_TRACES, collect, parseIntArg } from './program.ts';
import { parseDelimiter } from '../store/csv-dialect.ts';

export const DEFAULT_SEED = 20261129;
export const DEFAULT_RESAMPLES = 10000;
export const DEFAULT_LEVEL = 0.95;
export const MEASURES = ['nominal', 'ordinal', 'interval', 'ratio'] as const;

/** `--traces DIR` and, unless `runs: false`, `--run ID` (repeatable or comma-separated). */
export function storeOptions(cmd: Command, opts: { runs?: boolean | string } = {}): Command {
  cmd.option('--traces <dir>', 'trace store directory', DEFAULT_TRACES);
  if (opts.runs !== false) cmd.option('--run <id>', typeof opts.runs === 'string' ? opts.runs : 'only these runs (repeatable, or comma-separated)', collect);
  return cmd;
}

/** `-f, --format` (default `table`) and the hidden `--json` (= `--format json`). */
export function formatOption(cmd: Command, dflt: (typeof FORMATS)[number] = 'table'): Command {
  return cmd
    .addOption(new Option('-f, --format <format>', 'output format').choices(FORMATS).default(dflt))
    .addOption(new Option('--json', 'same as --format json').hideHelp())
    .hook('preAction', (self) => {
      // `self` is the command this option belongs to (the hook also runs before its subcommands' actions).
      if (!self.getOptionValue('json')) return;
      const format = self.getOptionValue('format');
      if (self.getOptionValueSource('format') === 'cli' && format !== 'json') {
        self.error(`error: --json is --format json; it cannot go with --format ${format}`, { exitCode: 2, code: 'standoff.jsonAndFormat' });
      }
      self.setOptionValueWithSource('format', 'json', 'implied');
    });
}

/** Parses `--level`: a confidence level; a measurement level gets a pointer to `--measure`. */
export function parseLevel(value: string): number {
  if ((MEASURES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`--level is the confidence level (e.g. 0.95); for the measurement level use --measure ${value}`);
  }
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`--level must be a number, got "${value}"`);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError(`--level must be strictly between 0 and 1 (e.g. 0.95), got ${value}`);
  return n;
}

/**
 * Parses `--resamples`: an integer from 1 to MAX_RESAMPLES (10,000,000), the one cap of every
 * command and notebook block (`1e4` is read as 10000).
 */
export function parseResamples(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_RESAMPLES) {
    throw new InvalidArgumentError(`--resamples must be an integer from 1 to ${MAX_RESAMPLES}, got ${JSON.stringify(value).slice(0, 40)}`);
  }
  return n;
}

/** `--level P`: the confidence level, strictly between 0 and 1 (default 0.95). */
export function levelOption(cmd: Command, description = 'confidence level, strictly between 0 and 1'): Command {
  return cmd.option('--level <p>', description, parseLevel, DEFAULT_LEVEL);
}

/** `--seed N` and `--resamples N` of the resampling procedures. */
export function resamplingOptions(cmd: Command, what = 'the resampling'): Command {
  return cmd
    .option('--seed <n>', `seed of ${what} (recorded in the output)`, parseIntArg('--seed'), DEFAULT_SEED)
    .option('--resamples <n>', `bootstrap resamples (1 to ${MAX_RESAMPLES})`, parseResamples, DEFAULT_RESAMPLES);
}

/** `--delimiter C` (see `parseDelimiter`): `,` `;` `|` or tab. */
export function delimiterOption(value: string, previous: string | undefined): string {
  if (previous !== undefined) throw new InvalidArgumentError('--delimiter given twice; give it once');
  const d = parseDelimiter(value);
  if (d === null) throw new InvalidArgumentError(`--delimiter must be one of ',' ';' '|' or tab (also: comma, semicolon, pipe), got ${JSON.stringify(value)}`);
  return d;
}

/** The shape options of an `--input` file: `--delimiter`, and `--wide` with `--subjects-from-columns`. */
export interface InputShape {
  delimiter?: string;
  wide?: boolean;
  subjectsFromColumns?: string[];
}

/*
 * The options of the statistics commands (`ci exact|bootstrap|paired`, `agreement`, `judges`,
 * `probes`), declared once here.
 */

/** What every statistics command's action receives from {@link statsOptions}. */
export interface StatsCommon {
  traces: string;
  run?: string[];
  format: Format;
  level: number;
  seed: number;
  resamples: number;
}

/** Store, format and confidence level, and (unless `random: false`) seed and resamples. */
export function statsOptions(cmd: Command, opts: { random?: boolean } = { random: true }): Command {
  storeOptions(cmd);
  formatOption(cmd);
  levelOption(cmd);
  if (opts.random) resamplingOptions(cmd);
  return cmd;
}

/** `--threads N`: threads of the general resampler (the result is the same for any N). */
export const threadsOption = () =>
  new Option('--threads <n>', 'threads for resampling (default: available cores, at most 8); the result is identical for any number').argParser(parseIntArg('--threads'));

/**
 * `--max-draws N`: the work bound of `ci bootstrap` and `ci paired` (resamples x units drawn;
 * default 200,000,000, `RESAMPLE_DRAWS` in src/analysis/ci-resample-bound.ts); `1e9` is read as
 * 1000000000.
 */
export const maxDrawsOption = () =>
  new Option('--max-draws <n>', 'work bound: above it (resamples x clusters drawn) fewer resamples run, at least 1,000, and the output gives their Monte-Carlo error (default 200000000; docs/scale.md)').argParser((value: string) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`--max-draws must be a positive integer, got ${JSON.stringify(value).slice(0, 40)}`);
    return n;
  });

export const MISSING = ['error', 'drop'] as const;
export type Missing = (typeof MISSING)[number];

/** `--missing`: what an empty cell of an --input file does. */
export const missingOption = () =>
  new Option('--missing <policy>', 'with --input: an empty cell in a column used is an error (error), or drops its row (drop)').choices(MISSING).default('error');

/** The help of `--delimiter` on a statistics command's --input file. */
export const INPUT_DELIMITER_HELP = "with --input: the CSV delimiter, ',' ';' '|' or tab (default: detected by DuckDB's sniffer)";

/** The --input file options of the statistics commands: `--missing`, `--delimiter`, `--wide`, `--subjects-from-columns`. */
export function inputFileOptions(cmd: Command): Command {
  return cmd
    .addOption(missingOption())
    .option('--delimiter <c>', INPUT_DELIMITER_HELP, delimiterOption)
    .option('--wide', 'with --input: one column per subject, melted into columns subject and value (use --value value, --by subject)')
    .option('--subjects-from-columns <cols>', "with --wide: the subject columns (comma-separated), or '*' for every column the command does not use otherwise", collect);
}

export const REDUCE = ['mean', 'median', 'mode', 'max', 'min', 'at_least_one'] as const;
export type Reduce = (typeof REDUCE)[number];

/** `--metric-sql FILE` and `--reduce R`: a SQL metric, and epochs reduced per item (over the store). */
export function metricOptions(cmd: Command): Command {
  return cmd
    .option('--metric-sql <file>', 'a metric defined as one SELECT in this file (columns run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, value; read-only, as standoff sql); named after the file, and the metric when --metric is not given')
    .addOption(new Option('--reduce <reducer>', 'reduce epochs to one value per item (run x subject x scenario) before intervals, as Inspect does; default: no reduction, clustered by item').choices(REDUCE));
}
