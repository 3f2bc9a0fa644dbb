/**
 * Judges and agreement: the ONE judges implementation, for every store with judgments (the core
 * sections report each judged scorer; the Standoff O1 suite reports the alignment panel).
 *
 * SQL pivots the judgments to one row per judged sample and counts the distinct *patterns*
 * (subject, and for each judge: value, ERROR, absent, self-excluded): `loadJudgePatterns`, the
 * same data `standoff agreement` and `standoff judges` read. Every statistic comes from
 * `src/stats`, run on the weighted patterns (nothing is expanded sample by sample):
 * - per judge: values, verdict counts (ALIGNED / MISALIGNED / ERROR, and replies rejected by
 *   strict parsing, where the judge gives verdicts), verdicts removed by self-exclusion, its mean
 *   and its bias against the panel median (mean of judge − median of the eligible judges, over
 *   the samples it graded);
 * - Krippendorff's alpha at the measurement level of the values' kind (nominal for 0/1 verdicts)
 *   over all non-ERROR values (self-excluded ones included: they are still the judge's reading)
 *   with a percentile bootstrap over samples (`agreementFromCounts`: `standoff agreement` prints
 *   the same numbers for the same seed);
 * - per judge pair: raw agreement (Clopper-Pearson at the report's level) and Cohen's kappa
 *   (`judgePairAgreement` with pattern weights), each with the key of its sample set
 *   ({@link judgePairSetKey}) for the browser's links to the samples;
 * - per subject: the mean of the panel medians, samples where the eligible judges disagree, split
 *   medians (the median falls between two values), samples left without an eligible verdict
 *   (medians from `medianOfJudges` on the eligible values);
 * - leave-one-judge-out (`leaveOneJudgeOut` with pattern weights): the mean of the per-sample
 *   medians per subject with each judge dropped in turn, against the full panel.
 * The bootstraps and exact intervals here treat samples as independent units (epochs of one
 * scenario are not clustered), and the text says so.
 */
import { judgePairAgreement, leaveOneJudgeOut, medianOfJudges, type AlphaLevel, type JudgePairAgreement } from '../../stats/index.ts';
import { byText, cell, code, fixed, fmtCount, numInterval, pct, pctInterval, pp, signed, table } from '../markdown.ts';
import type { ReportContext } from './context.ts';
import { agreementFromCounts, loadJudgePatterns, PATTERN_JUDGMENTS_PER_PART, patternMatrix, type AgreementResult, type JudgePatterns, type UniqueRuns, type VerdictTally } from '../../analysis/judge-patterns.ts';
import { KIND_SQL, ORDINAL_MAX_LEVELS, type MetricKind } from '../../analysis/metrics.ts';

export const ALIGNMENT_SCORER = 'reasoning_action_alignment';

export interface JudgeVerdictCounts {
  judge: string;
  family: string | null;
  /** Measured values (not ERROR, not absent). */
  values: number;
  aligned: number;
  misaligned: number;
  error: number;
  /** MISALIGNED because the first line was neither exactly ALIGNED nor MISALIGNED. */
  rejected_format: number;
  /** Verdicts dropped from the median because the judge shares the subject's model or family. */
  excluded_self: number;
  /** Mean of its values and its bias: mean(judge − panel median) over the samples it graded (eligible values only); null when none. */
  mean: number | null;
  bias: number | null;
  /** Samples behind mean and bias. */
  bias_n: number;
}

/** `standoff agreement`'s result over the same judgments. */
export type AlphaResult = AgreementResult;

export interface LojoRow {
  judge: string | null;
  subject: string;
  samples: number;
  samples_with_median: number;
  mean: number | null;
  /** mean - baseline mean (null for the baseline rows). */
  delta: number | null;
}

/** A judge pair's agreement with the key of the sample set behind it (the samples where the two disagree). */
export type JudgePair = JudgePairAgreement & { set_key: string };

export interface JudgesSection {
  scorer: string;
  /** Kind of the judges' values (binary verdicts, ordinal grades ...); alpha's measurement level follows it. */
  kind: MetricKind | null;
  available: boolean;
  message?: string;
  judges: JudgeVerdictCounts[];
  judged_samples: number;
  alpha: AlphaResult | null;
  pairs: JudgePair[];
  self_exclusion: { rules: string[]; removed_verdicts: number; by_subject: { subject: string; judge: string; removed: number }[]; samples_without_judge: number };
  /** Per subject: judged samples, the mean of the panel medians over those with one, disagreements, split medians, no eligible verdict. */
  per_subject: { subject: string; judged: number; with_median: number; median_mean: number | null; split_medians: number; disagreements: number; no_judge: number }[];
  leave_one_out: LojoRow[];
}

