/**
 * A notebook's `standoff` block runs through the CLI itself: its words are parsed by the same
 * commander definitions as `standoff <words>` on the command line (a fresh program from the
 * factory the caller hands to {@link standoffBlockRunner}: `buildProgram` in src/cli/main.ts,
 * passed down through `registerReport`, so this file does not import main), and the command's own action runs with a result sink that collects its
 * tables instead of printing them. There is no second parser: every option a command gains is
 * available in notebooks, with the same names, defaults, checks and "did you mean".
 *
 * What a block may run: {@link NOTEBOOK_COMMANDS}. The notebook decides the store (`--traces`),
 * the runs (`--run`) and the output (`--format`, `--json`: Markdown tables); a block that names
 * them is refused, and so is `--input` (a notebook reads only its store). Every other option that
 * names a file or directory (its argument is `<file>`, `<dir>` or `<path>`: `--metric-sql`, and any
 * such option a command gains later) must name one inside the notebook's store: it is resolved
 * against the store, symlinks followed, and refused when it ends up elsewhere. `--seed`,
 * `--resamples` and `--level` default to the notebook's (`standoff notebook run --seed ...`); a
 * block may set them.
 */
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { CommanderError, type Command } from 'commander';
import { oneLine, usageError } from '../errors.ts';
import type { StandoffBlockContext, StandoffBlockOutput } from '../notebook/notebook.ts';
import { withSink, type ResultSink } from './output.ts';
import { usageLine } from './program.ts';

/** The commands a `standoff` block may run. */
export const NOTEBOOK_COMMANDS = ['ci exact', 'ci bootstrap', 'ci paired', 'agreement', 'judges', 'probes', 'compare', 'rank', 'plan'] as const;

/** Options the notebook decides, and why a block may not give them. */
export const NOTEBOOK_OWNED_OPTIONS: Readonly<Record<string, string>> = {
  traces: "the notebook's store is used (standoff notebook run --traces DIR)",
  run: "the notebook's runs are used (standoff notebook run --run ID)",
  format: 'a block prints Markdown tables',
  json: 'a block prints Markdown tables',
  input: 'a notebook reads only its store: ingest the file first (standoff ingest csv FILE --traces DIR), or run the command with --input outside the notebook',
  baselineTraces: 'a notebook reads only its store (compare two stores outside the notebook)',
  preferences: 'a notebook reads only its store (run rank --preferences outside the notebook)',
  out: 'a block writes no files (plan --out: run it outside the notebook)',
};

/** Finds the command a block's words name (the longest path of subcommand names). */
function findCommand(program: Command, words: string[]): { cmd: Command; path: string } {
  let cmd = program;
  const path: string[] = [];
  for (const w of words) {
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!sub) break;
    cmd = sub;
    path.push(sub.name());
  }
  return { cmd, path: path.join(' ') };
}

/** An option whose argument is a file system path (`<file>`, `<dir>`, `<path>`, plural too). */
const PATH_ARGUMENT = /<(?:file|dir|path)s?(?:\.\.\.)?>|\[(?:file|dir|path)s?(?:\.\.\.)?\]/;

/** The real path of `p`, or of its deepest existing parent joined with the rest (a file not yet there). */
function realPathOf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : resolve(realPathOf(parent), relative(parent, p));
  }
}

/**
 * The notebook path rule: every path option a block gave (not one the notebook owns) must name a
 * file inside `store`. Relative paths are the store's; each value is replaced by its absolute path.
 * The message names the option and the path, never the file's content.
 */
