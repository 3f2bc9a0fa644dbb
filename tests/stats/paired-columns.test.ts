/**
 * `comparePairedColumns` (src/analysis/paired-comparison.ts, over `pairedColumnsSummary`): the
 * paired cluster comparison read straight from two aligned columns (NaN: no value) gives, bit for
 * bit, what `comparePaired` gives on the pairs extracted from them with their cluster ids, and the
 * four cells `fourCellCounts` counts; where it does not apply (unsorted ids, a non-finite value,
 * fewer than 2 pairs or clusters) it returns null and the caller takes that path.
 */
import { describe, expect, it } from 'vitest';
import { comparePaired, comparePairedColumns } from '../../src/analysis/paired-comparison.ts';
import { fourCellCounts } from '../../src/report/four-cell.ts';
import { createRng } from '../../src/stats/rng.ts';

type Kind = 'binary' | 'halves' | 'tenths' | 'doubles';

/** Columns over `clusters` sorted clusters of 1-5 rows, some values missing (NaN) on either side. */
function columns(seed: number, clusters: number, kind: Kind) {
  const rng = createRng(seed);
  const a: number[] = [];
  const b: number[] = [];
  const ids: number[] = [];
  const draw = (p: number) => {
    if (rng.uniform() < 0.1) return NaN;
    if (kind === 'doubles') return rng.uniform() * 3 - 1;
    if (kind === 'tenths') return Math.round(rng.uniform() * 10 * p) / 10;
    return kind === 'halves' ? Math.round(rng.uniform() * 2 * p) / 2 : Number(rng.uniform() < p);
  };
  for (let c = 0; c < clusters; c++) {
    const p = rng.uniform();
    for (let k = 1 + Math.floor(rng.uniform() * 5); k > 0; k--) {
      a.push(draw(p));
      b.push(draw(p * 0.8));
      ids.push(c * 3 + 7);
    }
  }
  return { a: Float64Array.from(a), b: Float64Array.from(b), ids: Int32Array.from(ids) };
}

/** The pairs both columns hold, with their ids (what the pairwise section extracted before). */
function extract(a: Float64Array, b: Float64Array, ids: Int32Array) {
  const keep = [...a.keys()].filter((r) => !Number.isNaN(a[r]) && !Number.isNaN(b[r]));
  return { xa: Float64Array.from(keep, (r) => a[r]), xb: Float64Array.from(keep, (r) => b[r]), xi: Int32Array.from(keep, (r) => ids[r]) };
}

const o = { resamples: 2000, level: 0.95, seed: 11 };
const json = (x: unknown) => JSON.stringify(x, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));

describe('the paired cluster comparison straight from two columns', () => {
  for (const kind of ['binary', 'halves', 'tenths', 'doubles'] as const) {
    for (const clusters of [30, 6000]) {
      it(`${kind}, ${clusters} clusters: the same comparison as on the extracted pairs`, () => {
        const { a, b, ids } = columns(clusters * 7 + kind.length, clusters, kind);
        const { xa, xb, xi } = extract(a, b, ids);
        const r = comparePairedColumns(a, b, ids, 'scenario_id', o);
        expect(r).not.toBeNull();
        expect(json(r!.comparison)).toBe(json(comparePaired(xa, xb, xi, 'scenario_id', o)));
        const cells = fourCellCounts(xi, xa, xb);
        expect(r!.cells && { both_right: r!.cells.bothRight, only_a: r!.cells.onlyA, only_b: r!.cells.onlyB, both_wrong: r!.cells.bothWrong }).toEqual(cells);
        if (kind === 'binary') expect(cells).not.toBeNull();
      });
    }
  }

  it('null where the extracted-pairs path must decide: unsorted ids, infinite values, too few pairs or clusters', () => {
    const { a, b, ids } = columns(3, 50, 'binary');
    const shuffled = ids.slice().reverse();
    expect(comparePairedColumns(a, b, shuffled, 'scenario_id', o)).toBeNull();
    const inf = a.slice();
    inf[inf.findIndex((x) => !Number.isNaN(x))] = Infinity;
    expect(comparePairedColumns(inf, b, ids, 'scenario_id', o)).toBeNull();
    const one = Float64Array.of(1, NaN, NaN);
    expect(comparePairedColumns(one, Float64Array.of(0, 1, 1), Int32Array.of(1, 2, 3), 'scenario_id', o)).toBeNull();
    expect(comparePairedColumns(Float64Array.of(1, 0, 1), Float64Array.of(0, 0, 1), Int32Array.of(4, 4, 4), 'scenario_id', o)).toBeNull();
    expect(() => comparePaired(Float64Array.of(1, 0, 1), Float64Array.of(0, 0, 1), Int32Array.of(4, 4, 4), 'scenario_id', o)).toThrow(/at least 2 clusters/);
  });
});