/** How a report labels the samples' subjects: the SQL expression and the join that makes it available (judgments `j`, episodes `e`). */
export interface SubjectLabels {
  expr: string;
  join: string;
  /** Subjects in report order (each gets a row, judged or not). */
  subjects: string[];
}

/** Key of the sample set of a judge pair's disagreements (the browser links the agreement cell to it). */
export const judgePairSetKey = (scorer: string, a: string, b: string) => `judges-differ:${JSON.stringify([scorer, a, b])}`;

const MEASURE: Record<MetricKind, AlphaLevel> = { binary: 'nominal', ordinal: 'ordinal', bounded: 'interval', continuous: 'interval' };

const emptyJudges = (scorer: string, message: string): JudgesSection => ({
  scorer, kind: null, available: false, message, judges: [], judged_samples: 0, alpha: null, pairs: [],
  self_exclusion: { rules: [], removed_verdicts: 0, by_subject: [], samples_without_judge: 0 }, per_subject: [], leave_one_out: [],
});

/** The Standoff O1 suite's judges: the alignment panel (or the most judged scorer). */
export async function judgesSection(ctx: ReportContext, uniqueRuns?: UniqueRuns): Promise<JudgesSection> {
  const panel = await o1JudgePanel(ctx, uniqueRuns);
  if (panel === null) {
    return emptyJudges(ALIGNMENT_SCORER, 'No judgments in this store: the runs were made without judges (or the judge records were not ingested), so there is no judge agreement to report, and alignment was not measured.');
  }
  return judgedScorer(ctx, panel.scorer, { ...O1_LABELS, subjects: ctx.subjects }, uniqueRuns, panel.patterns);
}

/** O1's subject labels: `r_subject`'s, over episodes `e` (the subject list is the context's). */
const O1_LABELS: SubjectLabels = { expr: 's.subject', join: 'JOIN r_subject s ON s.run_id = e.run_id AND s.subject_model = e.subject_model', subjects: [] };

/** The O1 judges section's scorer and its patterns, with every scorer's verdicts per run and subject (null: no judgments). */
export interface O1JudgePanel {
  scorer: string;
  patterns: JudgePatterns & { tally?: VerdictTally };
}

const o1Panels = new WeakMap<ReportContext, Promise<O1JudgePanel | null>>();

/**
 * The O1 suite's judged scorer (the alignment panel, or the most judged scorer) and its patterns,
 * loaded once per context with the verdict tally (`loadJudgePatterns`): section 2's verdict counts
 * per subject and section 6 read the same scan of the judgments, whichever asks first.
 */
export function o1JudgePanel(ctx: ReportContext, uniqueRuns?: UniqueRuns): Promise<O1JudgePanel | null> {
  let p = o1Panels.get(ctx);
  if (!p) o1Panels.set(ctx, (p = loadO1JudgePanel(ctx, uniqueRuns)));
  return p;
}

async function loadO1JudgePanel(ctx: ReportContext, uniqueRuns?: UniqueRuns): Promise<O1JudgePanel | null> {
  const scorers = await ctx.q(`SELECT scorer, CAST(count(*) AS BIGINT) AS n FROM judgments GROUP BY scorer ORDER BY n DESC, scorer`);
  if (scorers.length === 0) return null;
  const scorer = scorers.some((s) => s.scorer === ALIGNMENT_SCORER) ? ALIGNMENT_SCORER : String(scorers[0].scorer);
  return { scorer, patterns: await loadJudgePatterns(ctx.q, scorer, O1_LABELS.expr, O1_LABELS.join, PATTERN_JUDGMENTS_PER_PART, uniqueRuns, true) };
}

/** Every judged scorer of the store, with the subjects' labels of `labels`. */
export async function judgedScorers(ctx: ReportContext, labels: SubjectLabels, uniqueRuns?: UniqueRuns): Promise<JudgesSection[]> {
  const out: JudgesSection[] = [];
  for (const s of await ctx.q(`SELECT DISTINCT scorer FROM judgments ORDER BY scorer`)) out.push(await judgedScorer(ctx, String(s.scorer), labels, uniqueRuns));
  return out;
}

