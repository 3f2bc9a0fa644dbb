/**
 * Library behind `standoff ci exact|bootstrap|paired`, `standoff agreement`, `standoff judges`
 * and `standoff probes`: loads data from the trace store (aggregation in DuckDB, only per-group
 * vectors come into JS) or from a CSV/Parquet `--input` file, and calls `src/stats`.
 * Every function returns plain, documented JSON-ready objects.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  clopperPearson,
  krippendorffAlpha,
  krippendorffAlphaBootstrap,
  medianOfJudges,
  probeOutcomes,
  probeSufficiency,
  type AlphaLevel,
  type BinomialInterval,
  type Judge,
  type JudgedSample,
  type ProbeRow,
  type Sided,
} from '../stats/index.ts';
import { openStore } from '../store/open-store.ts';
import { query, quoteIdent } from '../store/duckdb.ts';
import { float64Column } from '../store/arrow.ts';
import { dataError, usageError } from '../errors.ts';
import { checkColumns, getMetric, loadMetric } from './metrics.ts';
import { orderedInterval } from './ci-exact.ts';
import { numbers, readInputFile, texts, type InputColumn } from './input-file.ts';

export interface StoreSource {
  traces: string;
  runs?: string[];
}

export async function withStore<T>(src: StoreSource, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const store = await openStore(src.traces, { runs: src.runs, requireRuns: true });
  try {
    return await fn(store.conn);
  } finally {
    store.close();
  }
}

export type Group = Record<string, string | number | null>;

/* ------------------------------------------------------------------ ci exact */

export interface ExactResult extends BinomialInterval {
  group?: Group;
}

export { ciExactCounts, orderedInterval } from './ci-exact.ts';

/**
 * `ci exact --metric M [--by COLS]` over the store: successes and trials counted in DuckDB per
 * group. With `aggregates: true`, reads the `aggregates` table (rows ingested from a published
 * results table) for metric names as stored there.
 */
export async function ciExactMetric(
  src: StoreSource,
  opts: { metric: string; by?: string[]; level?: number; sided?: Sided; aggregates?: boolean },
): Promise<ExactResult[]> {
  const by = opts.by ?? [];
  return withStore(src, async (conn) => {
    let rows;
    if (opts.aggregates) {
      for (const c of by) if (c !== 'subject_model' && c !== 'run_id') throw usageError('metric.unknownColumn', `--by column "${c}" does not exist in aggregates; use subject_model or run_id`);
      const keys = by.map(quoteIdent);
      const sel = keys.length ? `${keys.join(', ')}, ` : '';
      rows = (
        await query(
          conn,
          `SELECT ${sel}CAST(sum(successes) AS BIGINT) AS k, CAST(sum(trials) AS BIGINT) AS n FROM aggregates WHERE metric = $metric ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')}` : ''}`,
          { metric: opts.metric },
        )
      ).rows;
      if (rows.length === 0 || rows.every((r) => r.n === null)) {
        const known = (await query(conn, 'SELECT DISTINCT metric FROM aggregates ORDER BY 1')).rows.map((r) => r.metric);
        throw usageError('metric.unknown', `no aggregate rows for metric "${opts.metric}" (aggregates hold: ${known.join(', ') || 'none'})`);
      }
    } else {
      const m = getMetric(opts.metric);
      if (!m.binary) throw usageError('metric.notBinary', `metric ${m.name} is not binary; use standoff ci bootstrap --metric ${m.name}`);
      checkColumns(by, '--by');
      const keys = by.map(quoteIdent);
      const sel = keys.length ? `${keys.join(', ')}, ` : '';
      rows = (
        await query(
          conn,
          `SELECT ${sel}CAST(sum(value) AS BIGINT) AS k, CAST(count(*) AS BIGINT) AS n FROM (${m.sql}) ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')}` : ''}`,
        )
      ).rows;
      if (rows.length === 0 || rows.every((r) => r.n === 0)) throw dataError('metric.empty', `metric ${m.name} has no observations in this store`);
    }
    return rows.map((r) => {
      const group: Group = {};
      for (const c of by) group[c] = r[c] as string | number | null;
      const ci = orderedInterval(clopperPearson(Number(r.k ?? 0), Number(r.n ?? 0), { level: opts.level, sided: opts.sided }));
      return by.length ? { group, ...ci } : ci;
    });
  });
}

