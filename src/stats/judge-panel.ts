import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * Shared input checks for the judge-panel statistics (`medianOfJudges`, `majorityVerdict`,
 * `leaveOneJudgeOut`, `judgePairAgreement`); not a statistic itself. The layout is the oracle's:
 * `judges[j]`, `samples[s]` and a judge x sample matrix `matrix[j][s]` with null (or undefined)
 * for a missing verdict.
 */

export interface Judge {
  id: string;
  model: string;
  /** Model family (e.g. vendor lineage); needed when excluding by family. */
  family?: string;
}

export interface JudgedSample {
  id: string;
  /** The model whose output this sample is (the subject being judged). */
  subject_model: string;
  subject_family?: string;
}

/**
 * Which judges to drop for a sample: 'model' drops judges whose model equals the subject's;
 * 'family' drops judges of the same family (and, as a superset, of the same model); 'none' keeps
 * every judge.
 */
export type ExcludeBy = 'model' | 'family' | 'none';
export const EXCLUDE_BY: readonly ExcludeBy[] = ['model', 'family', 'none'];
/**
 * The one self-exclusion default for runs (`judge_exclusion`), `standoff judges`, `standoff
 * agreement` and the report: a judge of the subject's family (or model) leaves that subject's
 * median. The statistics functions themselves take the rule explicitly.
 */
export const SELF_EXCLUSION_DEFAULT = 'family' satisfies ExcludeBy;

/** A categorical verdict. */
export type Label = string | number | boolean;

export function checkJudges(fn: string, judges: unknown): readonly Judge[] {
  if (!Array.isArray(judges)) {
    throw dataError('stats.badShape', `${fn} requires judges to be an array, got ${show(judges)}`);
  }
  const seen = new Set<string>();
  judges.forEach((j, i) => {
    if (j === null || typeof j !== 'object' || typeof j.id !== 'string' || typeof j.model !== 'string') {
      throw dataError('stats.badJudge', `${fn} requires judges[${i}] to be {id: string, model: string}, got ${show(j)}`);
    }
    if (j.family !== undefined && typeof j.family !== 'string') {
      throw dataError('stats.badJudge', `${fn} requires judges[${i}].family to be a string, got ${show(j.family)}`);
    }
    if (seen.has(j.id)) throw dataError('stats.duplicateId', `${fn} got the judge id ${JSON.stringify(j.id)} twice`);
    seen.add(j.id);
  });
  return judges as Judge[];
}

export function checkSamples(fn: string, samples: unknown): readonly JudgedSample[] {
  if (!Array.isArray(samples)) {
    throw dataError('stats.badShape', `${fn} requires samples to be an array, got ${show(samples)}`);
  }
  const seen = new Set<string>();
  samples.forEach((s, i) => {
    if (s === null || typeof s !== 'object' || typeof s.id !== 'string' || typeof s.subject_model !== 'string') {
      throw dataError(
        'stats.badSample',
        `${fn} requires samples[${i}] to be {id: string, subject_model: string}, got ${show(s)}`,
      );
    }
    if (s.subject_family !== undefined && typeof s.subject_family !== 'string') {
      throw dataError('stats.badSample', `${fn} requires samples[${i}].subject_family to be a string, got ${show(s.subject_family)}`);
    }
    if (seen.has(s.id)) throw dataError('stats.duplicateId', `${fn} got the sample id ${JSON.stringify(s.id)} twice`);
    seen.add(s.id);
  });
  return samples as JudgedSample[];
}

/**
 * Checks a judges x columns matrix; `cell` validates one non-missing entry and returns it.
 * Returns the matrix with undefined normalised to null.
 */
export function checkMatrix<T>(
  fn: string,
  name: string,
  matrix: unknown,
  rows: number,
  cols: number,
  cell: (v: unknown) => v is T,
  expected: string,
): (T | null)[][] {
  if (!Array.isArray(matrix) || matrix.length !== rows) {
    throw dataError(
      'stats.badShape',
      `${fn} requires ${name} to have one row per judge (${rows}), got ${Array.isArray(matrix) ? matrix.length : show(matrix)}`,
    );
  }
  return matrix.map((row: unknown, j: number) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw dataError(
        'stats.badShape',
        `${fn} requires ${name}[${j}] to have one entry per sample (${cols}), got ${Array.isArray(row) ? row.length : show(row)}`,
      );
    }
    return row.map((v: unknown, s: number) => {
      if (v === null || v === undefined) return null;
      if (!cell(v)) throw dataError('stats.badValue', `${fn} requires ${name}[${j}][${s}] to be ${expected} or null, got ${show(v)}`);
      return v;
    });
  });
}

export const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
export const isLabel = (v: unknown): v is Label =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** excluded[j][s]: whether judge j is dropped for sample s under the rule. */
export function exclusionMask(
  fn: string,
  judges: readonly Judge[],
  samples: readonly JudgedSample[],
  excludeBy: ExcludeBy,
): boolean[][] {
  if (excludeBy === 'family') {
    judges.forEach((j, i) => {
      if (j.family === undefined) {
        throw dataError('stats.missingFamily', `${fn} with excludeBy 'family' requires a family for every judge, judges[${i}] (${JSON.stringify(j.id)}) has none`);
      }
    });
    samples.forEach((s, i) => {
      if (s.subject_family === undefined) {
        throw dataError('stats.missingFamily', `${fn} with excludeBy 'family' requires subject_family on every sample, samples[${i}] (${JSON.stringify(s.id)}) has none`);
      }
    });
  }
  return judges.map((j) =>
    samples.map((s) => {
      if (excludeBy === 'none') return false;
      if (j.model === s.subject_model) return true;
      return excludeBy === 'family' && j.family === s.subject_family;
    }),
  );
}

/** Median of a non-empty array (sorted copy; even count -> mean of the two middle values). */
export function medianOf(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const h = v.length >> 1;
  return v.length % 2 === 1 ? v[h] : (v[h - 1] + v[h]) / 2;
}
