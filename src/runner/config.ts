/**
 * Run configuration (`standoff.config.json`): zod-validated, types inferred, defaults applied.
 *
 * ```json
 * {
 *   "name": "nim-o1",
 *   "subjects": [
 *     { "model": "openai/gpt-oss-120b", "base_url": "https://integrate.api.nvidia.com/v1",
 *       "api_key_env": "NIM_API_KEY", "family": "openai", "temperature": 0.7, "max_tokens": 8192 }
 *   ],
 *   "judges": [
 *     { "model": "thinkingmachines/inkling", "base_url": "https://integrate.api.nvidia.com/v1",
 *       "api_key_env": "NIM_API_KEY", "family": "thinkingmachines", "temperature": 0 }
 *   ],
 *   "epochs": 5, "concurrency": 8, "seed": 20260810,
 *   "retries": { "max": 4, "base_ms": 500, "max_ms": 30000 },
 *   "timeouts": { "request_ms": 120000, "log_read_ms": 10000 },
 *   "judge_exclusion": "family"
 * }
 * ```
 *
 * - `api_key_env` is the NAME of the environment variable holding the key; keys never appear in
 *   the config (a literal `api_key` field is refused). `.env` in the working directory (and next
 *   to the config file) is loaded with Node's `process.loadEnvFile` when present; variables
 *   already set in the environment win.
 * - Models named `sim:...` (see `src/runner/sim/profiles.ts`) need no `base_url`: the runner
 *   serves them from an in-process sim server on 127.0.0.1. Their family defaults to the sim
 *   family; other models' family defaults to the model name (so family exclusion degrades to
 *   model exclusion).
 * - `judge_exclusion`: `model` drops a judge whose model equals the subject's; `family` also
 *   drops judges of the subject's family. Excluded judges are still called and recorded
 *   (`judgments.excluded_self = true`) but never enter the median.
 * - Request parameters per model: `max_tokens` (default {@link DEFAULT_MAX_TOKENS}: 8192 for
 *   subjects, 4096 for judges; the cap counts a reasoning model's reasoning tokens too),
 *   `max_tokens_param` (the field the cap is sent as: `max_tokens`, or `max_completion_tokens`
 *   for OpenAI's reasoning models) and `omit_params` (parameters never sent, from
 *   {@link OMITTABLE_PARAMS}). When an endpoint still answers 400 naming one of them, the client
 *   adjusts once and remembers it for the run (`solver.ts`, `RequestParams`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { usageError } from '../errors.ts';
import { packagePath } from '../paths.ts';
import { didYouMean } from '../did-you-mean.ts';
import { zodKeysAt } from '../schema/zod-keys.ts';
import { PROBE_CONDITIONS, RUN_ID_PATTERN } from '../schema/tables.ts';
import { parseProbeConditions, probeConditionsOf } from './probe-conditions.ts';
import { simFamily } from './sim/profiles.ts';
import { PROMPT_VARIANTS, type PromptVariant } from './protocol.ts';
import { SELF_EXCLUSION_DEFAULT } from '../stats/judge-panel.ts';

export const DEFAULT_CONFIG_FILE = 'standoff.config.json';
export const SIM_PREFIX = 'sim:';
/** The repository's scenario directory (used when a config names none). */
export const DEFAULT_SCENARIOS_DIR = packagePath('scenarios');

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Request parameters a model's config may name in `omit_params` (never sent to that endpoint). */
export const OMITTABLE_PARAMS = ['temperature', 'parallel_tool_calls', 'seed', 'max_tokens', 'logprobs'] as const;
export type OmittableParam = (typeof OMITTABLE_PARAMS)[number];
/** The two spellings of the token cap: `max_tokens`, and OpenAI's newer `max_completion_tokens`. */
export const MAX_TOKENS_PARAMS = ['max_tokens', 'max_completion_tokens'] as const;
export type MaxTokensParam = (typeof MAX_TOKENS_PARAMS)[number];
/**
 * Default token caps. Reasoning models (gpt-oss-120b, o-series, DeepSeek-R1, Qwen3 thinking) spend
 * hundreds to thousands of tokens on reasoning before the tool call or answer, and the cap counts
 * them (OpenAI: `max_completion_tokens` is "an upper bound ... including visible output tokens and
 * reasoning tokens"); 1024 cut gpt-oss-120b off. Lower them for a local server with a small
 * context (vLLM answers 400 when prompt + max_tokens exceeds `max_model_len`).
 */
