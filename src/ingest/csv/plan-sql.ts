/**
 * The SQL of a resolved CSV plan (`plan.ts` resolves the mapping against the header, phase by
 * phase; this module turns the result into SQL): the derived columns and row checks, the staging
 * SELECT with its `__bad` flag, the SELECT that explains bad rows and the function that turns its
 * reason codes into messages, the key sources for duplicate checks, the counts and one SELECT per
 * output table. Each builder is a function of the {@link Resolution}, tested alone
 * (`tests/ingest/csv-plan-phases.test.ts`).
 */
import { fileColumns, type SqlColumn, type TableName } from '../../schema/tables.ts';
import { quoteIdent, quoteLiteral } from '../../store/duckdb.ts';
import { describeProblem, scoreSql, show, trimmed } from '../../store/csv-values.ts';
import type { CsvFileProblem } from '../../store/read-csv.ts';
import { VERDICTS, type FilePlan, type KeySource, type OutTable, type Resolution, type RowCheck } from './plan-types.ts';

const q = quoteIdent;
const lit = quoteLiteral;

/** A SQL literal of `type` (NULL typed). */
const typedNull = (type: string): string => `CAST(NULL AS ${type})`;

/** A provided column's SQL, or a typed NULL. */
const getter = (r: Resolution) => (name: string, type: string) => r.fx.get(name) ?? typedNull(type);

/** The episode id over the staged columns: mapped, or `<subject>/<scenario>/<epoch>` (computed where used: cheaper than staging a million strings). */
export function episodeIdSql(r: Resolution): string {
  const get = getter(r);
  if (r.provided.has('episode_id')) return get('episode_id', 'VARCHAR');
  return `concat(${get('subject_model', 'VARCHAR')}, '/', ${get('scenario_id', 'VARCHAR')}, '/', ${get('epoch', 'INTEGER')})`;
}

/**
 * The episode key's 64-bit hash, staged during the load (no second scan of the stage for the
 * duplicate-key check): `hash(subject, scenario, epoch)` over the three values rather than over the
 * joined id, which would build a string per row. Equal joined ids are equal triples when the
 * scenario holds no '/' and no part is NULL: the epoch is an integer, whose text has no '/' and is
 * never empty, so the id splits back at its last two slashes. Where that does not hold the row
 * stages NULL, and the check then hashes the joined ids instead (`checkKeys` in ingest-csv.ts).
 * Null when the key is not the joined id.
 */
export function keyHashSql(r: Resolution): string | null {
  if (r.table !== 'episodes' || r.provided.has('episode_id')) return null;
  const get = getter(r);
  const [s, c, e] = [get('subject_model', 'VARCHAR'), get('scenario_id', 'VARCHAR'), get('epoch', 'INTEGER')];
  return `CASE WHEN ${s} IS NULL OR ${c} IS NULL OR ${e} IS NULL OR contains(${c}, '/') THEN NULL ELSE hash(${s}, ${c}, ${e}) END`;
}

