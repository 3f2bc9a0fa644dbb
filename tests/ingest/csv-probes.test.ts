/**
 * Paired-probe data from elsewhere: a long CSV shaped like the paper's data (one row per subject,
 * state and probe, with the probe answer, the gold answer, the decision and the gold actions,
 * '|'-separated, repeated on each probe row of a state), names mapped as in any CSV ingest. The
 * ingest writes probe_answers and probe_decisions, and `standoff probes` works on it.
 * tests/fixtures/csv/paired-probes-long.csv is hand-written for this test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probesFromStore } from '../../src/analysis/ci.ts';
import { ROOT, runCli } from '../helpers/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-csvprobes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const csv = join(ROOT, 'tests/fixtures/csv/paired-probes-long.csv');
const map = join(ROOT, 'tests/fixtures/csv/paired-probes-long.map.json');

describe('ingest csv: long paired-probe files', () => {
  it('writes probe answers and one decision per subject and state; standoff probes reads them', async () => {
    const store = join(dir, 'ok');
    const r = runCli(['ingest', 'csv', csv, '--map', map, '--traces', store, '--run-id', 'paper']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('probe_answers 12, probe_decisions 6');
    const sql = runCli(['sql', '--traces', store, '--format', 'json', 'SELECT subject_model, scenario_id, chosen_action, gold_actions, correct FROM probe_decisions ORDER BY ALL']);
    expect(JSON.parse(sql.stdout)).toEqual([
      { subject_model: 'Clef', scenario_id: 'alf-001', chosen_action: 'take key', gold_actions: ['open door'], correct: false },
      { subject_model: 'Clef', scenario_id: 'alf-002', chosen_action: 'take key', gold_actions: ['go to desk', 'take key'], correct: true },
      { subject_model: 'Clef', scenario_id: 'alf-003', chosen_action: 'take key', gold_actions: ['take key'], correct: true },
      { subject_model: 'JEV', scenario_id: 'alf-001', chosen_action: 'open door', gold_actions: ['open door'], correct: true },
      { subject_model: 'JEV', scenario_id: 'alf-002', chosen_action: 'go to desk', gold_actions: ['go to desk', 'take key'], correct: true },
      { subject_model: 'JEV', scenario_id: 'alf-003', chosen_action: 'open door', gold_actions: ['take key'], correct: false },
    ]);
    const p = await probesFromStore({ traces: store }, { resamples: 200 });
    const clef = p.groups.find((g) => g.group.subject_model === 'Clef')!;
    // Clef: alf-001 facts right / action wrong; alf-002 facts right / right; alf-003 a fact wrong / right.
    expect([clef.cells.facts_right_action_wrong.count, clef.cells.facts_right_action_right.count, clef.cells.facts_wrong_action_right.count]).toEqual([1, 1, 1]);
    // alf-002 and alf-003 share their correct answers (no, yes) and the action take key: sufficient.
    expect(p.sufficiency).toMatchObject({ sufficient: true, vacuous: false, grouped_by: 'correct probe answers', groups_with_several_states: 1 });
  }, 60_000);

  it('rows of one state that disagree on the decision or gold actions are a one-line data error; nothing is written', () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'system,state,fact,response,truth,decision,gold\nJEV,s1,a,yes,yes,go,go\nJEV,s1,b,no,no,stop,go\n');
    const store = join(dir, 'bad-store');
    const r = runCli(['ingest', 'csv', bad, '--map', map, '--traces', store, '--run-id', 'bad']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('probe decision (subject, state)');
    const half = join(dir, 'half.json');
    writeFileSync(half, JSON.stringify({ table: 'probe_answers', columns: { subject_model: 'system', scenario_id: 'state', probe_id: 'fact', answer: 'response', expected: 'truth', decision: 'decision' } }));
    const h = runCli(['ingest', 'csv', csv, '--map', half, '--traces', store, '--run-id', 'half']);
    expect(h.code).toBe(3);
    expect(h.stderr).toContain('gold_actions');
  }, 60_000);

  it('--probes with recognised names needs no map; --probes on a map of another table is refused', () => {
    const f = join(dir, 'named.csv');
    writeFileSync(f, 'subject,state,probe,answer,expected,decision,gold_actions\nJEV,alf-001,holding_key,yes,yes,open door,open door\nJEV,alf-001,door_locked,no,yes,open door,open door\n');
    const r = runCli(['ingest', 'csv', f, '--probes', '--item', 'state', '--traces', join(dir, 'named'), '--run-id', 'n']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('probe_answers 2, probe_decisions 1');
    const epMap = join(dir, 'ep.json');
    writeFileSync(epMap, JSON.stringify({ table: 'episodes', columns: { subject_model: 'subject', scenario_id: 'state' } }));
    const bad = runCli(['ingest', 'csv', f, '--probes', '--map', epMap, '--traces', join(dir, 'named2'), '--run-id', 'n']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--probes is for long paired-probe files');
  }, 60_000);
});
