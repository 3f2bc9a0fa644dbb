/**
 * Issue 25, points 4-6: messages that name the fix (subcommand and option typos at every level;
 * agreement and judges name the judged scorers a store has), clustering on `--input` as over the
 * store, and `ci --list-metrics` listing the store's own metrics first, built-ins without data on
 * one line, and `invalid` not measured without a status column.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';
import { agreementFromStore, ciExactMetric, listStoreMetrics } from '../../src/analysis/ci.ts';
import { withJudgeMedians } from '../../src/analysis/judge-medians.ts';

const judgesFromStore = (src: { traces: string }) => withJudgeMedians(src, { scorer: 'reasoning_action_alignment' }, async (m) => m.totals);
import { ciBootstrapInput } from '../../src/analysis/ci-input.ts';
import { runCli } from '../helpers/cli.ts';

const EX = resolve(import.meta.dirname, '../fixtures/csv/exports');

let dir: string;
let plain: string;
let judged: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-messages-'));
  plain = join(dir, 'plain');
  await ingestCsv([join(EX, 'pandas-index.csv')], { traces: plain, runId: 'pandas' });
  judged = join(dir, 'judged');
  const j = join(dir, 'j.csv');
  writeFileSync(j, 'model,sample_id,quality,judge_a,judge_b\nm,q1,1,1,0\nm,q2,0,0,0\nm,q3,1,1,1\n');
  await ingestCsv([j], { traces: judged, runId: 'j', flags: { judgeColumns: ['judge_a', 'judge_b'], judgedScorer: 'quality' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('typos get a "did you mean" at every level', () => {
  it.each([
    [['ci', 'exct'], "unknown command 'exct' for 'ci' (did you mean exact?)"],
    [['ci', 'exct', '--successes', '3', '--trials', '10'], "unknown command 'exct' for 'ci' (did you mean exact?)"],
    [['ingest', 'lmeval', 'out/'], "unknown command 'lmeval' (did you mean lm-eval?)"],
    [['ci', 'exact', '--sucesses', '3', '--trials', '10'], "unknown option '--sucesses' (did you mean --successes?)"],
    [['ingset'], "unknown command 'ingset' (did you mean ingest?)"],
  ])('standoff %j', (args, message) => {
    const r = runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('ci alone still prints its help, and ci --list-metrics still lists', () => {
    const r = runCli(['ci']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: standoff ci [options] [command]');
  });
});

describe('no judgments for the default scorer', () => {
  it('agreement and judges name the judged scorers the store has', async () => {
    const opts = { level: 'nominal' as const, seed: 1, resamples: 50 };
    await expect(agreementFromStore({ traces: judged }, opts)).rejects.toThrow(/no judgments with a value for scorer "reasoning_action_alignment" in this store; judged scorers in this store: "quality" \(6\); pass --scorer "quality"/);
    await expect(judgesFromStore({ traces: judged })).rejects.toThrow(/judged scorers in this store: "quality" \(6\); pass --scorer "quality"/);
    expect((await agreementFromStore({ traces: judged }, { ...opts, scorer: 'quality' })).scorer).toBe('quality');
    await expect(judgesFromStore({ traces: plain })).rejects.toThrow(/the store has no judgments with a value \(ingest them with ingest csv --judge-columns/);
  });
});

describe('ci --list-metrics', () => {
  it("lists the store's own metrics first, built-ins with data next, and marks the rest unavailable", async () => {
    const rows = await listStoreMetrics({ traces: plain });
    expect(rows[0]).toMatchObject({ metric: 'correct', source: 'scorer', kind: 'binary', observations: 120, available: true });
    expect(rows.filter((r) => r.available).map((r) => r.metric)).toEqual(['correct']);
    expect(rows.find((r) => r.metric === 'invalid')).toMatchObject({ available: false, observations: 0, not_measured: 120, kind: null });
  });

  it('prints one unavailable line and short descriptions in a table; json keeps everything', () => {
    const r = runCli(['ci', '--list-metrics', '--traces', plain]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[2]).toMatch(/^correct\s+scorer\s+binary\s+120\s+0\s+Scorer correct/);
    expect(lines.at(-1)).toBe('unavailable (built-in, no data in this store): gathered_evidence, policy_action, alignment, invalid, probe_decision, probe_composed, probe_accuracy');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(220);
    const j = JSON.parse(runCli(['ci', '--list-metrics', '--traces', plain, '--format', 'json']).stdout) as { metric: string; available: boolean; description: string }[];
    expect(j).toHaveLength(8);
    expect(j.find((x) => x.metric === 'invalid')!.description).toContain('not measured');
  });

  it('invalid is not measured without a status column, and measured with one', async () => {
    const [r] = await ciExactMetric({ traces: plain }, { metric: 'invalid' });
    expect(r).toMatchObject({ trials: 0, not_measured: 120 });
    const withStatus = join(dir, 'status');
    const f = join(dir, 'status.csv');
    writeFileSync(f, 'model,sample_id,correct,status\nm,q1,1,valid\nm,q2,0,invalid\nm,q3,1,valid\n');
    await ingestCsv([f], { traces: withStatus, runId: 's' });
    const [s] = await ciExactMetric({ traces: withStatus }, { metric: 'invalid' });
    expect(s).toMatchObject({ successes: 1, trials: 3, not_measured: 0 });
  });
});

describe('clustering on --input', () => {
  const file = () => {
    const f = join(dir, 'natural.csv');
    const lines = ['model,sample_id,epoch,quality'];
    for (const m of ['a', 'b']) for (let s = 0; s < 20; s++) for (let e = 0; e < 3; e++) lines.push(`${m},s${s},${e},${((s * 7 + e * 3 + m.length) % 10) / 10}`);
    writeFileSync(f, `${lines.join('\n')}\n`);
    return f;
  };
  const base = { value: 'quality', by: ['model'], resamples: 300, seed: 3, method: 'percentile' as const, level: 0.95 };
  type Row = { group: { model: string }; sampling: string; clusters?: number; note?: string; lower: number };

  it('warns when --by groups repeat items and nothing clusters them', async () => {
    const r = (await ciBootstrapInput({ ...base, input: file() })) as unknown as Row[];
    for (const x of r) {
      expect(x.sampling).toBe('independent');
      expect(x.note).toContain('rows repeat items (column "sample_id": up to 3 rows per item) and this interval treats them as independent, so it is too narrow; pass --cluster sample_id');
    }
  });

  it('--item clusters exactly as --cluster does', async () => {
    const byItem = (await ciBootstrapInput({ ...base, input: file(), item: 'sample_id' })) as unknown as Row[];
    const byCluster = (await ciBootstrapInput({ ...base, input: file(), cluster: 'sample_id' })) as unknown as Row[];
    expect(byItem).toEqual(byCluster);
    expect(byItem.map((x) => [x.sampling, x.clusters, x.note])).toEqual([
      ['clustered', 20, undefined],
      ['clustered', 20, undefined],
    ]);
  });
});
