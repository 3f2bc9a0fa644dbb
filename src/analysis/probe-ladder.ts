/**
 * The composition ladder ("Reading Right, Acting Wrong" section 6.1): per subject, decision
 * accuracy on the same states under each condition, `raw` -> `own-answers` -> `facts` ->
 * `composed` (`PROBE_CONDITIONS`), and the difference between each two adjacent steps that were
 * run, paired on the state answer (state x epoch) and clustered by state.
 *
 *   loadProbeLadder(q, { level, seed, resamples, subject?, excludeStates?, parts?, conditions? }) -> ProbeLadder
 *   loadLadderConditions(q, opts) -> the conditions run (what the report checks before loading the ladder)
 *
 * Non-ambiguous states only (an ambiguous state has no single correct action; as in the
 * composition table). A step with no row for a subject is **not run** (`run: false`, no
 * accuracy), never 0. Stores written before the `condition` column hold one row per state: it is
 * the raw decision, and its composed_correct (where not null) is the composed step.
 *
 * Intervals: each step's accuracy as every probe share (`stateIntervals`: cluster bootstrap over
 * states where states repeat, Clopper-Pearson otherwise); each difference as the composition
 * table's (`pairedDifferenceInterval`: the percentile cluster bootstrap of the per-state sums of
 * to - from, whole states resampled). Per-state sums come from SQL; nothing here sees answers.
 *
 * SQL (`ladderSql`), per scenario-range part (`LADDER_DECISIONS_PER_PART`): one pass over the
 * decisions, grouped per state answer on integer subject and run keys (`withSubjectKeys`), with
 * one column per condition the runs used; then per (subject, scenario). The ambiguous states are
 * left out by a join to the episodes' targets held in a small temp table (`withEpisodeTargets`).
 */
import { PROBE_CONDITIONS, type ProbeCondition } from '../schema/tables.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachRow, type Plain, type SqlParams } from '../store/duckdb.ts';
import { withEpisodeTargets, withSubjectKeys } from './probe-temp-tables.ts';
import { ALL_PARTS, compareGroupValues, loadProbeParts, partFilterSql, partParams, type ProbePart } from './probe-parts.ts';
import { EXCLUDED_STATES_FILTER, pairedDifferenceInterval, shareInterval, type ProbeTableOptions, type ShareInterval } from './probe-tables.ts';
import type { Interval, RateOptions } from './rates.ts';

export interface LadderStep {
  condition: ProbeCondition;
  /** False when no row of this condition exists for the subject: not run (no accuracy, not 0). */
  run: boolean;
  /** Decision accuracy under the condition; null when not run. */
  accuracy: ShareInterval | null;
  /** Distinct states with a decision under the condition. */
  states: number;
}

export interface LadderDifference {
  from: ProbeCondition;
  to: ProbeCondition;
  /** State answers decided under both conditions (the pairs). */
  pairs: number;
  /** Distinct states among the pairs (the clusters). */
  states: number;
  /** Accuracy under `to` minus under `from`, on the pairs; null without pairs. */
  difference: number | null;
  /** Paired cluster bootstrap over states of the difference (percentile). */
  interval: Interval;
}

export interface SubjectLadder {
  subject: string;
  steps: LadderStep[];
  /** Between each two adjacent steps that were run, in ladder order. */
  differences: LadderDifference[];
}

export interface ProbeLadder {
  /** Conditions with a row for at least one subject, in ladder order. */
  conditions_run: ProbeCondition[];
  subjects: SubjectLadder[];
}

export type LadderOptions = RateOptions & Pick<ProbeTableOptions, 'subject' | 'excludeStates'>;

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

const K = PROBE_CONDITIONS.length;
const PAIRS: [number, number][] = [];
for (let i = 0; i < K; i++) for (let j = i + 1; j < K; j++) PAIRS.push([i, j]);

/** The filter on `d` (probe_decisions) of `part` and, when asked, of the flagged states. */
const decisionFilter = (o: LadderOptions, part: ProbePart) => `${o.excludeStates ? ` AND ${EXCLUDED_STATES_FILTER}` : ''}${partFilterSql('d', part)}`;

/** The episodes' targets the ladder's queries join (`withEpisodeTargets`). */
const TARGETS = 'probe_ladder_targets';

/** Non-ambiguous states: the episodes' targets joined to `d` (a state of a NOANSWER scenario is left out by the WHERE). */
const NOT_AMBIGUOUS = `LEFT JOIN ${TARGETS} m ON m.run_id = d.run_id AND m.scenario_id = d.scenario_id`;

