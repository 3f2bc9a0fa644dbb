/**
 * `buildReport` on a synthetic store shaped like the demo run (3 sim subjects x 18 scenarios x 5
 * epochs, 3 judges with one self-exclusion, paired probes with option probabilities):
 * determinism, every section and figure present, and the numbers checked against independent
 * computations (SQL counts + clopperPearson, the stats library on the raw rows).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticStore } from '../../bench/synthetic-store.ts';
import { clusterIntervalFromTotals, DEGENERATE } from '../../src/analysis/rates.ts';
import { buildReport, type BuildReportResult } from '../../src/report/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { uniqueEpisodeRuns } from '../../src/report/sections/summary.ts';
import { query } from '../../src/store/duckdb.ts';
import { probeStateSql } from '../../src/analysis/probe-tables.ts';
import {
  clusterBootstrap,
  pairedClusterBootstrap,
  clopperPearson,
  krippendorffAlpha,
  leaveOneJudgeOut,
  groupBy,
  probeOutcomes,
  type ProbeRow,
} from '../../src/stats/index.ts';

const SEED = 11;
const RESAMPLES = 2000;
let root: string;
let store: string;
let a: BuildReportResult;
let b: BuildReportResult;

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...listFiles(p, `${prefix}${e}/`));
    else out.push(`${prefix}${e}`);
  }
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'standoff-report-'));
  store = join(root, 'traces');
  await writeSyntheticStore(store, { episodes: 270, seed: SEED });
  // The synthetic run holds one ERROR verdict (a failed judge call): allowed here, see the gate test.
  a = await buildReport({ traces: store, out: join(root, 'a'), resamples: RESAMPLES, allowJudgeErrors: 1 });
  b = await buildReport({ traces: store, out: join(root, 'b'), resamples: RESAMPLES, allowJudgeErrors: 1 });
}, 120_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('determinism', () => {
  it('two builds from the same store, options and seed are byte-identical (REPORT.md, results.json, specs, SVGs, PNGs)', () => {
    const fa = listFiles(a.out);
    const fb = listFiles(b.out);
    expect(fa).toEqual(fb);
    expect(fa).toContain('REPORT.md');
    expect(fa).toContain('results.json');
    for (const f of fa) expect(readFileSync(join(a.out, f)).equals(readFileSync(join(b.out, f))), f).toBe(true);
  });

  it('returns the files it wrote, relative and sorted', () => {
    expect(a.files).toEqual(listFiles(a.out));
  });

  it('a different seed changes the bootstrap intervals but not the exact ones; without the allowance the ERROR verdict fails the gate', async () => {
    const c = await buildReport({ traces: store, out: join(root, 'c'), resamples: RESAMPLES, seed: 7 });
    const ra = JSON.parse(readFileSync(join(a.out, 'results.json'), 'utf8'));
    const rc = JSON.parse(readFileSync(join(c.out, 'results.json'), 'utf8'));
    expect(rc.options.seed).toBe(7);
    expect(rc.results.subjects[1].metrics.gathered_evidence.exact).toEqual(ra.results.subjects[1].metrics.gathered_evidence.exact);
    expect(rc.results.subjects[1].metrics.gathered_evidence.cluster).not.toEqual(ra.results.subjects[1].metrics.gathered_evidence.cluster);
    expect(JSON.stringify(rc.pairwise)).not.toEqual(JSON.stringify(ra.pairwise));
    expect(rc.gate.passed).toBe(false);
    expect(rc.gate.checks.filter((x: { passed: boolean }) => !x.passed).map((x: { check: string }) => x.check)).toEqual(['judge_errors']);
    expect(rc.gate.judge_verdicts).toEqual({ total: ra.gate.judge_verdicts.total, errors: 1, allowed: 0 });
    expect(ra.options.allow_judge_errors).toBe(1);
    expect(readFileSync(join(c.out, 'REPORT.md'), 'utf8')).toMatch(/of which \*\*1 failed\*\* \(ERROR/);
  }, 60_000);

  it('leaves no temp directory next to the output', () => {
    expect(readdirSync(root).filter((e) => e.includes('.tmp-') || e.endsWith('.old'))).toEqual([]);
  });
});

describe('sections', () => {
  const md = () => readFileSync(join(a.out, 'REPORT.md'), 'utf8');

  it('has the gate verdict at the top and every section in order', () => {
    const text = md();
    const firstLines = text.split('\n').slice(0, 4).join('\n');
    expect(firstLines).toMatch(/Structural gate: PASSED/);
    const heads = [
      '## 1. Run summary',
      '## 2. Results per subject',
      '## 3. Grounded vs lucky',
      '## 4. Slices',
      '## 5. Pairwise subject comparisons',
      '## 6. Judges',
      '## 7. Paired probes: reading vs acting',
      '## 8. Invalid and errored episodes',
      '## Limitations',
      '## Method notes',
    ];
    let at = -1;
    for (const h of heads) {
      const i = text.indexOf(`\n${h}\n`);
      expect(i, h).toBeGreaterThan(at);
      at = i;
    }
  });

  it('section 1: runs, subjects, judges, scenarios, epochs, temperature, seed, samples, hash', () => {
    const text = md();
    expect(text).toMatch(/1 run, 3 subjects, 3 judges, 18 scenarios, 5 epochs per scenario, 270 samples/);
    expect(text).toContain('| `synthetic-11` | standoff-o1 | synthetic | success |');
    // The synthetic run records no prompt variant: no Prompt column (issue 21 point 9), not "not recorded".
    expect(text).toMatch(/\| 0\.7 \| 11 \| 270 \|/);
    expect(text).not.toMatch(/\| Prompt \|/);
    const r = a.results;
    expect(r.inputs[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.inputs[0].files.map((f) => f.path)).toContain('episodes/run_id=synthetic-11/data.parquet');
    expect(r.gate.passed).toBe(true);
    expect(r.gate.checks.map((c) => c.check)).toEqual(['run_status', 'sample_counts', 'required_scorers', 'judge_errors', 'sample_errors', 'distinct_subject_models', 'unique_episodes', 'truncated_episodes']);
    // The judges section takes each run's episode uniqueness from this check (uniqueEpisodeRuns).
    expect(uniqueEpisodeRuns(r)).toEqual(new Map([[r.gate.checks[0].run, true]]));
  });

  it('section 2: rates with denominators, cluster intervals (the default unit) and exact ones labelled independent', () => {
    const text = md();
    expect(text).toMatch(/\| sim:hasty \| \d+\.\d% \(\d+\/90\)<br><sub>cluster \[\d+\.\d, \d+\.\d\]<br>exact \[\d+\.\d, \d+\.\d\] \(independent\)/);
    expect(text).toMatch(/\(\d+\/60\)<br><sub>cluster/); // policy action: NOANSWER excluded
    expect(text).toContain('Each subject has 30 ambiguous and 60 non-ambiguous completed samples.');
    // Every cluster interval resamples the scenarios, unless all outcomes are identical: then
    // the bootstrap has no spread and is reported as missing (with its note), never as [p, p].
    const checkCluster = (c: { clusters?: number; lower: number | null; upper: number | null; note?: string } | null | undefined, clusters: number) => {
      if (c!.lower === null) expect(c!.note).toBe(DEGENERATE);
      else {
        expect(c!.clusters).toBe(clusters);
        expect(c!.upper!).toBeGreaterThan(c!.lower);
      }
    };
    for (const s of a.results.results.subjects) {
      checkCluster(s.metrics.gathered_evidence.cluster, 18);
      checkCluster(s.metrics.policy_action.cluster, 12);
      for (const m of Object.values(s.metrics)) {
        expect(m.exact?.sampling ?? 'independent').toBe('independent');
        if (m.cluster) expect(m.cluster).toMatchObject({ sampling: 'clustered', cluster: 'scenario_id' });
        // The interval shown is the cluster one unless it has no spread.
        expect(m.interval).toBe(m.cluster && m.cluster.lower !== null ? m.cluster : m.exact);
      }
    }
    expect(a.results.results.subjects.some((s) => s.metrics.gathered_evidence.cluster?.clusters === 18)).toBe(true);
  });

  it('a subject with all-identical outcomes gets no degenerate [p, p] cluster interval', () => {
    const o = { seed: 1, resamples: 1000, level: 0.95 };
    const c = clusterIntervalFromTotals(new Array(18).fill(5), new Array(18).fill(5), 'scenario_id', o);
    expect([c.lower, c.upper, c.note]).toEqual([null, null, DEGENERATE]);
    const sums = Array.from({ length: 18 }, (_, i) => 5 - (i % 3));
    expect(clusterIntervalFromTotals(sums, new Array(18).fill(5), 'scenario_id', o).lower).not.toBeNull();
  });

  it('section 3: cross-tab per subject and the correct-without-evidence episodes listed', () => {
    const g = a.results.grounded;
    const hasty = g.subjects.find((s) => s.subject === 'sim:hasty')!;
    expect(hasty.table.not_gathered_correct).toBeGreaterThan(0);
    expect(hasty.correct_without_evidence.listed.length).toBe(hasty.table.not_gathered_correct);
    const t = hasty.table;
    expect(t.gathered_correct + t.gathered_incorrect + t.not_gathered_correct + t.not_gathered_incorrect).toBe(60);
    expect(md()).toMatch(/\*\*sim:hasty\*\*: \d+ episodes?: `[a-z]{2}_(act|esc)_[ab]` epoch \d/);
  });

  it('section 4: slices by domain, decision type and variant', () => {
    const rows = a.results.slices.rows;
    expect(new Set(rows.map((r) => r.dimension))).toEqual(new Set(['domain', 'decision_type', 'variant']));
    const amb = rows.find((r) => r.dimension === 'decision_type' && r.value === 'ambiguous' && r.metric === 'policy_action');
    expect(amb?.trials).toBe(0);
    const dom = rows.filter((r) => r.dimension === 'domain' && r.metric === 'gathered_evidence' && r.subject === 'sim:hasty');
    expect(dom.reduce((x, r) => x + r.trials, 0)).toBe(90);
    expect(md()).toContain('### Decision type');
  });

  it('section 5: every pair of subjects for three metrics, clustered by scenario, Holm-adjusted, with MDE', () => {
    const c = a.results.pairwise.comparisons;
    expect(c.length).toBe(9);
    for (const x of c) {
      expect(x.pairs).toBe(x.metric === 'policy_action' ? 60 : 90);
      expect(x).toMatchObject({ sampling: 'clustered', cluster: 'scenario_id', clusters: x.metric === 'policy_action' ? 12 : 18, method: 'paired-cluster-bootstrap-percentile' });
      expect(x.p_holm!).toBeGreaterThanOrEqual(x.p_value!);
      expect(x.mde).not.toBeNull();
    }
  });

  it('section 6: alpha with interval, pair agreement, self-exclusion count, leave-one-judge-out', () => {
    const j = a.results.judges;
    expect(j.available).toBe(true);
    expect(j.alpha!.alpha).not.toBeNull();
    expect(j.alpha!.lower!).toBeLessThanOrEqual(j.alpha!.alpha!);
    expect(j.pairs.length).toBe(3);
    // sim:judge-lenient shares sim:careful's family: its verdicts on sim:careful are removed.
    expect(j.self_exclusion.by_subject).toEqual([{ subject: 'sim:careful', judge: 'sim:judge-lenient', removed: 90 }]);
    expect(j.leave_one_out.filter((r) => r.judge === null).length).toBe(3);
    expect(md()).toMatch(/Self-exclusion removed \*\*90\*\* verdicts/);
  });

  it('section 7: four outcomes, composition, sufficiency, calibration', () => {
    const p = a.results.probes;
    expect(p.available).toBe(true);
    expect(p.sufficiency?.sufficient).toBe(true);
    expect(p.calibration_available).toBe(true);
    for (const s of p.subjects) {
      const c = s.cells;
      // 18 scenarios x 5 epochs; the 6 ambiguous scenarios are reported apart.
      expect([s.states, s.answers, s.ambiguous?.states, s.ambiguous?.answers]).toEqual([12, 60, 6, 30]);
      expect(c.facts_right_action_right.count + c.facts_right_action_wrong.count + c.facts_wrong_action_right.count + c.facts_wrong_action_wrong.count).toBe(60);
      expect(s.calibration?.ece).not.toBeNull();
      expect(s.composed?.answers).toBe(60);
      expect(s.composed?.interval).toMatchObject({ sampling: 'clustered', cluster: 'state', method: 'paired-cluster-bootstrap-percentile' });
    }
    expect(md()).toContain('### Probe sufficiency');
  });

  it('section 8 and limitations: invalid episodes with reasons; simulated subjects named', () => {
    const e = a.results.episodes;
    const hasty = e.subjects.find((s) => s.subject === 'sim:hasty')!;
    expect(hasty.invalid).toBe(a.results.results.subjects.find((s) => s.subject === 'sim:hasty')!.metrics.invalid.successes);
    for (const ep of hasty.listed) expect(ep.reason).toMatch(/no terminal decision/);
    const lim = a.results.limitations.join('\n');
    expect(lim).toMatch(/one stochastic run at temperature 0\.7/);
    expect(lim).toMatch(/judge-based measurement/);
    expect(lim).toMatch(/simulated/);
  });
});

describe('figures', () => {
  const names = ['results', 'grounded', 'slices', 'pairwise', 'probes', 'calibration', 'judges'];

  it('writes a Vega-Lite spec with inlined data, an SVG with text, and a non-trivial PNG for each figure', () => {
    for (const n of names) {
      const spec = JSON.parse(readFileSync(join(a.out, 'figures', `${n}.vl.json`), 'utf8'));
      expect(spec.config.font, n).toBe('DejaVu Sans');
      const data = spec.data?.values ?? [...(spec.layer ?? []), ...(spec.hconcat ?? [])].find((l: { data?: { values?: unknown[] } }) => l.data)?.data?.values;
      expect(Array.isArray(data) && data.length > 0, n).toBe(true);
      const svg = readFileSync(join(a.out, 'figures', `${n}.svg`), 'utf8');
      const texts = svg.match(/<text/g) ?? [];
      expect(texts.length, n).toBeGreaterThan(5);
      expect(svg).toContain('font-family="DejaVu Sans"');
      const png = readFileSync(join(a.out, 'figures', `${n}.png`));
      expect(png.subarray(1, 4).toString('latin1'), n).toBe('PNG');
      expect(png.length, n).toBeGreaterThan(20_000);
      expect(readFileSync(join(a.out, 'REPORT.md'), 'utf8')).toContain(`](figures/${n}.png)`);
    }
  });

  it('gives each subject the same colour in every figure', () => {
    const colourOf = (n: string) => {
      const spec = JSON.stringify(JSON.parse(readFileSync(join(a.out, 'figures', `${n}.vl.json`), 'utf8')));
      const m = /"domain":\["sim:careful","sim:hasty","sim:thorough"\],"range":\[("#[0-9A-F]{6}","#[0-9A-F]{6}","#[0-9A-F]{6}")\]/.exec(spec);
      return m?.[1];
    };
    const c = colourOf('results');
    expect(c).toBeDefined();
    expect(colourOf('slices')).toBe(c);
    expect(colourOf('calibration')).toBe(c);
  });
});

describe('numbers match independent computations', () => {
  it('gathered_evidence and policy action for sim:hasty: SQL counts + clopperPearson', async () => {
    const s = await openStore(store);
    try {
      const g = (
        await query(
          s.conn,
          `SELECT count(*) FILTER (WHERE gathered_evidence) AS k, count(*) AS n FROM episodes WHERE subject_model = 'sim:hasty' AND status <> 'error'`,
        )
      ).rows[0];
      const p = (
        await query(
          s.conn,
          `SELECT count(*) FILTER (WHERE sc.value = 1) AS k, count(*) AS n FROM scores sc JOIN episodes e USING (run_id, episode_id)
           WHERE e.subject_model = 'sim:hasty' AND sc.scorer = 'policy_compliant_action' AND NOT sc.noanswer`,
        )
      ).rows[0];
      const results = JSON.parse(readFileSync(join(a.out, 'results.json'), 'utf8'));
      const hasty = results.results.subjects.find((x: { subject: string }) => x.subject === 'sim:hasty');
      const ge = hasty.metrics.gathered_evidence;
      const ci = clopperPearson(Number(g.k), Number(g.n));
      expect([ge.successes, ge.trials]).toEqual([Number(g.k), Number(g.n)]);
      expect([ge.exact.lower, ge.exact.upper]).toEqual([ci.lower, ci.upper]);
      expect(ge.exact.sampling).toBe('independent');
      const pa = hasty.metrics.policy_action;
      const ci2 = clopperPearson(Number(p.k), Number(p.n));
      expect([pa.successes, pa.trials]).toEqual([Number(p.k), Number(p.n)]);
      expect([pa.exact.lower, pa.exact.upper]).toEqual([ci2.lower, ci2.upper]);
      expect(results.options).toEqual({ seed: 20261129, resamples: RESAMPLES, level: 0.95, allow_judge_errors: 1, allow_truncated: 0, allow_missing: 0, runs: ['synthetic-11'] });
    } finally {
      s.close();
    }
  });

  it('the cluster interval equals clusterBootstrap on the per-episode values by scenario', async () => {
    const s = await openStore(store);
    try {
      const rows = (
        await query(s.conn, `SELECT scenario_id, CAST(gathered_evidence AS DOUBLE) AS v FROM episodes WHERE subject_model = 'sim:hasty' AND status <> 'error' ORDER BY scenario_id, epoch`)
      ).rows;
      const r = clusterBootstrap(rows.map((x) => Number(x.v)), rows.map((x) => String(x.scenario_id)), { seed: 20261129, resamples: RESAMPLES, method: 'percentile' });
      const c = a.results.results.subjects.find((x) => x.subject === 'sim:hasty')!.metrics.gathered_evidence.cluster!;
      expect([c.lower, c.upper, c.clusters]).toEqual([r.lower, r.upper, r.clusters]);
    } finally {
      s.close();
    }
  });

  it('a paired difference equals pairedClusterBootstrap on the pairs built independently (clusters: scenarios)', async () => {
    const s = await openStore(store);
    try {
      const rows = (
        await query(
          s.conn,
          `SELECT x.scenario_id, CAST(x.gathered_evidence AS DOUBLE) AS a, CAST(y.gathered_evidence AS DOUBLE) AS b
           FROM episodes x JOIN episodes y ON x.scenario_id = y.scenario_id AND x.epoch = y.epoch
           WHERE x.subject_model = 'sim:careful' AND y.subject_model = 'sim:hasty' AND x.status <> 'error' AND y.status <> 'error'
           ORDER BY x.scenario_id, x.epoch`,
        )
      ).rows;
      const r = pairedClusterBootstrap(rows.map((x) => Number(x.a)), rows.map((x) => Number(x.b)), rows.map((x) => String(x.scenario_id)), { seed: 20261129, resamples: RESAMPLES, method: 'percentile' });
      const c = a.results.pairwise.comparisons.find((x) => x.metric === 'gathered_evidence' && x.a === 'sim:careful' && x.b === 'sim:hasty')!;
      expect([c.difference, c.lower, c.upper, c.pairs, c.clusters, c.se]).toEqual([r.estimate, r.lower, r.upper, rows.length, r.clusters, r.seClustered]);
    } finally {
      s.close();
    }
  });

  it('the probe outcomes equal probeOutcomes on the non-ambiguous state rows (one row per answer)', async () => {
    const s = await openStore(store);
    try {
      const rows = (await query(s.conn, `SELECT * FROM (${probeStateSql()}) WHERE NOT ambiguous ORDER BY subject_model, state_id`)).rows;
      const probeRows: ProbeRow[] = rows.map((r) => ({
        state_id: String(r.state_id),
        subject_model: String(r.subject_model),
        all_facts_correct: Number(r.total) > 0 && Number(r.right_) === Number(r.total),
        action_correct: Boolean(r.action),
        probes_answered: Number(r.answered),
        probes_total: Number(r.total),
        probe_accuracy: Number(r.total) > 0 ? Number(r.right_) / Number(r.total) : 0,
        composed_correct: r.composed === null ? null : Boolean(r.composed),
      }));
      const lib = probeOutcomes(groupBy(probeRows, 'subject_model'));
      const share = (x: { count: number; n: number; rate: number | null; lower: number | null; upper: number | null }) => ({ count: x.count, n: x.n, rate: x.rate, lower: x.lower, upper: x.upper });
      for (const g of lib) {
        const mine = a.results.probes.subjects.find((x) => x.subject === g.group)!;
        expect(mine.answers).toBe(g.states);
        expect(share(mine.cells.facts_right_action_wrong)).toEqual(g.cells.factsRightActionWrong);
        expect(share(mine.cells.facts_wrong_action_right)).toEqual(g.cells.factsWrongActionRight);
        expect(share(mine.errors_after_correct_reading)).toEqual(g.errorsAfterCorrectReading);
        expect(share(mine.action_wrong_given_facts_right)).toEqual(g.actionWrongGivenFactsRight);
        expect(mine.coverage).toEqual(g.coverage);
        expect(mine.mean_probe_accuracy!).toBeCloseTo(g.meanProbeAccuracy!, 12);
        expect(mine.pooled_probe_accuracy!).toBeCloseTo(g.pooledProbeAccuracy!, 12);
        expect(share(mine.composed!.composed_accuracy)).toEqual(g.composed?.composedAccuracy);
        expect(mine.composed?.repaired).toBe(g.composed?.repaired);
      }
    } finally {
      s.close();
    }
  });

  it('leave-one-judge-out equals the library on the judgment matrix (self-excluded verdicts removed)', async () => {
    const s = await openStore(store);
    try {
      const rows = (
        await query(
          s.conn,
          `SELECT j.episode_id, e.subject_model, j.judge_model, CASE WHEN j.excluded_self THEN NULL ELSE j.value END AS v
           FROM judgments j JOIN episodes e USING (run_id, episode_id) ORDER BY j.episode_id, j.judge_model`,
        )
      ).rows;
      const judges = [...new Set(rows.map((r) => String(r.judge_model)))].sort();
      const samples = [...new Set(rows.map((r) => String(r.episode_id)))].sort();
      const subjectOf = new Map(rows.map((r) => [String(r.episode_id), String(r.subject_model)]));
      const si = new Map(samples.map((x, i) => [x, i]));
      const scores = judges.map(() => new Array<number | null>(samples.length).fill(null));
      for (const r of rows) scores[judges.indexOf(String(r.judge_model))][si.get(String(r.episode_id))!] = r.v === null ? null : Number(r.v);
      const lib = leaveOneJudgeOut({ judges: judges.map((id) => ({ id, model: id })), samples: samples.map((id) => ({ id, subject_model: subjectOf.get(id)! })), scores }, { excludeBy: 'none' });
      for (const base of lib.baseline) {
        const mine = a.results.judges.leave_one_out.find((r) => r.judge === null && r.subject === base.subject)!;
        expect(mine.mean!).toBeCloseTo(base.mean!, 12);
      }
      for (const j of lib.judges) {
        for (const d of j.perSubject) {
          const mine = a.results.judges.leave_one_out.find((r) => r.judge === j.judge && r.subject === d.subject)!;
          expect(mine.mean!).toBeCloseTo(d.mean!, 12);
          expect(mine.samples_with_median).toBe(d.samplesWithMedian);
        }
      }
    } finally {
      s.close();
    }
  });

  it('alpha equals krippendorffAlpha on the verdict matrix', async () => {
    const s = await openStore(store);
    try {
      const rows = (await query(s.conn, `SELECT episode_id, judge_model, value FROM judgments WHERE value IS NOT NULL ORDER BY episode_id, judge_model`)).rows;
      const judges = [...new Set(rows.map((r) => String(r.judge_model)))].sort();
      const samples = [...new Set(rows.map((r) => String(r.episode_id)))].sort();
      const si = new Map(samples.map((x, i) => [x, i]));
      const m = judges.map(() => new Array<number | null>(samples.length).fill(null));
      for (const r of rows) m[judges.indexOf(String(r.judge_model))][si.get(String(r.episode_id))!] = Number(r.value);
      expect(a.results.judges.alpha!.alpha!).toBeCloseTo(krippendorffAlpha(m, 'nominal').alpha!, 12);
    } finally {
      s.close();
    }
  });
});
