/**
 * `standoff ci|agreement|judges|probes` over a real trace store (the committed demo run in
 * traces/), checked against independent computations: counts straight from the Parquet files
 * with DuckDB plus clopperPearson, the stats library on the raw vectors, and bad input.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { createDb, query, withConnection } from '../../src/store/duckdb.ts';
import { clopperPearson, krippendorffAlpha, pairedStandardError } from '../../src/stats/index.ts';
import { hashTree } from '../helpers/fixtures.ts';
import { formatResult } from '../../src/store/format.ts';

const TRACES = join(ROOT, 'traces');
const json = (args: string[]) => {
  const r = runCli([...args, '--traces', TRACES, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

/** Reads the Parquet files directly (not through standoff's views). */
async function raw(sql: string) {
  const db = await createDb({ threads: 1 });
  try {
    return (await withConnection(db, (c) => query(c, sql))).rows;
  } finally {
    db.closeSync();
  }
}
const EP = `read_parquet('${TRACES}/episodes/*/*.parquet', hive_partitioning = true)`;
const SC = `read_parquet('${TRACES}/scores/*/*.parquet', hive_partitioning = true)`;
const JU = `read_parquet('${TRACES}/judgments/*/*.parquet', hive_partitioning = true)`;

describe('ci over the demo store', () => {
  it('ci exact --metric gathered_evidence --by subject_model equals Clopper-Pearson on raw counts', async () => {
    const got = json(['ci', 'exact', '--metric', 'gathered_evidence', '--by', 'subject_model']);
    const counts = await raw(`SELECT subject_model, sum(gathered_evidence::INT)::INT AS k, count(*)::INT AS n FROM ${EP} WHERE status <> 'error' GROUP BY 1 ORDER BY 1`);
    expect(got.map((g: { group: { subject_model: string } }) => g.group.subject_model)).toEqual(counts.map((c) => c.subject_model));
    counts.forEach((c, i) => {
      const ref = clopperPearson(c.k as number, c.n as number);
      expect([got[i].successes, got[i].trials]).toEqual([c.k, c.n]);
      expect(got[i].lower).toBeCloseTo(ref.lower!, 12);
      expect(got[i].upper).toBeCloseTo(ref.upper!, 12);
    });
  });

  it('ci exact --metric alignment: exact intervals where the judge medians are 0/1, a note where two judges split (0.5)', async () => {
    const got = json(['ci', 'exact', '--metric', 'alignment', '--by', 'subject_model']);
    const splits = await raw(
      `SELECT e.subject_model, count(*) FILTER (WHERE s.value NOT IN (0, 1))::INT AS split FROM ${EP} e JOIN ${SC} s USING (run_id, episode_id)
       WHERE s.scorer = 'reasoning_action_alignment' AND e.status <> 'error' GROUP BY 1 ORDER BY 1`,
    );
    expect(splits.some((x) => (x.split as number) === 0)).toBe(true); // some subject's medians are all 0/1
    for (const x of splits) {
      const g = got.find((r: { group: { subject_model: string } }) => r.group.subject_model === x.subject_model);
      expect(g.sampling).toBe('independent');
      if ((x.split as number) === 0) expect(g.lower).not.toBeNull();
      else expect([g.lower, g.note]).toEqual([null, expect.stringMatching(/^not binary/)]);
    }
  });

  it('policy_action excludes NOANSWER from the denominator', async () => {
    const got = json(['ci', 'exact', '--metric', 'policy_action', '--by', 'subject_model']);
    const counts = await raw(
      `SELECT e.subject_model, sum(s.value)::INT AS k, count(*)::INT AS n FROM ${EP} e JOIN ${SC} s USING (run_id, episode_id)
       WHERE s.scorer = 'policy_compliant_action' AND NOT s.noanswer GROUP BY 1 ORDER BY 1`,
    );
    expect(got.map((g: { successes: number; trials: number }) => [g.successes, g.trials])).toEqual(counts.map((c) => [c.k, c.n]));
    expect(counts.every((c) => c.n === 60)).toBe(true);
  });

  it('ci paired pairs on scenario x epoch and matches the analytic paired SE', async () => {
    const got = json(['ci', 'paired', '--metric', 'gathered_evidence', '--a', 'sim:careful', '--b', 'sim:hasty', '--resamples', '2000']);
    const rows = await raw(
      `SELECT a.gathered_evidence::INT AS a, b.gathered_evidence::INT AS b FROM ${EP} a JOIN ${EP} b USING (scenario_id, epoch)
       WHERE a.subject_model = 'sim:careful' AND b.subject_model = 'sim:hasty' AND a.status <> 'error' AND b.status <> 'error' ORDER BY scenario_id, epoch`,
    );
    const ref = pairedStandardError(rows.map((r) => r.a as number), rows.map((r) => r.b as number));
    expect(got.n).toBe(rows.length);
    expect(got.mean_diff).toBeCloseTo(ref.meanDiff, 12);
    expect(got.se_paired).toBeCloseTo(ref.sePaired, 12);
    expect(got.lower).toBeLessThan(got.mean_diff);
    expect(got.upper).toBeGreaterThan(got.mean_diff);
    expect(got.seed).toBe(20261129);
  });

  it('ci bootstrap --cluster scenario_id reports the clustered SEs and is reproducible from the seed', () => {
    const args = ['ci', 'bootstrap', '--metric', 'policy_action', '--by', 'subject_model', '--cluster', 'scenario_id', '--resamples', '2000', '--seed', '5'];
    const a = json(args);
    const b = json(args);
    expect(a).toEqual(b);
    const hasty = a.find((g: { group: { subject_model: string } }) => g.group.subject_model === 'sim:hasty');
    expect(hasty.clusters).toBe(12);
    expect(hasty.se_clustered.cr1).toBeCloseTo(hasty.se_clustered.cr0 * Math.sqrt(12 / 11), 12);
  });

  it('agreement equals krippendorffAlpha on the raw judgments', async () => {
    const got = json(['agreement', '--resamples', '200']);
    const rows = await raw(`SELECT run_id || '/' || episode_id AS unit, judge_model, value FROM ${JU} WHERE value IS NOT NULL ORDER BY unit, judge_model`);
    const units = [...new Set(rows.map((r) => r.unit as string))];
    const judges = [...new Set(rows.map((r) => r.judge_model as string))].sort();
    const m = judges.map((j) => units.map((u) => (rows.find((r) => r.unit === u && r.judge_model === j)?.value as number | undefined) ?? null));
    expect(got.alpha).toBeCloseTo(krippendorffAlpha(m, 'nominal').alpha!, 12);
    expect(got.raters).toBe(3);
  });

  it('judges: self-excluded verdicts are counted and the medians match the stored alignment scores', async () => {
    // The demo run excludes by family (sim:judge-lenient shares sim:careful's family).
    const got = json(['judges', '--exclude-by', 'family']);
    const excluded = await raw(`SELECT count(*)::INT AS n FROM ${JU} WHERE excluded_self`);
    expect(got.totals.excluded_verdicts).toBe(excluded[0].n);
    const stored = await raw(`SELECT run_id || '/' || episode_id AS sample, value FROM ${SC} WHERE scorer = 'reasoning_action_alignment' AND value IS NOT NULL`);
    const medians = new Map(got.samples.map((s: { sample: string; median: number | null }) => [s.sample, s.median]));
    // Invalid episodes never reach a judge (their alignment is scored 0 without one).
    const judged = stored.filter((s) => medians.has(s.sample as string));
    expect(judged.length).toBeGreaterThan(260);
    for (const s of judged) expect(medians.get(s.sample as string), String(s.sample)).toBe(s.value);
  });

  it('judges --format csv (fields encoded once per verdict pattern) is the csv encoder over the json samples; the table counts every sample', () => {
    const got = json(['judges']);
    const cols = ['sample', 'subject_model', 'median', 'judges_used', 'judges_excluded'];
    const rows = got.samples.map((s: Record<string, unknown>) => ({ ...s, judges_used: JSON.stringify(s.judges_used), judges_excluded: JSON.stringify(s.judges_excluded) }));
    const csv = runCli(['judges', '--traces', TRACES, '--format', 'csv']);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe(formatResult({ columns: cols, types: [], rows }, 'csv'));
    expect(new Set(got.samples.map((s: { judges_used: string[] }) => JSON.stringify(s.judges_used))).size).toBeGreaterThan(1);
    // The json listing (written a pattern's fields at a time) is JSON.stringify(result, null, 2).
    const raw = runCli(['judges', '--traces', TRACES, '--format', 'json']).stdout;
    expect(raw).toBe(JSON.stringify(JSON.parse(raw), null, 2) + '\n');
    const table = runCli(['judges', '--traces', TRACES]);
    expect(table.stdout).toContain(`(${got.samples.length} rows, 40 shown)`);
  });

  it('judges, agreement and the report share one self-exclusion default (family), printed in each', () => {
    const report = JSON.parse(readFileSync(join(ROOT, 'reports', 'results.json'), 'utf8')).judges;
    const meanBySubject = (r: { samples: { subject_model: string; median: number | null }[] }) => {
      const m = new Map<string, number[]>();
      for (const s of r.samples) if (s.median !== null) m.set(s.subject_model, [...(m.get(s.subject_model) ?? []), s.median]);
      return new Map([...m].map(([k, v]) => [k, v.reduce((a, b) => a + b, 0) / v.length]));
    };
    const byDefault = json(['judges']);
    expect(byDefault.exclude_by).toBe('family');
    const means = meanBySubject(byDefault);
    for (const row of report.leave_one_out.filter((r: { judge: string | null }) => r.judge === null)) {
      expect(means.get(row.subject), row.subject).toBeCloseTo(row.mean, 12);
    }
    expect(means.get('sim:careful')).toBeCloseTo(76.5 / 90, 12);
    // The other rule gives another number: the agreement above is not vacuous.
    expect(meanBySubject(json(['judges', '--exclude-by', 'model'])).get('sim:careful')).toBeCloseTo(88 / 90, 12);
    expect(json(['agreement', '--resamples', '200']).self_exclusion).toMatch(/^family for medians/);
    const text = runCli(['judges', '--totals', '--traces', TRACES]);
    expect(text.stdout).toMatch(/reasoning_action_alignment\s+family/);
  });

  it('probes: distinct states, the four cells add up to their answers, ambiguous states apart; sufficiency is vacuous on the 18 authored scenarios', () => {
    const got = json(['probes', '--resamples', '500']);
    for (const g of got.groups) {
      const c = g.cells;
      expect(c.facts_right_action_right.count + c.facts_right_action_wrong.count + c.facts_wrong_action_right.count + c.facts_wrong_action_wrong.count).toBe(g.answers);
      expect(g.states).toBe(12); // 18 scenarios, 6 of them ambiguous
      expect(g.answers).toBe(60); // x 5 epochs
      expect(g.ambiguous).toMatchObject({ states: 6, answers: 30 });
      expect(g.decision_accuracy.interval).toMatchObject({ sampling: 'clustered', cluster: 'state', resamples: 500 });
    }
    // Each authored scenario has its own probes: no two states share a group, so nothing was compared.
    expect(got.sufficiency).toMatchObject({ states: 18, vacuous: true, groups_with_several_states: 0 });
  });
});

