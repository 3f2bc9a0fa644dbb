import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCENARIOS_DIR,
  DEMO_SEED,
  applyOverrides,
  checkKeys,
  configRecord,
  loadConfigFile,
  loadDotEnv,
  parseConfig,
  presetConfig,
} from '../../src/runner/config.ts';
import { defaultRunId } from '../../src/runner/run.ts';
import { loadScenarios } from '../../src/runner/scenarios.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
const tmp = async () => {
  const d = await mkdtemp(join(tmpdir(), 'standoff-config-'));
  dirs.push(d);
  return d;
};

describe('parseConfig', () => {
  it('applies defaults (seed conventions: subjects at 0.7, judges at 0)', () => {
    const c = parseConfig({
      subjects: [{ model: 'openai/gpt-oss-120b', base_url: 'https://integrate.api.nvidia.com/v1', api_key_env: 'NIM_API_KEY', family: 'openai' }],
      judges: [{ model: 'sim:judge-strict' }],
    });
    expect(c.subjects[0]).toEqual({
      model: 'openai/gpt-oss-120b',
      base_url: 'https://integrate.api.nvidia.com/v1',
      api_key_env: 'NIM_API_KEY',
      family: 'openai',
      temperature: 0.7,
      max_tokens: 8192,
      max_tokens_param: 'max_tokens',
      omit_params: [],
      logprobs: true,
      sim: false,
    });
    expect(c.judges[0]).toMatchObject({ max_tokens: 4096, max_tokens_param: 'max_tokens', omit_params: [] });
    expect(c.judges[0]).toMatchObject({ model: 'sim:judge-strict', family: 'simfam-judge', temperature: 0, sim: true, base_url: null });
    expect(c).toMatchObject({
      epochs: 5,
      concurrency: 8,
      seed: 0,
      retries: { max: 4, base_ms: 500, max_ms: 30_000 },
      timeouts: { request_ms: 120_000, log_read_ms: 10_000 },
      judge_exclusion: 'family',
      probes: true,
      max_turns: 3,
      retry_degenerate: false,
      max_errors: 5,
      name: 'standoff',
      scenarios_dir: DEFAULT_SCENARIOS_DIR,
    });
  });

  it('refuses a literal key and says where keys go', () => {
    expect(() => parseConfig({ subjects: [{ model: 'x', base_url: 'http://h/v1', api_key: 'sk-abc' }] })).toThrow(
      /subjects\[0\]\.api_key" is not allowed: put the key in an environment variable \(or \.env\) and name that variable in "api_key_env"/,
    );
  });

  it('rejects bad configs with usage errors naming the field', () => {
    const bad = (raw: unknown, re: RegExp, code = 'config.invalid') => {
      try {
        parseConfig(raw, 'cfg.json');
        expect.unreachable();
      } catch (e) {
        expect(e).toMatchObject({ code, kind: 'usage' });
        expect((e as Error).message).toMatch(re);
      }
    };
    bad({ subjects: [] }, /^cfg\.json: field "subjects" must list at least one subject/);
    bad({ subjects: [{ model: 'gpt' }] }, /base_url is required for non-sim models/, 'config.missingBaseUrl');
    bad({ subjects: [{ model: 'sim:hasty' }], epochs: 0 }, /field "epochs"/);
    bad({ subjects: [{ model: 'sim:hasty' }], judge_exclusion: 'vendor' }, /field "judge_exclusion"/);
    bad({ subjects: [{ model: 'sim:hasty', api_key_env: 'not a name' }] }, /environment variable name/);
    bad({ subjects: [{ model: 'sim:hasty' }, { model: 'sim:hasty' }] }, /listed twice/, 'config.duplicateSubject');
    bad({ subjects: [{ model: 'sim:hasty' }], colour: 'red' }, /field "colour" is not a known field/);
    bad({ subjects: [{ model: 'sim:hasty', max_tokens_param: 'max_output_tokens' }] }, /^cfg\.json: field "subjects\[0\]\.max_tokens_param" /);
    bad({ subjects: [{ model: 'sim:hasty', omit_params: ['top_p'] }] }, /^cfg\.json: field "subjects\[0\]\.omit_params\[0\]" /);
    bad({ subjects: [{ model: 'sim:hasty' }], max_errors: 0 }, /field "max_errors"/);
  });

  it('per-model request parameters: max_tokens_param and omit_params (deduplicated, sorted)', () => {
    const c = parseConfig({
      subjects: [{ model: 'o4-mini', base_url: 'https://api.openai.com/v1', max_tokens_param: 'max_completion_tokens', omit_params: ['temperature', 'parallel_tool_calls', 'temperature'] }],
    });
    expect(c.subjects[0]).toMatchObject({ max_tokens_param: 'max_completion_tokens', omit_params: ['parallel_tool_calls', 'temperature'] });
    expect(applyOverrides(c, { maxErrors: 2 }).max_errors).toBe(2);
    expect(() => applyOverrides(c, { maxErrors: 0 })).toThrow(/--max-errors must be an integer in \[1, 1000000\], got 0/);
  });

  it('a sim model with base_url is an external endpoint', () => {
    const c = parseConfig({ subjects: [{ model: 'sim:careful', base_url: 'http://127.0.0.1:9/v1' }] });
    expect(c.subjects[0]).toMatchObject({ sim: false, family: 'simfam-careful' });
  });
});

