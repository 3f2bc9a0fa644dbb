/**
 * A judge panel's verdicts as distinct patterns with counts: the data behind the report's judge
 * section and `standoff agreement` / `standoff judges` over the store. SQL pivots the judgments to
 * one row per judged sample (a value per judge: 1, 0, NULL for ERROR, absent) and counts the
 * distinct rows; every statistic then runs on the weighted patterns (`src/stats`: alpha with
 * `krippendorffAlphaBootstrapCounts`, pair agreement with `judgePairAgreement` weights,
 * leave-one-judge-out with `leaveOneJudgeOut` weights), never on a sample-by-sample matrix.
 */
import { krippendorffAlphaBootstrapCounts, type AlphaLevel, type Rating } from '../stats/index.ts';
import type { Plain, SqlParams } from '../store/duckdb.ts';

/** One judge's entry in a pattern: its value (null for ERROR), whether it judged at all, whether it was excluded as self. */
export interface JudgeCell {
  value: number | null;
  present: boolean;
  excluded: boolean;
}

export interface JudgePattern {
  subject: string;
  cells: JudgeCell[];
  count: number;
}

export interface JudgePatterns {
  scorer: string;
  /** Judge models, sorted. */
  judges: string[];
  families: (string | null)[];
  /** Verdict counts per judge (SQL): ALIGNED, MISALIGNED, ERROR, MISALIGNED by strict parsing, and non-ERROR verdicts excluded as self. */
  verdicts: { aligned: number; misaligned: number; error: number; rejected: number; excluded_self: number }[];
  patterns: JudgePattern[];
  /** The scorer's distinct non-NULL values, sorted, when there are at most `PACK_MAX_VALUES`, all finite (else absent): the packed pivot's values, and the report's scorer kind (`sections/judges.ts`). */
  values?: number[];
}

export interface AgreementResult {
  alpha: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  se: number | null;
  measurement: AlphaLevel;
  /** Pairable units (two or more values). */
  units: number;
  raters: number;
  pairable_values: number;
  resamples: number;
  undefined_resamples: number;
  seed: number;
  method: 'percentile';
  /**
   * The bootstrap resamples rated units (samples, each with all its ratings) as independent units;
   * epochs of one scenario are not clustered, and the output says so.
   */
  sampling: 'independent';
  note?: string;
}

/**
 * Judgments per hash partition of the samples when judgments are pivoted per sample: each GROUP BY
 * then holds a bounded share of the samples (at 1e7 one pass needed ~7 GB). Every partition scans
 * all the judgments again (~2.6 s of CPU at 1e7), so the parts are as large as the 1 GB DuckDB
 * limit allows: 3 at 1e7 (29.8M judgments), 1 at 1e6. The default of `samplePartsOf`, so of
 * `standoff judges` (`loadJudgeMedians`); the pattern pivot uses `PATTERN_JUDGMENTS_PER_PART`.
 */
export const JUDGMENTS_PER_PART = 10_000_000;

/**
 * Judgments per hash part of the pattern pivot (`loadJudgePatterns`: the report's judges sections,
 * `standoff agreement`), larger than `JUDGMENTS_PER_PART`: its per-sample aggregate is grouped
 * again into a few hundred patterns in the same query (no per-sample rows leave DuckDB), and DuckDB
 * spills that aggregate within its 1 GB, so one scan of the judgments is cheaper than three (issue
 * 28, 1e7, 29.8M judgments, the pivot with section 2's verdict tally: 17.6-19.8 s of CPU in 3
 * parts, 13.9-15.3 s in one; peak RSS 1.2-1.5 GB and 1.3 GB). 1 part at 1e6 and 1e7.
 */
export const PATTERN_JUDGMENTS_PER_PART = 32_000_000;

/** How many hash partitions keep each within `perPart` judgments. */
export const partitionsFor = (judgments: number, perPart = JUDGMENTS_PER_PART): number => Math.max(1, Math.ceil(judgments / perPart));

