/**
 * Bad input and edge cases of `buildReport`: each is a one-line StandoffError with a
 * `report.<problem>` code and the right exit kind, and nothing partial is left behind; sections
 * without data say so; several runs are handled (same suite) or refused (different suites).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { buildAnyReport, buildReport } from '../../src/report/index.ts';
import { writeRun } from '../../src/store/write-run.ts';
import { StandoffError } from '../../src/errors.ts';

let root: string;
let store: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-report-bad-'));
  store = join(root, 'traces');
  await writeSyntheticStore(store, { episodes: 54, seed: 3, epochs: 1 });
}, 60_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<StandoffError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StandoffError);
    const e = err as StandoffError;
    expect(e.message).not.toContain('\n');
    return e;
  }
  throw new Error('expected a failure');
}

const tempsIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((e) => e.includes('.tmp-') || e.endsWith('.old')) : []);

describe('bad input', () => {
  it('a store that does not exist: report.noStore (store)', async () => {
    const e = await failure(buildReport({ traces: join(root, 'nope'), out: join(root, 'o1') }));
    expect([e.code, e.kind]).toEqual(['report.noStore', 'store']);
    expect(existsSync(join(root, 'o1'))).toBe(false);
  });

  it('an empty store: report.emptyStore (store)', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const e = await failure(buildReport({ traces: empty, out: join(root, 'o2') }));
    expect([e.code, e.kind]).toEqual(['report.emptyStore', 'store']);
    expect(e.message).toMatch(/holds no runs/);
    expect(existsSync(join(root, 'o2'))).toBe(false);
  });

  it('a run id that does not exist: report.noSuchRun (usage), listing the runs', async () => {
    const e = await failure(buildReport({ traces: store, runs: ['synthetic-3', 'ghost'], out: join(root, 'o3') }));
    expect([e.code, e.kind]).toEqual(['report.noSuchRun', 'usage']);
    expect(e.message).toBe(`run "ghost" does not exist in ${store} (runs: synthetic-3)`);
    expect(existsSync(join(root, 'o3'))).toBe(false);
  });

  it('runs of different suites: report.mixedSuites (usage), listing suites and runs; --run picks one', async () => {
    const mixed = join(root, 'mixed');
    await writeSyntheticStore(mixed, { episodes: 54, seed: 4, epochs: 1, runId: 'o1-run' });
    await writeSyntheticStore(mixed, { episodes: 54, seed: 5, epochs: 1, runId: 'other-run', suite: 'other-suite' });
    const e = await failure(buildReport({ traces: mixed, out: join(root, 'o4') }));
    expect([e.code, e.kind]).toEqual(['report.mixedSuites', 'usage']);
    expect(e.message).toBe('runs come from different suites (other-suite: other-run; standoff-o1: o1-run); report one suite at a time with --run');
    expect(existsSync(join(root, 'o4'))).toBe(false);
    const ok = await buildReport({ traces: mixed, runs: ['other-run'], out: join(root, 'o4'), resamples: 200 });
    expect(ok.results.options.runs).toEqual(['other-run']);
    expect(readFileSync(join(ok.out, 'REPORT.md'), 'utf8')).toMatch(/^# Standoff report: other-suite\n/);
    // standoff report build (buildAnyReport) reports both: a table per suite, no refusal
    const both = await buildAnyReport({ traces: mixed, out: join(root, 'o4-both'), resamples: 200 });
    const md = readFileSync(join(both.out, 'REPORT.md'), 'utf8');
    expect(md).toMatch(/^# Standoff report: other-suite, standoff-o1\n/);
    expect(md).toContain('These runs hold 2 Standoff suites: each is reported here with the generic sections');
    expect(md).toContain('### Suite other-suite');
    expect(md).toContain('### Suite standoff-o1');
    expect(existsSync(join(both.out, 'index.html'))).toBe(true);
  }, 60_000);

  it('runs without episodes: report.noEpisodes (data)', async () => {
    const bare = join(root, 'bare');
    await writeRun(bare, {
      run: {
        run_id: 'bare', created_at: '2026-11-29T00:00:00.000Z', source: 'standoff', suite: 'standoff-o1', status: 'success',
        config: '{}', seed: null, epochs: null, standoff_version: '0.1.0', source_file: null, source_sha256: null, notes: null,
      },
    });
    const e = await failure(buildReport({ traces: bare, out: join(root, 'o5') }));
    expect([e.code, e.kind]).toEqual(['report.noEpisodes', 'data']);
  });

  it('an --out that cannot be created: report.unwritable (store), nothing left behind', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    const e = await failure(buildReport({ traces: store, out: join(file, 'reports') }));
    expect([e.code, e.kind]).toEqual(['report.unwritable', 'store']);
    expect(e.message).toMatch(/^cannot write the report to /);
    expect(tempsIn(root)).toEqual([]);
  });

  it('an --out that is a file: report.outNotDirectory (store)', async () => {
    const file = join(root, 'b-file');
    writeFileSync(file, 'x');
    const e = await failure(buildReport({ traces: store, out: file }));
    expect([e.code, e.kind]).toEqual(['report.outNotDirectory', 'store']);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('an --out holding other directories (e.g. the store itself): report.outNotReport (usage), nothing moved', async () => {
    const e = await failure(buildReport({ traces: store, out: store }));
    expect([e.code, e.kind]).toEqual(['report.outNotReport', 'usage']);
    expect(e.message).toMatch(/holds directories that are not part of a report \(episodes, judgments, probe_answers, probe_decisions, runs\)/);
    expect(readdirSync(store).sort()).toEqual(['episodes', 'judgments', 'probe_answers', 'probe_decisions', 'runs', 'scores']);
    expect(tempsIn(root)).toEqual([]);
  });

  it('bad options: report.badOption (usage)', async () => {
    for (const o of [{ seed: -1 }, { seed: 1.5 }, { resamples: 10 }, { level: 1 }, { level: 0.2 }]) {
      const e = await failure(buildReport({ traces: store, out: join(root, 'o6'), ...o }));
      expect([e.code, e.kind]).toEqual(['report.badOption', 'usage']);
    }
    expect(existsSync(join(root, 'o6'))).toBe(false);
  });
});

describe('output directory', () => {
  it('replaces a previous report, keeps files the report does not own, drops stale figures; a failed build leaves it untouched', async () => {
    const out = join(root, 'reports');
    await buildReport({ traces: store, out, resamples: 200 });
    expect(existsSync(join(out, 'figures', 'judges.png'))).toBe(true);
    writeFileSync(join(out, '.gitkeep'), '');
    writeFileSync(join(out, 'notes.txt'), 'mine');
    mkdirSync(join(out, 'notebooks'));
    writeFileSync(join(out, 'notebooks', 'nb.md'), 'kept');
    const before = readFileSync(join(out, 'REPORT.md'));

    await failure(buildReport({ traces: store, runs: ['ghost'], out, resamples: 200 }));
    expect(readFileSync(join(out, 'REPORT.md')).equals(before)).toBe(true);

    const bare = join(root, 'nojudges');
    await writeSyntheticStore(bare, { episodes: 54, seed: 6, epochs: 1, judgments: false, probes: false });
    await buildReport({ traces: bare, out, resamples: 200 });
    expect(existsSync(join(out, 'figures', 'judges.png'))).toBe(false);
    expect(existsSync(join(out, 'figures', 'probes.png'))).toBe(false);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(out, '.gitkeep'))).toBe(true);
    expect(readFileSync(join(out, 'notebooks', 'nb.md'), 'utf8')).toBe('kept');
    expect(tempsIn(root)).toEqual([]);
  }, 60_000);
});

describe('sections without data', () => {
  it('no judgments and no probes: the sections say so, the rest of the report is built', async () => {
    const bare = join(root, 'bare-sections');
    await writeSyntheticStore(bare, { episodes: 54, seed: 7, epochs: 1, judgments: false, probes: false });
    const lines: string[] = [];
    const r = await buildReport({ traces: bare, out: join(root, 'o7'), resamples: 200, progress: (l) => lines.push(l) });
    expect(lines[0]).toMatch(/^1 run, 3 subjects loaded \(\d+\.\d s\)$/);
    expect(lines.map((l) => l.replace(/ \(.*$/, ''))).toEqual(expect.arrayContaining(['judges', 'paired probes', 'results per subject']));
    const md = readFileSync(join(r.out, 'REPORT.md'), 'utf8');
    expect(md).toMatch(/## 6\. Judges\n\nNo judgments in this store/);
    expect(md).toMatch(/## 7\. Paired probes: reading vs acting\n\nNo paired probes in this store/);
    expect(r.results.judges.available).toBe(false);
    expect(r.results.probes.available).toBe(false);
    expect(r.files.filter((f) => f.startsWith('figures/')).map((f) => f.split('/')[1].split('.')[0])).toEqual(
      expect.not.arrayContaining(['judges', 'probes', 'calibration']),
    );
    expect(r.results.limitations.join(' ')).toMatch(/No judgments are stored/);
    // One epoch: every scenario observed once per subject, so no cluster interval.
    expect(r.results.results.subjects[0].metrics.gathered_evidence.cluster).toBeNull();
    expect(md).toMatch(/No scenario is observed more than once per subject/);
  }, 60_000);

  it('a probe set that cannot determine the action: sufficiency fails with its counterexamples', async () => {
    const s = join(root, 'insufficient');
    // One family (the paper's criterion groups states within a family): two probes (log current,
    // sources conflict) cannot tell the escalation targets of the scenarios apart.
    await writeSyntheticStore(s, { episodes: 54, seed: 13, epochs: 1, probesPerState: 2, oneFamily: 'operations' });
    const r = await buildReport({ traces: s, out: join(root, 'o11'), resamples: 200 });
    const suf = r.results.probes.sufficiency!;
    expect(suf.sufficient).toBe(false);
    // Two probes (log current, sources conflict) cannot tell the domains' escalation targets apart.
    expect(suf.counterexamples.length).toBe(1);
    expect(suf.counterexamples[0].answers).toEqual({ log_is_current: 'no', sources_conflict: 'no' });
    expect([...new Set(suf.counterexamples[0].gold_sets.map((g) => g.join('/')))].sort()).toEqual(['escalate', 'request_authorization', 'withdraw']);
    expect(suf.vacuous).toBe(false);
    expect(readFileSync(join(r.out, 'REPORT.md'), 'utf8')).toMatch(/\*\*Not sufficient\*\*: \d+ distinct states compared, grouped by family and correct probe answers into \d+ groups; \d+ groups hold two or more states\. 1 counterexample group \(\d+ states\) share their correct probe answers but no single action is correct for every state in them/);
  }, 60_000);

  it('probes without option probabilities: calibration says so', async () => {
    const s = join(root, 'noprobs');
    await writeSyntheticStore(s, { episodes: 54, seed: 8, epochs: 1, optionProbs: false });
    const r = await buildReport({ traces: s, out: join(root, 'o8'), resamples: 200 });
    expect(r.results.probes.calibration_available).toBe(false);
    expect(readFileSync(join(r.out, 'REPORT.md'), 'utf8')).toMatch(/No decision in this store carries option probabilities/);
    expect(r.files).not.toContain('figures/calibration.png');
  }, 60_000);
});

describe('gate failures and several runs', () => {
  it('a partial run with errored episodes: gate FAILED at the top, failures listed, errors in section 8', async () => {
    const s = join(root, 'partial');
    await writeSyntheticStore(s, { episodes: 270, seed: 9, status: 'partial', errorRate: 0.03 });
    const r = await buildReport({ traces: s, out: join(root, 'o9'), resamples: 200 });
    const md = readFileSync(join(r.out, 'REPORT.md'), 'utf8');
    expect(md.split('\n')[2]).toMatch(/^> \*\*Structural gate: FAILED\*\*/);
    expect(md).toMatch(/> - \*\*FAIL\*\*: run_status — run status is partial/);
    expect(md).toMatch(/> - \*\*FAIL\*\*: sample_errors — \d+ episode\(s\) in error/);
    const failed = r.results.gate.checks.filter((c) => !c.passed).map((c) => c.check);
    expect(failed).toEqual(expect.arrayContaining(['run_status', 'sample_errors', 'required_scorers']));
    const errored = r.results.episodes.subjects.reduce((a, x) => a + x.errored, 0);
    expect(errored).toBeGreaterThan(0);
    expect(md).toMatch(/\| error \| endpoint returned HTTP 503 after 5 retries \|/);
    expect(r.results.limitations.join(' ')).toMatch(/structural gate failed/);
  }, 60_000);

  it('the same subject model in two runs of one suite: reported as model @ run, the gate fails distinct_subject_models', async () => {
    const s = join(root, 'two');
    await writeSyntheticStore(s, { episodes: 54, seed: 10, epochs: 1, runId: 'arm-a', subjects: ['sim:hasty', 'sim:careful'] });
    await writeSyntheticStore(s, { episodes: 54, seed: 12, epochs: 1, runId: 'arm-b', subjects: ['sim:hasty', 'sim:thorough'] });
    const r = await buildReport({ traces: s, out: join(root, 'o10'), resamples: 200 });
    expect(r.results.summary.subjects).toEqual(['sim:careful', 'sim:hasty @ arm-a', 'sim:hasty @ arm-b', 'sim:thorough']);
    const c = r.results.gate.checks.find((x) => x.check === 'distinct_subject_models (across runs)')!;
    expect(c.passed).toBe(false);
    expect(c.failures).toEqual(['sim:hasty appears in runs arm-a, arm-b']);
    expect(r.results.pairwise.comparisons.length).toBe(3 * 6);
  }, 60_000);
});
