/**
 * The composition ladder ("Reading Right, Acting Wrong" section 6.1): per subject, decision
 * accuracy on the same states under each condition, `raw` -> `own-answers` -> `facts` ->
 * `composed` (`PROBE_CONDITIONS`), and the difference between each two adjacent steps that were
 * run, paired on the state answer (state x epoch) and clustered by state.
 *
 *   loadProbeLadder(q, { level, seed, resamples, subject?, excludeStates? }) -> ProbeLadder
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
 */
import { PROBE_CONDITIONS, type ProbeCondition } from '../schema/tables.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachChunk, type Plain, type SqlParams } from '../store/duckdb.ts';
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

/** One row per (run, subject, state answer, condition) with its correctness: non-ambiguous states. */
function ladderRowsSql(o: LadderOptions, part: ProbePart = ALL_PARTS[0]): string {
  const subject = o.subject ? `${o.subject.expr} AS subject` : 'd.subject_model AS subject';
  const join = o.subject?.join ?? '';
  const excl = `${o.excludeStates ? ` AND ${EXCLUDED_STATES_FILTER}` : ''}${partFilterSql('d', part)}`;
  const cols = `d.run_id, ${subject}, d.scenario_id, d.state_id`;
  return `
    SELECT x.* FROM (
      SELECT ${cols}, coalesce(d.condition, 'raw') AS condition, d.correct FROM probe_decisions d ${join} WHERE true${excl}
      UNION ALL
      SELECT ${cols}, 'composed' AS condition, d.composed_correct AS correct FROM probe_decisions d ${join}
      WHERE d.condition IS NULL AND d.composed_correct IS NOT NULL${excl}
    ) x LEFT JOIN (SELECT DISTINCT run_id, scenario_id, target FROM episodes WHERE true${partFilterSql('', part)}) m USING (run_id, scenario_id)
    WHERE m.target IS DISTINCT FROM 'NOANSWER'`;
}

/** Per (subject, state): per condition the count right and answers, per condition pair the pairs and the sum of to - from. */
export function ladderSql(o: LadderOptions, part: ProbePart = ALL_PARTS[0]): string {
  const c = (k: number) => `c${k}`;
  const perAnswer = PROBE_CONDITIONS.map((name, k) => `CAST(bool_or(correct) FILTER (WHERE condition = '${name}') AS INTEGER) AS ${c(k)}`).join(', ');
  const perState = [
    ...PROBE_CONDITIONS.map((_, k) => `CAST(count(${c(k)}) AS DOUBLE) AS n${k}, CAST(coalesce(sum(${c(k)}), 0) AS DOUBLE) AS k${k}`),
    ...PAIRS.map(([i, j]) => `CAST(count(${c(i)} + ${c(j)}) AS DOUBLE) AS p${i}${j}, CAST(coalesce(sum(${c(j)} - ${c(i)}), 0) AS DOUBLE) AS d${i}${j}`),
  ].join(',\n           ');
  return `
    WITH a AS (SELECT run_id, subject, scenario_id, state_id, ${perAnswer} FROM (${ladderRowsSql(o, part)}) GROUP BY ALL)
    SELECT subject, scenario_id,
           ${perState}
    FROM a GROUP BY ALL ORDER BY subject, scenario_id`;
}

type Col = { count: number[]; n: number[] };
const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);
const statesOf = (n: readonly number[]) => n.filter((x) => x > 0).length;

/** The columns of `ladderSql`'s rows after subject and scenario_id: per condition n, k; per pair p, d. */
const VALUE_COLUMNS = [...PROBE_CONDITIONS.flatMap((_, k) => [`n${k}`, `k${k}`]), ...PAIRS.flatMap(([i, j]) => [`p${i}${j}`, `d${i}${j}`])];

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
  const have = new Set((await q(`SELECT DISTINCT condition FROM (${ladderRowsSql(o)})`)).map((r) => String(r.condition)));
  return PROBE_CONDITIONS.filter((c) => have.has(c));
}

/**
 * The ladder of every subject (by label), from the store behind `src` (a function returning rows,
 * or a connection to stream the per-state rows from), part by part (`loadProbeParts`): a subject's
 * states arrive in one pass's order, so the ladder does not depend on the parts.
 */
export async function loadProbeLadder(src: Q | { conn: DuckDBConnection; q: Q }, o: LadderOptions & { parts?: ProbePart[] }): Promise<ProbeLadder> {
  const q = typeof src === 'function' ? src : src.q;
  const parts = o.parts ?? (await loadProbeParts(q));
  const bySubject = new Map<string, SubjectLadderColumns>();
  const values = new Float64Array(VALUE_COLUMNS.length);
  let cur: SubjectLadderColumns | null = null;
  const add = (subject: string) => {
    if (cur?.subject !== subject) {
      cur = bySubject.get(subject) ?? null;
      if (!cur) bySubject.set(subject, (cur = new SubjectLadderColumns(subject)));
    }
    cur.add(values);
  };
  for (const part of parts) {
    const params = part.lo === null && part.hi === null ? undefined : partParams(part);
    if (typeof src === 'function') {
      for (const r of await src(ladderSql(o, part), params)) {
        VALUE_COLUMNS.forEach((c, k) => (values[k] = Number(r[c])));
        add(String(r.subject));
      }
    } else {
      await forEachChunk(src.conn, ladderSql(o, part), params, (cols, rows) => {
        for (let i = 0; i < rows; i++) {
          for (let k = 0; k < VALUE_COLUMNS.length; k++) values[k] = Number(cols[k + 2][i]);
          add(String(cols[0][i]));
        }
      });
    }
  }
  const names = [...bySubject.keys()];
  if (parts.length > 1) names.sort((a, b) => compareGroupValues([a], [b]));
  const subjects = names.map((s) => buildSubjectLadder(bySubject.get(s)!, o));
  const conditions_run = PROBE_CONDITIONS.filter((c) => subjects.some((s) => s.steps.find((x) => x.condition === c)!.run));
  return { conditions_run, subjects };
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
