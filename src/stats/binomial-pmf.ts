import { dataError } from '../errors.ts';
import { show } from './arg-checks.ts';

/**
 * Binomial probability mass P(X = k) for X ~ Binomial(n, p), accurate to a few ulp even for
 * n in the millions, where the naive `exp(lgamma(...) - ...)` loses ~9 digits to cancellation.
 *
 * Source: Loader, C. (2000), "Fast and accurate computation of binomial probabilities"
 * (the saddle-point form R's `dbinom` uses):
 *   P(X = k) = sqrt(n / (2 pi k (n - k))) * exp(-(stirlerr(n) - stirlerr(k) - stirlerr(n - k))
 *              ... - bd0(k, n p) - bd0(n - k, n q)),
 * with `stirlerr(m) = log(m!) - log(sqrt(2 pi m) (m/e)^m)` (exact table for m <= 15, computed
 * with 60-digit decimal arithmetic; the asymptotic series above) and `bd0(x, np) =
 * x log(x / np) + np - x` evaluated by its series when x is close to np.
 *
 * Degenerate cases: p = 0 gives 1 at k = 0 and 0 elsewhere; p = 1 gives 1 at k = n; k outside
 * [0, n] gives 0; n = 0 gives 1 at k = 0. n and k must be non-negative integers (k may be
 * any integer), p in [0, 1].
 *
 * @example
 * import { binomialPmf } from './binomial-pmf.ts';
 * binomialPmf(3, 10, 0.3);       // 0.26682793199999993 (R's dbinom(3, 10, 0.3) prints the same)
 * binomialPmf(500000, 1e6, 0.5); // 7.978843613317499e-4 (mpmath: 7.9788436133175009e-4)
 */
export function binomialPmf(k: number, n: number, p: number): number {
  if (!Number.isInteger(n) || n < 0) {
    throw dataError('stats.badCount', `binomialPmf requires n to be an integer >= 0, got ${show(n)}`);
  }
  if (!Number.isInteger(k)) {
    throw dataError('stats.badCount', `binomialPmf requires k to be an integer, got ${show(k)}`);
  }
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
    throw dataError('stats.badValue', `binomialPmf requires p to be a number in [0, 1], got ${show(p)}`);
  }
  return binomialPmfRaw(k, n, p, 1 - p);
}

/** Unchecked form; q = 1 - p passed separately so callers keep full precision for p near 1. */
export function binomialPmfRaw(k: number, n: number, p: number, q: number): number {
  if (k < 0 || k > n) return 0;
  if (p === 0) return k === 0 ? 1 : 0;
  if (q === 0) return k === n ? 1 : 0;
  if (k === 0) {
    if (n === 0) return 1;
    const lc = p < 0.1 ? -bd0(n, n * q) - n * p : n * Math.log(q);
    return Math.exp(lc);
  }
  if (k === n) {
    const lc = q < 0.1 ? -bd0(n, n * p) - n * q : n * Math.log(p);
    return Math.exp(lc);
  }
  const lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n * p) - bd0(n - k, n * q);
  const lf = LN_2PI + Math.log(k) + Math.log1p(-k / n);
  return Math.exp(lc - 0.5 * lf);
}

const LN_2PI = 1.8378770664093454835606594728112;

/** stirlerr(m) for m = 0..15: log(m!) - (m + 1/2) log m + m - log(2 pi)/2 (60-digit decimal). */
const STIRLERR_TABLE = [
  0, 8.1061466795327258219670264e-2, 4.1340695955409294093822081e-2, 2.7677925684998339148789293e-2,
  2.0790672103765093111522772e-2, 1.6644691189821192163194865e-2, 1.3876128823070747998745727e-2,
  1.1896709945891770095055724e-2, 1.0411265261972096497478567e-2, 9.2554621827127329177286366e-3,
  8.3305634333628712564693187e-3, 7.5736754879518407949720242e-3, 6.9428401072095298656641527e-3,
  6.4089941880042070684396311e-3, 5.9513701127588477356244160e-3, 5.5547335519628013710386900e-3,
];

function stirlerr(m: number): number {
  if (m <= 15) return STIRLERR_TABLE[m];
  const S0 = 1 / 12;
  const S1 = 1 / 360;
  const S2 = 1 / 1260;
  const S3 = 1 / 1680;
  const S4 = 1 / 1188;
  const mm = m * m;
  if (m > 500) return (S0 - S1 / mm) / m;
  if (m > 80) return (S0 - (S1 - S2 / mm) / mm) / m;
  if (m > 35) return (S0 - (S1 - (S2 - S3 / mm) / mm) / mm) / m;
  return (S0 - (S1 - (S2 - (S3 - S4 / mm) / mm) / mm) / mm) / m;
}

/** Deviance term x log(x / np) + np - x, by its series when |x - np| is small. */
function bd0(x: number, np: number): number {
  if (Math.abs(x - np) < 0.1 * (x + np)) {
    let v = (x - np) / (x + np);
    let s = (x - np) * v;
    if (Math.abs(s) < 2.2250738585072014e-308) return s; // DBL_MIN
    let ej = 2 * x * v;
    v *= v;
    for (let j = 1; j < 1000; j++) {
      ej *= v;
      const s1 = s + ej / (2 * j + 1);
      if (s1 === s) return s1;
      s = s1;
    }
  }
  return x * Math.log(x / np) + np - x;
}
