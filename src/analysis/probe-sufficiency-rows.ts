/**
 * The sufficiency check of the paired-probe tables (`loadProbeTables`), part by part: within a
 * family (the episodes' domain), the distinct states grouped by their correct probe answers alone
 * (the paper's criterion, section 2.4 and appendix B.4; `probeSufficiency` in src/stats).
 *
 *   new SufficiencyRows(q, parts, stateRows) -> open(); add(pn) after each part; close() -> rows
 *   sufficiency(rows) -> ProbeSufficiencyReport | null
 *
 * Each part's state rows (a temporary table: `STATE_ROWS` in probe-tables.ts) carry a fingerprint
 * of their (subject, state)'s correct answers; the answers are spelled out for one representative
 * of each distinct (scenario, family, gold, fingerprint), several parts per scan of the answers.
 */
import { probeSufficiency } from '../stats/index.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachRow, toPlain, type Plain, type SqlParams } from '../store/duckdb.ts';
import { partFilterSql, partParams, type ProbePart } from './probe-parts.ts';

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

export interface ProbeSufficiencyReport {
  sufficient: boolean;
  /** Distinct states compared (a scenario's state once, however many epochs and subjects). */
  states: number;
  /** What the states were grouped by (the paper's criterion: within a family, the correct answers alone). */
  grouped_by: 'family and correct probe answers' | 'correct probe answers';
  answer_groups: number;
  /** Groups holding two or more distinct states: where anything was compared. */
  groups_with_several_states: number;
  /** No group holds two states: nothing was compared, so "sufficient" says nothing. */
  vacuous: boolean;
  /** Distinct states in counterexample groups. */
  counterexample_states: number;
  counterexamples: { family: string | null; answers: Record<string, string>; states: string[]; gold_sets: string[][] }[];
}

/** The sufficiency check's rows of the parts read so far, with their part (`SufficiencyRows`), and the parts' bounds. */
const SUFFICIENCY_STATES = 'probe_sufficiency_states';
const PART_BOUNDS = 'probe_part_bounds';
/** While a scan's rows are read: its answer texts and its fingerprints' codes of them (`answersSql`), its gold sets (`goldsSql`). */
const SUFFICIENCY_ANSWERS = 'probe_sufficiency_answers';
const SUFFICIENCY_GOLDS = 'probe_sufficiency_golds';

/**
 * Distinct (scenario, family, gold, fingerprint) rows the answers are spelled out for in one scan
 * of the probe answers: the parts' rows are gathered until they pass this many, so one scan serves
 * all parts of a store whose states share their answers across subjects and epochs (1e7 episodes:
 * 500,000 rows, one scan instead of eight), and a store where every (subject, state) differs still
 * spells out a bounded number at a time.
 */
export const SUFFICIENCY_ROWS_PER_SCAN = 1_000_000;

/**
 * The rows of the sufficiency check, from each part's state rows (the temporary table `stateRows`): within a family
 * (the episodes' domain), states grouped by their correct probe answers alone. The fingerprint of
 * a state's correct answers keeps the DISTINCT over a million states cheap; the answers are then
 * spelled out for one representative (subject, state) of each distinct (scenario, family, gold,
 * fingerprint) of a part, from that part's answers. Each part's distinct rows are kept
 * (`add`) and spelled out several parts at a time, in one scan of the answers (`flush`): a
 * scenario's rows are all in one part, so the rows of the parts in turn are the rows of one pass,
 * in its order, and a part's representatives read only its own answers as before.
 */
export class SufficiencyRows {
  readonly rows: Record<string, Plain>[] = [];
  /** Parts whose rows are kept and not yet spelled out, and how many rows they hold. */
  private pending: number[] = [];
  private held = 0;
  constructor(
    private readonly q: Q,
    private readonly parts: readonly ProbePart[],
    /** The temporary table of the current part's state rows. */
    private readonly stateRows: string,
    private readonly perScan = SUFFICIENCY_ROWS_PER_SCAN,
    /** A connection to stream the rows from (else `q` materializes them). */
    private readonly conn?: DuckDBConnection,
  ) {}

