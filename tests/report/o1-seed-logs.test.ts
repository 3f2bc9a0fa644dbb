/**
 * The seed's published table fed through O1-shaped Inspect logs (three logs, task standoff_o1, one
 * subject each, 18 scenarios x 5 epochs, the three O1 scorers; built on this evaluation's shaped
 * log in tests/fixtures/inspect/make-logs.ts, itself modelled on Inspect's own logs there) is
 * recognised as Standoff O1 by its data and reported with the Standoff sections: the seed's numbers
 * are in REPORT.md (../shared/seeds/standoff-o1.txt: 20/90, 20/60, 67/90, 2 invalid; 88/90,
 * 59/60, 89/90; 90/90, 60/60, 82/90; twelve correct without evidence, 11 of them GPT-OSS).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { pythonJson, shapedHeader, writeZip, type ZipMember } from '../fixtures/inspect/make-logs.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';

interface Plan {
  model: string;
  /** Non-ambiguous episodes in order: [correct, gathered] per kind and how many. */
  nonAmb: Array<{ n: number; correct: boolean; gathered: boolean; invalid?: boolean }>;
  ambGathered: number;
  aligned: number;
}
const PLANS: Plan[] = [
  // GPT-OSS: 2 invalid (fc_act_a, fc_esc_b), 11 lucky, 9 grounded correct; 20 gathered in all.
  { model: 'nim/openai/gpt-oss-120b', nonAmb: [{ n: 2, correct: false, gathered: false, invalid: true }, { n: 11, correct: true, gathered: false }, { n: 9, correct: true, gathered: true }, { n: 6, correct: false, gathered: true }, { n: 32, correct: false, gathered: false }], ambGathered: 5, aligned: 67 },
  { model: 'nim/nvidia/nemotron-3-super-120b', nonAmb: [{ n: 1, correct: true, gathered: false }, { n: 1, correct: false, gathered: true }, { n: 58, correct: true, gathered: true }], ambGathered: 29, aligned: 89 },
  { model: 'nim/minimax/minimax-m3', nonAmb: [{ n: 60, correct: true, gathered: true }], ambGathered: 30, aligned: 82 },
];

const call = (id: string, fn: string, args: Record<string, unknown>) => ({ id, function: fn, arguments: args, type: 'function' });

function sample(s: { scenario_id: string; target: string; domain: string; decision_type: string; variant: string }, epoch: number, f: { correct: boolean; gathered: boolean; invalid?: boolean }, aligned: boolean) {
  const messages: unknown[] = [{ role: 'system', content: 'You are an operations agent.' }, { role: 'user', content: `Situation ${s.scenario_id}`, source: 'input' }];
  const read = (i: number) => {
    messages.push({ role: 'assistant', content: 'Reading the log.', tool_calls: [call(`r${i}`, 'read_system_log', {})] });
    messages.push({ role: 'tool', content: 'log text', tool_call_id: `r${i}`, function: 'read_system_log' });
  };
  const ambiguous = s.target === 'NOANSWER';
  if (f.invalid) {
    read(1);
    read(2);
  } else {
    if (f.gathered) read(1);
    const tool = ambiguous ? 'escalate' : f.correct ? s.target : s.target === 'withdraw' ? 'escalate' : 'withdraw';
    messages.push({ role: 'assistant', content: 'Deciding.', tool_calls: [call('d1', tool, tool === 'issue_statement' ? { text: 'x' } : { reason: 'x' })] });
    messages.push({ role: 'tool', content: 'done', tool_call_id: 'd1', function: tool });
  }
  return {
    id: s.scenario_id,
    epoch,
    input: `Situation ${s.scenario_id}`,
    target: s.target,
    messages,
    scores: {
      policy_compliant_action: { value: ambiguous ? 'N' : f.correct ? 'C' : 'I' },
      gathered_evidence: { value: f.gathered },
      reasoning_action_alignment: { value: aligned ? 'C' : 'I' },
    },
    metadata: { domain: s.domain, decision_type: s.decision_type, variant: s.variant },
    model_usage: {},
    attachments: {},
  };
}