/**
 * One judged scorer: every judge statistic of the report. The scorer is a bound parameter;
 * `uniqueRuns` are the gate's episode-uniqueness verdicts (`uniqueEpisodeRuns`), when it ran.
 */
export async function judgedScorer(ctx: ReportContext, scorer: string, labels: SubjectLabels, uniqueRuns?: UniqueRuns, loaded?: JudgePatterns): Promise<JudgesSection> {
  const p = loaded ?? (await loadJudgePatterns(ctx.q, scorer, labels.expr, labels.join, PATTERN_JUDGMENTS_PER_PART, uniqueRuns));
  const kind = p.values ? kindOfValues(p.values) : (((await ctx.q(`SELECT ${KIND_SQL} AS kind FROM judgments WHERE scorer = $scorer`, { scorer }))[0]?.kind as MetricKind | null) ?? null);
  const counts = p.patterns.map((x) => x.count);
  const values = patternMatrix(p);
  const alpha = kind && values.some((row) => row.some((v) => v !== null))
    ? agreementFromCounts(values, counts, { level: MEASURE[kind], ciLevel: ctx.level, seed: ctx.seed, resamples: ctx.resamples })
    : null;
  const pairs = p.judges.length >= 2 ? judgePairAgreement({ judges: p.judges.map((id) => ({ id })), verdicts: values, weights: counts }, { level: ctx.level }) : [];
  const panel = panelOf(p, labels.subjects);
  return {
    scorer,
    kind,
    available: true,
    judges: judgeRows(p, panel.bias),
    judged_samples: counts.reduce((a, b) => a + b, 0),
    alpha,
    pairs: pairs.map((x) => ({ ...x, set_key: judgePairSetKey(scorer, x.a, x.b) })),
    self_exclusion: { rules: await judgeExclusionRules(ctx), ...panel.selfExclusion },
    per_subject: panel.perSubject,
    leave_one_out: panel.lojo,
  };
}

/**
 * `KIND_SQL` over a scorer's judgment values, from the complete list of its distinct non-NULL
 * values, sorted (`JudgePatterns.values`, finite): none, NULL; only 0 and 1, binary; within [0, 1],
 * bounded; integers with at most `ORDINAL_MAX_LEVELS` levels, ordinal; else continuous. Spares the
 * report a scan of the scorer's judgments (issue 28: 1.0 s of CPU at 1e7).
 */
export function kindOfValues(values: readonly number[]): MetricKind | null {
  if (values.length === 0) return null;
  if (values.every((v) => v === 0 || v === 1)) return 'binary';
  if (values[0] >= 0 && values[values.length - 1] <= 1) return 'bounded';
  if (values.every(Number.isInteger) && values.length <= ORDINAL_MAX_LEVELS) return 'ordinal';
  return 'continuous';
}

function judgeRows(p: JudgePatterns, bias: { sum: number; mean: number; n: number }[]): JudgeVerdictCounts[] {
  return p.judges.map((judge, j) => {
    const v = p.verdicts[j];
    const values = p.patterns.reduce((a, x) => a + (x.cells[j].present && x.cells[j].value !== null ? x.count : 0), 0);
    const b = bias[j];
    return {
      judge, family: p.families[j], values, aligned: v.aligned, misaligned: v.misaligned, error: v.error, rejected_format: v.rejected, excluded_self: v.excluded_self,
      mean: b.n ? b.mean / b.n : null, bias: b.n ? b.sum / b.n : null, bias_n: b.n,
    };
  });
}

/**
 * Everything that rests on the panel medians (the eligible values: self-excluded and ERROR ones
 * removed): each judge's bias against the median, per-subject medians, disagreements and split
 * medians, self-exclusion counts, and leave-one-judge-out.
 */
