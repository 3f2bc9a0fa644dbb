/**
 * `standoff probes --concentration` on the committed demo store: the per-(subject, state) reduction
 * done in SQL by the loader equals an independent query written here (a state is failed when any
 * of its answers has every probe right and the action wrong; ambiguous states left out), fed to the
 * same statistic with the same seed; and the CLI prints it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probesFromStore } from '../../src/analysis/ci.ts';
import { errorConcentration } from '../../src/stats/index.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const traces = join(ROOT, 'traces');
const SQL = `
  WITH ans AS (SELECT run_id, subject_model, state_id, bool_and(coalesce(correct, false)) AS all_right FROM probe_answers GROUP BY ALL),
       amb AS (SELECT DISTINCT scenario_id FROM episodes WHERE target = 'NOANSWER')
  SELECT d.subject_model AS s, d.scenario_id AS st, bool_or(a.all_right) AS fr, bool_or(a.all_right AND NOT coalesce(d.correct, false)) AS err
  FROM probe_decisions d JOIN ans a USING (run_id, subject_model, state_id)
  WHERE d.scenario_id NOT IN (SELECT scenario_id FROM amb) AND coalesce(d.condition, 'raw') = 'raw'
  GROUP BY ALL ORDER BY s, st`;

describe('error concentration over a store', () => {
  it('equals the statistic on an independent reduction of the answers', async () => {
    const out = runCli(['sql', '--traces', traces, '--format', 'json', SQL]);
    expect(out.code).toBe(0);
    const rows = JSON.parse(out.stdout) as { s: string; st: string; fr: boolean; err: boolean }[];
    const by = new Map<string, { factsRight: string[]; errors: string[] }>();
    for (const r of rows) {
      if (!r.fr) continue;
      if (!by.has(r.s)) by.set(r.s, { factsRight: [], errors: [] });
      by.get(r.s)!.factsRight.push(r.st);
      if (r.err) by.get(r.s)!.errors.push(r.st);
    }
    const expected = errorConcentration([...by.entries()].sort().map(([subject, x]) => ({ subject, ...x })), { seed: 5, permutations: 3000, level: 0.95, minSubjects: 2 });
    const r = await probesFromStore({ traces }, { resamples: 3000, seed: 5, concentration: true, minSubjects: 2 });
    const c = r.concentration!;
    expect([c.errors, c.onShared, c.statesAllFail, c.minSubjects, c.subjects]).toEqual([expected.errors, expected.onShared, expected.statesAllFail, 2, 3]);
    expect(c.null).toEqual(expected.null);
    expect(c.errors).toBe(12); // the demo: 12 (subject, state) errors after correct reading
  }, 60_000);

  it('the CLI prints the analysis and refuses k above the subjects', () => {
    const ok = runCli(['probes', '--traces', traces, '--concentration', '--resamples', '500']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/error concentration: 50\.0% of the 12 facts-right, action-wrong errors \(subject × state\) of 3 subjects fall on states that at least 2 of them fail, versus \d+\.\d% under the permutation null/);
    const bad = runCli(['probes', '--traces', traces, '--concentration', '--min-subjects', '4']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--min-subjects must be between 1 and the 3 subjects');
    const lone = runCli(['probes', '--traces', traces, '--min-subjects', '2']);
    expect(lone.code).toBe(2);
  }, 60_000);
});
