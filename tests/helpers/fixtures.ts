/** Small valid rows for every table, for store tests. */
import type { RunBundle } from '../../src/schema/tables.ts';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export function sampleBundle(runId = 'r1', episodes = 3): RunBundle {
  const eps = Array.from({ length: episodes }, (_, i) => ({
    run_id: runId,
    episode_id: `sim:careful/em_act_a/${i + 1}`,
    subject_model: 'sim:careful',
    subject_family: i % 2 === 0 ? 'simfam' : null,
    scenario_id: 'em_act_a',
    domain: 'emergency_management',
    decision_type: 'act',
    variant: 'a',
    epoch: i + 1,
    target: 'issue_statement',
    status: (i === 2 ? 'invalid' : 'valid') as 'valid' | 'invalid',
    invalid_reason: i === 2 ? 'no terminal decision' : null,
    decision_tool: i === 2 ? null : 'issue_statement',
    decision_args: i === 2 ? null : JSON.stringify({ text: 'Evacuate zone "B", now.' }),
    gathered_evidence: i !== 1,
    log_reads: i === 2 ? 2 : 1,
    turns: 2,
    input_tokens: 1200 + i,
    output_tokens: 80,
    latency_ms: 12.5 * (i + 1),
    started_at: `2026-11-29T10:00:0${i}.250Z`,
    error: null,
    metadata: null,
    truncated: i === 2 ? null : false,
    attempts: i + 1,
  }));
  return {
    run: {
      run_id: runId,
      created_at: '2026-11-29T10:00:00.000Z',
      source: 'standoff',
      suite: 'standoff-o1',
      status: 'success',
      config: JSON.stringify({ subjects: ['sim:careful'], epochs: episodes }),
      seed: 4294967295,
      epochs: episodes,
      standoff_version: '0.1.0',
      source_file: null,
      source_sha256: null,
      notes: 'simulated subjects',
    },
    episodes: eps,
    messages: eps.flatMap((e) => [
      { run_id: runId, episode_id: e.episode_id, seq: 0, role: 'system' as const, content: 'Policy: ...', reasoning: null, tool_call_id: null, tool_name: null, tool_args: null, tool_ok: null, tool_error: null, finish_reason: null, discarded: null, attempt: null, original_tool_call_id: null },
      { run_id: runId, episode_id: e.episode_id, seq: 1, role: 'assistant' as const, content: null, reasoning: 'I should check the log, ünïcode ✓', tool_call_id: 'call_1', tool_name: 'read_system_log', tool_args: '{}', tool_ok: null, tool_error: null, finish_reason: 'tool_calls', discarded: false, attempt: 1, original_tool_call_id: '' },
      { run_id: runId, episode_id: e.episode_id, seq: 2, role: 'tool' as const, content: 'sensor feed: verified', reasoning: null, tool_call_id: 'call_1', tool_name: 'read_system_log', tool_args: null, tool_ok: true, tool_error: null, finish_reason: null, discarded: null, attempt: null, original_tool_call_id: null },
    ]),
    scores: eps.map((e) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'policy_compliant_action', value: e.status === 'valid' ? 1 : 0, answer: e.decision_tool, noanswer: false, explanation: 'matched target' })),
    judgments: eps.map((e) => ({ run_id: runId, episode_id: e.episode_id, scorer: 'reasoning_action_alignment', judge_model: 'sim:judge-strict', judge_family: 'simfam-j', verdict: 'ALIGNED', value: 1, excluded_self: false, raw: 'ALIGNED' })),
    probe_answers: [
      { run_id: runId, state_id: 'em_act_a/1', subject_model: 'sim:careful', scenario_id: 'em_act_a', epoch: 1, probe_id: 'p1', question: 'Is the feed verified?', expected: 'yes', answer: 'yes', correct: true },
      { run_id: runId, state_id: 'em_act_a/1', subject_model: 'sim:careful', scenario_id: 'em_act_a', epoch: 1, probe_id: 'p2', question: 'How many minutes old?', expected: '4', answer: null, correct: false },
    ],
    probe_decisions: [
      { run_id: runId, state_id: 'em_act_a/1', subject_model: 'sim:careful', scenario_id: 'em_act_a', epoch: 1, chosen_action: 'issue_statement', gold_actions: ['issue_statement'], correct: true, composed_action: 'issue_statement', composed_correct: true, decision_rule: null, option_probs: JSON.stringify({ issue_statement: 0.9, escalate: 0.1 }), condition: 'raw' },
      { run_id: runId, state_id: 'em_act_a/2', subject_model: 'sim:careful', scenario_id: 'em_act_a', epoch: 2, chosen_action: null, gold_actions: [], correct: false, composed_action: null, composed_correct: false, decision_rule: null, option_probs: null, condition: 'raw' },
    ],
    aggregates: [{ run_id: runId, subject_model: 'GPT-OSS 120B', metric: 'gathered_evidence', successes: 20, trials: 90, source_row: 2 }],
  };
}

/**
 * SHA-256 over every file (path + bytes) under a directory, for "store unchanged" checks; entries
 * whose name `skip` accepts (at any depth) are left out.
 */
export function hashTree(dir: string, skip: (name: string) => boolean = () => false): string {
  const h = createHash('sha256');
  if (!existsSync(dir)) return 'absent';
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      if (skip(name)) continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else {
        h.update(p.slice(dir.length) + '\0');
        h.update(readFileSync(p));
      }
    }
  };
  walk(dir);
  return h.digest('hex');
}
