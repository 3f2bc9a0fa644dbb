/**
 * The sim endpoint's shared pieces (`behavior.ts` computes the replies): hash draws, the canonical
 * request key, the scenario index that recognises a state by its situation or log, and the reply
 * types. Pure; no clock, no state.
 */
import { createHash } from 'node:crypto';
import type { Scenario } from '../../schema/scenario.ts';
import type { ParsedSimModel } from './profiles.ts';

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

export function sha256Hex(...parts: Array<string | number>): string {
  return createHash('sha256').update(parts.map(String).join('\u0000')).digest('hex');
}

/** Uniform [0, 1) from a key and a label (53 bits of SHA-256). */
export function u(key: string, label: string): number {
  const h = createHash('sha256').update(key).update('\u0000').update(label).digest();
  return (h.readUInt32BE(0) * 2 ** 21 + (h.readUInt32BE(4) >>> 11)) / 2 ** 53;
}

export function pick<T>(items: readonly T[], x: number): T {
  return items[Math.min(items.length - 1, Math.floor(x * items.length))];
}

/** JSON with object keys sorted, so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  // Default sort compares UTF-16 code units, the same order as `<` on strings.
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * Body fields that never influence the reply (transport, bookkeeping, and the token cap: a cap
 * only cuts a reply off, see `server.ts`, it does not change what the model samples).
 */
const VOLATILE_FIELDS = [
  'model',
  'stream',
  'stream_options',
  'user',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
  'max_tokens',
  'max_completion_tokens',
];

/** The request key: seed + model behaviour + canonical body minus volatile fields. */
export function requestKey(seed: number, model: ParsedSimModel, body: Record<string, unknown>): string {
  const filtered = Object.fromEntries(Object.entries(body).filter(([k]) => !VOLATILE_FIELDS.includes(k)));
  return sha256Hex('sim-request', seed, model.behaviourKey, canonicalJson(filtered));
}

// ---------------------------------------------------------------------------------------------
// Scenario index
// ---------------------------------------------------------------------------------------------

/** Whitespace- and JSON-escape-insensitive text for containment tests. */
export function normText(s: string): string {
  return s
    .replace(/\\r\\n|\\n|\\r|\\t/g, ' ')
    .replace(/\\"/g, '"')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

export interface ScenarioIndex {
  scenarios: readonly Scenario[];
  /** The scenario whose situation appears in `text` (longest match wins), or null. */
  bySituation(text: string): Scenario | null;
  /** The scenario whose log appears in `text` (longest match wins), or null. */
  byLog(text: string): Scenario | null;
}

export function buildScenarioIndex(scenarios: readonly Scenario[]): ScenarioIndex {
  const sit = scenarios.map((s) => ({ s, t: normText(s.situation) })).sort((a, b) => b.t.length - a.t.length);
  const logs = scenarios.map((s) => ({ s, t: normText(s.log) })).sort((a, b) => b.t.length - a.t.length);
  const find = (list: Array<{ s: Scenario; t: string }>, text: string) => {
    const n = normText(text);
    for (const e of list) if (e.t !== '' && n.includes(e.t)) return e.s;
    return null;
  };
  return {
    scenarios,
    bySituation: (text) => find(sit, text),
    byLog: (text) => find(logs, text),
  };
}

// ---------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------

export interface SimToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface SimLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

export type SimMode = 'agent' | 'probe_decision' | 'probe' | 'judge' | 'chat';

export interface SimReply {
  mode: SimMode;
  content: string | null;
  reasoning: string | null;
  toolCalls: SimToolCall[];
  finishReason: 'stop' | 'tool_calls' | 'length';
  logprobs: SimLogprob[] | null;
  /** Scenario recognised in the request (null when none). */
  scenarioId: string | null;
  /** For diagnostics/tests: what the sim intended (plan and ground truth). */
  debug: Record<string, unknown>;
}

export interface ChatMsg {
  role?: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: string } }>;
  tool_call_id?: string;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('\n');
  }
  return '';
}

export function toolNames(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: { name?: unknown } }>) : [];
  return tools.map((t) => (typeof t?.function?.name === 'string' ? t.function.name : '')).filter((n) => n !== '');
}

export interface ReplyContext {
  seed: number;
  model: ParsedSimModel;
  body: Record<string, unknown>;
  index: ScenarioIndex;
  /** Precomputed {@link requestKey}. */
  requestKey: string;
  /** Where subject reasoning goes: `reasoning_content` (default), `content`, or both. */
  reasoningIn?: 'reasoning_content' | 'content' | 'both';
}
