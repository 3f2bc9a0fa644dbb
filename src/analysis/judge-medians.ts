/**
 * `standoff judges` over the store, in bounded memory: the median of judges per sample with
 * self-exclusion (`medianOfJudges` in `src/stats`), from SQL aggregates rather than one row per
 * judgment.
 *
 * SQL pivots the judgments to one row per judged sample (the sample's subject and family, and one
 * value per judge model: NULL for ERROR or no verdict). The totals come from the distinct rows of
 * that pivot with their counts (a handful of verdict patterns per subject, whatever the store's
 * size): `medianOfJudges` runs once per pattern and each result is weighted by its count. The
 * per-sample listing streams the same pivot in sample order, a chunk at a time; each row's median
 * is its pattern's, so no JavaScript value outlives its chunk.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { medianOfJudges, type Judge } from '../stats/index.ts';
import { SELF_EXCLUSION_DEFAULT, type ExcludeBy } from '../stats/judge-panel.ts';
import { forEachChunk, query, type Plain, type SqlParams } from '../store/duckdb.ts';
import { dataError } from '../errors.ts';
import { judgedScorersHint, withStore, type StoreSource } from './ci.ts';
import { perSampleSql, samplePartsOf, type SamplePart } from './judge-patterns.ts';

export interface JudgeSampleRow {
  sample: string;
  subject_model: string;
  median: number | null;
  judges_used: string[];
  judges_excluded: string[];
  judges_missing: string[];
}

export interface JudgesTotals {
  samples: number;
  excluded_verdicts: number;
  samples_with_no_judge: number;
  missing_verdicts: number;
  /** An even number of remaining judges whose two middle values differ (the median is their mean). */
  ties: number;
}

type PatternResult = Omit<JudgeSampleRow, 'sample' | 'subject_model'>;

/** The store's judges for one scorer: totals now, the per-sample rows on demand (streamed). */
export interface JudgeMedians {
  scorer: string;
  exclude_by: ExcludeBy;
  totals: JudgesTotals;
  /** Calls `fn` with consecutive chunks of per-sample rows, in sample order (the first `limit` only, when given); returns the rows given. */
  forEachSample(fn: (rows: JudgeSampleRow[]) => void | Promise<void>, limit?: number): Promise<number>;
}

interface Pivot {
  judges: Judge[];
  params: SqlParams;
  /** The per-sample pivot of `part` (a run, a hash part of its samples; binds `$run`) aggregated before the join with episodes (`perSampleSql`): the rows `sql()` gives for them, without `sample`. */
  perSample: (part: SamplePart) => string;
  /** Judges and families read without the join to episodes (`quickJudges`): to be confirmed by the patterns (every judge present on a sample with an episode). */
  quick: boolean;
}

/**
 * The judges as `exactJudges` finds them, read without the join to episodes and without a sample
 * order (at 1e7 the exact query took 16.5 s of 25 s CPU): when every judge has one family on every
 * judgment (never NULL), the family of its first judgment in sample order is that family. Null when
 * some judge has several families or a NULL one. The caller still checks that every judge judged
 * a sample with an episode (else the exact query leaves it out).
 */
async function quickJudges(conn: DuckDBConnection, scorer: string): Promise<Record<string, Plain>[] | null> {
  const rows = (await query(conn, `SELECT judge_model, min(judge_family) AS family, max(judge_family) AS hi, CAST(count(judge_family) AS BIGINT) AS nf, CAST(count(*) AS BIGINT) AS n
    FROM judgments WHERE scorer = $scorer GROUP BY judge_model ORDER BY judge_model`, { scorer })).rows;
  return rows.every((r) => r.family !== null && r.family === r.hi && Number(r.nf) === Number(r.n)) ? rows : null;
}

/** The judge models (sorted) with the family of each judge's first judgment in sample order (judgments with an episode), and their count. */
async function exactJudges(conn: DuckDBConnection, scorer: string): Promise<Record<string, Plain>[]> {
  return (await query(conn, `SELECT j.judge_model, arg_min_null(j.judge_family, j.run_id || '/' || j.episode_id) AS family, CAST(count(*) AS BIGINT) AS n
    FROM judgments j JOIN episodes e USING (run_id, episode_id) WHERE j.scorer = $scorer GROUP BY j.judge_model ORDER BY j.judge_model`, { scorer })).rows;
}

