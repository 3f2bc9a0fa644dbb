/**
 * `standoff ci exact` from counts: one pair (`--successes K --trials N`). Counts from a file
 * (`--input`) are in `ci-input.ts`.
 */
import { clopperPearson, type BinomialInterval, type Sided } from '../stats/clopper-pearson.ts';

/** Documented key order: counts, estimate, interval, then how it was computed. */
export function orderedInterval(ci: BinomialInterval): BinomialInterval {
  const { successes, trials, estimate, lower, upper, level, method, sided } = ci;
  return { successes, trials, estimate, lower, upper, level, method, sided };
}

export function ciExactCounts(opts: { successes: number; trials: number; level?: number; sided?: Sided }): BinomialInterval {
  return orderedInterval(clopperPearson(opts.successes, opts.trials, { level: opts.level, sided: opts.sided }));
}
