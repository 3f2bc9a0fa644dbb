/**
 * The publication gate (Standoff O1's `validate_run.py`) over one run in the trace store: the ONE
 * gate, used by `standoff validate` and by `standoff report build` (which shows it at the top of
 * the report). A run passes only when every check passes. Each check is its own function
 * (`check*` below), run in this order:
 *
 * | check | passes when |
 * | --- | --- |
 * | `run_status` | the run's status is `success` |
 * | `sample_counts` | every subject arm has the same number of episodes, equal to `expectedSamples` (default: the run's scenarios x its recorded epochs, when it records them); every subject the run's config names has episodes |
 * | `required_scorers` | every episode has a score row for each required scorer (default: the suite's, see {@link gateDefaults}), and on every completed episode that score was measured: its value is not NULL unless it is NOANSWER. A NULL left by failed judge calls (every eligible verdict ERROR) passes only within the judge-error allowance; a NULL without that excuse (a run without judges, every judge excluded as self) always fails |
 * | `judge_errors` | the run has no ERROR verdict (a judge call that failed after retries), or at most `allowJudgeErrors` of them (`--allow-judge-errors N`) |
 * | `sample_errors` | no episode has status `error` |
 * | `distinct_subject_models` | at least one subject, and as many distinct subject models as the config names arms (two arms never share a model) |
 * | `unique_episodes` | no episode id occurs twice |
 * | `truncated_episodes` | no episode was cut off at the token limit (`episodes.truncated`), or at most `allowTruncated` were (`--allow-truncated N`); a store without finish reasons has none |
 *
 * Not measured is not failed, and not passed either: a score nobody measured is NULL, and the
 * gate says so instead of shrinking a denominator. A truncated episode is invalid and scored
 * (incorrect, not gathered, misaligned: in every denominator); `truncated_episodes` counts it apart
 * (and its allowance decides). Stores written before that convention hold NULL scores for truncated
 * episodes; `required_scorers` leaves those to `truncated_episodes`.
 *
 * `validateRun(traces, {runId?, expectedSamples?, requiredScorers?, allowJudgeErrors?, allowTruncated?})`: without
 * `runId`, the only run in the store, else the most recently created one (named in the result).
 * Which checks apply depends on the suite, decided here once for every caller (`standoff
 * validate`, the report's gate, the end of `standoff run`): a Standoff run (source `standoff` or
 * `synthetic`) requires the three O1 scorers; an imported run (CSV, Inspect, lm-eval) requires the
 * scorers it holds. So `validate` and the report give the same verdict on the same run.
 * CLI: `standoff validate --traces DIR [--run ID] [--expected-samples N] [--allow-judge-errors N]
 * [--allow-truncated N]`,
 * exit 0 when ok.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { usageError } from '../errors.ts';
import { describeManifestDiff, diffStateManifests, type StateManifest } from './state-manifest.ts';
import { openStore } from './open-store.ts';
import { query, quoteLiteral } from './duckdb.ts';
import { SCORER_NAMES, isO1Data } from '../schema/tables.ts';

/** A given memory limit, else the bounded settings of every statistics command. */
const boundedUnless = (memoryLimit: string | undefined) => (memoryLimit ? { memoryLimit } : { bounded: true });

export interface ValidateOptions {
  runId?: string;
  /** DuckDB memory limit of the validation's own instance; default: bounded as every statistics command (`ANALYSIS_DB`: 1 GB, a private spill directory), so `standoff validate` and the report's gate stay in bounded memory at 1e7. */
  memoryLimit?: string;
  /** Episodes every subject must have (the seed's `--expected-samples 90`). */
  expectedSamples?: number;
  /** Scorers every episode must carry, measured (default: the suite's, {@link gateDefaults}). */
  requiredScorers?: readonly string[];
  /** ERROR verdicts (failed judge calls) the run may hold and still pass (default 0). */
  allowJudgeErrors?: number;
  /** Episodes cut off at the token limit the run may have and still pass (default 0; `--allow-truncated N`). */
  allowTruncated?: number;
  /**
   * Required scores nobody measured (no score row, or a NULL value no failed judge call explains:
   * a blank CSV cell) the run may hold and still pass (default 0; `--allow-missing N`).
   */
  allowMissing?: number;
  /**
   * The manifest of a state directory on disk (`--states DIR`, runner/manifest.ts
   * `loadStateManifest`): adds the check `state_manifest`, that every state the run recorded in
   * `runs.config.state_manifest` is on disk with the same content.
   */
  states?: { dir: string; manifest: StateManifest };
}

