/**
 * The paired-probe tables ("Reading Right, Acting Wrong", Li, Krishnan & Padman): the library
 * behind the report's probe section and `standoff probes`, so both print the same numbers.
 *
 *   loadProbeTables(q, { by, level, seed, resamples, subject? }) -> { groups, sufficiency }
 *
 * Unit: the distinct decision state. A state (a scenario's frozen situation, policy and log) is
 * answered once per epoch; the tables count the distinct states and their answers, and every
 * interval resamples whole states (a percentile cluster bootstrap over states, from per-state
 * tallies: `probeTally`, `probeShareCounts`, `clusterBootstrapTotals`) where states repeat; the
 * exact Clopper-Pearson interval, which treats answers as independent, is kept beside it and is
 * the one shown where no state repeats. Where states repeat but the bootstrap has no spread, the
 * interval shown says what it treats as independent (`stateIntervals`: the distinct states, or
 * the answers), never "exact" as if no state repeated.
 *
 * Ambiguous states (target NOANSWER: the policy's conflict exception holds, no single correct
 * action) are in no decision or composition denominator, as in policy action; they are reported
 * on their own: reading (all facts right), a decision inside the policy's allowed set, and
 * composition reaching NOANSWER.
 *
 * Sufficiency (`probeSufficiency`) is the paper's criterion (section 2.4, appendix B.4): within a
 * family (the episodes' domain), the distinct states are grouped by their correct probe answers
 * alone, and a group where no single action is correct for every state is a counterexample. It
 * reports how many distinct states were compared and says when the check is vacuous (no two states
 * share a group, as with authored scenarios that each have their own probes).
 */
import { dataError } from '../errors.ts';
import { show } from '../stats/arg-checks.ts';
import {
  addProbeState,
  probeOutcomeFromTally,
  probeShareCounts,
  probeSufficiency,
  probeTally,
  type ProbeShareName,
  type ProbeTally,
  type Share,
  type WeightedProbeRow,
} from '../stats/index.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawDecisionSql } from '../schema/tables.ts';
import { forEachRow, quoteIdent, type Plain, type SqlParams } from '../store/duckdb.ts';
import { GrowableInt32 } from '../growable-array.ts';
import { SufficiencyRows, sufficiency, type ProbeSufficiencyReport } from './probe-sufficiency-rows.ts';
import { ALL_PARTS, compareGroupValues, loadProbeParts, partFilterSql, partParams, type ProbePart } from './probe-parts.ts';
import { episodeTargetsSql, withEpisodeTargets } from './probe-temp-tables.ts';
import { CLT_METHOD, clusterIntervalFromTotals, type Interval, type RateOptions } from './rates.ts';
import { stateIntervals, type ShownKind } from './state-interval.ts';

export const PROBE_GROUP_COLUMNS = ['subject_model', 'scenario_id', 'domain', 'decision_type', 'variant', 'run_id', 'epoch'] as const;

export interface ProbeTableOptions {
  /** Group columns (default subject_model; the report passes `subject`). */
  by: string[];
  level: number;
  seed: number;
  resamples: number;
  /** SQL for a `subject` column (the report's `model @ run` labels), with the joins it needs on `d` (probe_decisions). */
  subject?: { expr: string; join: string };
  /** Leave out the states listed in the temp table `probe_excluded_states` (`createExcludedStates`). */
  excludeStates?: boolean;
  /** Scenario-range parts (`loadProbeParts`); default: as many as keep each within `PROBE_ANSWERS_PER_PART` answers. */
  parts?: ProbePart[];
  /** The sufficiency rows spelled out per scan of the answers (default `SUFFICIENCY_ROWS_PER_SCAN`; tests pass 1). */
  sufficiencyRowsPerScan?: number;
  /**
   * Called for each non-ambiguous state row as it is folded (a group's rows by scenario, part
   * after part): the group's values, the scenario (an integer code, one per scenario id in the
   * whole call, increasing in scenario_id order), every probe right, and every probe right with
   * the action wrong. The error concentration reads its subjects' states from here instead of
   * aggregating the answers again (`ConcentrationCollector`).
   */
  onStateRow?: (group: readonly Plain[], scenario: number, factsRight: boolean, failed: boolean) => void;
}

