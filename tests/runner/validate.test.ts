import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRun } from '../../src/store/write-run.ts';
import type { EpisodeRow, RunRow, ScoreRow } from '../../src/schema/tables.ts';
import { parseConfig } from '../../src/runner/config.ts';
import { runEvaluation } from '../../src/runner/run.ts';
import { formatValidation, validateRun } from '../../src/store/validate-run.ts';

let traces: string;
beforeAll(async () => {
  traces = await mkdtemp(join(tmpdir(), 'standoff-validate-'));
  const cfg = parseConfig({
    name: 'good',
    scenarios: ['em_act_a', 'ct_amb_b', 'fc_esc_a'],
    subjects: [{ model: 'sim:careful' }, { model: 'sim:thorough' }],
    judges: [{ model: 'sim:judge-strict' }],
    epochs: 2,
    concurrency: 8,
    seed: 3,
    probes: false,
  });
  await runEvaluation({ config: cfg, runId: 'good', traces, progress: 'none', log: () => undefined });
});
afterAll(async () => {
  await rm(traces, { recursive: true, force: true });
});

const NAMES = ['run_status', 'sample_counts', 'required_scorers', 'judge_errors', 'sample_errors', 'distinct_subject_models', 'unique_episodes', 'truncated_episodes'];

describe('validateRun: the publication gate', () => {
  it('passes a good run, with and without --expected-samples', async () => {
    const r = await validateRun(traces, { runId: 'good' });
    expect(r.ok).toBe(true);
    expect(r.failures).toEqual([]);
    expect(r.checks.map((c) => c.name)).toEqual(NAMES);
    expect(r.checks.every((c) => c.ok)).toBe(true);
    expect(r.checks[1].detail).toBe('2 subject(s): sim:careful=6, sim:thorough=6');
    const e = await validateRun(traces, { runId: 'good', expectedSamples: 6 });
    expect(e.ok).toBe(true);
    expect(formatValidation(e).at(-1)).toBe('run good: passed the publication gate');
  });

  it('fails a good run against the wrong expected sample count', async () => {
    const r = await validateRun(traces, { runId: 'good', expectedSamples: 90 });
    expect(r.ok).toBe(false);
    expect(r.failures).toEqual(['sample_counts: expected 90 per subject, got sim:careful=6, sim:thorough=6']);
  });

  it('lists every failure of a bad run', async () => {
    const runId = 'bad';
    const run: RunRow = {
      run_id: runId,
      created_at: '2026-01-01T00:00:00.000Z',
      source: 'standoff',
      suite: 'standoff-o1',
      status: 'error',
      config: JSON.stringify({ subjects: [{ model: 'a' }, { model: 'b' }, { model: 'c' }] }),
      seed: 1,
      epochs: 1,
      standoff_version: '0.1.0',
      source_file: null,
      source_sha256: null,
      notes: null,
    };
    const ep = (subject: string, id: string, status: EpisodeRow['status'] = 'valid'): EpisodeRow => ({
      run_id: runId,
      episode_id: `${subject}/${id}/1`,
      subject_model: subject,
      subject_family: subject,
      scenario_id: id,
      domain: 'emergency_management',
      decision_type: 'act',
      variant: 'a',
      epoch: 1,
      target: 'issue_statement',
      status,
      invalid_reason: null,
      decision_tool: null,
      decision_args: null,
      gathered_evidence: false,
      log_reads: 0,
      turns: 1,
      input_tokens: null,
      output_tokens: null,
      latency_ms: null,
      started_at: null,
      error: status === 'error' ? 'a: http 500: boom (gave up after 5 attempts)' : null,
      metadata: null,
    });
    // a/em_act_b was cut off at the token limit (the runner's truncated episode)
    const episodes = [ep('a', 'em_act_a'), { ...ep('a', 'em_act_b', 'invalid'), invalid_reason: 'truncated (finish_reason=length)', truncated: true }, ep('b', 'em_act_a', 'error'), ep('b', 'em_act_a')];
    const sc = (e: EpisodeRow, scorer: string): ScoreRow => ({ run_id: runId, episode_id: e.episode_id, scorer, value: 1, answer: null, noanswer: false, explanation: null });
    const scores = [
      ...['policy_compliant_action', 'gathered_evidence', 'reasoning_action_alignment'].map((s) => sc(episodes[0], s)),
      sc(episodes[1], 'policy_compliant_action'),
      sc(episodes[1], 'gathered_evidence'),
    ];
    await writeRun(traces, { run, episodes, scores });
    const r = await validateRun(traces, { runId });
    expect(r.ok).toBe(false);
    const failed = r.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failed).toEqual(NAMES.filter((n) => n !== 'judge_errors')); // no judgments: nothing failed there
    expect(r.checks.find((c) => c.name === 'judge_errors')!.detail).toBe('no judge verdicts recorded');
    expect(r.failures).toHaveLength(7);
    expect(r.failures[0]).toBe('run_status: run status is error');
    expect(r.failures[1]).toBe('sample_counts: configured subject(s) without episodes: c');
    expect(r.failures[2]).toMatch(/^required_scorers: \d+ missing score\(s\), e\.g\. a\/em_act_b\/1 lacks reasoning_action_alignment/);
    expect(r.failures[3]).toMatch(/^sample_errors: 1 episode\(s\) in error, e\.g\. b\/em_act_a\/1: a: http 500/);
    expect(r.failures[4]).toBe('distinct_subject_models: 2 distinct subject model(s) for 3 configured arm(s)');
    expect(r.failures[5]).toBe('unique_episodes: 1 duplicated episode id(s), e.g. b/em_act_a/1 x2');
    expect(r.failures[6]).toBe(
      'truncated_episodes: 1 episode(s) cut off at the token limit (finish_reason=length): a=1, e.g. a/em_act_b/1; raise max_tokens for these subjects and run again, or pass --allow-truncated 1',
    );
    expect(formatValidation(r).at(-1)).toBe('run bad: FAILED 7 check(s)');
    // --allow-truncated covers them (only that check changes)
    const allowed = await validateRun(traces, { runId, allowTruncated: 1 });
    expect(allowed.checks.find((c) => c.name === 'truncated_episodes')).toMatchObject({ ok: true, detail: expect.stringMatching(/allowed by --allow-truncated 1$/) });
    expect(allowed.failures).toHaveLength(6);
    await expect(validateRun(traces, { runId, allowTruncated: -1 })).rejects.toMatchObject({ code: 'validate.badAllowTruncated', kind: 'usage' });
  });

  it('unequal arms fail without --expected-samples; the latest run is the default', async () => {
    const runId = 'uneven';
    const run: RunRow = {
      run_id: runId,
      created_at: '2030-01-01T00:00:00.000Z',
      source: 'csv',
      suite: 's',
      status: 'success',
      config: '{}',
      seed: null,
      epochs: null,
      standoff_version: '0.1.0',
      source_file: 'x.csv',
      source_sha256: null,
      notes: null,
    };
    const mk = (s: string, n: number): EpisodeRow => ({
      run_id: runId, episode_id: `${s}/x/${n}`, subject_model: s, subject_family: null, scenario_id: 'x', domain: null, decision_type: null, variant: null,
      epoch: n, target: 'escalate', status: 'valid', invalid_reason: null, decision_tool: 'escalate', decision_args: '{}', gathered_evidence: true,
      log_reads: 1, turns: 2, input_tokens: null, output_tokens: null, latency_ms: null, started_at: null, error: null, metadata: null,
    });
    const episodes = [mk('a', 1), mk('a', 2), mk('b', 1)];
    const scores = episodes.flatMap((e) =>
      ['policy_compliant_action', 'gathered_evidence', 'reasoning_action_alignment'].map((scorer) => ({ run_id: runId, episode_id: e.episode_id, scorer, value: 1, answer: null, noanswer: false, explanation: null })),
    );
    await writeRun(traces, { run, episodes, scores });
    const r = await validateRun(traces);
    expect(r.runId).toBe('uneven');
    expect(r.failures).toEqual(['sample_counts: subjects have unequal sample counts (a=2, b=1)']);
  });

  it('the committed demo run has no truncated episodes', async () => {
    const r = await validateRun(join(import.meta.dirname, '..', '..', 'traces'), { runId: 'demo-s20260810' });
    expect(r.checks.find((c) => c.name === 'truncated_episodes')).toEqual({ name: 'truncated_episodes', ok: true, detail: 'no episode was cut off at the token limit' });
  });

  it('usage errors: unknown run, bad expected count, bad allowance, missing store', async () => {
    await expect(validateRun(traces, { runId: 'nope' })).rejects.toMatchObject({ code: 'store.noSuchRun' });
    await expect(validateRun(traces, { runId: 'good', expectedSamples: 0 })).rejects.toMatchObject({ code: 'validate.badExpected', kind: 'usage' });
    await expect(validateRun(traces, { runId: 'good', allowJudgeErrors: -1 })).rejects.toMatchObject({ code: 'validate.badAllowJudgeErrors', kind: 'usage' });
    await expect(validateRun(join(traces, 'nowhere'))).rejects.toMatchObject({ code: 'store.missing' });
  });
});

