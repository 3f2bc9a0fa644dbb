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
 * limit allows: 3 at 1e7 (29.8M judgments), 1 at 1e6.
 */
export const JUDGMENTS_PER_PART = 10_000_000;

/** How many hash partitions keep each within `perPart` judgments. */
export const partitionsFor = (judgments: number, perPart = JUDGMENTS_PER_PART): number => Math.max(1, Math.ceil(judgments / perPart));

/** The predicate keeping partition `index` of `of` (judgments aliased `j`, or `alias`; a sample is in exactly one); '' when there is one. */
export const samplePartitionSql = (of: number, index: number, alias = 'j'): string => (of > 1 ? `AND hash(${alias}.run_id, ${alias}.episode_id) % ${of} = ${index}` : '');

/**
 * One row per judged sample that has an episode, as `SELECT ... FROM judgments j JOIN episodes e
 * ... GROUP BY j.run_id, j.episode_id` gives it, but cheaper: the judgments are aggregated per
 * sample first (`agg`: `run_id, episode_id` and the per-sample columns), then joined to the
 * partition's episodes and grouped again, so the join sees one row per sample instead of one per
 * judgment. `keep(k)` is a column of `agg` as the one-pass query has it (`any_value`), `count(k)` a
 * count of judgments, multiplied by the sample's episode rows as the one-pass join multiplies it
 * (a store with an episode twice: `standoff judges` then reports the duplicate). `select` is
 * evaluated over episodes `e` (and `join`).
 */
export function perSampleSql(o: { agg: string; from: string; part: { of: number; index: number }; select: string; join?: string; keep: string[]; counts: string[] }): string {
  const cols = [...o.keep.map((k) => `any_value(a.${k}) AS ${k}`), ...o.counts.map((k) => `CAST(any_value(a.${k}) * count(*) AS INTEGER) AS ${k}`)].join(', ');
  return `WITH a AS (SELECT j.run_id, j.episode_id, ${o.agg} ${o.from} ${samplePartitionSql(o.part.of, o.part.index)} GROUP BY j.run_id, j.episode_id)
    SELECT a.run_id, a.episode_id, ${o.select}, ${cols}
    FROM a JOIN episodes e ON e.run_id = a.run_id AND e.episode_id = a.episode_id ${o.join ?? ''} WHERE true ${samplePartitionSql(o.part.of, o.part.index, 'e')}
    GROUP BY a.run_id, a.episode_id`;
}

/**
 * The scorer's judgments as patterns. `subject` is the SQL expression naming a sample's subject
 * and `join` the joins that make it available (the report's `r_subject` labels; the CLI's model
 * names), over episodes aliased `e`.
 */
export async function loadJudgePatterns(
  q: (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>,
  scorer: string,
  subject = 'e.subject_model',
  join = '',
  judgmentsPerPart = JUDGMENTS_PER_PART,
): Promise<JudgePatterns> {
  // The scorer and the judge models are bound ($scorer, $j0, $j1, ...), never written into the SQL.
  const n = (cond: string) => `CAST(count(*) FILTER (WHERE ${cond}) AS BIGINT)`;
  const judgeRows = await q(`
    SELECT judge_model, any_value(judge_family) AS family, ${n(`verdict = 'ALIGNED'`)} AS aligned, ${n(`verdict = 'MISALIGNED'`)} AS misaligned,
           ${n(`verdict = 'ERROR'`)} AS error, ${n(`verdict = 'MISALIGNED' AND raw IS NOT NULL AND raw <> 'MISALIGNED'`)} AS rejected,
           ${n('excluded_self AND value IS NOT NULL')} AS excluded_self
    FROM judgments WHERE scorer = $scorer GROUP BY judge_model ORDER BY judge_model`, { scorer });
  const judges = judgeRows.map((r) => String(r.judge_model));
  if (judges.length === 0) return { scorer, judges, families: [], verdicts: [], patterns: [] };
  const cols = judges
    .map((_, i) => {
      const f = `FILTER (WHERE j.judge_model = $j${i})`;
      return `max(j.value) ${f} AS v${i}, bool_or(j.excluded_self) ${f} AS x${i}, CAST(count(*) ${f} AS INTEGER) AS c${i}`;
    })
    .join(', ');
  const keep = judges.flatMap((_, i) => [`v${i}`, `x${i}`]);
  const counts = judges.map((_, i) => `c${i}`);
  const sel = judges.map((_, i) => `v${i}, x${i}, c${i}`).join(', ');
  // Counted per hash partition of the samples (a sample is in exactly one), then merged: each
  // GROUP BY holds a bounded share of the samples (at 1e7 one pass ran DuckDB out of memory).
  const total = judgeRows.reduce((s, r) => s + Number(r.aligned) + Number(r.misaligned) + Number(r.error), 0);
  const of = partitionsFor(total, judgmentsPerPart);
  const params = { scorer, ...Object.fromEntries(judges.map((jm, i) => [`j${i}`, jm])) };
  const parts: Record<string, Plain>[][] = [];
  for (let index = 0; index < of; index++) {
    parts.push(await q(`
    WITH p AS (${perSampleSql({ agg: cols, from: 'FROM judgments j WHERE j.scorer = $scorer', part: { of, index }, select: `any_value(${subject}) AS subject`, join, keep, counts })})
    SELECT subject, ${sel}, CAST(count(*) AS BIGINT) AS n FROM p GROUP BY ALL ORDER BY ALL`, params));
  }
  const rows = of === 1 ? parts[0] : mergePatternRows(parts, judges.length);
  return {
    scorer,
    judges,
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
  };
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
