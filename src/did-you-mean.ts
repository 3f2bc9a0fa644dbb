/**
 * "Did you mean" for a misspelled name (a config field, a column): the closest candidate by
 * optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring),
 * accepted when it is at most 2 edits away and shares more than 40% of the word, as commander
 * does for options and commands.
 *
 * @example
 * closestName('concurency', ['concurrency', 'epochs']); // 'concurrency'
 * didYouMean('epoch', ['epochs']); // ' (did you mean "epochs"?)'
 */

/** Edit distance with adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The candidate closest to `word`, or undefined when none is close (ties: the first candidate). */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const dist = editDistance(word.toLowerCase(), c.toLowerCase());
    if (dist < bestDistance && (Math.max(word.length, c.length) - dist) / Math.max(word.length, c.length) > 0.4) {
      best = c;
      bestDistance = dist;
    }
  }
  return best;
}

/** ` (did you mean "x"?)` for the closest candidate, or an empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closestName(word, candidates);
  return c === undefined ? '' : ` (did you mean "${c}"?)`;
}
