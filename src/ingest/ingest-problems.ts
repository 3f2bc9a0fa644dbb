/** The one error a multi-file ingest with problems throws (`ingest inspect`, `ingest lm-eval`). */
import { StandoffError } from '../errors.ts';

/**
 * The error an ingest with problems throws (exit 3): `problems` holds every collected problem,
 * `errors` their one-line messages; `message` is the problem itself when there is one, else a
 * summary naming the first. Its code is the first problem's code.
 */
export class IngestProblems extends StandoffError {
  readonly problems: StandoffError[];
  readonly errors: string[];
  constructor(problems: StandoffError[], truncated: boolean) {
    const first = problems[0]!;
    const files = new Set(problems.map((p) => p.message.split(': ')[0]));
    const n = problems.length;
    const count = truncated ? `${n}+ problems (stopped after ${n})` : `${n} problems`;
    const message =
      n === 1 && !truncated
        ? first.message
        : `${count} in ${files.size} input file${files.size === 1 ? '' : 's'}; nothing was written; first: ${first.message}`;
    super(first.code, 'data', message);
    this.problems = problems;
    this.errors = problems.map((p) => p.message);
  }
}
