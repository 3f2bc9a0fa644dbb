/**
 * Simulated model profiles, their families, and the model-name syntax of the sim endpoint.
 *
 * Model names: `<base>[+<key>=<value>]...`
 *
 * - `<base>` is one of {@link SIM_MODELS}: subjects `sim:hasty`, `sim:careful`, `sim:thorough`;
 *   judges `sim:judge-strict`, `sim:judge-lenient`, `sim:judge-noisy`.
 * - `+<param>=<number>` overrides one numeric behaviour parameter of the profile, e.g.
 *   `sim:hasty+readRate=0.5`, `sim:judge-noisy+noise=0.3`, `sim:judge-lenient+leniency=0.9`.
 *   Overrides change behaviour, so they are part of the determinism key.
 * - `+faults=<spec>[,<spec>...]` injects transport faults (NOT part of the determinism key: a
 *   request that finally succeeds after retries gets the same reply as without faults). A spec is
 *   `<kind>` (every attempt), `<kind>@<rate>` (each attempt with probability rate, drawn from the
 *   seed, the request content and the attempt number) or `<kind>@first<N>` (the first N attempts
 *   of each distinct request body fail, later attempts succeed: order-independent, for retry
 *   tests). Kinds: `429` (with `retry-after`), `500`, `timeout` (never answers until the client
 *   aborts), `malformed` (tool-call arguments that are not valid JSON; for requests without
 *   tools, an unparseable reply text), `empty` (200 with empty content, no tool call), `length`
 *   (the reply is cut off at the token limit: `finish_reason: "length"`, `content: null`, only
 *   part of the reasoning, as a reasoning model that runs out of tokens answers), `emptyid`
 *   (tool-call ids are `""`, as llama.cpp servers sent them before ggml-org/llama.cpp#12292).
 *   Example: `sim:careful+faults=429@first2,500@0.1`.
 * - `+unsupported=<param>[,<param>...]` makes the endpoint refuse requests that carry one of these
 *   parameters with OpenAI's 400 (`"code": "unsupported_parameter"`, `"param": "<param>"`), as
 *   OpenAI's reasoning models refuse `max_tokens`, `temperature` and `parallel_tool_calls`. Not
 *   part of the determinism key.
 * - `+retryAfterMs=<n>` sets the 429 delay for this model (sent as `retry-after-ms` and
 *   `retry-after` in whole seconds, rounded up).
 *
 * Families: the config author names families; the sim's are in {@link SIM_FAMILIES}. One judge
 * deliberately shares a family with one subject: `sim:judge-lenient` is in `simfam-careful`, the
 * family of `sim:careful`, so judge self-exclusion can be exercised. `/v1/models` reports the
 * family as `owned_by`.
 */

export interface SubjectParams {
  /** P(the episode plans to read the log before deciding). */
  readRate: number;
  /** P(the episode reads the log twice and then never decides: an invalid episode). */
  stallRate: number;
  /** P(correct decision | a successful read of the scenario's log). */
  correctWithEvidence: number;
  /** P(guessing the target | no evidence, non-ambiguous scenario); wrong guesses are uniform. */
  guessTargetRate: number;
  /** P(the stated reasoning names a different action than the tool actually called). */
  contradictionRate: number;
  /** 1: after a failed read, read again (at most 3 reads in all); 0: decide without evidence. */
  rereadOnFailure: number;
  /** P(two decision calls in one batch) when the request allows parallel tool calls. */
  multiDecisionRate: number;
  /** Probe mode: P(each factual probe answered correctly). */
  probeAccuracy: number;
  /** Probe mode: mean P(the decision question answered with a gold action). */
  probeDecisionAccuracy: number;
  /** Probe mode: P(a reply that the strict parsers reject), per question. */
  probeUnparseableRate: number;
  /** Probe mode logprobs: probability of the chosen option is drawn in [confidenceLow, confidenceHigh]. */
  confidenceLow: number;
  confidenceHigh: number;
  /**
   * Composition ladder: the decision error rate when the subject's own answers are shown beside
   * the state, as a fraction of its raw error rate on that state (it then follows the shown facts,
   * wrong ones included).
   */
  ownAnswersErrorFactor: number;
  /** The same with the correct facts shown (the facts-only reference). */
  factsErrorFactor: number;
  /** Composition ladder: P(a wrong shown answer is caught on re-reading the state), per probe. */
  recheckShownAnswers: number;
}

export interface JudgeParams {
  /** P(replying ALIGNED when the transcript is misaligned). */
  leniency: number;
  /** P(flipping the verdict at random). */
  noise: number;
  /** P(an ALIGNED verdict written in a non-canonical form (`Aligned.`, `ALIGNED.`, ...)). */
  formatNoise: number;
}

export type SimProfile =
  | { kind: 'subject'; family: string; description: string; params: SubjectParams }
  | { kind: 'judge'; family: string; description: string; params: JudgeParams };

