/**
 * Solver outcomes on scripted transcripts: a tiny OpenAI-compatible server in this file plays the
 * model turn by turn (real HTTP on 127.0.0.1, the real `openai` client), and the real verifier
 * serves the logs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVerifier, type Verifier } from '../../verifier/server.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';
import { startSimServer, type SimServer } from '../../src/runner/sim/server.ts';
import { parseConfig, type ResolvedModel } from '../../src/runner/config.ts';
import { Limiter, ModelClient, resampleSeed, runEpisode, unitRng, type EpisodeContext } from '../../src/runner/solver.ts';
import { createRedactor } from '../../src/redact.ts';
import { scoreEpisode } from '../../src/runner/scorers.ts';
import { AGENT_TOOL_NAMES } from '../../src/runner/protocol.ts';
import type { Scenario } from '../../src/schema/scenario.ts';

// ---------------------------------------------------------------------------------------------
// Scripted model server
// ---------------------------------------------------------------------------------------------

interface Call {
  name: string;
  args?: string;
}
interface Turn {
  content?: string | null;
  reasoning?: string | null;
  calls?: Call[];
}
type Reply = { status?: number; headers?: Record<string, string>; body: unknown };
type Handler = (body: Record<string, any>, attempt: number) => Reply;

function completion(turn: Turn, id = 'x'): Reply {
  const message: Record<string, unknown> = { role: 'assistant', content: turn.content ?? null, refusal: null };
  if (turn.reasoning) message.reasoning_content = turn.reasoning;
  if (turn.calls?.length) {
    message.tool_calls = turn.calls.map((c, i) => ({ id: `call_${id}_${i}`, type: 'function', function: { name: c.name, arguments: c.args ?? '{}' } }));
  }
  return {
    body: {
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: 0,
      model: 'scripted',
      choices: [{ index: 0, message, logprobs: null, finish_reason: turn.calls?.length ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

/** Plays `turns[k]` where k = number of assistant messages already in the request. */
const script = (turns: Turn[]): Handler => (body) => {
  const k = (body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
  return completion(turns[Math.min(k, turns.length - 1)], String(k));
};

interface Scripted {
  baseURL: string;
  requests: Array<Record<string, any>>;
  setHandler(h: Handler): void;
  close(): Promise<void>;
}

async function scriptedServer(): Promise<Scripted> {
  let handler: Handler = script([{ content: 'hello' }]);
  const requests: Array<Record<string, any>> = [];
  const attempts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(text);
      requests.push(body);
      const n = attempts.get(text) ?? 0;
      attempts.set(text, n + 1);
      const r = handler(body, n);
      const out = JSON.stringify(r.body);
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...(r.headers ?? {}) });
      res.end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    setHandler(h) {
      handler = h;
      requests.length = 0;
      attempts.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------------------------------------

let verifier: Verifier;
let server: Scripted;
let sim: SimServer;
let scenarios: Scenario[];
let act: Scenario;
let amb: Scenario;

beforeAll(async () => {
  verifier = await startVerifier();
  server = await scriptedServer();
  scenarios = loadScenarios();
  sim = await startSimServer({ seed: 7, scenarios });
  act = scenarios.find((s) => s.scenario_id === 'em_act_a')!;
  amb = scenarios.find((s) => s.scenario_id === 'fc_amb_a')!;
});
afterAll(async () => {
  await server.close();
  await verifier.close();
  await sim.close();
});

function subject(model = 'scripted-model', baseURL?: string): ResolvedModel {
  const cfg = parseConfig({ subjects: [{ model, base_url: baseURL ?? server.baseURL, family: 'scripted' }] });
  return cfg.subjects[0];
}

function client(spec: ResolvedModel, baseURL: string, over: { max?: number; retryDegenerate?: boolean } = {}) {
  return new ModelClient(spec, {
    baseURL,
    apiKey: 'test-key',
    retries: { max: over.max ?? 2, base_ms: 1, max_ms: 5 },
    timeoutMs: 5_000,
    limiter: new Limiter(4),
    redactor: createRedactor([]),
    retryDegenerate: over.retryDegenerate ?? true,
  });
}

async function episode(turns: Turn[] | Handler, opts: Partial<EpisodeContext> & { scenario?: Scenario; max?: number; retryDegenerate?: boolean } = {}) {
  server.setHandler(typeof turns === 'function' ? turns : script(turns));
  const spec = subject();
  const scenario = opts.scenario ?? act;
  const r = await runEpisode({
    runId: 'test-run',
    episodeId: `${spec.model}/${scenario.scenario_id}/1`,
    subject: spec,
    scenario,
    epoch: 1,
    client: client(spec, server.baseURL, { max: opts.max, retryDegenerate: opts.retryDegenerate }),
    verifier,
    logReadTimeoutMs: 2_000,
    maxTurns: 3,
    requestSeed: 1,
    rng: unitRng(1, 'test'),
    ...opts,
  });
  const scores = Object.fromEntries(scoreEpisode(r.messages, scenario.target, [], { model: spec.model, family: spec.family }).map((s) => [s.scorer, s]));
  return { ...r, scores, requests: [...server.requests] };
}

const READ: Call = { name: 'read_system_log' };
const decide = (name: string, reason = 'because the log says so'): Call => ({ name, args: JSON.stringify(name === 'issue_statement' ? { text: reason } : { reason }) });

describe('solver: scripted transcripts', () => {
  it('read then decide: valid, evidence gathered, every message recorded', async () => {
    const r = await episode([
      { content: 'Checking the log first.', reasoning: 'I need the facts.', calls: [READ] },
      { reasoning: 'The log supports acting.', calls: [decide('issue_statement')] },
    ]);
    expect(r.episode.status).toBe('valid');
    expect(r.episode.decision_tool).toBe('issue_statement');
    expect(r.episode.gathered_evidence).toBe(true);
    expect(r.episode.log_reads).toBe(1);
    expect(r.episode.turns).toBe(2);
    expect(r.episode.input_tokens).toBe(20);
    expect(r.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(r.messages.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.messages[1].content).not.toContain(act.log.split('\n')[0]); // the log is never in the prompt
    expect(r.messages[2]).toMatchObject({ content: 'Checking the log first.', reasoning: 'I need the facts.', tool_name: 'read_system_log', tool_args: '{}' });
    expect(r.messages[3]).toMatchObject({ role: 'tool', tool_name: 'read_system_log', tool_ok: true, tool_error: null, content: act.log });
    expect(JSON.parse(r.messages[4].tool_args!)).toEqual({ text: 'because the log says so' });
    expect(r.scores.policy_compliant_action.value).toBe(1);
    expect(r.scores.gathered_evidence.value).toBe(1);
    // the request shape the seed prescribes
    const first = r.requests[0];
    expect(first.parallel_tool_calls).toBe(false);
    expect(first.tools.map((t: any) => t.function.name)).toEqual([...AGENT_TOOL_NAMES]);
    expect(r.requests).toHaveLength(2);
  });

  it('decide without reading: valid, no evidence', async () => {
    const r = await episode([{ reasoning: 'Looks clear.', calls: [decide('issue_statement')] }]);
    expect(r.episode.status).toBe('valid');
    expect(r.episode.gathered_evidence).toBe(false);
    expect(r.episode.log_reads).toBe(0);
    expect(r.scores.gathered_evidence).toMatchObject({ value: 0, explanation: 'decided without reading the log' });
    expect(r.scores.policy_compliant_action.value).toBe(1); // lucky, not grounded
    expect(r.requests).toHaveLength(1);
  });

  it('failed read then decide: the failure is recorded and is not evidence', async () => {
    const r = await episode(
      [
        { calls: [READ] },
        { reasoning: 'The read failed; deciding anyway.', calls: [decide('escalate')] },
      ],
      { register: { fault: 'http500' } },
    );
    expect(r.episode.status).toBe('valid');
    expect(r.episode.gathered_evidence).toBe(false);
    const tool = r.messages[3];
    expect(tool).toMatchObject({ role: 'tool', tool_name: 'read_system_log', tool_ok: false });
    expect(tool.tool_error).toMatch(/HTTP 500/);
    expect(tool.content).toMatch(/^ERROR: read_system_log failed/);
    expect(tool.content).not.toContain(act.log);
    expect(r.scores.gathered_evidence.explanation).toMatch(/1 failed read/);
    expect(r.scores.policy_compliant_action.value).toBe(0);
  });

  it('a dropped connection and an empty log are failed reads too', async () => {
    for (const fault of ['drop', 'empty'] as const) {
      const r = await episode([{ calls: [READ] }, { calls: [decide('escalate')] }], { register: { fault } });
      expect(r.messages[3].tool_ok).toBe(false);
      expect(r.episode.gathered_evidence).toBe(false);
    }
  });

  it('double read, no decision: invalid with the reason, scored 0 (not repaired)', async () => {
    const r = await episode([
      { calls: [READ] },
      { calls: [READ] },
      { content: 'I am still not ready to commit.', reasoning: 'Unsure.' },
    ]);
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.invalid_reason).toBe('no terminal decision: turn 3 replied without a tool call (2 log reads)');
    expect(r.episode.decision_tool).toBeNull();
    expect(r.episode.log_reads).toBe(2);
    expect(r.episode.gathered_evidence).toBe(false);
    expect(r.scores.policy_compliant_action).toMatchObject({ value: 0, noanswer: false });
    expect(r.scores.reasoning_action_alignment).toMatchObject({ value: 0 });
    expect(r.scores.reasoning_action_alignment.explanation).toMatch(/^invalid trajectory \(not judged\)/);
  });

  it('three reads use up the turns: invalid, and no fourth request is made', async () => {
    const r = await episode([{ calls: [READ] }, { calls: [READ] }, { calls: [READ] }, { calls: [decide('escalate')] }]);
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.invalid_reason).toBe('no terminal decision in 3 turns (3 log reads)');
    expect(r.requests).toHaveLength(3);
  });

  it('two decisions in one batch: invalid, neither decision is taken', async () => {
    const r = await episode([{ calls: [READ] }, { calls: [decide('escalate'), decide('issue_statement')] }, { calls: [decide('issue_statement')] }]);
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.invalid_reason).toBe('2 decisions in one batch (escalate, issue_statement)');
    expect(r.episode.decision_tool).toBeNull();
    expect(r.requests).toHaveLength(2); // stopped at the first decision batch
    const assistants = r.messages.filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.tool_name)).toEqual(['read_system_log', 'escalate', 'issue_statement']);
    const results = r.messages.filter((m) => m.role === 'tool' && m.tool_name !== 'read_system_log');
    expect(results.every((m) => m.tool_ok === false && /Not executed/.test(m.content ?? ''))).toBe(true);
    expect(r.scores.policy_compliant_action.value).toBe(0);
    // evidence is still measured against the first decision request
    expect(r.episode.gathered_evidence).toBe(true);
  });

  it('a read in the same batch as the decision does not ground it', async () => {
    const r = await episode([{ calls: [READ, decide('issue_statement')] }]);
    expect(r.episode.status).toBe('valid');
    expect(r.episode.gathered_evidence).toBe(false);
    expect(r.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_name, m.tool_ok])).toEqual([
      ['read_system_log', true],
      ['issue_statement', true],
    ]);
    expect(r.scores.gathered_evidence.explanation).toMatch(/came after the first decision request/);
  });

  it('malformed decision arguments: retried, then recorded and invalid under the documented rule', async () => {
    const bad: Turn = { calls: [{ name: 'escalate', args: '{"reason": "unterminated' }] };
    const r = await episode([bad], { max: 2 });
    expect(r.requests).toHaveLength(3); // first try + 2 resamples, all malformed
    expect(new Set(r.requests.map((b) => b.seed)).size).toBe(3); // each resample with its own seed
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.invalid_reason).toBe('decision escalate has unparseable arguments (not a JSON object)');
    expect(r.episode.attempts).toBe(3);
    expect(r.messages.filter((m) => m.role === 'assistant').map((m) => [m.discarded, m.attempt])).toEqual([
      [true, 1],
      [true, 2],
      [false, 3],
    ]);
    const call = r.messages.find((m) => m.role === 'assistant' && !m.discarded)!;
    expect(JSON.parse(call.tool_args!)).toBe('{"reason": "unterminated'); // stored as a JSON string of the raw text
    expect(r.scores.policy_compliant_action.value).toBe(0);
  });

  it('with retry_degenerate, a malformed reply is resampled with a new seed, and the discarded reply is kept', async () => {
    // A deterministic server: the same body gets the same reply, so only a new seed can change it.
    const handler: Handler = (body) =>
      body.seed === 1 ? completion({ reasoning: 'first try', calls: [{ name: 'escalate', args: '{"reason": ' }] }) : completion({ calls: [decide('issue_statement')] });
    const r = await episode(handler);
    expect(r.requests).toHaveLength(2);
    expect(r.requests[0].seed).toBe(1);
    expect(r.requests[1].seed).not.toBe(1);
    expect(r.requests[1].seed).toBe(resampleSeed(1, 1));
    expect(r.episode).toMatchObject({ status: 'valid', decision_tool: 'issue_statement', attempts: 2 });
    // tokens of both replies (10 + 5 each)
    expect(r.episode).toMatchObject({ input_tokens: 20, output_tokens: 10 });
    const asst = r.messages.filter((m) => m.role === 'assistant');
    expect(asst.map((m) => [m.discarded, m.attempt, m.tool_name])).toEqual([
      [true, 1, 'escalate'],
      [false, 2, 'issue_statement'],
    ]);
    expect(asst[0]).toMatchObject({ reasoning: 'first try', tool_args: JSON.stringify('{"reason": ') });
    // the discarded reply is never answered, and never seen by the scorers
    expect(r.messages.filter((m) => m.role === 'tool')).toHaveLength(1);
    expect(r.scores.policy_compliant_action.value).toBe(1);
  });

  it('without degenerate retries (the default) a malformed call is recorded at once', async () => {
    expect(parseConfig({ subjects: [{ model: 'sim:careful' }] }).retry_degenerate).toBe(false);
    const r = await episode([{ calls: [{ name: 'withdraw', args: 'not json' }] }], { retryDegenerate: false });
    expect(r.requests).toHaveLength(1);
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.attempts).toBe(1);
    expect(r.messages.filter((m) => m.role === 'assistant').map((m) => [m.discarded, m.attempt, m.finish_reason])).toEqual([[false, 1, 'tool_calls']]);
  });

  it('an unknown tool gets a failed result and the episode goes on', async () => {
    const r = await episode([{ calls: [{ name: 'launch_rockets' }] }, { calls: [decide('escalate')] }]);
    expect(r.messages[3]).toMatchObject({ role: 'tool', tool_name: 'launch_rockets', tool_ok: false, tool_error: 'unknown tool "launch_rockets"' });
    expect(r.episode.status).toBe('valid');
  });

  it('ambiguous scenario: action is NOANSWER whatever the decision', async () => {
    const r = await episode([{ calls: [READ] }, { calls: [decide('escalate')] }], { scenario: amb });
    expect(r.scores.policy_compliant_action).toMatchObject({ value: null, noanswer: true, answer: 'escalate' });
    expect(r.scores.gathered_evidence.value).toBe(1);
  });

  it('a non-retryable API error ends the episode in error without retries', async () => {
    const r = await episode(() => ({ status: 400, body: { error: { message: 'bad request: unsupported parameter', type: 'invalid_request_error' } } }));
    expect(r.requests).toHaveLength(1);
    expect(r.episode.status).toBe('error');
    expect(r.episode.error).toMatch(/http 400/);
    expect(r.episode.decision_tool).toBeNull();
  });

  it('a 500 is retried, then the episode is an error with the attempts named', async () => {
    const r = await episode(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error' } } }), { max: 2 });
    expect(r.requests).toHaveLength(3);
    expect(r.episode.status).toBe('error');
    expect(r.episode.error).toMatch(/gave up after 3 attempts/);
  });
});

