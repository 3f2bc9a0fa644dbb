/**
 * One error class for the whole toolkit. Every failure a user can cause carries a stable code
 * (`area.problem`) and maps to a documented exit code:
 *
 * | exit | meaning |
 * | ---- | ------- |
 * | 1    | internal error (a bug: please report it) |
 * | 2    | usage or configuration (bad flag, bad config file) |
 * | 3    | data (bad input file, row or value; a statistic on invalid data) |
 * | 4    | store or I/O (missing store, unreadable or corrupt Parquet, unwritable output) |
 * | 5    | endpoint: a model endpoint failed (the endpoint check before a run, `--max-errors` reached, or episodes that ended in error) |
 * | 6    | `standoff compare --fail-on`: the condition holds (a detected regression, or not shown non-inferior) |
 * | 130  | interrupted (SIGINT) |
 *
 * Messages are lower-case, one line, and name the file, row, column or argument at fault.
 */
export type ExitKind = 'usage' | 'data' | 'store' | 'endpoint' | 'interrupted' | 'internal';

export const EXIT_CODES: Record<ExitKind, number> = {
  internal: 1,
  usage: 2,
  data: 3,
  store: 4,
  endpoint: 5,
  interrupted: 130,
};

/**
 * `standoff compare --fail-on worse|any` exits with this when the condition holds: not an error
 * (the comparison ran and printed), so it is no ExitKind; distinct from 2/3/4/5/130 so CI can
 * tell a detected regression from a broken gate.
 */
export const EXIT_FAIL_ON = 6;

export class StandoffError extends Error {
  readonly code: string;
  readonly kind: ExitKind;
  constructor(code: string, kind: ExitKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StandoffError';
    this.code = code;
    this.kind = kind;
  }
  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}

/** Shorthands, so call sites read as `throw dataError('ingest.missingColumn', '...')`. */
export const usageError = (code: string, message: string, cause?: unknown) =>
  new StandoffError(code, 'usage', message, { cause });
export const dataError = (code: string, message: string, cause?: unknown) =>
  new StandoffError(code, 'data', message, { cause });
export const storeError = (code: string, message: string, cause?: unknown) =>
  new StandoffError(code, 'store', message, { cause });
export const endpointError = (code: string, message: string, cause?: unknown) =>
  new StandoffError(code, 'endpoint', message, { cause });

/** Collapses any message to one line (DuckDB messages span several). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}
