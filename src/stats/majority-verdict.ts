import { dataError } from '../errors.ts';
import { checkChoice, checkOptions, show } from './arg-checks.ts';
import {
  checkJudges,
  checkMatrix,
  checkSamples,
  EXCLUDE_BY,
  exclusionMask,
  isLabel,
  type ExcludeBy,
  type Judge,
  type JudgedSample,
  type Label,
} from './judge-panel.ts';

export type { Label } from './judge-panel.ts';

export interface JudgeVerdicts {
  judges: readonly Judge[];
  samples: readonly JudgedSample[];
  /** verdicts[judge][sample]: a label (string, number or boolean); null = no verdict. */
  verdicts: ReadonlyArray<ReadonlyArray<Label | null | undefined>>;
}

/**
 * How to resolve a tie for the most votes:
 * - 'null' (default): the verdict is null and the sample is counted in `totals.ties`;
 * - { prefer: [...] }: the first label of this list among the tied ones wins (e.g. a conservative
 *   `{ prefer: ['MISALIGNED'] }`); the tie is still counted. A tie among labels none of which is
 *   in the list is an error: the rule must cover it.
 */
export type TieRule = 'null' | { prefer: readonly Label[] };

export interface MajorityVerdictOptions {
  /** Drop judges of the subject's 'model' (default), 'family', or 'none'. */
  excludeBy?: ExcludeBy;
  tie?: TieRule;
}

export interface SampleVerdict {
  sample: string;
  subject_model: string;
  /** The label with the most votes; null on an unresolved tie or with no votes. */
  verdict: Label | null;
  /** Vote counts, most votes first (ties in first-vote order). */
  votes: { label: Label; count: number }[];
  /** Whether two or more labels shared the most votes. */
  tie: boolean;
  judgesUsed: string[];
  judgesExcluded: string[];
}

export interface MajorityVerdictResult {
  perSample: SampleVerdict[];
  totals: {
    samples: number;
    /** Samples where two or more labels shared the most votes (resolved or not). */
    ties: number;
    /** Ties left as null verdicts (tie rule 'null'). */
    unresolvedTies: number;
    excludedVerdicts: number;
    samplesWithNoJudge: number;
  };
  excludeBy: ExcludeBy;
}

/**
 * Per-sample plurality verdict of a judge panel after self-exclusion (as in `medianOfJudges`): the
 * label with the most votes among the eligible, non-missing verdicts. With two labels this is
 * the simple majority; ties follow an explicit rule.
 *
 * Source: plurality voting; the panel-of-judges setting of Verga et al. (2024), "Replacing Judges
 * with Juries" (max voting over judges), with self-exclusion against self-preference.
 *
 * Degenerate cases: no eligible verdict -> verdict null, counted in `totals.samplesWithNoJudge`;
 * a tie -> resolved by `tie` (default null, counted in `totals.ties` and `totals.unresolvedTies`);
 * all judges agree -> that label. Labels compare by identity (1, '1' and true differ).
 *
 * Throws `dataError` for bad shapes or ids (as `medianOfJudges`), a verdict that is not a string,
 * finite number or boolean ('stats.badValue'), a malformed tie rule ('stats.badOption') and a tie
 * the `prefer` list does not cover ('stats.tieUnresolved').
 *
 * @example
 * import { majorityVerdict } from './majority-verdict.ts';
 * const judges = [{ id: 'j1', model: 'a' }, { id: 'j2', model: 'b' }, { id: 'j3', model: 'c' }];
 * const samples = [{ id: 's1', subject_model: 'z' }, { id: 's2', subject_model: 'c' }];
 * const verdicts = [['PASS', 'PASS'], ['FAIL', 'FAIL'], ['PASS', 'PASS']];
 * const r = majorityVerdict({ judges, samples, verdicts });
 * // r.perSample[0].verdict = 'PASS' (2 to 1); r.perSample[1].verdict = null (j3 excluded, 1 to 1)
 * majorityVerdict({ judges, samples, verdicts }, { tie: { prefer: ['FAIL'] } }).perSample[1].verdict; // 'FAIL'
 */
export function majorityVerdict(input: JudgeVerdicts, options?: MajorityVerdictOptions): MajorityVerdictResult {
  const fn = 'majorityVerdict';
  const opts = checkOptions(fn, options);
  const excludeBy = checkChoice<ExcludeBy>(fn, 'excludeBy', opts.excludeBy ?? 'model', EXCLUDE_BY);
  const tie = opts.tie ?? 'null';
  if (tie !== 'null' && !(typeof tie === 'object' && tie !== null && Array.isArray(tie.prefer) && tie.prefer.every(isLabel))) {
    throw dataError('stats.badOption', `${fn} requires tie to be 'null' or {prefer: [labels]}, got ${show(tie)}`);
  }
  const judges = checkJudges(fn, input?.judges);
  const samples = checkSamples(fn, input?.samples);
  const verdicts = checkMatrix(fn, 'verdicts', input?.verdicts, judges.length, samples.length, isLabel, 'a string, finite number or boolean');
  const excluded = exclusionMask(fn, judges, samples, excludeBy);

  let ties = 0;
  let unresolvedTies = 0;
  let excludedVerdicts = 0;
  let samplesWithNoJudge = 0;
  const perSample = samples.map((sample, s): SampleVerdict => {
    const counts = new Map<Label, number>();
    const judgesUsed: string[] = [];
    const judgesExcluded: string[] = [];
    judges.forEach((judge, j) => {
      const v = verdicts[j][s];
      if (v === null) return;
      if (excluded[j][s]) {
        judgesExcluded.push(judge.id);
        return;
      }
      judgesUsed.push(judge.id);
      counts.set(v, (counts.get(v) ?? 0) + 1);
    });
    excludedVerdicts += judgesExcluded.length;
    // Stable sort keeps first-vote order among equal counts.
    const votes = [...counts].map(([label, count]) => ({ label, count })).sort((a, b) => b.count - a.count);
    let verdict: Label | null = null;
    let isTie = false;
    if (votes.length === 0) {
      samplesWithNoJudge++;
    } else {
      const top = votes.filter((v) => v.count === votes[0].count).map((v) => v.label);
      if (top.length === 1) {
        verdict = top[0];
      } else {
        isTie = true;
        ties++;
        if (tie === 'null') {
          unresolvedTies++;
        } else {
          const pick = tie.prefer.find((label) => top.includes(label));
          if (pick === undefined) {
            throw dataError(
              'stats.tieUnresolved',
              `${fn} found a tie between ${top.map((l) => JSON.stringify(l)).join(', ')} on sample ${JSON.stringify(sample.id)} that the tie rule's prefer list does not cover`,
            );
          }
          verdict = pick;
        }
      }
    }
    return { sample: sample.id, subject_model: sample.subject_model, verdict, votes, tie: isTie, judgesUsed, judgesExcluded };
  });
  return {
    perSample,
    totals: { samples: samples.length, ties, unresolvedTies, excludedVerdicts, samplesWithNoJudge },
    excludeBy,
  };
}