export interface ValidationCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ValidationResult {
  ok: boolean;
  runId: string;
  checks: ValidationCheck[];
  /** `<check>: <detail>` for every failed check. */
  failures: string[];
  /** Judge verdicts in the run, and how many of them are ERROR (a failed judge call). */
  verdicts: { total: number; errors: number; allowed: number };
}

/** What every check reads: the open store, the run, its configured subjects and episode counts. */
export interface GateContext {
  conn: DuckDBConnection;
  runId: string;
  status: string;
  /** Subject models the run's config names (runner output records them; imported runs may not). */
  configured: string[] | null;
  /** Episodes per subject model, sorted by model. */
  counts: { subject: string; n: number }[];
  expectedSamples: number | undefined;
  requiredScorers: string[];
  allowJudgeErrors: number;
  allowTruncated: number;
  allowMissing: number;
}

export type GateCheck = (g: GateContext) => Promise<ValidationCheck>;

const num = (v: unknown) => (typeof v === 'number' ? v : Number(v));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const rows = async (g: GateContext, sql: string) => (await query(g.conn, sql, [g.runId])).rows;

/** `run_status`: the run finished successfully. */
export async function checkRunStatus(g: GateContext): Promise<ValidationCheck> {
  return { name: 'run_status', ok: g.status === 'success', detail: `run status is ${g.status}` };
}

/** `sample_counts`: equal arms (of the expected size), and every configured subject present. */
export async function checkSampleCounts(g: GateContext): Promise<ValidationCheck> {
  const countText = g.counts.map((x) => `${x.subject}=${x.n}`).join(', ') || 'no episodes';
  const problems: string[] = [];
  if (g.counts.length === 0) problems.push('the run has no episodes');
  if (g.expectedSamples !== undefined) {
    const off = g.counts.filter((x) => x.n !== g.expectedSamples);
    if (off.length) problems.push(`expected ${g.expectedSamples} per subject, got ${off.map((x) => `${x.subject}=${x.n}`).join(', ')}`);
  } else if (new Set(g.counts.map((x) => x.n)).size > 1) {
    problems.push(`subjects have unequal sample counts (${countText})`);
  }
  if (g.configured) {
    const missing = g.configured.filter((m) => !g.counts.some((x) => x.subject === m));
    if (missing.length) problems.push(`configured subject(s) without episodes: ${missing.join(', ')}`);
  }
  return { name: 'sample_counts', ok: problems.length === 0, detail: problems.length ? problems.join('; ') : `${g.counts.length} subject(s): ${countText}` };
}

/** Each gate context's judge counts, read once (three callers: `required_scorers`, `judge_errors`, the result's verdicts). */
const judgeCounts = new WeakMap<GateContext, Promise<{ total: number; errors: number; byJudge: string }>>();

/** ERROR verdicts of the run (and all its verdicts, and the ERRORs per judge), read once per gate context. */
function judgeErrorCounts(g: GateContext): Promise<{ total: number; errors: number; byJudge: string }> {
  let p = judgeCounts.get(g);
  if (!p) judgeCounts.set(g, (p = readJudgeErrorCounts(g)));
  return p;
}

async function readJudgeErrorCounts(g: GateContext): Promise<{ total: number; errors: number; byJudge: string }> {
  const r = await rows(
    g,
    `SELECT judge_model, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE verdict = 'ERROR') AS BIGINT) AS e
     FROM judgments WHERE run_id = $1 GROUP BY judge_model ORDER BY judge_model`,
  );
  const total = r.reduce((a, x) => a + num(x.n), 0);
  const errors = r.reduce((a, x) => a + num(x.e), 0);
  const byJudge = r.filter((x) => num(x.e) > 0).map((x) => `${x.judge_model} ${num(x.e)}`).join(', ');
  return { total, errors, byJudge };
}