export const DEFAULT_MAX_TOKENS = { subject: 8192, judge: 4096 } as const;
/** Default `max_errors`: errored episodes after which a run stops (and can be resumed). */
export const DEFAULT_MAX_ERRORS = 5;

export const ModelSpecSchema = z.strictObject({
  /** Model name as the endpoint knows it (`sim:careful`, `openai/gpt-oss-120b`). */
  model: z.string().trim().min(1),
  /** OpenAI-compatible base URL (ending in `/v1`); optional for `sim:` models. */
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  /** NAME of the env var that holds the API key (never the key itself). */
  api_key_env: z.string().regex(ENV_NAME, 'must be an environment variable name like NIM_API_KEY').optional(),
  /** Model family, for judge self-exclusion. */
  family: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** Token cap of every request (default 8192 for subjects, 4096 for judges). */
  max_tokens: z.int().min(1).max(1_000_000).optional(),
  /** The request field the cap is sent as (default `max_tokens`; OpenAI reasoning models need `max_completion_tokens`). */
  max_tokens_param: z.enum(MAX_TOKENS_PARAMS).optional(),
  /** Parameters never sent to this endpoint (e.g. `temperature` for OpenAI reasoning models). */
  omit_params: z.array(z.enum(OMITTABLE_PARAMS)).optional(),
  /** Ask for logprobs on the probe-mode decision question (default true). */
  logprobs: z.boolean().optional(),
});
export type ModelSpecInput = z.input<typeof ModelSpecSchema>;

export const ConfigSchema = z.strictObject({
  /** Config name; the default run id is `<name>-s<seed>`. */
  name: z.string().regex(RUN_ID_PATTERN, 'must be letters, digits, dot, dash or underscore').optional(),
  /** Suite recorded on the run row. */
  suite: z.string().min(1).default('standoff-o1'),
  /** Scenario directory (relative to the config file); default: the repository's `scenarios/`. */
  scenarios_dir: z.string().min(1).optional(),
  /** Restrict to these scenario ids (default: all). */
  scenarios: z.array(z.string().min(1)).min(1).optional(),
  subjects: z.array(ModelSpecSchema).min(1, 'must list at least one subject'),
  judges: z.array(ModelSpecSchema).default([]),
  epochs: z.int().min(1).max(10_000).default(5),
  /** Maximum simultaneous episodes and simultaneous model requests. */
  concurrency: z.int().min(1).max(1024).default(8),
  seed: z.int().min(0).max(0xffffffff).default(0),
  retries: z
    .strictObject({
      max: z.int().min(0).max(50).default(4),
      base_ms: z.number().min(0).max(600_000).default(500),
      max_ms: z.number().min(0).max(3_600_000).default(30_000),
    })
    .prefault({}),
  timeouts: z
    .strictObject({
      /** One model request (the attempt is aborted and retried after this). */
      request_ms: z.number().min(1).max(3_600_000).default(120_000),
      /** One read_system_log call to the verifier. */
      log_read_ms: z.number().min(1).max(600_000).default(10_000),
    })
    .prefault({}),
  judge_exclusion: z.enum(['model', 'family']).default(SELF_EXCLUSION_DEFAULT),
  /** Run probe mode (paired factual probes) for every subject x scenario x epoch. */
  probes: z.boolean().default(true),
  /**
   * Composition-ladder conditions of probe mode (`probe-conditions.ts`): `raw` (required),
   * `own-answers`, `facts`, `composed`. Default: raw and composed (no extra model call).
   */
  probe_conditions: z.array(z.enum(PROBE_CONDITIONS)).min(1).refine((a) => a.includes('raw'), 'must include raw').optional(),
  /**
   * Agent prompt variant: `neutral` (default; the agent sees the situation, the policy and the
   * tools, and nothing tells it to read the log) or `instructed` (it is told to fetch the log
   * first). Recorded in `runs.config.prompt`.
   */
  prompt: z.enum(PROMPT_VARIANTS).default('neutral'),
  /** Turns the solver allows for log retrieval before the episode is invalid (seed: 3). */
  max_turns: z.int().min(1).max(20).default(3),
  /**
   * Resample a degenerate agent reply (no choices; empty content and no tool call; tool-call
   * arguments that are not JSON), up to `retries.max` times, each time with a different request
   * seed. Default false: the seed's one-decision rule scores the first reply as it came. When on,
   * every discarded reply is stored (`messages.discarded`, `messages.attempt`), the episode's
   * tokens cover every attempt and `episodes.attempts` counts them. Truncated replies
   * (`finish_reason = length`) are never resampled, and judges and probes never are.
   */
  retry_degenerate: z.boolean().default(false),
  /** Stop the run once this many episodes have ended in error (it can be resumed). */
  max_errors: z.int().min(1).max(1_000_000).default(DEFAULT_MAX_ERRORS),
  /** In-process sim server options (used when any model is `sim:`). */
  sim: z
    .strictObject({
      /** Latency of each sim reply (request arrival to reply; the sim's own work runs inside it), in ms. */
      latency_ms: z.number().min(0).max(600_000).default(0),
    })
    .prefault({}),
});
export type ConfigInput = z.input<typeof ConfigSchema>;
export type Config = z.output<typeof ConfigSchema>;

