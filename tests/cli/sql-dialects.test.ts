/**
 * The aggregate SQL (sql/) parses under each engine's dialect (#28.3): a real SQL parser,
 * datafusion-sqlparser-rs through WebAssembly (`@guanmingchiu/sqlparser-ts`, a devDependency),
 * parses every shipped file under the dialects of the engines it is for, and the portable
 * `metric_rows` query of docs/scale.md too. Parsed, not executed: Spark and Trino are not
 * installed here, so this catches syntax (a missing parenthesis, a trailing comma Spark refuses, a
 * parameter marker the engine does not know), not semantics (function names, types, casts).
 * sqlparser-rs has no Trino dialect: Trino's files are parsed as ANSI and as Generic SQL.
 * Planted errors show that each dialect check fails.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { init, parse, type SUPPORTED_DIALECTS } from '@guanmingchiu/sqlparser-ts';
import { ROOT } from '../helpers/cli.ts';

type Engine = 'duckdb' | 'spark' | 'trino';
type Dialect = (typeof SUPPORTED_DIALECTS)[number];

/** sqlparser-rs dialects per engine (Databricks is Spark SQL's; Hive's parser is Spark's ancestor). */
const DIALECTS: Record<Engine, Dialect[]> = {
  duckdb: ['duckdb'],
  spark: ['spark', 'databricks', 'hive'],
  trino: ['ansi', 'generic'],
};

/** The parameter markers each engine binds (DuckDB `$name`, Spark 3.4+ `:name`, Trino `?`). */
const MARKER: Record<Engine, RegExp> = { duckdb: /^\$[a-z_]+$/, spark: /^:[a-z_]+$/, trino: /^\?$/ };

const SQL = join(ROOT, 'sql');
const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : f.endsWith('.sql') ? [join(dir, f)] : []));

/**
 * Each file with the engines it is for: `sql/<engine>/X.sql` is that engine's; `sql/X.sql` is
 * DuckDB's, and Spark's or Trino's as well when that engine has no file of its own.
 */
function variants(): { file: string; engine: Engine }[] {
  const out: { file: string; engine: Engine }[] = [];
  for (const file of walk(SQL)) {
    const rel = relative(SQL, file).split('/');
    if (rel.length === 2) out.push({ file, engine: rel[0] as Engine });
    else {
      out.push({ file, engine: 'duckdb' });
      for (const e of ['spark', 'trino'] as const) if (!walk(SQL).includes(join(SQL, e, rel[0]!))) out.push({ file, engine: e });
    }
  }
  return out;
}

/** Every parameter marker in a parsed statement list. */
function placeholders(ast: unknown, out: string[] = []): string[] {
  if (Array.isArray(ast)) for (const x of ast) placeholders(x, out);
  else if (ast && typeof ast === 'object') {
    for (const [k, v] of Object.entries(ast)) {
      if (k === 'Placeholder' && typeof v === 'string') out.push(v);
      else placeholders(v, out);
    }
  }
  return out;
}

/** The problems of `text` as `engine`'s SQL: parse errors under each of its dialects, and markers it does not bind. */
function problems(text: string, engine: Engine): string[] {
  const found: string[] = [];
  for (const d of DIALECTS[engine]) {
    try {
      const ast = parse(text, d);
      if (ast.length !== 1) found.push(`${d}: ${ast.length} statements, expected 1`);
      for (const p of placeholders(ast)) if (!MARKER[engine].test(p)) found.push(`${d}: parameter marker ${p} is not ${engine}'s`);
    } catch (e) {
      found.push(`${d}: ${(e as Error).message}`);
    }
  }
  return found;
}

beforeAll(async () => {
  await init();
});

describe('the shipped aggregate SQL parses under each engine\'s dialect', () => {
  const list = variants();

  it('finds every file and every engine', () => {
    const names = list.map((v) => `${relative(ROOT, v.file)} as ${v.engine}`).sort();
    expect(names).toEqual([
      'sql/cluster-aggregates.sql as duckdb',
      'sql/cluster-aggregates.sql as spark',
      'sql/cluster-aggregates.sql as trino',
      'sql/paired-aggregates.sql as duckdb',
      'sql/spark/paired-aggregates.sql as spark',
      'sql/trino/paired-aggregates.sql as trino',
    ]);
  });

  it.each(list.map((v) => [relative(ROOT, v.file), v.engine, v.file] as const))('%s parses as %s SQL', (_name, engine, file) => {
    expect(problems(readFileSync(file, 'utf8'), engine)).toEqual([]);
  });

  it('the portable metric_rows query of docs/scale.md parses as Spark and Trino SQL', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'scale.md'), 'utf8');
    const blocks = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.includes('portable'));
    expect(blocks).toHaveLength(1);
    for (const e of ['duckdb', 'spark', 'trino'] as const) expect(problems(blocks[0]!, e)).toEqual([]);
  });
});

describe('the check fails on planted errors', () => {
  const spark = () => readFileSync(join(SQL, 'spark', 'paired-aggregates.sql'), 'utf8');
  const trino = () => readFileSync(join(SQL, 'trino', 'paired-aggregates.sql'), 'utf8');
  const cluster = () => readFileSync(join(SQL, 'cluster-aggregates.sql'), 'utf8');

  it('a missing parenthesis or a lost keyword fails every dialect', () => {
    const noParen = spark().replace('count(*) AS k\n', 'count(* AS k\n');
    expect(noParen).not.toBe(spark());
    for (const d of DIALECTS.spark) expect(problems(noParen, 'spark').join('\n')).toMatch(new RegExp(`${d}: sql parser error: Expected: \\), found: AS`));
    const noBy = cluster().replace('GROUP BY subject_model', 'GROUP subject_model');
    for (const e of ['duckdb', 'spark', 'trino'] as const) expect(problems(noBy, e)).toHaveLength(DIALECTS[e].length);
  });

  it('a trailing comma in the select list, which DuckDB accepts, fails as Spark and ANSI SQL', () => {
    const comma = cluster().replace('AS nonbinary\n', 'AS nonbinary,\n');
    expect(comma).not.toBe(cluster());
    expect(problems(comma, 'duckdb')).toEqual([]);
    expect(problems(comma, 'spark')).toHaveLength(3);
    expect(problems(comma, 'trino').join('\n')).toMatch(/ansi: sql parser error: Expected an expression, found: FROM/);
  });

  it('a parameter marker of another engine fails', () => {
    const duckMarkers = trino().replace('?', '$a');
    expect(problems(duckMarkers, 'trino')).toEqual(['ansi: parameter marker $a is not trino\'s', 'generic: parameter marker $a is not trino\'s']);
    expect(problems(spark().replace(':b', '?'), 'spark')).toHaveLength(3);
  });
});
