/**
 * Issue 11 point 2, every scorer is a metric: the researcher's wide CSV (tests/helpers/natural-csv.ts)
 * ingested with the real CLI, then `ci exact|bootstrap|paired --metric <scorer>`, `--reduce`,
 * `ci --list-metrics`, `--metric-sql FILE`, `<store>/metrics/*.sql` and the `metrics` view of
 * `standoff sql`, checked against figures computed from the generated rows (not from the store),
 * with src/stats called on those rows. Also the shared Inspect and lm-eval fixtures' real scorers.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { MODELS, writeNaturalCsv, type NaturalRow } from '../helpers/natural-csv.ts';
import { clopperPearson, clusterBootstrap, bootstrapMean, pairedStandardError } from '../../src/stats/index.ts';

let dir: string;
let S: string;
let rows: NaturalRow[];

const ok = (args: string[]) => {
  const r = runCli(args);
  expect(r.code, r.stderr).toBe(0);
  return r;
};
const json = (args: string[]) => JSON.parse(ok([...args, '--format', 'json']).stdout);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-scorers-'));
  rows = writeNaturalCsv(join(dir, 'results.csv'));
  S = join(dir, 'S');
  ok(['ingest', 'csv', join(dir, 'results.csv'), '--traces', S, '--run-id', 'r1', '--subject', 'model', '--item', 'sample_id', '--epoch', 'epoch', '--scores', 'correct,quality', '--judge-columns', 'judge_a,judge_b,judge_c', '--judged-scorer', 'quality']);
}, 120_000);

const of = (model: string) => rows.filter((r) => r.model === model);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('every scorer is a metric (natural wide CSV)', () => {
  it('ci --list-metrics --traces S lists the built-ins and one metric per scorer, with its kind', () => {
    const list = json(['ci', '--list-metrics', '--traces', S]);
    const by = Object.fromEntries(list.map((m: { metric: string }) => [m.metric, m]));
    expect(list.filter((m: { source: string }) => m.source === 'built-in').map((m: { metric: string }) => m.metric)).toEqual(['gathered_evidence', 'policy_action', 'alignment', 'invalid', 'probe_decision', 'probe_composed', 'probe_accuracy']);
    expect(by.correct).toMatchObject({ source: 'scorer', kind: 'binary', observations: rows.length, not_measured: 0 });
    expect(by.quality).toMatchObject({ source: 'scorer', kind: 'ordinal', observations: rows.length, not_measured: 0 });
    // A built-in with nothing measured in this store has no kind (not "binary", not 0).
    expect(by.gathered_evidence).toMatchObject({ kind: null, observations: 0 });
  });

  it('ci exact --metric correct --by subject_model: Clopper-Pearson on the counts of the generated rows', () => {
    const got = json(['ci', 'exact', '--traces', S, '--metric', 'correct', '--by', 'subject_model']);
    expect(got.map((g: { group: { subject_model: string } }) => g.group.subject_model)).toEqual([...MODELS].sort());
    for (const g of got) {
      const mine = of(g.group.subject_model);
      const k = mine.filter((r) => r.correct === 1).length;
      const ref = clopperPearson(k, mine.length, { level: 0.95 });
      expect(g).toMatchObject({ metric: 'correct', kind: 'binary', successes: k, trials: mine.length, sampling: 'independent', max_per_scenario: 2, not_measured: 0, noanswer: 0 });
      expect(g.lower).toBe(ref.lower);
      expect(g.upper).toBe(ref.upper);
      expect(g.note).toMatch(/epochs repeat scenarios/);
    }
  });

  it('ci exact on an ordinal scorer is refused with a pointer to bootstrap (exit 2)', () => {
    const r = runCli(['ci', 'exact', '--traces', S, '--metric', 'quality']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^standoff: metric quality is ordinal: \d+ value\(s\) are not 0 or 1; use standoff ci bootstrap --metric quality\n$/);
  });

  it('ci bootstrap --metric quality --by subject_model: the cluster bootstrap over items of the generated values', () => {
    const got = json(['ci', 'bootstrap', '--traces', S, '--metric', 'quality', '--by', 'subject_model', '--resamples', '2000']);
    for (const g of got) {
      const mine = of(g.group.subject_model); // already in item, epoch order
      const ref = clusterBootstrap(mine.map((r) => r.quality), mine.map((r) => r.sample_id), { resamples: 2000, level: 0.95, method: 'percentile', seed: 20261129 });
      expect(g).toMatchObject({ metric: 'quality', kind: 'ordinal', n: mine.length, sampling: 'clustered', cluster: 'scenario_id', clusters: 150 });
      expect(g.estimate).toBeCloseTo(mean(mine.map((r) => r.quality)), 12);
      expect([g.lower, g.upper]).toEqual([ref.lower, ref.upper]);
    }
  });

  it('ci paired --metric correct --a acme-large --b acme-small pairs on item x epoch, clustered on item', () => {
    const got = json(['ci', 'paired', '--traces', S, '--metric', 'correct', '--a', 'acme-large', '--b', 'acme-small', '--resamples', '2000']);
    const a = of('acme-large');
    const b = of('acme-small');
    const ref = pairedStandardError(a.map((r) => r.correct), b.map((r) => r.correct));
    expect(got).toMatchObject({ a: 'acme-large', b: 'acme-small', metric: 'correct', kind: 'binary', n: 300, clusters: 150, sampling: 'clustered', dropped_unpaired: 0 });
    expect(got.mean_diff).toBeCloseTo(ref.meanDiff, 12);
    expect(got.se_paired).toBeCloseTo(ref.sePaired, 12);
    expect(got.lower).toBeLessThan(got.mean_diff);
    expect(got.upper).toBeGreaterThan(got.mean_diff);
  });

  it('agreement --scorer quality --measure interval works over the judge columns', () => {
    const got = json(['agreement', '--traces', S, '--scorer', 'quality', '--measure', 'interval', '--resamples', '200']);
    expect(got.scorer).toBe('quality');
    expect(got.alpha).toBeGreaterThan(0);
    expect(got.alpha).toBeLessThan(1);
  });

  it('an unknown metric lists the store metrics (exit 2)', () => {
    const r = runCli(['ci', 'exact', '--traces', S, '--metric', 'nope']);
    expect([r.code, r.stderr]).toEqual([2, 'standoff: unknown metric "nope"; this store\'s metrics: gathered_evidence, policy_action, alignment, invalid, probe_decision, probe_composed, probe_accuracy, correct, quality\n']);
  });
});

describe('--reduce: epochs reduced per item before intervals', () => {
  const perItem = (model: string, f: (xs: number[]) => number, col: 'correct' | 'quality') => {
    const m = new Map<string, number[]>();
    for (const r of of(model)) m.set(r.sample_id, [...(m.get(r.sample_id) ?? []), r[col]]);
    return [...m.keys()].sort().map((k) => f(m.get(k)!));
  };

  it('at_least_one: Clopper-Pearson over items, one observation each, reducer recorded', () => {
    const got = json(['ci', 'exact', '--traces', S, '--metric', 'correct', '--by', 'subject_model', '--reduce', 'at_least_one']);
    for (const g of got) {
      const items = perItem(g.group.subject_model, (xs) => Math.max(...xs), 'correct');
      const k = items.filter((x) => x === 1).length;
      const ref = clopperPearson(k, items.length, { level: 0.95 });
      expect(g).toMatchObject({ metric: 'correct', reduce: 'at_least_one', kind: 'binary', successes: k, trials: 150, max_per_scenario: 1, sampling: 'independent' });
      expect([g.lower, g.upper]).toEqual([ref.lower, ref.upper]);
      expect(g.note).toBeUndefined();
    }
  });

  it('mean: bootstrap of the per-item means, independent; the kind follows the reduced values', () => {
    const got = json(['ci', 'bootstrap', '--traces', S, '--metric', 'correct', '--by', 'subject_model', '--reduce', 'mean', '--resamples', '2000']);
    for (const g of got) {
      const items = perItem(g.group.subject_model, mean, 'correct');
      const ref = bootstrapMean(items, { resamples: 2000, level: 0.95, method: 'percentile', seed: 20261129 });
      expect(g).toMatchObject({ reduce: 'mean', kind: 'bounded', n: 150, sampling: 'independent' });
      expect(g.cluster).toBeUndefined();
      expect(g.estimate).toBeCloseTo(mean(items), 12);
      expect([g.lower, g.upper]).toEqual([ref.lower, ref.upper]);
    }
  });

  it('median, mode, max and min give the per-item values Inspect would (mode: ties to the earliest epoch)', () => {
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    };
    const mode = (xs: number[]) => {
      const c = new Map<number, number>();
      for (const x of xs) c.set(x, (c.get(x) ?? 0) + 1);
      let best = xs[0];
      for (const [v, n] of c) if (n > c.get(best)!) best = v;
      return best;
    };
    const fns = { median, mode, max: (xs: number[]) => Math.max(...xs), min: (xs: number[]) => Math.min(...xs) };
    for (const [name, f] of Object.entries(fns)) {
      const got = json(['ci', 'bootstrap', '--traces', S, '--metric', 'quality', '--by', 'subject_model', '--reduce', name, '--resamples', '200']);
      for (const g of got) {
        const items = perItem(g.group.subject_model, f, 'quality');
        expect(g.reduce).toBe(name);
        expect(g.n).toBe(150);
        expect(g.estimate, `${name} ${g.group.subject_model}`).toBeCloseTo(mean(items), 12);
      }
    }
  });

  it('paired after reduction pairs on item; at_least_one on an ordinal metric is refused', () => {
    const got = json(['ci', 'paired', '--traces', S, '--metric', 'correct', '--a', 'acme-large', '--b', 'acme-small', '--reduce', 'max', '--resamples', '500']);
    const a = perItem('acme-large', (xs) => Math.max(...xs), 'correct');
    const b = perItem('acme-small', (xs) => Math.max(...xs), 'correct');
    expect(got).toMatchObject({ n: 150, reduce: 'max', sampling: 'independent' });
    expect(got.mean_diff).toBeCloseTo(mean(a) - mean(b), 12);
    const r = runCli(['ci', 'exact', '--traces', S, '--metric', 'quality', '--reduce', 'at_least_one']);
    expect([r.code, r.stderr]).toEqual([2, 'standoff: --reduce at_least_one needs a 0/1 metric; quality is ordinal\n']);
    const bad = runCli(['ci', 'exact', '--traces', S, '--metric', 'correct', '--reduce', 'sum']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--reduce/);
  });
});

describe('SQL metrics and the metrics view', () => {
  const COLS = 'run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, value';

  it('--metric-sql FILE: checked columns (exit 3, naming the file), the read-only gate (exit 2), then a metric like any other', () => {
    const missing = join(dir, 'no_value.sql');
    writeFileSync(missing, 'SELECT run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id FROM episodes');
    const r = runCli(['ci', 'bootstrap', '--traces', S, '--metric-sql', missing]);
    expect([r.code, r.stderr]).toEqual([3, `standoff: metric sql ${missing} yields no column "value" (a metric yields ${COLS})\n`]);
    const write = join(dir, 'drop.sql');
    writeFileSync(write, "COPY episodes TO '/tmp/x.csv'");
    const w = runCli(['ci', 'bootstrap', '--traces', S, '--metric-sql', write]);
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/^standoff: metric sql .*drop\.sql: sql refused/);
    // A metric file runs in the sandbox of standoff sql: no file outside the store.
    const outside = join(dir, 'outside.sql');
    writeFileSync(outside, `SELECT run_id, subject_model, scenario_id, epoch, domain, decision_type, variant, episode_id, 1.0 AS value FROM episodes, read_csv('${join(dir, 'results.csv')}')`);
    const o = runCli(['ci', 'exact', '--traces', S, '--metric-sql', outside]);
    expect(o.code).toBe(2);
    expect(o.stderr).toMatch(/^standoff: metric sql .*outside\.sql: Permission Error: Cannot access file/);
    const hard = join(dir, 'hard_correct.sql');
    writeFileSync(hard, `-- correct on the first 50 items\nSELECT ${COLS} FROM metrics WHERE metric = 'correct' AND scenario_id < 'q050';\n`);
    const got = json(['ci', 'exact', '--traces', S, '--metric-sql', hard, '--by', 'subject_model']);
    for (const g of got) {
      const mine = of(g.group.subject_model).filter((x) => x.sample_id < 'q050');
      expect(g).toMatchObject({ metric: 'hard_correct', kind: 'binary', trials: mine.length, successes: mine.filter((x) => x.correct).length });
    }
  });

  it('<store>/metrics/*.sql joins the store: listed, usable by name, and in the metrics view of standoff sql', () => {
    mkdirSync(join(S, 'metrics'), { recursive: true });
    writeFileSync(join(S, 'metrics', 'quality_high.sql'), `SELECT ${COLS.replace('value', 'CAST(value >= 4 AS DOUBLE) AS value')} FROM metrics WHERE metric = 'quality'`);
    try {
      const list = json(['ci', '--list-metrics', '--traces', S]);
      expect(list.find((m: { metric: string }) => m.metric === 'quality_high')).toMatchObject({ source: 'sql', kind: 'binary', observations: rows.length });
      const got = json(['ci', 'exact', '--traces', S, '--metric', 'quality_high']);
      expect(got[0].successes).toBe(rows.filter((x) => x.quality >= 4).length);
      const view = json(['sql', '--traces', S, 'SELECT metric, kind, CAST(count(*) AS INT) AS n, sum(value) AS s FROM metrics GROUP BY ALL ORDER BY metric']);
      expect(view).toEqual([
        { metric: 'correct', kind: 'binary', n: rows.length, s: rows.filter((x) => x.correct).length },
        // No status column in the CSV: invalid is not measured (NULL), never a constant 0.
        { metric: 'invalid', kind: null, n: rows.length, s: null },
        { metric: 'quality', kind: 'ordinal', n: rows.length, s: rows.reduce((a, x) => a + x.quality, 0) },
        { metric: 'quality_high', kind: 'binary', n: rows.length, s: rows.filter((x) => x.quality >= 4).length },
      ]);
      // A broken file fails where its metric is asked for (and the listing), not every other metric.
      const broken = join(S, 'metrics', 'broken.sql');
      writeFileSync(broken, 'SELECT run_id FROM episodes');
      expect(json(['ci', 'exact', '--traces', S, '--metric', 'correct'])[0].trials).toBe(rows.length);
      const b = runCli(['ci', 'exact', '--traces', S, '--metric', 'broken']);
      expect([b.code, b.stderr]).toEqual([3, `standoff: metric sql ${broken} yields no column "subject_model" (a metric yields ${COLS})\n`]);
      expect(runCli(['ci', '--list-metrics', '--traces', S]).code).toBe(3);
      expect(json(['sql', '--traces', S, "SELECT CAST(count(*) AS INT) AS n FROM metrics WHERE metric IN ('broken', 'quality_high')"])).toEqual([{ n: rows.length }]);
    } finally {
      rmSync(join(S, 'metrics'), { recursive: true, force: true });
    }
  });
});

describe('notebooks see the same metrics', () => {
  it('a sql block reads the metrics view with the scorers; a standoff block runs ci exact --metric <scorer> --reduce', () => {
    const nb = join(dir, 'scorers.md');
    writeFileSync(nb, '# scorers\n\n```sql\nSELECT metric, kind, CAST(count(*) AS INT) AS n FROM metrics GROUP BY ALL ORDER BY metric\n```\n\n```standoff\nci exact --metric correct --by subject_model --reduce at_least_one\n```\n');
    ok(['notebook', 'run', nb, '--traces', S, '--out', join(dir, 'nb-out.md')]);
    const md = readFileSync(join(dir, 'nb-out.md'), 'utf8');
    expect(md).toContain(`| correct | binary | ${rows.length} |`);
    expect(md).toContain(`| quality | ordinal | ${rows.length} |`);
    const k = new Set(of('acme-large').filter((r) => r.correct).map((r) => r.sample_id)).size;
    expect(md).toMatch(new RegExp(`\\| acme-large \\| correct \\| binary \\| at_least_one \\| ${k} \\| 150 \\|`));
  }, 60_000);
});

describe('scorer names: bound as parameters, built-in names namespaced', () => {
  it('a scorer named like a built-in is score:NAME; a hostile scorer name is data, not SQL', () => {
    const csv = join(dir, 'odd.csv');
    const hostile = "x') OR 1=1 --";
    writeFileSync(csv, [`model,item,invalid,"${hostile}"`, 'm1,a,1,1', 'm1,b,0,0', 'm2,a,1,0', 'm2,b,1,1'].join('\n') + '\n');
    const T = join(dir, 'T');
    ok(['ingest', 'csv', csv, '--traces', T, '--run-id', 'odd', '--subject', 'model', '--item', 'item', '--scores', `invalid,${hostile}`]);
    const list = json(['ci', '--list-metrics', '--traces', T]).map((m: { metric: string }) => m.metric);
    expect(list).toContain('score:invalid');
    const builtin = json(['ci', 'exact', '--traces', T, '--metric', 'invalid']);
    expect(builtin[0]).toMatchObject({ metric: 'invalid', successes: 0, trials: 0, not_measured: 4 });
    expect(builtin[0].note).toMatch(/"invalid" is the built-in metric; this store's scorer invalid is metric score:invalid/);
    const scorer = json(['ci', 'exact', '--traces', T, '--metric', 'score:invalid']);
    expect(scorer[0]).toMatchObject({ metric: 'score:invalid', successes: 3, trials: 4 });
    // The name reaches DuckDB as a bound parameter: it selects its own two successes, not every row.
    const inj = json(['ci', 'exact', '--traces', T, '--metric', hostile]);
    expect(inj[0]).toMatchObject({ metric: hostile, successes: 2, trials: 4 });
    const view = json(['sql', '--traces', T, 'SELECT metric, CAST(sum(value) AS INT) AS s FROM metrics GROUP BY 1 ORDER BY 1']);
    expect(view).toEqual([{ metric: 'invalid', s: null }, { metric: 'score:invalid', s: 3 }, { metric: hostile, s: 2 }]);
  });
});

describe('real Inspect and lm-eval scorers', () => {
  it('every Inspect fixture with scores: its scorers are listed and ci exact runs on each', () => {
    const fixtures = readdirSync(join(ROOT, 'tests', 'fixtures', 'inspect')).filter((f) => f.endsWith('.eval'));
    let scored = 0;
    for (const f of fixtures) {
      const T = join(dir, `inspect-${f}`);
      ok(['ingest', 'inspect', join(ROOT, 'tests', 'fixtures', 'inspect', f), '--traces', T]);
      const scorers = json(['ci', '--list-metrics', '--traces', T]).filter((m: { source: string }) => m.source === 'scorer');
      for (const s of scorers) {
        scored++;
        const got = json(['ci', 'exact', '--traces', T, '--metric', s.metric]);
        expect(got[0]).toMatchObject({ metric: s.metric, kind: 'binary', trials: s.observations });
      }
    }
    expect(scored).toBeGreaterThanOrEqual(5);
  }, 300_000); // one ingest and several CLI processes per fixture: minutes on a loaded machine

  it('lm-eval gsm8k: exact_match per filter is a metric', () => {
    const T = join(dir, 'gsm8k');
    ok(['ingest', 'lm-eval', join(ROOT, 'tests', 'fixtures', 'lm-eval', 'gsm8k'), '--traces', T]);
    const names = json(['ci', '--list-metrics', '--traces', T]).filter((m: { source: string }) => m.source === 'scorer').map((m: { metric: string }) => m.metric);
    expect(names).toEqual(['exact_match/flexible-extract', 'exact_match/strict-match']);
    const got = json(['ci', 'exact', '--traces', T, '--metric', 'exact_match/strict-match', '--by', 'subject_model']);
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((g: { kind: string }) => g.kind === 'binary')).toBe(true);
  });
});
