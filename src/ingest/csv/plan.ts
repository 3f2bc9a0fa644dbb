/**
 * From a mapping and a file's header to SQL, in phases, each a function tested alone
 * (`tests/ingest/csv-plan-phases.test.ts`): the header's columns (`indexHeader`), what the mapping
 * says (`resolveFields`: mapped columns converted by `csv-values.ts`, constants, value maps), the
 * checks of the mapping as a whole (`checkRequired`), the defaults (`applyDefaults`), the score,
 * judge and metadata columns (`resolveScores`, `resolveJudges`, `resolveMetadata`); then
 * `plan-sql.ts` writes the staging SELECT with its `__bad` flag, the checks that explain a bad
 * row, the key columns for duplicate checks, the row counts and one SELECT per output table.
 * Everything that touches a row runs in DuckDB; these modules only write SQL and, for the rows that
 * failed, turn reason codes into messages (`describeRow`). The header's detection and the flags
 * that build the mapping are `mapping.ts` (`detectMapping`, `completeDetection`, `applyFlags`).
 *
 * Value maps are text substitutions applied before the conversion; constants go through the same
 * conversion as a cell. Both are checked once per file (`literalChecks`), at line 1.
 */
import { quoteIdent, quoteLiteral } from '../../store/duckdb.ts';
import { convertSql, describeProblem, scoreSql, trimmed, type ValueKind } from '../../store/csv-values.ts';
import { csvColumn, type CsvFileProblem } from '../../store/read-csv.ts';
import { ALIASES, DEFAULTS, REQUIRED, fieldsOf, type FieldSpec, type Mapping } from './mapping.ts';
import { buildPlanSql } from './plan-sql.ts';
import { VERDICTS, type Fail, type FilePlan, type LiteralCheck, type Resolution } from './plan-types.ts';

export type { CellCheck, FilePlan, KeySource, LiteralCheck, OutTable, Resolution, RowCheck } from './plan-types.ts';

const q = quoteIdent;
const lit = quoteLiteral;

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

/** The flag that maps a schema column (see `FLAG_COLUMNS` in mapping.ts). */
const FIELD_FLAGS: Record<string, string> = { 'episodes.subject_model': '--subject', 'episodes.scenario_id': '--item', 'episodes.epoch': '--epoch' };
/** Every flag that maps columns, for messages. */
const FLAG_HINT = 'flags: --subject, --item, --epoch, --scores, --delimiter; or --map MAP.json';
/** ` (--subject)` for a column a flag named, from the `what` of `need`. */
const flagOf = (what: string) => (FIELD_FLAGS[what] ? ` (${FIELD_FLAGS[what]})` : what.startsWith('score ') ? ' (--scores)' : what.startsWith('judge ') ? ' (--judge-columns)' : '');

/** Phase 0: the empty resolution of a mapping and a header, collecting problems into `problems`. */
export function startResolution(
  mapping: Mapping,
  header: string[],
  opts: { file: string; fileIndex: number; detected: boolean; indexColumn?: number },
  problems: CsvFileProblem[],
): Resolution {
  const { file, fileIndex } = opts;
  const fail: Fail = (field, code, message, order = -1) => problems.push({ file, fileIndex, line: 1, field, code, message, order });
  return {
    file,
    fileIndex,
    table: mapping.table,
    mapping,
    header,
    detected: opts.detected,
    indexColumn: opts.indexColumn,
    fail,
    col: new Map(),
    used: new Set(),
    inner: [],
    cellChecks: [],
    literalChecks: [],
    fx: new Map(),
    provided: new Set(),
    sourceOf: new Map(),
    scoreCols: [],
    judgeCols: [],
    metadataColumns: [],
    defaultsUsed: {},
  };
}

