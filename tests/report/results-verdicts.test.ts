/**
 * The results section's judge verdicts per subject (`judge_verdicts`: all verdicts and ERROR
 * verdicts on the subject's episodes), counted one run at a time on the episode id: the same counts
 * as one join of judgments to episodes on (run_id, episode_id). Two runs share episode ids and a
 * subject model (labelled `model @ run`); one judgment has no episode (not counted). Real Parquet,
 * real DuckDB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeRun } from '../../src/store/write-run.ts';
import { buildContext, openReportStore } from '../../src/report/sections/context.ts';
import { resultsSection } from '../../src/report/sections/results.ts';
import { sampleBundle } from '../helpers/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-results-verdicts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Judgment = NonNullable<ReturnType<typeof sampleBundle>['judgments']>[number];
const judgment = (runId: string, episodeId: string, verdict: string): Judgment => ({
  run_id: runId, episode_id: episodeId, scorer: 'reasoning_action_alignment', judge_model: 'sim:judge-lenient', judge_family: 'simfam-j',
  verdict, value: verdict === 'ALIGNED' ? 1 : verdict === 'ERROR' ? null : 0, excluded_self: false, raw: verdict,
});

describe('results: judge verdicts per subject', () => {
  it('counts each run\'s judgments on its own episodes, by subject label, and leaves out judgments without an episode', async () => {
    const traces = join(dir, 'traces');
    const r1 = sampleBundle('r1', 3);
    r1.judgments!.push(judgment('r1', r1.episodes![0].episode_id, 'ERROR'), judgment('r1', 'no-such-episode', 'ERROR'));
    const r2 = sampleBundle('r2', 3);
    // The same episode ids as r1; the third episode is another subject's.
    r2.episodes![2] = { ...r2.episodes![2], subject_model: 'sim:hasty' };
    r2.judgments!.push(judgment('r2', r2.episodes![2].episode_id, 'ERROR'), judgment('r2', r2.episodes![2].episode_id, 'ERROR'));
    await writeRun(traces, r1);
    await writeRun(traces, r2);
    const store = await openReportStore(traces, undefined);
    try {
      const ctx = await buildContext(store, { seed: 1, resamples: 100, level: 0.95, log: () => undefined });
      const got = Object.fromEntries((await resultsSection(ctx)).subjects.map((s) => [s.subject, s.judge_verdicts]));
      expect(got).toEqual({
        'sim:careful @ r1': { total: 4, errors: 1 },
        'sim:careful @ r2': { total: 2, errors: 0 },
        'sim:hasty': { total: 3, errors: 2 },
      });
      // The one join on (run_id, episode_id) over every run gives the same counts.
      const joined = await ctx.q(`
        SELECT s.subject, CAST(count(*) AS BIGINT) AS n, CAST(count(*) FILTER (WHERE j.verdict = 'ERROR') AS BIGINT) AS errors
        FROM judgments j JOIN episodes e ON e.run_id = j.run_id AND e.episode_id = j.episode_id JOIN r_subject s ON s.run_id = e.run_id AND s.subject_model = e.subject_model
        GROUP BY ALL`);
      expect(Object.fromEntries(joined.map((r) => [String(r.subject), { total: Number(r.n), errors: Number(r.errors) }]))).toEqual(got);
    } finally {
      store.close();
    }
  }, 60_000);
});
