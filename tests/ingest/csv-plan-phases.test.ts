/**
 * The phases of a CSV plan, each alone (src/ingest/csv/plan.ts and plan-sql.ts): the header's
 * columns, the mapped fields and constants, the required-column check, defaults, scores, judges
 * and metadata; then the SQL each builder writes, run in a real DuckDB over a small relation of raw
 * text cells (c0, c1, ...), as `read_csv` gives them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createDb } from '../../src/store/duckdb.ts';
import type { CsvFileProblem } from '../../src/store/read-csv.ts';
import { mappingSchema, type MappingInput } from '../../src/ingest/csv/mapping.ts';
import {
  applyDefaults,
  checkRequired,
  indexHeader,
  resolveFields,
  resolveJudges,
  resolveMetadata,
  resolvePlan,
  resolveScores,
  startResolution,
  type Resolution,
} from '../../src/ingest/csv/plan.ts';
import { countsSqlOf, deriveColumns, describeRowOf, episodeIdSql, keySourcesOf, outputsOf, stageSqlOf } from '../../src/ingest/csv/plan-sql.ts';

const mapping = (m: MappingInput) => mappingSchema.parse(m);
function start(m: MappingInput, header: string[], detected = false): { r: Resolution; problems: CsvFileProblem[] } {
  const problems: CsvFileProblem[] = [];
  return { r: startResolution(mapping(m), header, { file: 'f.csv', fileIndex: 0, detected }, problems), problems };
}
/** Every phase up to the SQL, in resolvePlan's order. */
function resolved(m: MappingInput, header: string[]): { r: Resolution; problems: CsvFileProblem[] } {
  const s = start(m, header);
  for (const phase of [indexHeader, resolveFields, checkRequired, applyDefaults, resolveScores, resolveJudges, resolveMetadata]) phase(s.r);
  return s;
}
/** Raw text cells as read_csv gives them (NULL for an empty cell). */
const relation = (rows: (string | null)[][]) =>
  `(SELECT * FROM (VALUES ${rows.map((r) => `(${r.map((v) => (v === null ? 'NULL' : `'${v}'`)).join(', ')})`).join(', ')}) t(${rows[0]!.map((_, i) => `c${i}`).join(', ')}))`;

let db: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  db = await createDb({ threads: 1 });
  conn = await db.connect();
});
afterAll(() => {
  conn.closeSync();
  db.closeSync();
});
const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJS();

describe('phase 1: indexHeader', () => {
  it('indexes named columns, and names an unnamed and a repeated one (with their order)', () => {
    const { r, problems } = start({ table: 'episodes', columns: {} }, ['a', ' ', 'b', 'a']);
    indexHeader(r);
    expect([...r.col]).toEqual([['a', 0], ['b', 2]]);
    expect(problems.map((p) => [p.code, p.field, p.order])).toEqual([['unnamedColumn', 'column 2', 1], ['duplicateColumn', 'a', 3]]);
  });
  it('skips the row-index column', () => {
    const problems: CsvFileProblem[] = [];
    const r = startResolution(mapping({ table: 'episodes', columns: {} }), ['', 'model'], { file: 'f.csv', fileIndex: 0, detected: true, indexColumn: 0 }, problems);
    indexHeader(r);
    expect(problems).toEqual([]);
    expect([...r.col]).toEqual([['model', 1]]);
  });
});

