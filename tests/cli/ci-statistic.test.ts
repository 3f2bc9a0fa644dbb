/**
 * `ci bootstrap --statistic` and `ci paired --statistic` through the real CLI: R boot's bands
 * (tests/oracle/statistic-boot.json) for --input data, the same bytes for any --threads, a real
 * DuckDB store (the committed demo run in traces/) against the library on the loaded vectors,
 * and the usage (exit 2) and data (exit 3) errors.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, ROOT } from '../helpers/cli.ts';
import { bootstrapMean, bootstrapStatistic } from '../../src/stats/index.ts';
import { float64Column, withStore } from '../../src/analysis/ci.ts';
import { loadMetric } from '../../src/analysis/metrics.ts';

const ORACLE = JSON.parse(readFileSync(join(ROOT, 'tests', 'oracle', 'statistic-boot.json'), 'utf8'));
const TRACES = join(ROOT, 'traces');
let dir: string;
const file = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const ok = (args: string[]) => {
  const r = runCli([...args, '--format', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return { json: JSON.parse(r.stdout), stdout: r.stdout };
};
const EPS = 1e-9;
const inBand = (v: number, [lo, hi]: [number, number], where: string) => {
  expect(v, `${where} = ${v} outside [${lo}, ${hi}]`).toBeGreaterThanOrEqual(lo - EPS);
  expect(v, `${where} = ${v} outside [${lo}, ${hi}]`).toBeLessThanOrEqual(hi + EPS);
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'standoff-ci-statistic-'));
});

describe('ci bootstrap --statistic over --input, against R boot', () => {
  // one case per statistic (the library test covers every case)
  const picked = ['median', 'trimmed-mean:0.1', 'sd', 'quantile:0.9'].map((s) => ORACLE.cases.find((c: { statistic: string }) => c.statistic === s));
  for (const c of picked) {
    it(`${c.id}: percentile and BCa inside R's bands; the estimate is ${c.tool.estimate}'s`, () => {
      const f = file(`${c.id}.csv`, 'value\n' + c.data.join('\n') + '\n');
      for (const method of ['percentile', 'bca']) {
        const { json } = ok(['ci', 'bootstrap', '--input', f, '--value', 'value', '--statistic', c.statistic, '--method', method, '--seed', '1', '--resamples', '10000']);
        expect(json.statistic).toBe(c.statistic);
        expect(Math.abs(json.estimate - c.estimate)).toBeLessThanOrEqual(1e-12);
        inBand(json.lower, c.band[method][0], `${c.id} ${method} lower`);
        inBand(json.upper, c.band[method][1], `${c.id} ${method} upper`);
        expect([json.seed, json.engine, json.rng, json.se_clt]).toEqual([1, 'resample-blocks', 'xoshiro128**', null]);
      }
    });
  }

  it('--threads 1, 2 and 3 print the same bytes (median, BCa; 20,000 values x 2,000 resamples)', () => {
    const values = Array.from({ length: 20_000 }, (_, i) => ((i * 7919) % 10007) / 997 + (i % 3) * 0.001);
    const f = file('many.csv', 'value,item\n' + values.map((v, i) => `${v},${i % 500}`).join('\n') + '\n');
    for (const extra of [[], ['--cluster', 'item']]) {
      const outs = [1, 2, 3].map((t) => ok(['ci', 'bootstrap', '--input', f, '--value', 'value', '--statistic', 'median', '--method', 'bca', '--resamples', '2000', '--threads', String(t), ...extra]).stdout);
      expect(outs[1]).toBe(outs[0]);
      expect(outs[2]).toBe(outs[0]);
      const j = JSON.parse(outs[0]);
      expect(j.lower).toBeLessThan(j.estimate);
      expect(j.upper).toBeGreaterThan(j.estimate);
    }
  });

  it('--statistic mean keeps the exact path for 0/1 data; proportion is that mean, checked', () => {
    const f = file('bin.csv', 'v\n' + [1, 0, 0, 1, 0, 0, 0, 1, 0, 0].join('\n') + '\n');
    const mean = ok(['ci', 'bootstrap', '--input', f, '--value', 'v', '--seed', '1']).json;
    const prop = ok(['ci', 'bootstrap', '--input', f, '--value', 'v', '--seed', '1', '--statistic', 'proportion']).json;
    const lib = bootstrapMean([1, 0, 0, 1, 0, 0, 0, 1, 0, 0], { seed: 1, resamples: 10_000 });
    expect([mean.engine, mean.lower, mean.upper]).toEqual(['multinomial', lib.lower, lib.upper]);
    expect({ ...prop, statistic: 'mean' }).toEqual(mean);
    expect(prop.statistic).toBe('proportion');
  });

  it('identical values: BCa gives no interval and says why', () => {
    const f = file('same.csv', 'v\n' + Array(12).fill(0.7).join('\n') + '\n');
    const { json } = ok(['ci', 'bootstrap', '--input', f, '--value', 'v', '--statistic', 'median', '--method', 'bca']);
    expect([json.estimate, json.lower, json.upper]).toEqual([0.7, null, null]);
    expect(json.note).toMatch(/^BCa is undefined on degenerate data/);
  });
});

describe('ci paired --statistic median', () => {
  it('the median of a - b: with b = 0 it is the one-sample bootstrap of a, inside R\'s bands', () => {
    const c = ORACLE.cases.find((x: { statistic: string }) => x.statistic === 'median');
    const f = file('paired.csv', 'item,arm,value\n' + c.data.map((v: number, i: number) => `i${i},A,${v}\ni${i},B,0`).join('\n') + '\n');
    for (const method of ['percentile', 'bca']) {
      const { json } = ok(['ci', 'paired', '--input', f, '--item', 'item', '--arm', 'arm', '--value', 'value', '--a', 'A', '--b', 'B', '--statistic', 'median', '--method', method, '--seed', '1']);
      expect(json.statistic).toBe('median');
      expect(Math.abs(json.median_diff - c.estimate)).toBeLessThanOrEqual(1e-12);
      inBand(json.lower, c.band[method][0], `paired ${method} lower`);
      inBand(json.upper, c.band[method][1], `paired ${method} upper`);
      expect(json.p_value).toBeUndefined();
      const lib = bootstrapStatistic(c.data, { name: 'median' }, { seed: 1, resamples: 10_000, method: method as 'bca' });
      expect([json.lower, json.upper]).toEqual([lib.lower, lib.upper]);
    }
  });

  it('--statistic mean is the default comparison (p and MDE)', () => {
    const f = file('paired2.csv', 'item,arm,value\n' + Array.from({ length: 30 }, (_, i) => `i${i},A,${(i % 7) / 7}\ni${i},B,${(i % 5) / 5}`).join('\n') + '\n');
    const args = ['ci', 'paired', '--input', f, '--item', 'item', '--arm', 'arm', '--value', 'value', '--a', 'A', '--b', 'B'];
    const d = ok(args).json;
    const m = ok([...args, '--statistic', 'mean']).json;
    expect(m).toEqual(d);
    expect(typeof d.p_value).toBe('number');
  });
});

describe('ci bootstrap --statistic over a real store (traces/)', () => {
  it('--metric alignment --statistic median --by subject_model equals bootstrapStatistic on the loaded vectors, clustered on scenario_id', async () => {
    const { json } = ok(['ci', 'bootstrap', '--traces', TRACES, '--metric', 'alignment', '--by', 'subject_model', '--statistic', 'median', '--method', 'bca', '--seed', '5', '--resamples', '2000']);
    const groups = await withStore({ traces: TRACES }, async (conn) => {
      const t = await loadMetric(conn, 'alignment', ['subject_model']);
      const v = float64Column(t, 'value');
      const subj = t.getChild('subject_model')!;
      const scen = t.getChild('scenario_id')!;
      const by = new Map<string, { values: number[]; clusters: string[] }>();
      for (let i = 0; i < t.numRows; i++) {
        const k = String(subj.get(i));
        if (!by.has(k)) by.set(k, { values: [], clusters: [] });
        by.get(k)!.values.push(v[i]);
        by.get(k)!.clusters.push(String(scen.get(i)));
      }
      return by;
    });
    expect(json.length).toBe(groups.size);
    for (const row of json) {
      const g = groups.get(row.group.subject_model)!;
      const lib = bootstrapStatistic(g.values, { name: 'median' }, { seed: 5, resamples: 2000, method: 'bca', clusters: g.clusters });
      expect([row.statistic, row.sampling, row.cluster, row.clusters, row.n]).toEqual(['median', 'clustered', 'scenario_id', lib.clusters, g.values.length]);
      expect(row.estimate).toBe(lib.estimate);
      if (row.lower !== null) expect([row.lower, row.upper]).toEqual([lib.lower, lib.upper]);
      else expect(row.note).toBeDefined();
    }
  });

  it('--statistic proportion: a binary metric gives the mean\'s interval; alignment (0.5 values) is a data error, exit 3', () => {
    const base = ['ci', 'bootstrap', '--traces', TRACES, '--by', 'subject_model'];
    const mean = ok([...base, '--metric', 'policy_action']).json;
    const prop = ok([...base, '--metric', 'policy_action', '--statistic', 'proportion']).json;
    expect(prop.map((r: Record<string, unknown>) => ({ ...r, statistic: 'mean' }))).toEqual(mean);
    const r = runCli([...base, '--metric', 'alignment', '--statistic', 'proportion']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/--statistic proportion needs 0\/1 values, but metric alignment holds 0\.5/);
  });
});

describe('usage and data errors', () => {
  const cases: [string[], number, RegExp][] = [
    [['--statistic', 'trimmed-mean:0.6'], 2, /--statistic trimmed-mean:P needs P in \[0, 0\.5\)/],
    [['--statistic', 'trimmed-mean:x'], 2, /--statistic trimmed-mean needs a trim proportion/],
    [['--statistic', 'quantile:1.5'], 2, /--statistic quantile:P needs P strictly between 0 and 1/],
    [['--statistic', 'quantile:0'], 2, /strictly between 0 and 1/],
    [['--statistic', 'quantile'], 2, /--statistic quantile needs a probability/],
    [['--statistic', 'mode'], 2, /--statistic must be mean, median/],
    [['--statistic', 'median', '--threads', '0'], 2, /--threads must be an integer >= 1/],
    [['--statistic', 'proportion'], 3, /--statistic proportion needs 0\/1 values, but .*cont\.csv column "v" holds 0\.25/],
  ];
  for (const [args, code, message] of cases) {
    it(`${args.join(' ')} -> exit ${code}`, () => {
      const f = file('cont.csv', 'v\n0.25\n1\n0\n');
      const r = runCli(['ci', 'bootstrap', '--input', f, '--value', 'v', ...args]);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });
  }
  it('ci paired --statistic sd -> exit 2', () => {
    const f = file('p.csv', 'item,arm,value\na,A,1\na,B,0\nb,A,0\nb,B,0\n');
    const r = runCli(['ci', 'paired', '--input', f, '--item', 'item', '--arm', 'arm', '--value', 'value', '--a', 'A', '--b', 'B', '--statistic', 'sd']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--statistic must be mean or median, got "sd"/);
  });
});
