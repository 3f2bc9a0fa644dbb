/**
 * Interval helpers shared by the sections: one JSON shape for every interval in results.json,
 * built from the `src/stats` functions with the report's level, seed and resample count.
 */
import type { Table } from 'apache-arrow';
import { StandoffError } from '../../errors.ts';
import { bootstrapMean, clopperPearson, clusterBootstrap } from '../../stats/index.ts';
import type { ReportContext } from './context.ts';

export interface Interval {
  lower: number | null;
  upper: number | null;
  level: number;
  /** 'clopper-pearson', 'cluster-bootstrap-percentile', 'bootstrap-percentile', ... */
  method: string;
  seed?: number;
  resamples?: number;
  /** Bootstrap engine ('multinomial' exact counts, or 'resample'). */
  engine?: string;
  /** Bootstrap standard error. */
  se?: number;
  /** Clusters resampled (cluster bootstrap). */
  clusters?: number;
  /** Why the interval is missing, when it is. */
  note?: string;
}

export function exactInterval(successes: number, trials: number, level: number): Interval {
  const ci = clopperPearson(successes, trials, { level });
  return { lower: ci.lower, upper: ci.upper, level, method: 'clopper-pearson', ...(trials === 0 ? { note: 'no observations' } : {}) };
}

/** Cluster bootstrap of the mean (clusters = scenarios). Null-valued with a note when it cannot run. */
export function clusterInterval(values: Float64Array, clusterIds: ArrayLike<number>, ctx: Pick<ReportContext, 'seed' | 'resamples' | 'level'>): Interval {
  const base = (lower: number | null, upper: number | null) => ({ lower, upper, level: ctx.level, method: 'cluster-bootstrap-percentile', seed: ctx.seed, resamples: ctx.resamples });
  if (values.length === 0) return { ...base(null, null), note: 'no observations' };
  if (allEqual(values)) return { ...base(null, null), note: DEGENERATE };
  try {
    const r = clusterBootstrap(values, clusterIds, { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, method: 'percentile' });
    return { ...base(r.lower, r.upper), engine: r.engine, se: finite(r.se), clusters: r.clusters };
  } catch (err) {
    if (err instanceof StandoffError) return { ...base(null, null), note: err.message };
    throw err;
  }
}

/** Percentile bootstrap of a mean (for non-binary scores such as split judge medians). */
export function meanInterval(values: Float64Array, ctx: Pick<ReportContext, 'seed' | 'resamples' | 'level'>): Interval {
  const base = (lower: number | null, upper: number | null) => ({ lower, upper, level: ctx.level, method: 'bootstrap-percentile', seed: ctx.seed, resamples: ctx.resamples });
  if (values.length < 2) return { ...base(null, null), note: 'fewer than 2 observations' };
  if (allEqual(values)) return { ...base(null, null), note: DEGENERATE };
  const r = bootstrapMean(values, { seed: ctx.seed, resamples: ctx.resamples, level: ctx.level, method: 'percentile' });
  return { ...base(r.lower, r.upper), engine: r.engine, se: finite(r.se) };
}

/**
 * A bootstrap of data whose outcomes are all identical has no spread: its interval is the single
 * point [p, p], which understates the uncertainty (0/90 is not "exactly 0"). Such intervals are
 * reported as missing, with this note, and the exact interval stands.
 */
export const DEGENERATE = 'not reported: every outcome is identical, so the bootstrap has no spread (the exact interval applies)';

function allEqual(values: Float64Array): boolean {
  for (let i = 1; i < values.length; i++) if (values[i] !== values[0]) return false;
  return true;
}

function finite(x: number): number | undefined {
  return Number.isFinite(x) ? x : undefined;
}

/** Row ranges of a table sorted by a string key column: key -> [start, end). */
export function ranges(table: Table, key: string): Map<string, [number, number]> {
  const col = table.getChild(key);
  const out = new Map<string, [number, number]>();
  if (!col) return out;
  let start = 0;
  let prev: string | null = null;
  for (let i = 0; i < col.length; i++) {
    const k = String(col.get(i));
    if (k !== prev) {
      if (prev !== null) out.set(prev, [start, i]);
      prev = k;
      start = i;
    }
  }
  if (prev !== null) out.set(prev, [start, col.length]);
  return out;
}

/** A numeric column as Float64Array (no nulls expected). */
export function f64(table: Table, name: string): Float64Array {
  const col = table.getChild(name);
  if (!col) throw new Error(`no column "${name}"`);
  const arr = col.toArray() as ArrayLike<number | bigint>;
  const out = new Float64Array(arr.length);
  for (let i = 0; i < arr.length; i++) out[i] = Number(arr[i]);
  return out;
}

/** A numeric column as Int32Array. */
export function i32(table: Table, name: string): Int32Array {
  const col = table.getChild(name);
  if (!col) throw new Error(`no column "${name}"`);
  const arr = col.toArray() as ArrayLike<number | bigint>;
  const out = new Int32Array(arr.length);
  for (let i = 0; i < arr.length; i++) out[i] = Number(arr[i]);
  return out;
}