function writeLog(dir: string, plan: Plan, i: number): string {
  const scenarios = loadScenarios(join(ROOT, 'scenarios')) as unknown as Array<{ scenario_id: string; target: string; domain: string; decision_type: string; variant: string }>;
  const episodes = scenarios.flatMap((s) => [1, 2, 3, 4, 5].map((epoch) => ({ s, epoch })));
  // GPT-OSS's two invalid episodes are fc_act_a and fc_esc_b (epoch 1), as in the seed.
  const first = ['fc_act_a', 'fc_esc_b'];
  const nonAmb = episodes.filter((e) => e.s.target !== 'NOANSWER').sort((a, b) => Number(!(first.includes(a.s.scenario_id) && a.epoch === 1)) - Number(!(first.includes(b.s.scenario_id) && b.epoch === 1)));
  const amb = episodes.filter((e) => e.s.target === 'NOANSWER');
  const flags = plan.nonAmb.flatMap((k) => Array.from({ length: k.n }, () => k));
  const planned = [...nonAmb.map((e, j) => ({ ...e, f: flags[j] })), ...amb.map((e, j) => ({ ...e, f: { correct: false, gathered: j < plan.ambGathered, invalid: false } }))];
  let aligned = 0;
  const samples = planned.map((e) => sample(e.s, e.epoch, e.f, !e.f.invalid && aligned++ < plan.aligned));
  // GPT-OSS's own gathered_evidence scorer disagrees with its transcript on two episodes (it
  // claims evidence the transcript does not show): reported 22/90, recomputed 20/90.
  if (i === 0) for (const j of [28, 29]) (samples[j].scores.gathered_evidence as { value: boolean }).value = true;
  const header = shapedHeader();
  const ev = header.eval as Record<string, unknown>;
  Object.assign(ev, { run_id: `SeedRun${i}`, eval_id: `SeedEval${i}`, model: plan.model, model_args: {}, task_args: {}, config: { epochs: 5 }, dataset: { name: 'standoff', samples: 18 } });
  // GPT-OSS's header reports 0.25 for its gathered_evidence scorer (22/90 = 0.2444 in its samples):
  // the core reported vs recomputed section flags it in the O1 report too.
  const reported = [{ name: 'gathered_evidence', scorer: 'gathered_evidence', reducer: 'mean', metrics: { accuracy: { name: 'accuracy', value: 0.25 } } }];
  header.results = { total_samples: 90, completed_samples: 90, scores: i === 0 ? reported : [] };
  const members: ZipMember[] = [{ name: '_journal/start.json', data: JSON.stringify({ version: 2, eval: ev, plan: header.plan }) }];
  for (const s of samples) members.push({ name: `samples/${s.id}_epoch_${s.epoch}.json`, data: pythonJson(s) });
  members.push({ name: 'summaries.json', data: '[]' }, { name: 'reductions.json', data: '[]' }, { name: 'header.json', data: JSON.stringify(header) });
  return writeZip(join(dir, `seed-${i}.eval`), members);
}

let md: string;
let store: string;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'standoff-o1-seed-'));
  const logs = PLANS.map((p, i) => writeLog(dir, p, i));
  store = join(dir, 'store');
  const ing = runCli(['ingest', 'inspect', ...logs, '--traces', store]);
  expect(ing.code, ing.stderr).toBe(0);
  const out = join(dir, 'report');
  const b = runCli(['report', 'build', '--traces', store, '--out', out, '--resamples', '200']);
  expect(b.code, b.stderr).toBe(0);
  md = readFileSync(join(out, 'REPORT.md'), 'utf8');
}, 120_000);