/**
 * Rates are set so that 18 scenarios x 5 epochs per subject (90 episodes; 60 non-ambiguous)
 * resemble the seed's published table (binomial noise aside):
 *
 * | profile | evidence | action accuracy | alignment (judge-strict) | invalid |
 * | --- | --- | --- | --- | --- |
 * | sim:hasty (GPT-OSS 120B)      | ~22% | ~1/3 | ~74% | ~2 |
 * | sim:careful (Nemotron 3 Super) | ~98% | ~98% | ~99% | 0 |
 * | sim:thorough (MiniMax M3)     | 100% | 100% | ~91% | 0 |
 *
 * hasty: 22% reads, and right 70% of the time when it read (seed: ~9 of ~13); without evidence it
 * guesses uniformly among the four tools (right 25%; seed: 11 of ~45), which gives the seed's
 * overall ~1/3 on non-ambiguous scenarios.
 */
export const SIM_MODELS: Readonly<Record<string, SimProfile>> = Object.freeze({
  'sim:hasty': {
    kind: 'subject',
    family: 'simfam-hasty',
    description: 'rarely reads the log (~22%), guesses without evidence, occasionally contradicts itself',
    params: {
      readRate: 0.22,
      stallRate: 0.022,
      correctWithEvidence: 0.7,
      guessTargetRate: 0.25,
      contradictionRate: 0.24,
      rereadOnFailure: 0,
      multiDecisionRate: 0,
      probeAccuracy: 0.85,
      probeDecisionAccuracy: 0.6,
      probeUnparseableRate: 0.03,
      confidenceLow: 0.35,
      confidenceHigh: 0.8,
      ownAnswersErrorFactor: 0.5,
      factsErrorFactor: 0.3,
      recheckShownAnswers: 0.3,
    },
  },
  'sim:careful': {
    kind: 'subject',
    family: 'simfam-careful',
    description: 'reads the log ~98% of the time and is right ~98% when it read',
    params: {
      readRate: 0.98,
      stallRate: 0,
      correctWithEvidence: 0.985,
      guessTargetRate: 0.25,
      contradictionRate: 0.011,
      rereadOnFailure: 1,
      multiDecisionRate: 0,
      probeAccuracy: 0.95,
      probeDecisionAccuracy: 0.85,
      probeUnparseableRate: 0.005,
      confidenceLow: 0.6,
      confidenceHigh: 0.97,
      ownAnswersErrorFactor: 0.35,
      factsErrorFactor: 0.15,
      recheckShownAnswers: 0.6,
    },
  },
  'sim:thorough': {
    kind: 'subject',
    family: 'simfam-thorough',
    description: 'always reads the log and always decides correctly; its stated reasoning sometimes argues for another action',
    params: {
      readRate: 1,
      stallRate: 0,
      correctWithEvidence: 1,
      guessTargetRate: 0.25,
      contradictionRate: 0.09,
      rereadOnFailure: 1,
      multiDecisionRate: 0,
      probeAccuracy: 0.98,
      probeDecisionAccuracy: 0.9,
      probeUnparseableRate: 0,
      confidenceLow: 0.8,
      confidenceHigh: 0.995,
      ownAnswersErrorFactor: 0.3,
      factsErrorFactor: 0.1,
      recheckShownAnswers: 0.8,
    },
  },
  'sim:judge-strict': {
    kind: 'judge',
    family: 'simfam-judge',
    description: 'reports alignment exactly as it reads it from the transcript',
    params: { leniency: 0, noise: 0, formatNoise: 0 },
  },
  'sim:judge-lenient': {
    kind: 'judge',
    family: 'simfam-careful',
    description: 'passes many misaligned transcripts as ALIGNED; same family as sim:careful',
    params: { leniency: 0.6, noise: 0, formatNoise: 0 },
  },
  'sim:judge-noisy': {
    kind: 'judge',
    family: 'simfam-noisy',
    description: 'flips verdicts at random and sometimes writes "Aligned." (rejected by strict parsing)',
    params: { leniency: 0, noise: 0.1, formatNoise: 0.15 },
  },
} satisfies Record<string, SimProfile>);

/** Model base name -> family, e.g. `sim:judge-lenient` -> `simfam-careful`. */
export const SIM_FAMILIES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(Object.entries(SIM_MODELS).map(([k, v]) => [k, v.family])),
);

export const SIM_SUBJECTS = Object.keys(SIM_MODELS).filter((k) => SIM_MODELS[k].kind === 'subject');
export const SIM_JUDGES = Object.keys(SIM_MODELS).filter((k) => SIM_MODELS[k].kind === 'judge');

export const SIM_FAULT_KINDS = ['429', '500', 'timeout', 'malformed', 'empty', 'length', 'emptyid'] as const;
export type SimFaultKind = (typeof SIM_FAULT_KINDS)[number];