/** The required scorers as a SQL list literal (each quoted). */
const requiredList = (g: GateContext) => `[${[...new Set(g.requiredScorers)].map(quoteLiteral).join(', ')}]::VARCHAR[]`;

/**
 * (episode_id, scorer) for every episode of the run without a score row for a required scorer,
 * by episode and scorer. One aggregate of the run's scores per episode (a bit per required
 * scorer present) joined to the episodes, then only the incomplete episodes expanded: the hash of
 * every distinct (episode, scorer) pair that a plain anti-join builds (10 s of CPU at 1e6) is
 * not needed. Above 62 required scorers (more bits than a BIGINT holds) the anti-join.
 */
async function missingScores(g: GateContext): Promise<Record<string, unknown>[]> {
  const list = requiredList(g);
  if (new Set(g.requiredScorers).size > 62) {
    return rows(
      g,
      `SELECT e.episode_id, req.scorer FROM episodes e CROSS JOIN (SELECT unnest(${list}) AS scorer) req
       WHERE e.run_id = $1 AND NOT EXISTS (SELECT 1 FROM scores s WHERE s.run_id = $1 AND s.episode_id = e.episode_id AND s.scorer = req.scorer)
       ORDER BY e.episode_id, req.scorer`,
    );
  }
  const all = 2 ** new Set(g.requiredScorers).size - 1;
  return rows(
    g,
    `WITH m AS (SELECT episode_id, bit_or(CAST(1 AS BIGINT) << CAST(list_position(${list}, scorer) - 1 AS BIGINT)) AS present
                FROM scores WHERE run_id = $1 AND list_contains(${list}, scorer) GROUP BY episode_id),
     x AS (SELECT e.episode_id, coalesce(m.present, 0) AS present FROM episodes e LEFT JOIN m ON m.episode_id = e.episode_id
           WHERE e.run_id = $1 AND coalesce(m.present, 0) <> ${all}),
     req AS (SELECT unnest(${list}) AS scorer, generate_subscripts(${list}, 1) AS i)
     SELECT x.episode_id, req.scorer FROM x CROSS JOIN req WHERE (x.present >> CAST(req.i - 1 AS BIGINT)) & 1 = 0
     ORDER BY x.episode_id, req.scorer`,
  );
}

/**
 * Required scores that are NULL (and not NOANSWER) on completed, untruncated episodes, by scorer
 * and episode, each with its judge verdicts and whether an eligible one is ERROR. The NULL scores
 * are found first; only their judgments are aggregated (not every judgment of the run).
 */
async function nullScores(g: GateContext): Promise<Record<string, unknown>[]> {
  return rows(
    g,
    `WITH n AS (SELECT s.scorer, s.episode_id FROM scores s WHERE s.run_id = $1 AND list_contains(${requiredList(g)}, s.scorer) AND s.value IS NULL AND NOT s.noanswer)
     SELECT n.scorer, e.episode_id, coalesce(j.errors, 0) > 0 AS judge_error, coalesce(j.verdicts, 0) AS verdicts
     FROM n JOIN episodes e ON e.episode_id = n.episode_id
     LEFT JOIN (SELECT episode_id, scorer, count(*) AS verdicts, count(*) FILTER (WHERE verdict = 'ERROR' AND NOT excluded_self) AS errors
                FROM judgments WHERE run_id = $1 AND (episode_id, scorer) IN (SELECT (episode_id, scorer) FROM n) GROUP BY ALL) j
       ON j.episode_id = n.episode_id AND j.scorer = n.scorer
     WHERE e.run_id = $1 AND e.status <> 'error' AND e.truncated IS NOT TRUE
     ORDER BY n.scorer, e.episode_id`,
  );
}

/**
 * `required_scorers`: every episode has a row for each required scorer, and on every completed
 * (non-error) episode the value was measured (not NULL, unless NOANSWER).
 */