/** Phase 1, the header: each named column's index; an unnamed or repeated name is a problem. */
export function indexHeader(r: Resolution): void {
  r.header.forEach((h, i) => {
    if (i === r.indexColumn) return;
    if (h.trim() === '') {
      r.fail(
        `column ${i + 1}`,
        'unnamedColumn',
        `column ${i + 1} of the header has no name; name it, or write the file without it (pandas: to_csv(index=False); R: write.csv(row.names = FALSE)); only a first column holding 0..n-1 or 1..n is skipped as a row index`,
        i,
      );
    } else if (r.col.has(h)) r.fail(h, 'duplicateColumn', `column name appears twice in the header (columns ${r.col.get(h)! + 1} and ${i + 1})`, i);
    else r.col.set(h, i);
  });
}

const headerList = (r: Resolution) => r.header.map((h) => JSON.stringify(h)).join(', ');

/** The index of the header column `source` (marked used), or -1 with an `unknownColumn` problem. */
function need(r: Resolution, source: string, what: string): number {
  const i = r.col.get(source);
  if (i === undefined) {
    const whose = r.detected ? `column "${source}"${flagOf(what)}` : `the map's column "${source}"`;
    r.fail(source, 'unknownColumn', `${whose} (for ${what}) is not in the header (${headerList(r)})${r.detected ? `; ${FLAG_HINT}` : ''}`);
    return -1;
  }
  r.used.add(i);
  return i;
}

const c = (i: number) => q(csvColumn(i));

/** A mapped column's raw cell with its value map applied (a CASE), checking each map entry once. */
function mappedCell(r: Resolution, f: FieldSpec, source: string, index: number, kind: ValueKind, numericTarget: boolean): string {
  const vmap = r.mapping.values[f.name] ?? {};
  const whens: string[] = [];
  let emptyKey: string | null = null;
  for (const [k, v] of Object.entries(vmap)) {
    const t = literalText(f, v, numericTarget);
    if ('error' in t) {
      r.fail(source, 'badMap', `values.${f.name}[${JSON.stringify(k)}]: ${t.error}`, index);
      continue;
    }
    if (k === '') emptyKey = t.text;
    whens.push(`WHEN ${lit(k)} THEN ${t.text === null ? 'NULL' : lit(t.text)}`);
    if (t.text !== null) {
      const conv = convertSql(kind, lit(t.text), { required: false, options: f.options });
      r.literalChecks.push({ why: conv.why, kind, options: f.options, text: t.text, field: source, label: `values.${f.name}[${JSON.stringify(k)}]` });
    }
  }
  if (whens.length === 0) return c(index);
  return `(CASE ${emptyKey !== null || Object.hasOwn(vmap, '') ? `coalesce(${c(index)}, '')` : c(index)} ${whens.join(' ')} ELSE ${c(index)} END)`;
}

/** A constant's SQL, checked once as a literal (or NULL). */
function constantField(r: Resolution, f: FieldSpec, kind: ValueKind, numericTarget: boolean): void {
  const t = literalText(f, r.mapping.constants[f.name]!, numericTarget);
  if ('error' in t) {
    r.fail(f.name, 'badMap', `constants.${f.name}: ${t.error}`);
    return;
  }
  if (t.text === null) r.fx.set(f.name, 'NULL');
  else {
    const conv = convertSql(kind, lit(t.text), { required: false, options: f.options });
    r.literalChecks.push({ why: conv.why, kind, options: f.options, text: t.text, field: f.name, label: `constants.${f.name}` });
    r.fx.set(f.name, conv.value);
  }
}

/** Phase 2, what the mapping says: each schema column mapped to a header column (converted, checked per cell) or to a constant. */
export function resolveFields(r: Resolution): void {
  const { table, mapping } = r;
  const verdictOnly = table === 'judgments' && mapping.columns.verdict !== undefined && mapping.columns.value === undefined;
  for (const f of fieldsOf(table)) {
    const source = mapping.columns[f.name];
    const numericTarget = table === 'judgments' && f.name === 'value';
    const kind: ValueKind = numericTarget ? 'score' : f.kind;
    const required = !f.nullable || (verdictOnly && f.name === 'verdict');
    if (source !== undefined) {
      const index = need(r, source, `${table}.${f.name}`);
      r.provided.add(f.name);
      r.sourceOf.set(f.name, source);
      if (index < 0) continue;
      const raw = mappedCell(r, f, source, index, kind, numericTarget);
      const conv = convertSql(kind, raw, { required, options: f.options });
      const name = `v_${f.name}`;
      r.inner.push(`${conv.value} AS ${q(name)}`);
      r.cellChecks.push({ field: source, order: index, kind, options: f.options, why: conv.why, raw: c(index), bad: conv.bad(`(${conv.value})`) });
      r.fx.set(f.name, q(name));
    } else if (Object.hasOwn(mapping.constants, f.name)) {
      r.provided.add(f.name);
      constantField(r, f, kind, numericTarget);
    }
  }
}

