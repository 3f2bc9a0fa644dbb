import { checkOptions, checkWeights } from './arg-checks.ts';
import { medianOfJudges, type JudgeScores, type MedianOfJudgesOptions, type MedianOfJudgesResult } from './median-of-judges.ts';
import type { ExcludeBy } from './judge-panel.ts';

export interface SubjectMean {
  subject: string;
  /** Mean over the subject's samples of the per-sample judge median; null if no sample has one. */
  mean: number | null;
  /** The subject's samples. */
  samples: number;
  /** Samples with a non-null median (the mean's denominator). */
  samplesWithMedian: number;
}

export interface SubjectDelta extends SubjectMean {
  /** mean without this judge - baseline mean; null when either is null. */
  delta: number | null;
}

export interface JudgeInfluence {
  judge: string;
  perSubject: SubjectDelta[];
  /** Largest |delta| over subjects; null when every delta is null. */
  maxAbsDelta: number | null;
}

export interface LeaveOneJudgeOutOptions extends MedianOfJudgesOptions {
  /**
   * How many samples each column stands for (a non-negative integer each; default 1): callers that
   * count distinct verdict patterns pass one column per pattern and its count.
   */
  weights?: ArrayLike<number>;
}

export interface LeaveOneJudgeOutResult {
  baseline: SubjectMean[];
  judges: JudgeInfluence[];
  excludeBy: ExcludeBy;
}

/**
 * Judge influence by leave-one-out: the per-subject mean of per-sample medians (see
 * `medianOfJudges`, same self-exclusion) is recomputed with each judge removed from the panel in
 * turn, and the change from the full-panel value is reported.
 *
 * Source: the jackknife's leave-one-out recomputation (Quenouille 1949; Efron & Tibshirani 1993,
 * ch. 11) applied to judges rather than items, as an influence diagnostic: a large delta means
 * one judge moves a subject's score. (No variance is derived from it.)
 *
 * Subjects are the distinct `subject_model` values in order of first appearance.
 *
 * With `weights`, sample s counts weights[s] times in every mean and count (the expanded data).
 *
 * Degenerate cases: a subject whose samples all lack a median -> mean null and deltas null; a
 * panel of one judge -> every leave-one-out mean is null; no samples -> empty baseline and empty
 * perSubject lists; no judges -> baseline means null and no judge entries. Bad input throws as in
 * `medianOfJudges`.
 *
 * @example
 * import { leaveOneJudgeOut } from './leave-one-judge-out.ts';
 * const r = leaveOneJudgeOut({
 *   judges: [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }],
 *   samples: [{ id: 's1', subject_model: 'z' }, { id: 's2', subject_model: 'z' }],
 *   scores: [[1, 1], [2, 3], [9, 9]],
 * });
 * // r.baseline[0].mean = 2.5 (medians 2 and 3)
 * // dropping j3: medians 1.5 and 2 -> mean 1.75, delta -0.75
 */
export function leaveOneJudgeOut(input: JudgeScores, options?: LeaveOneJudgeOutOptions): LeaveOneJudgeOutResult {
  const fn = 'leaveOneJudgeOut';
  const { weights: w, ...opts } = checkOptions(fn, options);
  const full = medianOfJudges(input, opts); // validates the input
  const weights = checkWeights(fn, 'weights', w, input.samples.length);
  const subjects = [...new Set(input.samples.map((s) => s.subject_model))];
  const baseline = subjectMeans(full, subjects, weights);
  const judges = input.judges.map((judge, j): JudgeInfluence => {
    const reduced = medianOfJudges(
      {
        judges: input.judges.filter((_, k) => k !== j),
        samples: input.samples,
        scores: input.scores.filter((_, k) => k !== j),
      },
      opts,
    );
    let maxAbsDelta: number | null = null;
    const perSubject = subjectMeans(reduced, subjects, weights).map((m, i): SubjectDelta => {
      const base = baseline[i].mean;
      const delta = m.mean === null || base === null ? null : m.mean - base;
      if (delta !== null && (maxAbsDelta === null || Math.abs(delta) > maxAbsDelta)) maxAbsDelta = Math.abs(delta);
      return { ...m, delta };
    });
    return { judge: judge.id, perSubject, maxAbsDelta };
  });
  return { baseline, judges, excludeBy: full.excludeBy };
}

function subjectMeans(result: MedianOfJudgesResult, subjects: readonly string[], weights: ArrayLike<number> | null): SubjectMean[] {
  return subjects.map((subject) => {
    let sum = 0;
    let samples = 0;
    let samplesWithMedian = 0;
    result.perSample.forEach((r, i) => {
      if (r.subject_model !== subject) return;
      const w = weights ? weights[i] : 1;
      samples += w;
      if (r.median !== null) {
        sum += w * r.median;
        samplesWithMedian += w;
      }
    });
    return { subject, mean: samplesWithMedian === 0 ? null : sum / samplesWithMedian, samples, samplesWithMedian };
  });
}