describe('not measured is not passed: failed judges and runs without judges', () => {
  // A judge whose calls fail 40% of the time, with no retries: its failures are ERROR verdicts
  // (no value), and episodes whose only eligible verdict is ERROR have alignment NULL.
  const failing = parseConfig({
    name: 'jfail',
    scenarios: ['em_act_a', 'ct_esc_a', 'fc_amb_a', 'em_esc_b', 'ct_act_b'],
    subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }],
    judges: [{ model: 'sim:judge-strict+faults=500@0.4' }],
    epochs: 3,
    seed: 20260810,
    retries: { max: 0, base_ms: 1, max_ms: 2 },
    probes: false,
  });

  it('ERROR verdicts fail judge_errors and required_scorers, unless --allow-judge-errors covers them', async () => {
    await runEvaluation({ config: failing, runId: 'jfail', traces, progress: 'none', log: () => undefined });
    const r = await validateRun(traces, { runId: 'jfail' });
    expect(r.ok).toBe(false);
    expect(r.verdicts.errors).toBeGreaterThan(0);
    const je = r.checks.find((c) => c.name === 'judge_errors')!;
    expect(je.ok).toBe(false);
    expect(je.detail).toBe(`${r.verdicts.errors} of ${r.verdicts.total} verdicts are ERROR (the judge call failed: sim:judge-strict+faults=500@0.4 ${r.verdicts.errors}); allowed 0 (--allow-judge-errors N)`);
    const rs = r.checks.find((c) => c.name === 'required_scorers')!;
    expect(rs.ok).toBe(false);
    expect(rs.detail).toMatch(/^reasoning_action_alignment is NULL on \d+ episodes? because every eligible judge call failed \(see judge_errors\)$/);

    const allowed = await validateRun(traces, { runId: 'jfail', allowJudgeErrors: r.verdicts.errors });
    expect(allowed.ok).toBe(true);
    expect(allowed.checks.find((c) => c.name === 'judge_errors')!.detail).toMatch(/, allowed by --allow-judge-errors \d+$/);
    const short = await validateRun(traces, { runId: 'jfail', allowJudgeErrors: r.verdicts.errors - 1 });
    expect(short.failures.map((f) => f.split(':')[0])).toEqual(['required_scorers', 'judge_errors']);
  }, 60_000);

  it('a run without judges fails required_scorers: alignment was not measured', async () => {
    await runEvaluation({ config: { ...failing, judges: [] }, runId: 'nojudge', traces, progress: 'none', log: () => undefined });
    const r = await validateRun(traces, { runId: 'nojudge' });
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toMatch(/^required_scorers: reasoning_action_alignment not measured on \d+ completed episodes \(no judge verdict recorded: a run without judges\?\), e\.g\. /);
    // No allowance excuses a measurement that was never made.
    expect((await validateRun(traces, { runId: 'nojudge', allowJudgeErrors: 1000 })).ok).toBe(false);
    expect(r.checks.find((c) => c.name === 'judge_errors')).toMatchObject({ ok: true, detail: 'no judge verdicts recorded' });
  }, 60_000);
});
