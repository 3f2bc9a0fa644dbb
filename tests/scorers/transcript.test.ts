/**
 * One definition of "gathered evidence": the runner's scorers and the Inspect ingest read a
 * transcript with the same function (`src/scorers/transcript.ts`). The end-to-end test feeds ONE
 * transcript through both paths: a scripted OpenAI-compatible model (real HTTP on 127.0.0.1)
 * reads the log twice and never decides, as Standoff O1's two invalid GPT-OSS 120B episodes did
 * (fc_act_a, fc_esc_b); `standoff run` stores it; the stored transcript is then written as an
 * Inspect `.eval` log and ingested. Both must say: invalid, 2 log reads, evidence NOT gathered
 * (that is how O1 published 20/90 for GPT-OSS). Transcripts without the read_system_log protocol
 * and errored episodes have evidence NULL (not measured), never false.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/runner/run.ts';
import { scoreEpisode } from '../../src/runner/scorers.ts';
import { loadInspectLog } from '../../src/ingest/inspect/index.ts';
import { analyzeTranscript, countTurns, episodeEvidence, usesLogProtocol, type TranscriptRow } from '../../src/scorers/transcript.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { shapedEvalMembers, writeZip } from '../fixtures/inspect/make-logs.ts';

let server: Server;
let baseURL = '';
let dir: string;

/** Always asks for the log again (a new call id per turn); never decides. */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-evidence-'));
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string }> };
      const k = body.messages.filter((m) => m.role === 'assistant').length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `c${k}`,
          object: 'chat.completion',
          created: 0,
          model: 'scripted',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: `Reading the log (${k + 1}).`, tool_calls: [{ id: `read_${k}`, type: 'function', function: { name: 'read_system_log', arguments: '{}' } }] },
              finish_reason: 'tool_calls',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

type StoredRow = TranscriptRow & { reasoning: string | null; tool_error: string | null };

/** The stored transcript rows as an Inspect conversation (one assistant message per turn). */
function toInspectMessages(rows: StoredRow[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let turn: Record<string, unknown> | null = null;
  for (const r of rows) {
    if (r.role === 'assistant') {
      if (!turn) {
        turn = { role: 'assistant', content: r.content ?? '', tool_calls: [] };
        out.push(turn);
      }
      if (r.tool_name) (turn.tool_calls as unknown[]).push({ id: r.tool_call_id, function: r.tool_name, arguments: JSON.parse(r.tool_args ?? '{}'), type: 'function' });
      continue;
    }
    turn = null;
    if (r.role === 'tool') out.push({ role: 'tool', content: r.content ?? '', tool_call_id: r.tool_call_id, function: r.tool_name, ...(r.tool_ok ? {} : { error: { type: 'unknown', message: r.tool_error ?? 'failed' } }) });
    else out.push({ role: r.role, content: r.content ?? '' });
  }
  return out;
}

describe('one transcript, two paths (runner and Inspect ingest)', () => {
  it('reads the log twice and never decides: both paths say invalid, 2 reads, evidence not gathered', async () => {
    const cfg = join(dir, 'scripted.config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        name: 'twice',
        scenarios: ['fc_act_a'],
        subjects: [{ model: 'scripted/reader', base_url: baseURL }],
        epochs: 1,
        max_turns: 2,
        probes: false,
        retries: { max: 0, base_ms: 1, max_ms: 1 },
      }),
    );
    const traces = join(dir, 'traces');
    await runCommand({ config: cfg, traces, progress: 'none', handleSignals: false, log: () => undefined });
    const s = await openStore(traces);
    let runner: Record<string, unknown>;
    let rows: StoredRow[];
    let score: unknown;
    try {
      runner = (await query(s.conn, `SELECT status, invalid_reason, decision_tool, gathered_evidence, log_reads FROM episodes`)).rows[0];
      rows = (await query(s.conn, `SELECT seq, role, content, reasoning, tool_call_id, tool_name, tool_args, tool_ok, tool_error FROM messages ORDER BY seq`)).rows as unknown as StoredRow[];
      score = (await query(s.conn, `SELECT value FROM scores WHERE scorer = 'gathered_evidence'`)).rows[0].value;
    } finally {
      s.close();
    }
    expect(runner).toEqual({ status: 'invalid', invalid_reason: 'no terminal decision in 2 turns (2 log reads)', decision_tool: null, gathered_evidence: false, log_reads: 2 });
    expect(score).toBe(0);
    expect(rows.filter((r) => r.role === 'tool' && r.tool_ok).length).toBe(2); // both reads succeeded

    // The same transcript as an Inspect log, through the ingest.
    const sample = { id: 'fc_act_a', epoch: 1, input: 'x', target: 'issue_statement', messages: toInspectMessages(rows), scores: {}, metadata: {} };
    const path = writeZip(join(dir, 'twice.eval'), shapedEvalMembers({ samples: [sample] }));
    const loaded = await loadInspectLog(path, { runId: 'twice-inspect' });
    expect(loaded.problems).toEqual([]);
    const bundle = loaded.log!.bundle;
    const ingested = bundle.episodes[0];
    expect({
      status: ingested.status,
      invalid_reason: ingested.invalid_reason,
      decision_tool: ingested.decision_tool,
      gathered_evidence: ingested.gathered_evidence,
      log_reads: ingested.log_reads,
    }).toEqual(runner);
    // And the runner's scorer on the ingested rows agrees too.
    const scores = scoreEpisode(bundle.messages, 'issue_statement', [], { model: 'm', family: null });
    expect(scores.find((x) => x.scorer === 'gathered_evidence')!.value).toBe(0);
  }, 60_000);
});