/**
 * Per state answer, whether the decision under condition k was right (1, 0, or NULL when none):
 * a row is under its `condition` (raw when null); a row of a store written before the column is
 * also the composed step, by its composed_correct. One pass over the decisions.
 */
const perAnswerSql = (c: (k: number) => string, present: readonly number[]) =>
  present
    .map((k) => {
      const name = PROBE_CONDITIONS[k];
      const value =
        name === 'composed'
          ? `bool_or(CASE WHEN d.condition = 'composed' THEN d.correct WHEN d.condition IS NULL THEN d.composed_correct END)`
          : `bool_or(d.correct) FILTER (WHERE coalesce(d.condition, 'raw') = '${name}')`;
      return `CAST(${value} AS INTEGER) AS ${c(k)}`;
    })
    .join(', ');

/** The integer subject keys the ladder's queries join (`withSubjectKeys`). */
const KEYS = 'probe_ladder_keys';

/**
 * Per (subject key `ix`, scenario): for each condition in `present` (indices into
 * PROBE_CONDITIONS) the count right and answers, per pair of them the pairs and the sum of to -
 * from (`valueColumns(present)`, in that order); non-ambiguous states, sorted by (ix,
 * scenario_id). A condition left out of `present` has no row: its columns would be all zero.
 * Reads the temp tables of `withSubjectKeys` (`probe_ladder_keys`) and `withEpisodeTargets`.
 */
export function ladderSql(o: LadderOptions, part: ProbePart = ALL_PARTS[0], present: readonly number[] = PROBE_CONDITIONS.map((_, k) => k)): string {
  const c = (k: number) => `c${k}`;
  const has = new Set(present);
  const perState = [
    ...present.map((k) => `CAST(count(${c(k)}) AS DOUBLE) AS n${k}, CAST(coalesce(sum(${c(k)}), 0) AS DOUBLE) AS k${k}`),
    ...PAIRS.filter(([i, j]) => has.has(i) && has.has(j)).map(([i, j]) => `CAST(count(${c(i)} + ${c(j)}) AS DOUBLE) AS p${i}${j}, CAST(coalesce(sum(${c(j)} - ${c(i)}), 0) AS DOUBLE) AS d${i}${j}`),
  ].join(',\n           ');
  return `
    WITH a AS (
      SELECT k.ix, d.scenario_id, ${perAnswerSql(c, present)}
      FROM probe_decisions d JOIN ${KEYS} k ON k.run_id = d.run_id AND k.subject_model = d.subject_model
      ${NOT_AMBIGUOUS}
      WHERE m.target IS DISTINCT FROM 'NOANSWER'${decisionFilter(o, part)}
      GROUP BY k.run_ix, k.ix, d.scenario_id, d.state_id)
    SELECT ix, scenario_id,
           ${perState}
    FROM a GROUP BY ix, scenario_id ORDER BY ix, scenario_id`;
}

type Col = { count: number[]; n: number[] };
const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);
const statesOf = (n: readonly number[]) => n.filter((x) => x > 0).length;

/** The columns of `ladderSql`'s rows after subject and scenario_id: per condition n, k; per pair p, d. */
const VALUE_COLUMNS = [...PROBE_CONDITIONS.flatMap((_, k) => [`n${k}`, `k${k}`]), ...PAIRS.flatMap(([i, j]) => [`p${i}${j}`, `d${i}${j}`])];

/** The positions in VALUE_COLUMNS of the columns `ladderSql(o, part, present)` returns, in its order. */
function valueColumns(present: readonly number[]): number[] {
  const has = new Set(present);
  const names = [...present.flatMap((k) => [`n${k}`, `k${k}`]), ...PAIRS.filter(([i, j]) => has.has(i) && has.has(j)).flatMap(([i, j]) => [`p${i}${j}`, `d${i}${j}`])];
  return names.map((n) => VALUE_COLUMNS.indexOf(n));
}

/**
 * One subject's per-state columns, a state at a time (sorted by state): per condition the answers
 * and the count right, per condition pair the pairs and the sum of to - from. A column that is
 * zero in every state so far holds nothing (a condition not run costs no memory); it is filled
 * with zeros when a state first has a value there.
 */
export class SubjectLadderColumns {
  private readonly cols: (number[] | null)[] = VALUE_COLUMNS.map(() => null);
  length = 0;
  constructor(readonly subject: string) {}