/** The filter on `d` (probe_decisions) that leaves out flagged states, when asked. */
export const EXCLUDED_STATES_FILTER = `d.scenario_id NOT IN (SELECT scenario_id FROM probe_excluded_states)`;

/** A share (count of n answers) with the interval shown and both intervals. */
export interface ShareInterval extends Share {
  /**
   * Clustered by state where states repeat (epochs) and the bootstrap has spread; exact where no
   * state repeats; else over distinct states or over answers as independent samples (`shown`).
   */
  interval: Interval;
  /** Which interval `interval` is (`stateIntervals`): cluster, exact, states or independent. */
  shown: ShownKind;
  /** Clopper-Pearson over the answers: treats them as independent. */
  exact: Interval;
  /** Cluster bootstrap over states; null when no state repeats. */
  cluster: Interval | null;
}

export interface ProbeGroupTable {
  group: Record<string, Plain>;
  /** Distinct non-ambiguous states with at least one applicable probe. */
  states: number;
  /** Their answers (state x epoch): the n of every share below. */
  answers: number;
  /** Most answers of one state (epochs that repeat it). */
  max_answers_per_state: number;
  /** Non-ambiguous answers whose state has no applicable probe: in no cell. */
  answers_without_probes: number;
  cells: { facts_right_action_right: ShareInterval; facts_right_action_wrong: ShareInterval; facts_wrong_action_right: ShareInterval; facts_wrong_action_wrong: ShareInterval };
  all_facts_correct: ShareInterval;
  decision_accuracy: ShareInterval;
  errors_after_correct_reading: ShareInterval;
  action_wrong_given_facts_right: ShareInterval;
  action_right_given_fact_wrong: ShareInterval;
  mean_probe_accuracy: number | null;
  pooled_probe_accuracy: number | null;
  coverage: { answered: number; total: number; rate: number | null };
  /** Composition in code vs the subject's own decision, non-ambiguous states only; null when none composed. */
  composed: {
    answers: number;
    states: number;
    composed_accuracy: ShareInterval;
    decision_accuracy: ShareInterval;
    difference: number;
    /** Paired cluster bootstrap of composed - decision over states (percentile). */
    interval: Interval;
    repaired: number;
    broken: number;
  } | null;
  /** Ambiguous states, reported apart; null when the group has none. */
  ambiguous: {
    states: number;
    answers: number;
    all_facts_correct: ShareInterval;
    /** The decision is one of the actions the policy's conflict exception allows (its gold set). */
    allowed_action: ShareInterval;
    /** Composition from the subject's own answers reached NOANSWER (the conflict exception holds). */
    composed_noanswer: ShareInterval;
  } | null;
}

export type { ProbeSufficiencyReport };
export { sufficiency };

export interface ProbeTables {
  by: string[];
  groups: ProbeGroupTable[];
  sufficiency: ProbeSufficiencyReport | null;
}

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

/** The episodes' metadata the state rows join (`probeStateSql`): inline for one part, else read once into a table (`withEpisodeTargets`; a part's scan reads every episode). */
const META_COLUMNS = ['domain', 'decision_type', 'variant'];
const EPISODE_META_SQL = `(${episodeTargetsSql(META_COLUMNS)})`;
const EPISODE_META = 'probe_episode_meta';

/**
 * One row per state answer with everything the tables need (`d` = probe_decisions); `part` keeps
 * one scenario range (`partFilterSql`). With `sufficiency`, also what the sufficiency check reads:
 * the gold set (as stored: the check sorts it) and the fingerprint of the state's correct answers (`h1`, `h2`: two
 * order-free sums of 64-bit hashes of (probe, expected); `k`: its answers, NULL without any).
 */
