/**
 * The interval a probe share shows, with an honest name for what it treats as independent.
 *
 * - `cluster` (*cl.*): states repeat (epochs) and the percentile cluster bootstrap over states has
 *   spread: whole states resampled.
 * - `exact` (no mark): every state is answered once, so Clopper-Pearson over the answers is
 *   Clopper-Pearson over the distinct states.
 * - `states` (*st.*): states repeat but every state has the same outcome (all 0 or all 1), so the
 *   bootstrap has no spread. Then the states are the independent units: Clopper-Pearson on the
 *   distinct states, each counted once (x = 0 or C of C states), e.g. 11/11 errors on 6 states gives
 *   the interval of 6/6, not of 11/11.
 * - `independent` (*ind.*): states repeat, the bootstrap has no spread (or one state) and the
 *   states do not all share a 0/1 outcome: Clopper-Pearson over the answers, which treats them as
 *   independent samples although they are not; said so in the table.
 *
 * Source: Clopper & Pearson (1934), as R `binom.test`; cluster bootstrap as in `rates.ts`.
 */
import { clusterIntervalFromTotals, exactInterval, type Interval, type RateOptions } from './rates.ts';

export type ShownKind = 'cluster' | 'exact' | 'states' | 'independent';

export interface StateIntervals {
  interval: Interval;
  shown: ShownKind;
  exact: Interval;
  cluster: Interval | null;
}

/** Short marks printed before the interval, and what each means. */
export const SHOWN_MARK: Record<ShownKind, string> = { cluster: 'cl.', exact: '', states: 'st.', independent: 'ind.' };

/** Per-state totals: as columns (count[i], n[i] of state i) or as one object per state. */
export type PerState = { count: readonly number[]; n: readonly number[] } | readonly { count: number; n: number }[];

const columns = (p: PerState): { count: readonly number[]; n: readonly number[] } =>
  Array.isArray(p) ? { count: (p as { count: number }[]).map((c) => c.count), n: (p as { n: number }[]).map((c) => c.n) } : (p as { count: readonly number[]; n: readonly number[] });

export function stateIntervals(count: number, n: number, perState: PerState, o: RateOptions): StateIntervals {
  const exact = exactInterval(count, n, o.level);
  const per = columns(perState);
  const repeats = per.n.some((x) => x > 1);
  if (!repeats || n === 0) return { interval: exact, shown: 'exact', exact, cluster: null };
  const cluster = clusterIntervalFromTotals(per.count, per.n, 'state', o);
  if (cluster.lower !== null) return { interval: cluster, shown: 'cluster', exact, cluster };
  let C = 0;
  let allOne = true;
  let allZero = true;
  for (let i = 0; i < per.n.length; i++) {
    if (per.n[i] <= 0) continue;
    C++;
    if (per.count[i] !== per.n[i]) allOne = false;
    if (per.count[i] !== 0) allZero = false;
  }
  if (allOne || allZero) {
    const s = exactInterval(allOne ? C : 0, C, o.level);
    return {
      interval: { ...s, method: 'clopper-pearson-over-states', cluster: 'state', clusters: C, note: 'every state has the same outcome, so the cluster bootstrap has no spread: Clopper-Pearson over the distinct states, each counted once' },
      shown: 'states',
      exact,
      cluster,
    };
  }
  return { interval: { ...exact, note: 'the cluster bootstrap has no spread: Clopper-Pearson over the answers, treated as independent samples although states repeat' }, shown: 'independent', exact, cluster };
}