  async open(): Promise<void> {
    await this.q(`CREATE OR REPLACE TEMP TABLE ${PART_BOUNDS} (pn INTEGER, lo VARCHAR, hi VARCHAR)`);
    for (const [pn, p] of this.parts.entries()) await this.q(`INSERT INTO ${PART_BOUNDS} VALUES ($pn, $lo, $hi)`, { pn, lo: p.lo, hi: p.hi });
  }

  /** Keeps part `pn`'s rows (from `stateRows`); spells out the parts before it first when together they would pass the bound. */
  async add(pn: number): Promise<void> {
    // Grouped by the gold set sorted: first by the set as stored (few distinct per scenario), then
    // sorted, so list_sort runs once per distinct set and not once per state row; the minimum of
    // the minima is the minimum.
    const rows = `SELECT CAST(${pn} AS INTEGER) AS pn, scenario_id, family, list_sort(gold) AS gold, h1, h2, k, min(rep) AS rep
                  FROM (SELECT scenario_id, domain AS family, gold, h1, h2, k, min({'r': run_id, 's': subject_model, 't': state_id}) AS rep
                        FROM ${this.stateRows} GROUP BY scenario_id, domain, gold, h1, h2, k)
                  GROUP BY scenario_id, family, list_sort(gold), h1, h2, k`;
    const [r] = await this.q(pn === 0 ? `CREATE OR REPLACE TEMP TABLE ${SUFFICIENCY_STATES} AS ${rows}` : `INSERT INTO ${SUFFICIENCY_STATES} ${rows}`);
    const n = Number(Object.values(r ?? {})[0] ?? 0);
    if (this.pending.length && this.held + n > this.perScan) await this.flush();
    this.pending.push(pn);
    this.held += n;
  }

  /** Spells out the last parts' rows and drops the temporary tables. */
  async close(): Promise<void> {
    await this.flush();
    await this.q(`DROP TABLE IF EXISTS ${SUFFICIENCY_STATES}`);
    await this.q(`DROP TABLE ${PART_BOUNDS}`);
  }

  /**
   * The pending parts' rows with their answers spelled out (one scan of the answers of their
   * scenario range), in order. The distinct answer texts and gold sets are read once, and the rows
   * carry their integer codes (`rowsSql`): each row shares its answers string and gold array with
   * the other rows that have them.
   */
  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const first = this.pending[0];
    const last = this.pending[this.pending.length - 1];
    const range = spanOf(this.pending.map((pn) => this.parts[pn]));
    await this.q(answersSql(first, last, range), paramsOf(range));
    await this.q(goldsSql(first, last));
    const texts = new Map<number, Plain>();
    for (const r of await this.q(`SELECT tid, answers FROM ${SUFFICIENCY_ANSWERS} WHERE pn IS NULL`)) texts.set(Number(r.tid), r.answers);
    const golds = new Map<number, Plain>();
    for (const r of await this.q(`SELECT gid, gold FROM ${SUFFICIENCY_GOLDS}`)) golds.set(Number(r.gid), r.gold);
    const push = (sc: unknown, family: unknown, gid: unknown, tid: unknown) =>
      this.rows.push({ scenario_id: toPlain(sc), family: toPlain(family), gold: golds.get(Number(gid))!, answers: texts.get(Number(tid))! });
    const sql = rowsSql(first, last);
    if (!this.conn) {
      for (const r of await this.q(sql)) push(r.scenario_id, r.family, r.gid, r.tid);
    } else {
      // Streamed: at 1e7 episodes one scan returns 500,000 rows, which materialized at once (and converted twice) raised the peak RSS.
      await forEachRow(this.conn, sql, undefined, (cols, n) => {
        const [, sc, family, gid, tid] = cols;
        for (let i = 0; i < n; i++) push(sc(i), family(i), gid(i), tid(i));
      });
    }
    await this.q(`DELETE FROM ${SUFFICIENCY_STATES} WHERE pn <= ${last}`);
    await this.q(`DROP TABLE ${SUFFICIENCY_ANSWERS}`);
    await this.q(`DROP TABLE ${SUFFICIENCY_GOLDS}`);
    this.pending = [];
    this.held = 0;
  }
}

