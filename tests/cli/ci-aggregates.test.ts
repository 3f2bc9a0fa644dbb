/**
 * `standoff ci exact|bootstrap|paired --from-aggregates FILE` (#28.3): DuckDB runs the shipped
 * aggregate SQL (sql/) over the committed demo store and writes per-cluster sums as
 * Parquet and CSV; the CLI (dist/) then gives the same intervals from the file as over the store,
 * with the same seed: counts, estimates, interval ends, bootstrap SE and engine identical; SEs,
 * p and MDE from the moments within 1e-12. Malformed files fail with one line naming the file,
 * line or row, and column (exit 3).
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { openStore } from '../../src/store/open-store.ts';
import { storeMetrics } from '../../src/store/metrics.ts';
import { quoteLiteral } from '../../src/store/duckdb.ts';
import { aggregateQuery, aggregateSql } from '../../src/analysis/ci-aggregates.ts';

const TRACES = join(ROOT, 'traces');
const dir = mkdtempSync(join(tmpdir(), 'standoff-aggs-'));
const f = (name: string) => join(dir, name);

const run = (args: string[]) => runCli([...args, '--format', 'json']);
const json = (args: string[]) => {
  const r = run(args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};
const direct = (args: string[]) => json([...args, '--traces', TRACES]);

/** Writes `kind` aggregates of `metric` with DuckDB (COPY, parameters bound) to `out`. */
async function writeAggregates(metric: string, kind: 'cluster' | 'paired', out: string, pair?: { a: string; b: string }) {
  const store = await openStore(TRACES, { requireRuns: true });
  try {
    const m = (await storeMetrics(store.conn, { storeDir: TRACES })).get(metric);
    const q = aggregateQuery(m, kind, pair);
    const format = out.endsWith('.parquet') ? '(FORMAT parquet)' : '(HEADER)';
    await store.conn.run(`COPY (${q.sql}) TO ${quoteLiteral(out)} ${format}`, q.params as never);
  } finally {
    store.close();
  }
}

const PAIR = { a: 'sim:careful', b: 'sim:hasty' };
const PAIR2 = { a: 'sim:careful', b: 'sim:thorough' };

beforeAll(async () => {
  await writeAggregates('gathered_evidence', 'cluster', f('ge.parquet'));
  await writeAggregates('alignment', 'cluster', f('al.csv'));
  await writeAggregates('policy_action', 'cluster', f('pa.csv'));
  await writeAggregates('gathered_evidence', 'paired', f('ge-pair.parquet'), PAIR);
  await writeAggregates('alignment', 'paired', f('al-pair.csv'), PAIR2);
}, 60_000);

/** Fields that must be identical, and fields equal to rounding (from moments instead of vectors). */
function same(a: Record<string, unknown>, b: Record<string, unknown>, exact: string[], close: string[]) {
  for (const k of exact) expect([k, b[k]]).toEqual([k, a[k]]);
  for (const k of close) {
    const x = a[k] as number | null | Record<string, number>;
    const y = b[k] as typeof x;
    if (x === null || typeof x === 'number') {
      if (x === null) expect([k, y]).toEqual([k, null]);
      else expect(Math.abs((y as number) - x), k).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(x)));
    } else for (const v of Object.keys(x)) expect(Math.abs((y as Record<string, number>)[v]! - x[v]!), `${k}.${v}`).toBeLessThanOrEqual(1e-12);
  }
}

