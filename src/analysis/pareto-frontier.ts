/**
 * The cost frontier (the paper's "accuracy against cost per 1,000 states"): which subjects no other
 * subject beats on both cost and accuracy. Pure, no I/O.
 *
 * A point q dominates p when q costs no more AND is no less accurate, and is strictly better on at
 * least one of the two (Pareto dominance, lower cost and higher accuracy preferred). The frontier
 * is the set of points nothing dominates. Ties: two points with the same cost and accuracy do not
 * dominate each other, so both are on the frontier or both off it. A point whose cost or accuracy
 * is null (not measured) is not compared at all: `on_frontier` is null for it, never false, and it
 * dominates nothing.
 */

export interface FrontierPoint {
  id: string;
  /** Lower is better (USD per 1,000 episodes, or mean tokens per episode). */
  cost: number | null;
  /** Higher is better. */
  accuracy: number | null;
}

export interface FrontierResult {
  id: string;
  /** True on the frontier, false when dominated, null when cost or accuracy is not measured. */
  on_frontier: boolean | null;
  /** Ids of the points that dominate this one (sorted), empty on the frontier. */
  dominated_by: string[];
}

const measured = (p: FrontierPoint): p is FrontierPoint & { cost: number; accuracy: number } =>
  p.cost !== null && p.accuracy !== null && Number.isFinite(p.cost) && Number.isFinite(p.accuracy);

/** True when `q` Pareto-dominates `p` (cost no higher, accuracy no lower, one strictly better). */
export function dominates(q: { cost: number; accuracy: number }, p: { cost: number; accuracy: number }): boolean {
  return q.cost <= p.cost && q.accuracy >= p.accuracy && (q.cost < p.cost || q.accuracy > p.accuracy);
}

/** Frontier membership of every point, in input order. O(n^2): n is the number of subjects. */
export function paretoFrontier(points: readonly FrontierPoint[]): FrontierResult[] {
  const ok = points.filter(measured);
  return points.map((p) => {
    if (!measured(p)) return { id: p.id, on_frontier: null, dominated_by: [] };
    const by = ok.filter((q) => q !== p && dominates(q, p)).map((q) => q.id).sort();
    return { id: p.id, on_frontier: by.length === 0, dominated_by: by };
  });
}

/** The frontier's points in increasing cost (then decreasing accuracy, then id): the line to draw. */
export function frontierPath(points: readonly FrontierPoint[]): FrontierPoint[] {
  const on = new Set(paretoFrontier(points).filter((r) => r.on_frontier).map((r) => r.id));
  return points
    .filter((p) => on.has(p.id))
    .sort((a, b) => a.cost! - b.cost! || b.accuracy! - a.accuracy! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
