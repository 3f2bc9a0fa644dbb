/**
 * The root of an increasing function on [lo, hi] by bisection (to relative width 1e-12), for the
 * sample-size and MDE solvers (`twoProportionPower`, `tTestPower`): f(lo) < 0 <= f(hi), else the
 * bracket is widened upwards up to `maxHi`; null when no root lies below it.
 *
 * Source: the bisection method (Burden & Faires, "Numerical Analysis", sec. 2.1); R's
 * `power.prop.test` and `power.t.test` solve the same equations with `uniroot` (tolerance
 * .Machine$double.eps^0.25), so their n agree with these to ~1e-4.
 */
export function solveIncreasing(f: (x: number) => number, lo: number, hi: number, maxHi = 1e9): number | null {
  while (f(hi) < 0) {
    if (hi >= maxHi) return null;
    lo = hi;
    hi = Math.min(maxHi, hi * 4);
  }
  if (f(lo) >= 0) return lo;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) < 0) lo = mid;
    else hi = mid;
  }
  return hi;
}
