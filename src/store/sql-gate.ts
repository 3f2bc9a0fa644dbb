/**
 * The query gate: the one check every piece of user SQL passes before DuckDB sees it, whether it
 * comes from `standoff sql`, its REPL or a notebook's `sql` block. Only plain reads run.
 *
 * The check is made on the text, before DuckDB prepares anything (preparing is not harmless:
 * DuckDB creates the target directory of `EXPORT DATABASE` while binding it), then again on what
 * DuckDB prepared:
 *
 * 1. The SQL is split into statements by a small lexer that knows strings ('...', E'...',
 *    $tag$...$tag$), quoted identifiers and comments (`--`, nested `/* *\/`). The split must agree
 *    with DuckDB's own statement count, or the SQL is refused.
 * 2. Each statement must start with a read keyword: SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE,
 *    SHOW, SUMMARIZE, PIVOT, UNPIVOT, a parenthesis, EXPLAIN (not EXPLAIN ANALYZE, which executes
 *    the statement it wraps, and only of a read), or PRAGMA with a read-only pragma (version,
 *    table_info, show_tables, ...). COPY, EXPORT, IMPORT, ATTACH, CREATE (SECRET, ...), INSERT,
 *    SET, CALL, LOAD, INSTALL and everything else is refused.
 * 3. No statement may call a function that writes or runs other SQL: `enable_logging` (it can
 *    write log files into any allowed directory), `enable_profiling`, `checkpoint`, `write_log`,
 *    `query` / `json_execute_serialized_sql` (they run SQL held in a string, out of this gate's
 *    sight), `arrow_scan` (raw pointers), and the others in {@link FORBIDDEN_FUNCTIONS}.
 * 4. DuckDB then prepares each statement; its type must be SELECT (EXPLAIN for an EXPLAIN).
 *
 * Behind the gate, the DuckDB instance itself is sandboxed (`open-store.ts`): external access off,
 * `allowed_directories` holding only the store, no spill directory, configuration locked.
 */
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { StatementType } from '@duckdb/node-api';
import { usageError } from '../errors.ts';

/** First keywords of statements that read. */
export const READ_KEYWORDS = ['SELECT', 'WITH', 'FROM', 'VALUES', 'TABLE', 'DESCRIBE', 'DESC', 'SHOW', 'SUMMARIZE', 'PIVOT', 'UNPIVOT', 'PIVOT_WIDER', 'PIVOT_LONGER'] as const;

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

/** Functions a read may not call: they write, change state, or run SQL this gate cannot see. */
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
  'json_execute_serialized_sql',
  'arrow_scan',
  'arrow_scan_dumb',
  'setseed',
] as const;

const READ = new Set<string>(READ_KEYWORDS);
/** First words of DuckDB statements that are not reads (refused without asking DuckDB). */
const STATEMENT_WORDS = new Set<string>(
  'ABORT ALTER ANALYZE ATTACH BEGIN CALL CHECKPOINT COMMENT COMMIT COPY CREATE DEALLOCATE DELETE DETACH DROP END EXECUTE EXPLAIN EXPORT FORCE IMPORT INSERT INSTALL LOAD MERGE PRAGMA PREPARE RESET ROLLBACK SET START TRUNCATE UNINSTALL UPDATE UPSERT USE VACUUM'.split(' '),
);
const PRAGMAS = new Set<string>(READ_PRAGMAS);
const FORBIDDEN = new Set<string>(FORBIDDEN_FUNCTIONS);

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'punct';

export interface Token {
  kind: TokenKind;
  /** Words upper-cased; quoted identifiers unquoted; strings as written. */
  text: string;
}

export interface SqlStatement {
  /** The statement's text (without the `;`). */
  text: string;
  tokens: Token[];
}

const isWordStart = (c: string) => /[A-Za-z_\u0080-\uffff]/.test(c);
const isWordPart = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c);

/**
 * Splits SQL into statements and their tokens (comments and whitespace dropped; statements with no
 * token are dropped, as DuckDB drops them). Throws `sql.syntax` on an unterminated string, quoted
 * identifier or comment.
 */
export function splitSql(sql: string): SqlStatement[] {
  const out: SqlStatement[] = [];
  let tokens: Token[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  const unterminated = (what: string) => usageError('sql.syntax', `sql syntax error: unterminated ${what}`);
  const finish = (end: number) => {
    if (tokens.length > 0) out.push({ text: sql.slice(start, end).trim(), tokens });
    tokens = [];
    start = end + 1;
  };
  while (i < n) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === '/' && sql[i + 1] === '*') (depth++, (i += 2));
        else if (sql[i] === '*' && sql[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
      if (depth > 0) throw unterminated('comment');
    } else if (c === "'" || ((c === 'E' || c === 'e') && sql[i + 1] === "'")) {
      const escapes = c !== "'";
      let j = escapes ? i + 2 : i + 1;
      for (;;) {
        if (j >= n) throw unterminated('string');
        if (escapes && sql[j] === '\\') j += 2;
        else if (sql[j] === "'" && sql[j + 1] === "'") j += 2;
        else if (sql[j] === "'") break;
        else j++;
      }
      tokens.push({ kind: 'string', text: sql.slice(i, j + 1) });
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      let name = '';
      for (;;) {
        if (j >= n) throw unterminated('quoted identifier');
        if (sql[j] === '"' && sql[j + 1] === '"') (name += '"'), (j += 2);
        else if (sql[j] === '"') break;
        else name += sql[j++];
      }
      tokens.push({ kind: 'quoted', text: name });
      i = j + 1;
    } else if (c === '$' && /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i, i + 66))) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))![0];
      const end = sql.indexOf(tag, i + tag.length);
      if (end < 0) throw unterminated('dollar-quoted string');
      tokens.push({ kind: 'string', text: sql.slice(i, end + tag.length) });
      i = end + tag.length;
    } else if (c === ';') {
      finish(i);
      i++;
    } else if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordPart(sql[j]!)) j++;
      tokens.push({ kind: 'word', text: sql.slice(i, j).toUpperCase() });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < n && /[0-9A-Za-z_.]/.test(sql[j]!)) j++;
      tokens.push({ kind: 'number', text: sql.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'punct', text: c });
      i++;
    }
  }
  finish(n);
  return out;
}