describe('presets', () => {
  it('demo: 3 sim subjects x 18 scenarios x 5 epochs, probes, 3 sim judges, one sharing a family with a subject', () => {
    const c = presetConfig('demo');
    expect(c.subjects.map((s) => s.model)).toEqual(['sim:hasty', 'sim:careful', 'sim:thorough']);
    expect(c.judges.map((s) => s.model)).toEqual(['sim:judge-strict', 'sim:judge-lenient', 'sim:judge-noisy']);
    expect(c.subjects.length * loadScenarios(c.scenarios_dir).length * c.epochs).toBe(270);
    expect(c.probes).toBe(true);
    expect(c.seed).toBe(DEMO_SEED);
    expect(c.judge_exclusion).toBe('family');
    const shared = c.judges.filter((j) => c.subjects.some((s) => s.family === j.family));
    expect(shared.map((j) => j.model)).toEqual(['sim:judge-lenient']);
    expect(defaultRunId(c)).toBe(`demo-s${DEMO_SEED}`);
    expect(() => presetConfig('nope')).toThrow(/unknown preset "nope" \(available: demo, smoke\)/);
  });

  it('overrides: subjects and judges by name, none, epochs/concurrency/seed checked', () => {
    const c = applyOverrides(presetConfig('demo'), { subjects: ['sim:careful', 'sim:hasty+readRate=1'], judges: ['none'], epochs: 2, seed: 9 });
    expect(c.subjects.map((s) => s.model)).toEqual(['sim:careful', 'sim:hasty+readRate=1']);
    expect(c.subjects[1].family).toBe('simfam-hasty');
    expect(c.judges).toEqual([]);
    expect(c.epochs).toBe(2);
    expect(defaultRunId(c)).toBe('demo-s9');
    expect(() => applyOverrides(presetConfig('demo'), { subjects: ['gpt-4o'] })).toThrow(/--subjects "gpt-4o" is not in the config/);
    expect(() => applyOverrides(presetConfig('demo'), { concurrency: 0 })).toThrow(/--concurrency must be an integer in \[1, 1024\]/);
  });
});

describe('files and environment', () => {
  it('loads a config file; the name defaults to the file name; scenarios_dir is relative to the file', async () => {
    const d = await tmp();
    const f = join(d, 'nim-o1.config.json');
    await writeFile(f, JSON.stringify({ subjects: [{ model: 'sim:careful' }], scenarios_dir: 'scen' }));
    const c = loadConfigFile(f);
    expect(c.name).toBe('nim-o1');
    expect(c.scenarios_dir).toBe(join(d, 'scen'));
    expect(c.origin).toBe(f);
    await writeFile(f, '{ not json');
    expect(() => loadConfigFile(f)).toThrow(/not valid JSON/);
    expect(() => loadConfigFile(join(d, 'missing.json'))).toThrow(/config file .* not found/);
  });

  it('reads .env without overriding the environment; checkKeys names the variable, never a value', async () => {
    const d = await tmp();
    await writeFile(join(d, '.env'), 'STANDOFF_CFG_TEST_KEY=from-dotenv-value-123\nSTANDOFF_CFG_TEST_SET=from-dotenv\n');
    process.env.STANDOFF_CFG_TEST_SET = 'from-env';
    try {
      expect(loadDotEnv([d])).toEqual([join(d, '.env')]);
      expect(process.env.STANDOFF_CFG_TEST_KEY).toBe('from-dotenv-value-123');
      expect(process.env.STANDOFF_CFG_TEST_SET).toBe('from-env');
      const c = parseConfig({ subjects: [{ model: 'm', base_url: 'http://127.0.0.1:1/v1', api_key_env: 'STANDOFF_CFG_TEST_MISSING' }] });
      expect(() => checkKeys(c)).toThrow('subject "m": environment variable STANDOFF_CFG_TEST_MISSING (named by api_key_env) is not set; add it to .env or the environment');
      const ok = parseConfig({ subjects: [{ model: 'm', base_url: 'http://127.0.0.1:1/v1', api_key_env: 'STANDOFF_CFG_TEST_KEY' }] });
      expect(() => checkKeys(ok)).not.toThrow();
      expect(JSON.stringify(configRecord(ok))).not.toContain('from-dotenv-value-123');
      expect(loadDotEnv([join(d, 'nowhere')])).toEqual([]);
    } finally {
      delete process.env.STANDOFF_CFG_TEST_KEY;
      delete process.env.STANDOFF_CFG_TEST_SET;
    }
  });
});