export async function checkRequiredScorers(g: GateContext): Promise<ValidationCheck> {
  const required = g.requiredScorers;
  const missing = await missingScores(g);
  const nulls = await nullScores(g);
  const epCount = g.counts.reduce((a, x) => a + x.n, 0);
  const problems: string[] = [];
  const unmeasured = nulls.filter((r) => !r.judge_error);
  // Scores nobody measured (no row, or NULL without a failed judge call): within --allow-missing, allowed.
  const missingTotal = missing.length + unmeasured.length;
  const withinAllowance = missingTotal > 0 && missingTotal <= g.allowMissing;
  if (missing.length && !withinAllowance) {
    problems.push(`${missing.length} missing score(s), e.g. ${missing.slice(0, 5).map((r) => `${r.episode_id} lacks ${r.scorer}`).join('; ')}`);
  }
  const { errors } = await judgeErrorCounts(g);
  for (const scorer of required) {
    const mine = nulls.filter((r) => r.scorer === scorer);
    if (mine.length === 0) continue;
    const notMeasured = mine.filter((r) => !r.judge_error);
    const byErrors = mine.length - notMeasured.length;
    if (notMeasured.length && !withinAllowance) {
      const noJudge = notMeasured.filter((r) => num(r.verdicts) === 0).length;
      problems.push(
        `${scorer} not measured on ${plural(notMeasured.length, 'completed episode')}` +
          (noJudge === notMeasured.length ? ' (no judge verdict recorded: a run without judges?)' : noJudge ? ` (${noJudge} without any judge verdict)` : ' (no eligible judge verdict)') +
          `, e.g. ${notMeasured.slice(0, 3).map((r) => r.episode_id).join(', ')}`,
      );
    }
    if (byErrors && errors > g.allowJudgeErrors) {
      problems.push(`${scorer} is NULL on ${plural(byErrors, 'episode')} because every eligible judge call failed (see judge_errors)`);
    }
  }
  if (missingTotal > 0 && !withinAllowance) problems.push(`allowed ${g.allowMissing} missing (--allow-missing N)`);
  const byJudgeErrors = nulls.length - unmeasured.length;
  const notes = [
    withinAllowance ? `${plural(missingTotal, 'score')} not measured, allowed by --allow-missing ${g.allowMissing}` : '',
    byJudgeErrors && problems.length === 0 ? `${plural(byJudgeErrors, 'NULL value')} left by failed judge calls, allowed by --allow-judge-errors ${g.allowJudgeErrors}` : '',
  ].filter(Boolean);
  const nullNote = notes.length ? `; ${notes.join('; ')}` : '';
  return {
    name: 'required_scorers',
    ok: problems.length === 0 && epCount > 0,
    detail: problems.length
      ? problems.join('; ')
      : required.length === 0
        ? `no scorer required (${epCount} episodes)`
        : withinAllowance
          ? `${required.join(', ')} on ${epCount} episodes${nullNote}`
          : `${required.join(', ')} present on all ${epCount} episodes and measured on every completed one${nullNote}`,
  };
}

/** `judge_errors`: no judge call failed, or no more than the user allowed. */
export async function checkJudgeErrors(g: GateContext): Promise<ValidationCheck> {
  const { total, errors, byJudge } = await judgeErrorCounts(g);
  const allowed = g.allowJudgeErrors;
  let detail: string;
  if (total === 0) detail = 'no judge verdicts recorded';
  else if (errors === 0) detail = `no judge call failed (${plural(total, 'verdict')})`;
  else {
    detail = `${errors} of ${total} verdicts are ERROR (the judge call failed: ${byJudge})`;
    detail += errors <= allowed ? `, allowed by --allow-judge-errors ${allowed}` : `; allowed ${allowed} (--allow-judge-errors N)`;
  }
  return { name: 'judge_errors', ok: errors <= allowed, detail };
}

/** `sample_errors`: no episode ended in error. */
export async function checkSampleErrors(g: GateContext): Promise<ValidationCheck> {
  const errs = await rows(g, "SELECT episode_id, error FROM episodes WHERE run_id = $1 AND status = 'error' ORDER BY episode_id");
  return {
    name: 'sample_errors',
    ok: errs.length === 0,
    detail: errs.length === 0 ? 'no sample errors' : `${errs.length} episode(s) in error, e.g. ${errs.slice(0, 3).map((r) => `${r.episode_id}: ${String(r.error ?? '').slice(0, 120)}`).join('; ')}`,
  };
}