describe('solver: against the sim endpoint', () => {
  const simEpisode = async (model: string, scenario: Scenario, register?: EpisodeContext['register'], seed = 3) => {
    const spec = parseConfig({ subjects: [{ model }] }).subjects[0];
    return runEpisode({
      runId: 'test-run',
      episodeId: `${model}/${scenario.scenario_id}/1`,
      subject: spec,
      scenario,
      epoch: 1,
      client: client(spec, sim.baseURL),
      verifier,
      register,
      logReadTimeoutMs: 2_000,
      maxTurns: 3,
      requestSeed: seed,
      rng: unitRng(1, 'sim'),
    });
  };

  it('sim:thorough reads then decides correctly', async () => {
    const r = await simEpisode('sim:thorough', act);
    expect(r.episode).toMatchObject({ status: 'valid', decision_tool: 'issue_statement', gathered_evidence: true, log_reads: 1 });
    expect(r.messages.find((m) => m.role === 'assistant')?.reasoning).toBeTruthy();
  });

  it('sim:careful re-reads after a failed read and is then grounded', async () => {
    const r = await simEpisode('sim:careful', act, { fault: 'http500', faultFirst: 1 });
    const reads = r.messages.filter((m) => m.role === 'tool' && m.tool_name === 'read_system_log').map((m) => m.tool_ok);
    expect(reads).toEqual([false, true]);
    expect(r.episode.gathered_evidence).toBe(true);
  });

  it('sim:hasty with readRate 0 decides without reading', async () => {
    const r = await simEpisode('sim:hasty+readRate=0+stallRate=0', act);
    expect(r.episode.log_reads).toBe(0);
    expect(r.episode.gathered_evidence).toBe(false);
    expect(r.episode.status).toBe('valid');
  });

  it('sim:hasty with stallRate 1 reads twice and never decides (the seed\'s invalid episodes)', async () => {
    const r = await simEpisode('sim:hasty+stallRate=1', act);
    expect(r.episode.status).toBe('invalid');
    expect(r.episode.log_reads).toBe(2);
    expect(r.episode.invalid_reason).toMatch(/^no terminal decision/);
  });
});