/** The scenario range covering all of `parts` (bounds compared as DuckDB compares strings: by UTF-8 bytes). */
function spanOf(parts: readonly ProbePart[]): ProbePart {
  const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const los = parts.map((p) => p.lo);
  const his = parts.map((p) => p.hi);
  return {
    lo: los.includes(null) ? null : (los as string[]).reduce((a, b) => (byBytes(a, b) <= 0 ? a : b)),
    hi: his.includes(null) ? null : (his as string[]).reduce((a, b) => (byBytes(a, b) >= 0 ? a : b)),
  };
}

/**
 * The sufficiency rows of parts first..last: one representative (the least (run, subject, state))
 * per distinct fingerprint (h1, h2, k) of each part has its answers spelled out (only those in the
 * part's own scenario range, as a pass over that part alone reads them), in probe order, and every
 * row of the part with that fingerprint takes them; one row per distinct (scenario, family, gold,
 * answers) of each part, part after part: the rows each part's own query returned, in turn.
 *
 * A fingerprint is a function of the state's answers (two sums of 64-bit hashes of (probe,
 * expected) and their count), so every state with it has the same answers spelled out, and one
 * representative per fingerprint gives what one per (scenario, family, gold, fingerprint) gave: at
 * 1e7 episodes a few dozen answers spelled out instead of 500,000 (the states share a few answer
 * sets). The one case this cannot see, two different answer sets of one part with equal sums in
 * both 128-bit hash sums and the same count, would merge them; the per-(scenario, family, gold)
 * representatives already merged such a pair within a scenario.
 *
 * The table written holds one row per fingerprint with the code (`tid`) of its text and one row
 * per distinct text (`pn` NULL) with the text, '' (no answers) included: the codes are dense ranks
 * of the texts in ORDER BY order ('' the least), which `rowsSql` returns instead of the texts.
 */
function answersSql(first: number, last: number, range: ProbePart): string {
  return `
    CREATE OR REPLACE TEMP TABLE ${SUFFICIENCY_ANSWERS} AS
    WITH fp AS (SELECT pn, h1, h2, k, min(rep) AS rep FROM ${SUFFICIENCY_STATES} WHERE pn BETWEEN ${first} AND ${last} AND k IS NOT NULL GROUP BY pn, h1, h2, k),
    ans AS MATERIALIZED (SELECT fp.pn, fp.h1, fp.h2, fp.k, coalesce(string_agg(p.probe_id || '=' || p.expected, chr(10) ORDER BY p.probe_id), '') AS answers
            FROM fp JOIN ${PART_BOUNDS} b ON b.pn = fp.pn
            JOIN probe_answers p ON p.run_id = fp.rep.r AND p.subject_model = fp.rep.s AND p.state_id = fp.rep.t
            WHERE (b.lo IS NULL OR p.scenario_id >= b.lo) AND (b.hi IS NULL OR p.scenario_id < b.hi)${partFilterSql('p', range)}
            GROUP BY fp.pn, fp.h1, fp.h2, fp.k),
    texts AS (SELECT answers, CAST(dense_rank() OVER (ORDER BY answers) AS INTEGER) AS tid FROM (SELECT '' AS answers UNION SELECT answers FROM ans))
    SELECT ans.pn, ans.h1, ans.h2, ans.k, texts.tid, NULL AS answers FROM ans JOIN texts USING (answers)
    UNION ALL SELECT NULL, NULL, NULL, NULL, tid, answers FROM texts`;
}

/** The distinct gold sets of parts first..last, numbered in ORDER BY order (NULLs last). */
const goldsSql = (first: number, last: number) => `
  CREATE OR REPLACE TEMP TABLE ${SUFFICIENCY_GOLDS} AS
  SELECT gold, CAST(dense_rank() OVER (ORDER BY gold) AS INTEGER) AS gid
  FROM (SELECT DISTINCT gold FROM ${SUFFICIENCY_STATES} WHERE pn BETWEEN ${first} AND ${last})`;