/**
 * One share of a scorer's judgments that a per-sample pivot runs over: run `run` (bound as `$run`,
 * so the join keys on the episode id alone), hash part `index` of `of` of its samples, and whether
 * the run's episode ids are unique (then the join needs no regrouping).
 */
export interface SamplePart {
  run: string;
  of: number;
  index: number;
  unique: boolean;
  /** The run's judgments the part's query reads (of the scorer, or of every scorer with `allScorers`), all parts together. */
  judgments: number;
}

type Query = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

/**
 * The parts of a scorer's per-sample pivot: each run with judgments of the scorer, in sample order
 * (`run_id || '/' || episode_id`: the runs ordered by `run_id || '/'`), in hash parts of at most
 * `perPart` judgments. Per run because a join on the episode id alone is cheaper than
 * on (run_id, episode_id) (issue 28: at 1e7 one part 7.7 -> 4.9 s CPU with the next change), and
 * with the run's episode uniqueness, because a run whose episode ids are unique needs no second
 * GROUP BY after the join: taken from `uniqueRuns` (the report's gate), else counted here (2.3 s
 * CPU at 1e7).
 */
export async function samplePartsOf(q: Query, scorer: string, perPart = JUDGMENTS_PER_PART, uniqueRuns?: UniqueRuns, allScorers = false): Promise<SamplePart[]> {
  const where = allScorers ? '' : 'WHERE scorer = $scorer';
  const runs = await q(`SELECT run_id, CAST(count(*) AS BIGINT) AS n FROM judgments ${where} GROUP BY run_id ORDER BY run_id || '/'`, allScorers ? {} : { scorer });
  const parts: SamplePart[] = [];
  for (const r of runs) {
    const run = String(r.run_id);
    const unique = uniqueRuns?.get(run) ?? (await q(`SELECT count(*) = count(DISTINCT episode_id) AS uniq FROM episodes WHERE run_id = $run`, { run }))[0]?.uniq === true;
    const of = partitionsFor(Number(r.n), perPart);
    for (let index = 0; index < of; index++) parts.push({ run, of, index, unique, judgments: Number(r.n) });
  }
  return parts;
}

/**
 * Runs whose episode-id uniqueness is already known, by run id (the report's gate counts it in its
 * `unique_episodes` check): `samplePartsOf` counts it again only for a run not in the map.
 */
export type UniqueRuns = ReadonlyMap<string, boolean>;

/** The predicate keeping `part`'s samples (run `$run`, its hash part) of a table aliased `alias`. */
const partSql = (part: SamplePart, alias: string): string =>
  `${alias}.run_id = $run${part.of > 1 ? ` AND hash(${alias}.episode_id) % ${part.of} = ${part.index}` : ''}`;

/**
 * One row per judged sample of `part` that has an episode, as `SELECT ... FROM judgments j JOIN
 * episodes e ... GROUP BY j.run_id, j.episode_id` gives it, but cheaper: the judgments are
 * aggregated per sample first (`agg`: the per-sample columns), then joined to the part's episodes,
 * so the join sees one row per sample instead of one per judgment. When the run's episode ids are
 * unique that join is the answer; else it is grouped again per sample: `keep` columns of `agg` as
 * the one-pass query has them (`any_value`), `counts` counts of judgments multiplied by the
 * sample's episode rows as the one-pass join multiplies them (a store with an episode twice:
 * `standoff judges` then reports the duplicate). `select(v)` is evaluated over episodes `e` (and
 * `join`), with `v(expr)` the expression's value per sample. Binds `$run` (`part.run`).
 */