/** A model after defaults: what the runner uses. */
export interface ResolvedModel {
  model: string;
  base_url: string | null;
  api_key_env: string | null;
  family: string;
  temperature: number;
  max_tokens: number;
  max_tokens_param: MaxTokensParam;
  omit_params: OmittableParam[];
  logprobs: boolean;
  /** True for `sim:` models without base_url (served by the in-process sim server). */
  sim: boolean;
}

export interface ResolvedConfig extends Omit<Config, 'subjects' | 'judges' | 'name'> {
  name: string;
  subjects: ResolvedModel[];
  judges: ResolvedModel[];
  /** Where it came from: `preset:demo`, a file path, or `inline`. */
  origin: string;
  /** Absolute scenario directory. */
  scenarios_dir: string;
}

export const isSimModelName = (model: string) => model.startsWith(SIM_PREFIX);

/** Family of a model by default: the sim family for `sim:` models, else the model name. */
export function defaultFamily(model: string): string {
  if (isSimModelName(model)) return simFamily(model) ?? model.split('+')[0];
  return model;
}

function resolveModel(spec: z.output<typeof ModelSpecSchema>, role: 'subject' | 'judge', where: string): ResolvedModel {
  // A `sim:` model without base_url is served by the in-process sim endpoint; with one, it is an
  // external endpoint like any other (e.g. `standoff sim serve` elsewhere).
  const sim = isSimModelName(spec.model) && !spec.base_url;
  if (!sim && !spec.base_url) {
    throw usageError('config.missingBaseUrl', `${where} (model "${spec.model}"): base_url is required for non-sim models`);
  }
  return {
    model: spec.model,
    base_url: spec.base_url ?? null,
    api_key_env: spec.api_key_env ?? null,
    family: spec.family ?? defaultFamily(spec.model),
    temperature: spec.temperature ?? (role === 'judge' ? 0 : 0.7),
    max_tokens: spec.max_tokens ?? DEFAULT_MAX_TOKENS[role],
    max_tokens_param: spec.max_tokens_param ?? 'max_tokens',
    omit_params: [...new Set(spec.omit_params ?? [])].sort(),
    logprobs: spec.logprobs ?? true,
    sim,
  };
}

function zodMessage(err: z.ZodError, where: string): string {
  const issue = err.issues[0]!;
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    if (/^(api[-_]?key|apikey|key|token|authorization)$/i.test(key)) {
      return `${where}: field "${path ? `${path}.` : ''}${key}" is not allowed: put the key in an environment variable (or .env) and name that variable in "api_key_env"`;
    }
    return `${where}: field "${path ? `${path}.` : ''}${key}" is not a known field${didYouMean(key, zodKeysAt(ConfigSchema, issue.path))}`;
  }
  return `${where}: field "${path || '(root)'}" ${issue.message.replace(/^Invalid input: /, '').toLowerCase()}`;
}

/**
 * Validates a config object and applies defaults. `origin` names it in errors; `baseDir` resolves a
 * relative `scenarios_dir`. Throws `usageError('config.invalid' | 'config.*')`.
 */
export function parseConfig(raw: unknown, origin = 'inline', baseDir = process.cwd()): ResolvedConfig {
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) throw usageError('config.invalid', zodMessage(parsed.error, origin));
  const c = parsed.data;
  const subjects = c.subjects.map((s, i) => resolveModel(s, 'subject', `${origin}: subjects[${i}]`));
  const judges = c.judges.map((s, i) => resolveModel(s, 'judge', `${origin}: judges[${i}]`));
  const dup = (list: ResolvedModel[]) => list.find((m, i) => list.findIndex((o) => o.model === m.model) !== i);
  const ds = dup(subjects);
  if (ds) throw usageError('config.duplicateSubject', `${origin}: subject "${ds.model}" is listed twice (subject models must be distinct)`);
  const dj = dup(judges);
  if (dj) throw usageError('config.duplicateJudge', `${origin}: judge "${dj.model}" is listed twice`);
  for (const m of subjects) {
    if (m.model.includes('\n') || m.model.length > 200) throw usageError('config.invalid', `${origin}: subject model name "${m.model.slice(0, 40)}" is not usable`);
  }
  const fileName = origin.startsWith('preset:')
    ? origin.slice(7)
    : /\.json$/i.test(origin)
      ? basename(origin, extname(origin)).replace(/\.config$/, '')
      : '';
  const name = c.name ?? (fileName && RUN_ID_PATTERN.test(fileName) ? fileName : 'standoff');
  const dir = c.scenarios_dir ? (isAbsolute(c.scenarios_dir) ? c.scenarios_dir : resolve(baseDir, c.scenarios_dir)) : DEFAULT_SCENARIOS_DIR;
  return { ...c, name, subjects, judges, origin, scenarios_dir: dir };
}