const refuse = (index: number, why: string) =>
  usageError('sql.notReadOnly', `sql refused: statement ${index + 1} ${why}; standoff sql runs only plain reads (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, PIVOT, EXPLAIN without ANALYZE, read-only PRAGMAs)`);

const isName = (t: Token | undefined): t is Token => t !== undefined && (t.kind === 'word' || t.kind === 'quoted');

/**
 * Checks one statement's text (step 2 and 3 of the module comment); returns whether DuckDB should
 * prepare it as an EXPLAIN. Throws `sql.notReadOnly`.
 */
export function checkStatement(stmt: SqlStatement, index: number): { explain: boolean } {
  const t = stmt.tokens;
  let k = 0;
  const first = t[0]!;
  let explain = false;
  if (first.kind === 'word' && first.text === 'EXPLAIN') {
    explain = true;
    k = 1;
    const next = t[k];
    if (next?.kind === 'word' && (next.text === 'ANALYZE' || next.text === 'ANALYSE')) {
      throw refuse(index, 'is EXPLAIN ANALYZE, which executes the statement it explains');
    }
    if (next?.kind === 'punct' && next.text === '(') {
      // EXPLAIN (option, ...): refused when any option is ANALYZE.
      let depth = 0;
      for (; k < t.length; k++) {
        const x = t[k]!;
        if (x.kind === 'punct' && x.text === '(') depth++;
        else if (x.kind === 'punct' && x.text === ')' && --depth === 0) break;
        else if (x.kind === 'word' && (x.text === 'ANALYZE' || x.text === 'ANALYSE')) {
          throw refuse(index, 'is EXPLAIN (ANALYZE), which executes the statement it explains');
        }
      }
      k++;
    }
  }
  const head = t[k];
  if (!head) throw refuse(index, 'is an EXPLAIN of nothing');
  const startsRead = (head.kind === 'word' && READ.has(head.text)) || (head.kind === 'punct' && head.text === '(');
  if (!startsRead) {
    if (head.kind === 'word' && head.text === 'PRAGMA' && !explain) {
      const name = t[k + 1];
      if (!isName(name) || !PRAGMAS.has(name.text.toLowerCase())) {
        throw refuse(index, `is PRAGMA ${name?.text.toLowerCase() ?? ''}, which is not one of the read-only pragmas (${READ_PRAGMAS.join(', ')})`);
      }
    } else {
      const what = head.kind === 'word' ? `a ${head.text}${explain ? ' (under EXPLAIN)' : ''} statement` : `a statement starting with "${head.text}"`;
      throw refuse(index, `is ${what}`);
    }
  }
  for (let j = k; j < t.length - 1; j++) {
    const x = t[j]!;
    const open = t[j + 1]!;
    if (isName(x) && open.kind === 'punct' && open.text === '(' && FORBIDDEN.has(x.text.toLowerCase())) {
      throw refuse(index, `calls ${x.text.toLowerCase()}(), which ${x.text.toLowerCase() === 'query' || x.text.toLowerCase() === 'json_execute_serialized_sql' ? 'runs SQL held in a string' : 'writes or changes the database state'}`);
    }
  }
  return { explain };
}

/**
 * The gate (see the module comment): checks every statement of `sql`, then prepares each on
 * `conn` and checks its type. Returns the prepared statements, in order; runs none of them.
 * Throws `sql.empty`, `sql.notReadOnly`, `sql.syntax` (or DuckDB's own parse/bind errors).
 */
export async function prepareReadOnly(conn: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement[]> {
  const statements = splitSql(sql);
  if (statements.length === 0) throw usageError('sql.empty', 'sql: no statement given');
  let checks: { explain: boolean }[];
  try {
    checks = statements.map((s, i) => checkStatement(s, i));
  } catch (refusal) {
    // A typo ("SELEC 1") deserves DuckDB's syntax error rather than a refusal: let DuckDB parse
    // what starts with a word that begins no statement (DuckDB's parser reads IMPORT's files, so
    // known statements are refused without it).
    const first = statements.find((x) => !READ.has(x.tokens[0]!.text) && !STATEMENT_WORDS.has(x.tokens[0]!.text));
    if (first) await conn.extractStatements(sql);
    throw refusal;
  }
  const extracted = await conn.extractStatements(sql);
  if (extracted.count !== statements.length) {
    throw usageError('sql.notReadOnly', `sql refused: DuckDB reads ${extracted.count} statement(s) where standoff reads ${statements.length}; write the query more plainly`);
  }
  const prepared: DuckDBPreparedStatement[] = [];
  for (let i = 0; i < extracted.count; i++) {
    const p = await extracted.prepare(i);
    const want = checks[i]!.explain ? StatementType.EXPLAIN : StatementType.SELECT;
    if (p.statementType !== want) {
      throw refuse(i, `is a ${StatementType[p.statementType] ?? 'non-select'} statement`);
    }
    prepared.push(p);
  }
  return prepared;
}