describe('ci --from-aggregates gives the store path\'s intervals', () => {
  it('ci exact: the same counts, Clopper-Pearson ends and notes (binary and not binary)', () => {
    for (const [metric, file] of [['gathered_evidence', 'ge.parquet'], ['policy_action', 'pa.csv'], ['alignment', 'al.csv']]) {
      const want = direct(['ci', 'exact', '--metric', metric, '--by', 'subject_model']);
      const got = json(['ci', 'exact', '--from-aggregates', f(file), '--metric', metric, '--by', 'subject_model']);
      expect(got.length).toBe(want.length);
      want.forEach((w: Record<string, unknown>, i: number) => same(w, got[i], ['group', 'metric', 'successes', 'trials', 'estimate', 'lower', 'upper', 'level', 'method', 'not_measured', 'max_per_scenario', 'note'], []));
    }
  }, 300_000);

  it('ci bootstrap: identical interval, SE and engine for the same seed (percentile by subject, BCa pooled)', () => {
    const cases: [string, string, string[]][] = [
      ['alignment', 'al.csv', ['--by', 'subject_model']],
      ['gathered_evidence', 'ge.parquet', ['--by', 'subject_model']],
      ['policy_action', 'pa.csv', ['--method', 'bca']],
    ];
    for (const [metric, file, extra] of cases) {
      const common = ['--seed', '11', '--resamples', '2000', ...extra];
      const want = [direct(['ci', 'bootstrap', '--metric', metric, ...common])].flat();
      const got = [json(['ci', 'bootstrap', '--from-aggregates', f(file), '--metric', metric, ...common])].flat();
      expect(got.length).toBe(want.length);
      expect(want.some((w: { lower: number | null }) => w.lower !== null)).toBe(true);
      want.forEach((w: Record<string, unknown>, i: number) => {
        same(w, got[i], ['group', 'metric', 'n', 'statistic', 'sampling', 'cluster', 'clusters', 'estimate', 'lower', 'upper', 'se', 'method', 'resamples', 'seed', 'rng', 'engine', 'not_measured', 'note'], ['se_clt', 'se_clt_ddof0', 'se_clustered']);
      });
    }
  }, 300_000);

  it('ci paired: identical paired cluster bootstrap, moments-based SEs, p and MDE to rounding', () => {
    const cases: [string, string, typeof PAIR, string[]][] = [
      ['gathered_evidence', 'ge-pair.parquet', PAIR, []],
      ['alignment', 'al-pair.csv', PAIR2, ['--method', 'bca']],
    ];
    for (const [metric, file, p, extra] of cases) {
      const common = ['--a', p.a, '--b', p.b, '--seed', '5', '--resamples', '2000', ...extra];
      const want = direct(['ci', 'paired', '--metric', metric, ...common]);
      const got = json(['ci', 'paired', '--from-aggregates', f(file), '--metric', metric, ...common]);
      expect(want.lower).not.toBeNull();
      same(want, got, ['a', 'b', 'metric', 'dropped_unpaired', 'n', 'clusters', 'mean_a', 'mean_b', 'mean_diff', 'lower', 'upper', 'level', 'method', 'sampling', 'cluster', 'resamples', 'seed', 'engine', 'se_bootstrap', 'alpha', 'power', 'note'], ['se', 'se_paired', 'se_paired_ddof0', 'se_unpaired', 'se_clustered', 'correlation', 'p_value', 'mde']);
    }
  }, 300_000);

  it('rows in any order give the same interval (pooled rows of one cluster are added up); a changed cluster does not', () => {
    const want = json(['ci', 'bootstrap', '--from-aggregates', f('al.csv'), '--seed', '3', '--resamples', '1000']);
    const [head, ...rows] = readFileSync(f('al.csv'), 'utf8').trim().split('\n');
    writeFileSync(f('al-reversed.csv'), [head, ...[...rows].reverse()].join('\n') + '\n');
    const got = json(['ci', 'bootstrap', '--from-aggregates', f('al-reversed.csv'), '--seed', '3', '--resamples', '1000']);
    same(want, got, ['n', 'clusters', 'estimate', 'lower', 'upper', 'se', 'engine'], []);
    // One cluster one success better: a 0 turned into a 1 (sum + 1, sum_sq + 1). Only a cluster of
    // 0/1 values (sum_sq = sum) with a 0 in it (sum < n) can take it and stay valid, and the file's
    // row order is DuckDB's, so the cluster is looked up rather than taken from the first row.
    const cols = head!.split(',');
    const at = (r: string, c: string) => Number(r.split(',')[cols.indexOf(c)]);
    const pick = rows.findIndex((r) => at(r, 'sum_sq') === at(r, 'sum') && at(r, 'sum') < at(r, 'n'));
    expect(pick).toBeGreaterThanOrEqual(0);
    const moved = rows.map((r, i) => (i === pick ? r.split(',').map((v, j) => (cols[j] === 'sum' || cols[j] === 'sum_sq' ? String(Number(v) + 1) : v)).join(',') : r));
    writeFileSync(f('al-moved.csv'), [head, ...moved].join('\n') + '\n');
    const other = json(['ci', 'bootstrap', '--from-aggregates', f('al-moved.csv'), '--seed', '3', '--resamples', '1000']);
    expect(other.estimate).not.toBe(want.estimate);
    expect([other.lower, other.upper]).not.toEqual([want.lower, want.upper]);
  });
});