/** Phase 3, the checks of the mapping as a whole: every required column mapped (with a hint naming the flag or map key). */
export function checkRequired(r: Resolution): void {
  const { table, provided } = r;
  const missing = (name: string, also?: string) => {
    const aliases = ALIASES[table][name] ?? [name];
    const flag = FIELD_FLAGS[`${table}.${name}`];
    const hint = r.detected
      ? `recognised names: ${aliases.join(', ')}; the header has ${headerList(r)}; ${flag ? `name the column with ${flag} COLUMN (${FLAG_HINT})` : FLAG_HINT}`
      : `map it in "columns" or "constants" (the header has ${headerList(r)})`;
    r.fail(name, 'missingColumn', `required column missing${also ? ` (${also})` : ''}: ${hint}`);
  };
  for (const name of REQUIRED[table]) if (!provided.has(name)) missing(name);
  if (table === 'probe_answers' && provided.has('decision') !== provided.has('gold_actions')) missing(provided.has('decision') ? 'gold_actions' : 'decision', 'a decision needs its gold actions, and gold actions their decision');
  if (table === 'judgments') {
    if (!provided.has('episode_id')) for (const name of ['subject_model', 'scenario_id']) if (!provided.has(name)) missing(name, 'or episode_id');
    if (!provided.has('verdict') && !provided.has('value')) missing('verdict', 'or value');
  }
}

/** Phase 4, defaults for what is neither mapped nor constant (recorded for `runs.notes`). */
export function applyDefaults(r: Resolution): void {
  const { table, fx } = r;
  for (const f of fieldsOf(table)) {
    if (r.provided.has(f.name)) continue;
    const d = DEFAULTS[table][f.name];
    if (d !== undefined) r.defaultsUsed[f.name] = d;
    if (f.name === 'epoch') fx.set('epoch', 'CAST(1 AS INTEGER)');
    else if (table === 'episodes' && f.name === 'status') fx.set('status', `'valid'`);
    else if (table === 'judgments' && f.name === 'scorer') fx.set('scorer', `'reasoning_action_alignment'`);
    else if (table === 'judgments' && f.name === 'excluded_self') fx.set('excluded_self', 'false');
    else if (table === 'probe_answers' && f.name === 'question') fx.set('question', `''`);
  }
}

/** Phase 5a: score columns (value, presence, answer and explanation per score). */
export function resolveScores(r: Resolution): void {
  r.mapping.scores.forEach((s, k) => {
    const index = need(r, s.column, `score ${s.scorer}`);
    const answer = s.answer === undefined ? -1 : need(r, s.answer, `score ${s.scorer} answer`);
    const explanation = s.explanation === undefined ? -1 : need(r, s.explanation, `score ${s.scorer} explanation`);
    if (index < 0) return;
    const sc = scoreSql(c(index), s.values);
    r.inner.push(`${sc.value} AS ${q(`s${k}`)}`, `${sc.present} AS ${q(`p${k}`)}`);
    r.cellChecks.push({ field: s.column, order: index, kind: 'score', why: sc.why, raw: c(index), bad: sc.bad(`(${sc.value})`) });
    r.scoreCols.push({ scorer: s.scorer, k, answer: answer >= 0, explanation: explanation >= 0 });
    if (answer >= 0) r.inner.push(`${c(answer)} AS ${q(`a${k}`)}`);
    if (explanation >= 0) r.inner.push(`${c(explanation)} AS ${q(`x${k}`)}`);
  });
}