export function perSampleSql(o: { agg: string; from: string; part: SamplePart; select: (v: (expr: string) => string) => string; join?: string; keep: string[]; counts: string[] }): string {
  const a = `WITH a AS (SELECT j.episode_id, ${o.agg} ${o.from} AND ${partSql(o.part, 'j')} GROUP BY j.episode_id)`;
  const from = `FROM a JOIN episodes e ON e.episode_id = a.episode_id ${o.join ?? ''} WHERE ${partSql(o.part, 'e')}`;
  if (o.part.unique) return `${a} SELECT a.episode_id, ${o.select((x) => x)}, ${[...o.keep, ...o.counts].map((k) => `a.${k}`).join(', ')} ${from}`;
  const cols = [...o.keep.map((k) => `any_value(a.${k}) AS ${k}`), ...o.counts.map((k) => `CAST(any_value(a.${k}) * count(*) AS INTEGER) AS ${k}`)].join(', ');
  return `${a} SELECT a.episode_id, ${o.select((x) => `any_value(${x})`)}, ${cols} ${from} GROUP BY a.episode_id`;
}

/**
 * Judge verdicts of every scorer per run and subject label, and how many are ERROR: the counts of
 * judgments joined to their episodes on (run, episode id). Only for runs whose episode ids are
 * unique (a run left out is counted by the caller's own join).
 */
export type VerdictTally = Map<string, Map<string, { n: number; errors: number }>>;

/**
 * The scorer's judgments as patterns. `subject` is the SQL expression naming a sample's subject
 * and `join` the joins that make it available (the report's `r_subject` labels; the CLI's model
 * names), over episodes aliased `e`. With `tally`, the same scan also counts every scorer's
 * verdicts (and ERROR verdicts) per run and subject (`VerdictTally`): the per-sample aggregate
 * then covers all the run's judgments, the judges' columns filtered on the scorer, and samples
 * without a judgment of the scorer are dropped from the patterns after the count (issue 28: the
 * report's section 2 counted them in a second join of every judgment, 8.3 s of CPU at 1e7).
 */
