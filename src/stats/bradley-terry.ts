import { dataError } from '../errors.ts';

/** One preference: subjects a and b (indices), and the outcome for a: 1 won, 0 lost, 0.5 tie. */
export interface Preference {
  a: number;
  b: number;
  y: 0 | 0.5 | 1;
}

export interface BradleyTerryFit {
  /** Log-strength of each subject; the reference subject (index `reference`) is 0. */
  coefficients: number[];
  /** Model standard errors from the inverse observed information (glm's), 0 for the reference. */
  se: number[];
  reference: number;
  iterations: number;
  logLikelihood: number;
}

/**
 * Bradley-Terry model of paired preferences: P(i beats j) = 1 / (1 + exp(-(beta_i - beta_j))),
 * fitted by maximum likelihood (Newton-Raphson, which is glm's IRLS for this model) with
 * beta_reference = 0. A tie counts as half a win for each side (the binomial likelihood with
 * y = 0.5, as R `glm(cbind(wins, losses) ~ ., binomial)` fits half-wins).
 *
 * Source: Bradley & Terry (1952), "Rank analysis of incomplete block designs: I", Biometrika
 * 39(3/4); Agresti (2013), "Categorical Data Analysis", 3rd ed., sec. 11.6 (the model as a logit
 * model without intercept, one +1/-1 column per subject). Checked against R
 * `glm(cbind(w, l) ~ X - 1, family = binomial)` (coefficients and SEs) in tests/oracle/.
 *
 * Degenerate cases: fewer than 2 subjects, an index out of range, a = b, or an outcome other than
 * 0, 0.5, 1 throw `dataError`; a subject that wins (or loses) every comparison, or subjects in
 * two groups never compared, have no finite MLE: `dataError('stats.noMle')` names it.
 */
export function bradleyTerry(prefs: readonly Preference[], subjects: number, reference = 0): BradleyTerryFit {
  const fn = 'bradleyTerry';
  if (!(subjects >= 2)) throw dataError('stats.badCount', `${fn} needs at least 2 subjects, got ${subjects}`);
  const S = subjects;
  const w = new Float64Array(S * S); // w[i*S+j]: wins of i over j (ties half)
  prefs.forEach((p, k) => {
    if (!(p.a >= 0 && p.a < S && p.b >= 0 && p.b < S && p.a !== p.b && Number.isInteger(p.a) && Number.isInteger(p.b))) throw dataError('stats.badValue', `${fn}: preference ${k + 1} has subjects ${p.a} and ${p.b}`);
    if (p.y !== 0 && p.y !== 0.5 && p.y !== 1) throw dataError('stats.badValue', `${fn}: preference ${k + 1} has outcome ${p.y} (0, 0.5 or 1)`);
    w[p.a * S + p.b] += p.y;
    w[p.b * S + p.a] += 1 - p.y;
  });
  const free = Array.from({ length: S }, (_, i) => i).filter((i) => i !== reference);
  let beta = new Float64Array(S);
  let it = 0;
  let ll = -Infinity;
  for (; it < 100; it++) {
    const { g, H, l } = derivatives(beta, w, S);
    const step = solve(free.map((i) => free.map((j) => -H[i * S + j])), free.map((i) => g[i]));
    if (!step) throw dataError('stats.noMle', `${fn}: the comparisons do not connect every subject (no finite estimate)`);
    const next = Float64Array.from(beta);
    free.forEach((i, k) => (next[i] += step[k]));
    beta = next;
    const done = Math.abs(l - ll) < 1e-12 * (Math.abs(l) + 0.1);
    ll = l;
    if (done) break;
  }
  if (beta.some((b) => Math.abs(b) > 30)) throw dataError('stats.noMle', `${fn}: subject ${beta.findIndex((b) => Math.abs(b) > 30)} wins or loses every comparison (no finite estimate)`);
  const { H, l } = derivatives(beta, w, S);
  const inv = invert(free.map((i) => free.map((j) => -H[i * S + j])));
  const se = new Array<number>(S).fill(0);
  free.forEach((i, k) => (se[i] = Math.sqrt(inv![k][k])));
  return { coefficients: Array.from(beta), se, reference, iterations: it + 1, logLikelihood: l };
}

function derivatives(beta: Float64Array, w: Float64Array, S: number) {
  const g = new Float64Array(S);
  const H = new Float64Array(S * S);
  let l = 0;
  for (let i = 0; i < S; i++) {
    for (let j = i + 1; j < S; j++) {
      const n = w[i * S + j] + w[j * S + i];
      if (n === 0) continue;
      const p = 1 / (1 + Math.exp(-(beta[i] - beta[j])));
      const r = w[i * S + j] - n * p;
      g[i] += r;
      g[j] -= r;
      const v = n * p * (1 - p);
      H[i * S + i] -= v;
      H[j * S + j] -= v;
      H[i * S + j] += v;
      H[j * S + i] += v;
      l += w[i * S + j] * Math.log(p) + w[j * S + i] * Math.log(1 - p);
    }
  }
  return { g, H, l };
}

/** Solves A x = b by Gaussian elimination with partial pivoting; null when A is singular. */
function solve(A: number[][], b: number[]): number[] | null {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    if (Math.abs(M[p][c]) < 1e-12) return null;
    [M[c], M[p]] = [M[p], M[c]];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r][c] / M[c][c];
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  return M.map((row, i) => row[n] / row[i]);
}

function invert(A: number[][]): number[][] | null {
  const cols = A.map((_, j) => solve(A, A.map((__, i) => (i === j ? 1 : 0))));
  if (cols.some((c) => c === null)) return null;
  return A.map((_, i) => A.map((__, j) => cols[j]![i]));
}