/** Loads `.env` files (working directory, then next to the config) when present. */
export function loadDotEnv(dirs: readonly string[] = [process.cwd()]): string[] {
  const loaded: string[] = [];
  for (const d of [...new Set(dirs.map((x) => resolve(x)))]) {
    const file = join(d, '.env');
    if (!existsSync(file)) continue;
    try {
      process.loadEnvFile(file);
      loaded.push(file);
    } catch (err) {
      // Never echo the file's content: it holds secrets.
      throw usageError('config.badEnvFile', `${file}: could not be read as a .env file (${(err as NodeJS.ErrnoException).code ?? 'parse error'})`);
    }
  }
  return loaded;
}

/** Reads and validates a config file. */
export function loadConfigFile(file: string): ResolvedConfig {
  const path = resolve(file);
  if (!existsSync(path)) throw usageError('config.missing', `config file ${file} not found`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw usageError('config.invalidJson', `${file}: not valid JSON (${(err as Error).message.replace(/\s*\n\s*/g, ' ')})`);
  }
  return parseConfig(raw, file, dirname(path));
}

// ---------------------------------------------------------------------------------------------
// Presets
// ---------------------------------------------------------------------------------------------

export const DEMO_SEED = 20260810;

/**
 * `demo`: 3 sim subjects x 18 scenarios x 5 epochs (270 episodes) + probe mode with the whole
 * composition ladder + 3 sim judges.
 * `sim:judge-lenient` shares the family `simfam-careful` with `sim:careful`, so family
 * self-exclusion is exercised on sim:careful's episodes.
 */
export const PRESETS: Readonly<Record<string, ConfigInput>> = Object.freeze({
  demo: {
    name: 'demo',
    subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }],
    judges: [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }],
    epochs: 5,
    concurrency: 32,
    seed: DEMO_SEED,
    retries: { max: 4, base_ms: 50, max_ms: 2_000 },
    timeouts: { request_ms: 30_000, log_read_ms: 5_000 },
    judge_exclusion: 'family',
    probes: true,
    // The whole composition ladder: the demo shows it (two extra decision requests per state).
    probe_conditions: ['raw', 'own-answers', 'facts', 'composed'],
  },
  /** Nine episodes: one scenario per decision type, one epoch, per sim subject (the seed's smoke gate). */
  smoke: {
    name: 'smoke',
    scenarios: ['em_act_a', 'ct_esc_a', 'fc_amb_a'],
    subjects: [{ model: 'sim:hasty' }, { model: 'sim:careful' }, { model: 'sim:thorough' }],
    judges: [{ model: 'sim:judge-strict' }, { model: 'sim:judge-lenient' }, { model: 'sim:judge-noisy' }],
    epochs: 1,
    concurrency: 9,
    seed: DEMO_SEED,
    retries: { max: 4, base_ms: 50, max_ms: 2_000 },
    timeouts: { request_ms: 30_000, log_read_ms: 5_000 },
    judge_exclusion: 'family',
    probes: true,
  },
});
export const PRESET_NAMES = Object.keys(PRESETS);

export function presetConfig(name: string): ResolvedConfig {
  const p = PRESETS[name];
  if (!p) throw usageError('config.unknownPreset', `unknown preset "${name}" (available: ${PRESET_NAMES.join(', ')})`);
  return parseConfig(structuredClone(p), `preset:${name}`);
}

/** Model spec for a name given on the command line that the config does not list (sim models only). */
function adHocModel(model: string, role: 'subject' | 'judge', flag: string, known: readonly ResolvedModel[]): ResolvedModel {
  const hit = known.find((m) => m.model === model);
  if (hit) return hit;
  if (!isSimModelName(model)) {
    throw usageError(
      'config.unknownModel',
      `${flag} "${model}" is not in the config; add it (with base_url and api_key_env) to the config's ${role === 'subject' ? 'subjects' : 'judges'}`,
    );
  }
  return resolveModel({ model }, role, flag);
}

