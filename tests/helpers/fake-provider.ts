/**
 * A provider-realistic OpenAI-compatible endpoint for tests: real HTTP on 127.0.0.1 (port 0). It
 * plays a simple Standoff subject (read the log, then decide), judge (`ALIGNED`) and probe
 * answerer, and answers the way real servers do. Every quirk below is modelled on a documented
 * behaviour; the source is named where the quirk is implemented:
 *
 * - `flavor` picks the error envelopes, the reasoning field and the truncation shape of:
 *   `openai` (api.openai.com; openai/openai-openapi `openapi.yaml`), `vllm`
 *   (vllm/entrypoints/openai: `serving_chat.py`, `engine/serving.py`, `engine/protocol.py`),
 *   `ollama` (ollama/ollama `openai/openai.go`) and `llamacpp` (ggml-org/llama.cpp
 *   `tools/server`: `server-task.cpp`, `utils.hpp`).
 * - `refuse`: parameters refused with a 400 (OpenAI reasoning models), or with FastAPI/pydantic's
 *   422 `extra_forbidden` (`refuseStyle: 'pydantic'`).
 * - `reasoningTokens`: tokens of reasoning before every answer; a cap below what a reply needs cuts
 *   it off (`finish_reason: "length"`).
 * - `parallelDecisions`: two decisions in one batch unless the request says
 *   `parallel_tool_calls: false` (vLLM then keeps only the first call:
 *   `maybe_filter_parallel_tool_calls`).
 * - `emptyToolCallIds`: tool calls with `"id": ""` (llama.cpp before ggml-org/llama.cpp#12292;
 *   issues #11992, #12279).
 * - `maxModelLen`: vLLM's 400 when the prompt is longer than the model's context.
 * - `apiKey`: 401 in the flavor's format without `Authorization: Bearer <key>`.
 * - `html501`: a plain web server (Python's `http.server`), which answers POST with its 501 HTML page.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Flavor = 'openai' | 'vllm' | 'ollama' | 'llamacpp';
export type RefusableParam = 'max_tokens' | 'temperature' | 'parallel_tool_calls' | 'seed' | 'logprobs';

export interface FakeProviderOptions {
  flavor: Flavor;
  /** Model ids served (default: any for llamacpp, which ignores the field; else `['fake-model']`). */
  models?: string[];
  /** Models that answer as judges. */
  judges?: string[];
  apiKey?: string;
  refuse?: RefusableParam[];
  refuseStyle?: 'openai' | 'pydantic';
  reasoningTokens?: number;
  parallelDecisions?: boolean;
  emptyToolCallIds?: boolean;
  maxModelLen?: number;
  html501?: boolean;
}

export interface RecordedRequest {
  body: Record<string, any>;
  authorization: string | undefined;
  status: number;
}

export interface FakeProvider {
  baseURL: string;
  requests: RecordedRequest[];
  options: FakeProviderOptions;
  close(): Promise<void>;
}

const send = (res: ServerResponse, status: number, body: unknown, type = 'application/json') => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const tokens = (s: string) => Math.ceil(s.length / 4);

/** CPython `http.server.DEFAULT_ERROR_MESSAGE` as `send_error(501, "Unsupported method ('POST')")` fills it in. */
export const PYTHON_501_PAGE = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method ('POST').</p>
        <p>Error code explanation: 501 - Server does not support this operation.</p>
    </body>
</html>
`;

function refusal(o: FakeProviderOptions, param: RefusableParam, body: Record<string, any>): [number, unknown] {
  if (o.refuseStyle === 'pydantic') {
    // FastAPI with a pydantic model that forbids extra fields: 422, `{"detail": [...]}` (pydantic v2 error list).
    return [422, { detail: [{ type: 'extra_forbidden', loc: ['body', param], msg: 'Extra inputs are not permitted', input: body[param] }]}];
  }
  // OpenAI's reasoning models (issue reports quoting the API: BerriAI/litellm, fast-agent#279,
  // OpenHands#4131, griptape ComfyUI#312): 400 with `param` and `code`.
  const message: Record<RefusableParam, string> = {
    max_tokens: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    temperature: `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
    parallel_tool_calls: "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
    seed: "Unsupported parameter: 'seed' is not supported with this model.",
    logprobs: "Unsupported parameter: 'logprobs' is not supported with this model.",
  };
  return [400, { error: { message: message[param], type: 'invalid_request_error', param, code: param === 'temperature' ? 'unsupported_value' : 'unsupported_parameter' } }];
}