describe('phase 2: resolveFields', () => {
  it('stages a mapped column, records a constant and checks value-map entries once', () => {
    const { r, problems } = start({ table: 'episodes', columns: { subject_model: 'm', scenario_id: 's', epoch: 'e' }, constants: { domain: 'ops' }, values: { epoch: { first: 1 } } }, ['m', 's', 'e']);
    indexHeader(r);
    resolveFields(r);
    expect(problems).toEqual([]);
    expect([...r.provided].sort()).toEqual(['domain', 'epoch', 'scenario_id', 'subject_model']);
    expect(r.fx.get('subject_model')).toBe('"v_subject_model"');
    // in the schema's column order (domain before epoch)
    expect(r.literalChecks.map((c) => c.label)).toEqual(['constants.domain', 'values.epoch["first"]']);
    expect(r.cellChecks.map((c) => [c.field, c.order])).toEqual([['m', 0], ['s', 1], ['e', 2]]);
    expect([...r.used].sort()).toEqual([0, 1, 2]);
  });
  it('names a map column that is not in the header, and a constant of the wrong kind', () => {
    const { r, problems } = start({ table: 'episodes', columns: { subject_model: 'model' }, constants: { epoch: true } }, ['m']);
    indexHeader(r);
    resolveFields(r);
    expect(problems.map((p) => p.code)).toEqual(['unknownColumn', 'badMap']);
    expect(problems[0]!.message).toMatch(/the map's column "model" \(for episodes.subject_model\) is not in the header \("m"\)/);
    expect(problems[1]!.message).toBe('constants.epoch: a boolean is not a valid int value for "epoch"');
  });
});

describe('phase 3: checkRequired', () => {
  it('names each required column missing, with the flag that maps it when the mapping was detected', () => {
    const { r, problems } = start({ table: 'episodes', columns: { scenario_id: 's' } }, ['s'], true);
    indexHeader(r);
    resolveFields(r);
    checkRequired(r);
    expect(problems.map((p) => [p.code, p.field])).toEqual([['missingColumn', 'subject_model']]);
    expect(problems[0]!.message).toMatch(/name the column with --subject COLUMN/);
  });
  it('judgments need episode ids or subject and scenario, and a verdict or a value', () => {
    const { r, problems } = start({ table: 'judgments', columns: { judge_model: 'j' } }, ['j']);
    indexHeader(r);
    resolveFields(r);
    checkRequired(r);
    expect(problems.map((p) => p.message.split(':')[0])).toEqual([
      'required column missing (or episode_id)',
      'required column missing (or episode_id)',
      'required column missing (or value)',
    ]);
  });
});

describe('phase 4: applyDefaults', () => {
  it('fills epoch and status and records the documented defaults', () => {
    const { r } = start({ table: 'episodes', columns: { subject_model: 'm', scenario_id: 's' } }, ['m', 's']);
    indexHeader(r);
    resolveFields(r);
    applyDefaults(r);
    expect(r.fx.get('epoch')).toBe('CAST(1 AS INTEGER)');
    expect(r.fx.get('status')).toBe(`'valid'`);
    expect(Object.keys(r.defaultsUsed)).toContain('epoch');
  });
});

describe('phase 5: scores, judges, metadata', () => {
  const header = ['m', 's', 'score', 'ans', 'judge_a', 'note'];
  const m: MappingInput = { table: 'episodes', columns: { subject_model: 'm', scenario_id: 's' }, scores: [{ scorer: 'acc', column: 'score', answer: 'ans' }], judges: { scorer: 'acc', columns: ['judge_a'] } };
  it('stage each score with its presence and answer, each judge column, and the columns left over as metadata', () => {
    const { r, problems } = resolved(m, header);
    expect(problems).toEqual([]);
    expect(r.scoreCols).toEqual([{ scorer: 'acc', k: 0, answer: true, explanation: false }]);
    expect(r.judgeCols).toEqual([{ column: 'judge_a', j: 0 }]);
    expect(r.metadataColumns).toEqual(['note']);
    expect(r.inner.some((x) => x.endsWith('AS "__meta"'))).toBe(true);
  });
  it('a score column that is not in the header is a problem', () => {
    const { problems } = resolved({ ...m, scores: [{ scorer: 'acc', column: 'nope' }], judges: undefined }, header);
    expect(problems.map((p) => [p.code, p.field])).toEqual([['unknownColumn', 'nope']]);
  });
});

describe('the SQL of a resolved plan, run in DuckDB', () => {
  const header = ['m', 's', 'e', 'score', 'note'];
  const data = [
    ['gpt', 'a', '1', 'C', 'x'],
    ['gpt', 'b', '1', 'I', null],
    ['gpt', 'c', 'two', '1', 'y'],
  ];
  const m: MappingInput = { table: 'episodes', columns: { subject_model: 'm', scenario_id: 's', epoch: 'e' }, scores: [{ scorer: 'acc', column: 'score' }] };

  it('stages every row with a bad flag, explains the bad one, counts, keys and outputs', async () => {
    const { r, problems } = resolved(m, header);
    expect(problems).toEqual([]);
    const { outer, rowChecks } = deriveColumns(r);
    expect(outer).toEqual([]);
    await conn.run(stageSqlOf(r, 'st', outer, rowChecks)(relation(data)));
    expect((await rows('SELECT "__bad" FROM st ORDER BY rowid')).map((x) => x.__bad)).toEqual([false, false, true]);
    await conn.run(`CREATE OR REPLACE TABLE raw AS SELECT * FROM ${relation(data)}`);
    const { explainSqlOf } = await import('../../src/ingest/csv/plan-sql.ts');
    const bad = await rows(explainSqlOf(r, 'st', rowChecks)('raw', 10));
    const described = describeRowOf(r, rowChecks)(bad[0] as Record<string, unknown>, 4);
    expect(described.map((p) => [p.line, p.field, p.code])).toEqual([[4, 'e', 'badType']]);
    const [counts] = await rows(countsSqlOf(r, 'st'));
    expect([counts!.n, counts!.bad, counts!.episodes, counts!.scores, counts!.max_epoch]).toEqual([3n, 1n, 3n, 3n, 1]);
    const keys = keySourcesOf(r, 'st');
    expect(keys.map((k) => [k.table, k.what])).toEqual([['episodes', 'episode']]);
    expect((await rows(`${keys[0]!.sql} ORDER BY r`)).map((x) => x.k)).toEqual(['gpt/a/1', 'gpt/b/1']);
    expect(episodeIdSql(r)).toMatch(/^concat\(/);
    const out = outputsOf(r, 'st')('unused');
    // (the ingest writes only when no row is bad; the bad row's epoch is NULL here)
    const episodes = await rows(out.episodes![0]!);
    expect(episodes.map((e) => [e.episode_id, e.metadata])).toEqual([['gpt/a/1', '{"note":"x"}'], ['gpt/b/1', null], ['gpt/c/', '{"note":"y"}']]);
    const scores = await rows(out.scores![0]!);
    expect(scores.slice(0, 2).map((s) => [s.episode_id, s.scorer, s.value])).toEqual([['gpt/a/1', 'acc', 1], ['gpt/b/1', 'acc', 0]]);
  });

  it("stages the episode key's hash: equal for equal ids, NULL where the triple cannot stand for the joined id", async () => {
    const { r } = resolved({ table: 'episodes', columns: { subject_model: 'm', scenario_id: 's', epoch: 'e' } }, ['m', 's', 'e']);
    const { outer, rowChecks } = deriveColumns(r);
    const cells = [['a', 'x', '1'], ['a', 'x', '1.0'], ['a', 'x', '2'], ['a/x', 'y', '1'], ['a', 'x/y', '1'], ['b', 'x', null]];
    await conn.run(stageSqlOf(r, 'kh', outer, rowChecks)(relation(cells)));
    const [key] = keySourcesOf(r, 'kh');
    expect(key!.staged).toBeDefined();
    const h = (await rows(`SELECT "__kh" AS h FROM kh ORDER BY rowid`)).map((x) => x.h);
    expect(h[0]).not.toBeNull();
    expect(h[1]).toBe(h[0]); // '1.0' is the epoch 1: the same id
    expect(new Set([h[0], h[2], h[3]]).size).toBe(3);
    expect([h[4], h[5]]).toEqual([null, null]); // a '/' in the scenario; an empty (NULL) epoch
    // The staged SELECT leaves bad rows out, as the key rows do.
    expect((await rows(`${key!.staged!}`)).length).toBe((await rows(key!.sql)).length);
    // A mapped episode id is its own key: nothing staged.
    const mapped = resolved({ table: 'episodes', columns: { episode_id: 'id', subject_model: 'm', scenario_id: 's' } }, ['id', 'm', 's']);
    expect(keySourcesOf(mapped.r, 'kh2')[0]!.staged).toBeUndefined();
  });

  it('aggregates: row checks over converted counts (successes above trials)', async () => {
    const { r } = resolved({ table: 'aggregates', columns: { subject_model: 'm', metric: 'k', successes: 's', trials: 't' } }, ['m', 'k', 's', 't']);
    const { rowChecks } = deriveColumns(r);
    expect(rowChecks.map((c) => c.field)).toEqual(['s', 't']);
    await conn.run(stageSqlOf(r, 'agg', [], rowChecks)(relation([['gpt', 'acc', '5', '4'], ['gpt', 'f1', '3', '4']])));
    expect((await rows('SELECT "__bad" FROM agg ORDER BY rowid')).map((x) => x.__bad)).toEqual([true, false]);
    expect(rowChecks[0]!.describe('exceed', [5, 4]).message).toBe('successes 5 exceed trials 4');
  });

  it('resolvePlan runs the phases in order and returns the problems instead of a plan', () => {
    expect(resolvePlan(mapping(m), header, { file: 'f.csv', fileIndex: 2, detected: false }).plan?.stage).toBe('stage_2');
    const bad = resolvePlan(mapping({ ...m, columns: { ...m.columns, subject_model: 'model' } }), header, { file: 'f.csv', fileIndex: 0, detected: false });
    expect(bad.plan).toBeNull();
    // a column the map names but the header lacks counts as mapped: one problem, not two
    expect(bad.problems.map((p) => p.code)).toEqual(['unknownColumn']);
  });
});
