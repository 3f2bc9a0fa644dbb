/**
 * Error concentration of the paired probes ("Reading Right, Acting Wrong", section 5.3), shared by
 * `standoff probes --concentration` and the report's probe section.
 *
 *   loadConcentration(q, { minSubjects?, seed, permutations, level, subject? }) -> ConcentrationReport | null
 *
 * Unit: a subject at a distinct non-ambiguous state. SQL reduces the answers to one row per
 * (subject, state): facts right (at least one answer there had every probe right) and failed (at
 * least one answer there was facts right, action wrong); the permutation null itself is
 * `errorConcentration` in src/stats. With one answer per state (no epochs) "at least one" is just
 * that answer.
 */
import { errorConcentrationIndexed, type ErrorConcentrationResult, type IndexedConcentrationSubject } from '../stats/error-concentration.ts';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forEachChunk, type Plain, type SqlParams } from '../store/duckdb.ts';
import { loadProbeParts, partParams, type ProbePart } from './probe-parts.ts';
import { usageError } from '../errors.ts';
import { probeStateSql, type ProbeSufficiencyReport, type ProbeTableOptions } from './probe-tables.ts';
import { pct } from '../report/markdown.ts';
import { pointsAtDecision } from './probe-sufficiency-text.ts';
import { GrowableInt32 } from '../growable-array.ts';

export interface ConcentrationOptions {
  /** k (default: half the subjects, rounded up). */
  minSubjects?: number;
  seed: number;
  permutations: number;
  level: number;
  subject?: ProbeTableOptions['subject'];
  /** Leave out the flagged states (`probe_excluded_states`). */
  excludeStates?: boolean;
  /** The work bound (default {@link PERMUTATION_DRAWS}). */
  draws?: number;
}

/**
 * Work bound of the permutation null: permutations x errors (one random draw per error per
 * permutation) stay under this many draws; above it the null runs fewer permutations (at least
 * {@link MIN_PERMUTATIONS}) and the report prints the Monte-Carlo standard error of its p-value.
 * 10,000 permutations fit up to 20,000 errors; a 1e6-episode store (51,101 errors) runs 3,913.
 */
export const PERMUTATION_DRAWS = 200_000_000;
export const MIN_PERMUTATIONS = 1000;

/** The permutations the null runs for `errors` errors when `requested` were asked for. */
export function boundedPermutations(requested: number, errors: number, draws = PERMUTATION_DRAWS): number {
  if (errors * requested <= draws) return requested;
  return Math.min(requested, Math.max(MIN_PERMUTATIONS, Math.floor(draws / errors)));
}

export type ConcentrationReport = Omit<ErrorConcentrationResult, 'nullShares'> & {
  /** Set only when the work bound cut the permutations: what was asked for (the null ran `null.permutations`). */
  permutations_requested?: number;
  /** Monte-Carlo standard error of the p-value, sqrt(p (1 - p) / B), when the bound cut the permutations. */
  p_mc_se?: number | null;
  /** Subject labels, sorted. */
  subject_names: string[];
  /** Distinct non-ambiguous states some subject read right. */
  states: number;
  /** The null distribution: each share the permutations reached and how many reached it, by share (for the figure). */
  null_distribution: { share: number; permutations: number }[];
};

type Q = (sql: string, params?: SqlParams) => Promise<Record<string, Plain>[]>;

/**
 * The (subject, state) pairs of the concentration, gathered as rows arrive sorted by subject and
 * state (a subject's rows of one state together; parts in scenario order): per subject, its
 * facts-right states and errors as state indices in typed arrays, the states numbered as first
 * met. `loadProbeTables` feeds it (`onStateRow`) so the report does not aggregate the answers twice.
 */
export class ConcentrationCollector {
  private readonly index = new Map<string | number, number>();
  private readonly bySubject = new Map<string, { right: GrowableInt32; errors: GrowableInt32; state: string | number | null; facts: boolean; failed: boolean }>();