/** `distinct_subject_models`: one distinct model per configured arm. */
export async function checkDistinctSubjectModels(g: GateContext): Promise<ValidationCheck> {
  const distinct = g.counts.length;
  const configured = g.configured;
  const arms = configured ? configured.length : distinct;
  const dupArms = configured ? configured.filter((m, i) => configured.indexOf(m) !== i) : [];
  const ok = distinct > 0 && dupArms.length === 0 && distinct === arms;
  return {
    name: 'distinct_subject_models',
    ok,
    detail: ok
      ? `${distinct} distinct subject model(s)`
      : dupArms.length
        ? `subject model(s) used by more than one arm: ${[...new Set(dupArms)].join(', ')}`
        : `${distinct} distinct subject model(s) for ${arms} configured arm(s)`,
  };
}

/** `unique_episodes`: no episode id twice. */
export async function checkUniqueEpisodes(g: GateContext): Promise<ValidationCheck> {
  const dups = await rows(g, 'SELECT episode_id, count(*) AS n FROM episodes WHERE run_id = $1 GROUP BY episode_id HAVING count(*) > 1 ORDER BY episode_id');
  return {
    name: 'unique_episodes',
    ok: dups.length === 0,
    detail: dups.length === 0 ? 'every episode id is unique' : `${dups.length} duplicated episode id(s), e.g. ${dups.slice(0, 3).map((r) => `${r.episode_id} x${num(r.n)}`).join(', ')}`,
  };
}

/**
 * `truncated_episodes`: episodes cut off at the token limit (`episodes.truncated = true`: a reply
 * ended with `finish_reason = length` before any decision). Their scores are not measured, so a run
 * with any fails unless `allowTruncated` (`--allow-truncated N`) covers them. NULL (a store or source
 * without finish reasons) counts as not truncated.
 */
export async function checkTruncatedEpisodes(g: GateContext): Promise<ValidationCheck> {
  const found = (
    await rows(
      g,
      `SELECT subject_model, CAST(count(*) AS BIGINT) AS n, min(episode_id) AS example
       FROM episodes WHERE run_id = $1 AND truncated IS TRUE GROUP BY subject_model ORDER BY subject_model`,
    )
  ).map((r) => ({ subject: String(r.subject_model), n: num(r.n), example: String(r.example) }));
  const total = found.reduce((a, r) => a + r.n, 0);
  const name = 'truncated_episodes';
  if (total === 0) return { name, ok: true, detail: 'no episode was cut off at the token limit' };
  const allowed = g.allowTruncated;
  const per = found.map((r) => `${r.subject}=${r.n}`).join(', ');
  const detail = `${total} episode(s) cut off at the token limit (finish_reason=length): ${per}, e.g. ${found[0]!.example}; ${
    total <= allowed ? `allowed by --allow-truncated ${allowed}` : `raise max_tokens for these subjects and run again, or pass --allow-truncated ${total}`
  }`;
  return { name, ok: total <= allowed, detail };
}

/** The gate's checks, in the order they run and are reported. */
export const GATE_CHECKS: readonly GateCheck[] = [
  checkRunStatus,
  checkSampleCounts,
  checkRequiredScorers,
  checkJudgeErrors,
  checkSampleErrors,
  checkDistinctSubjectModels,
  checkUniqueEpisodes,
  checkTruncatedEpisodes,
];

