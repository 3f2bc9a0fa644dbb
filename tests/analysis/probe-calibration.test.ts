/**
 * Calibration of the probe decisions through a real store (`loadCalibration`): each subject's
 * bins are folded in (run_id, state_id) order, compared as strings ('r10' before 'r2', 's10/1'
 * before 's9/1'), over the integer keys that order now comes from; the result equals
 * `expectedCalibrationError` over the same decisions sorted by those strings, bit for bit, and
 * differs from it over another order (so the check sees an order change). Decisions without
 * probabilities or a parseable choice count as left out; a subject's label is its model across runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCalibration } from '../../src/analysis/probe-calibration.ts';
import { expectedCalibrationError } from '../../src/stats/expected-calibration-error.ts';
import { createRng } from '../../src/stats/rng.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { writeRun } from '../../src/store/write-run.ts';
import type { ProbeDecisionRow, RunRow } from '../../src/schema/tables.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-calibration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (runId: string): RunRow =>
  ({ run_id: runId, created_at: '2026-01-01T00:00:00.000Z', source: 'standoff', suite: 'standoff-o1', status: 'success', config: '{}', seed: 1, epochs: null, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null }) as RunRow;

/** Decisions of models a and b on states s<i>/1 (scenario s<i>): confidences drawn so that the order of the sums shows. */
function decisions(runId: string, seed: number): ProbeDecisionRow[] {
  const rng = createRng(seed);
  const out: ProbeDecisionRow[] = [];
  for (const m of ['a', 'b']) {
    for (let i = 1; i <= 24; i++) {
      const p = 0.7 + 0.09 * rng.uniform();
      const kind = i % 8;
      out.push({
        run_id: runId, state_id: `s${i}/1`, subject_model: m, scenario_id: `s${i}`, epoch: 1,
        chosen_action: kind === 3 ? null : 'escalate', gold_actions: ['escalate'], correct: rng.uniform() < 0.7,
        composed_action: null, composed_correct: null, decision_rule: null,
        option_probs: kind === 5 ? null : JSON.stringify({ escalate: p, withdraw: 1 - p }), condition: 'raw',
      });
    }
  }
  return out;
}

const SUBJECT = { expr: 'd.subject_model', join: '' };

describe('loadCalibration', () => {
  it("folds each subject's decisions in (run_id, state_id) string order, bit for bit", async () => {
    const store = join(dir, 'order');
    const rows = new Map([['r2', decisions('r2', 1)], ['r10', decisions('r10', 2)]]);
    for (const [id, d] of rows) await writeRun(store, { run: run(id), probe_decisions: d });
    const s = await openStore(store);
    let got;
    try {
      got = await loadCalibration({ conn: s.conn, q: async (sql, p) => (await query(s.conn, sql, p)).rows }, { subject: SUBJECT, bins: 10 });
    } finally {
      s.close();
    }
    expect(got).not.toBeNull();
    const byString = (x: ProbeDecisionRow, y: ProbeDecisionRow) => (x.run_id < y.run_id ? -1 : x.run_id > y.run_id ? 1 : x.state_id < y.state_id ? -1 : x.state_id > y.state_id ? 1 : 0);
    for (const m of ['a', 'b']) {
      const mine = [...rows.values()].flat().filter((d) => d.subject_model === m);
      const fold = (order: ProbeDecisionRow[]) => {
        const kept = order.filter((d) => d.option_probs !== null && d.chosen_action !== null);
        const e = expectedCalibrationError(kept.map((d) => JSON.parse(d.option_probs!).escalate as number), kept.map((d) => d.correct === true), { bins: 10 });
        return { n: e.n, without_probabilities: mine.length - e.n, ece: e.ece, mce: e.maxCalibrationError, bins: e.bins };
      };
      const sorted = [...mine].sort(byString);
      expect(sorted[0].run_id).toBe('r10');
      expect(got!.get(m)).toEqual(fold(sorted));
      expect(got!.get(m)!.without_probabilities).toBe(12);
      // Another order gives other floating-point sums: the comparison above can fail.
      expect(fold([...sorted].reverse())).not.toEqual(fold(sorted));
    }
  });

  it('null when no decision carries probabilities', async () => {
    const store = join(dir, 'none');
    await writeRun(store, { run: run('r'), probe_decisions: decisions('r', 3).map((d) => ({ ...d, option_probs: null })) });
    const s = await openStore(store);
    try {
      expect(await loadCalibration({ conn: s.conn, q: async (sql, p) => (await query(s.conn, sql, p)).rows }, { subject: SUBJECT, bins: 10 })).toBeNull();
    } finally {
      s.close();
    }
  });
});