/** The judge models (sorted) with the family of each judge's first judgment in sample order, and the pivot SQL; `quick`: judges from `quickJudges` when it can tell. */
async function loadPivot(conn: DuckDBConnection, scorer: string, quick = true): Promise<Pivot | null> {
  const fast = quick ? await quickJudges(conn, scorer) : null;
  const rows = fast ?? (await exactJudges(conn, scorer));
  if (rows.length === 0) return null;
  // A model without a recorded family is its own family (the runner's convention, runner/config.ts).
  const judges = rows.map((r): Judge => ({ id: String(r.judge_model), model: String(r.judge_model), family: r.family === null ? String(r.judge_model) : String(r.family) }));
  const cols = judges.map((_, i) => `max(j.value) FILTER (WHERE j.judge_model = $j${i}) AS v${i}, CAST(count(*) FILTER (WHERE j.judge_model = $j${i}) AS INTEGER) AS c${i}`).join(', ');
  const subjectOf = (v: (expr: string) => string) => `${v('e.subject_model')} AS subject_model, coalesce(${v('e.subject_family')}, ${v('e.subject_model')}) AS subject_family`;
  const keep = judges.map((_, i) => `v${i}`);
  const counts = judges.map((_, i) => `c${i}`);
  const perSample = (part: SamplePart) => perSampleSql({ agg: cols, from: 'FROM judgments j WHERE j.scorer = $scorer', part, select: subjectOf, keep, counts });
  return { judges, perSample, params: { scorer, ...Object.fromEntries(judges.map((j, i) => [`j${i}`, j.model])) }, quick: fast !== null };
}

/** The pivot's distinct rows (subject, family, a value per judge) with their counts, the most judgments of one judge on a sample (`dup`) and each judge's judgments (`s0`, ...), counted per run and hash part of its samples (a sample is in exactly one). */
async function countPatterns(conn: DuckDBConnection, pivot: Pivot, parts: SamplePart[]): Promise<Record<string, unknown>[]> {
  const vs = pivot.judges.map((_, i) => `v${i}`).join(', ');
  const maxC = pivot.judges.map((_, i) => `c${i}`).join(', ');
  const sums = pivot.judges.map((_, i) => `, CAST(sum(c${i}) AS BIGINT) AS s${i}`).join('');
  const patterns: Record<string, unknown>[] = [];
  for (const part of parts) {
    const sql = `SELECT subject_model, subject_family, ${vs}, CAST(max(greatest(${maxC})) AS INTEGER) AS dup, CAST(count(*) AS BIGINT) AS n${sums} FROM (${pivot.perSample(part)}) GROUP BY ALL`;
    for (const r of (await query(conn, sql, { ...pivot.params, run: part.run })).rows) patterns.push(r);
  }
  return patterns;
}

/** One pattern's median, used, excluded and missing judges (`medianOfJudges` on a one-sample panel) and whether it is a tie. */
function patternResult(judges: Judge[], subject: string, family: string, values: (number | null)[], excludeBy: ExcludeBy): PatternResult & { tie: boolean } {
  const s = medianOfJudges({ judges, samples: [{ id: 'p', subject_model: subject, subject_family: family }], scores: values.map((v) => [v]) }, { excludeBy }).perSample[0]!;
  const used = s.judgesUsed.map((id) => values[judges.findIndex((x) => x.id === id)] as number).sort((a, b) => a - b);
  const tie = used.length % 2 === 0 && used.length > 0 && used[used.length / 2 - 1] !== used[used.length / 2];
  return { median: s.median, judges_used: s.judgesUsed, judges_excluded: s.judgesExcluded, judges_missing: s.judgesMissing, tie };
}

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The first (sample, judge) with two judgments, in sample order: the error the row-by-row reader gave. */
async function duplicateError(conn: DuckDBConnection, scorer: string): Promise<Error> {
  const [r] = (await query(conn, `SELECT j.run_id || '/' || j.episode_id AS sample, j.judge_model FROM judgments j JOIN episodes e USING (run_id, episode_id)
    WHERE j.scorer = $scorer GROUP BY ALL HAVING count(*) > 1 ORDER BY sample, judge_model LIMIT 1`, { scorer })).rows;
  return dataError('input.duplicateJudgment', `judge "${String(r!.judge_model)}" scored sample "${String(r!.sample)}" twice`);
}

/**
 * `judges` over the store: null when the scorer has no judgments. Totals are read now from the
 * verdict patterns; `forEachSample` streams the per-sample rows when a caller wants them.
 */