/** `state_manifest`: the states on disk match the manifest the run recorded (`--states DIR`). */
export function stateManifestCheck(config: unknown, states: { dir: string; manifest: StateManifest }): ValidationCheck {
  const name = 'state_manifest';
  let recorded: StateManifest | undefined;
  try {
    recorded = (typeof config === 'string' ? JSON.parse(config) : (config as Record<string, unknown> | null))?.state_manifest;
  } catch {
    recorded = undefined;
  }
  if (!recorded || typeof recorded.root !== 'string' || typeof recorded.states !== 'object') {
    return { name, ok: false, detail: `the run recorded no state manifest (made before manifests, or ingested), so ${states.dir} cannot be checked against it` };
  }
  const diff = describeManifestDiff(diffStateManifests(recorded, states.manifest, { subset: true }));
  const n = Object.keys(recorded.states).length;
  return diff
    ? { name, ok: false, detail: `${states.dir} differs from the run's manifest (root ${recorded.root.slice(0, 16)}): ${diff}` }
    : { name, ok: true, detail: `${n} state(s) in ${states.dir} match the run's manifest (root ${recorded.root})` };
}

function checkOptions(opts: ValidateOptions): void {
  if (opts.expectedSamples !== undefined && !(Number.isInteger(opts.expectedSamples) && opts.expectedSamples > 0)) {
    throw usageError('validate.badExpected', `--expected-samples must be a positive integer, got ${opts.expectedSamples}`);
  }
  if (opts.allowJudgeErrors !== undefined && !(Number.isInteger(opts.allowJudgeErrors) && opts.allowJudgeErrors >= 0)) {
    throw usageError('validate.badAllowJudgeErrors', `--allow-judge-errors must be a non-negative integer, got ${opts.allowJudgeErrors}`);
  }
  if (opts.allowTruncated !== undefined && !(Number.isInteger(opts.allowTruncated) && opts.allowTruncated >= 0)) {
    throw usageError('validate.badAllowTruncated', `--allow-truncated must be a non-negative integer, got ${opts.allowTruncated}`);
  }
  if (opts.allowMissing !== undefined && !(Number.isInteger(opts.allowMissing) && opts.allowMissing >= 0)) {
    throw usageError('validate.badAllowMissing', `--allow-missing must be a non-negative integer, got ${opts.allowMissing}`);
  }
}

function configuredSubjects(config: unknown): string[] | null {
  try {
    const cfg = JSON.parse(String(config)) as { subjects?: Array<{ model?: unknown }> };
    return Array.isArray(cfg.subjects) ? cfg.subjects.map((s) => String(s.model)) : null;
  } catch {
    return null;
  }
}

/**
 * What the gate requires of a run when the caller does not say: an O1-shaped run (a Standoff
 * source, the `standoff_o1` task, or two of O1's scorers: `isO1Data`) the three O1 scorers and any
 * other it holds; any other run the scorers it holds (sorted). Expected
 * samples per subject: the run's distinct scenarios x its recorded epochs, when it records epochs.
 */
async function gateDefaults(conn: DuckDBConnection, runId: string, run: Record<string, unknown>): Promise<{ requiredScorers: string[]; expectedSamples: number | undefined }> {
  const held = (await query(conn, 'SELECT DISTINCT scorer FROM scores WHERE run_id = $1 ORDER BY scorer', [runId])).rows.map((r) => String(r.scorer));
  // O1's gate (all three scorers) for any O1-shaped run, whoever wrote it (schema/tables.ts isO1Data).
  const o1 = isO1Data({ source: String(run.source), suite: String(run.suite ?? ''), scorers: held });
  const requiredScorers = o1 ? [...new Set([...SCORER_NAMES, ...held])].sort() : held;
  const scenarios = num((await query(conn, 'SELECT count(DISTINCT scenario_id) AS n FROM episodes WHERE run_id = $1', [runId])).rows[0]?.n ?? 0);
  const epochs = run.epochs === null || run.epochs === undefined ? null : num(run.epochs);
  return { requiredScorers, expectedSamples: epochs !== null && scenarios > 0 ? scenarios * epochs : undefined };
}

