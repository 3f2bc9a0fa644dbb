/**
 * The words for the probe tables' fallback intervals (`stateIntervals`), said only when a table
 * shows one: where states repeat but every state has the same outcome, the interval is over the
 * distinct states (*st.*), or over the answers as independent samples (*ind.*).
 */
import { SHOWN_MARK, type ShownKind } from '../analysis/state-interval.ts';
import type { ShareInterval } from '../analysis/probe-tables.ts';
import { CLT_METHOD } from '../analysis/rates.ts';
import { pctInterval, rateCell } from './markdown.ts';

export { SHOWN_MARK };

/** `rate (count/n) [interval]`, the interval marked *cl.* (*cl. CLT* when from the clustered CLT), *st.* or *ind.* by what it treats as independent (`stateIntervals`). */
export const shareCell = (s: ShareInterval): string => {
  const mark = s.shown === 'cluster' && s.interval.method.endsWith(CLT_METHOD) ? 'cl. CLT' : SHOWN_MARK[s.shown];
  return `${rateCell(s.count, s.n)} ${mark ? `${mark} ` : ''}${pctInterval(s.interval.lower, s.interval.upper)}`;
};

/** Every `shown` kind among the share intervals anywhere in `value` (a section's typed values). */
export function shownKinds(value: unknown, out = new Set<ShownKind>()): Set<ShownKind> {
  if (Array.isArray(value)) for (const v of value) shownKinds(v, out);
  else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.shown === 'string' && 'interval' in o) out.add(o.shown as ShownKind);
    for (const v of Object.values(o)) shownKinds(v, out);
  }
  return out;
}

/** The legend sentence(s) for *st.* and *ind.* (empty when no table shows them). */
export function fallbackLegend(value: unknown): string {
  const k = shownKinds(value);
  let t = '';
  if (k.has('states')) {
    t += `Where every state has the same outcome the bootstrap has no spread; that interval (*st.*) is Clopper-Pearson over the distinct states, each state counted once (e.g. 11/11 on 6 states is shown as 6 of 6 states). `;
  }
  if (k.has('independent')) {
    t += `An interval marked *ind.* is Clopper-Pearson over the answers, treating them as independent samples although states repeat (the bootstrap had no spread and the states differ): read it as too narrow. `;
  }
  return t;
}