export function probeStateSql(subject?: ProbeTableOptions['subject'], excludeStates = false, part: ProbePart = ALL_PARTS[0], sufficiency = false, meta = EPISODE_META_SQL): string {
  const fingerprint = sufficiency ? `, sum(hash(probe_id, expected)) AS h1, sum(hash(expected, probe_id, 'x')) AS h2` : '';
  return `
    SELECT d.run_id, d.subject_model, d.scenario_id, d.epoch, d.state_id, m.domain, m.decision_type, m.variant,
           ${subject ? `${subject.expr} AS subject,` : ''}
           coalesce(m.target = 'NOANSWER', false) AS ambiguous,
           CAST(coalesce(a.total, 0) AS INTEGER) AS total, CAST(coalesce(a.answered, 0) AS INTEGER) AS answered, CAST(coalesce(a.right_, 0) AS INTEGER) AS right_,
           d.correct AS action, d.composed_correct AS composed, coalesce(d.composed_action = 'NOANSWER', false) AS composed_noanswer
           ${sufficiency ? ', d.gold_actions AS gold, a.h1, a.h2, a.total AS k' : ''}
    FROM probe_decisions d
    LEFT JOIN (SELECT run_id, subject_model, state_id, count(*) AS total, count(answer) AS answered, count(*) FILTER (WHERE correct) AS right_${fingerprint}
               FROM probe_answers WHERE true${partFilterSql('', part)} GROUP BY ALL) a USING (run_id, subject_model, state_id)
    LEFT JOIN (SELECT * FROM ${meta} WHERE true${partFilterSql('', part)}) m USING (run_id, scenario_id)
    ${subject?.join ?? ''}
    WHERE ${rawDecisionSql('d')}${excludeStates ? ` AND ${EXCLUDED_STATES_FILTER}` : ''}${partFilterSql('d', part)}`;
}

/**
 * The temporary table holding one part's state rows (`probeStateSql` with the sufficiency
 * columns) while `loadProbeTables` reads it: the answers are aggregated and joined to the
 * decisions once per part, for both the tables and the sufficiency check.
 */
export const STATE_ROWS = 'probe_state_rows_part';

/** One part's distinct group values and scenario ids, numbered in ORDER BY order (`partCodes`). */
const GROUP_CODES = 'probe_part_groups';
const SCENARIO_CODES = 'probe_part_scenarios';

/** The columns of `STATE_ROWS` besides the groups': what the tables' query (`tablesSql`) and the sufficiency rows (`SufficiencyRows`) read. */
const STATE_ROW_COLUMNS = ['scenario_id', 'ambiguous', 'total', 'answered', 'right_', 'action', 'composed', 'composed_noanswer', 'run_id', 'subject_model', 'state_id', 'domain', 'gold', 'h1', 'h2', 'k'].map(quoteIdent);

/** A part's parameters, or none for the unbounded part. */
const paramsOf = (part: ProbePart): SqlParams | undefined => (part.lo === null && part.hi === null ? undefined : partParams(part));

/** Where the probe tables read: a function returning plain rows, or a connection to stream the state rows from. */
export type ProbeSource = Q | { conn: DuckDBConnection; q: Q };

/**
 * The tables and the sufficiency check, part by part: per part the state rows (`STATE_ROWS`), the
 * tables' rows streamed with integer group and scenario codes (`tablesSql`), and the part's rows
 * kept for `SufficiencyRows` (answers spelled out several parts per scan).
 */
