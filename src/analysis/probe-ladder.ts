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
import type { Plain } from '../store/duckdb.ts';
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

type Q = (sql: string) => Promise<Record<string, Plain>[]>;

const K = PROBE_CONDITIONS.length;
const PAIRS: [number, number][] = [];
for (let i = 0; i < K; i++) for (let j = i + 1; j < K; j++) PAIRS.push([i, j]);

/** One row per (run, subject, state answer, condition) with its correctness: non-ambiguous states. */
function ladderRowsSql(o: LadderOptions): string {
  const subject = o.subject ? `${o.subject.expr} AS subject` : 'd.subject_model AS subject';
  const join = o.subject?.join ?? '';
  const excl = o.excludeStates ? ` AND ${EXCLUDED_STATES_FILTER}` : '';
  const cols = `d.run_id, ${subject}, d.scenario_id, d.state_id`;
  return `
    SELECT x.* FROM (
      SELECT ${cols}, coalesce(d.condition, 'raw') AS condition, d.correct FROM probe_decisions d ${join} WHERE true${excl}
      UNION ALL
      SELECT ${cols}, 'composed' AS condition, d.composed_correct AS correct FROM probe_decisions d ${join}
      WHERE d.condition IS NULL AND d.composed_correct IS NOT NULL${excl}
    ) x LEFT JOIN (SELECT DISTINCT run_id, scenario_id, target FROM episodes) m USING (run_id, scenario_id)
    WHERE m.target IS DISTINCT FROM 'NOANSWER'`;
}

/** Per (subject, state): per condition the count right and answers, per condition pair the pairs and the sum of to - from. */
export function ladderSql(o: LadderOptions): string {
  const c = (k: number) => `c${k}`;
  const perAnswer = PROBE_CONDITIONS.map((name, k) => `CAST(bool_or(correct) FILTER (WHERE condition = '${name}') AS INTEGER) AS ${c(k)}`).join(', ');
  const perState = [
    ...PROBE_CONDITIONS.map((_, k) => `CAST(count(${c(k)}) AS DOUBLE) AS n${k}, CAST(coalesce(sum(${c(k)}), 0) AS DOUBLE) AS k${k}`),
    ...PAIRS.map(([i, j]) => `CAST(count(${c(i)} + ${c(j)}) AS DOUBLE) AS p${i}${j}, CAST(coalesce(sum(${c(j)} - ${c(i)}), 0) AS DOUBLE) AS d${i}${j}`),
  ].join(',\n           ');
  return `
    WITH a AS (SELECT run_id, subject, scenario_id, state_id, ${perAnswer} FROM (${ladderRowsSql(o)}) GROUP BY ALL)
    SELECT subject, scenario_id,
           ${perState}
    FROM a GROUP BY ALL ORDER BY subject, scenario_id`;
}

type Col = { count: number[]; n: number[] };
const col = (): Col => ({ count: [], n: [] });
const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);
const statesOf = (n: readonly number[]) => n.filter((x) => x > 0).length;

/** One subject's ladder from its per-state rows (sorted by state). Pure. */
export function buildSubjectLadder(subject: string, rows: readonly Record<string, Plain>[], o: RateOptions): SubjectLadder {
  const steps = PROBE_CONDITIONS.map(col);
  const pairs = new Map(PAIRS.map(([i, j]) => [`${i}${j}`, col()]));
  for (const r of rows) {
    PROBE_CONDITIONS.forEach((_, k) => {
      steps[k].count.push(Number(r[`k${k}`]));
      steps[k].n.push(Number(r[`n${k}`]));
    });
    for (const [key, p] of pairs) {
      p.count.push(Number(r[`d${key}`]));
      p.n.push(Number(r[`p${key}`]));
    }
  }
  const ladder: LadderStep[] = PROBE_CONDITIONS.map((condition, k) => {
    const n = sum(steps[k].n);
    return { condition, run: n > 0, accuracy: n > 0 ? shareInterval(sum(steps[k].count), n, steps[k], o) : null, states: statesOf(steps[k].n) };
  });
  const run = PROBE_CONDITIONS.map((_, k) => k).filter((k) => ladder[k].run);
  const differences = run.slice(1).map((j, x) => {
    const i = run[x];
    const p = pairs.get(`${i}${j}`)!;
    const n = sum(p.n);
    return { from: PROBE_CONDITIONS[i], to: PROBE_CONDITIONS[j], pairs: n, states: statesOf(p.n), difference: n > 0 ? sum(p.count) / n : null, interval: pairedDifferenceInterval(p.count, p.n, o) };
  });
  return { subject, steps: ladder, differences };
}

/** The ladder of every subject (by label), from the store behind `q`. */
/** The conditions the runs decided under (non-ambiguous states; raw and composed for stores written before the column), without loading any state: `conditions_run` of `loadProbeLadder`. */
export async function loadLadderConditions(q: Q, o: LadderOptions): Promise<ProbeCondition[]> {
  const have = new Set((await q(`SELECT DISTINCT condition FROM (${ladderRowsSql(o)})`)).map((r) => String(r.condition)));
  return PROBE_CONDITIONS.filter((c) => have.has(c));
}

export async function loadProbeLadder(q: Q, o: LadderOptions): Promise<ProbeLadder> {
  const rows = await q(ladderSql(o));
  const bySubject = new Map<string, Record<string, Plain>[]>();
  for (const r of rows) {
    const s = String(r.subject);
    if (!bySubject.has(s)) bySubject.set(s, []);
    bySubject.get(s)!.push(r);
  }
  const subjects = [...bySubject].map(([s, rs]) => buildSubjectLadder(s, rs, o));
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
