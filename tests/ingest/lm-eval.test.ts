/**
 * `standoff ingest lm-eval` on real lm-evaluation-harness output (tests/fixtures/lm-eval, see its
 * README for the repository, path and commit of every file):
 * - negotiationtom (lm_eval 0.4.13.dev0): a group of two multiple-choice tasks (`acc`) and one
 *   generative task (`exact_match`, and `micro_f1` / `macro_f1` whose per-sample values are lists);
 * - gsm8k (lm_eval 0.4.9.1): generation under two filters (`exact_match,strict-match` and
 *   `exact_match,flexible-extract`), two models, results named `<stem>_<date>.json`;
 * - asdiv (August 2024, the samples format without `filter` / `metrics`), trimmed to 12 of 50
 *   documents, so the results file and the samples disagree.
 *
 * Oracles: the harness's own aggregates in the results files (its `mean` and `mean_stderr` of the
 * same per-sample values), and DuckDB's `read_ndjson_objects` reading the samples files directly
 * (an independent JSON-lines reader) for every stored per-sample value.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestLmEval, type IngestLmEvalSummary } from '../../src/ingest/ingest-lm-eval.ts';
import { openStore, type Store } from '../../src/store/open-store.ts';
import { query, quoteLiteral } from '../../src/store/duckdb.ts';
import type { ReportedMetric } from '../../src/ingest/reported-metrics.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const FIX = join(ROOT, 'tests', 'fixtures', 'lm-eval');
const NEG = join(FIX, 'negotiationtom', 'Qwen__Qwen3-8B');
const NEG_TS = '2026-07-08T18-15-33.115417';
const GSM = join(FIX, 'gsm8k');
const PHI_TS = '2025-08-07T11-42-40.066002';
const ASDIV = join(FIX, 'asdiv-0.4.3', 'meta-llama__Meta-Llama-3-8B-Instruct');

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

let store: string;
let summary: IngestLmEvalSummary;
let s: Store;

beforeAll(async () => {
  store = join(mkdtempSync(join(tmpdir(), 'standoff-lmeval-')), 'traces');
  summary = await ingestLmEval(FIX, { traces: store });
  s = await openStore(store);
  return () => s.close();
});

async function rows(sql: string, params?: (string | number)[]) {
  return (await query(s.conn, sql, params)).rows;
}

/** Per-sample values read straight from a samples file by DuckDB (not by the ingest). */
async function samplesFromFile(file: string, metric: string) {
  return rows(
    `SELECT CAST(json_extract(json, '$.doc_id') AS VARCHAR) AS doc, coalesce(json_extract_string(json, '$.filter'), 'none') AS filter,
            CAST(json_extract(json, ${quoteLiteral(`$.${metric}`)}) AS DOUBLE) AS value
     FROM read_ndjson_objects(${quoteLiteral(file)}) ORDER BY 1, 2`,
  );
}

