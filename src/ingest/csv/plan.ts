/**
 * From a mapping and a file's header to SQL: `resolvePlan` finds each source column and builds
 * the file's staging SELECT (every mapped cell converted by `csv-values.ts`, scores, wide judge
 * columns, metadata, derived keys, and a `__bad` flag), the checks that explain a bad row, the key
 * columns for duplicate checks, the row counts, and one SELECT per output table. Everything that
 * touches a row runs in DuckDB; this module only writes SQL and, for the rows that failed, turns
 * reason codes into messages (`describeRow`).
 *
 * Value maps are text substitutions applied before the conversion; constants go through the same
 * conversion as a cell. Both are checked once per file (`literalChecks`), at line 1.
 */
import { fileColumns, type SqlColumn, type TableName } from '../../schema/tables.ts';
import { quoteIdent, quoteLiteral } from '../../store/duckdb.ts';
import { convertSql, describeProblem, scoreSql, show, trimmed, type ValueKind } from '../../store/csv-values.ts';
import { csvColumn, type CsvFileProblem } from '../../store/read-csv.ts';
import { ALIASES, DEFAULTS, REQUIRED, fieldsOf, type FieldSpec, type Mapping, type MappedTable } from './mapping.ts';

/** Output tables of a CSV ingest. */
export type OutTable = 'episodes' | 'scores' | 'judgments' | 'probe_answers' | 'probe_decisions' | 'aggregates';

/** A check of one cell: `why` (over the raw `c<i>` columns) is NULL or a reason code. */
interface CellCheck {
  field: string;
  order: number;
  kind: ValueKind;
  options?: readonly string[];
  why: string;
  raw: string;
  /** The cheap test used while loading (over the staged value and the raw columns). */
  bad: string;
}

/** A check of a row's converted values (over the staging columns). */
interface RowCheck {
  field: string | null;
  order: number;
  why: string;
  values: string[];
  describe: (reason: string, values: unknown[]) => { code: string; message: string };
}

/** A constant or value-map entry, checked once (line 1). */
export interface LiteralCheck {
  why: string;
  kind: ValueKind;
  options?: readonly string[];
  text: string;
  field: string;
  /** Prefix of the message, e.g. `values.epoch["first"]`. */
  label: string;
}

/** Rows of a table's keys from one file, for duplicate checks. */
export interface KeySource {
  table: 'episodes' | 'judgments' | 'probe_answers' | 'probe_decisions' | 'aggregates';
  /** SELECT of (r: row, o: order, k: key text) from the staging table, bad rows left out. */
  sql: string;
  /** What a key is, in messages (`episode`, `judgment (episode, scorer, judge)`). */
  what: string;
  field: string | null;
}

export interface FilePlan {
  file: string;
  fileIndex: number;
  table: MappedTable;
  header: string[];
  mapping: Mapping;
  /** Staging table name. */
  stage: string;
  /** `CREATE TABLE <stage> AS ...` over a `read_csv(...)` relation (pass its SQL). */
  stageSql(relation: string): string;
  /** SELECT of the bad rows (at most `limit`) with their reasons, over the stage joined to the raw table. */
  explainSql(raw: string, limit: number): string;
  /** Problems of one explained row (`row` from `explainSql`), with `line` its physical line. */
  describeRow(row: Record<string, unknown>, line: number): CsvFileProblem[];
  literalChecks: LiteralCheck[];
  keys: KeySource[];
  /** SELECT of the counts: n (rows) and one per output table, plus max_epoch. */
  countsSql: string;
  /** SELECT per output table (file columns, schema order); `lines` names the line map table (aggregates). */
  outputs(lines: string): Partial<Record<OutTable, string[]>>;
  /** Source column indexes the staging table reads. */
  sourceColumns: number[];
  /** Defaults applied (column -> documented default), for `runs.notes`. */
  defaultsUsed: Record<string, string>;
  /** Header columns kept in `episodes.metadata`. */
  metadataColumns: string[];
  /** Header columns not used at all. */
  ignoredColumns: string[];
}

