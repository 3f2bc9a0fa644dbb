import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';
import { quantile } from './quantile.ts';
import { createRng } from './rng.ts';
import { sampleMultinomialRaw } from './multinomial-sample.ts';

/**
 * One task's data for `bootstrapRanks`: per subject s and cluster c (an item with its epochs),
 * the sum and the count of the subject's observations, subject-major (index s * clusters + c).
 * A subject with no observation in a cluster has count 0 there.
 */
export interface RankTask {
  clusters: number;
  sums: Float64Array;
  counts: Float64Array;
}

export interface SubjectRanks {
  /** Per task: the estimate (mean), its percentile interval, the rank (1 = highest mean, ties averaged) and the rank interval. */
  tasks: { estimate: number; lower: number; upper: number; rank: number; rank_lower: number; rank_upper: number }[];
  /** Mean over tasks of the rank, and of the win rate (HELM: share of the other subjects beaten, ties half), with intervals. */
  mean_rank: number;
  mean_rank_lower: number;
  mean_rank_upper: number;
  win_rate: number;
  win_rate_lower: number;
  win_rate_upper: number;
}

/**
 * Rank intervals by the cluster bootstrap: in each of B resamples every task's clusters (items)
 * are drawn with replacement (the same draw for every subject, so the comparison stays paired),
 * each subject's mean is recomputed, the subjects are ranked (1 = highest, ties share the average
 * rank) and given HELM's win rate (the share of the other subjects with a lower mean, a tie
 * counting half; Liang et al. 2022, "Holistic Evaluation of Language Models", sec. 4.2 "mean win
 * rate"), then the ranks and win rates are averaged over tasks. Intervals are the (1 - level) / 2
 * and (1 + level) / 2 quantiles (R type 7) of the bootstrap distributions.
 *
 * Clusters identical for every subject (common with 0/1 metrics) are merged and their draw counts
 * taken from one multinomial (`sampleMultinomialRaw`), which is the same distribution as drawing
 * the clusters one by one.
 *
 * Source: Hall & Miller (2009), "Using the bootstrap to quantify the authority of an empirical
 * ranking", Annals of Statistics 37(6) (the percentile bootstrap of ranks); the clusters are
 * resampled as in `clusterBootstrap` (Davison & Hinkley 1997, sec. 3.8). A subject with no
 * observation in a resample ranks last there (its mean is not measured).
 *
 * Degenerate cases: fewer than 2 subjects, a task with no cluster, mismatched array lengths, or
 * resamples < 1 throw `dataError`.
 */
export function bootstrapRanks(tasks: RankTask[], subjects: number, o: { resamples: number; seed: number; level: number }): SubjectRanks[] {
  const fn = 'bootstrapRanks';
  if (!(subjects >= 2)) throw dataError('stats.badCount', `${fn} needs at least 2 subjects, got ${show(subjects)}`);
  if (!(Number.isInteger(o.resamples) && o.resamples >= 1)) throw dataError('stats.badCount', `${fn} needs resamples >= 1, got ${show(o.resamples)}`);
  for (const t of tasks) {
    if (!(t.clusters >= 1) || t.sums.length !== subjects * t.clusters || t.counts.length !== subjects * t.clusters) throw dataError('stats.badShape', `${fn}: a task needs clusters >= 1 and subjects x clusters sums and counts`);
  }
  const rng = createRng(o.seed);
  const T = tasks.length;
  const B = o.resamples;
  const means = tasks.map(() => new Float64Array(B * subjects));
  const ranks = tasks.map(() => new Float64Array(B * subjects));
  const meanRank = new Float64Array(B * subjects);
  const winRate = new Float64Array(B * subjects);
  const s = new Float64Array(subjects);
  const n = new Float64Array(subjects);
  const patterns = tasks.map((t) => distinctClusters(t, subjects));
  const draws = patterns.map((p) => (p ? new Float64Array(p.weights.length) : null));
  for (let b = 0; b < B; b++) {
    tasks.forEach((t, k) => {
      s.fill(0);
      n.fill(0);
      const p = patterns[k];
      if (p) {
        // As many draws of C clusters: how often each distinct cluster is drawn is multinomial.
        const d = draws[k]!;
        sampleMultinomialRaw(rng, t.clusters, p.weights, t.clusters, d);
        for (let c = 0; c < d.length; c++) {
          if (d[c] === 0) continue;
          for (let j = 0; j < subjects; j++) {
            s[j] += d[c] * p.sums[j * d.length + c];
            n[j] += d[c] * p.counts[j * d.length + c];
          }
        }
      } else {
        for (let i = 0; i < t.clusters; i++) {
          const c = rng.int(t.clusters);
          for (let j = 0; j < subjects; j++) {
            s[j] += t.sums[j * t.clusters + c];
            n[j] += t.counts[j * t.clusters + c];
          }
        }
      }
      for (let j = 0; j < subjects; j++) means[k][b * subjects + j] = n[j] > 0 ? s[j] / n[j] : NaN;
      rankInto(means[k], ranks[k], b * subjects, subjects, meanRank, winRate, T);
    });
  }
  const point = tasks.map((t) => pointMeans(t, subjects));
  const pointRanks = point.map((m) => {
    const r = new Float64Array(subjects);
    rankInto(m, r, 0, subjects, new Float64Array(subjects), new Float64Array(subjects), 1);
    return r;
  });
  const pointMean = new Float64Array(subjects);
  const pointWin = new Float64Array(subjects);
  point.forEach((m) => rankInto(m, new Float64Array(subjects), 0, subjects, pointMean, pointWin, T));
  const lo = (1 - o.level) / 2;
  const hi = (1 + o.level) / 2;
  const q = (arr: Float64Array, j: number) => {
    const col = new Float64Array(B);
    for (let b = 0; b < B; b++) col[b] = arr[b * subjects + j];
    const finite = col.filter(Number.isFinite);
    return finite.length ? [quantile(finite, lo), quantile(finite, hi)] : [NaN, NaN];
  };
  return Array.from({ length: subjects }, (_, j) => {
    const [mrl, mru] = q(meanRank, j);
    const [wl, wu] = q(winRate, j);
    return {
      tasks: tasks.map((_, k) => {
        const [l, u] = q(means[k], j);
        const [rl, ru] = q(ranks[k], j);
        return { estimate: point[k][j], lower: l, upper: u, rank: pointRanks[k][j], rank_lower: rl, rank_upper: ru };
      }),
      mean_rank: pointMean[j], mean_rank_lower: mrl, mean_rank_upper: mru, win_rate: pointWin[j], win_rate_lower: wl, win_rate_upper: wu,
    };
  });
}