  /**
   * One state row of `subject`: facts right (every probe right) and failed (facts right, action
   * wrong). `state` names the state: its scenario id, or an integer code of it (`onStateRow`); one
   * collector takes one kind.
   */
  add(subject: string, state: string | number, factsRight: boolean, failed: boolean): void {
    let x = this.bySubject.get(subject);
    if (!x) this.bySubject.set(subject, (x = { right: new GrowableInt32(), errors: new GrowableInt32(), state: null, facts: false, failed: false }));
    if (x.state !== state) {
      this.flush(x);
      x.state = state;
    }
    x.facts ||= factsRight;
    x.failed ||= failed;
  }

  private flush(x: { right: GrowableInt32; errors: GrowableInt32; state: string | number | null; facts: boolean; failed: boolean }): void {
    if (x.state !== null && x.facts) {
      let j = this.index.get(x.state);
      if (j === undefined) this.index.set(x.state, (j = this.index.size));
      x.right.push(j);
      if (x.failed) x.errors.push(j);
    }
    x.state = null;
    x.facts = false;
    x.failed = false;
  }

  /** Subjects with a facts-right state (sorted by name, as JavaScript sorts) and the states numbered. */
  finish(): { subjects: IndexedConcentrationSubject[]; states: number } {
    for (const x of this.bySubject.values()) this.flush(x);
    const names = [...this.bySubject.keys()].filter((n) => this.bySubject.get(n)!.right.length > 0).sort();
    const subjects = names.map((subject) => {
      const x = this.bySubject.get(subject)!;
      return { subject, factsRight: x.right.toArray(), errors: x.errors.toArray() };
    });
    return { subjects, states: this.index.size };
  }
}


/**
 * The concentration of the store behind `src` (a function returning rows, or a connection to
 * stream from), or of the states a `ConcentrationCollector` gathered (`o.collected`).
 */
export async function loadConcentration(src: Q | { conn: DuckDBConnection; q: Q }, o: ConcentrationOptions & { collected?: ConcentrationCollector; parts?: ProbePart[] }): Promise<ConcentrationReport | null> {
  const collector = o.collected ?? (await collectConcentration(src, o));
  const { subjects, states } = collector.finish();
  if (subjects.length === 0) return null;
  const names = subjects.map((x) => x.subject);
  if (o.minSubjects !== undefined && (!Number.isInteger(o.minSubjects) || o.minSubjects < 1 || o.minSubjects > names.length)) {
    throw usageError('probes.minSubjects', `--min-subjects must be between 1 and the ${names.length} subjects that read some state right, got ${o.minSubjects}`);
  }
  const errors = subjects.reduce((a, x) => a + x.errors.length, 0);
  const permutations = boundedPermutations(o.permutations, errors, o.draws);
  const r = errorConcentrationIndexed(subjects, states, { minSubjects: o.minSubjects, seed: o.seed, permutations, level: o.level });
  const { nullShares, ...rest } = r;
  const p = r.null.p;
  const bound = permutations < o.permutations ? { permutations_requested: o.permutations, p_mc_se: p === null ? null : Math.sqrt((p * (1 - p)) / permutations) } : {};
  const counts = new Map<number, number>();
  for (const x of nullShares) counts.set(x, (counts.get(x) ?? 0) + 1);
  const null_distribution = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([share, permutations]) => ({ share, permutations }));
  return { ...rest, ...bound, subject_names: names, states, null_distribution };
}

