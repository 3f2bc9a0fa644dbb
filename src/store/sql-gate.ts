/**
 * The query gate: the one check every piece of user SQL passes before DuckDB runs it, whether it
 * comes from `standoff sql`, its REPL, a notebook's `sql` block or a SQL metric file
 * (`<store>/metrics/*.sql`, `--metric-sql`). Only plain reads run.
 *
 * One tokenizer: DuckDB's. The gate never reads comments, quotes or statement boundaries itself;
 * it asks DuckDB's parser (`json_serialize_sql`, a pure parse: no binding, no file access), so a
 * `--` comment ended by `\r`, a `$é$` dollar quote, an `E''` string or Unicode means to the gate
 * exactly what it means to DuckDB.
 *
 * 1. A NUL anywhere is refused (DuckDB's parser would end the text there).
 * 2. DuckDB's parser must read every statement as a SELECT (which covers WITH, FROM-first, VALUES,
 *    TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT ... IN, a parenthesis), or the text must be one
 *    `EXPLAIN [(FORMAT f)]` followed by such a SELECT (checked by parsing what follows the
 *    keyword), or one read-only `PRAGMA` (`version`, `table_info('t')`, ...). Everything else
 *    (COPY, EXPORT/IMPORT DATABASE, ATTACH, SET, CALL, CREATE, EXPLAIN ANALYZE ...) is refused.
 *    The only text the gate matches itself is that fixed prefix: ASCII words, spaces and
 *    parentheses, with no comment or quote, so DuckDB cannot read it differently.
 * 3. The parse tree of every SELECT is walked: no function that writes, changes settings or runs
 *    SQL held in a string ({@link isForbiddenFunction}), however it is spelled, qualified or
 *    nested.
 * 4. DuckDB then extracts the statements of the text (the count must be the parser's) and prepares
 *    each; its type must be SELECT (EXPLAIN for an EXPLAIN). Nothing is prepared before steps 1-3
 *    passed (preparing is not harmless: binding `EXPORT DATABASE` creates its directory).
 *
 * Behind the gate, the DuckDB instance is sandboxed (`open-store.ts`): it may open only the files
 * the views read, external access is off, logging and profiling stay off and in memory, and the
 * configuration is locked, so even a statement that passed the gate cannot create a file.
 */
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { StatementType } from '@duckdb/node-api';
import { usageError } from '../errors.ts';

/** Pragmas that only read (each becomes a SELECT over a `pragma_*` table function). */
export const READ_PRAGMAS = [
  'version',
  'platform',
  'user_agent',
  'database_list',
  'database_size',
  'table_info',
  'show',
  'show_tables',
  'show_tables_expanded',
  'show_databases',
  'functions',
  'collations',
  'storage_info',
  'metadata_info',
] as const;

/**
 * Functions a read may not call: they write files, change settings or state, or run SQL this gate
 * cannot see. Every DuckDB function named `enable_*`, `disable_*`, `verify_*` or `force_*` is
 * refused as well (the settings toggles: logging, profiling, checkpoints, verification, ...).
 */
export const FORBIDDEN_FUNCTIONS = [
  'enable_logging',
  'disable_logging',
  'truncate_duckdb_logs',
  'write_log',
  'enable_profiling',
  'disable_profiling',
  'enable_peg_parser',
  'disable_peg_parser',
  'checkpoint',
  'force_checkpoint',
  'query',
  'query_table',
  'json_execute_serialized_sql',
  'arrow_scan',
  'arrow_scan_dumb',
  'setseed',
  'import_database',
  'copy_database',
  'add_parquet_key',
  'read_duckdb',
  'all_profiling_output',
] as const;
const FORBIDDEN = new Set<string>(FORBIDDEN_FUNCTIONS);
const FORBIDDEN_PREFIX = /^(enable|disable|verify|force)_/;
const RUNS_SQL = new Set(['query', 'query_table', 'json_execute_serialized_sql']);

/** True for a function name (any case) the gate refuses. */
export function isForbiddenFunction(name: string): boolean {
  const n = name.toLowerCase();
  return FORBIDDEN.has(n) || FORBIDDEN_PREFIX.test(n);
}

const PRAGMAS = new Set<string>(READ_PRAGMAS);
/** DuckDB's (Postgres's) whitespace; `\s` would also match spaces DuckDB does not skip. */
const WS = '[ \\t\\n\\r\\f]';
/** `EXPLAIN` or `EXPLAIN (FORMAT f)` then whitespace: what follows is parsed by DuckDB. */
const EXPLAIN_PREFIX = new RegExp(`^${WS}*EXPLAIN(?:${WS}*\\(${WS}*FORMAT${WS}+[A-Za-z]+${WS}*\\))?${WS}+`, 'i');
/** A whole read-only PRAGMA: `PRAGMA name`, or `PRAGMA name('table')` (a plain string, no quote inside). */
const PRAGMA_WHOLE = new RegExp(`^${WS}*PRAGMA${WS}+([A-Za-z_]+)(?:${WS}*\\(${WS}*'[^']*'${WS}*\\))?${WS}*;?${WS}*$`, 'i');
const EXPLAIN_ANALYZE = new RegExp(`^${WS}*EXPLAIN${WS}*(?:\\([^)]*)?\\bANALY[SZ]E\\b`, 'i');

