/**
 * Every case in the oracle file (R binom.test/qbeta, R boot, scipy, statsmodels, NLTK; see
 * tests/fixtures/oracle/cases.json, a copy of ../shared/oracle/cases.json) goes through the
 * public CLI: the test writes the case's input to a file, runs the command, and checks the JSON it
 * prints with the oracle's own tolerances ("abs" within tol, "band" inside the acceptance band).
 * When the oracle's checker and Debian's python3 are present, it also runs check.py on the
 * collected answers, so both checks must agree.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/cli.ts';

interface Case {
  id: string;
  kind: string;
  input: Record<string, unknown>;
  expected: Record<string, unknown>;
  required: string[];
  check: Record<string, { type: 'abs'; tol: number } | { type: 'band'; band: unknown }>;
}

const cases: Case[] = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/oracle/cases.json'), 'utf8')).cases;
const dir = mkdtempSync(join(tmpdir(), 'standoff-oracle-'));
const collected: Record<string, Record<string, unknown>> = {};

/** Runs the CLI asynchronously (cases run concurrently) and parses its JSON output. */
function cli(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin/standoff.js'), ...args, '--format', 'json'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`standoff ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

const EPS = 1e-9;
function compare(c: Case, got: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const f of c.required) if (!(f in got)) problems.push(`${f}: required field missing`);
  for (const [f, exp] of Object.entries(c.expected)) {
    if (!(f in got)) continue;
    const chk = c.check[f];
    const g = got[f];
    if (chk.type === 'abs') {
      const walk = (e: unknown, v: unknown, path: string): void => {
        if (e === null) {
          if (!(v === null || (typeof v === 'number' && Number.isNaN(v)))) problems.push(`${path}: expected null, got ${v}`);
        } else if (Array.isArray(e)) e.forEach((x, i) => walk(x, (v as unknown[])?.[i], `${path}[${i}]`));
        else if (typeof e === 'object') for (const [k, x] of Object.entries(e as object)) walk(x, (v as Record<string, unknown>)?.[k], `${path}.${k}`);
        else if (typeof v !== 'number' || Math.abs(v - (e as number)) > chk.tol) problems.push(`${path}: expected ${e}, got ${v}`);
      };
      walk(exp, g, f);
    } else {
      const band = chk.band as number[] | number[][];
      const inBand = (v: unknown, b: number[], path: string) => {
        if (typeof v !== 'number' || v < b[0] - EPS || v > b[1] + EPS) problems.push(`${path}: ${v} outside [${b[0]}, ${b[1]}]`);
      };
      if (Array.isArray(exp)) (band as number[][]).forEach((b, i) => inBand((g as number[])?.[i], b, `${f}[${i}]`));
      else inBand(g, band as number[], f);
    }
  }
  return problems;
}

function writeCsv(name: string, header: string[], rows: unknown[][]): string {
  const f = join(dir, name);
  writeFileSync(f, [header.join(','), ...rows.map((r) => r.map((v) => (v === null || v === undefined ? '' : String(v))).join(','))].join('\n') + '\n');
  return f;
}

const R = ['--resamples', '10000', '--seed', '12345'];

async function answer(c: Case): Promise<Record<string, unknown>> {
  const inp = c.input as any;
  const level = String(inp.confidence ?? 0.95);
  switch (c.kind) {
    case 'bootstrap_mean': {
      const f = writeCsv(`${c.id}.csv`, ['value'], (inp.data as number[]).map((v) => [v]));
      const base = ['ci', 'bootstrap', '--input', f, '--value', 'value', '--level', level, ...R];
      const [p, b] = await Promise.all([cli([...base, '--method', 'percentile']), cli([...base, '--method', 'bca'])]);
      return { mean: p.estimate, se_ddof1: p.se_clt, se_ddof0: p.se_clt_ddof0, percentile: [p.lower, p.upper], bca_strict: [b.lower, b.upper], bootstrap_se: p.se };
    }
    case 'bootstrap_paired': {
      const rows: unknown[][] = [];
      (inp.item_ids as string[]).forEach((id, i) => rows.push([id, 'A', inp.a[i]], [id, 'B', inp.b[i]]));
      const f = writeCsv(`${c.id}.csv`, ['item', 'arm', 'value'], rows);
      const base = ['ci', 'paired', '--input', f, '--item', 'item', '--arm', 'arm', '--value', 'value', '--a', 'A', '--b', 'B', '--level', level, ...R];
      const [p, b] = await Promise.all([cli([...base, '--method', 'percentile']), cli([...base, '--method', 'bca'])]);
      return {
        mean_a: p.mean_a,
        mean_b: p.mean_b,
        mean_diff: p.mean_diff,
        se_paired_ddof1: p.se_paired,
        se_paired_ddof0: p.se_paired_ddof0,
        se_unpaired_ddof1: p.se_unpaired,
        percentile: [p.lower, p.upper],
        bca_strict: [b.lower, b.upper],
        bootstrap_se: p.se_bootstrap,
      };
    }
    case 'bootstrap_cluster': {
      const rows: unknown[][] = [];
      (inp.item_ids as string[]).forEach((id, i) => (inp.scores[i] as number[]).forEach((v) => rows.push([id, v])));
      const f = writeCsv(`${c.id}.csv`, ['item', 'value'], rows);
      const base = ['ci', 'bootstrap', '--input', f, '--value', 'value', '--cluster', 'item', '--level', level, ...R];
      const [p, b] = await Promise.all([cli([...base, '--method', 'percentile']), cli([...base, '--method', 'bca'])]);
      return {
        mean: p.estimate,
        se_naive_ddof1: p.se_clt,
        se_clustered_cr0: p.se_clustered.cr0,
        se_clustered_cr1: p.se_clustered.cr1,
        se_clustered_miller: p.se_clustered.miller,
        percentile: [p.lower, p.upper],
        bca_strict: [b.lower, b.upper],
        bootstrap_se: p.se,
      };
    }
    case 'median_self_exclusion': {
      const rows: unknown[][] = [];
      (inp.judges as { id: string; model: string }[]).forEach((j, ji) =>
        (inp.samples as { id: string; subject_model: string }[]).forEach((s, si) => rows.push([s.id, s.subject_model, j.id, j.model, inp.scores[ji][si]])),
      );
      const f = writeCsv(`${c.id}.csv`, ['sample', 'subject_model', 'judge', 'judge_model', 'value'], rows);
      const out = await cli(['judges', '--input', f]);
      return { medians: Object.fromEntries(out.samples.map((s: { sample: string; median: number | null }) => [s.sample, s.median])) };
    }
    default:
      throw new Error(`no CLI mapping for oracle kind ${c.kind}`);
  }
}