/**
 * The rows of parts first..last: one per distinct (scenario, family, gold, answers) of each part,
 * in `ORDER BY pn, scenario_id, family NULLS FIRST, answers, gold` order, the answers and the gold
 * set given by their codes (`tid`, `gid`: dense ranks in ORDER BY order, so equal codes are equal
 * values and the codes sort as the values do). The answers '' (none, or none in the part's range)
 * have the least code.
 */
const rowsSql = (first: number, last: number) => `
  SELECT DISTINCT st.pn, st.scenario_id, st.family, g.gid, coalesce(a.tid, (SELECT tid FROM ${SUFFICIENCY_ANSWERS} WHERE pn IS NULL AND answers = '')) AS tid
  FROM ${SUFFICIENCY_STATES} st
  LEFT JOIN ${SUFFICIENCY_ANSWERS} a ON a.pn = st.pn AND a.h1 = st.h1 AND a.h2 = st.h2 AND a.k = st.k
  JOIN ${SUFFICIENCY_GOLDS} g ON g.gold IS NOT DISTINCT FROM st.gold
  WHERE st.pn BETWEEN ${first} AND ${last}
  ORDER BY pn, scenario_id, family NULLS FIRST, tid, gid`;

/**
 * Sufficiency over the distinct states of the store, by the paper's criterion (section 2.4,
 * appendix B.4): within a family (the episodes' `domain`; one family where none is recorded),
 * states are grouped by their correct probe answers alone. One entry per distinct (scenario,
 * family, correct answers, gold set) (`sufficiencyRows`, part after part), read once whatever the
 * epochs and subjects.
 */
export function sufficiency(rows: readonly Record<string, Plain>[]): ProbeSufficiencyReport | null {
  if (rows.length === 0) return null;
  const families = rows.some((r) => r.family !== null);
  const seen = new Map<string, number>();
  // Many states share their answers (at 1e7 episodes, 500,000 rows and a few dozen answer sets): each set is parsed once.
  const parsed = new Map<string, Record<string, string>>();
  const answersOf = (text: string) => {
    let a = parsed.get(text);
    if (!a) {
      a = Object.fromEntries(
        text
          .split('\n')
          .filter(Boolean)
          .map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]),
      );
      parsed.set(text, a);
    }
    return a;
  };
  // Rows share their gold arrays (`rowsSql`'s codes): each is converted once, and probeSufficiency checks and sorts it once.
  const goldOf = new Map<unknown, string[]>();
  const goldActions = (gold: string[]) => {
    let g = goldOf.get(gold);
    if (!g) goldOf.set(gold, (g = gold.length ? gold.map(String) : ['(none)']));
    return g;
  };
  const states = rows.map((r) => {
    const id = String(r.scenario_id);
    const k = (seen.get(id) ?? 0) + 1;
    seen.set(id, k);
    return {
      // The same scenario can show up with different answers or gold sets (several runs); keep them apart.
      state_id: k === 1 ? id : `${id}#${k}`,
      probe_answers: answersOf(String(r.answers)),
      gold_actions: goldActions(r.gold as string[]),
      family: r.family === null ? null : String(r.family),
    };
  });
  const s = probeSufficiency(states);
  return {
    sufficient: s.sufficient,
    states: s.states,
    grouped_by: families ? 'family and correct probe answers' : 'correct probe answers',
    answer_groups: s.groups.length,
    groups_with_several_states: s.groupsWithSeveralStates,
    vacuous: s.vacuous,
    counterexample_states: s.counterexampleStates,
    counterexamples: s.counterexamples.map((c) => ({ family: c.family, answers: c.answers, states: c.states, gold_sets: c.goldSets })),
  };
}

/** A part's parameters, or none for the unbounded part. */
const paramsOf = (part: ProbePart): SqlParams | undefined => (part.lo === null && part.hi === null ? undefined : partParams(part));