function notFound(o: FakeProviderOptions, model: string): [number, unknown] {
  switch (o.flavor) {
    case 'vllm': // engine/serving.py `_check_model`; ErrorInfo has an integer code
      return [404, { error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 } }];
    case 'ollama': // openai/openai.go NewError(404, ...) around routes.go's "model %q not found, try pulling it first"
      return [404, { error: { message: `model "${model}" not found, try pulling it first`, type: 'not_found_error', param: null, code: null } }];
    default:
      return [404, { error: { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' } }];
  }
}

function unauthorized(o: FakeProviderOptions): [number, unknown] {
  switch (o.flavor) {
    case 'vllm': // api_server.py authentication middleware with --api-key
      return [401, { error: 'Unauthorized' }];
    case 'llamacpp': // format_error_response(ERROR_TYPE_AUTHENTICATION)
      return [401, { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } }];
    default:
      return [401, { error: { message: 'Incorrect API key provided: sk-wrong. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }];
  }
}

interface Reply {
  content: string | null;
  reasoning: string | null;
  calls: Array<{ name: string; args: string }>;
}


/** What the scripted model says. */
function reply(o: FakeProviderOptions, body: Record<string, any>): Reply {
  const messages = body.messages as Array<{ role: string; content?: unknown }>;
  const reasoning = o.reasoningTokens ? 'Let me think about the policy and the log. '.repeat(Math.ceil(o.reasoningTokens / 11)) : null;
  const tools: string[] = (body.tools ?? []).map((t: any) => t.function?.name);
  if (tools.includes('read_system_log')) {
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (messages.some((m) => typeof m.content === 'string' && m.content.includes('connectivity check'))) return { content: 'OK', reasoning, calls: [] };
    if (turn === 0) return { content: 'I will read the log first.', reasoning, calls: [{ name: 'read_system_log', args: '{}' }] };
    const calls = [{ name: 'escalate', args: JSON.stringify({ reason: 'The log does not verify the facts.' }) }];
    if (o.parallelDecisions && body.parallel_tool_calls !== false) calls.push({ name: 'withdraw', args: JSON.stringify({ reason: 'Also declining.' }) });
    return { content: null, reasoning, calls };
  }
  if ((o.judges ?? []).includes(body.model)) return { content: 'ALIGNED\nThe reasoning supports the action.', reasoning, calls: [] };
  const last = String(messages.at(-1)?.content ?? '');
  return { content: /Which action should be taken now\?/.test(last) ? 'escalate' : last.includes('connectivity check') ? 'OK' : 'yes', reasoning, calls: [] };
}

function completion(o: FakeProviderOptions, body: Record<string, any>, n: number): unknown {
  const r = reply(o, body);
  const reasoningTokens = r.reasoning ? tokens(r.reasoning) : 0;
  const needed = reasoningTokens + tokens(r.content ?? '') + r.calls.reduce((a, c) => a + tokens(c.name + c.args) + 3, 0);
  const cap = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : typeof body.max_tokens === 'number' ? body.max_tokens : Infinity;
  const cut = needed > cap;
  const message: Record<string, unknown> = { role: 'assistant' };
  // Where reasoning goes: vLLM (reasoning parser) and llama.cpp send `reasoning_content`; Ollama
  // sends `reasoning`; OpenAI's chat completions return none.
  const field = o.flavor === 'ollama' ? 'reasoning' : o.flavor === 'openai' ? null : 'reasoning_content';
  if (cut) {
    // Out of tokens while reasoning: no content, no tool call, `finish_reason: "length"` (vLLM
    // serving_chat.py passes the engine's finish reason through; llama.cpp's is "length" unless a
    // stop word or EOS ended the reply; Ollama maps done_reason "length"; OpenAI's reasoning models
    // answer with empty content).
    message.content = o.flavor === 'openai' ? '' : null;
    if (field && r.reasoning) message[field] = r.reasoning.slice(0, cap * 4);
  } else {
    message.content = r.content;
    if (field && r.reasoning) message[field] = r.reasoning;
    if (r.calls.length) {
      message.tool_calls = r.calls.map((c, i) => ({ id: o.emptyToolCallIds ? '' : `call_${n}_${i}`, type: 'function', function: { name: c.name, arguments: c.args } }));
    }
  }
  const prompt = tokens(JSON.stringify(body.messages));
  const used = cut ? cap : needed;
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: cut ? 'length' : r.calls.length ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: used, total_tokens: prompt + used, completion_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, used) } },
  };
}

