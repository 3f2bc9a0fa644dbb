/**
 * The ONE invalid and errored samples computation of every report (issue 21, point 1): per task x
 * subject, the samples, the invalid and the errored ones (and those cut off at the token limit,
 * `episodes.truncated`), each with its reason, and, where a suite lists them, the first samples of
 * each subject. The core samples section keeps the counts and reasons (`coreSamplesOf`); the
 * Standoff O1 suite shows the same computation as its section 8 (`sections/episodes.ts`).
 *
 * A suite names its subjects by a relation `subjects` of (run_id, subject_model, suite, subject):
 * the core's `g_subject` (per task), O1's `r_subject` (one suite).
 */
import type { Plain } from '../store/duckdb.ts';
import type { GenericSections } from './generic.ts';
import type { ReportContext } from './sections/context.ts';

export interface SampleReason {
  status: string;
  reason: string;
  count: number;
}

/** A listed invalid or errored sample (`log_reads`, `turns`: NULL where the source records none). */
export interface ListedSample {
  run_id: string;
  episode_id: string;
  scenario_id: string;
  epoch: number;
  status: 'invalid' | 'error';
  reason: string;
  log_reads: number | null;
  turns: number | null;
}

export interface SubjectSamples {
  suite: string;
  subject: string;
  samples: number;
  invalid: number;
  errored: number;
  /** Invalid samples cut off at the token limit (`episodes.truncated`). */
  token_limit: number;
  /** This subject's reasons, most frequent first. */
  reasons: SampleReason[];
  /** Its first invalid and errored samples (by status, item, epoch, run, id), at most `list`. */
  listed: ListedSample[];
}

export interface ComputedSamples {
  /** A row per task x subject with samples, in (task, subject) order. */
  subjects: SubjectSamples[];
  /** The reasons over every subject, most frequent first. */
  reasons: SampleReason[];
}

const REASON = `coalesce(CASE WHEN e.status = 'invalid' THEN e.invalid_reason ELSE e.error END, '(no reason recorded)')`;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Invalid and errored samples per task x subject of `subjects` (a relation of run_id, subject_model, suite, subject); `list` per subject listed. */
export async function computeSamples(ctx: ReportContext, subjects: string, list = 0): Promise<ComputedSamples> {
  const from = `episodes e JOIN ${subjects} g USING (run_id, subject_model)`;
  const counts = await ctx.q(`SELECT g.suite, g.subject, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE e.status = 'invalid') AS BIGINT) AS invalid,
      CAST(count(*) FILTER (WHERE e.status = 'error') AS BIGINT) AS errored, CAST(count(*) FILTER (WHERE e.status = 'invalid' AND coalesce(e.truncated, false)) AS BIGINT) AS cut
      FROM ${from} GROUP BY ALL ORDER BY g.suite, g.subject`);
  const bad = `SELECT g.suite, g.subject, e.status, ${REASON} AS reason FROM ${from} WHERE e.status IN ('invalid', 'error')`;
  const reasons = await ctx.q(`SELECT suite, subject, status, reason, CAST(count(*) AS BIGINT) AS n FROM (${bad}) GROUP BY ALL ORDER BY n DESC, status, reason`);
  const overall = await ctx.q(`SELECT status, reason, CAST(count(*) AS BIGINT) AS n FROM (${bad}) GROUP BY ALL ORDER BY n DESC, status, reason`);
  const listed =
    list > 0
      ? await ctx.q(`SELECT g.suite, g.subject, e.run_id, e.episode_id, e.scenario_id, e.epoch, e.status, ${REASON} AS reason, e.log_reads, e.turns FROM ${from} WHERE e.status IN ('invalid', 'error')
          QUALIFY row_number() OVER (PARTITION BY g.suite, g.subject ORDER BY e.status, e.scenario_id, e.epoch, e.run_id, e.episode_id) <= ${Math.floor(list)}
          ORDER BY g.suite, g.subject, e.status, e.scenario_id, e.epoch, e.run_id, e.episode_id`)
      : [];
  const reason = (r: Record<string, Plain>): SampleReason => ({ status: String(r.status), reason: String(r.reason), count: Number(r.n) });
  const mine = (rows: Record<string, Plain>[], r: Record<string, Plain>) => rows.filter((x) => x.suite === r.suite && x.subject === r.subject);
  return {
    subjects: counts.map((r) => ({
      suite: String(r.suite),
      subject: String(r.subject),
      samples: Number(r.n),
      invalid: Number(r.invalid),
      errored: Number(r.errored),
      token_limit: Number(r.cut),
      reasons: mine(reasons, r).map(reason),
      listed: mine(listed, r).map((x) => ({
        run_id: String(x.run_id), episode_id: String(x.episode_id), scenario_id: String(x.scenario_id), epoch: Number(x.epoch),
        status: x.status as 'invalid' | 'error', reason: String(x.reason), log_reads: num(x.log_reads), turns: num(x.turns),
      })),
    })),
    reasons: overall.map(reason),
  };
}

/** The core samples section's value: per task x subject, the counts and the reasons. */
export function coreSamplesOf(c: ComputedSamples): GenericSections['samples'] {
  return c.subjects.map(({ suite, subject, samples, invalid, errored, reasons }) => ({ suite, subject, samples, invalid, errored, reasons }));
}