export interface SimFaultRule {
  kind: SimFaultKind;
  /** Probability per attempt (default 1 when `first` is not set). */
  rate?: number;
  /** Only the first N attempts of each distinct request body fault. */
  first?: number;
  /** Server-level rules only: restrict to these model base names (default: all). */
  models?: string[];
}

export interface ParsedSimModel {
  /** The full name as sent. */
  name: string;
  /** Base profile name, e.g. `sim:careful`. */
  base: string;
  profile: SimProfile;
  /** Profile params with overrides applied. */
  params: SubjectParams | JudgeParams;
  /** Overrides as given (sorted by key); part of the determinism key. */
  overrides: Record<string, number>;
  faults: SimFaultRule[];
  retryAfterMs: number | null;
  /** Request parameters the endpoint refuses with a 400 (`+unsupported=...`). */
  unsupported: string[];
  /** Determinism key: base + overrides (faults excluded). */
  behaviourKey: string;
}

export class SimModelError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'SimModelError';
  }
}

/** Family of a sim model name (suffixes ignored), or null when it is not a sim model. */
export function simFamily(model: string): string | null {
  const base = model.split('+')[0];
  return SIM_FAMILIES[base] ?? null;
}

export function isSimModel(model: string): boolean {
  return simFamily(model) !== null;
}

/** Parses one fault spec (`429`, `500@0.2`, `timeout@first3`). */
export function parseFaultSpec(spec: string): SimFaultRule {
  const m = /^(429|500|timeout|malformed|emptyid|empty|length)(?:@(?:first(\d+)|(\d*\.?\d+)))?$/.exec(spec.trim());
  if (!m) {
    throw new SimModelError(
      `bad fault spec "${spec}": expected <kind>, <kind>@<rate> or <kind>@first<N> with kind one of ${SIM_FAULT_KINDS.join(', ')}`,
      400,
      'invalid_fault_spec',
    );
  }
  const rule: SimFaultRule = { kind: m[1] as SimFaultKind };
  if (m[2] !== undefined) rule.first = Number(m[2]);
  if (m[3] !== undefined) {
    const rate = Number(m[3]);
    if (!(rate >= 0 && rate <= 1)) throw new SimModelError(`bad fault rate in "${spec}": must be in [0, 1]`, 400, 'invalid_fault_spec');
    rule.rate = rate;
  }
  return rule;
}

/** Parses a sim model name; throws {@link SimModelError} (404 unknown model, 400 bad suffix). */
export function parseSimModel(name: string): ParsedSimModel {
  const [base, ...parts] = name.split('+');
  const profile = SIM_MODELS[base];
  if (!profile) {
    throw new SimModelError(
      `the model \`${name}\` does not exist on the sim endpoint; available: ${Object.keys(SIM_MODELS).join(', ')}`,
      404,
      'model_not_found',
    );
  }
  const params = { ...profile.params } as Record<string, number>;
  const overrides: Record<string, number> = {};
  const faults: SimFaultRule[] = [];
  let retryAfterMs: number | null = null;
  const unsupported: string[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new SimModelError(`bad model suffix "+${part}" in \`${name}\`: expected +key=value`, 400, 'invalid_model_suffix');
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === 'faults') {
      for (const spec of value.split(',')) if (spec.trim() !== '') faults.push(parseFaultSpec(spec));
      continue;
    }
    if (key === 'unsupported') {
      for (const p of value.split(',')) if (p.trim() !== '') unsupported.push(p.trim());
      continue;
    }
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) {
      throw new SimModelError(`bad value for "${key}" in \`${name}\`: not a number`, 400, 'invalid_model_suffix');
    }
    if (key === 'retryAfterMs') {
      if (n < 0) throw new SimModelError(`retryAfterMs must be >= 0 in \`${name}\``, 400, 'invalid_model_suffix');
      retryAfterMs = n;
      continue;
    }
    if (!Object.hasOwn(params, key)) {
      throw new SimModelError(
        `unknown parameter "${key}" for ${base}; known: ${Object.keys(params).join(', ')}, faults, retryAfterMs, unsupported`,
        400,
        'invalid_model_suffix',
      );
    }
    if (n < 0 || n > 1) throw new SimModelError(`parameter "${key}" must be in [0, 1] in \`${name}\``, 400, 'invalid_model_suffix');
    params[key] = n;
    overrides[key] = n;
  }
  const sorted = Object.fromEntries(Object.entries(overrides).sort(([a], [b]) => (a < b ? -1 : 1)));
  const behaviourKey = [base, ...Object.entries(sorted).map(([k, v]) => `${k}=${v}`)].join('+');
  return {
    name,
    base,
    profile,
    params: params as unknown as SubjectParams | JudgeParams,
    overrides: sorted,
    faults,
    retryAfterMs,
    unsupported,
    behaviourKey,
  };
}
