/**
 * The cost frontier (src/analysis/pareto-frontier.ts): Pareto dominance with lower cost and higher
 * accuracy preferred. Hand-worked cases with ties, dominated points and points nobody measured,
 * and a brute-force check over random points with many ties.
 */
import { describe, expect, it } from 'vitest';
import { dominates, frontierPath, paretoFrontier, type FrontierPoint } from '../../src/analysis/pareto-frontier.ts';
import { createRng } from '../../src/stats/rng.ts';

const on = (pts: FrontierPoint[]) => paretoFrontier(pts).filter((r) => r.on_frontier).map((r) => r.id);

describe('paretoFrontier', () => {
  it('marks dominated points and names what dominates them', () => {
    const pts: FrontierPoint[] = [
      { id: 'cheap-bad', cost: 1, accuracy: 0.3 },
      { id: 'mid', cost: 2, accuracy: 0.7 },
      { id: 'dear-best', cost: 5, accuracy: 0.95 },
      { id: 'dear-worse', cost: 5, accuracy: 0.6 }, // dominated by mid and pricier-same (cheaper, more accurate) and dear-best (same cost, more accurate)
      { id: 'pricier-same', cost: 3, accuracy: 0.7 }, // dominated by mid only: same accuracy, dearer
    ];
    const r = paretoFrontier(pts);
    expect(r.map((x) => [x.id, x.on_frontier])).toEqual([
      ['cheap-bad', true],
      ['mid', true],
      ['dear-best', true],
      ['dear-worse', false],
      ['pricier-same', false],
    ]);
    expect(r[3].dominated_by).toEqual(['dear-best', 'mid', 'pricier-same']);
    expect(r[4].dominated_by).toEqual(['mid']);
    expect(frontierPath(pts).map((p) => p.id)).toEqual(['cheap-bad', 'mid', 'dear-best']);
  });

  it('ties: identical points do not dominate each other; equal cost or equal accuracy alone decides on the other', () => {
    expect(on([{ id: 'a', cost: 2, accuracy: 0.5 }, { id: 'b', cost: 2, accuracy: 0.5 }])).toEqual(['a', 'b']);
    // Both tied points are dominated together by a strictly better one.
    const r = paretoFrontier([{ id: 'a', cost: 2, accuracy: 0.5 }, { id: 'b', cost: 2, accuracy: 0.5 }, { id: 'c', cost: 1, accuracy: 0.5 }]);
    expect(r.map((x) => x.on_frontier)).toEqual([false, false, true]);
    // Same cost: the more accurate wins; same accuracy: the cheaper wins.
    expect(on([{ id: 'a', cost: 2, accuracy: 0.5 }, { id: 'b', cost: 2, accuracy: 0.6 }])).toEqual(['b']);
    expect(on([{ id: 'a', cost: 2, accuracy: 0.5 }, { id: 'b', cost: 1.5, accuracy: 0.5 }])).toEqual(['b']);
    expect(dominates({ cost: 1, accuracy: 1 }, { cost: 1, accuracy: 1 })).toBe(false);
  });

  it('not measured is not dominated: null cost or accuracy gives null, and such a point dominates nothing', () => {
    const r = paretoFrontier([
      { id: 'unpriced', cost: null, accuracy: 1 },
      { id: 'no-target', cost: 0.1, accuracy: null },
      { id: 'x', cost: 3, accuracy: 0.2 },
    ]);
    expect(r.map((x) => x.on_frontier)).toEqual([null, null, true]);
    expect(r[2].dominated_by).toEqual([]);
    expect(paretoFrontier([])).toEqual([]);
  });

  it('agrees with a brute-force definition on random points with many ties', () => {
    const rng = createRng(24);
    for (let t = 0; t < 200; t++) {
      const pts: FrontierPoint[] = Array.from({ length: 1 + rng.int(9) }, (_, i) => ({ id: `p${i}`, cost: rng.int(5), accuracy: rng.int(4) / 4 }));
      const got = paretoFrontier(pts);
      for (const [i, p] of pts.entries()) {
        const beaten = pts.some((q) => q.cost! <= p.cost! && q.accuracy! >= p.accuracy! && (q.cost! < p.cost! || q.accuracy! > p.accuracy!));
        expect(got[i].on_frontier).toBe(!beaten);
      }
      // Along the frontier cost rises and accuracy rises strictly between distinct points.
      const path = frontierPath(pts);
      for (let i = 1; i < path.length; i++) {
        expect(path[i].cost!).toBeGreaterThanOrEqual(path[i - 1].cost!);
        if (path[i].cost !== path[i - 1].cost || path[i].accuracy !== path[i - 1].accuracy) expect(path[i].accuracy!).toBeGreaterThan(path[i - 1].accuracy!);
      }
    }
  });
});
