/**
 * The cell conversions skip `trim` and `lower` where they cannot change a cell (`trimmed`: only a
 * cell that starts or ends with a space or tab is trimmed; scores: exact tokens and their upper
 * case first). Each conversion here is checked against the same SQL with plain `trim(x, ' \t')`
 * and `lower(...)` everywhere, on cells that exercise every branch, in real DuckDB.
 */
import { describe, expect, it } from 'vitest';
import { convertSql, scoreSql, type ValueKind } from '../../src/store/csv-values.ts';
import { createDb, quoteLiteral, withConnection } from '../../src/store/duckdb.ts';

const CELLS: (string | null)[] = [
  null, '', ' ', '\t', ' \t ', 'c', 'C', ' c', 'c ', '\tC\t', 'Correct', 'CORRECT', 'cOrReCt', ' incorrect ', 'I', 'i', 'N', 'n', 'NoAnswer',
  'NOANSWER', 'noanswer\t', 'p', 'P', 'Partial', 'yes', 'YES', 'Yes', 'true', 'TRUE', 'false', 'no', 'NO', 'x', '1', ' 1 ', '0.5', '1e999', 'nan',
  '1_0', '3.5', '-7', '2147483648', 'ｃ', 'İ', 'ß', 'a b', '\u00a0c', 'c\u00a0', 'ALIGNED', ' aligned', '2024-01-02T03:04:05Z', ' 2024-01-02T03:04Z ',
  '{"a":1}', ' [1] ',
];

/** The plain form: every fast path replaced by the `trim` / `lower` it stands for. */
function plain(sql: string, x: string): string {
  const fastTrim = `(CASE WHEN prefix(${x}, ' ') OR prefix(${x}, chr(9)) OR suffix(${x}, ' ') OR suffix(${x}, chr(9)) THEN trim(${x}, ' ' || chr(9)) ELSE ${x} END)`;
  expect(sql).toContain(fastTrim);
  return sql.split(fastTrim).join(`trim(${x}, ' ' || chr(9))`);
}

async function compare(exprs: { fast: string; plain: string }[]): Promise<void> {
  const db = await createDb();
  try {
    await withConnection(db, async (c) => {
      const values = CELLS.map((v) => `(${v === null ? 'CAST(NULL AS VARCHAR)' : quoteLiteral(v)})`).join(', ');
      await c.run(`CREATE TABLE cells AS SELECT * FROM (VALUES ${values}) t(x)`);
      for (const e of exprs) {
        const r = await c.runAndReadAll(`SELECT x, CAST(${e.fast} AS VARCHAR) AS f, CAST(${e.plain} AS VARCHAR) AS p FROM cells`);
        const rows = r.getRowObjectsJS();
        expect(rows.length).toBe(CELLS.length);
        for (const row of rows) expect({ x: row.x, v: row.f }).toEqual({ x: row.x, v: row.p });
      }
    });
  } finally {
    db.closeSync();
  }
}

describe('cell conversions: fast trim and token paths', () => {
  it('each kind gives the value and reason of the plain trim', async () => {
    const kinds: ValueKind[] = ['enum', 'int', 'num', 'bool', 'ts', 'score'];
    const exprs = kinds.flatMap((kind) =>
      [false, true].flatMap((required) => {
        const conv = convertSql(kind, 'x', { required, options: ['a', 'b b', 'ALIGNED'] });
        const parts = [conv.value, conv.why, conv.bad(`(${conv.value})`)];
        // Only the SQL that trims has a fast path to undo (a number's value needs none).
        return parts.filter((p) => p.includes('prefix(x')).map((p) => ({ fast: p, plain: plain(p, 'x') }));
      }),
    );
    expect(exprs.length).toBeGreaterThan(10);
    await compare(exprs);
  });

  it('scores: the exact-token lookup gives what the lower-cased trimmed lookup gives', async () => {
    const sc = scoreSql('x');
    const mapped = scoreSql('x', { Maybe: 0.25, 'N/A': null });
    const tokenless = (sql: string) =>
      plain(sql, 'x').replace(/coalesce\(list_position\(\[[^\]]*\], x\), (\d+ \+ list_position\(\[[^\]]*\], lower\(trim\(x, ' ' \|\| chr\(9\)\)\)\))\)/g, '$1');
    const exprs = [sc, mapped].flatMap((s) => [s.value, s.why, s.present].map((p) => ({ fast: p, plain: tokenless(p) })));
    for (const e of exprs.slice(0, 2)) expect(e.plain).not.toContain('coalesce(list_position');
    await compare(exprs);
  });
});
