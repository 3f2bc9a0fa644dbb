/**
 * `standoff ci exact` from counts: one pair (`--successes K --trials N`), or every row of a CSV /
 * Parquet file with `successes` and `trials` columns (other columns are kept as the row's group,
 * e.g. a published results table of subject, metric, successes, trials).
 */
import { clopperPearson, type BinomialInterval, type Sided } from '../stats/clopper-pearson.ts';
import { dataError } from '../errors.ts';

/** Documented key order: counts, estimate, interval, then how it was computed. */
export function orderedInterval(ci: BinomialInterval): BinomialInterval {
  const { successes, trials, estimate, lower, upper, level, method, sided } = ci;
  return { successes, trials, estimate, lower, upper, level, method, sided };
}

export function ciExactCounts(opts: { successes: number; trials: number; level?: number; sided?: Sided }): BinomialInterval {
  return orderedInterval(clopperPearson(opts.successes, opts.trials, { level: opts.level, sided: opts.sided }));
}

export async function ciExactInput(file: string, opts: { level?: number; sided?: Sided }): Promise<(BinomialInterval & { group: Record<string, string | null> })[]> {
  // Loaded here, not at the top: `ci exact --successes K --trials N` must not load DuckDB.
  const { lineOf, numericColumn, readInputFile } = await import('./input-file.ts');
  const t = await readInputFile(file, ['successes', 'trials']);
  const k = numericColumn(t, 'successes');
  const n = numericColumn(t, 'trials');
  const groupCols = t.columns.filter((c) => c !== 'successes' && c !== 'trials');
  return Array.from(k, (_, i) => {
    let ci: BinomialInterval;
    try {
      ci = ciExactCounts({ successes: k[i], trials: n[i], level: opts.level, sided: opts.sided });
    } catch (err) {
      throw dataError('input.badCount', `input file ${file}: line ${lineOf(i)}: ${(err as Error).message}`, err);
    }
    return { group: Object.fromEntries(groupCols.map((c) => [c, t.data[c][i]])), ...ci };
  });
}