const q = quoteIdent;
const lit = quoteLiteral;

/** A SQL literal of `type` (NULL typed). */
function typedNull(type: string): string {
  return `CAST(NULL AS ${type})`;
}

/** The text a map value or constant stands for, or an error. */
function literalText(f: FieldSpec, v: string | number | boolean | null, numericTarget: boolean): { text: string | null } | { error: string } {
  if (v === null) return f.nullable || numericTarget ? { text: null } : { error: `"${f.name}" cannot be null` };
  if (typeof v === 'string') return { text: v };
  if (typeof v === 'number') {
    if (f.kind === 'bool' && (v === 0 || v === 1)) return { text: v === 1 ? 'true' : 'false' };
    if (f.kind === 'text' || f.kind === 'int' || f.kind === 'bigint' || f.kind === 'num' || numericTarget) return { text: String(v) };
    return { error: `a number is not a valid ${f.kind} value for "${f.name}"` };
  }
  if (f.kind === 'bool') return { text: v ? 'true' : 'false' };
  return { error: `a boolean is not a valid ${f.kind} value for "${f.name}"` };
}

const VERDICTS = `('ALIGNED', 'MISALIGNED', 'ERROR')`;

/** The flag that maps a schema column (see `FLAG_COLUMNS` in mapping.ts). */
const FIELD_FLAGS: Record<string, string> = { 'episodes.subject_model': '--subject', 'episodes.scenario_id': '--item', 'episodes.epoch': '--epoch' };
/** Every flag that maps columns, for messages. */
const FLAG_HINT = 'flags: --subject, --item, --epoch, --scores, --delimiter; or --map MAP.json';
/** ` (--subject)` for a column a flag named, from the `what` of `need`. */
const flagOf = (what: string) => (FIELD_FLAGS[what] ? ` (${FIELD_FLAGS[what]})` : what.startsWith('score ') ? ' (--scores)' : what.startsWith('judge ') ? ' (--judge-columns)' : '');

/**
 * Resolves a mapping against a header. Returns the plan, or the problems (line 1) that make the
 * file unreadable with this mapping. `detected`: the mapping came from the header (for hints).
 */