/** The derived columns of the second staging level and the checks of a row's converted values. */
export function deriveColumns(r: Resolution): { outer: string[]; rowChecks: RowCheck[] } {
  const get = getter(r);
  const outer: string[] = [];
  const rowChecks: RowCheck[] = [];
  const label = (name: string) => r.sourceOf.get(name) ?? name;
  const orderOf = (name: string) => (r.sourceOf.has(name) ? (r.col.get(r.sourceOf.get(name)!) ?? -1) : -1);
  if (r.table === 'probe_answers') outer.push(`${r.provided.has('state_id') ? get('state_id', 'VARCHAR') : `concat(${get('scenario_id', 'VARCHAR')}, '/', ${get('epoch', 'INTEGER')})`} AS "__state"`);
  if (r.table === 'judgments') {
    const hasVerdict = r.provided.has('verdict');
    const hasValue = r.provided.has('value');
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
  if (r.table === 'aggregates') {
    const s = get('successes', 'INTEGER');
    const t = get('trials', 'INTEGER');
    rowChecks.push({
      field: label('successes'),
      order: orderOf('successes'),
      why: `CASE WHEN ${s} < 0 THEN 'successes' WHEN ${t} >= 0 AND ${s} > ${t} THEN 'exceed' END`,
      values: [s, t],
      describe: (reason, [sv, tv]) =>
        reason === 'successes'
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
  return { outer, rowChecks };
}

/**
 * `CREATE TABLE <stage> AS ...` over a `read_csv(...)` relation. One level where it can be: the
 * cell checks repeat the conversions, which DuckDB computes once (common subexpressions); derived
 * columns and row checks need a second level.
 */
export function stageSqlOf(r: Resolution, stage: string, outer: string[], rowChecks: RowCheck[]): (relation: string) => string {
  const cellBad = r.cellChecks.length > 0 ? r.cellChecks.map((k) => k.bad).join(' OR ') : 'false';
  const rowBad = rowChecks.length > 0 ? rowChecks.map((k) => `(${k.why}) IS NOT NULL`).join(' OR ') : 'false';
  const keyHash = keyHashSql(r);
  return (relation: string) => {
    const cellsAs = (flag: string) => `${[...r.inner, `coalesce(${cellBad}, false) AS ${q(flag)}`, ...(keyHash ? [`${keyHash} AS "__kh"`] : [])].join(', ')}`;
    // One level: the cell flag is the row's flag (stored once).
    if (outer.length === 0 && rowChecks.length === 0) return `CREATE OR REPLACE TABLE ${q(stage)} AS SELECT ${cellsAs('__bad')} FROM ${relation}`;
    const cells = cellsAs('__cellbad');
    const middle = `SELECT *${outer.length ? `, ${outer.join(', ')}` : ''} FROM (SELECT ${cells} FROM ${relation})`;
    return `CREATE OR REPLACE TABLE ${q(stage)} AS SELECT *, "__cellbad" OR coalesce(${rowBad}, false) AS "__bad" FROM (${middle})`;
  };
}

/** SELECT of the bad rows with their reasons: the raw table (c0, c1, ...) joined to the stage; unqualified "c<i>" columns are the raw ones. */
export function explainSqlOf(r: Resolution, stage: string, rowChecks: RowCheck[]): (raw: string, limit: number) => string {
  return (raw: string, limit: number) => {
    const sel = [
      's.rowid AS "__row"',
      ...r.cellChecks.map((k, i) => `(${k.why}) AS ${q(`w${i}`)}`),
      ...r.cellChecks.map((k, i) => `${k.raw} AS ${q(`t${i}`)}`),
      ...rowChecks.map((k, i) => `CASE WHEN NOT s."__cellbad" THEN (${k.why}) END AS ${q(`rw${i}`)}`),
      ...rowChecks.flatMap((k, i) => k.values.map((v, j) => `${v} AS ${q(`rv${i}_${j}`)}`)),
    ];
    return `SELECT ${sel.join(', ')} FROM ${q(stage)} s JOIN ${q(raw)} r ON s.rowid = r.rowid WHERE s."__bad" ORDER BY s.rowid LIMIT ${limit}`;
  };
}

/** The problems of one explained row (a cell reported once, e.g. a column that is both an episodes column and a score). */
export function describeRowOf(r: Resolution, rowChecks: RowCheck[]): (row: Record<string, unknown>, line: number) => CsvFileProblem[] {
  const { file, fileIndex } = r;
  return (row, line) => {
    const out: CsvFileProblem[] = [];
    r.cellChecks.forEach((k, i) => {
      const reason = row[`w${i}`];
      if (reason === null || reason === undefined) return;
      const d = describeProblem(k.kind, String(reason), (row[`t${i}`] as string | null) ?? '', { options: k.options });
      out.push({ file, fileIndex, line, field: k.field, order: k.order, code: d.code, message: d.message });
    });
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
}

/** Gold actions: '|'-separated, trimmed, distinct and sorted (one set per subject and state). */
const goldListSql = (r: Resolution) =>
  `list_sort(list_distinct(list_filter(list_transform(string_split(coalesce(${getter(r)('gold_actions', 'VARCHAR')}, ''), '|'), x -> trim(x)), x -> x <> '')))`;

/** Whether a probe file also carries each state's decision (and gold actions). */
const hasDecisions = (r: Resolution) => r.table === 'probe_answers' && r.provided.has('decision');

/** The rows of each output table's keys, for duplicate checks (bad rows left out). */
export function keySourcesOf(r: Resolution, stage: string): KeySource[] {
  const get = getter(r);
  const ID = episodeIdSql(r);
  const keys: KeySource[] = [];
  const keyRows = (parts: string[], where = '') =>
    `SELECT rowid AS r, ${parts.length === 1 ? parts[0] : `concat_ws(chr(0), ${parts.join(', ')})`} AS k FROM ${q(stage)} WHERE NOT "__bad"${where}`;
  if (r.table === 'episodes') {
    const staged = keyHashSql(r) ? `SELECT "__kh" AS h FROM ${q(stage)} WHERE NOT "__bad"` : undefined;
    keys.push({ table: 'episodes', sql: keyRows([ID]), what: 'episode', field: r.sourceOf.get('episode_id') ?? 'episode_id', staged });
  }
  if (r.table === 'judgments') {
    keys.push({ table: 'judgments', sql: keyRows([ID, get('scorer', 'VARCHAR'), get('judge_model', 'VARCHAR')]), what: 'judgment (episode, scorer, judge)', field: null });
  }
  for (const jc of r.judgeCols) {
    keys.push({ table: 'judgments', sql: keyRows([ID, lit(r.mapping.judges!.scorer), lit(jc.column)], ` AND ${q(`jp${jc.j}`)}`), what: 'judgment (episode, scorer, judge)', field: jc.column });
  }
  if (r.table === 'probe_answers') {
    keys.push({ table: 'probe_answers', sql: keyRows([get('subject_model', 'VARCHAR'), '"__state"', get('probe_id', 'VARCHAR')]), what: 'probe answer (subject, state, probe)', field: null });
  }
  if (hasDecisions(r)) {
    // One decision and one gold set per (subject, state): a second distinct pair is a duplicate key.
    const subj = get('subject_model', 'VARCHAR');
    keys.push({
      table: 'probe_decisions',
      sql: `SELECT min(rowid) AS r, concat_ws(chr(0), ${subj}, "__state") AS k FROM ${q(stage)} WHERE NOT "__bad" GROUP BY ${subj}, "__state", ${get('decision', 'VARCHAR')}, ${goldListSql(r)}`,
      what: 'probe decision (subject, state): its rows disagree on the decision or the gold actions',
      field: null,
    });
  }
  if (r.table === 'aggregates') keys.push({ table: 'aggregates', sql: keyRows([get('subject_model', 'VARCHAR'), get('metric', 'VARCHAR')]), what: 'aggregate (subject, metric)', field: null });
  return keys;
}

/** SELECT of the counts: n (rows), bad (rows with a bad cell or row check) and one per output table, plus max_epoch (one scan of the stage). */
export function countsSqlOf(r: Resolution, stage: string): string {
  const get = getter(r);
  const t = r.table;
  const countParts = ['count(*) AS n', 'count(*) FILTER (WHERE "__bad") AS bad'];
  countParts.push(`${t === 'episodes' ? 'count(*)' : '0'} AS episodes`);
  countParts.push(`${r.scoreCols.length ? r.scoreCols.map((s) => `count(*) FILTER (WHERE ${q(`p${s.k}`)})`).join(' + ') : '0'} AS scores`);
  const judgeCount = [...(t === 'judgments' ? ['count(*)'] : []), ...r.judgeCols.map((jc) => `count(*) FILTER (WHERE ${q(`jp${jc.j}`)})`)];
  countParts.push(`${judgeCount.length ? judgeCount.join(' + ') : '0'} AS judgments`);
  countParts.push(`${t === 'probe_answers' ? 'count(*)' : '0'} AS probe_answers`);
  countParts.push(`${hasDecisions(r) ? `count(DISTINCT (${get('subject_model', 'VARCHAR')}, "__state"))` : '0'} AS probe_decisions`);
  countParts.push(`${t === 'aggregates' ? 'count(*)' : '0'} AS aggregates`);
  countParts.push(`${t === 'episodes' ? `max(${get('epoch', 'INTEGER')})` : 'NULL'} AS max_epoch`);
  return `SELECT ${countParts.join(', ')} FROM ${q(stage)}`;
}

/** SELECT of one output table over the stage: file columns in schema order with their types. */
const selectOver = (stage: string) => (t: TableName, exprs: Record<string, string>, where = '') =>
  `SELECT ${fileColumns(t)
    .map((sc: SqlColumn) => `CAST(${exprs[sc.name] ?? 'NULL'} AS ${sc.type}) AS ${q(sc.name)}`)
    .join(', ')} FROM ${q(stage)}${where}`;

/** Each provided column's SQL, for the file columns of table `t`. */
const baseOf = (r: Resolution, t: TableName) => Object.fromEntries(fileColumns(t).map((sc) => [sc.name, r.fx.get(sc.name) ?? 'NULL']));

/** Outputs of an episodes file: episodes, and scores and judgments from its score and judge columns. */
function episodesOutputs(r: Resolution, stage: string): Partial<Record<OutTable, string[]>> {
  const selectOf = selectOver(stage);
  const ID = episodeIdSql(r);
  const out: Partial<Record<OutTable, string[]>> = { episodes: [selectOf('episodes', { ...baseOf(r, 'episodes'), episode_id: ID })] };
  if (r.scoreCols.length) {
    out.scores = r.scoreCols.map((s) =>
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
  if (r.judgeCols.length) {
    out.judgments = r.judgeCols.map((jc) =>
      selectOf(
        'judgments',
        { episode_id: ID, scorer: lit(r.mapping.judges!.scorer), judge_model: lit(jc.column), verdict: q(`jr${jc.j}`), value: q(`jv${jc.j}`), excluded_self: 'false' },
        ` WHERE ${q(`jp${jc.j}`)}`,
      ),
    );
  }
  return out;
}

/** Outputs of a long paired-probe file: probe answers, and one decision per (subject, state) when given. */
function probeOutputs(r: Resolution, stage: string): Partial<Record<OutTable, string[]>> {
  const get = getter(r);
  const selectOf = selectOver(stage);
  const correct = r.provided.has('correct') ? get('correct', 'BOOLEAN') : `coalesce(${get('answer', 'VARCHAR')} = ${get('expected', 'VARCHAR')}, false)`;
  const out: Partial<Record<OutTable, string[]>> = { probe_answers: [selectOf('probe_answers', { ...baseOf(r, 'probe_answers'), state_id: '"__state"', correct })] };
  if (hasDecisions(r)) {
    const decision = get('decision', 'VARCHAR');
    const goldList = goldListSql(r);
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
  return out;
}

/** SELECT per output table (file columns, schema order); `lines` names the line map table (aggregates). */
export function outputsOf(r: Resolution, stage: string): (lines: string) => Partial<Record<OutTable, string[]>> {
  return (lines: string) => {
    if (r.table === 'episodes') return episodesOutputs(r, stage);
    if (r.table === 'judgments') return { judgments: [selectOver(stage)('judgments', { ...baseOf(r, 'judgments'), episode_id: episodeIdSql(r), verdict: '"__verdict"', value: '"__value"' })] };
    if (r.table === 'probe_answers') return probeOutputs(r, stage);
    const cols = fileColumns('aggregates').map((sc) => {
      const e = sc.name === 'source_row' ? `m.line + (s.rowid + 1 - m.record)` : (r.fx.get(sc.name) ?? 'NULL');
      return `CAST(${e} AS ${sc.type}) AS ${q(sc.name)}`;
    });
    return { aggregates: [`SELECT ${cols.join(', ')} FROM ${q(stage)} s ASOF JOIN ${q(lines)} m ON s.rowid + 1 >= m.record ORDER BY s.rowid`] };
  };
}

/** The plan of a resolved mapping (no problems left): every SQL builder above, bound to the stage. */
export function buildPlanSql(r: Resolution, opts: { stage: string; ignoredColumns: string[] }): FilePlan {
  const { stage } = opts;
  const { outer, rowChecks } = deriveColumns(r);
  return {
    file: r.file,
    fileIndex: r.fileIndex,
    table: r.table,
    header: r.header,
    mapping: r.mapping,
    stage,
    stageSql: stageSqlOf(r, stage, outer, rowChecks),
    explainSql: explainSqlOf(r, stage, rowChecks),
    describeRow: describeRowOf(r, rowChecks),
    literalChecks: r.literalChecks,
    keys: keySourcesOf(r, stage),
    countsSql: countsSqlOf(r, stage),
    outputs: outputsOf(r, stage),
    sourceColumns: [...r.used].sort((a, b) => a - b),
    defaultsUsed: r.defaultsUsed,
    metadataColumns: r.metadataColumns,
    ignoredColumns: opts.ignoredColumns,
  };
}