export async function loadJudgePatterns(
  q: (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>,
  scorer: string,
  subject = 'e.subject_model',
  join = '',
  judgmentsPerPart = PATTERN_JUDGMENTS_PER_PART,
  uniqueRuns?: UniqueRuns,
  tally = false,
  key?: Pick<PatternQuery, 'sampleKey'>,
): Promise<JudgePatterns & { tally?: VerdictTally }> {
  // The scorer and the judge models are bound ($scorer, $j0, $j1, ...), never written into the SQL.
  const n = (cond: string) => `CAST(count(*) FILTER (WHERE ${cond}) AS BIGINT)`;
  const judgeRows = await q(`
    SELECT judge_model, any_value(judge_family) AS family, ${n(`verdict = 'ALIGNED'`)} AS aligned, ${n(`verdict = 'MISALIGNED'`)} AS misaligned,
           ${n(`verdict = 'ERROR'`)} AS error, ${n(`verdict = 'MISALIGNED' AND raw IS NOT NULL AND raw <> 'MISALIGNED'`)} AS rejected,
           ${n('excluded_self AND value IS NOT NULL')} AS excluded_self
    FROM judgments WHERE scorer = $scorer GROUP BY judge_model ORDER BY judge_model`, { scorer });
  const judges = judgeRows.map((r) => String(r.judge_model));
  if (judges.length === 0) return { scorer, judges, families: [], verdicts: [], patterns: [] };
  const values = await scorerValues(q, scorer);
  const { rows, verdicts } = await patternRows(q, { scorer, judges, subject, join, judgmentsPerPart, uniqueRuns, tally, sampleKey: key?.sampleKey, values });
  return {
    scorer,
    judges,
    ...(values ? { values } : {}),
    families: judgeRows.map((r) => (r.family === null ? null : String(r.family))),
    verdicts: judgeRows.map((r) => ({ aligned: Number(r.aligned), misaligned: Number(r.misaligned), error: Number(r.error), rejected: Number(r.rejected), excluded_self: Number(r.excluded_self) })),
    patterns: rows.map((r) => ({
      subject: String(r.subject),
      cells: judges.map((_, i) => ({
        value: r[`v${i}`] === null ? null : Number(r[`v${i}`]),
        present: Number(r[`c${i}`]) > 0,
        excluded: r[`x${i}`] === true,
      })),
      count: Number(r.n),
    })),
    ...(tally ? { tally: verdicts } : {}),
  };
}

interface PatternQuery {
  scorer: string;
  judges: string[];
  subject: string;
  join: string;
  judgmentsPerPart: number;
  uniqueRuns?: UniqueRuns;
  tally: boolean;
  /** The packed pivot's sample key (`sampleKey`); tests give a colliding one. */
  sampleKey?: (id: string) => string[];
  /** `JudgePatterns.values`: null, the string-keyed pivot. */
  values: number[] | null;
}

/**
 * The pattern rows (subject, v0, x0, c0, ..., n), counted per run and hash part of its samples (a
 * sample is in exactly one), then merged: each GROUP BY holds a bounded share of the samples (at
 * 1e7 one pass ran DuckDB out of memory). With `o.tally`, a run whose episode ids are unique is
 * aggregated over all its judgments (`tn`, `te`: a sample's judgments and ERROR verdicts of every
 * scorer), summed per subject into `verdicts`; rows without a judgment of the scorer (every `c` 0)
 * are then dropped, which leaves the rows of the scorer's own pivot, in its order.
 */
async function patternRows(q: Query, o: PatternQuery): Promise<{ rows: Record<string, Plain>[]; verdicts: VerdictTally }> {
  const params = { scorer: o.scorer, ...Object.fromEntries(o.judges.map((jm, i) => [`j${i}`, jm])) };
  const counts = o.judges.map((_, i) => `c${i}`);
  const sel = o.judges.map((_, i) => `v${i}, x${i}, c${i}`).join(', ');
  const verdicts: VerdictTally = new Map();
  const parts: Record<string, Plain>[][] = [];
  const pack = packOf(o);
  for (const part of await samplePartsOf(q, o.scorer, o.judgmentsPerPart, o.uniqueRuns, o.tally)) {
    const all = o.tally && part.unique;
    const packed = pack && part.unique && part.of === 1 ? await packedRows(q, o, pack, part, all) : null;
    if (packed) {
      if (all) addTally(verdicts, part.run, packed);
      const mine = all ? packed.filter((r) => counts.some((c) => Number(r[c]) > 0)).map(({ tn: _n, te: _e, ...r }) => r) : packed.map(({ tn: _n, ...r }) => r);
      if (mine.length > 0 || !all) parts.push(mine);
      continue;
    }
    const sql = perSampleSql({
      agg: pivotColumns(o.judges, all),
      from: `FROM judgments j WHERE ${all ? 'true' : 'j.scorer = $scorer'}`,
      part,
      select: (v) => `${v(o.subject)} AS subject`,
      join: o.join,
      keep: o.judges.flatMap((_, i) => [`v${i}`, `x${i}`]),
      counts: all ? [...counts, 'tn', 'te'] : counts,
    });
    const tail = all ? ', CAST(sum(tn) AS BIGINT) AS tn, CAST(sum(te) AS BIGINT) AS te' : '';
    const rows = await q(`WITH p AS (${sql}) SELECT subject, ${sel}, CAST(count(*) AS BIGINT) AS n${tail} FROM p GROUP BY subject, ${sel} ORDER BY subject, ${sel}`, { ...params, run: part.run });
    if (!all) {
      parts.push(rows);
      continue;
    }
    addTally(verdicts, part.run, rows);
    const mine = rows.filter((r) => counts.some((c) => Number(r[c]) > 0)).map(({ tn: _n, te: _e, ...r }) => r);
    if (mine.length > 0) parts.push(mine);
  }
  return { rows: parts.length === 1 ? parts[0] : mergePatternRows(parts, o.judges.length), verdicts };
}

/** Sums the pattern rows' judgments (`tn`) and ERROR verdicts (`te`) of every scorer per subject into run `run`'s tally. */
function addTally(verdicts: VerdictTally, run: string, rows: Record<string, Plain>[]): void {
  const bySubject = verdicts.get(run) ?? new Map<string, { n: number; errors: number }>();
  verdicts.set(run, bySubject);
  for (const r of rows) {
    const v = bySubject.get(String(r.subject)) ?? { n: 0, errors: 0 };
    v.n += Number(r.tn);
    v.errors += Number(r.te);
    bySubject.set(String(r.subject), v);
  }
}

/**
 * How the packed pivot (`packedRows`) encodes a sample's verdicts in two integers: the scorer's
 * distinct values (sorted; bound as `$pv0`, `$pv1`, ...), and per judge a field of `width` bits in
 * `f` (one bit per value it gave, then "some verdict excluded as self", "some verdict not
 * excluded") and of `countBits` bits in `c` (its judgments). Null when they do not fit in 63 bits
 * or a value is not finite: the string-keyed pivot (`perSampleSql`) is used.
 */
export interface Pack {
  values: number[];
  width: number;
  countBits: number;
  /** The key a sample's judgments are grouped and joined on, over an episode id expression: two 64-bit hashes (tests put a colliding key here). */
  key: (id: string) => string[];
}

/** At most this many distinct values of a scorer are packed (a value per bit, per judge). */
export const PACK_MAX_VALUES = 16;

/** Two independent 64-bit hashes of the episode id: a 128-bit key per sample. */
export const sampleKey = (id: string): string[] => [`hash(${id})`, `hash('#' || ${id})`];

/** The scorer's distinct non-NULL values, sorted, or null when there are more than `PACK_MAX_VALUES` or one is not finite. */
async function scorerValues(q: Query, scorer: string): Promise<number[] | null> {
  const rows = await q(`SELECT DISTINCT value FROM judgments WHERE scorer = $scorer AND value IS NOT NULL ORDER BY value LIMIT ${PACK_MAX_VALUES + 1}`, { scorer });
  const values = rows.map((r) => Number(r.value));
  return values.length > PACK_MAX_VALUES || !values.every(Number.isFinite) ? null : values;
}

function packOf(o: PatternQuery): Pack | null {
  const k = o.judges.length;
  if (!o.values) return null;
  const width = o.values.length + 2;
  if (k * width > 63 || k > 7) return null;
  return { values: o.values, width, countBits: Math.floor(63 / k), key: o.sampleKey ?? sampleKey };
}

/**
 * The pattern rows of `part` (a whole run whose episode ids are unique), as `perSampleSql` and the
 * pattern GROUP BY give them, but grouped and joined on a 128-bit hash of the episode id instead of
 * the id itself, with each sample's verdicts packed in two integers (`Pack`): at 1e7 grouping 29.8M
 * judgments on a string key with eleven FILTER aggregates was most of the judge scan. The fields
 * are decoded in SQL into the same columns (values from the bound list, so the same doubles) and
 * grouped and ordered as before. Checked, else null (the caller runs the string-keyed pivot): every
 * judgment the query read was joined to exactly one episode (the samples' judgments summed over the
 * join equal the run's count: a judgment without an episode, or two episodes sharing a key, make
 * them differ), and no sample has `2^countBits` judgments. Not detected: a judgment whose episode is
 * missing, with an id sharing both 64-bit hashes with an episode's id of the run (~2^-128 a pair).
 */
async function packedRows(q: Query, o: PatternQuery, pack: Pack, part: SamplePart, all: boolean): Promise<Record<string, Plain>[] | null> {
  const { values, width: w, countBits: b } = pack;
  const m = values.length;
  const vals = `[${values.map((_, i) => `CAST($pv${i} AS DOUBLE)`).join(', ')}]`;
  const jl = `[${o.judges.map((_, i) => `$j${i}`).join(', ')}]`;
  const ji = all ? `CASE WHEN j.scorer = $scorer THEN list_position(${jl}, j.judge_model) END` : `list_position(${jl}, j.judge_model)`;
  const bit = (n: number | string) => `(CAST(1 AS BIGINT) << CAST(${n} AS BIGINT))`;
  const flag = `CASE WHEN ji > 0 THEN (CASE WHEN value IS NULL THEN 0 ELSE ${bit(`list_position(${vals}, value) - 1`)} END | CASE WHEN excluded_self THEN ${2 ** m} WHEN NOT excluded_self THEN ${2 ** (m + 1)} ELSE 0 END) << CAST(${w} * (ji - 1) AS BIGINT) ELSE 0 END`;
  const cnt = `CASE WHEN ji > 0 THEN ${bit(`${b} * (ji - 1)`)} ELSE 0 END`;
  const jk = pack.key('j.episode_id');
  const ek = pack.key('e.episode_id');
  const keys = jk.map((_, i) => `k${i}`).join(', ');
  const src = `SELECT ${jk.map((x, i) => `${x} AS k${i}`).join(', ')}, ${ji} AS ji, j.value, j.excluded_self, j.verdict FROM judgments j WHERE ${all ? '' : 'j.scorer = $scorer AND '}j.run_id = $run`;
  const te = all ? `, CAST(count(*) FILTER (WHERE verdict = 'ERROR') AS BIGINT) AS te` : '';
  const a = `SELECT ${keys}, bit_or(${flag}) AS f, CAST(sum(${cnt}) AS BIGINT) AS c, CAST(count(*) AS BIGINT) AS tn${te} FROM s GROUP BY ${keys}`;
  const on = ek.map((x, i) => `${x} = a.k${i}`).join(' AND ');
  const p = `SELECT ${o.subject} AS subject, a.f, a.c, count(*) AS n, sum(a.tn) AS tn${all ? ', sum(a.te) AS te' : ''}, max(a.tn) AS mx FROM a JOIN episodes e ON ${on} ${o.join} WHERE e.run_id = $run GROUP BY ALL`;
  const dec = o.judges.map((_, i) => {
    const vb = `((f >> ${w * i}) & ${2 ** m - 1})`;
    const v = values.map((_, r) => `WHEN ${vb} >= ${2 ** r} THEN CAST($pv${r} AS DOUBLE)`).reverse().join(' ');
    return `CASE ${v || 'WHEN false THEN CAST(NULL AS DOUBLE)'} END AS v${i}, CASE WHEN (f >> ${w * i + m}) & 1 = 1 THEN true WHEN (f >> ${w * i + m + 1}) & 1 = 1 THEN false END AS x${i}, CAST((c >> ${b * i}) & ${2 ** b - 1} AS INTEGER) AS c${i}`;
  });
  const sel = o.judges.map((_, i) => `v${i}, x${i}, c${i}`).join(', ');
  const sql = `WITH s AS (${src}), a AS (${a}), p AS (${p}), d AS (SELECT subject, ${dec.join(', ')}, n, tn${all ? ', te' : ''}, mx FROM p)
    SELECT subject, ${sel}, CAST(sum(n) AS BIGINT) AS n, CAST(sum(tn) AS BIGINT) AS tn${all ? ', CAST(sum(te) AS BIGINT) AS te' : ''}, max(mx) AS mx FROM d GROUP BY subject, ${sel} ORDER BY subject, ${sel}`;
  const params = { scorer: o.scorer, run: part.run, ...Object.fromEntries(o.judges.map((jm, i) => [`j${i}`, jm])), ...Object.fromEntries(values.map((v, i) => [`pv${i}`, v])) };
  const rows = await q(sql, params);
  const joined = rows.reduce((t, r) => t + Number(r.tn), 0);
  if (joined !== part.judgments || rows.some((r) => Number(r.mx) >= 2 ** b)) return null;
  return rows.map(({ mx: _m, ...r }) => r);
}

/** Each judge's value, self-exclusion and judgments per sample; with `all`, the judges' columns filtered on the scorer and the sample's judgments and ERROR verdicts of every scorer beside. */
function pivotColumns(judges: string[], all: boolean): string {
  const cols = judges.map((_, i) => {
    const f = `FILTER (WHERE ${all ? 'j.scorer = $scorer AND ' : ''}j.judge_model = $j${i})`;
    return `max(j.value) ${f} AS v${i}, bool_or(j.excluded_self) ${f} AS x${i}, CAST(count(*) ${f} AS INTEGER) AS c${i}`;
  });
  if (all) cols.push(`CAST(count(*) AS INTEGER) AS tn`, `CAST(count(*) FILTER (WHERE j.verdict = 'ERROR') AS INTEGER) AS te`);
  return cols.join(', ');
}

/** Pattern rows of several partitions summed into one list, in the order a single pass sorts them (ORDER BY ALL: subject, then v0, x0, c0, ...; NULLs last). */
function mergePatternRows(parts: Record<string, Plain>[][], judges: number): Record<string, Plain>[] {
  const keys = ['subject', ...Array.from({ length: judges }, (_, i) => [`v${i}`, `x${i}`, `c${i}`]).flat()];
  const merged = new Map<string, Record<string, Plain>>();
  for (const rows of parts) {
    for (const r of rows) {
      const k = JSON.stringify(keys.map((c) => r[c]));
      const m = merged.get(k);
      if (m) m.n = Number(m.n) + Number(r.n);
      else merged.set(k, { ...r });
    }
  }
  const cmp = (a: Plain, b: Plain): number => {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : 1;
    return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
  };
  return [...merged.values()].sort((a, b) => {
    for (const c of keys) {
      const d = cmp(a[c], b[c]);
      if (d !== 0) return d;
    }
    return 0;
  });
}

/** Judges x patterns matrix of `pick(cell)` (null where a judge gave no value). */
export function patternMatrix(p: JudgePatterns, pick: (c: JudgeCell) => number | null = (c) => c.value): (number | null)[][] {
  return p.judges.map((_, j) => p.patterns.map((x) => (x.cells[j].present ? pick(x.cells[j]) : null)));
}

/**
 * Krippendorff's alpha with a percentile bootstrap over units from rated units given as patterns
 * (raters x patterns) with counts; units without any value are left out. `standoff agreement`
 * (store or file) and the report's judge section both call this, so they agree for a seed.
 */
export function agreementFromCounts(
  patterns: ReadonlyArray<ReadonlyArray<Rating>>,
  counts: ArrayLike<number>,
  opts: { level: AlphaLevel; ciLevel?: number; seed: number; resamples: number },
): AgreementResult {
  const P = counts.length;
  const keep = Array.from({ length: P }, (_, u) => patterns.some((row) => row[u] !== null && row[u] !== undefined));
  const m = patterns.map((row) => row.filter((_, u) => keep[u]));
  const w = Array.from(counts).filter((_, u) => keep[u]);
  const b = krippendorffAlphaBootstrapCounts(m, w, opts.level, { resamples: opts.resamples, levelCI: opts.ciLevel, seed: opts.seed });
  const out: AgreementResult = {
    alpha: b.estimate,
    lower: b.lower,
    upper: b.upper,
    level: b.level,
    se: b.se,
    measurement: opts.level,
    units: b.pairableUnits,
    raters: b.raters,
    pairable_values: b.pairableValues,
    resamples: b.resamples,
    undefined_resamples: b.undefinedResamples,
    seed: b.seed,
    method: 'percentile',
    sampling: 'independent',
  };
  if (b.estimate === null) out.note = 'alpha is undefined: no unit has two values, or the pairable values show no variation';
  return out;
}