/* ----------------------------------------------------------------- agreement */

export interface AgreementResult {
  alpha: number | null;
  lower: number | null;
  upper: number | null;
  level: number;
  se: number | null;
  measurement: AlphaLevel;
  units: number;
  raters: number;
  pairable_values: number;
  resamples: number;
  undefined_resamples: number;
  seed: number;
  method: 'percentile';
  note?: string;
}

/** Builds a raters x units matrix from long-form (unit, rater, value) triples. */
export function longToMatrix(units: string[], raters: string[], values: (number | string | null)[]): (number | string | null)[][] {
  const unitIndex = new Map<string, number>();
  const raterIndex = new Map<string, number>();
  for (const u of [...new Set(units)].sort()) unitIndex.set(u, unitIndex.size);
  for (const r of [...new Set(raters)].sort()) raterIndex.set(r, raterIndex.size);
  const m: (number | string | null)[][] = Array.from({ length: raterIndex.size }, () => new Array(unitIndex.size).fill(null));
  const seen = new Set<string>();
  for (let i = 0; i < units.length; i++) {
    const key = `${raters[i]}\u0000${units[i]}`;
    if (seen.has(key)) throw dataError('input.duplicateRating', `rater "${raters[i]}" rated unit "${units[i]}" twice (row ${i + 1})`);
    seen.add(key);
    m[raterIndex.get(raters[i])!][unitIndex.get(units[i])!] = values[i];
  }
  return m;
}

export function agreementOf(matrix: (number | string | null)[][], opts: { level: AlphaLevel; ciLevel?: number; seed: number; resamples: number }): AgreementResult {
  const point = krippendorffAlpha(matrix, opts.level);
  const boot = krippendorffAlphaBootstrap(matrix, opts.level, { resamples: opts.resamples, levelCI: opts.ciLevel, seed: opts.seed });
  const out: AgreementResult = {
    alpha: point.alpha,
    lower: boot.lower,
    upper: boot.upper,
    level: boot.level,
    se: boot.se,
    measurement: opts.level,
    units: point.units,
    raters: point.raters,
    pairable_values: point.pairableValues,
    resamples: boot.resamples,
    undefined_resamples: boot.undefinedResamples,
    seed: boot.seed,
    method: 'percentile',
  };
  if (point.alpha === null) out.note = 'alpha is undefined: no unit has two values, or the pairable values show no variation';
  return out;
}

/** `agreement` over the store: units are episodes, raters are judge models, values the judgments' values. */
export async function agreementFromStore(src: StoreSource, opts: { scorer?: string; level: AlphaLevel; ciLevel?: number; seed: number; resamples: number }): Promise<AgreementResult & { scorer: string }> {
  const scorer = opts.scorer ?? 'reasoning_action_alignment';
  return withStore(src, async (conn) => {
    const { rows } = await query(
      conn,
      `SELECT run_id || '/' || episode_id AS unit, judge_model AS rater, value FROM judgments WHERE scorer = $scorer AND value IS NOT NULL ORDER BY unit, rater`,
      { scorer },
    );
    if (rows.length === 0) throw dataError('agreement.noJudgments', `no judgments with a value for scorer "${scorer}" in this store`);
    const m = longToMatrix(rows.map((r) => String(r.unit)), rows.map((r) => String(r.rater)), rows.map((r) => r.value as number));
    return { scorer, ...agreementOf(m, opts) };
  });
}

/* -------------------------------------------------------------------- judges */

export interface JudgesResult {
  samples: { sample: string; subject_model: string; median: number | null; judges_used: string[]; judges_excluded: string[]; judges_missing: string[] }[];
  totals: { samples: number; excluded_verdicts: number; samples_with_no_judge: number; missing_verdicts: number; ties: number };
  exclude_by: string;
}