describe('malformed aggregate files fail on purpose (one line, file, line/row, column, exit 3)', () => {
  const bad = (name: string, text: string) => {
    writeFileSync(f(name), text);
    return f(name);
  };
  const fails = (args: string[], code: number, ...patterns: RegExp[]) => {
    const r = run(args);
    expect(r.code, r.stdout + r.stderr).toBe(code);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    for (const p of patterns) expect(r.stderr).toMatch(p);
  };
  const HEAD = 'subject_model,scenario_id,n,sum,sum_sq,not_measured,nonbinary';

  it('a cell that is not a number names the line and column', () => {
    const file = bad('text-n.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,five,3,3,0,0\n`);
    fails(['ci', 'bootstrap', '--from-aggregates', file], 3, /text-n\.csv/, /line 3/, /\bn\b/, /expected a number, got "?five"?/);
  });

  it('the typed read: an empty cell, a number stored as text in Parquet, an infinite sum', async () => {
    fails(['ci', 'bootstrap', '--from-aggregates', bad('empty-sum.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,5,,3,0,0\n`)], 3, /empty-sum\.csv: line 3: column "sum": empty value/);
    fails(['ci', 'bootstrap', '--from-aggregates', bad('inf-sum.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,5,inf,3,0,0\n`)], 3, /inf-sum\.csv: line 3: column "sum": expected a finite number, got Infinity/);
    fails(['ci', 'bootstrap', '--from-aggregates', bad('ragged.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,5,3,3,0\n`)], 3, /ragged\.csv: line 3/);
    const pq = f('text-n.parquet');
    const store = await openStore(TRACES, { requireRuns: true });
    try {
      await store.conn.run(`COPY (SELECT * FROM (VALUES ('s1', '2', 1.0, 1.0), ('s2', 'two', 1.0, 1.0)) t(scenario_id, n, sum, sum_sq)) TO ${quoteLiteral(pq)} (FORMAT parquet)`);
    } finally {
      store.close();
    }
    fails(['ci', 'bootstrap', '--from-aggregates', pq], 3, /text-n\.parquet: row 2: column "n": expected a number, got "?two"?/);
  });

  it('a negative or fractional count names the line and column', () => {
    fails(['ci', 'exact', '--from-aggregates', bad('neg-n.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,-2,0,0,0,0\n`)], 3, /neg-n\.csv: line 3: column "n": expected a count/);
    fails(['ci', 'bootstrap', '--from-aggregates', bad('frac-n.csv', `${HEAD}\nm,s1,2.5,1,1,0,0\nm,s2,2,1,1,0,0\n`)], 3, /frac-n\.csv: line 2: column "n"/);
  });

  it('a sum of squares below sum^2 / n is not a sum of squares', () => {
    fails(['ci', 'bootstrap', '--from-aggregates', bad('ss.csv', `${HEAD}\nm,s1,5,3,3,0,0\nm,s2,4,4,1,0,0\n`)], 3, /ss\.csv: line 3: column "sum_sq": 1 is below sum\^2 \/ n = 4/);
  });

  it('a missing column is named, in CSV and Parquet', () => {
    fails(['ci', 'paired', '--from-aggregates', bad('no-ab.csv', 'scenario_id,n,sum_a,sum_b,sum_sq_a,sum_sq_b,only_a,only_b\ns1,2,1,1,1,1,0,0\n'), '--a', 'x', '--b', 'y'], 3, /no-ab\.csv/, /column "sum_ab"/);
    fails(['ci', 'paired', '--from-aggregates', f('ge.parquet')], 3, /ge\.parquet/, /column "sum_a"/);
  });

  it('paired keys measured twice (several runs) are refused, naming the row', () => {
    const file = bad('dup.csv', 'scenario_id,n,sum_a,sum_b,sum_sq_a,sum_sq_b,sum_ab,only_a,only_b,duplicates\ns1,3,2,1,2,1,1,0,0,0\ns2,3,1,2,1,2,1,0,0,1\ns3,3,1,2,1,2,1,0,0,0\n');
    fails(['ci', 'paired', '--from-aggregates', file, '--a', 'x', '--b', 'y'], 3, /dup\.csv: line 3: column "duplicates"/, /several runs/);
  });

  it('ci exact needs the nonbinary column; a Parquet row is named by number', async () => {
    fails(['ci', 'exact', '--from-aggregates', bad('no-nb.csv', 'scenario_id,n,sum,sum_sq\ns1,2,1,1\ns2,2,2,2\n')], 3, /no-nb\.csv/, /column "nonbinary"/);
    const pq = f('bad-row.parquet');
    const store = await openStore(TRACES, { requireRuns: true });
    try {
      await store.conn.run(`COPY (SELECT * FROM (VALUES ('s1', 2, 1.0, 1.0, 0, 0), ('s2', 2, 5.0, 1.0, 0, 0)) t(scenario_id, n, sum, sum_sq, not_measured, nonbinary)) TO ${quoteLiteral(pq)} (FORMAT parquet)`);
    } finally {
      store.close();
    }
    fails(['ci', 'bootstrap', '--from-aggregates', pq], 3, /bad-row\.parquet: row 2: column "sum_sq"/);
  });

  it('flags that need observations are usage errors (exit 2)', () => {
    fails(['ci', 'bootstrap', '--from-aggregates', f('al.csv'), '--no-cluster'], 2, /--no-cluster needs the observations/);
    fails(['ci', 'bootstrap', '--from-aggregates', f('al.csv'), '--statistic', 'median'], 2, /--statistic must be mean or proportion/);
    fails(['ci', 'exact', '--from-aggregates', f('ge.parquet'), '--by', 'epoch'], 2, /--by epoch does not go with --from-aggregates/);
    fails(['ci', 'paired', '--from-aggregates', f('ge-pair.parquet'), '--input', 'x.csv'], 2, /do not apply/);
  });
});

describe('the aggregate SQL ships and is one text for every engine', () => {
  it('npm pack includes sql/*.sql (the DuckDB, Spark and Trino files)', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const files = (JSON.parse(r.stdout)[0].files as { path: string }[]).map((x) => x.path);
    for (const p of ['sql/cluster-aggregates.sql', 'sql/paired-aggregates.sql', 'sql/spark/paired-aggregates.sql', 'sql/trino/paired-aggregates.sql']) expect(files).toContain(p);
    // No sources: an installed package without src/ runs dist/ (tests/cli/install.test.ts).
    expect(files.filter((x) => x.startsWith('src/'))).toEqual([]);
  });

  it('the Spark and Trino paired files differ from DuckDB\'s only in the parameter markers and the comment naming them', () => {
    const body = (s: string) => s.split('\n').filter((l) => !/^-- (DuckDB|Spark|Trino)/.test(l)).join('\n');
    const duck = body(aggregateSql('paired'));
    expect(body(aggregateSql('paired', 'spark')).replace(':a', '$a').replace(':b', '$b')).toBe(duck);
    expect(body(aggregateSql('paired', 'trino')).replace('?', '$a').replace('?', '$b')).toBe(duck);
    // The one-sample SQL is one file for all three.
    expect(aggregateSql('cluster', 'spark')).toBe(aggregateSql('cluster'));
  });
});