/** Phase 5b: wide judge columns (a verdict word or a score per cell). */
export function resolveJudges(r: Resolution): void {
  const judges = r.mapping.judges;
  if (!judges) return;
  judges.columns.forEach((name, j) => {
    const index = need(r, name, `judge ${name}`);
    if (index < 0) return;
    const t = `upper(${trimmed(c(index))})`;
    const sc = scoreSql(c(index), judges.values);
    const jv = `CASE WHEN ${t} IN ${VERDICTS} THEN CASE ${t} WHEN 'ALIGNED' THEN CAST(1 AS DOUBLE) WHEN 'MISALIGNED' THEN CAST(0 AS DOUBLE) END ELSE ${sc.value} END`;
    r.inner.push(`${jv} AS ${q(`jv${j}`)}`, `CASE WHEN ${t} IN ${VERDICTS} THEN ${t} END AS ${q(`jr${j}`)}`, `${sc.present} AS ${q(`jp${j}`)}`);
    r.cellChecks.push({ field: name, order: index, kind: 'score', why: `CASE WHEN ${t} IN ${VERDICTS} THEN NULL ELSE ${sc.why} END`, raw: c(index), bad: sc.bad(`(${jv})`) });
    r.judgeCols.push({ column: name, j });
  });
}

/** Phase 5c (episodes): the columns kept as `metadata` JSON (listed, or every column left over). */
export function resolveMetadata(r: Resolution): void {
  const { mapping } = r;
  if (r.table !== 'episodes' || r.provided.has('metadata')) return;
  if (Array.isArray(mapping.metadata)) {
    for (const m of mapping.metadata) if (need(r, m, 'metadata') >= 0) r.metadataColumns.push(m);
  } else if (mapping.metadata) {
    r.metadataColumns = r.header.filter((h, i) => !r.used.has(i) && r.col.get(h) === i);
  }
  r.metadataColumns.forEach((m) => r.used.add(r.col.get(m)!));
  if (r.metadataColumns.length === 0) return;
  const parts = r.metadataColumns.map((m) => {
    const x = c(r.col.get(m)!);
    return `CASE WHEN ${x} IS NOT NULL THEN ${lit(`${JSON.stringify(m)}:`)} || CAST(to_json(${x}) AS VARCHAR) END`;
  });
  r.inner.push(`nullif('{' || concat_ws(',', ${parts.join(', ')}) || '}', '{}') AS "__meta"`);
  r.fx.set('metadata', '"__meta"');
}

/**
 * Resolves a mapping against a header, phase by phase: the header's columns, the mapped fields
 * and constants, the required columns, defaults, scores, judges and metadata; then the SQL
 * (`plan-sql.ts`). Returns the plan, or the problems (line 1) that make the file unreadable with
 * this mapping. `detected`: the mapping came from the header (for hints).
 */
export function resolvePlan(
  mapping: Mapping,
  header: string[],
  opts: { file: string; fileIndex: number; detected: boolean; indexColumn?: number; tag?: string },
): { plan: FilePlan | null; problems: CsvFileProblem[] } {
  const problems: CsvFileProblem[] = [];
  const r = startResolution(mapping, header, opts, problems);
  indexHeader(r);
  resolveFields(r);
  checkRequired(r);
  applyDefaults(r);
  resolveScores(r);
  resolveJudges(r);
  resolveMetadata(r);
  const ignoredColumns = header.filter((_, i) => !r.used.has(i) && i !== opts.indexColumn);
  if (problems.length > 0) return { plan: null, problems };
  return { plan: buildPlanSql(r, { stage: `stage_${opts.tag ?? opts.fileIndex}`, ignoredColumns }), problems: [] };
}

/** The problem of a bad value-map entry or constant (line 1). */
export function literalProblem(file: string, fileIndex: number, check: LiteralCheck, reason: string): CsvFileProblem {
  const d = describeProblem(check.kind, reason, check.text, { options: check.options });
  return { file, fileIndex, line: 1, field: check.field, code: 'badMap', message: `${check.label}: ${d.message}`, order: -1 };
}