export interface ConfigOverrides {
  subjects?: string[];
  judges?: string[];
  epochs?: number;
  concurrency?: number;
  seed?: number;
  maxErrors?: number;
  /** `--prompt neutral|instructed`. */
  prompt?: string;
  /** `--probe-conditions raw,own-answers,facts,composed`. */
  probeConditions?: string;
}

/** Applies command-line overrides (subjects/judges by model name; `none` clears the judges). */
export function applyOverrides(cfg: ResolvedConfig, o: ConfigOverrides): ResolvedConfig {
  const out: ResolvedConfig = { ...cfg };
  if (o.subjects && o.subjects.length > 0) {
    const names = [...new Set(o.subjects)];
    out.subjects = names.map((m) => adHocModel(m, 'subject', '--subjects', cfg.subjects));
  }
  if (o.judges) {
    const names = [...new Set(o.judges)].filter((n) => n !== 'none');
    out.judges = names.map((m) => adHocModel(m, 'judge', '--judges', [...cfg.judges, ...cfg.subjects]));
  }
  const int = (v: number | undefined, name: string, min: number, max: number) => {
    if (v === undefined) return undefined;
    if (!Number.isInteger(v) || v < min || v > max) throw usageError('config.invalid', `${name} must be an integer in [${min}, ${max}], got ${v}`);
    return v;
  };
  out.epochs = int(o.epochs, '--epochs', 1, 10_000) ?? out.epochs;
  out.concurrency = int(o.concurrency, '--concurrency', 1, 1024) ?? out.concurrency;
  out.seed = int(o.seed, '--seed', 0, 0xffffffff) ?? out.seed;
  out.max_errors = int(o.maxErrors, '--max-errors', 1, 1_000_000) ?? out.max_errors ?? DEFAULT_MAX_ERRORS;
  if (o.prompt !== undefined) {
    if (!(PROMPT_VARIANTS as readonly string[]).includes(o.prompt)) throw usageError('config.invalid', `--prompt must be one of ${PROMPT_VARIANTS.join(', ')}, got "${o.prompt}"`);
    out.prompt = o.prompt as PromptVariant;
  }
  if (o.probeConditions !== undefined) out.probe_conditions = parseProbeConditions(o.probeConditions);
  return out;
}

/**
 * Checks that every non-sim model's key variable is set (after `.env` loading). The message names
 * the variable, never a value.
 */
export function checkKeys(cfg: ResolvedConfig, env: NodeJS.ProcessEnv = process.env): void {
  const all = [...cfg.subjects.map((m) => ['subject', m] as const), ...cfg.judges.map((m) => ['judge', m] as const)];
  for (const [role, m] of all) {
    if (m.sim || !m.api_key_env) continue;
    const v = env[m.api_key_env];
    if (v === undefined || v.trim() === '') {
      throw usageError(
        'config.missingKey',
        `${role} "${m.model}": environment variable ${m.api_key_env} (named by api_key_env) is not set; add it to .env or the environment`,
      );
    }
  }
}

/** The key variable names a config refers to (for the redactor). */
export function keyEnvNames(cfg: Pick<ResolvedConfig, 'subjects' | 'judges'>): string[] {
  return [...new Set([...cfg.subjects, ...cfg.judges].map((m) => m.api_key_env).filter((x): x is string => !!x))];
}

/** The config as recorded on the run row (no secrets: only env var names; redacted again on write). */
export function configRecord(cfg: ResolvedConfig, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: cfg.name,
    origin: cfg.origin,
    suite: cfg.suite,
    scenarios_dir: cfg.scenarios_dir === DEFAULT_SCENARIOS_DIR ? 'scenarios' : cfg.scenarios_dir,
    scenarios: cfg.scenarios ?? null,
    subjects: cfg.subjects,
    judges: cfg.judges,
    epochs: cfg.epochs,
    concurrency: cfg.concurrency,
    seed: cfg.seed,
    retries: cfg.retries,
    timeouts: cfg.timeouts,
    judge_exclusion: cfg.judge_exclusion,
    probes: cfg.probes,
    probe_conditions: probeConditionsOf(cfg),
    prompt: cfg.prompt ?? 'neutral',
    max_turns: cfg.max_turns,
    retry_degenerate: cfg.retry_degenerate,
    max_errors: cfg.max_errors,
    sim: cfg.sim,
    ...extra,
  };
}