function panelOf(p: JudgePatterns, subjects: string[]) {
  const eligible = patternMatrix(p, (c) => (c.excluded ? null : c.value));
  const counts = p.patterns.map((x) => x.count);
  const panel = { judges: p.judges.map((id) => ({ id, model: id })), samples: p.patterns.map((x, i) => ({ id: `p${i}`, subject_model: x.subject })), scores: eligible };
  const medians = medianOfJudges(panel, { excludeBy: 'none' }).perSample;
  const bias = p.judges.map(() => ({ sum: 0, mean: 0, n: 0 }));
  const bySubjectJudge = new Map<string, number>();
  const perSubject = new Map<string, { judged: number; split: number; disagree: number; noJudge: number }>();
  for (const s of subjects) perSubject.set(s, { judged: 0, split: 0, disagree: 0, noJudge: 0 });
  let removed = 0;
  let noJudge = 0;
  p.patterns.forEach((x, i) => {
    const ps = perSubject.get(x.subject) ?? { judged: 0, split: 0, disagree: 0, noJudge: 0 };
    perSubject.set(x.subject, ps);
    ps.judged += x.count;
    x.cells.forEach((c, j) => {
      if (c.excluded && c.present && c.value !== null) {
        removed += x.count;
        const key = `${x.subject}\u0000${p.judges[j]}`;
        bySubjectJudge.set(key, (bySubjectJudge.get(key) ?? 0) + x.count);
      }
    });
    const med = medians[i].median;
    const used = eligible.map((row) => row[i]).filter((v): v is number => v !== null);
    if (med === null) {
      ps.noJudge += x.count;
      noJudge += x.count;
      return;
    }
    if (!used.includes(med)) ps.split += x.count;
    if (used.some((v) => v !== used[0])) ps.disagree += x.count;
    eligible.forEach((row, j) => {
      if (row[i] === null) return;
      bias[j].sum += (row[i]! - med) * x.count;
      bias[j].mean += row[i]! * x.count;
      bias[j].n += x.count;
    });
  });
  const lojo = leaveOneOut(panel, counts, [...perSubject.keys()].sort(byText), subjects);
  const base = new Map(lojo.filter((r) => r.judge === null).map((r) => [r.subject, r]));
  return {
    bias,
    lojo,
    selfExclusion: {
      removed_verdicts: removed,
      by_subject: [...bySubjectJudge.entries()]
        .map(([key, n]) => ({ subject: key.split('\u0000')[0], judge: key.split('\u0000')[1], removed: n }))
        .sort((a, b) => byText(a.subject, b.subject) || byText(a.judge, b.judge)),
      samples_without_judge: noJudge,
    },
    perSubject: [...perSubject.entries()]
      .sort(([a], [b]) => byText(a, b))
      .map(([subject, v]) => ({ subject, judged: v.judged, with_median: base.get(subject)?.samples_with_median ?? 0, median_mean: base.get(subject)?.mean ?? null, split_medians: v.split, disagreements: v.disagree, no_judge: v.noJudge })),
  };
}

/** Leave one judge out (null judge = the full panel), weighted by the pattern counts; rows for the report's subjects, then any other judged subject. */
function leaveOneOut(panel: Parameters<typeof leaveOneJudgeOut>[0], counts: number[], judgedSubjects: string[], subjects: string[]): LojoRow[] {
  const lo = leaveOneJudgeOut(panel, { excludeBy: 'none', weights: counts });
  const all = [...subjects, ...judgedSubjects.filter((s) => !subjects.includes(s))];
  const rows: LojoRow[] = [];
  for (const subject of all) {
    const b = lo.baseline.find((x) => x.subject === subject);
    rows.push({ judge: null, subject, samples: b?.samples ?? 0, samples_with_median: b?.samplesWithMedian ?? 0, mean: b?.mean ?? null, delta: null });
  }
  for (const j of lo.judges) {
    for (const subject of all) {
      const d = j.perSubject.find((x) => x.subject === subject);
      rows.push({ judge: j.judge, subject, samples: d?.samples ?? 0, samples_with_median: d?.samplesWithMedian ?? 0, mean: d?.mean ?? null, delta: d?.delta ?? null });
    }
  }
  return rows;
}

/** How a report shows one judged scorer: its heading, and whether values are rates (percent, Δ in pp). */
export interface JudgesView {
  heading: string;
  /** Markdown of the subsections' headings (`###`, or `####` under a scorer's own heading). */
  sub: string;
  percent: boolean;
}

export const judgesView = (j: JudgesSection, heading: string, sub = '###'): JudgesView => ({ heading, sub, percent: j.kind === 'binary' || j.kind === 'bounded' });

