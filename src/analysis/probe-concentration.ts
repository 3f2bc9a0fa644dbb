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
import { errorConcentration, type ErrorConcentrationResult } from '../stats/index.ts';
import type { Plain } from '../store/duckdb.ts';
import { usageError } from '../errors.ts';
import { probeStateSql, type ProbeSufficiencyReport, type ProbeTableOptions } from './probe-tables.ts';
import { pct } from '../report/markdown.ts';
import { pointsAtDecision } from './probe-sufficiency-text.ts';

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

type Q = (sql: string) => Promise<Record<string, Plain>[]>;

export async function loadConcentration(q: Q, o: ConcentrationOptions): Promise<ConcentrationReport | null> {
  const subj = o.subject ? 'subject' : 'subject_model';
  const rows = await q(`
    SELECT CAST(${subj} AS VARCHAR) AS subj, scenario_id,
           bool_or(total > 0 AND right_ = total) AS facts_right,
           bool_or(total > 0 AND right_ = total AND NOT coalesce(action, false)) AS failed
    FROM (${probeStateSql(o.subject, o.excludeStates)}) WHERE NOT ambiguous
    GROUP BY ALL HAVING bool_or(total > 0 AND right_ = total) ORDER BY subj, scenario_id`);
  if (rows.length === 0) return null;
  const by = new Map<string, { factsRight: string[]; errors: string[] }>();
  for (const r of rows) {
    const s = String(r.subj);
    let x = by.get(s);
    if (!x) by.set(s, (x = { factsRight: [], errors: [] }));
    x.factsRight.push(String(r.scenario_id));
    if (r.failed === true) x.errors.push(String(r.scenario_id));
  }
  const names = [...by.keys()].sort();
  if (o.minSubjects !== undefined && (!Number.isInteger(o.minSubjects) || o.minSubjects < 1 || o.minSubjects > names.length)) {
    throw usageError('probes.minSubjects', `--min-subjects must be between 1 and the ${names.length} subjects that read some state right, got ${o.minSubjects}`);
  }
  const errors = [...by.values()].reduce((a, x) => a + x.errors.length, 0);
  const permutations = boundedPermutations(o.permutations, errors, o.draws);
  const r = errorConcentration(
    names.map((subject) => ({ subject, ...by.get(subject)! })),
    { minSubjects: o.minSubjects, seed: o.seed, permutations, level: o.level },
  );
  const { nullShares, ...rest } = r;
  const p = r.null.p;
  const bound = permutations < o.permutations ? { permutations_requested: o.permutations, p_mc_se: p === null ? null : Math.sqrt((p * (1 - p)) / permutations) } : {};
  const counts = new Map<number, number>();
  for (const x of nullShares) counts.set(x, (counts.get(x) ?? 0) + 1);
  const null_distribution = [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([share, permutations]) => ({ share, permutations }));
  return { ...rest, ...bound, subject_names: names, states: new Set(rows.map((x) => String(x.scenario_id))).size, null_distribution };
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