/**
 * Kinds that one CLI call answers for all cases at once (a file with one row per case): Clopper-
 * Pearson via `ci exact --input`, and Krippendorff's alpha via `agreement --input --by case`.
 */
async function answerBatch(kind: string, mine: Case[]): Promise<Record<string, Record<string, unknown>> | null> {
  if (kind === 'clopper_pearson') {
    const levels = [...new Set(mine.map((c) => (c.input as any).confidence))];
    const out: Record<string, Record<string, unknown>> = {};
    for (const level of levels) {
      const these = mine.filter((c) => (c.input as any).confidence === level);
      const f = writeCsv(`cp-${level}.csv`, ['id', 'successes', 'trials'], these.map((c) => [c.id, (c.input as any).x, (c.input as any).n]));
      const base = ['ci', 'exact', '--input', f, '--level', String(level)];
      const [two, up, lo] = await Promise.all([cli(base), cli([...base, '--sided', 'upper']), cli([...base, '--sided', 'lower'])]);
      these.forEach((c, i) => {
        expect(two[i].group.id).toBe(c.id);
        out[c.id] = { two_sided: [two[i].lower, two[i].upper], upper_one_sided: up[i].upper, lower_one_sided: lo[i].lower };
      });
    }
    return out;
  }
  if (kind === 'krippendorff_alpha') {
    const rows: unknown[][] = [];
    for (const c of mine) ((c.input as any).ratings as unknown[][]).forEach((raterRow, r) => raterRow.forEach((v, u) => rows.push([c.id, `u${u}`, `r${r}`, v])));
    const f = writeCsv('alpha.csv', ['case', 'unit', 'rater', 'value'], rows);
    const out: Record<string, Record<string, unknown>> = Object.fromEntries(mine.map((c) => [c.id, {}]));
    await Promise.all(
      ['nominal', 'ordinal', 'interval', 'ratio'].map(async (level) => {
        const res = await cli(['agreement', '--input', f, '--by', 'case', '--measure', level, '--resamples', '20']);
        for (const r of res) out[r.group.case][level] = r.alpha;
      }),
    );
    return out;
  }
  return null;
}

describe('oracle cases through the public CLI', () => {
  for (const kind of [...new Set(cases.map((c) => c.kind))]) {
    it(`${kind}: ${cases.filter((c) => c.kind === kind).length} cases`, async () => {
      const mine = cases.filter((c) => c.kind === kind);
      const failures: string[] = [];
      const batch = await answerBatch(kind, mine);
      if (batch) {
        for (const c of mine) {
          collected[c.id] = batch[c.id];
          for (const p of compare(c, batch[c.id])) failures.push(`${c.id}: ${p}`);
        }
        expect(failures).toEqual([]);
        return;
      }
      // A few at a time: each case spawns the CLI.
      for (let i = 0; i < mine.length; i += 4) {
        await Promise.all(
          mine.slice(i, i + 4).map(async (c) => {
            const got = await answer(c);
            collected[c.id] = got;
            for (const p of compare(c, got)) failures.push(`${c.id}: ${p}`);
          }),
        );
      }
      expect(failures).toEqual([]);
    }, 300_000);
  }

  afterAll(() => {
    const checker = join(ROOT, '..', 'shared', 'oracle', 'check.py');
    if (!existsSync(checker) || !existsSync('/usr/bin/python3') || Object.keys(collected).length !== cases.length) return;
    const results = join(dir, 'results.json');
    writeFileSync(results, JSON.stringify(collected));
    const r = spawnSync('/usr/bin/python3', [checker, join(ROOT, 'tests/fixtures/oracle/cases.json'), results], { encoding: 'utf8' });
    expect(r.stdout.trim().split('\n').pop()).toBe(`${cases.length} passed, 0 failed`);
  });
});
