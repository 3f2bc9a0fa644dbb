/**
 * One statistics core: the demo report's intervals, p-values and MDEs equal what the matching CLI
 * command prints for the same store and seed. The report is built from the committed demo run
 * (traces/); the commands run through the real commander definitions of `standoff ci`,
 * `agreement` and `probes` (in process, JSON output parsed), and two of them also as a real child
 * process, to show the in-process output is the CLI's.
 *
 * | results.json | command |
 * | --- | --- |
 * | results.subjects[].metrics[m].exact | ci exact --metric M --by subject_model |
 * | results.subjects[].metrics[m].cluster | ci bootstrap --metric M --by subject_model (clusters on scenario_id by default) |
 * | slices.rows[] exact / cluster | ci exact / ci bootstrap --metric M --by DIM,subject_model |
 * | grounded shares (cluster, exact) | ci bootstrap / ci exact --input (the rows from standoff sql) --cluster scenario_id |
 * | pairwise.comparisons[] lower, upper, p_value, mde | ci paired --metric M --a A --b B |
 * | judges.alpha | agreement |
 * | judges.pairs[] interval | ci exact --successes K --trials N |
 * | probes.subjects[] shares, composition, sufficiency | probes |
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.ts';
import { buildReport, type ReportResults } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { query } from '../../src/store/duckdb.ts';
import { metricSql } from '../../src/analysis/metrics.ts';
import { runCli, ROOT } from '../helpers/cli.ts';

const TRACES = join(ROOT, 'traces');
const RESAMPLES = 2000;
const SEED = 20261129;
let dir: string;
let r: ReportResults;

/** Runs `standoff <args> --format json` through the CLI's own command definitions and returns the parsed output. */
async function cli(args: string[], store = true): Promise<any> {
  const program = buildProgram();
  let out = '';
  let err = '';
  const write = process.stdout.write;
  const writeErr = process.stderr.write;
  process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => ((err += chunk), true)) as typeof process.stderr.write;
  try {
    await program.parseAsync(['node', 'standoff', ...args, ...(store ? ['--traces', TRACES] : []), '--format', 'json']);
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
  const code = process.exitCode;
  process.exitCode = 0;
  expect(code ?? 0, `${args.join(' ')}: ${err}`).toBe(0);
  return JSON.parse(out);
}

