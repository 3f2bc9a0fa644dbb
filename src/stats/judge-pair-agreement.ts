import { dataError } from '../errors.ts';
import { checkLevel, show } from './arg-checks.ts';
import { clopperPearson } from './clopper-pearson.ts';
import { cohenKappa } from './cohen-kappa.ts';
import { isLabel, type Label } from './judge-panel.ts';

export interface JudgePairInput {
  /** Only `id` is used; model and family may be present (the panel input of `majorityVerdict`). */
  judges: ReadonlyArray<{ id: string }>;
  /** verdicts[judge][sample]: a nominal label; null = no verdict. */
  verdicts: ReadonlyArray<ReadonlyArray<Label | null | undefined>>;
  /** How many samples each column stands for (distinct verdict patterns with their counts); default 1 each. */
  weights?: ArrayLike<number>;
}

export interface JudgePairAgreementOptions {
  /** Confidence level of the Clopper-Pearson interval. Default 0.95. */
  level?: number;
}

export interface JudgePairAgreement {
  a: string;
  b: string;
  /** Samples both judges rated. */
  bothRated: number;
  /** Of those, samples with the same label. */
  agreements: number;
  /** agreements / bothRated; null when bothRated = 0. */
  agreement: number | null;
  /** Two-sided Clopper-Pearson interval (at `level`, default 95%) for the agreement share; null when bothRated = 0. */
  agreementLower: number | null;
  agreementUpper: number | null;
  /** Cohen's kappa on the both-rated samples (see `cohenKappa`); null when undefined. */
  kappa: number | null;
}

/**
 * Pairwise agreement of a judge panel on nominal verdicts: for every pair of judges (in input
 * order, a before b), the number of samples both rated, the raw agreement share with a
 * Clopper-Pearson interval (95% unless `level` says otherwise), and Cohen's kappa. With `weights`,
 * column s stands for weights[s] identical samples (the panel's distinct verdict patterns with
 * their counts), so a large panel need not be expanded sample by sample.
 *
 * Source: raw percent agreement and Cohen (1960) kappa (see `cohenKappa`); the interval is
 * `clopperPearson(agreements, bothRated)`. Kappa corrects for the chance agreement implied by each
 * judge's label frequencies; with rare labels high raw agreement can come with low kappa.
 * Self-exclusion does not apply here: agreement compares judges, not subjects.
 *
 * Degenerate cases: fewer than two judges -> no pairs; a pair with no sample rated by both ->
 * bothRated 0 and agreement, interval and kappa null; both judges always give the same single
 * label -> agreement 1 and kappa null (undefined).
 *
 * Throws `dataError` for a non-array or ragged verdict matrix, one row count not matching the
 * judges ('stats.badShape'), duplicate judge ids ('stats.duplicateId') and a bad label ('stats.badValue').
 *
 * @example
 * import { judgePairAgreement } from './judge-pair-agreement.ts';
 * const [p] = judgePairAgreement({
 *   judges: [{ id: 'j1' }, { id: 'j2' }],
 *   verdicts: [['y', 'y', 'n', 'n', null], ['y', 'n', 'n', 'n', 'y']],
 * });
 * // p.bothRated = 4, p.agreement = 0.75, p.kappa = 0.5
 */
export function judgePairAgreement(input: JudgePairInput, options?: JudgePairAgreementOptions): JudgePairAgreement[] {
  const fn = 'judgePairAgreement';
  const level = checkLevel(fn, 'level', options?.level ?? 0.95);
  const judges = input?.judges;
  const verdicts = input?.verdicts;
  if (!Array.isArray(judges)) throw dataError('stats.badShape', `${fn} requires judges to be an array, got ${show(judges)}`);
  const ids = new Set<string>();
  judges.forEach((j, i) => {
    if (j === null || typeof j !== 'object' || typeof j.id !== 'string') {
      throw dataError('stats.badJudge', `${fn} requires judges[${i}] to have a string id, got ${show(j)}`);
    }
    if (ids.has(j.id)) throw dataError('stats.duplicateId', `${fn} got the judge id ${JSON.stringify(j.id)} twice`);
    ids.add(j.id);
  });
  if (!Array.isArray(verdicts) || verdicts.length !== judges.length) {
    throw dataError(
      'stats.badShape',
      `${fn} requires verdicts to have one row per judge (${judges.length}), got ${Array.isArray(verdicts) ? verdicts.length : show(verdicts)}`,
    );
  }
  const cols = verdicts.length > 0 && Array.isArray(verdicts[0]) ? verdicts[0].length : 0;
  verdicts.forEach((row, j) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw dataError(
        'stats.badShape',
        `${fn} requires every verdicts row to have the same length (${cols}), got ${Array.isArray(row) ? row.length : show(row)} in verdicts[${j}]`,
      );
    }
    row.forEach((v, s) => {
      if (v !== null && v !== undefined && !isLabel(v)) {
        throw dataError('stats.badValue', `${fn} requires verdicts[${j}][${s}] to be a string, finite number, boolean or null, got ${show(v)}`);
      }
    });
  });

  const out: JudgePairAgreement[] = [];
  for (let x = 0; x < judges.length; x++) {
    for (let y = x + 1; y < judges.length; y++) {
      const k = cohenKappa(verdicts[x], verdicts[y], input.weights);
      const agreements = k.agreements;
      const ci = k.n === 0 ? null : clopperPearson(agreements, k.n, { level });
      out.push({
        a: judges[x].id,
        b: judges[y].id,
        bothRated: k.n,
        agreements,
        agreement: k.observedAgreement,
        agreementLower: ci ? ci.lower : null,
        agreementUpper: ci ? ci.upper : null,
        kappa: k.kappa,
      });
    }
  }
  return out;
}