const READ_FORMS = 'SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, PIVOT, EXPLAIN without ANALYZE, read-only PRAGMAs';
const refuse = (what: string) => usageError('sql.notReadOnly', `sql refused: ${what}; standoff sql runs only plain reads (${READ_FORMS})`);

interface Parsed {
  error: boolean;
  error_type?: string;
  error_message?: string;
  statements?: unknown[];
}

/** DuckDB's parse of `sql` (json_serialize_sql: the parser alone; nothing bound, no file opened). */
export async function parseSql(conn: DuckDBConnection, sql: string): Promise<Parsed> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS j', [sql]);
  return JSON.parse(String(reader.getRows()[0]![0])) as Parsed;
}

/** Every function name called anywhere in a serialized parse tree. */
export function calledFunctions(tree: unknown, out: string[] = []): string[] {
  if (Array.isArray(tree)) for (const x of tree) calledFunctions(x, out);
  else if (tree !== null && typeof tree === 'object') {
    for (const [k, v] of Object.entries(tree)) {
      if (k === 'function_name' && typeof v === 'string') out.push(v);
      else calledFunctions(v, out);
    }
  }
  return out;
}

function checkFunctions(statements: unknown[], offset = 0): void {
  statements.forEach((s, i) => {
    const bad = calledFunctions(s).find(isForbiddenFunction);
    if (bad === undefined) return;
    const n = bad.toLowerCase();
    throw refuse(`statement ${i + 1 + offset} calls ${n}(), which ${RUNS_SQL.has(n) ? 'runs SQL held in a string' : 'writes or changes the database state'}`);
  });
}

/** Names the refused statement for the message (cosmetic: the decision was DuckDB's parse). */
function describeRefusal(sql: string): string {
  if (EXPLAIN_ANALYZE.test(sql)) return 'statement 1 is EXPLAIN ANALYZE, which executes the statement it explains';
  const word = new RegExp(`^${WS}*([A-Za-z]+)`).exec(sql)?.[1]?.toUpperCase();
  const pragma = PRAGMA_WHOLE.exec(sql)?.[1] ?? new RegExp(`^${WS}*PRAGMA${WS}+([A-Za-z_]+)`, 'i').exec(sql)?.[1];
  if (word === 'PIVOT' || word === 'UNPIVOT') return `statement 1 is a ${word} without IN (...), which DuckDB runs as a CREATE TYPE first; list the values (PIVOT t ON c IN ('a', 'b') USING ...)`;
  if (word === 'PRAGMA') return `statement 1 is PRAGMA ${pragma?.toLowerCase() ?? ''}, which is not one of the read-only pragmas (${READ_PRAGMAS.join(', ')})`;
  if (word && !['SELECT', 'WITH', 'FROM', 'VALUES', 'TABLE', 'DESCRIBE', 'SHOW', 'SUMMARIZE'].includes(word)) return `statement 1 is a ${word} statement`;
  return 'DuckDB parses a statement of it that is not a plain read';
}

/** Step 1-3 of the module comment: what the text is, per DuckDB's parser. */
async function classify(conn: DuckDBConnection, sql: string): Promise<{ count: number; type: StatementType }> {
  if (sql.includes('\u0000')) throw usageError('sql.nul', 'sql refused: the query holds a NUL character, where DuckDB would end it; remove it');
  const parsed = await parseSql(conn, sql);
  if (!parsed.error) {
    const statements = parsed.statements ?? [];
    if (statements.length === 0) throw usageError('sql.empty', 'sql: no statement given');
    checkFunctions(statements);
    return { count: statements.length, type: StatementType.SELECT };
  }
  if (parsed.error_type === 'parser') throw usageError('sql.syntax', `sql syntax error: Parser Error: ${parsed.error_message ?? 'unreadable SQL'}`);
  const explain = EXPLAIN_PREFIX.exec(sql);
  if (explain && !EXPLAIN_ANALYZE.test(sql)) {
    const inner = await parseSql(conn, sql.slice(explain[0].length));
    if (!inner.error && inner.statements?.length === 1) {
      checkFunctions(inner.statements);
      return { count: 1, type: StatementType.EXPLAIN };
    }
  }
  const pragma = PRAGMA_WHOLE.exec(sql);
  if (pragma && PRAGMAS.has(pragma[1]!.toLowerCase())) return { count: 1, type: StatementType.SELECT };
  throw refuse(describeRefusal(sql));
}

/**
 * The gate (see the module comment): checks `sql`, then prepares each statement on `conn` and
 * checks its type. Returns the prepared statements, in order; runs none of them.
 * Throws `sql.empty`, `sql.nul`, `sql.notReadOnly`, `sql.syntax` (or DuckDB's own bind errors).
 */
export async function prepareReadOnly(conn: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement[]> {
  const { count, type } = await classify(conn, sql);
  const extracted = await conn.extractStatements(sql);
  if (extracted.count !== count) {
    throw usageError('sql.notReadOnly', `sql refused: DuckDB extracts ${extracted.count} statement(s) where its parser read ${count}; write the query more plainly`);
  }
  const prepared: DuckDBPreparedStatement[] = [];
  for (let i = 0; i < count; i++) {
    const p = await extracted.prepare(i);
    if (p.statementType !== type) throw refuse(`statement ${i + 1} is a ${StatementType[p.statementType] ?? 'non-select'} statement`);
    prepared.push(p);
  }
  return prepared;
}