describe('ingest lm-eval: real harness output', () => {
  it('makes one run per (results file, task): source lm-eval, suite = task, epoch 1', async () => {
    const runs = await rows('SELECT run_id, source, suite, status, epochs, source_file FROM runs ORDER BY run_id');
    expect(runs.map((r) => r.suite)).toEqual(['asdiv', 'gsm8k', 'gsm8k', 'negotiationtom_belief', 'negotiationtom_desire', 'negotiationtom_intention']);
    for (const r of runs) expect(r).toMatchObject({ source: 'lm-eval', status: 'success', epochs: 1 });
    expect(summary.runs.map((r) => r.runId).sort()).toEqual(runs.map((r) => r.run_id));
    const neg = runs.find((r) => r.suite === 'negotiationtom_belief')!;
    expect(neg.source_file).toBe(`results_${NEG_TS}.json;samples_negotiationtom_belief_${NEG_TS}.jsonl`);
    // the model comes from the results file's model_name
    const models = await rows('SELECT DISTINCT e.subject_model, r.suite FROM episodes e JOIN runs r USING (run_id) ORDER BY 2, 1');
    expect(models).toContainEqual({ subject_model: 'gpt2', suite: 'gsm8k' });
    expect(models).toContainEqual({ subject_model: 'microsoft/Phi-3-mini-4k-instruct', suite: 'gsm8k' });
    expect(models).toContainEqual({ subject_model: 'Qwen/Qwen3-8B', suite: 'negotiationtom_desire' });
  });

  it('one episode per document; the columns lm-eval does not measure are NULL, never false or 0', async () => {
    const [n] = await rows(`SELECT count(*) AS n, count(target) AS target, count(gathered_evidence) AS ge, count(log_reads) AS lr, count(turns) AS turns,
                                   count(input_tokens) AS tok, count(decision_tool) AS dt, count(*) FILTER (WHERE epoch <> 1) AS epoch_not_1,
                                   count(*) FILTER (WHERE status <> 'valid') AS not_valid FROM episodes`);
    expect(n).toEqual({ n: 12 + 10 + 1 + 60, target: 0, ge: 0, lr: 0, turns: 0, tok: 0, dt: 0, epoch_not_1: 0, not_valid: 0 });
    const docs = await rows(`SELECT scenario_id, episode_id FROM episodes e JOIN runs r USING (run_id) WHERE r.suite = 'negotiationtom_belief' ORDER BY CAST(scenario_id AS INT)`);
    expect(docs.map((d) => d.scenario_id)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    expect(docs[3]!.episode_id).toBe('3/1');
  });

  it('stores every per-sample metric value as lm-eval logged it, per filter (checked against DuckDB reading the samples)', async () => {
    const cases: Array<{ suite: string; file: string; metric: string; scorer: (f: string) => string; model?: string }> = [
      { suite: 'negotiationtom_belief', file: join(NEG, `samples_negotiationtom_belief_${NEG_TS}.jsonl`), metric: 'acc', scorer: () => 'acc' },
      { suite: 'negotiationtom_intention', file: join(NEG, `samples_negotiationtom_intention_${NEG_TS}.jsonl`), metric: 'exact_match', scorer: () => 'exact_match' },
      {
        suite: 'gsm8k',
        model: 'microsoft/Phi-3-mini-4k-instruct',
        file: join(GSM, `samples_gsm8k_${PHI_TS}.jsonl`),
        metric: 'exact_match',
        scorer: (f) => `exact_match/${f}`,
      },
      { suite: 'asdiv', file: join(ASDIV, 'samples_asdiv_2024-08-21T03-44-09.494230.jsonl'), metric: 'acc', scorer: () => 'acc' },
    ];
    for (const c of cases) {
      const expected = await samplesFromFile(c.file, c.metric);
      expect(expected.length).toBeGreaterThan(0);
      const stored = await rows(
        `SELECT e.scenario_id AS doc, sc.scorer, sc.value FROM scores sc JOIN episodes e USING (run_id, episode_id) JOIN runs r USING (run_id)
         WHERE r.suite = ? AND (? = '' OR e.subject_model = ?) ORDER BY 1, 2`,
        [c.suite, c.model ?? '', c.model ?? ''],
      );
      const want = expected.map((x) => ({ doc: x.doc, scorer: c.scorer(String(x.filter)), value: x.value })).sort((a, b) => (a.doc + a.scorer < b.doc + b.scorer ? -1 : 1));
      expect(stored.sort((a, b) => (String(a.doc) + a.scorer < String(b.doc) + b.scorer ? -1 : 1)), c.suite).toEqual(want);
    }
    // gsm8k: every document twice (strict-match and flexible-extract), answer = the filtered response
    const gsm = await rows(
      `SELECT sc.scorer, sc.answer FROM scores sc JOIN episodes e USING (run_id, episode_id) WHERE e.subject_model = 'microsoft/Phi-3-mini-4k-instruct' AND e.scenario_id = '0' ORDER BY 1`,
    );
    expect(gsm).toEqual([
      { scorer: 'exact_match/flexible-extract', answer: '18' },
      { scorer: 'exact_match/strict-match', answer: '[invalid]' },
    ]);
  });

  it('corpus-level metrics (per-sample values that are lists) give no score rows', async () => {
    const scorers = await rows(`SELECT DISTINCT scorer FROM scores JOIN runs USING (run_id) WHERE suite = 'negotiationtom_intention'`);
    expect(scorers).toEqual([{ scorer: 'exact_match' }]);
  });

  it('the recomputed means equal the harness\'s own aggregates in the results files', async () => {
    const neg = json(join(NEG, `results_${NEG_TS}.json`)).results;
    const phi = json(join(GSM, `gsm8k-phi-3-mini_${PHI_TS}.json`)).results.gsm8k;
    const means = await rows(
      `SELECT r.suite, e.subject_model AS model, sc.scorer, avg(sc.value) AS mean, count(*) AS n FROM scores sc JOIN episodes e USING (run_id, episode_id) JOIN runs r USING (run_id)
       GROUP BY ALL ORDER BY ALL`,
    );
    const get = (suite: string, scorer: string, model?: string) => means.find((m) => m.suite === suite && m.scorer === scorer && (!model || m.model === model))!.mean as number;
    expect(get('negotiationtom_belief', 'acc')).toBeCloseTo(neg.negotiationtom_belief['acc,none'], 12);
    expect(get('negotiationtom_desire', 'acc')).toBeCloseTo(neg.negotiationtom_desire['acc,none'], 12);
    expect(get('negotiationtom_intention', 'exact_match')).toBeCloseTo(neg.negotiationtom_intention['exact_match,none'], 12);
    expect(get('gsm8k', 'exact_match/strict-match', 'microsoft/Phi-3-mini-4k-instruct')).toBeCloseTo(phi['exact_match,strict-match'], 12);
    expect(get('gsm8k', 'exact_match/flexible-extract', 'microsoft/Phi-3-mini-4k-instruct')).toBeCloseTo(phi['exact_match,flexible-extract'], 12);
  });

  it('reconciles every reported aggregate: ok where the samples agree, FLAG where they do not, not recomputed for corpus-level metrics', () => {
    const row = (task: string, kind: string, metric: string, filter: string, file?: string) =>
      summary.reconciliation.find((r) => r.task === task && r.kind === kind && r.metric === metric && r.filter === filter && (!file || r.results_file.includes(file)))!;
    const neg = json(join(NEG, `results_${NEG_TS}.json`)).results;
    // task values and the harness's mean_stderr (sample sd with n - 1, over sqrt(n))
    const belief = row('negotiationtom_belief', 'task', 'acc', 'none');
    expect(belief).toMatchObject({ status: 'ok', n: 20, reported: neg.negotiationtom_belief['acc,none'] });
    expect(belief.recomputed_stderr!).toBeCloseTo(neg.negotiationtom_belief['acc_stderr,none'], 12);
    const strict = row('gsm8k', 'task', 'exact_match', 'strict-match', PHI_TS);
    expect(strict.status).toBe('ok');
    expect(strict.recomputed_stderr!).toBeCloseTo(json(join(GSM, `gsm8k-phi-3-mini_${PHI_TS}.json`)).results.gsm8k['exact_match_stderr,strict-match'], 12);
    // the group: 0.525 = (0.45 x 20 + 0.6 x 20) / 40, the size-weighted mean of its two acc subtasks
    const group = row('negotiationtom', 'group', 'acc', 'none');
    expect(group).toMatchObject({ status: 'ok', n: 40, reported: neg.negotiationtom['acc,none'] });
    expect(group.note).toMatch(/^size-weighted mean of 2 subtasks/);
    expect(row('negotiationtom', 'group', 'exact_match', 'none').status).toBe('ok');
    // corpus-level metrics are listed, not recomputed
    expect(row('negotiationtom_intention', 'task', 'micro_f1', 'none')).toMatchObject({ status: 'not recomputed', recomputed: null, reported: neg.negotiationtom_intention['micro_f1,none'] });
    expect(row('negotiationtom', 'group', 'macro_f1', 'none').status).toBe('not recomputed');
    // the trimmed asdiv samples: 12 documents where the results report 50, and acc 1.0 vs 0.92
    expect(row('asdiv', 'docs', '(documents)', '')).toMatchObject({ status: 'FLAG', reported: 50, recomputed: 12 });
    expect(row('asdiv', 'task', 'acc', 'none')).toMatchObject({ status: 'FLAG', reported: 0.92, recomputed: 1 });
    expect(summary.flagged).toBe(2);
    expect(summary.reconciliation.filter((r) => r.status === 'FLAG').every((r) => r.task === 'asdiv')).toBe(true);
  });

  it('stores the reported aggregates in runs.config.reported_metrics, the groups\' with their subtasks', async () => {
    const [run] = await rows(`SELECT config FROM runs WHERE suite = 'negotiationtom_intention'`);
    const cfg = JSON.parse(String(run!.config));
    const reported = cfg.reported_metrics as ReportedMetric[];
    const results = json(join(NEG, `results_${NEG_TS}.json`)).results;
    expect(reported.filter((m) => !m.group)).toEqual([
      { task: 'negotiationtom_intention', metric: 'micro_f1', filter: 'none', value: results.negotiationtom_intention['micro_f1,none'], stderr: null, scorer: null },
      { task: 'negotiationtom_intention', metric: 'macro_f1', filter: 'none', value: results.negotiationtom_intention['macro_f1,none'], stderr: null, scorer: null },
      {
        task: 'negotiationtom_intention',
        metric: 'exact_match',
        filter: 'none',
        value: results.negotiationtom_intention['exact_match,none'],
        stderr: results.negotiationtom_intention['exact_match_stderr,none'],
        scorer: 'exact_match',
      },
    ]);
    const subtasks = ['negotiationtom_belief', 'negotiationtom_desire', 'negotiationtom_intention'];
    expect(reported.find((m) => m.group && m.metric === 'acc')).toEqual({
      task: 'negotiationtom',
      metric: 'acc',
      filter: 'none',
      value: results.negotiationtom['acc,none'],
      stderr: results.negotiationtom['acc_stderr,none'],
      scorer: null,
      group: true,
      subtasks,
    });
    expect(cfg).toMatchObject({ task: 'negotiationtom_intention', output_type: 'generate_until', groups: ['negotiationtom'], lm_eval_version: '0.4.13.dev0' });
    const [gsm] = await rows(`SELECT config FROM runs r WHERE suite = 'gsm8k' AND source_file LIKE ?`, [`%${PHI_TS}%`]);
    const g = JSON.parse(String(gsm!.config));
    expect(g.reported_metrics.map((m: ReportedMetric) => [m.metric, m.filter, m.value, m.scorer])).toEqual([
      ['exact_match', 'strict-match', 0.1, 'exact_match/strict-match'],
      ['exact_match', 'flexible-extract', 0.8, 'exact_match/flexible-extract'],
    ]);
    expect(g.filters).toEqual(['strict-match', 'flexible-extract']);
  });

  it('keeps the doc\'s scalar fields, the target and the hashes as episode metadata', async () => {
    const [ep] = await rows(`SELECT metadata FROM episodes e JOIN runs r USING (run_id) WHERE r.suite = 'gsm8k' AND e.subject_model = 'gpt2'`);
    const meta = JSON.parse(String(ep!.metadata));
    const line = JSON.parse(readFileSync(join(GSM, 'samples_gsm8k_2025-08-11T10-35-08.100989.jsonl'), 'utf8').split('\n')[0]!);
    expect(meta.target).toBe(line.target);
    expect(meta.doc_hash).toBe(line.doc_hash);
    expect(meta.prompt_hash).toBe(line.prompt_hash);
    expect('question' in meta).toBe(line.doc.question.length <= 200);
  });

  it('stores a generated answer as messages: the prompt, then the raw response', async () => {
    const msgs = await rows(
      `SELECT m.seq, m.role, m.content FROM messages m JOIN episodes e USING (run_id, episode_id) WHERE e.subject_model = 'gpt2' ORDER BY m.seq`,
    );
    const line = JSON.parse(readFileSync(join(GSM, 'samples_gsm8k_2025-08-11T10-35-08.100989.jsonl'), 'utf8').split('\n')[0]!);
    expect(msgs).toEqual([
      { seq: 0, role: 'user', content: line.arguments.gen_args_0.arg_0 },
      { seq: 1, role: 'assistant', content: line.resps[0][0] },
    ]);
    // multiple-choice and loglikelihood tasks have no transcript
    const [mc] = await rows(`SELECT count(*) AS n FROM messages JOIN runs USING (run_id) WHERE suite IN ('negotiationtom_belief', 'asdiv')`);
    expect(mc!.n).toBe(0);
  });

  it('the CLI prints the runs and the reconciliation; --format csv gives the table alone on stdout', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'standoff-lmeval-cli-')), 'traces');
    const r = runCli(['ingest', 'lm-eval', NEG, '--traces', out, '--run-id', 'qwen3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^wrote run qwen3\.negotiationtom_belief \(negotiationtom_belief, Qwen\/Qwen3-8B, 20 documents, scorers acc\): runs 1, episodes 20, scores 20$/m);
    expect(r.stdout).toMatch(/reconciliation: reported vs recomputed from the samples; FLAG when \|diff\| > 1e-9 \+ 1e-9 x \|reported\|/);
    expect(r.stdout).toMatch(/^negotiationtom\s+group\s+acc\s+none\s+40\s+0\.525\s+0\.525\s+0\s+0\.0800904\s+NULL\s+ok\s+size-weighted mean of 2 subtasks/m);
    expect(r.stderr).toBe('');
    const csv = runCli(['ingest', 'lm-eval', GSM, '--traces', out, '--dry-run', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('results_file,task,kind,metric,filter,n,reported,recomputed,diff,reported_stderr,recomputed_stderr,status,note');
    expect(lines).toHaveLength(7);
    expect(csv.stderr).toMatch(/^would write run lm-eval-gsm8k-/m);
    // a flagged difference is a warning, not a failure
    const flagged = runCli(['ingest', 'lm-eval', join(FIX, 'asdiv-0.4.3'), '--traces', out, '--dry-run']);
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toBe('standoff: warning: 2 reported aggregates differ from the samples beyond the tolerance (status FLAG); the reported values are stored as reported\n');
  });

  it('--help shows the command with examples', () => {
    const r = runCli(['ingest', 'lm-eval', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: standoff ingest lm-eval [options] <dir>');
    expect(r.stdout).toContain('--format <format>');
    expect(r.stdout).toContain('$ standoff ingest lm-eval out/');
  });
});
