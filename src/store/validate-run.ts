/**
 * The publication gate (Standoff O1's `validate_run.py`) over one run in the trace store. A run
 * passes only when every check passes:
 *
 * | check | passes when |
 * | --- | --- |
 * | `run_status` | the run's status is `success` |
 * | `sample_counts` | every subject arm has the same number of episodes, equal to `expectedSamples` when given; every subject the run's config names has episodes |
 * | `required_scorers` | every episode has a score row for each required scorer (default: the three O1 scorers) |
 * | `sample_errors` | no episode has status `error` |
 * | `distinct_subject_models` | at least one subject, and as many distinct subject models as the config names arms (two arms never share a model) |
 * | `unique_episodes` | no episode id occurs twice |
 * | `truncated_episodes` | no episode was cut off at the token limit (`episodes.truncated`), or at most `allowTruncated` were (`--allow-truncated N`); a store without finish reasons has none |
 *
 * `validateRun(traces, {runId?, expectedSamples?})`: without `runId`, the only run in the store,
 * else the most recently created one (named in the result). CLI: `standoff validate --traces DIR
 * [--run ID] [--expected-samples N]`, exit 0 when ok.
 */
import { usageError } from '../errors.ts';
import { openStore } from './open-store.ts';
import { query, quoteLiteral } from './duckdb.ts';
import { SCORER_NAMES } from '../schema/tables.ts';

export interface ValidateOptions {
  runId?: string;
  /** Episodes every subject must have (the seed's `--expected-samples 90`). */
  expectedSamples?: number;
  /** Scorers every episode must carry (default: the three O1 scorers). */
  requiredScorers?: readonly string[];
  /** Episodes cut off at the token limit the run may have and still pass (default 0; `--allow-truncated N`). */
  allowTruncated?: number;
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
}

const num = (v: unknown) => (typeof v === 'number' ? v : Number(v));

