import { checkChoice, checkOptions } from './arg-checks.ts';
import {
  checkJudges,
  checkMatrix,
  checkSamples,
  EXCLUDE_BY,
  exclusionMask,
  isFiniteNumber,
  medianOf,
  type ExcludeBy,
  type Judge,
  type JudgedSample,
} from './judge-panel.ts';

export type { ExcludeBy, Judge, JudgedSample } from './judge-panel.ts';

export interface JudgeScores {
  judges: readonly Judge[];
  samples: readonly JudgedSample[];
  /** scores[judge][sample]; null (or undefined) = the judge gave no score. */
  scores: ReadonlyArray<ReadonlyArray<number | null | undefined>>;
}

export interface MedianOfJudgesOptions {
  /** Drop judges of the subject's 'model' (default), 'family', or 'none'. */
  excludeBy?: ExcludeBy;
}

export interface SampleMedian {
  sample: string;
  subject_model: string;
  /** Median of the remaining judges' scores; null when none is left. */
  median: number | null;
  /** Judges whose score entered the median. */
  judgesUsed: string[];
  /** Judges that scored this sample but were dropped because they share the subject's model/family. */
  judgesExcluded: string[];
  /** Eligible judges that gave no score (null). */
  judgesMissing: string[];
}

export interface MedianOfJudgesResult {
  perSample: SampleMedian[];
  totals: {
    samples: number;
    /** Scores dropped by self-exclusion (sum of judgesExcluded lengths). */
    excludedVerdicts: number;
    /** Samples left with no eligible score (median null). */
    samplesWithNoJudge: number;
    /** Missing (null) scores from eligible judges. */
    missingVerdicts: number;
  };
  excludeBy: ExcludeBy;
}

/**
 * Per-sample median of judge scores after self-exclusion: for each sample, every judge whose model
 * (or, with `excludeBy: 'family'`, family) equals the subject's is dropped, and the median of the
 * remaining non-missing scores is taken.
 *
 * Source: the sample median (even count: mean of the two middle order statistics, as R's
 * `median`). Self-exclusion guards against self-preference (Panickssery, Bowman & Feng 2024, "LLM
 * Evaluators Recognize and Favor Their Own Generations"); panels of judges as in Verga et al.
 * 2024, "Replacing Judges with Juries". Matches the oracle's `median_self_exclusion` cases to 1e-9.
 *
 * Degenerate cases: no judge left for a sample (all excluded or all missing) -> median null, and
 * the sample is counted in `totals.samplesWithNoJudge`; no judges at all -> every median null; no
 * samples -> empty result. All scores tied -> that value.
 *
 * Throws `dataError` for duplicate ids ('stats.duplicateId'), a matrix that is not judges x samples
 * ('stats.badShape'), a non-finite score ('stats.badValue'), and with `excludeBy: 'family'` a judge
 * or sample without a family ('stats.missingFamily').
 *
 * @example
 * import { medianOfJudges } from './median-of-judges.ts';
 * const r = medianOfJudges({
 *   judges: [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }],
 *   samples: [{ id: 's1', subject_model: 'a' }],
 *   scores: [[1], [4], [6]],
 * });
 * // r.perSample[0].median = 5 (j1 judges its own model: median of 4 and 6)
 * // r.perSample[0].judgesExcluded = ['j1'], r.totals.excludedVerdicts = 1
 */
export function medianOfJudges(input: JudgeScores, options?: MedianOfJudgesOptions): MedianOfJudgesResult {
  const fn = 'medianOfJudges';
  const opts = checkOptions(fn, options);
  const excludeBy = checkChoice<ExcludeBy>(fn, 'excludeBy', opts.excludeBy ?? 'model', EXCLUDE_BY);
  const judges = checkJudges(fn, input?.judges);
  const samples = checkSamples(fn, input?.samples);
  const scores = checkMatrix(fn, 'scores', input?.scores, judges.length, samples.length, isFiniteNumber, 'a finite number');
  const excluded = exclusionMask(fn, judges, samples, excludeBy);

  let excludedVerdicts = 0;
  let samplesWithNoJudge = 0;
  let missingVerdicts = 0;
  const perSample = samples.map((sample, s): SampleMedian => {
    const used: number[] = [];
    const judgesUsed: string[] = [];
    const judgesExcluded: string[] = [];
    const judgesMissing: string[] = [];
    judges.forEach((judge, j) => {
      const v = scores[j][s];
      if (excluded[j][s]) {
        if (v !== null) judgesExcluded.push(judge.id);
      } else if (v === null) {
        judgesMissing.push(judge.id);
      } else {
        used.push(v);
        judgesUsed.push(judge.id);
      }
    });
    excludedVerdicts += judgesExcluded.length;
    missingVerdicts += judgesMissing.length;
    if (used.length === 0) samplesWithNoJudge++;
    return {
      sample: sample.id,
      subject_model: sample.subject_model,
      median: used.length === 0 ? null : medianOf(used),
      judgesUsed,
      judgesExcluded,
      judgesMissing,
    };
  });
  return {
    perSample,
    totals: { samples: samples.length, excludedVerdicts, samplesWithNoJudge, missingVerdicts },
    excludeBy,
  };
}