describe('not measured is not false', () => {
  it('the runner stores an errored episode with evidence NULL (a subject whose every call fails)', async () => {
    const cfg = join(dir, 'err.config.json');
    writeFileSync(cfg, JSON.stringify({ name: 'err', scenarios: ['em_act_a'], subjects: [{ model: 'sim:careful+faults=500' }], epochs: 1, probes: false, retries: { max: 0, base_ms: 1, max_ms: 1 } }));
    const traces = join(dir, 'err-traces');
    await runCommand({ config: cfg, traces, progress: 'none', handleSignals: false, log: () => undefined });
    const s = await openStore(traces);
    try {
      const e = (await query(s.conn, `SELECT status, gathered_evidence FROM episodes`)).rows[0];
      expect(e).toEqual({ status: 'error', gathered_evidence: null });
    } finally {
      s.close();
    }
  }, 60_000);

  const row = (seq: number, role: TranscriptRow['role'], tool_name: string | null, tool_ok: boolean | null = null, tool_args: string | null = null): TranscriptRow => ({
    seq, role, content: null, tool_call_id: tool_name ? `c${seq}` : null, tool_name, tool_args, tool_ok,
  });

  it('a generic task (no read_system_log protocol) has evidence NULL; its target alone does not make it one', () => {
    const chat = [row(0, 'user', null), row(1, 'assistant', null)];
    expect(usesLogProtocol(chat, 'C')).toBe(false);
    expect(episodeEvidence(chat, { errored: false, target: 'C' })).toBeNull();
    expect(episodeEvidence(chat, { errored: false, target: 'escalate' })).toBe(false); // this protocol, no decision
  });

  it('an errored episode has evidence NULL even after a successful read', () => {
    const rows = [row(0, 'assistant', 'read_system_log', null, '{}'), row(1, 'tool', 'read_system_log', true)];
    expect(episodeEvidence(rows, { errored: true })).toBeNull();
    expect(analyzeTranscript(rows).gathered_evidence).toBe(false);
  });

  it('a read strictly before the sole decision is evidence; in the same batch it is not', () => {
    const before = [row(0, 'assistant', 'read_system_log', null, '{}'), row(1, 'tool', 'read_system_log', true), row(2, 'assistant', 'escalate', null, '{"reason":"r"}')];
    expect(episodeEvidence(before, { errored: false })).toBe(true);
    const same = [row(0, 'assistant', 'read_system_log', null, '{}'), row(1, 'assistant', 'escalate', null, '{"reason":"r"}'), row(2, 'tool', 'read_system_log', true)];
    expect(episodeEvidence(same, { errored: false })).toBe(false);
  });

  it('real Inspect logs of other tasks ingest with evidence and log reads NULL', async () => {
    const bundle = (await loadInspectLog(join(import.meta.dirname, '../fixtures/inspect/log_read_sample.eval'), { runId: 'generic' })).log!.bundle;
    expect(bundle.episodes.length).toBeGreaterThan(0);
    for (const e of bundle.episodes) {
      expect(e.gathered_evidence).toBeNull();
      expect(e.log_reads).toBeNull();
    }
  });
});

describe('countTurns', () => {
  it("equals analyzeTranscript's turns on generated transcripts: in seq order or not, with discarded rows", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const roles = ['assistant', 'tool', 'user', 'system'] as const;
    for (let t = 0; t < 500; t++) {
      const n = Math.floor(next() * 9);
      const rows: TranscriptRow[] = Array.from({ length: n }, (_, i) => ({
        seq: t % 3 === 0 ? Math.floor(next() * n) : i,
        role: roles[Math.floor(next() * 4)]!,
        content: null,
        tool_call_id: null,
        tool_name: null,
        tool_args: null,
        tool_ok: null,
        discarded: t % 2 === 0 ? next() < 0.3 : undefined,
      }));
      expect(countTurns(rows), JSON.stringify(rows)).toBe(analyzeTranscript(rows).turns);
    }
  });
});
