/**
 * Caps and overflow (issue 22, LOWs): `--resamples` is an integer from 1 to 1e7 and `--level` is
 * strictly between 0 and 1 on every command and in notebook blocks, each a usage error (exit 2,
 * one line) from one definition (`parseResamples` / `parseLevel`, `MAX_RESAMPLES`); the mean of
 * 1e308, 1e308, 1e308, -1e308 is 5e307 (exact power-of-two scaling), not Infinity.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRun } from '../../src/store/write-run.ts';
import { runNotebook } from '../../src/notebook/notebook.ts';
import { standoffBlockRunner } from '../../src/cli/notebook-blocks.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { MAX_RESAMPLES } from '../../src/stats/index.ts';
import { sampleBundle } from '../helpers/fixtures.ts';
import { runCli } from '../helpers/cli.ts';

const runStandoffBlock = standoffBlockRunner(buildProgram);

let root: string;
let store: string;
let big: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-caps-'));
  store = join(root, 'traces');
  await writeRun(store, sampleBundle('r1'));
  big = join(root, 'big.csv');
  writeFileSync(big, 'model,item,score\nm,i1,1e308\nm,i2,1e308\nm,i3,1e308\nm,i4,-1e308\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const usage = (args: string[], why: RegExp) => {
  const r = runCli(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
  expect(r.stderr.trim().split('\n').length, r.stderr).toBe(1);
  expect(r.stderr).toMatch(why);
};

describe('--resamples and --level caps', () => {
  it('ci bootstrap: 1e8, 1e9, 1e20, 0, -5 and 10000001 are usage errors', () => {
    expect(MAX_RESAMPLES).toBe(10_000_000);
    for (const n of ['1e8', '1e9', '1e20', '0', '-5', '10000001', '2.5']) {
      usage(['ci', 'bootstrap', '--input', big, '--value', 'score', `--resamples=${n}`], /--resamples must be an integer from 1 to 10000000/);
    }
  });
  it('agreement, probes, report build and notebook run take the same cap', () => {
    usage(['agreement', '--traces', store, '--resamples', '1e8'], /--resamples must be an integer from 1 to 10000000/);
    usage(['probes', '--traces', store, '--resamples', '1e9'], /--resamples must be an integer from 1 to 10000000/);
    usage(['report', 'build', '--traces', store, '--out', join(root, 'r'), '--resamples', '1e20'], /--resamples must be an integer from 1 to 10000000/);
    usage(['notebook', 'run', 'x.md', '--traces', store, '--resamples', '0'], /--resamples must be an integer from 1 to 10000000/);
  });
  it('--level 1, 0, 1.5 and -0.5 are usage errors', () => {
    for (const l of ['1', '0', '1.5', '-0.5']) {
      usage(['ci', 'exact', '--successes', '3', '--trials', '10', `--level=${l}`], /--level must be strictly between 0 and 1/);
    }
    usage(['ci', 'bootstrap', '--input', big, '--value', 'score', '--level', '1'], /--level must be strictly between 0 and 1/);
  });
  it('a notebook block with --resamples 1e9 or --level 1: notebook.badCommand (usage), one line', async () => {
    for (const opt of ['--resamples 1e9', '--resamples 0', '--level 1']) {
      const p = join(root, 'cap.md');
      writeFileSync(p, '```standoff\nci bootstrap --metric gathered_evidence ' + opt + '\n```\n');
      const e = await runNotebook(p, { traces: store, out: join(root, 'cap-out'), standoff: runStandoffBlock }).catch((x) => x);
      expect(e.code, opt).toBe('notebook.badCommand');
      expect(e.kind).toBe('usage');
      expect(e.message).not.toContain('\n');
    }
  });
});

describe('the mean of huge values', () => {
  it('ci bootstrap --statistic mean of 1e308 x3 and -1e308: estimate 5e307, finite interval and standard errors', () => {
    for (const method of ['percentile', 'bca']) {
      const r = runCli(['ci', 'bootstrap', '--input', big, '--value', 'score', '--statistic', 'mean', '--resamples', '500', '--method', method, '--format', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const row = JSON.parse(r.stdout);
      expect(row.estimate).toBe(5e307);
      expect(row.lower).toBeGreaterThanOrEqual(-1e308);
      expect(row.lower).toBeLessThan(5e307);
      expect(row.upper).toBe(1e308);
      expect(Number.isFinite(row.se)).toBe(true);
      // scipy: np.std([1e308]*3 + [-1e308], ddof=1) / 2 overflows; exact: sqrt(3e616 / 3) / 2 = 5e307
      expect(row.se_clt).toBeCloseTo(5e307, -300);
    }
  });
});
