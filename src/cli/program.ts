/**
 * CLI plumbing shared by every command: the error handler (one line on stderr, documented exit
 * code), option parsers, and output helpers. Actions parse options, call one library function,
 * print. Data goes to stdout, diagnostics to stderr.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { StandoffError, EXIT_CODES, oneLine, usageError } from '../errors.ts';
import { FORMATS, type Format } from '../store/format.ts';
import { currentSink } from './output.ts';
import { terminalLine } from '../escape.ts';
import { closestName } from '../did-you-mean.ts';
import { ANALYSIS_DB } from '../store/analysis-db.ts';

export const DEFAULT_TRACES = 'traces';

export function parseFormat(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`format must be one of ${FORMATS.join(', ')}, got "${value}"`);
  }
  return value as Format;
}

export function parseIntArg(name: string) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be an integer, got "${value}"`);
    return Number(value);
  };
}

export function parseNumberArg(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`${name} must be a number, got "${value}"`);
    return n;
  };
}

export const collect = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

/**
 * A commander error message as one line: its "(Did you mean --x?)" line, if any, joins the first
 * line; without one, the line points to --help.
 */
export function usageLine(message: string): string {
  const [first, ...rest] = message.trim().replace(/^error:\s*/, '').split('\n');
  const hint = /^\(Did you mean (.+)\?\)$/.exec(rest.join(' ').trim());
  return hint ? `${first} (did you mean ${hint[1]}?)` : `${first} (see --help)`;
}

/** Adds an example block to a command's --help. */
export function withExamples(cmd: Command, ...examples: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}

/** Operating-system error codes that are I/O trouble (exit 4), with what they mean. */
const SYSTEM_ERRORS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exceeded',
  EFBIG: 'a file is too large (a file-size limit?)',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'a directory is in the way of a file',
  ENOTDIR: 'a file is in the way of a directory',
  EEXIST: 'something is already in the way',
  ELOOP: 'a symlink loop',
  ENAMETOOLONG: 'a path is too long',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EIO: 'an input/output error',
};

/** One line for an operating-system error (`code` and `path` as node sets them), or DuckDB running out of its memory limit; else null. */
export function systemError(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException | null;
  if (typeof e?.message === 'string' && e.message.startsWith('Out of Memory Error')) {
    return oneLine(`DuckDB ran out of memory (the statistics commands hold it to ${ANALYSIS_DB.memoryLimit}, spilling to disk where it can): ${e.message.split(/\s*Possible solutions/)[0]}; read fewer runs with --run`);
  }
  const what = typeof e?.code === 'string' ? SYSTEM_ERRORS[e.code] : undefined;
  if (!what) return null;
  return oneLine(`${e!.path ? `${e!.path}: ` : ''}${what} (${e!.code}${e!.syscall ? ` on ${e!.syscall}` : ''})`);
}

/** Prints an error as one line and returns the exit code for it. */
export function reportError(err: unknown): number {
  if (err instanceof StandoffError) {
    // Errors that collect several problems (ingest) list each on its own line, then the summary.
    const list = (err as StandoffError & { errors?: unknown }).errors;
    if (Array.isArray(list) && list.length > 1) for (const line of list) process.stderr.write(`standoff: ${terminalLine(oneLine(String(line)))}\n`);
    process.stderr.write(`standoff: ${terminalLine(oneLine(err.message))}\n`);
    return err.exitCode;
  }
  const e = err as Error;
  // A backstop: an operating-system error that escaped its source (which should name the file) is
  // still a store / I/O error, exit 4, not a bug.
  const sys = systemError(err);
  if (sys) {
    process.stderr.write(`standoff: ${terminalLine(sys)}\n`);
    if (process.env.STANDOFF_DEBUG) process.stderr.write(`${e?.stack}\n`);
    return EXIT_CODES.store;
  }
  process.stderr.write(`standoff: internal error: ${terminalLine(oneLine(e?.message ?? String(err)))}\n`);
  if (process.env.STANDOFF_DEBUG) process.stderr.write(`${e?.stack}\n`);
  return EXIT_CODES.internal;
}

/**
 * Wraps an action so errors become one line on stderr and a documented exit code (or, when the
 * caller asked for it, e.g. a notebook block, propagate; see src/cli/output.ts).
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (currentSink().rethrow) throw err;
      process.exitCode = reportError(err);
    }
  };
}

/**
 * The usage error for a word that is none of `cmd`'s subcommands (a command that also has an
 * action of its own, such as `ci --list-metrics`, gets it as an argument): "unknown command
 * 'exct' for 'ci' (did you mean exact?)", as commander says for commands without an action.
 */
export function unknownSubcommand(cmd: Command, word: string) {
  const names = cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]);
  const near = closestName(word, names);
  return usageError('usage.unknownCommand', `unknown command '${word}' for '${cmd.name()}'${near ? ` (did you mean ${near}?)` : ` (commands: ${names.join(', ')})`}`);
}

export { usageError };