export async function validateRun(traces: string, opts: ValidateOptions = {}): Promise<ValidationResult> {
  if (opts.expectedSamples !== undefined && !(Number.isInteger(opts.expectedSamples) && opts.expectedSamples > 0)) {
    throw usageError('validate.badExpected', `--expected-samples must be a positive integer, got ${opts.expectedSamples}`);
  }
  if (opts.allowTruncated !== undefined && !(Number.isInteger(opts.allowTruncated) && opts.allowTruncated >= 0)) {
    throw usageError('validate.badAllowTruncated', `--allow-truncated must be a non-negative integer, got ${opts.allowTruncated}`);
  }
  const store = await openStore(traces, { runs: opts.runId ? [opts.runId] : undefined, requireRuns: true });
  try {
    const c = store.conn;
    let runId = opts.runId;
    if (!runId) {
      const r = await query(c, 'SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC LIMIT 1');
      runId = String(r.rows[0].run_id);
    }
    const p = [runId];
    const run = (await query(c, 'SELECT status, config FROM runs WHERE run_id = $1', p)).rows[0];
    const checks: ValidationCheck[] = [];
    const add = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });

    // run_status
    add('run_status', run.status === 'success', `run status is ${run.status}`);

    // configured subjects (runner output records them; imported runs may not)
    let configured: string[] | null = null;
    try {
      const cfg = JSON.parse(String(run.config)) as { subjects?: Array<{ model?: unknown }> };
      if (Array.isArray(cfg.subjects)) configured = cfg.subjects.map((s) => String(s.model));
    } catch {
      configured = null;
    }

    // sample_counts
    const counts = (
      await query(c, 'SELECT subject_model, count(*) AS n FROM episodes WHERE run_id = $1 GROUP BY subject_model ORDER BY subject_model', p)
    ).rows.map((r) => ({ subject: String(r.subject_model), n: num(r.n) }));
    const countText = counts.map((x) => `${x.subject}=${x.n}`).join(', ') || 'no episodes';
    const problems: string[] = [];
    if (counts.length === 0) problems.push('the run has no episodes');
    if (opts.expectedSamples !== undefined) {
      const off = counts.filter((x) => x.n !== opts.expectedSamples);
      if (off.length) problems.push(`expected ${opts.expectedSamples} per subject, got ${off.map((x) => `${x.subject}=${x.n}`).join(', ')}`);
    } else if (new Set(counts.map((x) => x.n)).size > 1) {
      problems.push(`subjects have unequal sample counts (${countText})`);
    }
    if (configured) {
      const missing = configured.filter((m) => !counts.some((x) => x.subject === m));
      if (missing.length) problems.push(`configured subject(s) without episodes: ${missing.join(', ')}`);
    }
    add('sample_counts', problems.length === 0, problems.length ? problems.join('; ') : `${counts.length} subject(s): ${countText}`);

    // required_scorers
    const required = [...(opts.requiredScorers ?? SCORER_NAMES)];
    const missingScores = (
      await query(
        c,
        `WITH req AS (SELECT unnest([${required.map(quoteLiteral).join(', ')}]::VARCHAR[]) AS scorer)
         SELECT e.episode_id, req.scorer
         FROM episodes e CROSS JOIN req
         LEFT JOIN (SELECT DISTINCT episode_id, scorer FROM scores WHERE run_id = $1) s
           ON s.episode_id = e.episode_id AND s.scorer = req.scorer
         WHERE e.run_id = $1 AND s.episode_id IS NULL
         ORDER BY e.episode_id, req.scorer`,
        p,
      )
    ).rows;
    const epCount = counts.reduce((a, x) => a + x.n, 0);
    add(
      'required_scorers',
      missingScores.length === 0 && epCount > 0,
      missingScores.length === 0
        ? required.length === 0
          ? `no scorer required (${epCount} episodes)`
          : `${required.join(', ')} present on all ${epCount} episodes`
        : `${missingScores.length} missing score(s), e.g. ${missingScores
            .slice(0, 5)
            .map((r) => `${r.episode_id} lacks ${r.scorer}`)
            .join('; ')}`,
    );

    // sample_errors
    const errs = (await query(c, "SELECT episode_id, error FROM episodes WHERE run_id = $1 AND status = 'error' ORDER BY episode_id", p)).rows;
    add(
      'sample_errors',
      errs.length === 0,
      errs.length === 0 ? 'no sample errors' : `${errs.length} episode(s) in error, e.g. ${errs.slice(0, 3).map((r) => `${r.episode_id}: ${String(r.error ?? '').slice(0, 120)}`).join('; ')}`,
    );

    // distinct_subject_models
    const distinct = counts.length;
    const arms = configured ? configured.length : distinct;
    const dupArms = configured ? configured.filter((m, i) => configured!.indexOf(m) !== i) : [];
    const distinctOk = distinct > 0 && dupArms.length === 0 && distinct === arms;
    add(
      'distinct_subject_models',
      distinctOk,
      distinctOk
        ? `${distinct} distinct subject model(s)`
        : dupArms.length
          ? `subject model(s) used by more than one arm: ${[...new Set(dupArms)].join(', ')}`
          : `${distinct} distinct subject model(s) for ${arms} configured arm(s)`,
    );

    // unique_episodes
    const dups = (
      await query(c, 'SELECT episode_id, count(*) AS n FROM episodes WHERE run_id = $1 GROUP BY episode_id HAVING count(*) > 1 ORDER BY episode_id', p)
    ).rows;
    add('unique_episodes', dups.length === 0, dups.length === 0 ? 'every episode id is unique' : `${dups.length} duplicated episode id(s), e.g. ${dups.slice(0, 3).map((r) => `${r.episode_id} x${num(r.n)}`).join(', ')}`);

    checks.push(await checkTruncatedEpisodes(c, runId, opts.allowTruncated ?? 0));

    const failures = checks.filter((x) => !x.ok).map((x) => `${x.name}: ${x.detail}`);
    return { ok: failures.length === 0, runId, checks, failures };
  } finally {
    store.close();
  }
}

/**
 * `truncated_episodes`: episodes cut off at the token limit (`episodes.truncated = true`: a reply
 * ended with `finish_reason = length` before any decision). Their scores are not measured, so a run
 * with any fails unless `allowed` (`--allow-truncated N`) covers them. NULL (a store or source
 * without finish reasons) counts as not truncated.
 */
export async function checkTruncatedEpisodes(conn: Parameters<typeof query>[0], runId: string, allowed = 0): Promise<ValidationCheck> {
  const rows = (
    await query(
      conn,
      `SELECT subject_model, CAST(count(*) AS BIGINT) AS n, min(episode_id) AS example
       FROM episodes WHERE run_id = $1 AND truncated IS TRUE GROUP BY subject_model ORDER BY subject_model`,
      [runId],
    )
  ).rows.map((r) => ({ subject: String(r.subject_model), n: num(r.n), example: String(r.example) }));
  const total = rows.reduce((a, r) => a + r.n, 0);
  const name = 'truncated_episodes';
  if (total === 0) return { name, ok: true, detail: 'no episode was cut off at the token limit' };
  const per = rows.map((r) => `${r.subject}=${r.n}`).join(', ');
  const detail = `${total} episode(s) cut off at the token limit (finish_reason=length): ${per}, e.g. ${rows[0].example}; ${
    total <= allowed ? `allowed by --allow-truncated ${allowed}` : `raise max_tokens for these subjects and run again, or pass --allow-truncated ${total}`
  }`;
  return { name, ok: total <= allowed, detail };
}

/** Lines for the CLI: one per check, then the verdict. */
export function formatValidation(r: ValidationResult): string[] {
  return [
    ...r.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
    r.ok ? `run ${r.runId}: passed the publication gate` : `run ${r.runId}: FAILED ${r.failures.length} check(s)`,
  ];
}
