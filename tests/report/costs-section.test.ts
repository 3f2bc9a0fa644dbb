/**
 * The report's cost section (issue 24, point 5): `report build --prices FILE` prices tokens into
 * cost per 1,000 episodes (not measured without it), marks the cost frontier (against tokens when
 * no cost is measured, and says so), draws the latency, tokens and cost-frontier figures (Vega-Lite,
 * SVG, PNG, deterministic), and shows rerun agreement when two runs hold the same subject. Each
 * number is the CLI's (`standoff costs --json`, `standoff rerun --json`). A bad price table is a
 * one-line data error naming the file, model and field (exit 3), and nothing is written.
 * Real runs on the in-process sim endpoint (127.0.0.1), real Parquet, real DuckDB, the real CLI.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/runner/run.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { ingestCsv } from '../../src/ingest/ingest-csv.ts';

const dir = mkdtempSync(join(tmpdir(), 'standoff-costs-section-'));
const traces = join(dir, 'traces');
const prices = join(dir, 'prices.json');
const quiet = { progress: 'none' as const, log: () => undefined, handleSignals: false };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  for (const [runId, seed] of [['r1', 1], ['r2', 2]] as const) {
    await runCommand({ preset: 'smoke', subjects: ['sim:hasty', 'sim:careful'], judges: ['none'], epochs: 3, seed, runId, traces, ...quiet });
  }
  writeFileSync(prices, JSON.stringify({ 'sim:careful': { input_per_mtok: 0.15, output_per_mtok: 0.6 }, 'sim:hasty': { input_per_mtok: 0.05, output_per_mtok: 0.2 } }));
}, 120_000);

const build = (out: string, extra: string[] = []) => runCli(['report', 'build', '--traces', traces, '--run', 'r1', '--out', join(dir, out), '--resamples', '100', '--quiet', ...extra]);
const results = (out: string) => JSON.parse(readFileSync(join(dir, out, 'results.json'), 'utf8'));
const report = (out: string) => readFileSync(join(dir, out, 'REPORT.md'), 'utf8');

describe('report build --prices', () => {
  it('prices cost per 1,000 episodes exactly as standoff costs does, marks the frontier and draws the figures', () => {
    const r = build('priced', ['--prices', prices]);
    expect(r.code, r.stderr).toBe(0);
    const costs = results('priced').costs;
    const cli = JSON.parse(runCli(['costs', '--traces', traces, '--run', 'r1', '--prices', prices, '--json']).stdout);
    expect(costs.price_table).toEqual(cli.price_table);
    expect(costs.price_table.models).toEqual(['sim:careful', 'sim:hasty']);
    expect(costs.frontier_axis).toBe('cost_per_1000');
    for (const s of cli.subjects) {
      const mine = costs.subjects.find((x: { subject_model: string }) => x.subject_model === s.subject_model);
      for (const k of ['episodes', 'mean_input_tokens', 'mean_output_tokens', 'latency_median_ms', 'latency_p95_ms', 'cost_per_1000', 'accuracy', 'on_frontier']) expect(mine[k], k).toEqual(s[k]);
      expect(s.cost_per_1000).toBeCloseTo((1000 * (s.mean_input_tokens * (s.subject_model === 'sim:careful' ? 0.15 : 0.05) + s.mean_output_tokens * (s.subject_model === 'sim:careful' ? 0.6 : 0.2))) / 1e6, 12);
    }
    // Accuracy is the results table's policy action accuracy (one metric definition).
    for (const s of results('priced').results.subjects) {
      const m = s.metrics.policy_action;
      const c = costs.subjects.find((x: { subject: string }) => x.subject === s.subject);
      expect([c.accuracy_successes, c.accuracy_trials]).toEqual([m.successes, m.trials]);
    }
    // hasty is cheaper; careful is more accurate on these states: both on the frontier unless one dominates.
    const [careful, hasty] = ['sim:careful', 'sim:hasty'].map((m) => costs.subjects.find((x: { subject_model: string }) => x.subject_model === m));
    const dominated = careful.cost_per_1000 <= hasty.cost_per_1000 && careful.accuracy >= hasty.accuracy;
    expect(hasty.on_frontier).toBe(!dominated);
    const md = report('priced');
    expect(md).toContain('Prices: `prices.json` (SHA-256 `');
    expect(md).toMatch(/\| sim:careful \| 9 \| \d+ \| \d+ \| \d+ \| \d+ \| \$\d+\.\d{4} \| [\d.]+% \(\d+\/\d+\) \| (yes|no \(dominated by sim:hasty\)) \|/);
    expect(md).toMatch(/Cost frontier: policy action accuracy against cost per 1,000 episodes\. On the frontier/);
    for (const f of ['latency', 'tokens', 'cost-frontier']) for (const ext of ['vl.json', 'svg', 'png']) expect(existsSync(join(dir, 'priced', 'figures', `${f}.${ext}`)), `${f}.${ext}`).toBe(true);
    const spec = JSON.parse(readFileSync(join(dir, 'priced', 'figures', 'cost-frontier.vl.json'), 'utf8'));
    expect(spec.layer[0].encoding.x.title).toBe('Cost per 1,000 episodes (USD)');
    // The frontier line runs through the subjects on the frontier, in increasing cost.
    const onFrontier = costs.subjects.filter((s: { on_frontier: boolean }) => s.on_frontier).sort((x: { cost_per_1000: number }, y: { cost_per_1000: number }) => x.cost_per_1000 - y.cost_per_1000);
    expect(spec.layer[0].data.values.map((p: { subject: string }) => p.subject)).toEqual(onFrontier.map((s: { subject: string }) => s.subject));
    for (const f of ['latency', 'tokens', 'cost-frontier']) {
      const vl = JSON.parse(readFileSync(join(dir, 'priced', 'figures', `${f}.vl.json`), 'utf8'));
      expect(vl.config.font, f).toBe('DejaVu Sans');
      const svg = readFileSync(join(dir, 'priced', 'figures', `${f}.svg`), 'utf8');
      expect((svg.match(/<text/g) ?? []).length, f).toBeGreaterThan(5);
      expect(readFileSync(join(dir, 'priced', 'figures', `${f}.png`)).subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(md).toContain(`](figures/${f}.png)`);
    }
    // Each subject keeps the colour it has in the results figure.
    const colours = (f: string) => /"domain":\["sim:careful","sim:hasty"\],"range":\[("#[0-9A-F]{6}","#[0-9A-F]{6}")\]/.exec(readFileSync(join(dir, 'priced', 'figures', `${f}.vl.json`), 'utf8').replace(/\s+/g, ''))?.[1];
    expect(colours('results')).toBeDefined();
    expect(colours('latency')).toBe(colours('results'));
    expect(colours('cost-frontier')).toBe(colours('results'));
    // Deterministic: the same store, options and prices give byte-identical figures.
    expect(build('priced2', ['--prices', prices]).code).toBe(0);
    for (const f of ['latency.svg', 'tokens.svg', 'cost-frontier.svg', 'cost-frontier.png']) {
      expect(readFileSync(join(dir, 'priced2', 'figures', f)).equals(readFileSync(join(dir, 'priced', 'figures', f))), f).toBe(true);
    }
    expect(report('priced2')).toBe(md);
  }, 120_000);

  it('without a price table cost is not measured, and the frontier is drawn against tokens and says so', () => {
    expect(build('plain').code).toBe(0);
    const costs = results('plain').costs;
    expect(costs.prices).toBe(false);
    expect(costs.price_table).toBeNull();
    expect(costs.frontier_axis).toBe('mean_tokens');
    for (const s of costs.subjects) {
      expect(s.cost_per_1000).toBeNull();
      expect(s.cost_note).toBe('no price table');
      expect(typeof s.on_frontier).toBe('boolean');
    }
    const md = report('plain');
    expect(md).toContain('Cost is not measured: the report was built without a price table');
    expect(md).toContain('not measured (no price table)');
    expect(md).toContain('Cost is not measured, so the frontier is drawn against tokens instead of cost.');
    const spec = JSON.parse(readFileSync(join(dir, 'plain', 'figures', 'cost-frontier.vl.json'), 'utf8'));
    expect(spec.title.text).toBe('Accuracy against tokens (cost not measured)');
    expect(spec.layer[0].encoding.x.title).toBe('Mean tokens per episode (input + output)');
    expect(md).toContain('No subject appears in two runs of this store');
  }, 60_000);

  it('a bad price table is a one-line data error naming the file, model and field; nothing is written', async () => {
    const bad = join(dir, 'bad-prices.json');
    for (const [body, want] of [
      [{ 'sim:careful': { input_per_mtok: 'cheap', output_per_mtok: 0.6 } }, /bad-prices\.json: model "sim:careful": field "input_per_mtok" must be a non-negative number, got "cheap"/],
      [{ 'sim:hasty': { input_per_mtok: 0.1, output_per_mtok: -2 } }, /bad-prices\.json: model "sim:hasty": field "output_per_mtok" must be a non-negative number, got -2/],
      [{ 'sim:hasty': { input_per_mtok: 0.1, output_per_mtok: 0.2, ouput_per_mtok: 1 } }, /model "sim:hasty": field "ouput_per_mtok" is not a known field/],
      ['{"sim:hasty": ', /bad-prices\.json: not valid JSON/],
    ] as const) {
      writeFileSync(bad, typeof body === 'string' ? body : JSON.stringify(body));
      const r = build('never', ['--prices', bad]);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(want);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(existsSync(join(dir, 'never'))).toBe(false);
    }
    // A store that is not a Standoff suite has no cost section: --prices is refused, not ignored.
    const csv = join(dir, 'csv-store');
    await ingestCsv([join(ROOT, 'tests/fixtures/csv/episodes.csv')], { traces: csv, runId: 'csv-rt', now: new Date('2026-01-01T00:00:00Z') });
    const generic = runCli(['report', 'build', '--traces', csv, '--out', join(dir, 'never'), '--prices', prices, '--quiet']);
    expect(generic.code).toBe(2);
    expect(generic.stderr).toContain('--prices is for the cost section of a Standoff suite');
    expect(existsSync(join(dir, 'never'))).toBe(false);
    const missing = build('never', ['--prices', join(dir, 'nope.json')]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/nope\.json: cannot read the --prices file/);
    expect(existsSync(join(dir, 'never'))).toBe(false);
  }, 60_000);
});

describe('rerun agreement in the report', () => {
  it('two runs of the same subjects: the report shows standoff rerun\'s numbers and whether the states are the same', () => {
    const r = runCli(['report', 'build', '--traces', traces, '--out', join(dir, 'both'), '--resamples', '100', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const reruns = results('both').costs.reruns;
    const cli = JSON.parse(runCli(['rerun', '--traces', traces, '--a', 'r1', '--b', 'r2', '--json']).stdout);
    expect(reruns.map((x: { subject_model: string }) => x.subject_model)).toEqual(['sim:careful', 'sim:hasty']);
    for (const s of cli.subjects) {
      const mine = reruns.find((x: { subject_model: string }) => x.subject_model === s.subject_model);
      expect(mine).toMatchObject({ a: 'r1', b: 'r2', paired: s.paired, matched: s.matched, agreement: s.agreement, lower: s.lower, upper: s.upper, same_states: true });
      expect(s.paired).toBe(9);
    }
    const md = report('both');
    expect(md).toContain('### Rerun agreement');
    const hasty = reruns.find((x: { subject_model: string }) => x.subject_model === 'sim:hasty');
    expect(md).toContain(`| \`r1\` | \`r2\` | sim:hasty | 9 | ${hasty.matched} | `);
    // Subjects in two runs are labelled `model @ run` in the cost table, as in every section.
    expect(md).toMatch(/\| sim:hasty @ r2 \| 9 \|/);
  }, 60_000);
});