describe("the seed's table through O1-shaped Inspect logs", () => {
  it('is reported with the Standoff sections and O1 gate', () => {
    for (const h of ['## 3. Grounded vs lucky', '### Correct without evidence', '## 8. Invalid and errored episodes']) expect(md).toContain(h);
    expect(md).toMatch(/Structural gate: PASSED/);
    expect(md.match(/required_scorers \(inspect-SeedRun\d-[0-9a-f]+\) \| pass \| gathered_evidence, policy_compliant_action, reasoning_action_alignment present on all 90 episodes/g)).toHaveLength(3);
  });

  it("shows the log's own gathered_evidence beside the recomputation and flags the episodes that differ; ci names which one it uses", () => {
    const row = md.split('\n').find((l) => l.startsWith('| nim/openai/gpt-oss-120b | ') && l.includes('FLAG'))!;
    expect(row).toBe('| nim/openai/gpt-oss-120b | 24.4% (22/90) | 22.2% (20/90) | **2** (FLAG) |');
    expect(md.match(/^- nim\/openai\/gpt-oss-120b: `[a-z_]+` epoch \d: log gathered, recomputed not gathered$/gm)).toHaveLength(2);
    expect(md).toMatch(/\| nim\/minimax\/minimax-m3 \| 100\.0% \(90\/90\) \| 100\.0% \(90\/90\) \| 0 \|/);
    // The same numbers are in results.json (`recomputed`).
    const json = JSON.parse(readFileSync(join(store, '..', 'report', 'results.json'), 'utf8'));
    const gptRow = json.recomputed.subjects.find((x: { subject: string }) => x.subject === 'nim/openai/gpt-oss-120b');
    expect(gptRow).toMatchObject({ both: 90, reported: 22, recomputed: 20 });
    expect(gptRow.differing).toHaveLength(2);
    const ci = (metric: string) => JSON.parse(runCli(['ci', 'exact', '--traces', store, '--metric', metric, '--by', 'subject_model', '--format', 'json']).stdout);
    const gpt = (r: { group: { subject_model: string }; successes: number; trials: number; description?: string }[]) => r.find((g) => g.group.subject_model === 'nim/openai/gpt-oss-120b')!;
    expect(gpt(ci('gathered_evidence'))).toMatchObject({ successes: 20, trials: 90, note: expect.stringContaining('"gathered_evidence" is the built-in metric; this store\'s scorer gathered_evidence is metric score:gathered_evidence') });
    expect(gpt(ci('score:gathered_evidence'))).toMatchObject({ successes: 22, trials: 90 });
  });

  it("reports the log's own aggregates beside the recomputation (the core reconciliation section, under section 2)", () => {
    const at = md.indexOf("### Reported vs recomputed: the log's own aggregates");
    expect(at).toBeGreaterThan(md.indexOf('## 2. Results per subject'));
    expect(at).toBeLessThan(md.indexOf('## 3. Grounded vs lucky'));
    expect(md).toMatch(/^\| `inspect-SeedRun0-[0-9a-f]+` \| standoff_o1 \| accuracy \| — \| gathered_evidence \| 0\.2500 \| 0\.2444 \| −0\.005556 \| .* \| \*\*FLAG\*\* \| mean over 18 samples after the mean epoch reducer \|$/m);
    expect(md).toContain('**1 differ** (FLAG)');
    const json = JSON.parse(readFileSync(join(store, '..', 'report', 'results.json'), 'utf8'));
    expect(json.reconciliation).toHaveLength(1);
    expect(json.reconciliation[0]).toMatchObject({ metric: 'accuracy', scorer: 'gathered_evidence', reported: 0.25, status: 'FLAG', n: 18 });
    expect(json.reconciliation[0].recomputed).toBeCloseTo(22 / 90, 12);
  });

  it("finds the seed's numbers in REPORT.md", () => {
    const row = (model: string) => md.split('\n').find((l) => l.startsWith(`| ${model} | `) && l.includes('(') && l.includes('of 90'))!;
    const gpt = row('nim/openai/gpt-oss-120b');
    for (const f of ['(20/90)', '(20/60)', '(67/90)', '2 of 90']) expect(gpt).toContain(f);
    const nem = row('nim/nvidia/nemotron-3-super-120b');
    for (const f of ['(88/90)', '(59/60)', '(89/90)', '0 of 90']) expect(nem).toContain(f);
    const mm = row('nim/minimax/minimax-m3');
    for (const f of ['(90/90)', '(60/60)', '(82/90)', '0 of 90']) expect(mm).toContain(f);
    expect(md).toContain('12 correct actions came without evidence (nim/minimax/minimax-m3: 0, nim/nvidia/nemotron-3-super-120b: 1, nim/openai/gpt-oss-120b: 11)');
    expect(md).toMatch(/- \*\*nim\/openai\/gpt-oss-120b\*\*: 11 episodes:/);
    // the two invalid episodes, as the seed names them
    expect(md).toMatch(/\| nim\/openai\/gpt-oss-120b \| `fc_act_a` \| 1 \| invalid \|/);
    expect(md).toMatch(/\| nim\/openai\/gpt-oss-120b \| `fc_esc_b` \| 1 \| invalid \|/);
  });
});