export async function validateRun(traces: string, opts: ValidateOptions = {}): Promise<ValidationResult> {
  checkOptions(opts);
  const store = await openStore(traces, { runs: opts.runId ? [opts.runId] : undefined, requireRuns: true, ...boundedUnless(opts.memoryLimit) });
  try {
    const conn = store.conn;
    let runId = opts.runId;
    if (!runId) {
      const r = await query(conn, 'SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC LIMIT 1');
      runId = String(r.rows[0].run_id);
    }
    const run = (await query(conn, 'SELECT status, config, source, suite, epochs FROM runs WHERE run_id = $1', [runId])).rows[0];
    const counts = (
      await query(conn, 'SELECT subject_model, count(*) AS n FROM episodes WHERE run_id = $1 GROUP BY subject_model ORDER BY subject_model', [runId])
    ).rows.map((r) => ({ subject: String(r.subject_model), n: num(r.n) }));
    const dflt = await gateDefaults(conn, runId, run);
    const g: GateContext = {
      conn,
      runId,
      status: String(run.status),
      configured: configuredSubjects(run.config),
      counts,
      expectedSamples: opts.expectedSamples ?? dflt.expectedSamples,
      requiredScorers: [...(opts.requiredScorers ?? dflt.requiredScorers)],
      allowJudgeErrors: opts.allowJudgeErrors ?? 0,
      allowTruncated: opts.allowTruncated ?? 0,
      allowMissing: opts.allowMissing ?? 0,
    };
    const checks: ValidationCheck[] = [];
    for (const check of GATE_CHECKS) checks.push(await check(g));
    if (opts.states) checks.push(stateManifestCheck(run.config, opts.states));
    const { total, errors } = await judgeErrorCounts(g);
    const failures = checks.filter((x) => !x.ok).map((x) => `${x.name}: ${x.detail}`);
    return { ok: failures.length === 0, runId, checks, failures, verdicts: { total, errors, allowed: g.allowJudgeErrors } };
  } finally {
    store.close();
  }
}

/** A check across the runs of one suite (arms of one comparison), as the report shows it. */
export interface AcrossRunsCheck extends ValidationCheck {
  suite: string;
  /** One line per offending subject or model. */
  failures: string[];
}

/** The gate over several runs: every run's checks, then the checks across the runs of each suite. */
export interface StoreValidationResult {
  ok: boolean;
  runs: ValidationResult[];
  across: AcrossRunsCheck[];
  /** `<run>: <check>: <detail>` (or `across runs of <suite>: ...`) for every failed check. */
  failures: string[];
  verdicts: { total: number; errors: number; allowed: number };
}

/**
 * THE gate over a store (what `standoff validate` without `--run` and `standoff report build`
 * check): {@link validateRun} on each run (`runIds`, default every run in the store), then, per
 * suite with several runs (arms of one comparison), `sample_counts` (equal samples per subject
 * across the runs) and `distinct_subject_models` (no subject model in two runs; such a subject is
 * `model @ run`). Runs of different suites are not arms of one comparison.
 */
