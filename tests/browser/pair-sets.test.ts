/**
 * The four-cell table and its sets (pure, no store): the counts are `standoff compare`'s, the
 * table names its cells, and index.html links at most FOUR_CELL_LINKED comparisons (each costs
 * four queries when the report is built), saying so in the table's text when there are more.
 */
import { describe, expect, it } from 'vitest';
import { FOUR_CELL_LINKED, fourCellCounts, renderFourCells } from '../../src/report/four-cell.ts';
import { buildFourCellSets, fourCellKey } from '../../src/report/html/pair-sets.ts';
import type { GenericSections } from '../../src/report/generic.ts';

describe('four cells of a paired 0/1 comparison', () => {
  it('counts both right, only A, only B, both wrong; null for values that are not 0/1', () => {
    const keys = ['i1', 'i2', 'i3', 'i4', 'i5'];
    expect(fourCellCounts(keys, Float64Array.from([1, 1, 0, 0, 1]), Float64Array.from([1, 0, 1, 0, 0]))).toEqual({ both_right: 1, only_a: 2, only_b: 1, both_wrong: 1 });
    expect(fourCellCounts(keys, Float64Array.from([1, 1, 0, 0, 0.5]), Float64Array.from([1, 0, 1, 0, 0]))).toBeNull();
    expect(fourCellCounts([], new Float64Array(0), new Float64Array(0))).toBeNull();
  });

  it(`links the first ${FOUR_CELL_LINKED} comparisons' cells and says so when there are more`, () => {
    const comparisons = Array.from({ length: FOUR_CELL_LINKED + 3 }, (_, i) => ({ suite: 't', scorer: 'correct', a: `m${i}`, b: `m${i + 1}`, pairs: 4, four_cell: { both_right: 1, only_a: 1, only_b: 1, both_wrong: 1 } }));
    const g = { suites: ['t'], pairwise: { comparisons } } as unknown as GenericSections;
    const sources = comparisons.flatMap((c) => [c.a, c.b]).map((s) => ({ suite: 't', subject: s, run_id: 'r', subject_model: s }));
    const sets = buildFourCellSets(g, sources);
    expect(sets.length).toBe(4 * FOUR_CELL_LINKED);
    expect(sets[1].key).toBe(fourCellKey('t', 'correct', 'm0', 'm1', 'only_a'));
    expect(sets[1].count).toBe(2); // one item: A's and B's samples
    expect(sets[1].params).toMatchObject({ aright: true, bright: false, modela: 'm0', modelb: 'm1' });
    const md = renderFourCells(comparisons, false, (s) => s);
    expect(md).toContain(`the counts of the first ${FOUR_CELL_LINKED} comparisons open their items' samples`);
    expect(md.split('\n').filter((l) => l.startsWith('| correct |')).length).toBe(FOUR_CELL_LINKED + 3);
    expect(renderFourCells(comparisons.slice(0, 2), false, (s) => s)).toContain("each count opens its items' samples");
    expect(renderFourCells(comparisons.map((c) => ({ ...c, four_cell: null })), false, (s) => s)).toBe('');
  });
});