function judgesOf(judges: Judge[], samples: JudgedSample[], scores: (number | null)[][], excludeBy: 'model' | 'family' | 'none'): JudgesResult {
  const r = medianOfJudges({ judges, samples, scores }, { excludeBy });
  // A tie: an even number of remaining judges whose two middle values differ (the median is their mean).
  let ties = 0;
  r.perSample.forEach((s, j) => {
    const used = s.judgesUsed.map((id) => scores[judges.findIndex((x) => x.id === id)][j] as number).sort((a, b) => a - b);
    if (used.length % 2 === 0 && used.length > 0 && used[used.length / 2 - 1] !== used[used.length / 2]) ties++;
  });
  return {
    samples: r.perSample.map((s) => ({
      sample: s.sample,
      subject_model: s.subject_model,
      median: s.median,
      judges_used: s.judgesUsed,
      judges_excluded: s.judgesExcluded,
      judges_missing: s.judgesMissing,
    })),
    totals: {
      samples: r.totals.samples,
      excluded_verdicts: r.totals.excludedVerdicts,
      samples_with_no_judge: r.totals.samplesWithNoJudge,
      missing_verdicts: r.totals.missingVerdicts,
      ties,
    },
    exclude_by: r.excludeBy,
  };
}

/** Builds the judge x sample matrix from long rows. */
function judgeMatrix(rows: { sample: string; subject_model: string; subject_family?: string | null; judge: string; judge_model: string; judge_family?: string | null; value: number | null }[]) {
  const judges = new Map<string, Judge>();
  const samples = new Map<string, JudgedSample>();
  for (const r of rows) {
    if (!judges.has(r.judge)) judges.set(r.judge, { id: r.judge, model: r.judge_model, ...(r.judge_family ? { family: r.judge_family } : {}) });
    if (!samples.has(r.sample)) samples.set(r.sample, { id: r.sample, subject_model: r.subject_model, ...(r.subject_family ? { subject_family: r.subject_family } : {}) });
  }
  const jl = [...judges.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const sl = [...samples.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const ji = new Map(jl.map((j, i) => [j.id, i]));
  const si = new Map(sl.map((s, i) => [s.id, i]));
  const scores: (number | null)[][] = jl.map(() => new Array(sl.length).fill(null));
  const seen = new Set<string>();
  for (const r of rows) {
    const key = `${r.judge}\u0000${r.sample}`;
    if (seen.has(key)) throw dataError('input.duplicateJudgment', `judge "${r.judge}" scored sample "${r.sample}" twice`);
    seen.add(key);
    scores[ji.get(r.judge)!][si.get(r.sample)!] = r.value;
  }
  return { judges: jl, samples: sl, scores };
}

/** `judges --input FILE` with columns sample, subject_model, judge, judge_model, value (optional subject_family, judge_family). */
export async function judgesFromInput(file: string, opts: { excludeBy?: 'model' | 'family' | 'none'; missing?: 'error' | 'drop' } = {}): Promise<JudgesResult> {
  const fam = (c: string): InputColumn[] => [{ name: c, kind: 'text', optional: true, ifPresent: true }];
  const t = await readInputFile(
    file,
    [
      ...['sample', 'subject_model', 'judge', 'judge_model'].map((name): InputColumn => ({ name, kind: 'text' })),
      { name: 'value', kind: 'number', optional: true },
      ...fam('subject_family'),
      ...fam('judge_family'),
    ],
    { missing: opts.missing },
  );
  const rows = texts(t, 'sample').map((s, i) => ({
    sample: s!,
    subject_model: texts(t, 'subject_model')[i]!,
    subject_family: t.values.subject_family ? (texts(t, 'subject_family')[i] ?? null) : null,
    judge: texts(t, 'judge')[i]!,
    judge_model: texts(t, 'judge_model')[i]!,
    judge_family: t.values.judge_family ? (texts(t, 'judge_family')[i] ?? null) : null,
    value: numbers(t, 'value')[i] ?? null,
  }));
  const m = judgeMatrix(rows);
  return judgesOf(m.judges, m.samples, m.scores, opts.excludeBy ?? 'model');
}

/** `judges` over the store. */
export async function judgesFromStore(src: StoreSource, opts: { scorer?: string; excludeBy?: 'model' | 'family' | 'none' } = {}): Promise<JudgesResult & { scorer: string }> {
  const scorer = opts.scorer ?? 'reasoning_action_alignment';
  return withStore(src, async (conn) => {
    const { rows } = await query(
      conn,
      `SELECT j.run_id || '/' || j.episode_id AS sample, e.subject_model, e.subject_family, j.judge_model AS judge, j.judge_model, j.judge_family, j.value
       FROM judgments j JOIN episodes e USING (run_id, episode_id) WHERE j.scorer = $scorer ORDER BY sample, judge`,
      { scorer },
    );
    if (rows.length === 0) throw dataError('judges.noJudgments', `no judgments for scorer "${scorer}" in this store`);
    const m = judgeMatrix(rows as never);
    return { scorer, ...judgesOf(m.judges, m.samples, m.scores, opts.excludeBy ?? 'model') };
  });
}

/* -------------------------------------------------------------------- probes */

export const PROBE_STATE_SQL = `
  SELECT d.run_id, d.subject_model, d.state_id, d.scenario_id, d.epoch, e.domain, e.decision_type, e.variant,
         coalesce(a.all_correct, false) AS all_facts_correct, d.correct AS action_correct,
         CAST(coalesce(a.answered, 0) AS INTEGER) AS probes_answered, CAST(coalesce(a.total, 0) AS INTEGER) AS probes_total,
         coalesce(a.accuracy, 0) AS probe_accuracy, d.composed_correct
  FROM probe_decisions d
  LEFT JOIN (SELECT run_id, subject_model, state_id, bool_and(correct) AS all_correct, count(answer) AS answered, count(*) AS total, avg(correct::INT) AS accuracy
             FROM probe_answers GROUP BY ALL) a USING (run_id, subject_model, state_id)
  LEFT JOIN (SELECT DISTINCT run_id, scenario_id, domain, decision_type, variant FROM episodes) e USING (run_id, scenario_id)`;

export interface ProbesResult {
  by: string[];
  groups: ReturnType<typeof probeOutcomes>;
  sufficiency: ReturnType<typeof probeSufficiency> | null;
}

/** `probes [--by COLS]`: the paired-probe four-outcome table, plus probe sufficiency over the states. */
export async function probesFromStore(src: StoreSource, opts: { by?: string[]; level?: number } = {}): Promise<ProbesResult> {
  const by = opts.by ?? ['subject_model'];
  for (const c of by) if (!['subject_model', 'scenario_id', 'domain', 'decision_type', 'variant', 'run_id', 'epoch'].includes(c)) throw usageError('metric.unknownColumn', `--by column "${c}" does not exist; use subject_model, scenario_id, domain, decision_type, variant, run_id or epoch`);
  return withStore(src, async (conn) => {
    const { rows } = await query(conn, `SELECT * FROM (${PROBE_STATE_SQL}) ORDER BY ${[...by, 'run_id', 'subject_model', 'state_id'].map(quoteIdent).join(', ')}`);
    if (rows.length === 0) throw dataError('probes.none', 'no probe decisions in this store (run with probes, or ingest probe answers)');
    const grouped: Record<string, ProbeRow[]> = {};
    for (const r of rows) {
      const key = by.map((c) => String(r[c])).join(' / ');
      (grouped[key] ??= []).push({
        state_id: `${r.run_id}/${r.subject_model}/${r.state_id}`,
        subject_model: String(r.subject_model),
        all_facts_correct: Boolean(r.all_facts_correct),
        action_correct: Boolean(r.action_correct),
        probes_answered: Number(r.probes_answered),
        probes_total: Number(r.probes_total),
        probe_accuracy: Number(r.probe_accuracy),
        composed_correct: r.composed_correct === null ? null : Boolean(r.composed_correct),
      });
    }
    // Sufficiency is a property of the states (correct answers and gold sets), not of a subject.
    const states = (
      await query(
        conn,
        `SELECT d.run_id || '/' || d.scenario_id AS state_id, any_value(d.gold_actions) AS gold, list(DISTINCT a.probe_id || '=' || a.expected ORDER BY a.probe_id || '=' || a.expected) AS answers
         FROM probe_decisions d JOIN probe_answers a USING (run_id, subject_model, state_id) GROUP BY 1 ORDER BY 1`,
      )
    ).rows;
    const suff = states.length
      ? probeSufficiency(
          states.map((s) => ({
            state_id: String(s.state_id),
            gold_actions: (s.gold as string[]).length ? (s.gold as string[]) : ['(none)'],
            probe_answers: Object.fromEntries((s.answers as string[]).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)])),
          })),
        )
      : null;
    return { by, groups: probeOutcomes(grouped, { level: opts.level }), sufficiency: suff };
  });
}

export { float64Column };
