import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { dataError, usageError } from '../errors.ts';
import {
  AUTHORED_DOMAINS,
  DECISION_TOOLS,
  DECIMAL_PATTERN,
  GENERATED_ID_PATTERN,
  NOANSWER,
  Scenario,
  answerSpace,
  answerSpaceSize,
  applyDecisionRule,
  authoredScenarioId,
  correctAnswers,
  DOMAIN_PREFIX,
  enumerateAnswers,
  type Action,
  type Probe,
} from '../schema/scenario.ts';

/**
 * Scenario loading. Fails fast: the first problem throws a `dataError` with code
 * `scenario.<problem>` and a one-line message naming the file and the field, e.g.
 * `scenarios/em_act_a.json: field "log" is required`.
 *
 * | code | problem |
 * | --- | --- |
 * | scenario.invalidJson | the file is not JSON |
 * | scenario.missingField | a required field is absent |
 * | scenario.unknownField | a field the schema does not know (typo guard) |
 * | scenario.invalidTarget | `target` is not a decision tool or NOANSWER |
 * | scenario.invalidField | any other schema violation (type, enum, length, pattern) |
 * | scenario.idMismatch | `scenario_id` disagrees with domain / decision_type / variant (or `generated`) |
 * | scenario.duplicateId | two files share a `scenario_id` |
 * | scenario.ambiguousTarget | decision_type is ambiguous but target is not NOANSWER |
 * | scenario.noAnswerTarget | target is NOANSWER but decision_type is not ambiguous |
 * | scenario.typeTarget | act must target issue_statement; escalate must not |
 * | scenario.goldActions | gold_actions lacks the target, or an ambiguous gold set contains issue_statement |
 * | scenario.duplicateProbe | two probes share a probe_id |
 * | scenario.probeAnswer | a choice answer not among its options, or repeated options |
 * | scenario.ruleUnknownProbe | a rule names a probe that is not declared |
 * | scenario.ruleUnknownAnswer | a rule names an answer outside the probe's answer space |
 * | scenario.answerSpaceTooLarge | the joint answer space is too large to enumerate |
 * | scenario.ruleDeadRow | a rule row never fires anywhere in the answer space |
 * | scenario.ruleConstant | the rule gives the same action everywhere (probes decide nothing) |
 * | scenario.ruleTarget | the rule on the correct probe answers does not give the target |
 * | scenario.logLeak | a line of the log appears verbatim in the situation or policy |
 * | scenario.cueInSituation | the situation points at the log (that sentence belongs in `log_cue`) |
 */

export const MAX_ANSWER_SPACE = 200_000;

const fail = (code: string, file: string, msg: string): never => {
  throw dataError(`scenario.${code}`, `${file}: ${msg}`);
};

function pathString(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p as string];
  }
  return v;
}

const lowerFirst = (m: string) => m.charAt(0).toLowerCase() + m.slice(1);

function zodFail(issue: z.core.$ZodIssue, raw: unknown, file: string): never {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const where = pathString(path);
    const key = issue.keys[0];
    return fail('unknownField', file, `field "${where ? `${where}.${key}` : key}" is not a known field`);
  }
  const where = pathString(path) || '(root)';
  const present = path.length === 0 ? raw !== undefined : valueAt(raw, path) !== undefined;
  if (!present) return fail('missingField', file, `field "${where}" is required`);
  if (where === 'target') {
    return fail('invalidTarget', file, `field "target" must be one of ${[...DECISION_TOOLS, NOANSWER].join(', ')}, got ${JSON.stringify(valueAt(raw, path))}`);
  }
  return fail('invalidField', file, `field "${where}" ${lowerFirst(issue.message.replace(/^Invalid input: /, ''))}`);
}

/**
 * Parses and validates one scenario. `json` is the file text or an already-parsed value; `file`
 * names it in errors. Returns the typed scenario or throws `dataError('scenario.*')`.
 */
