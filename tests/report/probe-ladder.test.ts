/**
 * The composition ladder ("Reading Right, Acting Wrong" section 6.1) through a real store:
 * - the paired, state-clustered interval of an adjacent step against R boot's percentile interval
 *   on the same data (tests/oracle/clustered-paired.json, gen_clustered_paired.py: boot() over the
 *   clusters with the ratio statistic sum(d) / sum(n)), and the point estimates by hand;
 * - an older store (rows without `condition`, as the committed demo was written): raw and composed
 *   steps equal the probe tables' decision and composition accuracy, the middle steps are not run;
 * - a step that was not run is `run: false` with no accuracy, never 0, and the report says "not run".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProbeLadder } from '../../src/analysis/probe-ladder.ts';
import { probesFromStore } from '../../src/analysis/ci.ts';
import { renderLadder } from '../../src/report/probe-ladder.ts';
import { ladderFigure } from '../../src/report/figure-ladder.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { writeRun } from '../../src/store/write-run.ts';
import type { ProbeCondition, ProbeDecisionRow, RunRow } from '../../src/schema/tables.ts';
import { ROOT } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-ladder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface OracleCase { id: string; a: number[]; b: number[]; cluster_ids: string[]; level: number; mean_diff: number; bootstrap: { band: { percentile: [number, number][] } } }
const oracle = (JSON.parse(readFileSync(join(ROOT, 'tests/oracle/clustered-paired.json'), 'utf8')) as { cases: OracleCase[] }).cases;

const run = (runId: string): RunRow => ({
  run_id: runId, created_at: '2026-01-01T00:00:00.000Z', source: 'standoff', suite: 'standoff-o1', status: 'success',
  config: '{}', seed: 1, epochs: null, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null,
} as RunRow);

/** One decision row per (pair, condition): pair i is state `<cluster>/<i>` of scenario `<cluster>`. */
function rows(runId: string, c: OracleCase, conditions: [ProbeCondition, number[]][]): ProbeDecisionRow[] {
  return conditions.flatMap(([condition, v]) =>
    v.map((x, i) => ({
      run_id: runId, state_id: `${c.cluster_ids[i]}/${i}`, subject_model: 'm', scenario_id: c.cluster_ids[i], epoch: i + 1,
      chosen_action: x === 1 ? 'escalate' : 'withdraw', gold_actions: ['escalate'], correct: x === 1,
      composed_action: null, composed_correct: null, decision_rule: null, option_probs: null, condition,
    })),
  );
}

const ask = async (store: string, o: { level?: number; resamples?: number } = {}) => {
  const s = await openStore(store);
  try {
    return await loadProbeLadder(async (sql) => (await query(s.conn, sql)).rows, { level: o.level ?? 0.95, seed: 20261129, resamples: o.resamples ?? 2000 });
  } finally {
    s.close();
  }
};

