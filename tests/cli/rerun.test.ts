/**
 * `standoff rerun`: agreement of terminal decisions between two runs of the same subjects on the
 * same states, paired on (subject, scenario, epoch), with a Clopper-Pearson interval; checked
 * against a pairing done here from the raw Parquet rows.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';
import { clopperPearson } from '../../src/stats/index.ts';

describe('standoff rerun', () => {
  it('pairs two runs on (subject, scenario, epoch) and counts equal decisions', async () => {
    const t = join(mkdtempSync(join(tmpdir(), 'standoff-rerun-')), 't');
    for (const [id, seed] of [['r1', '1'], ['r2', '2']]) {
      const r = runCli(['run', '--preset', 'smoke', '--epochs', '3', '--seed', seed, '--run-id', id, '--judges', 'none', '--traces', t, '--progress', 'none']);
      expect([0, 3]).toContain(r.code); // the gate fails without judges; the rows are written
    }
    const r = runCli(['rerun', '--traces', t, '--a', 'r1', '--b', 'r2', '--format', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout);
    const db = await createDb({ threads: 1 });
    const rows = (await withConnection(db, (c) => query(c, `SELECT run_id, subject_model, scenario_id, epoch, decision_tool, status FROM read_parquet('${t}/episodes/*/*.parquet', hive_partitioning = true)`))).rows;
    db.closeSync();
    let total = 0;
    for (const s of got.subjects) {
      const key = (x: Record<string, unknown>) => `${x.scenario_id}/${x.epoch}`;
      const a = new Map(rows.filter((x) => x.run_id === 'r1' && x.subject_model === s.subject_model && x.status !== 'error').map((x) => [key(x), x.decision_tool]));
      const b = rows.filter((x) => x.run_id === 'r2' && x.subject_model === s.subject_model && x.status !== 'error' && a.has(key(x)));
      const k = b.filter((x) => a.get(key(x)) === x.decision_tool).length;
      expect(s).toMatchObject({ paired: b.length, matched: k });
      const ci = clopperPearson(k, b.length);
      expect(s.lower).toBeCloseTo(ci.lower!, 12);
      total += b.length;
    }
    expect(total).toBe(27);
    const self = JSON.parse(runCli(['rerun', '--traces', t, '--a', 'r1', '--b', 'r1', '--format', 'json']).stdout);
    expect(self.subjects.every((s: { agreement: number }) => s.agreement === 1)).toBe(true);
    const none = runCli(['rerun', '--traces', t, '--a', 'r1', '--b', 'nope']);
    expect(none.code).not.toBe(0);
  }, 120_000);
});