export async function loadProbeTables(src: ProbeSource, o: ProbeTableOptions): Promise<ProbeTables> {
  const g = o.by.map(quoteIdent);
  const q = typeof src === 'function' ? src : src.q;
  const parts = o.parts ?? (await loadProbeParts(q));
  const fold = new TablesFold(o);
  const suff = new SufficiencyRows(q, parts, STATE_ROWS, o.sufficiencyRowsPerScan, typeof src === 'function' ? undefined : src.conn);
  await suff.open();
  // Scenario codes run on across the parts: a scenario is in one part, so offset + code names it in the whole store.
  let offset = 0;
  // The part's state rows materialized once, for the tables and the sufficiency check: only the columns they read.
  const keep = [...new Set([...g, ...STATE_ROW_COLUMNS])].join(', ');
  const eachPart = async (meta: string) => {
    for (const [pn, part] of parts.entries()) {
      await q(`CREATE OR REPLACE TEMP TABLE ${STATE_ROWS} AS SELECT ${keep} FROM (${probeStateSql(o.subject, o.excludeStates, part, true, meta)})`, paramsOf(part));
      offset += await foldPart(src, g, fold, offset);
      await suff.add(pn);
      await q(`DROP TABLE ${STATE_ROWS}`);
    }
  };
  await (parts.length > 1 ? withEpisodeTargets(q, EPISODE_META, META_COLUMNS, () => eachPart(EPISODE_META)) : eachPart(EPISODE_META_SQL));
  await suff.close();
  return { by: o.by, groups: fold.finish(parts.length), sufficiency: sufficiency(suff.rows) };
}

/**
 * Numbers the part's distinct group values (`gid`) and scenario ids (`sid`) from 1 in ORDER BY
 * order (NULLs last), so the tables' rows carry two integers instead of the strings, and returns
 * each gid's group values and the number of scenarios.
 */
async function partCodes(q: Q, g: readonly string[]): Promise<{ groups: Plain[][]; scenarios: number }> {
  const cols = g.map((c, k) => `${c} AS g${k}`).join(', ');
  const gs = g.map((_, k) => `g${k}`).join(', ');
  await q(`CREATE OR REPLACE TEMP TABLE ${SCENARIO_CODES} AS SELECT scenario_id, CAST(row_number() OVER (ORDER BY scenario_id) AS INTEGER) AS sid FROM (SELECT DISTINCT scenario_id FROM ${STATE_ROWS})`);
  const [{ scenarios }] = await q(`SELECT CAST(count(*) AS BIGINT) AS scenarios FROM ${SCENARIO_CODES}`);
  if (g.length === 0) return { groups: [[], []], scenarios: Number(scenarios) };
  await q(`CREATE OR REPLACE TEMP TABLE ${GROUP_CODES} AS SELECT ${gs}, CAST(row_number() OVER (ORDER BY ${gs}) AS INTEGER) AS gid FROM (SELECT DISTINCT ${cols} FROM ${STATE_ROWS})`);
  const groups: Plain[][] = [[]];
  for (const r of await q(`SELECT ${gs}, gid FROM ${GROUP_CODES} ORDER BY gid`)) groups[Number(r.gid)] = g.map((_, k) => r[`g${k}`]);
  return { groups, scenarios: Number(scenarios) };
}

/** A state row's booleans in one integer (`readStateRow` reads them back): IS TRUE, as `=== true` read them, and whether `composed` is NULL. */
const FLAGS_SQL = `(CAST(t.ambiguous IS TRUE AS INTEGER) | (CAST(t.action IS TRUE AS INTEGER) << 1) | (CAST(t.composed IS NULL AS INTEGER) << 2)
  | (CAST(t.composed IS TRUE AS INTEGER) << 3) | (CAST(t.composed_noanswer IS TRUE AS INTEGER) << 4))`;

/**
 * The tables' query over one part's state rows: one row per (group, scenario, outcome) with its
 * count, sorted as `GROUP BY ALL ORDER BY ALL` over (groups, scenario_id, outcome) sorts them, the
 * group values and the scenario id replaced by their codes (`partCodes`), the booleans packed
 * (`FLAGS_SQL`) and the count a DOUBLE: numbers only, fewer values to read per row.
 */
