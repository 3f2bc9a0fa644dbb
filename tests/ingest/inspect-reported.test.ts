/**
 * Inspect ingest: the log header's own aggregates (`results.scores[].metrics`) are stored in
 * `runs.config.reported_metrics`, in the format the lm-eval ingest uses
 * (`src/ingest/reported-metrics.ts`), so a report can set them beside the recomputed values.
 * Real logs: the shared Inspect fixtures (tests/fixtures/inspect, copied from
 * /work/shared/fixtures/inspect; Inspect AI's own test logs). The expected values are read from
 * each archive's header.json with fflate (not the reader under test).
 */
import { describe, it, expect } from 'vitest';
import { basename } from 'node:path';
import { loadInspectLog } from '../../src/ingest/inspect/index.ts';
import type { ReportedMetric } from '../../src/ingest/reported-metrics.ts';
import { REAL_LOGS, memberText, readMembers } from '../fixtures/inspect/make-logs.ts';

describe('Inspect: reported metrics in runs.config', () => {
  for (const path of REAL_LOGS) {
    it(`${basename(path)}: one entry per header metric, stderr folded in`, async () => {
      const r = await loadInspectLog(path);
      expect(r.problems).toEqual([]);
      const log = r.log!;
      const config = JSON.parse(log.bundle.run.config);
      const reported = config.reported_metrics as ReportedMetric[];
      const members = readMembers(path);
      const names = members.map(([n]) => n);
      const header = names.includes('header.json') ? JSON.parse(memberText(members, 'header.json')) : null;
      const scores: Array<{ name: string; scorer: string; reducer?: string; metrics: Record<string, { name: string; value: number }> }> = header?.results?.scores ?? [];
      const expected = scores.flatMap((s) =>
        Object.entries(s.metrics)
          .filter(([k]) => k !== 'stderr')
          .map(([, m]) => ({
            task: header.eval.task,
            metric: m.name,
            filter: null,
            value: m.value,
            stderr: s.metrics.stderr?.value ?? null,
            scorer: s.name,
            inspect_scorer: s.scorer,
            ...(s.reducer ? { reducer: s.reducer } : {}),
          })),
      );
      expect(reported).toEqual(expected);
      // each reported accuracy is reproduced by the per-sample scores of its scorer
      for (const m of reported) {
        if (m.metric === 'accuracy') expect(log.scorerMeans[m.scorer!]!.mean).toBeCloseTo(m.value!, 12);
      }
    });
  }

  it('log_streaming.eval: accuracy 0.75 with stderr 0.25 for the match scorer', async () => {
    const r = await loadInspectLog(REAL_LOGS.find((p) => p.endsWith('log_streaming.eval'))!);
    expect(JSON.parse(r.log!.bundle.run.config).reported_metrics).toEqual([
      { task: expect.any(String), metric: 'accuracy', filter: null, value: 0.75, stderr: 0.25, scorer: 'match', inspect_scorer: 'match' },
    ]);
  });

  it('a log whose header has no scores reports none', async () => {
    const r = await loadInspectLog(REAL_LOGS.find((p) => p.endsWith('popularity-journal-only.eval'))!);
    expect(JSON.parse(r.log!.bundle.run.config).reported_metrics).toEqual([]);
  });
});