/**
 * Clusters with identical sums and counts for every subject, merged with their multiplicity (0/1
 * metrics have few distinct clusters); null when merging saves little (drawing clusters one by one
 * is then as fast).
 */
function distinctClusters(t: RankTask, S: number): { weights: Float64Array; sums: Float64Array; counts: Float64Array } | null {
  const idx = new Map<string, number>();
  const first: number[] = [];
  const w: number[] = [];
  for (let c = 0; c < t.clusters; c++) {
    let key = '';
    for (let j = 0; j < S; j++) key += `${t.sums[j * t.clusters + c]},${t.counts[j * t.clusters + c]};`;
    const k = idx.get(key);
    if (k === undefined) {
      idx.set(key, first.length);
      first.push(c);
      w.push(1);
    } else w[k]++;
    if (first.length > t.clusters / 4 && first.length > 64) return null;
  }
  const K = first.length;
  const sums = new Float64Array(S * K);
  const counts = new Float64Array(S * K);
  first.forEach((c, k) => {
    for (let j = 0; j < S; j++) {
      sums[j * K + k] = t.sums[j * t.clusters + c];
      counts[j * K + k] = t.counts[j * t.clusters + c];
    }
  });
  return { weights: Float64Array.from(w), sums, counts };
}

function pointMeans(t: RankTask, subjects: number): Float64Array {
  const m = new Float64Array(subjects);
  for (let j = 0; j < subjects; j++) {
    let s = 0;
    let n = 0;
    for (let c = 0; c < t.clusters; c++) {
      s += t.sums[j * t.clusters + c];
      n += t.counts[j * t.clusters + c];
    }
    m[j] = n > 0 ? s / n : NaN;
  }
  return m;
}

/**
 * Ranks means[off .. off + S) into ranks (1 = highest, ties averaged, not measured last), and adds
 * rank / T and win rate / T into the across-task accumulators at the same offset.
 */
function rankInto(means: Float64Array, ranks: Float64Array, off: number, S: number, meanRank: Float64Array, winRate: Float64Array, T: number): void {
  for (let i = 0; i < S; i++) {
    const x = means[off + i];
    let above = 0;
    let ties = 0;
    let below = 0;
    for (let j = 0; j < S; j++) {
      if (j === i) continue;
      const y = means[off + j];
      const xm = Number.isFinite(x);
      const ym = Number.isFinite(y);
      if ((xm && ym && y > x) || (!xm && ym)) above++;
      else if ((xm && ym && y === x) || (!xm && !ym)) ties++;
      else below++;
    }
    const r = 1 + above + ties / 2;
    ranks[off + i] = r;
    meanRank[off + i] += r / T;
    winRate[off + i] += (below + ties / 2) / (S - 1) / T;
  }
}