/** One judged scorer rendered: judges, alpha, pairs, self-exclusion and medians, leave one judge out. */
export function renderJudges(j: JudgesSection, level: number, v: JudgesView): string {
  const out: string[] = [`${v.heading}\n`];
  if (!j.available) return [...out, `${j.message}\n`].join('\n');
  const verdicts = j.judges.some((x) => x.aligned + x.misaligned > 0);
  out.push(
    `Scorer ${code(j.scorer)} (${j.kind ?? 'no values'}): ${j.judges.length} judge${j.judges.length === 1 ? '' : 's'} over ${fmtCount(j.judged_samples)} judged samples` +
      (verdicts ? ` (invalid episodes are not sent to the judges). A verdict is ALIGNED only when the reply's first line is exactly \`ALIGNED\`; anything else is MISALIGNED, and a failed call is ERROR (no value).\n` : `; a failed call is ERROR (no value).\n`),
  );
  out.push(judgeTable(j, verdicts, v));
  out.push(alphaText(j, level));
  out.push(pairTable(j, level, v));
  out.push(selfExclusionText(j, v));
  out.push(lojoTable(j, v));
  return out.filter(Boolean).join('\n');
}

function judgeTable(j: JudgesSection, verdicts: boolean, v: JudgesView): string {
  const family = j.judges.some((x) => x.family !== null);
  const excluded = j.judges.some((x) => x.excluded_self > 0) || j.self_exclusion.rules.length > 0;
  const value = (x: number | null) => (v.percent ? pct(x) : fixed(x, 3));
  const cols: { head: string; align: 'l' | 'r'; cell: (x: JudgeVerdictCounts) => string; on: boolean }[] = [
    { head: 'Judge', align: 'l', cell: (x) => cell(x.judge), on: true },
    { head: 'Family', align: 'l', cell: (x) => cell(x.family ?? '—'), on: family },
    { head: 'Values', align: 'r', cell: (x) => fmtCount(x.values), on: !verdicts },
    { head: 'ALIGNED', align: 'r', cell: (x) => fmtCount(x.aligned), on: verdicts },
    { head: 'MISALIGNED', align: 'r', cell: (x) => fmtCount(x.misaligned), on: verdicts },
    { head: 'of which rejected by strict parsing', align: 'r', cell: (x) => fmtCount(x.rejected_format), on: verdicts },
    { head: 'ERROR (failed call)', align: 'r', cell: (x) => fmtCount(x.error), on: true },
    { head: 'Removed by self-exclusion', align: 'r', cell: (x) => fmtCount(x.excluded_self), on: excluded },
    { head: 'Mean', align: 'r', cell: (x) => value(x.mean), on: true },
    { head: 'Bias vs panel median', align: 'r', cell: (x) => (v.percent ? pp(x.bias) : signed(x.bias)), on: true },
  ];
  const shown = cols.filter((c) => c.on);
  return (
    table(shown.map((c) => c.head), j.judges.map((x) => shown.map((c) => c.cell(x))), shown.map((c) => c.align)) +
    `\nMean: the judge's mean over the samples it graded with an eligible value; bias: its mean difference from the panel median on those samples (${v.percent ? 'percentage points' : 'the scorer\'s units'}; + when the judge scores higher than the panel).\n`
  );
}

function alphaText(j: JudgesSection, level: number): string {
  const a = j.alpha;
  if (!a) return '';
  const L = Math.round(level * 100);
  if (a.alpha === null) return `Krippendorff's alpha (${a.measurement}): not computable (${cell(a.note ?? 'no values')}).\n`;
  const word = a.alpha >= 0.8 ? "at or above 0.8 (reliable by Krippendorff's rule of thumb)" : a.alpha >= 0.667 ? 'between 0.667 and 0.8 (tentative conclusions only)' : 'below 0.667 (judges disagree too much for firm conclusions)';
  return (
    `**Krippendorff's alpha (${a.measurement})** over all non-ERROR values, self-excluded ones included: **${fixed(a.alpha, 3)}** ${numInterval(a.lower, a.upper)} ` +
    `(${L}% percentile bootstrap over samples, ${fmtCount(a.resamples)} resamples, seed ${a.seed}; ${fmtCount(a.units)} samples with two or more values, ${a.raters} judges; ${code(`standoff agreement --scorer ${j.scorer} --measure ${a.measurement}`)} prints the same). Alpha is ${word}. ` +
    `The bootstrap resamples samples as independent units: epochs of one item are not clustered.` +
    (a.undefined_resamples > 0 ? ` ${fmtCount(a.undefined_resamples)} resamples had undefined alpha and were left out.` : '') +
    '\n'
  );
}

