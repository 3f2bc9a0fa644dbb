/**
 * The four cells of a paired comparison of a 0/1 scorer, item by item (item x epoch, as the
 * pairwise table pairs them): both right, only A right, only B right, both wrong. The counts are
 * `standoff compare`'s (`fourCell` in decide/compare.ts, with A as the baseline and B as the
 * candidate), so A − B = (only A − only B) / pairs. In index.html each count opens its samples,
 * A's and B's (`html/pair-sets.ts`).
 */
import { fourCell } from '../decide/compare.ts';
import { cell, fmtCount, table } from './markdown.ts';

export interface FourCellCounts {
  both_right: number;
  only_a: number;
  only_b: number;
  both_wrong: number;
}

/** The four cells of paired 0/1 values (a[i] and b[i] on item keys[i]); null when a value is not 0/1 or nothing is paired. */
export function fourCellCounts(keys: ArrayLike<string | number>, a: Float64Array, b: Float64Array): FourCellCounts | null {
  const c = fourCell(keys, b, a);
  return c === null ? null : { both_right: c.both_right, only_a: c.only_baseline, only_b: c.only_candidate, both_wrong: c.both_wrong };
}

/** Comparisons whose four cells index.html links (in table order): each costs four queries at build time. */
export const FOUR_CELL_LINKED = 50;

/** The header of the four-cell table's count columns, in `FourCellCounts` order (index.html links them by these). */
export const FOUR_CELL_HEADERS = ['Both right', 'Only A right', 'Only B right', 'Both wrong'] as const;
export const FOUR_CELL_KEYS = ['both_right', 'only_a', 'only_b', 'both_wrong'] as const satisfies readonly (keyof FourCellCounts)[];

interface FourCellRow {
  suite: string;
  scorer: string;
  a: string;
  b: string;
  pairs: number;
  four_cell?: FourCellCounts | null;
}

/**
 * Markdown: the four cells of every binary comparison that has them ('' when none has).
 * `title` names the scorer column ("Scorer"; the O1 report's "Metric"), `scorerName` its cells.
 */
export function renderFourCells(rows: FourCellRow[], several: boolean, scorerName: (s: string) => string, title = 'Scorer'): string {
  const shown = rows.filter((r) => r.four_cell);
  if (shown.length === 0) return '';
  const linked = shown.length > FOUR_CELL_LINKED ? `the counts of the first ${FOUR_CELL_LINKED} comparisons open their items' samples` : "each count opens its items' samples";
  const head = `Binary ${title.toLowerCase()}s item by item (the four cells of each paired comparison, as \`standoff compare\` prints them; A − B = (only A − only B) / pairs). In index.html ${linked}, A's and B's.\n`;
  return (
    head +
    '\n' +
    table(
      [...(several ? ['Suite'] : []), title, 'A', 'B', 'Pairs', ...FOUR_CELL_HEADERS],
      shown.map((r) => [...(several ? [cell(r.suite)] : []), cell(scorerName(r.scorer)), cell(r.a), cell(r.b), fmtCount(r.pairs), ...FOUR_CELL_KEYS.map((k) => fmtCount(r.four_cell![k]))]),
      [...(several ? ['l' as const] : []), 'l', 'l', 'l', 'r', 'r', 'r', 'r', 'r'],
    )
  );
}