function answer(o: FakeProviderOptions, req: IncomingMessage, body: Record<string, any>, n: number): [number, unknown] {
  if (o.apiKey !== undefined && req.headers.authorization !== `Bearer ${o.apiKey}`) return unauthorized(o);
  const models = o.models ?? ['fake-model'];
  if (o.flavor !== 'llamacpp' && !models.includes(body.model) && !(o.judges ?? []).includes(body.model)) return notFound(o, String(body.model));
  for (const p of o.refuse ?? []) {
    // OpenAI's reasoning models accept only the default temperature (1).
    if (body[p] !== undefined && !(p === 'temperature' && body.temperature === 1)) return refusal(o, p, body);
  }
  if (o.maxModelLen !== undefined) {
    // engine/serving.py `_validate_input` (VLLMValidationError: the parameter goes into `param`)
    const n = tokens(JSON.stringify(body.messages));
    if (n >= o.maxModelLen) {
      return [400, { error: { message: `This model's maximum context length is ${o.maxModelLen} tokens. However, your request has ${n} input tokens. Please reduce the length of the input messages.`, type: 'BadRequestError', param: 'input_tokens', code: 400 } }];
    }
    const cap = body.max_completion_tokens ?? body.max_tokens;
    if (typeof cap === 'number' && n + cap > o.maxModelLen) {
      const message = `'max_tokens' or 'max_completion_tokens' is too large: ${cap}. This model's maximum context length is ${o.maxModelLen} tokens and your request has ${n} input tokens (${cap} > ${o.maxModelLen} - ${n}).`;
      return [400, { error: { message, type: 'BadRequestError', param: 'max_tokens', code: 400 } }];
    }
  }
  return [200, completion(o, body, n)];
}

export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (options.html501) {
        requests.push({ body: {}, authorization: req.headers.authorization, status: 501 });
        return send(res, 501, PYTHON_501_PAGE, 'text/html;charset=utf-8');
      }
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(res, 400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
      }
      const [status, out] = answer(options, req, body, n++);
      requests.push({ body, authorization: req.headers.authorization, status });
      send(res, status, out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    options,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Request bodies by kind (the endpoint check, agent turns, judges, probes). */
export function requestKinds(p: FakeProvider) {
  const isCheck = (b: Record<string, any>) => JSON.stringify(b.messages ?? []).includes('connectivity check');
  const isAgent = (b: Record<string, any>) => (b.tools ?? []).some((t: any) => t.function?.name === 'read_system_log');
  return {
    checks: p.requests.filter((r) => isCheck(r.body)),
    agent: p.requests.filter((r) => !isCheck(r.body) && isAgent(r.body)),
    judge: p.requests.filter((r) => !isCheck(r.body) && (p.options.judges ?? []).includes(r.body.model)),
    probe: p.requests.filter((r) => !isCheck(r.body) && !isAgent(r.body) && !(p.options.judges ?? []).includes(r.body.model)),
  };
}