  /** One state's values, in `VALUE_COLUMNS` order. */
  add(values: ArrayLike<number>): void {
    for (let c = 0; c < VALUE_COLUMNS.length; c++) {
      const v = values[c];
      let col = this.cols[c];
      if (col === null) {
        if (v === 0) continue;
        col = this.cols[c] = new Array<number>(this.length).fill(0);
      }
      col.push(v);
    }
    this.length++;
  }

  /** Column `name` over every state (zeros where never set). */
  column(name: string): number[] {
    const col = this.cols[VALUE_COLUMNS.indexOf(name)];
    return col ?? new Array<number>(this.length).fill(0);
  }
}

/** One subject's ladder from its per-state columns. Pure. */
export function buildSubjectLadder(cols: SubjectLadderColumns, o: RateOptions): SubjectLadder {
  const steps: Col[] = PROBE_CONDITIONS.map((_, k) => ({ count: cols.column(`k${k}`), n: cols.column(`n${k}`) }));
  const ladder: LadderStep[] = PROBE_CONDITIONS.map((condition, k) => {
    const n = sum(steps[k].n);
    return { condition, run: n > 0, accuracy: n > 0 ? shareInterval(sum(steps[k].count), n, steps[k], o) : null, states: statesOf(steps[k].n) };
  });
  const run = PROBE_CONDITIONS.map((_, k) => k).filter((k) => ladder[k].run);
  const differences = run.slice(1).map((j, x) => {
    const i = run[x];
    const p: Col = { count: cols.column(`d${i}${j}`), n: cols.column(`p${i}${j}`) };
    const n = sum(p.n);
    return { from: PROBE_CONDITIONS[i], to: PROBE_CONDITIONS[j], pairs: n, states: statesOf(p.n), difference: n > 0 ? sum(p.count) / n : null, interval: pairedDifferenceInterval(p.count, p.n, o) };
  });
  return { subject: cols.subject, steps: ladder, differences };
}

/** The conditions the runs decided under (non-ambiguous states; raw and composed for stores written before the column), without loading any state: `conditions_run` of `loadProbeLadder`. */
export async function loadLadderConditions(q: Q, o: LadderOptions): Promise<ProbeCondition[]> {
  const [r] = await withEpisodeTargets(q, TARGETS, [], () =>
    q(`SELECT list(DISTINCT coalesce(d.condition, 'raw')) AS conditions, coalesce(bool_or(d.condition IS NULL AND d.composed_correct IS NOT NULL), false) AS composed
       FROM probe_decisions d ${NOT_AMBIGUOUS}
       WHERE m.target IS DISTINCT FROM 'NOANSWER'${decisionFilter(o, ALL_PARTS[0])}`),
  );
  const have = new Set(((r.conditions ?? []) as Plain[]).map(String));
  if (r.composed === true) have.add('composed');
  return PROBE_CONDITIONS.filter((c) => have.has(c));
}

/**
 * State answers (decisions) per part of the ladder's query, whose GROUP BY holds one entry per
 * state answer: at 1e7 episodes (10M decisions) two parts. The probe tables' parts are sized by
 * probe answers (`PROBE_ANSWERS_PER_PART`, eight parts at 1e7). Measured on session 11's store,
 * whose decisions are not in scenario order (each part scans every row group): ladder of
 * `standoff probes` at 1e7, 12.8 s CPU in eight parts, 8.7 s (peak RSS 772 MB) in two, 9.8 s
 * (1,151 MB) in one.
 */
export const LADDER_DECISIONS_PER_PART = 6_000_000;

/** Scenario-range parts (`loadProbeParts`) of about `LADDER_DECISIONS_PER_PART` decisions each. */
async function ladderParts(q: Q): Promise<ProbePart[]> {
  const [{ a, d }] = await q(`SELECT (SELECT CAST(count(*) AS BIGINT) FROM probe_answers) AS a, (SELECT CAST(count(*) AS BIGINT) FROM probe_decisions) AS d`);
  const [answers, decisions] = [Number(a), Number(d)];
  if (decisions <= LADDER_DECISIONS_PER_PART || answers === 0) return ALL_PARTS;
  return loadProbeParts(q, { answersPerPart: Math.ceil((answers * LADDER_DECISIONS_PER_PART) / decisions) });
}

/**
 * The ladder of every subject (by label), from the store behind `src` (a function returning rows,
 * or a connection to stream the per-state rows from), part by part (`loadProbeParts`): a subject's
 * states arrive in one pass's order, so the ladder does not depend on the parts. Only the
 * conditions the runs decided under are aggregated (`conditions`, else `loadLadderConditions`):
 * any other is all zero, not run.
 */