export function confineBlockPaths(cmd: Command, store: string, where: string): void {
  const root = realPathOf(resolve(store));
  for (const opt of cmd.options) {
    const key = opt.attributeName();
    if (!PATH_ARGUMENT.test(opt.flags) || Object.hasOwn(NOTEBOOK_OWNED_OPTIONS, key) || cmd.getOptionValueSource(key) !== 'cli') continue;
    const value = cmd.getOptionValue(key) as string | string[];
    const confined = (Array.isArray(value) ? value : [value]).map((v) => {
      const abs = isAbsolute(v) ? v : resolve(store, v);
      const rel = relative(root, realPathOf(abs));
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
        throw usageError('notebook.pathOutsideStore', `${where}: --${opt.long?.replace(/^--/, '') ?? key} ${oneLine(v).slice(0, 120)} is outside the notebook's store; a notebook reads only files of its store (put a SQL metric in <store>/metrics/)`);
      }
      return abs;
    });
    cmd.setOptionValueWithSource(key, Array.isArray(value) ? confined : confined[0], 'cli');
  }
}

const hasOption = (cmd: Command, key: string) => cmd.options.some((o) => o.attributeName() === key);

/** Builds the whole command tree with commander's own output redirected (`buildProgram` in src/cli/main.ts). */
export type ProgramFactory = (output: { writeOut?: (s: string) => void; writeErr?: (s: string) => void }) => Command;

/**
 * The notebook's `standoff` block runner over the program `makeProgram` builds: see the module
 * comment. Errors are StandoffErrors naming the block's position.
 *
 * @example
 * import { buildProgram } from './main.ts';
 * const runStandoffBlock = standoffBlockRunner(buildProgram);
 */
export function standoffBlockRunner(makeProgram: ProgramFactory): (words: string[], ctx: StandoffBlockContext) => Promise<StandoffBlockOutput> {
  return (words, ctx) => runStandoffBlock(makeProgram, words, ctx);
}

async function runStandoffBlock(makeProgram: ProgramFactory, words: string[], ctx: StandoffBlockContext): Promise<StandoffBlockOutput> {
  // Commander's own output (help, usage errors) is dropped: its error comes back as a CommanderError.
  const program = makeProgram({ writeOut: () => undefined, writeErr: () => undefined });
  const { cmd, path } = findCommand(program, words);
  if (!(NOTEBOOK_COMMANDS as readonly string[]).includes(path)) {
    throw usageError('notebook.badCommand', `${ctx.where}: unsupported standoff block "${oneLine(words.join(' ')).slice(0, 80)}"; a block runs one of: ${NOTEBOOK_COMMANDS.join(', ')}`);
  }
  cmd.hook('preAction', (_hooked, actionCmd) => {
    for (const [key, why] of Object.entries(NOTEBOOK_OWNED_OPTIONS)) {
      if (actionCmd.getOptionValueSource(key) === 'cli') throw usageError('notebook.badCommand', `${ctx.where}: --${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is not allowed in a standoff block: ${why}`);
    }
    confineBlockPaths(actionCmd, ctx.traces, ctx.where);
    const set = (key: string, value: unknown, onlyDefault: boolean) => {
      if (!hasOption(actionCmd, key) || (onlyDefault && actionCmd.getOptionValueSource(key) === 'cli')) return;
      actionCmd.setOptionValueWithSource(key, value, 'config');
    };
    set('traces', ctx.traces, false);
    set('run', ctx.runs, false);
    set('format', 'markdown', false);
    set('seed', ctx.seed, true);
    set('resamples', ctx.resamples, true);
    set('level', ctx.level, true);
  });
  const output: StandoffBlockOutput = [];
  const sink: ResultSink = {
    rethrow: true,
    table: (table) => output.push({ table }),
    text: (text) => {
      if (text.trim()) output.push({ text: text.trimEnd() + '\n' });
    },
    markdown: (markdown) => {
      if (markdown.trim()) output.push({ markdown: markdown.trimEnd() + '\n' });
    },
  };
  try {
    await withSink(sink, () => program.parseAsync(words, { from: 'user' }));
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    throw usageError('notebook.badCommand', `${ctx.where}: ${err.exitCode === 0 ? 'a standoff block must run a command, not print help or the version' : usageLine(err.message)}`);
  }
  return output;
}