function tablesSql(g: readonly string[]): string {
  const cols = g.map((c, k) => `${c} AS g${k}`);
  const join = g.length ? `JOIN ${GROUP_CODES} gc ON ${g.map((_, k) => `t.g${k} IS NOT DISTINCT FROM gc.g${k}`).join(' AND ')}` : '';
  const outcome = ['ambiguous', 'total', 'answered', 'right_', 'action', 'composed', 'composed_noanswer', 'n'].map((c) => `t.${c}`).join(', ');
  return `
    SELECT ${g.length ? 'gc.gid' : '1'} AS gid, sc.sid, ${FLAGS_SQL} AS flags, t.total, t.answered, t.right_, CAST(t.n AS DOUBLE) AS n
    FROM (SELECT ${[...cols, 'scenario_id'].join(', ')}, ambiguous, total, answered, right_, action, composed, composed_noanswer, CAST(count(*) AS BIGINT) AS n
          FROM ${STATE_ROWS} GROUP BY ALL) t
    ${join}
    JOIN ${SCENARIO_CODES} sc ON t.scenario_id IS NOT DISTINCT FROM sc.scenario_id
    ORDER BY gid, sc.sid, ${outcome}`;
}

/** Folds one part's tables rows (`tablesSql`, read off DuckDB's vectors: `forEachRow`) into `fold`; returns the part's number of scenarios. */
async function foldPart(src: ProbeSource, g: readonly string[], fold: TablesFold, offset: number): Promise<number> {
  const q = typeof src === 'function' ? src : src.q;
  const codes = await partCodes(q, g);
  fold.startPart(codes.groups);
  const sql = tablesSql(g);
  const row = fold.row;
  if (typeof src === 'function') {
    for (const r of await src(sql)) fold.add(Number(r.gid), readStateRow(row, offset + Number(r.sid), r.flags, r.total, r.answered, r.right_, r.n));
  } else {
    await forEachRow(src.conn, sql, undefined, (columns, rows) => {
      const [gid, sid, flags, tot, ans, rt, n] = columns;
      for (let i = 0; i < rows; i++) fold.add(gid(i) as number, readStateRow(row, offset + (sid(i) as number), flags(i), tot(i), ans(i), rt(i), n(i)));
    });
  }
  return codes.scenarios;
}

/** The tables' groups, folded row by row: each group's accumulator stays open across the parts (its rows arrive part after part in one pass's order). */
class TablesFold {
  private readonly accs = new Map<string, { values: Plain[]; acc: ProbeGroupAccumulator }>();
  private cur: { values: Plain[]; acc: ProbeGroupAccumulator } | null = null;
  private gid = -1;
  private groups: Plain[][] = [];
  /** The row `readStateRow` fills (reused). */
  readonly row: StateRow = { cluster: 0, ambiguous: false, total: 0, answered: 0, right: 0, action: false, composed: null, composedNoanswer: false, weight: 0 };
  constructor(private readonly o: ProbeTableOptions) {}

  /** A new part: its group codes (`partCodes`). */
  startPart(groups: Plain[][]): void {
    this.groups = groups;
    this.gid = -1;
  }

  add(gid: number, row: StateRow): void {
    if (gid !== this.gid) this.switchGroup(gid);
    const cur = this.cur!;
    cur.acc.add(row);
    if (this.o.onStateRow && !row.ambiguous) {
      const facts = row.total > 0 && row.right === row.total;
      this.o.onStateRow(cur.values, row.cluster, facts, facts && !row.action);
    }
  }

  private switchGroup(gid: number): void {
    const values = this.groups[gid];
    const key = JSON.stringify(values);
    this.gid = gid;
    this.cur = this.accs.get(key) ?? null;
    if (!this.cur) this.accs.set(key, (this.cur = { values, acc: new ProbeGroupAccumulator(Object.fromEntries(this.o.by.map((c, k) => [c, values[k]]))) }));
  }

  /** The groups' tables, in ORDER BY order. */
  finish(parts: number): ProbeGroupTable[] {
    const entries = [...this.accs.values()];
    // One part returns the groups in ORDER BY order; several, each in its own: sort them as one pass would.
    if (parts > 1) entries.sort((x, y) => compareGroupValues(x.values, y.values));
    return entries.map((e) => e.acc.finish(this.o));
  }
}