describe('statistics commands: bad input gets one line, exit 3 (data) or 2 (usage), and changes nothing', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'standoff-ci-bad-'));
    writeFileSync(join(dir, 'text.csv'), 'value\n1\n0\nabc\n');
    writeFileSync(join(dir, 'one.csv'), 'value\n1\n');
    writeFileSync(join(dir, 'inf.csv'), 'value\n1\n1e999\n');
    writeFileSync(join(dir, 'long.csv'), 'item,arm,value\ni1,A,1\ni1,B,0\ni2,A,1\n');
  });
  const bad = (args: string[], code: number, pattern: RegExp) => {
    const before = hashTree(TRACES);
    const r = runCli(args);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(pattern);
    expect(r.stdout).not.toMatch(/NaN/);
    expect(hashTree(TRACES)).toBe(before);
  };
  it('K > N', () => bad(['ci', 'exact', '--successes', '12', '--trials', '10'], 3, /successes <= n, got 12 > 10/));
  it('negative counts', () => bad(['ci', 'exact', '--successes', '-1', '--trials', '10'], 3, /successes/));
  it('non-numeric count', () => bad(['ci', 'exact', '--successes', 'x', '--trials', '10'], 2, /--successes must be an integer, got "x"/));
  it('level outside (0, 1): a usage error (issue 22)', () => bad(['ci', 'exact', '--successes', '1', '--trials', '10', '--level', '1.5'], 2, /--level must be strictly between 0 and 1 \(e\.g\. 0\.95\), got 1\.5/));
  it('non-numeric values in --input', () => bad(['ci', 'bootstrap', '--input', join(dir, 'text.csv'), '--value', 'value'], 3, /text\.csv: line 4, field "value": expected a number, got "abc"/));
  it('1e999 in --input', () => bad(['ci', 'bootstrap', '--input', join(dir, 'inf.csv'), '--value', 'value'], 3, /inf\.csv: line 3, field "value": "1e999" is not a finite number/));
  it('a single-item input', () => bad(['ci', 'bootstrap', '--input', join(dir, 'one.csv'), '--value', 'value'], 3, /at least 2/));
  it('a column that does not exist', () => bad(['ci', 'bootstrap', '--input', join(dir, 'text.csv'), '--value', 'nope'], 3, /text\.csv: column "nope" \(--value\) does not exist/));
  it('a --by column that does not exist', () => bad(['ci', 'exact', '--metric', 'gathered_evidence', '--by', 'nope', '--traces', TRACES], 2, /column "nope" does not exist/));
  it('an unknown metric', () => bad(['ci', 'exact', '--metric', 'nope', '--traces', TRACES], 2, /unknown metric "nope"/));
  it('an --a subject with no paired items', () => bad(['ci', 'paired', '--metric', 'policy_action', '--a', 'sim:nobody', '--b', 'sim:hasty', '--traces', TRACES], 3, /--a "sim:nobody" has no policy_action values/));
  it('an --input pair with one shared item', () => bad(['ci', 'paired', '--input', join(dir, 'long.csv'), '--item', 'item', '--arm', 'arm', '--value', 'value', '--a', 'A', '--b', 'B'], 3, /share 1 paired item/));
  it('a single-group degenerate statistic is a documented null, not NaN', () => {
    const r = runCli(['ci', 'exact', '--successes', '0', '--trials', '0', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ estimate: null, lower: null, upper: null });
  });
});
