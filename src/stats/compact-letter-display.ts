import { dataError } from '../errors.ts';

/**
 * Compact letter display of all pairwise comparisons: each subject gets letters so that two
 * subjects share a letter exactly when their difference is not significant. Subjects are given
 * best first; letter `a` goes to the group holding the best subject, `b` to the next group by its
 * best member, and so on.
 *
 * Source: Piepho (2004), "An algorithm for a letter-based representation of all-pairwise
 * comparisons", Journal of Computational and Graphical Statistics 13(2), the insert-and-absorb
 * algorithm: start from one column holding every subject; for each significant pair (i, j), every
 * column holding both is split into a copy without i and a copy without j; columns contained in
 * another are absorbed (removed). The result is exact (sharing a letter <=> not significant) and
 * has no redundant letter. It is what R `multcompView::multcompLetters` returns up to the order
 * of the letters.
 *
 * Degenerate cases: no significant pair gives every subject `a`; `different` must be a symmetric
 * S x S boolean matrix (checked: `dataError`).
 *
 * @example
 * // subjects best first: A, B, C; A differs from C only
 * compactLetterDisplay([[false, false, true], [false, false, false], [true, false, false]]); // ['a', 'ab', 'b']
 */
export function compactLetterDisplay(different: boolean[][]): string[] {
  const S = different.length;
  for (let i = 0; i < S; i++) {
    if (different[i].length !== S) throw dataError('stats.badShape', `compactLetterDisplay requires a square matrix, row ${i} has ${different[i].length} of ${S}`);
    for (let j = 0; j < S; j++) if (different[i][j] !== different[j][i]) throw dataError('stats.badShape', `compactLetterDisplay requires a symmetric matrix (entries ${i},${j} differ)`);
  }
  let cols: Set<number>[] = [new Set(Array.from({ length: S }, (_, i) => i))];
  for (let i = 0; i < S; i++) {
    for (let j = i + 1; j < S; j++) {
      if (!different[i][j]) continue;
      const next: Set<number>[] = [];
      for (const c of cols) {
        if (c.has(i) && c.has(j)) {
          const a = new Set(c);
          a.delete(i);
          const b = new Set(c);
          b.delete(j);
          next.push(a, b);
        } else next.push(c);
      }
      cols = absorb(next);
    }
  }
  const order = cols.map((c) => Math.min(...c)).map((m, k) => [m, k] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const letters = Array.from({ length: S }, () => '');
  order.forEach(([, k], idx) => {
    for (const s of [...cols[k]].sort((x, y) => x - y)) letters[s] += letterName(idx);
  });
  return letters;
}

/** Removes columns that are subsets of another (the first of equal columns kept). */
function absorb(cols: Set<number>[]): Set<number>[] {
  return cols.filter((c, k) => !cols.some((d, l) => l !== k && isSubset(c, d) && (c.size < d.size || l < k)));
}

const isSubset = (a: Set<number>, b: Set<number>) => [...a].every((x) => b.has(x));

/** a..z, then aa, ab, ... */
function letterName(i: number): string {
  return i < 26 ? String.fromCharCode(97 + i) : letterName(Math.floor(i / 26) - 1) + String.fromCharCode(97 + (i % 26));
}