/** One state row of the tables' query (reused: `readStateRow` overwrites it row after row). */
interface StateRow {
  /** The scenario's code (`partCodes`, numbered on across the parts). */
  cluster: number;
  ambiguous: boolean;
  /** Applicable probes, answered, right. */
  total: number;
  answered: number;
  right: number;
  action: boolean;
  composed: boolean | null;
  composedNoanswer: boolean;
  /** The state answers the row stands for (its count). */
  weight: number;
}

/** Fills `row` from one row's values (as DuckDB returns them: INTEGER as number, the booleans packed by `FLAGS_SQL`). */
function readStateRow(row: StateRow, scenario: number, flags: unknown, total: unknown, answered: unknown, right: unknown, n: unknown): StateRow {
  const f = Number(flags);
  row.cluster = scenario;
  row.ambiguous = (f & 1) !== 0;
  row.total = Number(total);
  row.answered = Number(answered);
  row.right = Number(right);
  row.action = (f & 2) !== 0;
  row.composed = (f & 4) !== 0 ? null : (f & 8) !== 0;
  row.composedNoanswer = (f & 16) !== 0;
  row.weight = Number(n);
  return row;
}

const SHARE_NAMES: ProbeShareName[] = [
  'factsRightActionRight', 'factsRightActionWrong', 'factsWrongActionRight', 'factsWrongActionWrong', 'allFactsCorrect', 'decisionAccuracy',
  'errorsAfterCorrectReading', 'actionWrongGivenFactsRight', 'actionRightGivenFactWrong', 'composedAccuracy', 'composedDecisionAccuracy',
];

/**
 * Adds one state row with probes into entry i of the share columns (in `SHARE_NAMES` order): what
 * `probeShareCounts` of the row's one-row tally counts (exactly one of the four cells holds the
 * row's weight w), without building the tally. Integers, so adding row by row is exact.
 */
function addRowShares(cols: readonly IntColumn[], i: number, w: number, facts: boolean, action: boolean, composed: boolean | null): void {
  const frar = facts && action ? w : 0;
  const fraw = facts && !action ? w : 0;
  const fwar = !facts && action ? w : 0;
  const fwaw = !facts && !action ? w : 0;
  const cn = composed === null ? 0 : w;
  inc(cols[0], i, frar, w);
  inc(cols[1], i, fraw, w);
  inc(cols[2], i, fwar, w);
  inc(cols[3], i, fwaw, w);
  inc(cols[4], i, frar + fraw, w);
  inc(cols[5], i, frar + fwar, w);
  inc(cols[6], i, fraw, fraw + fwaw);
  inc(cols[7], i, fraw, frar + fraw);
  inc(cols[8], i, fwar, fwar + fwaw);
  inc(cols[9], i, composed === true ? w : 0, cn);
  inc(cols[10], i, composed !== null && action ? w : 0, cn);
}

/** Adds count and n into entry i of column c. */
function inc(c: IntColumn, i: number, count: number, n: number): void {
  c.count.data[i] += count;
  c.n.data[i] += n;
}

/**
 * Adds one state row into the group's tally `t`: what `probeTally([row])` tallies, added field by
 * field in row order (each field of a one-row tally is 0 + its term, and 0 + x is x for these
 * non-negative terms, so the sums, floating-point ones included, are those of `probeTally` over
 * the rows in row order). Returns false for a row without probes (or of weight 0).
 */
function tallyRow(t: ProbeTally, r: StateRow): boolean {
  const w = r.weight;
  if (!Number.isInteger(w) || w < 0) throw dataError('stats.badCount', `probeTally requires rows[0].weight to be an integer >= 0, got ${show(w)}`);
  if (w === 0) return false;
  if (r.total === 0) {
    t.statesWithoutProbes += w;
    return false;
  }
  addProbeState(t, w, r.right === r.total, r.action, r.right / r.total, r.answered, r.total, r.composed);
  return true;
}