export function parseScenario(json: unknown, file: string): Scenario {
  let raw = json;
  if (typeof json === 'string') {
    try {
      raw = JSON.parse(json);
    } catch (e) {
      fail('invalidJson', file, `not valid JSON (${(e as Error).message.replace(/\s*\n\s*/g, ' ')})`);
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('invalidField', file, 'expected a JSON object');
  const parsed = Scenario.safeParse(raw);
  if (!parsed.success) {
    // Report a missing field before any other issue, so the message names the real cause.
    const issues = parsed.error.issues;
    const missing = issues.find((i) => i.code !== 'unrecognized_keys' && valueAt(raw, i.path) === undefined);
    zodFail(missing ?? issues[0], raw, file);
  }
  validateScenario(parsed.data as Scenario, file);
  return parsed.data as Scenario;
}

/** Semantic checks beyond the schema (see the module table). Throws on the first problem. */
export function validateScenario(s: Scenario, file: string): void {
  checkIdentity(s, file);
  checkTarget(s, file);
  checkProbes(s.probes, file);
  checkRule(s, file);
  checkLeak(s, file);
  checkCue(s, file);
}

function checkIdentity(s: Scenario, file: string): void {
  if (GENERATED_ID_PATTERN.test(s.scenario_id)) {
    const g = s.generated;
    if (!g) return fail('idMismatch', file, `field "generated" is required for a generated id ("${s.scenario_id}")`);
    if (s.domain !== g.family) fail('idMismatch', file, `field "domain" is "${s.domain}" but generated.family is "${g.family}"`);
    if (s.variant !== 'g') fail('idMismatch', file, `field "variant" must be "g" for a generated state, got "${s.variant}"`);
    const want = `${DOMAIN_PREFIX[g.family]}_${g.split}_${g.state_seed.toString(16).padStart(8, '0')}`;
    if (s.scenario_id !== want) fail('idMismatch', file, `field "scenario_id" is "${s.scenario_id}" but generated metadata says "${want}"`);
    return;
  }
  if (s.generated) fail('idMismatch', file, `field "generated" is only allowed on generated states, not "${s.scenario_id}"`);
  if (!(AUTHORED_DOMAINS as readonly string[]).includes(s.domain)) {
    fail('idMismatch', file, `field "domain" is "${s.domain}" but authored scenarios use ${AUTHORED_DOMAINS.join(', ')}`);
  }
  if (s.variant === 'g') fail('idMismatch', file, `field "variant" must be "a" or "b" for an authored scenario`);
  const want = authoredScenarioId(s.domain, s.decision_type, s.variant);
  if (s.scenario_id !== want) {
    fail('idMismatch', file, `field "scenario_id" is "${s.scenario_id}" but domain/decision_type/variant say "${want}"`);
  }
}

function checkTarget(s: Scenario, file: string): void {
  if (s.decision_type === 'ambiguous' && s.target !== NOANSWER) {
    fail('ambiguousTarget', file, `field "target" must be NOANSWER when decision_type is ambiguous, got "${s.target}"`);
  }
  if (s.target === NOANSWER && s.decision_type !== 'ambiguous') {
    fail('noAnswerTarget', file, `field "target" is NOANSWER but decision_type is "${s.decision_type}" (only ambiguous scenarios may target NOANSWER)`);
  }
  if (s.decision_type === 'act' && s.target !== 'issue_statement') {
    fail('typeTarget', file, `field "target" must be issue_statement when decision_type is act, got "${s.target}"`);
  }
  if (s.decision_type === 'escalate' && s.target === 'issue_statement') {
    fail('typeTarget', file, `field "target" must not be issue_statement when decision_type is escalate`);
  }
  if (s.target === NOANSWER) {
    if (s.gold_actions.includes('issue_statement')) {
      fail('goldActions', file, `field "gold_actions" of an ambiguous scenario must not include issue_statement`);
    }
  } else if (!s.gold_actions.includes(s.target)) {
    fail('goldActions', file, `field "gold_actions" must include the target "${s.target}"`);
  }
}

function checkProbes(probes: readonly Probe[], file: string): void {
  const seen = new Set<string>();
  probes.forEach((p, i) => {
    if (seen.has(p.probe_id)) fail('duplicateProbe', file, `field "probes[${i}].probe_id" repeats "${p.probe_id}"`);
    seen.add(p.probe_id);
    if (p.kind === 'choice') {
      if (new Set(p.options).size !== p.options.length) fail('probeAnswer', file, `field "probes[${i}].options" repeats an option`);
      if (!p.options.includes(p.answer)) {
        fail('probeAnswer', file, `field "probes[${i}].answer" is "${p.answer}" which is not one of its options`);
      }
    }
  });
}

function checkRule(s: Scenario, file: string): void {
  const { probes, decision_rule: rule } = s;
  const byId = new Map(probes.map((p) => [p.probe_id, p]));
  rule.rules.forEach((row, r) => {
    for (const [pid, value] of Object.entries(row.when)) {
      const p = byId.get(pid);
      if (!p) return fail('ruleUnknownProbe', file, `field "decision_rule.rules[${r}].when.${pid}" names no declared probe`);
      const ok =
        p.kind === 'yes_no' ? value === 'yes' || value === 'no' : p.kind === 'choice' ? p.options.includes(value) : DECIMAL_PATTERN.test(value);
      if (!ok) {
        const space = p.kind === 'number' ? 'a canonical decimal string' : `one of ${answerSpace(p, rule).join(', ')}`;
        fail('ruleUnknownAnswer', file, `field "decision_rule.rules[${r}].when.${pid}" is "${value}" but must be ${space}`);
      }
    }
  });
  const size = answerSpaceSize(probes, rule);
  if (size > MAX_ANSWER_SPACE) fail('answerSpaceTooLarge', file, `field "probes" spans ${size} answer assignments (limit ${MAX_ANSWER_SPACE})`);
  // Enumerate the whole answer space: which rows ever fire, and which actions occur.
  const fired = new Set<number>();
  const outcomes = new Set<Action>();
  for (const answers of enumerateAnswers(probes, rule)) {
    const hit = rule.rules.findIndex((row) => Object.entries(row.when).every(([k, v]) => answers[k] === v));
    if (hit >= 0) fired.add(hit);
    outcomes.add(hit >= 0 ? rule.rules[hit].action : rule.default);
  }
  rule.rules.forEach((_, r) => {
    if (!fired.has(r)) fail('ruleDeadRow', file, `field "decision_rule.rules[${r}]" never fires (an earlier row always matches first or its conditions are contradictory)`);
  });
  if (outcomes.size < 2) {
    fail('ruleConstant', file, `field "decision_rule" gives ${[...outcomes][0]} for every probe answer, so the probes decide nothing`);
  }
  const got = applyDecisionRule(rule, correctAnswers(probes));
  if (got !== s.target) {
    fail('ruleTarget', file, `field "decision_rule" gives "${got}" on the correct probe answers but the target is "${s.target}"`);
  }
}

function checkLeak(s: Scenario, file: string): void {
  const visible = `${s.situation}\n${s.policy}`.toLowerCase();
  for (const line of s.log.split('\n')) {
    const t = line.trim().toLowerCase();
    if (t.length >= 24 && visible.includes(t)) {
      fail('logLeak', file, `field "log" line "${line.trim().slice(0, 60)}" also appears in the situation or policy`);
    }
  }
}

/** Words in a situation that point the agent at the log (issue 24, point 7). */
export const LOG_CUE_PATTERN = /\bsystem log\b|\bread_system_log\b|\bthe log\b/i;

/**
 * The neutral prompt shows the situation as written, so a situation that says where the decisive
 * facts are ("... are in the system log.") would cue the agent; that sentence belongs in `log_cue`,
 * which only `--prompt instructed` shows.
 */
function checkCue(s: Scenario, file: string): void {
  const hit = LOG_CUE_PATTERN.exec(s.situation);
  if (hit) {
    const sentence = s.situation.split(/(?<=[.!?])\s+/).find((x) => LOG_CUE_PATTERN.test(x)) ?? hit[0];
    fail('cueInSituation', file, `field "situation" points at the log ("${sentence.trim().slice(0, 80)}"); move that sentence to field "log_cue"`);
  }
}

/**
 * Loads every `*.json` in `dir` (non-recursive), validates each, rejects duplicate ids, and returns
 * the scenarios sorted by `scenario_id`. A missing directory is a usage error; an empty one a data
 * error.
 */
export function loadScenarios(dir = 'scenarios'): Scenario[] {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (e) {
    throw usageError('scenario.dirMissing', `${dir}: scenario directory not found or not readable`, e);
  }
  if (names.length === 0) throw dataError('scenario.none', `${dir}: no scenario files (*.json)`);
  const seen = new Map<string, string>();
  const out: Scenario[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const s = parseScenario(readFileSync(file, 'utf8'), file);
    const prev = seen.get(s.scenario_id);
    if (prev) fail('duplicateId', file, `field "scenario_id" "${s.scenario_id}" is also used by ${prev}`);
    seen.set(s.scenario_id, file);
    out.push(s);
  }
  return out.sort((a, b) => (a.scenario_id < b.scenario_id ? -1 : a.scenario_id > b.scenario_id ? 1 : 0));
}