export async function loadJudgeMedians(conn: DuckDBConnection, opts: { scorer: string; excludeBy?: ExcludeBy; judgmentsPerPart?: number }): Promise<JudgeMedians | null> {
  const { scorer } = opts;
  const excludeBy = opts.excludeBy ?? SELF_EXCLUSION_DEFAULT;
  let pivot = await loadPivot(conn, scorer);
  if (pivot === null) return null;
  const parts = await samplePartsOf(async (sql, params) => (await query(conn, sql, params)).rows, scorer, opts.judgmentsPerPart);
  let patterns = await countPatterns(conn, pivot, parts);
  // A judge read without the join that judged no sample with an episode: the exact judges leave it out.
  if (pivot.quick && pivot.judges.some((_, i) => patterns.every((p) => Number(p[`s${i}`]) === 0))) {
    pivot = await loadPivot(conn, scorer, false);
    if (pivot === null) return null;
    patterns = await countPatterns(conn, pivot, parts);
  }
  const { judges } = pivot;
  const vs = judges.map((_, i) => `v${i}`).join(', ');
  if (patterns.some((p) => Number(p.dup) > 1)) throw await duplicateError(conn, scorer);
  const cache = new Map<string, PatternResult & { tie: boolean }>();
  const resultOf = (subject: string, family: string, values: (number | null)[]) => {
    // Length-prefixed texts, then the values: one key per (subject, family, values), whatever the texts hold.
    let key = `${subject.length}:${subject}${family.length}:${family}`;
    for (const v of values) key += v === null ? ',n' : `,${v}`;
    let r = cache.get(key);
    if (!r) cache.set(key, (r = patternResult(judges, subject, family, values, excludeBy)));
    return r;
  };
  const totals: JudgesTotals = { samples: 0, excluded_verdicts: 0, samples_with_no_judge: 0, missing_verdicts: 0, ties: 0 };
  for (const p of patterns) {
    const n = Number(p.n);
    const r = resultOf(String(p.subject_model), String(p.subject_family), judges.map((_, i) => numOrNull(p[`v${i}`])));
    totals.samples += n;
    totals.excluded_verdicts += n * r.judges_excluded.length;
    totals.missing_verdicts += n * r.judges_missing.length;
    if (r.median === null) totals.samples_with_no_judge += n;
    if (r.tie) totals.ties += n;
  }
  const toRows = (cols: unknown[][], n: number) => {
    const out: JudgeSampleRow[] = new Array(n);
    for (let k = 0; k < n; k++) {
      const subject = String(cols[1]![k]);
      const r = resultOf(subject, String(cols[2]![k]), judges.map((_, i) => numOrNull(cols[3 + i]![k])));
      out[k] = { sample: String(cols[0]![k]), subject_model: subject, median: r.median, judges_used: r.judges_used, judges_excluded: r.judges_excluded, judges_missing: r.judges_missing };
    }
    return out;
  };
  // In sample order (run_id || '/' || episode_id): run by run in that order (samplePartsOf), each run's samples by episode id, each run's pivot in one part.
  const forEachSample = async (fn: (rows: JudgeSampleRow[]) => void | Promise<void>, limit = Infinity) => {
    let rows = 0;
    for (const part of wholeRuns(parts)) {
      if (rows >= limit) break;
      const top = Number.isFinite(limit) ? ` LIMIT ${Math.floor(limit - rows)}` : '';
      const sql = `SELECT $run || '/' || episode_id AS sample, subject_model, subject_family, ${vs} FROM (${pivot.perSample(part)}) ORDER BY episode_id${top}`;
      rows += await forEachChunk(conn, sql, { ...pivot.params, run: part.run }, (cols, n) => fn(toRows(cols, n)));
    }
    return rows;
  };
  return { scorer, exclude_by: excludeBy, totals, forEachSample };
}

/** Each run of `parts` once, in their order, as one part (the whole run). */
function wholeRuns(parts: SamplePart[]): SamplePart[] {
  const out: SamplePart[] = [];
  for (const p of parts) if (out.at(-1)?.run !== p.run) out.push({ ...p, of: 1, index: 0 });
  return out;
}

/** Opens the store (as every statistics command does) and hands `fn` the scorer's medians; a scorer without judgments is a data error naming the judged scorers. */
export async function withJudgeMedians<T>(src: StoreSource, opts: { scorer: string; excludeBy?: ExcludeBy }, fn: (m: JudgeMedians) => Promise<T>): Promise<T> {
  return withStore(src, async (conn) => {
    const m = await loadJudgeMedians(conn, opts);
    if (m === null) throw dataError('judges.noJudgments', `no judgments for scorer "${opts.scorer}" in this store${await judgedScorersHint(conn)}`);
    return fn(m);
  });
}