const bounds = (x: { lower: number | null; upper: number | null } | null | undefined) => (x ? [x.lower, x.upper] : null);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-report-cli-'));
  r = (await buildReport({ traces: TRACES, out: join(dir, 'report'), resamples: RESAMPLES, seed: SEED })).results;
}, 240_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the demo report equals the CLI for the same seed', () => {
  it('results: exact = ci exact, cluster = ci bootstrap (scenario clusters by default)', async () => {
    for (const metric of ['gathered_evidence', 'policy_action', 'alignment', 'invalid'] as const) {
      const exact = await cli(['ci', 'exact', '--metric', metric, '--by', 'subject_model']);
      const boot = await cli(['ci', 'bootstrap', '--metric', metric, '--by', 'subject_model', '--resamples', String(RESAMPLES), '--seed', String(SEED)]);
      for (const s of r.results.subjects) {
        const m = s.metrics[metric];
        const e = exact.find((x: any) => x.group.subject_model === s.subject);
        expect(e.sampling).toBe('independent');
        if (m.exact) expect([e.successes, e.trials, e.lower, e.upper], `${metric} ${s.subject}`).toEqual([m.successes, m.trials, m.exact.lower, m.exact.upper]);
        else expect([e.lower, e.note], `${metric} ${s.subject}`).toEqual([null, expect.stringMatching(/^not binary/)]); // split judge medians
        const b = boot.find((x: any) => x.group.subject_model === s.subject);
        expect(b).toMatchObject({ sampling: 'clustered', cluster: 'scenario_id', seed: SEED, resamples: RESAMPLES });
        if (m.cluster) {
          expect([b.lower, b.upper, b.clusters], `${metric} ${s.subject}`).toEqual([m.cluster.lower, m.cluster.upper, m.cluster.clusters]);
          if (m.cluster.lower !== null) expect(b.se).toBe(m.cluster.se);
        }
      }
    }
  }, 240_000);

  it('slices: every cell equals ci exact / ci bootstrap --by DIM,subject_model', async () => {
    for (const dim of ['domain', 'decision_type', 'variant'] as const) {
      for (const metric of ['gathered_evidence', 'policy_action', 'alignment'] as const) {
        const exact = await cli(['ci', 'exact', '--metric', metric, '--by', `${dim},subject_model`]);
        const boot = await cli(['ci', 'bootstrap', '--metric', metric, '--by', `${dim},subject_model`, '--resamples', String(RESAMPLES), '--seed', String(SEED)]);
        for (const row of r.slices.rows.filter((x) => x.dimension === dim && x.metric === metric && x.trials > 0)) {
          const key = (x: any) => x.group[dim] === row.value && x.group.subject_model === row.subject;
          const e = exact.find(key);
          if (row.exact) expect(bounds(e), `${dim} ${row.value} ${metric} ${row.subject}`).toEqual(bounds(row.exact));
          else expect([e.lower, e.note], `${dim} ${row.value} ${metric} ${row.subject}`).toEqual([null, expect.stringMatching(/^not binary/)]);
          if (row.cluster) expect(bounds(boot.find(key)), `${dim} ${row.value} ${metric} ${row.subject}`).toEqual(bounds(row.cluster));
        }
      }
    }
  }, 240_000);

  it('pairwise: interval, p and MDE equal ci paired (paired cluster bootstrap, clustered SE)', async () => {
    expect(r.pairwise.comparisons.length).toBe(9);
    for (const c of r.pairwise.comparisons) {
      const got = await cli(['ci', 'paired', '--metric', c.metric, '--a', c.a, '--b', c.b, '--resamples', String(RESAMPLES), '--seed', String(SEED)]);
      expect(got).toMatchObject({ sampling: 'clustered', cluster: 'scenario_id', n: c.pairs, clusters: c.clusters });
      expect([got.mean_diff, got.lower, got.upper, got.p_value, got.mde, got.se], `${c.metric} ${c.a} ${c.b}`).toEqual([c.difference, c.lower, c.upper, c.p_value, c.mde, c.se]);
    }
  }, 240_000);

  it('a spawned CLI prints the same as the in-process one', async () => {
    const c = r.pairwise.comparisons[0];
    const args = ['ci', 'paired', '--metric', c.metric, '--a', c.a, '--b', c.b, '--resamples', String(RESAMPLES)];
    const spawned = runCli([...args, '--traces', TRACES, '--format', 'json']);
    expect(spawned.code, spawned.stderr).toBe(0);
    expect(JSON.parse(spawned.stdout)).toEqual(await cli(args));
  }, 120_000);

  it('grounded: the shares equal ci exact / ci bootstrap --input on the same rows (clustered on scenario_id)', async () => {
    const s = await openStore(TRACES);
    try {
      for (const g of r.grounded.subjects) {
        for (const [name, share, where] of [
          ['with evidence', g.accuracy_with_evidence, 'gathered_evidence'],
          ['without evidence', g.accuracy_without_evidence, 'NOT gathered_evidence'],
        ] as const) {
          if (share.trials === 0) continue;
          const rows = (
            await query(
              s.conn,
              `SELECT p.scenario_id, p.value FROM ${metricSql('policy_action')} p JOIN episodes e USING (run_id, episode_id)
               WHERE p.subject_model = $1 AND p.value IS NOT NULL AND ${where} ORDER BY p.scenario_id, p.epoch`,
              [g.subject],
            )
          ).rows;
          const file = join(dir, `grounded-${g.subject.replace(/\W/g, '_')}-${name.replace(/\W/g, '_')}.csv`);
          writeFileSync(file, `scenario_id,value\n${rows.map((x) => `${x.scenario_id},${x.value}`).join('\n')}\n`);
          writeFileSync(join(dir, 'counts.csv'), `successes,trials\n${share.successes},${share.trials}\n`);
          const exact = (await cli(['ci', 'exact', '--input', join(dir, 'counts.csv')], false))[0];
          expect(bounds(exact), `${g.subject} ${name}`).toEqual(bounds(share.exact));
          if (share.cluster && rows.length >= 2) {
            const b = await cli(['ci', 'bootstrap', '--input', file, '--value', 'value', '--cluster', 'scenario_id', '--resamples', String(RESAMPLES), '--seed', String(SEED)], false);
            expect(bounds(b), `${g.subject} ${name}`).toEqual(bounds(share.cluster));
          }
        }
      }
    } finally {
      s.close();
    }
  }, 240_000);

  it('judges: alpha equals standoff agreement; pair intervals equal ci exact on their counts', async () => {
    const a = await cli(['agreement', '--resamples', String(RESAMPLES), '--seed', String(SEED)]);
    expect([a.alpha, a.lower, a.upper, a.se, a.units]).toEqual([r.judges.alpha!.alpha, r.judges.alpha!.lower, r.judges.alpha!.upper, r.judges.alpha!.se, r.judges.alpha!.units]);
    for (const p of r.judges.pairs) {
      const e = await cli(['ci', 'exact', '--successes', String(p.agreements), '--trials', String(p.bothRated)], false);
      expect([e.lower, e.upper]).toEqual([p.agreementLower, p.agreementUpper]);
    }
  }, 120_000);

  it('probes: every share, the composition interval and sufficiency equal standoff probes', async () => {
    const got = await cli(['probes', '--resamples', String(RESAMPLES), '--seed', String(SEED)]);
    expect(got.sufficiency).toEqual(r.probes.sufficiency);
    for (const s of r.probes.subjects) {
      const g = got.groups.find((x: any) => x.group.subject_model === s.subject);
      const { subject: _s, calibration: _c, ...mine } = s;
      expect(g, s.subject).toEqual({ group: { subject_model: s.subject }, ...mine });
    }
  }, 120_000);
});
