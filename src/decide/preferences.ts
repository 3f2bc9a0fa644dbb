/**
 * `standoff rank --preferences`: Bradley-Terry strengths (`bradleyTerry`, checked against R glm)
 * with percentile intervals and rank intervals from the bootstrap over preferences (rows drawn
 * with replacement; a resample with no finite estimate is skipped and counted).
 */
import { bradleyTerry, createRng, quantile, type Preference } from '../stats/index.ts';
import { StandoffError, dataError } from '../errors.ts';
import type { RankSettings } from './rank.ts';

export interface PreferenceRow {
  subject: string;
  /** Log-strength relative to the reference subject (the first by name), its glm SE and bootstrap interval. */
  strength: number;
  se: number;
  lower: number | null;
  upper: number | null;
  /** Rank by strength (1 = strongest) and its bootstrap interval. */
  rank: number;
  rank_lower: number | null;
  rank_upper: number | null;
  wins: number;
  losses: number;
  ties: number;
}

export interface PreferenceResult {
  file: string;
  model: string;
  reference: string;
  preferences: number;
  level: number;
  seed: number;
  resamples: number;
  /** Resamples without a finite estimate (a subject winning or losing all its comparisons there), left out. */
  resamples_without_estimate: number;
  rows: PreferenceRow[];
}

export function buildPreferenceRanking(rows: { a: string; b: string; y: 0 | 0.5 | 1 }[], s: RankSettings, file: string): PreferenceResult {
  const names = [...new Set(rows.flatMap((r) => [r.a, r.b]))].sort();
  if (names.length < 2) throw dataError('rank.tooFew', `${file}: preferences need at least 2 subjects`);
  const idx = new Map(names.map((n, i) => [n, i]));
  const prefs: Preference[] = rows.map((r) => ({ a: idx.get(r.a)!, b: idx.get(r.b)!, y: r.y }));
  const fit = bradleyTerry(prefs, names.length);
  const rng = createRng(s.seed);
  const strengths: number[][] = names.map(() => []);
  const ranks: number[][] = names.map(() => []);
  let failed = 0;
  for (let b = 0; b < s.resamples; b++) {
    const draw = prefs.map(() => prefs[rng.int(prefs.length)]);
    let f;
    try {
      f = bradleyTerry(draw, names.length);
    } catch (err) {
      if (err instanceof StandoffError && err.kind === 'data') {
        failed++;
        continue;
      }
      throw err;
    }
    const r = rankOf(f.coefficients);
    names.forEach((_, j) => {
      strengths[j].push(f.coefficients[j]);
      ranks[j].push(r[j]);
    });
  }
  const lo = (1 - s.level) / 2;
  const hi = (1 + s.level) / 2;
  const q = (x: number[], p: number) => (x.length ? quantile(x, p) : null);
  const point = rankOf(fit.coefficients);
  const out = names.map((n, j) => {
    const mine = rows.filter((r) => r.a === n || r.b === n);
    const wins = mine.filter((r) => (r.a === n ? r.y === 1 : r.y === 0)).length;
    const ties = mine.filter((r) => r.y === 0.5).length;
    return {
      subject: n, strength: fit.coefficients[j], se: fit.se[j], lower: q(strengths[j], lo), upper: q(strengths[j], hi),
      rank: point[j], rank_lower: q(ranks[j], lo), rank_upper: q(ranks[j], hi), wins, losses: mine.length - wins - ties, ties,
    };
  });
  out.sort((a, b) => b.strength - a.strength || a.subject.localeCompare(b.subject));
  return { file, model: 'Bradley-Terry (ties: half a win each), maximum likelihood as R glm(binomial, logit)', reference: names[0], preferences: rows.length, level: s.level, seed: s.seed, resamples: s.resamples, resamples_without_estimate: failed, rows: out };
}

/** 1 = strongest; ties share the average rank. */
function rankOf(x: number[]): number[] {
  return x.map((v, i) => 1 + x.filter((w, j) => j !== i && w > v).length + x.filter((w, j) => j !== i && w === v).length / 2);
}