export async function validateStore(traces: string, opts: Omit<ValidateOptions, 'runId'> & { runIds?: string[] } = {}): Promise<StoreValidationResult> {
  checkOptions(opts);
  const { runIds: given, ...rest } = opts;
  const store = await openStore(traces, { runs: given, requireRuns: true, ...boundedUnless(rest.memoryLimit) });
  let runs: { run_id: string; suite: string }[];
  const across: AcrossRunsCheck[] = [];
  try {
    runs = (await query(store.conn, 'SELECT run_id, suite FROM runs ORDER BY run_id')).rows.map((r) => ({ run_id: String(r.run_id), suite: String(r.suite) }));
    const suites = [...new Set(runs.map((r) => r.suite))].sort();
    for (const suite of suites) {
      const ids = runs.filter((r) => r.suite === suite).map((r) => r.run_id);
      if (ids.length >= 2) across.push(...(await acrossRunsChecks(store.conn, suite, ids, suites.length > 1)));
    }
  } finally {
    store.close();
  }
  const results: ValidationResult[] = [];
  for (const r of runs) results.push(await validateRun(traces, { ...rest, runId: r.run_id }));
  const failures = [
    ...results.flatMap((v) => v.failures.map((f) => `${v.runId}: ${f}`)),
    ...across.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`),
  ];
  const verdicts = { total: 0, errors: 0, allowed: opts.allowJudgeErrors ?? 0 };
  for (const v of results) {
    verdicts.total += v.verdicts.total;
    verdicts.errors += v.verdicts.errors;
  }
  return { ok: failures.length === 0, runs: results, across, failures, verdicts };
}

/** `sample_counts` and `distinct_subject_models` across the runs `ids` of one suite. */
async function acrossRunsChecks(conn: DuckDBConnection, suite: string, ids: string[], mixed: boolean): Promise<AcrossRunsCheck[]> {
  const label = mixed ? `across runs of ${suite}` : 'across runs';
  const inRuns = `run_id IN (SELECT unnest(CAST(CAST($runs AS JSON) AS VARCHAR[])))`; // the ids bound, not written in
  const runsParam = { runs: JSON.stringify(ids) };
  const counts = (
    await query(
      conn,
      `SELECT CASE WHEN count(*) OVER (PARTITION BY subject_model) > 1 THEN subject_model || ' @ ' || run_id ELSE subject_model END AS subject, n
       FROM (SELECT run_id, subject_model, CAST(count(*) AS BIGINT) AS n FROM episodes WHERE ${inRuns} GROUP BY ALL) ORDER BY subject`,
      runsParam,
    )
  ).rows.map((r) => ({ subject: String(r.subject), n: num(r.n) }));
  const sizes = new Set(counts.map((r) => r.n));
  const dup = (
    await query(
      conn,
      `SELECT subject_model, list(run_id ORDER BY run_id) AS runs FROM (SELECT DISTINCT run_id, subject_model FROM episodes WHERE ${inRuns})
       GROUP BY subject_model HAVING count(*) > 1 ORDER BY subject_model`,
      runsParam,
    )
  ).rows;
  const models = new Set(counts.map((r) => r.subject.split(' @ ')[0])).size;
  const fmt = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return [
    {
      suite,
      name: `sample_counts (${label})`,
      ok: sizes.size <= 1,
      detail: sizes.size <= 1 ? `${counts.length} subject arms with ${fmt([...sizes][0] ?? 0)} samples each` : `sample counts differ: ${counts.map((r) => `${r.subject} ${fmt(r.n)}`).join(', ')}`,
      failures: sizes.size <= 1 ? [] : counts.map((r) => `${r.subject}: ${fmt(r.n)} sample${Number(r.n) === 1 ? '' : 's'}`),
    },
    {
      suite,
      name: `distinct_subject_models (${label})`,
      ok: dup.length === 0,
      detail: dup.length === 0 ? `${models} distinct subject models across ${ids.length} runs` : `${dup.length} model${dup.length === 1 ? '' : 's'} in several runs (reported as model @ run)`,
      failures: dup.map((r) => `${r.subject_model} appears in runs ${(r.runs as string[]).join(', ')}`),
    },
  ];
}

/** Lines for the CLI over a store: each run's checks (failures first), the checks across runs, the verdict. */
export function formatStoreValidation(r: StoreValidationResult): string[] {
  if (r.runs.length === 1 && r.across.length === 0) return formatValidation(r.runs[0]!);
  const lines: string[] = [];
  const order = [...r.runs].sort((a, b) => Number(a.ok) - Number(b.ok));
  for (const v of order) {
    lines.push(`run ${v.runId}: ${v.ok ? 'passed' : `FAILED ${v.failures.length} check(s)`}`);
    const checks = [...v.checks].sort((a, b) => Number(a.ok) - Number(b.ok));
    for (const c of checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  }
  for (const c of r.across) lines.push(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  const failedRuns = r.runs.filter((v) => !v.ok).length;
  lines.push(
    r.ok
      ? `${r.runs.length} runs: passed the publication gate`
      : `${failedRuns} of ${r.runs.length} runs FAILED${r.across.some((c) => !c.ok) ? `; ${r.across.filter((c) => !c.ok).length} check(s) across runs FAILED` : ''}`,
  );
  return lines;
}

/** Lines for the CLI: one per check, then the verdict. */
export function formatValidation(r: ValidationResult): string[] {
  return [
    ...r.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
    r.ok ? `run ${r.runId}: passed the publication gate` : `run ${r.runId}: FAILED ${r.failures.length} check(s)`,
  ];
}
