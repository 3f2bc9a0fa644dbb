/** `episodes 3, messages 12`: the non-zero row counts of an ingest summary, in table order. */
export const tableCounts = (t: Partial<Record<string, number>>) =>
  Object.entries(t)
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