/** One per-state column: counts and denominators, integers (sums of answer counts) in Int32 arrays. */
type IntColumn = { count: GrowableInt32; n: GrowableInt32 };

/** Largest per-state value the Int32 columns hold: a group's answers are checked against it as they are added. */
const INT32_MAX = 2 ** 31 - 1;

/**
 * Per-state (cluster) columns of one category of rows, folded as the sorted rows arrive. The
 * values are integers (sums of answer counts), kept in Int32 arrays (4 bytes a value instead of
 * a JS array's 8: at 1e7 episodes the tables' columns were the largest part of the heap).
 */
class ClusterColumns<T extends string> {
  readonly cols: Record<T, IntColumn>;
  /** The columns in `names` order. */
  readonly list: IntColumn[];
  private last: number | null = null;
  constructor(names: readonly T[]) {
    this.list = names.map(() => ({ count: new GrowableInt32(), n: new GrowableInt32() }));
    this.cols = Object.fromEntries(names.map((x, k) => [x, this.list[k]])) as Record<T, IntColumn>;
  }
  /** Index of `cluster`'s entry (a new one when the cluster changes). */
  at(cluster: number): number {
    const first = this.list[0];
    if (cluster !== this.last || first.n.length === 0) {
      for (const c of this.list) {
        c.count.push(0);
        c.n.push(0);
      }
      this.last = cluster;
    }
    return first.n.length - 1;
  }
  get length(): number {
    return this.list[0].n.length;
  }
  /** Column `name` as plain arrays, for the intervals. */
  plain(name: T): { count: number[]; n: number[] } {
    const c = this.cols[name];
    return { count: toNumbers(c.count.data, c.count.length), n: toNumbers(c.n.data, c.n.length) };
  }
}

/** The first `length` values of `data` as a plain array (a loop: `Array.from` over a typed array goes through its iterator). */
function toNumbers(data: Int32Array, length: number): number[] {
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) out[i] = data[i];
  return out;
}

/**
 * One group's probe table folded from its state rows (sorted by state): the tally, per-state
 * share counts (states with applicable probes), per-state composition totals and per-state
 * ambiguous counts. Memory grows with the states of the group, not with their answers.
 */
class ProbeGroupAccumulator {
  private tally = probeTally([]);
  private shares = new ClusterColumns(SHARE_NAMES);
  private comp = new ClusterColumns(['diff'] as const);
  private amb = new ClusterColumns(['facts', 'allowed', 'noanswer'] as const);
  private ambAnswers = 0;
  /** The group's answers so far: no per-state value exceeds it, so below INT32_MAX the Int32 columns are exact. */
  private weights = 0;
  constructor(readonly group: Record<string, Plain>) {}

  add(r: StateRow): void {
    const w = r.weight;
    this.weights += Math.abs(w);
    if (!(this.weights <= INT32_MAX)) throw dataError('stats.badCount', `probe tables: more than ${INT32_MAX} answers in one group`);
    if (r.ambiguous) {
      const i = this.amb.at(r.cluster);
      const c = this.amb.cols;
      this.ambAnswers += w;
      const facts = r.total > 0 && r.right === r.total;
      c.facts.n.data[i] += w;
      if (facts) c.facts.count.data[i] += w;
      c.allowed.n.data[i] += w;
      if (r.action) c.allowed.count.data[i] += w;
      c.noanswer.n.data[i] += w;
      if (r.composedNoanswer) c.noanswer.count.data[i] += w;
      return;
    }
    if (!tallyRow(this.tally, r)) return;
    // Per-state share counts of the rows with probes.
    const facts = r.right === r.total;
    addRowShares(this.shares.list, this.shares.at(r.cluster), w, facts, r.action, r.composed);
    if (r.composed !== null) {
      const j = this.comp.at(r.cluster);
      this.comp.cols.diff.count.data[j] += (r.composed ? w : 0) - (r.action ? w : 0);
      this.comp.cols.diff.n.data[j] += w;
    }
  }