describe('composition ladder', () => {
  for (const c of oracle.filter((x) => x.id === 'paired-cluster-binary-18x5' || x.id === 'paired-cluster-binary-unequal-c15')) {
    it(`${c.id}: a step's paired cluster interval lands in R boot's percentile band; estimates by hand`, async () => {
      const store = join(dir, c.id);
      // raw = b, own-answers = a: the step raw -> own-answers is mean(a - b), clustered by state.
      await writeRun(store, { run: run('r'), probe_decisions: rows('r', c, [['raw', c.b], ['own-answers', c.a]]) });
      const l = await ask(store, { level: c.level, resamples: 10_000 });
      expect(l.conditions_run).toEqual(['raw', 'own-answers']);
      const s = l.subjects[0];
      const sum = (v: number[]) => v.reduce((x, y) => x + y, 0);
      expect(s.steps[0].accuracy!.count).toBe(sum(c.b));
      expect(s.steps[1].accuracy!.count).toBe(sum(c.a));
      expect(s.steps[0].accuracy!.n).toBe(c.b.length);
      expect(s.steps[2]).toEqual({ condition: 'facts', run: false, accuracy: null, states: 0 });
      expect(s.steps[3]).toEqual({ condition: 'composed', run: false, accuracy: null, states: 0 });
      expect(s.differences).toHaveLength(1);
      const d = s.differences[0];
      expect([d.from, d.to, d.pairs, d.states]).toEqual(['raw', 'own-answers', c.a.length, new Set(c.cluster_ids).size]);
      expect(d.difference).toBeCloseTo(c.mean_diff, 12);
      expect(d.interval.method).toBe('paired-cluster-bootstrap-percentile');
      const [lo, hi] = c.bootstrap.band.percentile;
      expect(d.interval.lower!).toBeGreaterThanOrEqual(lo[0]);
      expect(d.interval.lower!).toBeLessThanOrEqual(lo[1]);
      expect(d.interval.upper!).toBeGreaterThanOrEqual(hi[0]);
      expect(d.interval.upper!).toBeLessThanOrEqual(hi[1]);
    });
  }

  it('pairs only the state answers decided under both steps, and skips a step not run', async () => {
    const store = join(dir, 'skip');
    const c: OracleCase = { id: 'x', a: [], b: [], cluster_ids: ['s1', 's1', 's2', 's2', 's3'], level: 0.95, mean_diff: 0, bootstrap: { band: { percentile: [] } } };
    const raw = rows('r', c, [['raw', [0, 1, 0, 0, 1]]]);
    const facts = rows('r', c, [['facts', [1, 1, 1, 1, 1]]]).slice(0, 4); // the last state's facts question failed
    await writeRun(store, { run: run('r'), probe_decisions: [...raw, ...facts] });
    const s = (await ask(store)).subjects[0];
    expect(s.steps.map((x) => x.run)).toEqual([true, false, true, false]);
    // raw -> facts (own-answers not run): pairs are the 4 answers of s1 and s2; by hand (4 - 1) / 4.
    expect(s.differences.map((d) => [d.from, d.to, d.pairs, d.states, d.difference])).toEqual([['raw', 'facts', 4, 2, 0.75]]);
    // By hand: state s1 contributes (1 - 0) + (1 - 1) = 1 over 2 pairs, s2 (1 - 0) + (1 - 0) = 2 over 2. Resampling two
    // states gives 0.5 ({s1, s1}, chance 1/4), 0.75 (mixed, 1/2) or 1 ({s2, s2}, 1/4): the 2.5% and 97.5% points are 0.5 and 1.
    expect([s.differences[0].interval.lower, s.differences[0].interval.upper]).toEqual([0.5, 1]);
    const md = renderLadder(await ask(store), 0.95);
    expect(md).toContain('| m | 40.0% (2/5) cl. [0.0, 100.0] | *not run* | 100.0% (4/4) st. [15.8, 100.0] | *not run* |');
    expect(md).toContain('| m | Raw trace → Correct facts shown | 2 (4) | +75.0 pp | [+50.0, +100.0] pp |');
    expect(md).toContain('Raw trace → Correct facts shown');
    expect(md).not.toMatch(/Own answers shown →/);
  });

  it('an older store (no condition column): raw and composed equal the probe tables, the middle steps are not run', async () => {
    const traces = join(ROOT, 'traces');
    let legacyStore = false;
    const s = await openStore(traces);
    try {
      const [{ n, legacy }] = (await query(s.conn, `SELECT CAST(count(*) AS INTEGER) AS n, CAST(count(*) FILTER (WHERE condition IS NULL) AS INTEGER) AS legacy FROM probe_decisions`)).rows as { n: number; legacy: number }[];
      // Until the demo is regenerated its rows carry no condition; afterwards they all do.
      expect(legacy === n || legacy === 0).toBe(true);
      legacyStore = legacy === n;
    } finally {
      s.close();
    }
    const r = await probesFromStore({ traces }, { resamples: 200 });
    if (legacyStore) expect(r.ladder.conditions_run).toEqual(['raw', 'composed']);
    for (const g of r.groups) {
      const l = r.ladder.subjects.find((x) => x.subject === g.group.subject_model)!;
      expect(l.steps[0].accuracy!.count).toBe(g.decision_accuracy.count);
      expect(l.steps[0].accuracy!.n).toBe(g.decision_accuracy.n);
      expect(l.steps[3].accuracy!.count).toBe(g.composed!.composed_accuracy.count);
      const rc = l.differences.find((d) => d.from === 'raw' && d.to !== 'raw');
      expect(rc).toBeDefined();
    }
  });

  it('rows without a condition (older writers) are the raw decision, and their composed_correct the composed step', async () => {
    const store = join(dir, 'legacy');
    const c: OracleCase = { id: 'x', a: [], b: [], cluster_ids: ['s1', 's2', 's3'], level: 0.95, mean_diff: 0, bootstrap: { band: { percentile: [] } } };
    const legacy = rows('r', c, [['raw', [0, 1, 0]]]).map(({ condition: _c, ...r }, i) => ({ ...r, composed_action: 'escalate', composed_correct: i !== 1 ? true : null }));
    await writeRun(store, { run: run('r'), probe_decisions: legacy as ProbeDecisionRow[] });
    const l = await ask(store);
    expect(l.conditions_run).toEqual(['raw', 'composed']);
    const s = l.subjects[0];
    expect([s.steps[0].accuracy!.count, s.steps[0].accuracy!.n, s.steps[3].accuracy!.count, s.steps[3].accuracy!.n]).toEqual([1, 3, 2, 2]);
    // Paired on the two states with a composed action: raw 0, 0 -> composed 1, 1.
    expect(s.differences.map((d) => [d.pairs, d.difference])).toEqual([[2, 1]]);
  });

  it('the figure has one line per subject across the steps run, and none with a single step', async () => {
    const l = await ask(join(dir, 'skip'));
    const f = ladderFigure(l, ['m'], { m: '#000' }, 0.95)!;
    expect(f.name).toBe('ladder');
    const values = (f.spec as { data: { values: { subject: string; step: string }[] } }).data.values;
    expect(values.map((v) => v.step)).toEqual(['Raw trace', 'Correct facts shown']);
    expect(ladderFigure({ conditions_run: ['raw'], subjects: [] }, [], {}, 0.95)).toBeNull();
  });
});