export function resolvePlan(
  mapping: Mapping,
  header: string[],
  opts: { file: string; fileIndex: number; detected: boolean; indexColumn?: number; tag?: string },
): { plan: FilePlan | null; problems: CsvFileProblem[] } {
  const { file, fileIndex } = opts;
  const table = mapping.table;
  const specs = fieldsOf(table);
  const problems: CsvFileProblem[] = [];
  const fail = (field: string | null, code: string, message: string, order = -1) => problems.push({ file, fileIndex, line: 1, field, code, message, order });
  const col = new Map<string, number>();
  header.forEach((h, i) => {
    if (i === opts.indexColumn) return;
    if (h.trim() === '') {
      fail(
        `column ${i + 1}`,
        'unnamedColumn',
        `column ${i + 1} of the header has no name; name it, or write the file without it (pandas: to_csv(index=False); R: write.csv(row.names = FALSE)); only a first column holding 0..n-1 or 1..n is skipped as a row index`,
        i,
      );
    } else if (col.has(h)) fail(h, 'duplicateColumn', `column name appears twice in the header (columns ${col.get(h)! + 1} and ${i + 1})`, i);
    else col.set(h, i);
  });
  const headerList = header.map((h) => JSON.stringify(h)).join(', ');
  const used = new Set<number>();
  const need = (source: string, what: string): number => {
    const i = col.get(source);
    if (i === undefined) {
      const whose = opts.detected ? `column "${source}"${flagOf(what)}` : `the map's column "${source}"`;
      fail(source, 'unknownColumn', `${whose} (for ${what}) is not in the header (${headerList})${opts.detected ? `; ${FLAG_HINT}` : ''}`);
      return -1;
    }
    used.add(i);
    return i;
  };
  const c = (i: number) => q(csvColumn(i));

  const inner: string[] = [];
  const cellChecks: CellCheck[] = [];
  const literalChecks: LiteralCheck[] = [];
  /** SQL (in the outer SELECT and outputs) of each provided schema column. */
  const fx = new Map<string, string>();
  const provided = new Set<string>();
  const sourceOf = new Map<string, string>();
  const verdictOnly = table === 'judgments' && mapping.columns.verdict !== undefined && mapping.columns.value === undefined;

  for (const f of specs) {
    const source = mapping.columns[f.name];
    const numericTarget = table === 'judgments' && f.name === 'value';
    const kind: ValueKind = numericTarget ? 'score' : f.kind;
    const required = !f.nullable || (verdictOnly && f.name === 'verdict');
    if (source !== undefined) {
      const index = need(source, `${table}.${f.name}`);
      provided.add(f.name);
      sourceOf.set(f.name, source);
      if (index < 0) continue;
      const vmap = mapping.values[f.name] ?? {};
      const whens: string[] = [];
      let emptyKey: string | null = null;
      for (const [k, v] of Object.entries(vmap)) {
        const t = literalText(f, v, numericTarget);
        if ('error' in t) {
          fail(source, 'badMap', `values.${f.name}[${JSON.stringify(k)}]: ${t.error}`, index);
          continue;
        }
        if (k === '') emptyKey = t.text;
        whens.push(`WHEN ${lit(k)} THEN ${t.text === null ? 'NULL' : lit(t.text)}`);
        if (t.text !== null) {
          const conv = convertSql(kind, lit(t.text), { required: false, options: f.options });
          literalChecks.push({ why: conv.why, kind, options: f.options, text: t.text, field: source, label: `values.${f.name}[${JSON.stringify(k)}]` });
        }
      }
      const raw = whens.length > 0 ? `(CASE ${emptyKey !== null || Object.hasOwn(vmap, '') ? `coalesce(${c(index)}, '')` : c(index)} ${whens.join(' ')} ELSE ${c(index)} END)` : c(index);
      const conv = convertSql(kind, raw, { required, options: f.options });
      const name = `v_${f.name}`;
      inner.push(`${conv.value} AS ${q(name)}`);
      cellChecks.push({ field: source, order: index, kind, options: f.options, why: conv.why, raw: c(index), bad: conv.bad(`(${conv.value})`) });
      fx.set(f.name, q(name));
    } else if (Object.hasOwn(mapping.constants, f.name)) {
      provided.add(f.name);
      const t = literalText(f, mapping.constants[f.name]!, numericTarget);
      if ('error' in t) {
        fail(f.name, 'badMap', `constants.${f.name}: ${t.error}`);
        continue;
      }
      if (t.text === null) fx.set(f.name, 'NULL');
      else {
        const conv = convertSql(kind, lit(t.text), { required: false, options: f.options });
        literalChecks.push({ why: conv.why, kind, options: f.options, text: t.text, field: f.name, label: `constants.${f.name}` });
        fx.set(f.name, conv.value);
      }
    }
  }

  const missing = (name: string, also?: string) => {
    const aliases = ALIASES[table][name] ?? [name];
    const flag = FIELD_FLAGS[`${table}.${name}`];
    const hint = opts.detected
      ? `recognised names: ${aliases.join(', ')}; the header has ${headerList}; ${flag ? `name the column with ${flag} COLUMN (${FLAG_HINT})` : FLAG_HINT}`
      : `map it in "columns" or "constants" (the header has ${headerList})`;
    fail(name, 'missingColumn', `required column missing${also ? ` (${also})` : ''}: ${hint}`);
  };
  for (const name of REQUIRED[table]) if (!provided.has(name)) missing(name);
  if (table === 'probe_answers' && provided.has('decision') !== provided.has('gold_actions')) missing(provided.has('decision') ? 'gold_actions' : 'decision', 'a decision needs its gold actions, and gold actions their decision');
  if (table === 'judgments') {
    if (!provided.has('episode_id')) for (const name of ['subject_model', 'scenario_id']) if (!provided.has(name)) missing(name, 'or episode_id');
    if (!provided.has('verdict') && !provided.has('value')) missing('verdict', 'or value');
  }

  // Defaults for what is neither mapped nor constant.
  const defaultsUsed: Record<string, string> = {};
  for (const f of specs) {
    if (provided.has(f.name)) continue;
    const d = DEFAULTS[table][f.name];
    if (d !== undefined) defaultsUsed[f.name] = d;
    if (f.name === 'epoch') fx.set('epoch', 'CAST(1 AS INTEGER)');
    else if (table === 'episodes' && f.name === 'status') fx.set('status', `'valid'`);
    else if (table === 'judgments' && f.name === 'scorer') fx.set('scorer', `'reasoning_action_alignment'`);
    else if (table === 'judgments' && f.name === 'excluded_self') fx.set('excluded_self', 'false');
    else if (table === 'probe_answers' && f.name === 'question') fx.set('question', `''`);
  }

  // Scores, wide judges, metadata (episodes).
  const scoreCols: { scorer: string; k: number; answer: boolean; explanation: boolean }[] = [];
  mapping.scores.forEach((s, k) => {
    const index = need(s.column, `score ${s.scorer}`);
    const answer = s.answer === undefined ? -1 : need(s.answer, `score ${s.scorer} answer`);
    const explanation = s.explanation === undefined ? -1 : need(s.explanation, `score ${s.scorer} explanation`);
    if (index < 0) return;
    const sc = scoreSql(c(index), s.values);
    inner.push(`${sc.value} AS ${q(`s${k}`)}`, `${sc.present} AS ${q(`p${k}`)}`);
    cellChecks.push({ field: s.column, order: index, kind: 'score', why: sc.why, raw: c(index), bad: sc.bad(`(${sc.value})`) });
    scoreCols.push({ scorer: s.scorer, k, answer: answer >= 0, explanation: explanation >= 0 });
    if (answer >= 0) inner.push(`${c(answer)} AS ${q(`a${k}`)}`);
    if (explanation >= 0) inner.push(`${c(explanation)} AS ${q(`x${k}`)}`);
  });
  const judgeCols: { column: string; j: number }[] = [];
  if (mapping.judges) {
    mapping.judges.columns.forEach((name, j) => {
      const index = need(name, `judge ${name}`);
      if (index < 0) return;
      const t = `upper(${trimmed(c(index))})`;
      const sc = scoreSql(c(index), mapping.judges!.values);
      const jv = `CASE WHEN ${t} IN ${VERDICTS} THEN CASE ${t} WHEN 'ALIGNED' THEN CAST(1 AS DOUBLE) WHEN 'MISALIGNED' THEN CAST(0 AS DOUBLE) END ELSE ${sc.value} END`;
      inner.push(
        `${jv} AS ${q(`jv${j}`)}`,
        `CASE WHEN ${t} IN ${VERDICTS} THEN ${t} END AS ${q(`jr${j}`)}`,
        `${sc.present} AS ${q(`jp${j}`)}`,
      );
      cellChecks.push({ field: name, order: index, kind: 'score', why: `CASE WHEN ${t} IN ${VERDICTS} THEN NULL ELSE ${sc.why} END`, raw: c(index), bad: sc.bad(`(${jv})`) });
      judgeCols.push({ column: name, j });
    });
  }
  let metadataColumns: string[] = [];
  if (table === 'episodes' && !provided.has('metadata')) {
    if (Array.isArray(mapping.metadata)) {
      for (const m of mapping.metadata) if (need(m, 'metadata') >= 0) metadataColumns.push(m);
    } else if (mapping.metadata) {
      metadataColumns = header.filter((h, i) => !used.has(i) && col.get(h) === i);
    }
    metadataColumns.forEach((m) => used.add(col.get(m)!));
    if (metadataColumns.length > 0) {
      const parts = metadataColumns.map((m) => {
        const x = c(col.get(m)!);
        return `CASE WHEN ${x} IS NOT NULL THEN ${lit(`${JSON.stringify(m)}:`)} || CAST(to_json(${x}) AS VARCHAR) END`;
      });
      inner.push(`nullif('{' || concat_ws(',', ${parts.join(', ')}) || '}', '{}') AS "__meta"`);
      fx.set('metadata', '"__meta"');
    }
  }
  const ignoredColumns = header.filter((_, i) => !used.has(i) && i !== opts.indexColumn);

  if (problems.length > 0) return { plan: null, problems };

  // The outer SELECT: derived keys and values, row checks, the bad flag.
  const get = (name: string, type: string) => fx.get(name) ?? typedNull(type);
  const outer: string[] = [];
  const rowChecks: RowCheck[] = [];
  const label = (name: string) => sourceOf.get(name) ?? name;
  const orderOf = (name: string) => (sourceOf.has(name) ? (col.get(sourceOf.get(name)!) ?? -1) : -1);
  const idOf = () => `concat(${get('subject_model', 'VARCHAR')}, '/', ${get('scenario_id', 'VARCHAR')}, '/', ${get('epoch', 'INTEGER')})`;
  // The episode id, over the staged columns: computed where it is used (cheaper than staging a
  // million distinct strings).
  const ID = provided.has('episode_id') ? get('episode_id', 'VARCHAR') : idOf();
  if (table === 'probe_answers') outer.push(`${provided.has('state_id') ? get('state_id', 'VARCHAR') : `concat(${get('scenario_id', 'VARCHAR')}, '/', ${get('epoch', 'INTEGER')})`} AS "__state"`);
  if (table === 'judgments') {
    const hasVerdict = provided.has('verdict');
    const hasValue = provided.has('value');
    if (hasVerdict && !hasValue) {
      const t = `upper(${trimmed(get('verdict', 'VARCHAR'))})`;
      const sc = scoreSql(get('verdict', 'VARCHAR'));
      outer.push(`${get('verdict', 'VARCHAR')} AS "__verdict"`, `CASE WHEN ${t} IN ${VERDICTS} THEN CASE ${t} WHEN 'ALIGNED' THEN CAST(1 AS DOUBLE) WHEN 'MISALIGNED' THEN CAST(0 AS DOUBLE) END ELSE ${sc.value} END AS "__value"`);
      rowChecks.push({
        field: label('verdict'),
        order: orderOf('verdict'),
        why: `CASE WHEN ${t} NOT IN ${VERDICTS} AND (${sc.why} IS NOT NULL OR NOT ${sc.present}) THEN 'verdict' END`,
        values: [get('verdict', 'VARCHAR')],
        describe: (_r, [v]) => ({ code: 'badValue', message: `cannot derive a value from verdict ${show(String(v ?? ''))} (use ALIGNED/MISALIGNED/ERROR or map a value column)` }),
      });
    } else if (hasValue && !hasVerdict) {
      const v = get('value', 'DOUBLE');
      outer.push(`CASE WHEN ${v} IS NULL THEN 'ERROR' WHEN ${v} = 1 THEN 'ALIGNED' WHEN ${v} = 0 THEN 'MISALIGNED' END AS "__verdict"`, `${v} AS "__value"`);
    } else outer.push(`${get('verdict', 'VARCHAR')} AS "__verdict"`, `${get('value', 'DOUBLE')} AS "__value"`);
  }
  if (table === 'aggregates') {
    const s = get('successes', 'INTEGER');
    const t = get('trials', 'INTEGER');
    rowChecks.push({
      field: label('successes'),
      order: orderOf('successes'),
      why: `CASE WHEN ${s} < 0 THEN 'successes' WHEN ${t} >= 0 AND ${s} > ${t} THEN 'exceed' END`,
      values: [s, t],
      describe: (r, [sv, tv]) =>
        r === 'successes'
          ? { code: 'badCount', message: `successes must be a non-negative integer, got ${sv}` }
          : { code: 'badCount', message: `successes ${sv} exceed trials ${tv}` },
    });
    rowChecks.push({
      field: label('trials'),
      order: orderOf('trials'),
      why: `CASE WHEN ${s} >= 0 AND ${t} < 0 THEN 'trials' END`,
      values: [t],
      describe: (_r, [tv]) => ({ code: 'badCount', message: `trials must be a non-negative integer, got ${tv}` }),
    });
  }
  const cellBad = cellChecks.length > 0 ? cellChecks.map((k) => k.bad).join(' OR ') : 'false';
  const rowBad = rowChecks.length > 0 ? rowChecks.map((k) => `(${k.why}) IS NOT NULL`).join(' OR ') : 'false';
  const stage = `stage_${opts.tag ?? fileIndex}`;
  const sourceColumns = sourceColumnsOf(used);

  // One level where it can be: the cell checks repeat the conversions, which DuckDB computes once
  // (common subexpressions); derived columns and row checks need a second level.
  const stageSql = (relation: string) => {
    const cells = `${[...inner, `coalesce(${cellBad}, false) AS "__cellbad"`].join(', ')}`;
    if (outer.length === 0 && rowChecks.length === 0) return `CREATE OR REPLACE TABLE ${q(stage)} AS SELECT ${cells}, "__cellbad" AS "__bad" FROM ${relation}`;
    const middle = `SELECT *${outer.length ? `, ${outer.join(', ')}` : ''} FROM (SELECT ${cells} FROM ${relation})`;
    return `CREATE OR REPLACE TABLE ${q(stage)} AS SELECT *, "__cellbad" OR coalesce(${rowBad}, false) AS "__bad" FROM (${middle})`;
  };

  // The raw table (c0, c1, ...) joined to the stage: unqualified "c<i>" columns are the raw ones.
  const explainSql = (raw: string, limit: number) => {
    const sel = [
      's.rowid AS "__row"',
      ...cellChecks.map((k, i) => `(${k.why}) AS ${q(`w${i}`)}`),
      ...cellChecks.map((k, i) => `${k.raw} AS ${q(`t${i}`)}`),
      ...rowChecks.map((k, i) => `CASE WHEN NOT s."__cellbad" THEN (${k.why}) END AS ${q(`rw${i}`)}`),
      ...rowChecks.flatMap((k, i) => k.values.map((v, j) => `${v} AS ${q(`rv${i}_${j}`)}`)),
    ];
    return `SELECT ${sel.join(', ')} FROM ${q(stage)} s JOIN ${q(raw)} r ON s.rowid = r.rowid WHERE s."__bad" ORDER BY s.rowid LIMIT ${limit}`;
  };

  const describeRow = (row: Record<string, unknown>, line: number): CsvFileProblem[] => {
    const out: CsvFileProblem[] = [];
    cellChecks.forEach((k, i) => {
      const reason = row[`w${i}`];
      if (reason === null || reason === undefined) return;
      const d = describeProblem(k.kind, String(reason), (row[`t${i}`] as string | null) ?? '', { options: k.options });
      out.push({ file, fileIndex, line, field: k.field, order: k.order, code: d.code, message: d.message });
    });
    // A cell reported once (e.g. a column that is both an episodes column and a score).
    const seen = new Set<string>();
    const cells = out.filter((p) => {
      const key = `${p.field}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    rowChecks.forEach((k, i) => {
      const reason = row[`rw${i}`];
      if (reason === null || reason === undefined) return;
      const d = k.describe(String(reason), k.values.map((_, j) => row[`rv${i}_${j}`]));
      cells.push({ file, fileIndex, line, field: k.field, order: k.order, code: d.code, message: d.message });
    });
    return cells;
  };

  // Keys for duplicate checks.
  const keys: KeySource[] = [];
  const keyRows = (parts: string[], where = '') =>
    `SELECT rowid AS r, ${parts.length === 1 ? parts[0] : `concat_ws(chr(0), ${parts.join(', ')})`} AS k FROM ${q(stage)} WHERE NOT "__bad"${where}`;
  if (table === 'episodes') keys.push({ table: 'episodes', sql: keyRows([ID]), what: 'episode', field: label('episode_id') });
  if (table === 'judgments') {
    keys.push({ table: 'judgments', sql: keyRows([ID, get('scorer', 'VARCHAR'), get('judge_model', 'VARCHAR')]), what: 'judgment (episode, scorer, judge)', field: null });
  }
  for (const jc of judgeCols) {
    keys.push({
      table: 'judgments',
      sql: keyRows([ID, lit(mapping.judges!.scorer), lit(jc.column)], ` AND ${q(`jp${jc.j}`)}`),
      what: 'judgment (episode, scorer, judge)',
      field: jc.column,
    });
  }
  if (table === 'probe_answers') {
    keys.push({ table: 'probe_answers', sql: keyRows([get('subject_model', 'VARCHAR'), '"__state"', get('probe_id', 'VARCHAR')]), what: 'probe answer (subject, state, probe)', field: null });
  }
  // Gold actions: '|'-separated, trimmed, distinct and sorted (one set per subject and state).
  const goldList = `list_sort(list_distinct(list_filter(list_transform(string_split(coalesce(${get('gold_actions', 'VARCHAR')}, ''), '|'), x -> trim(x)), x -> x <> '')))`;
  const decisions = table === 'probe_answers' && provided.has('decision');
  if (decisions) {
    // One decision and one gold set per (subject, state): a second distinct pair is a duplicate key.
    const subj = get('subject_model', 'VARCHAR');
    keys.push({
      table: 'probe_decisions',
      sql: `SELECT min(rowid) AS r, concat_ws(chr(0), ${subj}, "__state") AS k FROM ${q(stage)} WHERE NOT "__bad" GROUP BY ${subj}, "__state", ${get('decision', 'VARCHAR')}, ${goldList}`,
      what: 'probe decision (subject, state): its rows disagree on the decision or the gold actions',
      field: null,
    });
  }
  if (table === 'aggregates') keys.push({ table: 'aggregates', sql: keyRows([get('subject_model', 'VARCHAR'), get('metric', 'VARCHAR')]), what: 'aggregate (subject, metric)', field: null });

  // Counts.
  const countParts = ['count(*) AS n'];
  countParts.push(`${table === 'episodes' ? 'count(*)' : '0'} AS episodes`);
  countParts.push(`${scoreCols.length ? scoreCols.map((s) => `count(*) FILTER (WHERE ${q(`p${s.k}`)})`).join(' + ') : '0'} AS scores`);
  const judgeCount = [...(table === 'judgments' ? ['count(*)'] : []), ...judgeCols.map((jc) => `count(*) FILTER (WHERE ${q(`jp${jc.j}`)})`)];
  countParts.push(`${judgeCount.length ? judgeCount.join(' + ') : '0'} AS judgments`);
  countParts.push(`${table === 'probe_answers' ? 'count(*)' : '0'} AS probe_answers`);
  countParts.push(`${decisions ? `count(DISTINCT (${get('subject_model', 'VARCHAR')}, "__state"))` : '0'} AS probe_decisions`);
  countParts.push(`${table === 'aggregates' ? 'count(*)' : '0'} AS aggregates`);
  countParts.push(`${table === 'episodes' ? `max(${get('epoch', 'INTEGER')})` : 'NULL'} AS max_epoch`);
  const countsSql = `SELECT ${countParts.join(', ')} FROM ${q(stage)}`;

  // Outputs: file columns in schema order with their types.
  const selectOf = (t: TableName, exprs: Record<string, string>, where = '') =>
    `SELECT ${fileColumns(t)
      .map((sc: SqlColumn) => `CAST(${exprs[sc.name] ?? 'NULL'} AS ${sc.type}) AS ${q(sc.name)}`)
      .join(', ')} FROM ${q(stage)}${where}`;
  const base = (t: TableName) => Object.fromEntries(fileColumns(t).map((sc) => [sc.name, fx.get(sc.name) ?? 'NULL']));
  const outputs = (lines: string): Partial<Record<OutTable, string[]>> => {
    const out: Partial<Record<OutTable, string[]>> = {};
    if (table === 'episodes') {
      out.episodes = [selectOf('episodes', { ...base('episodes'), episode_id: ID })];
      if (scoreCols.length) {
        out.scores = scoreCols.map((s) =>
          selectOf(
            'scores',
            {
              episode_id: ID,
              scorer: lit(s.scorer),
              value: q(`s${s.k}`),
              answer: s.answer ? q(`a${s.k}`) : 'NULL',
              noanswer: `${q(`s${s.k}`)} IS NULL`,
              explanation: s.explanation ? q(`x${s.k}`) : 'NULL',
            },
            ` WHERE ${q(`p${s.k}`)}`,
          ),
        );
      }
      if (judgeCols.length) {
        out.judgments = judgeCols.map((jc) =>
          selectOf(
            'judgments',
            { episode_id: ID, scorer: lit(mapping.judges!.scorer), judge_model: lit(jc.column), verdict: q(`jr${jc.j}`), value: q(`jv${jc.j}`), excluded_self: 'false' },
            ` WHERE ${q(`jp${jc.j}`)}`,
          ),
        );
      }
    } else if (table === 'judgments') {
      out.judgments = [selectOf('judgments', { ...base('judgments'), episode_id: ID, verdict: '"__verdict"', value: '"__value"' })];
    } else if (table === 'probe_answers') {
      const correct = provided.has('correct') ? get('correct', 'BOOLEAN') : `coalesce(${get('answer', 'VARCHAR')} = ${get('expected', 'VARCHAR')}, false)`;
      out.probe_answers = [selectOf('probe_answers', { ...base('probe_answers'), state_id: '"__state"', correct })];
      if (decisions) {
        const decision = get('decision', 'VARCHAR');
        const d = selectOf('probe_decisions', {
          state_id: '"__state"',
          subject_model: get('subject_model', 'VARCHAR'),
          scenario_id: get('scenario_id', 'VARCHAR'),
          epoch: get('epoch', 'INTEGER'),
          chosen_action: decision,
          gold_actions: goldList,
          correct: `coalesce(list_contains(${goldList}, ${decision}), false)`,
        });
        out.probe_decisions = [`SELECT DISTINCT * FROM (${d})`];
      }
    } else {
      out.aggregates = [
        `SELECT ${fileColumns('aggregates')
          .map((sc) => {
            const e = sc.name === 'source_row' ? `m.line + (s.rowid + 1 - m.record)` : (fx.get(sc.name) ?? 'NULL');
            return `CAST(${e} AS ${sc.type}) AS ${q(sc.name)}`;
          })
          .join(', ')} FROM ${q(stage)} s ASOF JOIN ${q(lines)} m ON s.rowid + 1 >= m.record ORDER BY s.rowid`,
      ];
    }
    return out;
  };

  return {
    plan: {
      file,
      fileIndex,
      table,
      header,
      mapping,
      stage,
      stageSql,
      explainSql,
      describeRow,
      literalChecks,
      keys,
      countsSql,
      outputs,
      sourceColumns,
      defaultsUsed,
      metadataColumns,
      ignoredColumns,
    },
    problems: [],
  };
}

const sourceColumnsOf = (used: Set<number>) => [...used].sort((a, b) => a - b);

/** The problem of a bad value-map entry or constant (line 1). */
export function literalProblem(file: string, fileIndex: number, check: LiteralCheck, reason: string): CsvFileProblem {
  const d = describeProblem(check.kind, reason, check.text, { options: check.options });
  return { file, fileIndex, line: 1, field: check.field, code: 'badMap', message: `${check.label}: ${d.message}`, order: -1 };
}