  finish(o: ProbeTableOptions): ProbeGroupTable {
    const tally = this.tally;
    const g = probeOutcomeFromTally('g', tally, { level: o.level });
    const totals = probeShareCounts(tally);
    const share = (name: ProbeShareName) => shareInterval(totals[name].count, totals[name].n, this.shares.plain(name), o);
    const perState = this.shares.cols.factsRightActionRight.n;
    const answersPerState = perState.data.subarray(0, perState.length);
    let composed: ProbeGroupTable['composed'] = null;
    if (g.composed) {
      const d = this.comp.plain('diff');
      const interval = pairedDifferenceInterval(d.count, d.n, o);
      composed = {
        answers: g.composed.n,
        states: this.comp.length,
        composed_accuracy: share('composedAccuracy'),
        decision_accuracy: share('composedDecisionAccuracy'),
        difference: g.composed.difference,
        interval,
        repaired: g.composed.repaired,
        broken: g.composed.broken,
      };
    }
    let ambiguous: ProbeGroupTable['ambiguous'] = null;
    if (this.amb.length) {
      const ambShare = (name: 'facts' | 'allowed' | 'noanswer') => {
        const x = this.amb.plain(name);
        return shareInterval(sum(x.count), sum(x.n), x, o);
      };
      ambiguous = { states: this.amb.length, answers: this.ambAnswers, all_facts_correct: ambShare('facts'), allowed_action: ambShare('allowed'), composed_noanswer: ambShare('noanswer') };
    }
    let states = 0;
    let maxAnswers = 0;
    for (const n of answersPerState) {
      if (n > 0) states++;
      if (n > maxAnswers) maxAnswers = n;
    }
    return {
      group: this.group,
      states,
      answers: g.states,
      max_answers_per_state: maxAnswers,
      answers_without_probes: tally.statesWithoutProbes,
      cells: {
        facts_right_action_right: share('factsRightActionRight'),
        facts_right_action_wrong: share('factsRightActionWrong'),
        facts_wrong_action_right: share('factsWrongActionRight'),
        facts_wrong_action_wrong: share('factsWrongActionWrong'),
      },
      all_facts_correct: share('allFactsCorrect'),
      decision_accuracy: share('decisionAccuracy'),
      errors_after_correct_reading: share('errorsAfterCorrectReading'),
      action_wrong_given_facts_right: share('actionWrongGivenFactsRight'),
      action_right_given_fact_wrong: share('actionRightGivenFactWrong'),
      mean_probe_accuracy: g.meanProbeAccuracy,
      pooled_probe_accuracy: g.pooledProbeAccuracy,
      coverage: g.coverage,
      composed,
      ambiguous,
    };
  }
}

const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);

/**
 * A paired difference's interval from per-state sums of (b - a) and pair counts: the cluster
 * interval over states (`clusterIntervalFromTotals`: percentile bootstrap, or the clustered CLT at
 * scale), named as paired. The composition table and the ladder both use it.
 */
export function pairedDifferenceInterval(sums: readonly number[], pairs: readonly number[], o: RateOptions): Interval {
  const interval = clusterIntervalFromTotals(sums, pairs, 'state', o);
  return interval.method === CLT_METHOD ? { ...interval, method: `paired-${CLT_METHOD}` } : { ...interval, method: 'paired-cluster-bootstrap-percentile' };
}

/** A share with the interval it shows (`stateIntervals`) and both intervals. */
export function shareInterval(count: number, n: number, perState: { count: readonly number[]; n: readonly number[] }, o: RateOptions): ShareInterval {
  const { interval, shown, exact, cluster } = stateIntervals(count, n, perState, o);
  return { count, n, rate: n > 0 ? count / n : null, lower: exact.lower, upper: exact.upper, interval, shown, exact, cluster };
}