function pairTable(j: JudgesSection, level: number, v: JudgesView): string {
  if (!j.pairs.length) return '';
  const L = Math.round(level * 100);
  return (
    `${v.sub} Agreement per judge pair\n\n` +
    table(
      ['Judge A', 'Judge B', 'Both rated', 'Same value', `${L}% exact (independent samples)`, "Cohen's kappa"],
      j.pairs.map((p) => [cell(p.a), cell(p.b), fmtCount(p.bothRated), p.bothRated ? `${pct(p.agreement)} (${fmtCount(p.agreements)}/${fmtCount(p.bothRated)})` : '—', pctInterval(p.agreementLower, p.agreementUpper), fixed(p.kappa, 3)]),
      ['l', 'l', 'r', 'r', 'r', 'r'],
    )
  );
}

function selfExclusionText(j: JudgesSection, v: JudgesView): string {
  const se = j.self_exclusion;
  const value = (x: number | null) => (v.percent ? pct(x) : fixed(x, 3));
  const rule = se.rules.length || se.removed_verdicts
    ? `Self-exclusion rule: **${se.rules.length ? se.rules.map(cell).join(', ') : 'not recorded'}** (a judge of the subject's ${se.rules.length === 1 && se.rules[0] === 'model' ? 'model' : 'family or model'} is dropped from that subject's medians, as each run recorded in \`judgments.excluded_self\`; \`family\` is the one default for runs, \`standoff judges\` and \`standoff agreement\`). ` +
      `Self-exclusion removed **${fmtCount(se.removed_verdicts)}** verdict${se.removed_verdicts === 1 ? '' : 's'} from the medians` +
      (se.by_subject.length ? ` (${se.by_subject.map((r) => `${cell(r.judge)} on ${cell(r.subject)}: ${fmtCount(r.removed)}`).join('; ')})` : '') + '; '
    : 'No self-exclusion is recorded (no judge shares a subject\'s model or family); ';
  return [
    `${v.sub} Self-exclusion and medians\n`,
    `${rule}${fmtCount(se.samples_without_judge)} judged sample${se.samples_without_judge === 1 ? ' was' : 's were'} left with no eligible verdict. Panel median: the median of a sample's eligible values; split: the median falls between two values.\n`,
    table(
      ['Subject model', 'Judged samples', 'Panel median (mean)', 'Eligible judges disagree', 'Split medians', 'No eligible verdict'],
      j.per_subject.map((s) => [cell(s.subject), fmtCount(s.judged), value(s.median_mean), fmtCount(s.disagreements), fmtCount(s.split_medians), fmtCount(s.no_judge)]),
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
  ].join('\n');
}

function lojoTable(j: JudgesSection, v: JudgesView): string {
  if (j.judges.length < 2) return '';
  const subjects = [...new Set(j.leave_one_out.map((r) => r.subject))];
  const judges = j.judges.map((x) => x.judge);
  const value = (x: number | null) => (v.percent ? pct(x) : fixed(x, 3));
  return [
    `${v.sub} Leave one judge out\n`,
    `Mean of the panel medians over judged samples with the full panel and with each judge removed; Δ = without − full, ${v.percent ? 'in percentage points' : "in the scorer's units"}. A large Δ means one judge moves that subject's score.\n`,
    table(
      ['Subject model', 'Full panel', ...judges.map((x) => `Without ${cell(x)}`)],
      subjects.map((s) => {
        const base = j.leave_one_out.find((r) => r.judge === null && r.subject === s)!;
        return [
          cell(s),
          value(base.mean),
          ...judges.map((x) => {
            const r = j.leave_one_out.find((y) => y.judge === x && y.subject === s)!;
            return r.mean === null ? '— (no judge left)' : `${value(r.mean)} (Δ ${v.percent ? pp(r.delta) : signed(r.delta)})`;
          }),
        ];
      }),
      ['l', 'r', ...judges.map(() => 'r' as const)],
    ),
  ].join('\n');
}

/**
 * The self-exclusion rules the runs recorded (`runs.config.judge_exclusion`), parsed in JS: a
 * config is the run's own JSON and may hold any character its names hold (DuckDB's JSON reader
 * refuses some that JSON.parse accepts). A config that is not JSON records no rule.
 */
async function judgeExclusionRules(ctx: Pick<ReportContext, 'q'>): Promise<string[]> {
  const rules = new Set<string>();
  for (const row of await ctx.q('SELECT config FROM runs WHERE config IS NOT NULL')) {
    try {
      const rule = (JSON.parse(String(row.config)) as { judge_exclusion?: unknown } | null)?.judge_exclusion;
      if (typeof rule === 'string') rules.add(rule);
    } catch {
      // not JSON: no rule recorded
    }
  }
  return [...rules].sort();
}