export async function loadProbeLadder(src: Q | { conn: DuckDBConnection; q: Q }, o: LadderOptions & { parts?: ProbePart[]; conditions?: readonly ProbeCondition[] }): Promise<ProbeLadder> {
  const q = typeof src === 'function' ? src : src.q;
  const parts = o.parts ?? (await ladderParts(q));
  const conditions = o.conditions ?? (await loadLadderConditions(q, o));
  const present = PROBE_CONDITIONS.flatMap((c, k) => (conditions.includes(c) ? [k] : []));
  // A condition absent from the runs aggregates to zeros: with none present, raw stands in so the queries list the subjects.
  if (present.length === 0) present.push(0);
  const targets = (fn: () => Promise<Map<string, SubjectLadderColumns>>) => withEpisodeTargets(q, TARGETS, [], fn);
  const bySubject = await withSubjectKeys(q, KEYS, o.subject, (labels) => targets(() => foldLadder(src, o, parts, present, labels)));
  const names = [...bySubject.keys()];
  if (parts.length > 1) names.sort((a, b) => compareGroupValues([a], [b]));
  const subjects = names.map((s) => buildSubjectLadder(bySubject.get(s)!, o));
  const conditions_run = PROBE_CONDITIONS.filter((c) => subjects.some((s) => s.steps.find((x) => x.condition === c)!.run));
  return { conditions_run, subjects };
}

/** `ladderSql`'s rows of every part folded into per-subject columns (the subject keys' table in place). */
async function foldLadder(src: Q | { conn: DuckDBConnection; q: Q }, o: LadderOptions, parts: ProbePart[], present: number[], labels: Map<number, Plain>): Promise<Map<string, SubjectLadderColumns>> {
  const bySubject = new Map<string, SubjectLadderColumns>();
  const at = valueColumns(present);
  const values = new Float64Array(VALUE_COLUMNS.length);
  let cur: SubjectLadderColumns | null = null;
  let curIx = -1;
  const add = (ix: number) => {
    if (ix !== curIx) {
      const subject = String(labels.get(ix));
      curIx = ix;
      cur = bySubject.get(subject) ?? null;
      if (!cur) bySubject.set(subject, (cur = new SubjectLadderColumns(subject)));
    }
    cur!.add(values);
  };
  for (const part of parts) {
    const params = part.lo === null && part.hi === null ? undefined : partParams(part);
    const sql = ladderSql(o, part, present);
    if (typeof src === 'function') {
      for (const r of await src(sql, params)) {
        for (const k of at) values[k] = Number(r[VALUE_COLUMNS[k]]);
        add(Number(r.ix));
      }
    } else {
      await forEachRow(src.conn, sql, params, (cols, rows) => {
        for (let i = 0; i < rows; i++) {
          for (let c = 0; c < at.length; c++) values[at[c]] = cols[c + 2](i) as number;
          add(cols[0](i) as number);
        }
      });
    }
  }
  return bySubject;
}

/** Plain-text lines of the ladder (`standoff probes`): per subject, each step's accuracy or "not run", then the differences. */
export function ladderText(l: ProbeLadder, level: number, text: (s: string) => string): string[] {
  const L = Math.round(level * 100);
  const p = (x: number | null) => (x === null ? '-' : (100 * x).toFixed(1));
  const out = [`composition ladder (section 6.1; non-ambiguous states; ${L}% intervals resample whole states; differences paired on the state answers decided under both):`];
  for (const s of l.subjects) {
    const steps = s.steps.map((x) => `${x.condition} ${x.accuracy ? `${p(x.accuracy.rate)}% (${x.accuracy.count}/${x.accuracy.n}) [${p(x.accuracy.interval.lower)}, ${p(x.accuracy.interval.upper)}]` : 'not run'}`);
    out.push(`  ${text(s.subject)}: ${steps.join(' | ')}`);
    for (const d of s.differences) {
      const iv = d.interval.lower === null ? `no interval (${d.interval.note ?? 'not computed'})` : `[${p(d.interval.lower)}, ${p(d.interval.upper)}] pp`;
      out.push(`    ${d.from} -> ${d.to}: ${d.difference === null ? '-' : `${d.difference >= 0 ? '+' : ''}${p(d.difference)}`} pp on ${d.pairs} answers (${d.states} states), ${iv}`);
    }
  }
  return out;
}