/** One row per (subject, state) with a facts-right answer, part by part, into a collector. */
async function collectConcentration(src: Q | { conn: DuckDBConnection; q: Q }, o: ConcentrationOptions & { parts?: ProbePart[] }): Promise<ConcentrationCollector> {
  const q = typeof src === 'function' ? src : src.q;
  const subj = o.subject ? 'subject' : 'subject_model';
  const c = new ConcentrationCollector();
  for (const part of o.parts ?? (await loadProbeParts(q))) {
    const sql = `
    SELECT CAST(${subj} AS VARCHAR) AS subj, scenario_id,
           bool_or(total > 0 AND right_ = total) AS facts_right,
           bool_or(total > 0 AND right_ = total AND NOT coalesce(action, false)) AS failed
    FROM (${probeStateSql(o.subject, o.excludeStates, part)}) WHERE NOT ambiguous
    GROUP BY ALL HAVING bool_or(total > 0 AND right_ = total) ORDER BY subj, scenario_id`;
    const params = part.lo === null && part.hi === null ? undefined : partParams(part);
    if (typeof src === 'function') {
      for (const r of await src(sql, params)) c.add(String(r.subj), String(r.scenario_id), r.facts_right === true, r.failed === true);
    } else {
      await forEachChunk(src.conn, sql, params, (cols, rows) => {
        for (let i = 0; i < rows; i++) c.add(String(cols[0][i]), String(cols[1][i]), cols[2][i] === true, cols[3][i] === true);
      });
    }
  }
  return c;
}

/** One paragraph in words (Markdown when `md`), the same for the report and the CLI. */
export function concentrationText(c: ConcentrationReport, pct: (x: number | null) => string): string {
  const L = Math.round(c.null.level * 100);
  if (c.errors === 0) return `No facts-right, action-wrong errors among ${c.subjects} subjects, so there is nothing to concentrate.`;
  const p = c.null.p! < 0.001 ? '< 0.001' : `= ${c.null.p!.toFixed(3)}`;
  return (
    `${pct(c.observed)} of the ${c.errors.toLocaleString('en-US')} facts-right, action-wrong errors (subject × state) of ${c.subjects} subjects fall on states that at least ${c.minSubjects} of them fail, ` +
    `versus ${pct(c.null.mean)} under the permutation null (${L}% band ${pct(c.null.lower)}–${pct(c.null.upper)}; one-sided p ${p}, ${c.null.permutations.toLocaleString('en-US')} permutations, seed ${c.null.seed}). ` +
    `${c.statesAllFail.toLocaleString('en-US')} state${c.statesAllFail === 1 ? ' is' : 's are'} failed by every subject, where the null expects ${c.null.statesAllFailMean.toFixed(1)}.` +
    (c.permutations_requested === undefined
      ? ''
      : ` The null ran ${c.null.permutations.toLocaleString('en-US')} of the ${c.permutations_requested.toLocaleString('en-US')} permutations asked for, so that permutations x errors stay within the work bound of random draws (Monte-Carlo standard error of p ${c.p_mc_se === null || c.p_mc_se === undefined ? 'not computable' : c.p_mc_se.toFixed(4)}).`)
  );
}

/** The report's subsection (Markdown). */
export function renderConcentration(c: ConcentrationReport | null, sufficiency: ProbeSufficiencyReport | null): string {
  const out = ['### Errors on the same states across subjects\n'];
  out.push(
    `Do facts-right, action-wrong errors fall on the same states for different subjects (Li, Krishnan & Padman §5.3)? A subject fails a state when at least one of its answers there has every fact right and the action wrong. ` +
      `The permutation null keeps each subject's number of such errors and scatters them at random over that subject's own facts-right states, so it keeps each subject's error rate but no shared hard states.\n`,
  );
  if (c === null) {
    out.push('No subject read every fact right on any non-ambiguous state, so there is nothing to concentrate.\n');
    return out.join('\n');
  }
  out.push(`${concentrationText(c, (x) => pct(x))}\n`);
  if (c.subjects < 2) out.push('With one subject no state can be shared: the comparison needs two or more subjects.\n');
  else if (!pointsAtDecision(sufficiency)) {
    out.push('Shared hard states may be states whose action the probed facts do not determine (the sufficiency check above did not pass, or compared nothing), so concentration here does not show a shared failure to decide.\n');
  }
  return out.join('\n');
}
