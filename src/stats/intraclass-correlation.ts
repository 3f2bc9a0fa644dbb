/**
 * One-way ANOVA estimate of the intraclass correlation of observations grouped in clusters
 * (epochs of one item):
 *   icc = (MSB - MSW) / (MSB + (k0 - 1) MSW),  k0 = (N - sum n_i^2 / N) / (g - 1),
 * MSB and MSW the between- and within-cluster mean squares, g clusters, N observations.
 *
 * Source: Donner (1986), "A review of inference procedures for the intraclass correlation
 * coefficient in the one-way random effects model", International Statistical Review 54(1),
 * eq. 2.2 (k0 for unequal cluster sizes); as R `ICC::ICCest` and the ANOVA estimator of
 * `irr::icc(model = "oneway")` for balanced data. Checked in tests/stats/power-plan.test.ts.
 *
 * Degenerate cases: fewer than 2 clusters or no cluster with 2 observations (no within-cluster
 * variance) -> null; MSB = MSW = 0 (all values equal) -> null. The estimate can be negative.
 *
 * @example
 * intraclassCorrelation([[1, 1], [0, 0], [1, 0]]); // 0.5 (MSB 1/2, MSW 1/6, k0 2; R: anova(lm(x ~ g)))
 */
export function intraclassCorrelation(clusters: ReadonlyArray<ArrayLike<number>>): number | null {
  const g = clusters.length;
  let N = 0;
  let sumSq = 0;
  let total = 0;
  for (const c of clusters) {
    N += c.length;
    sumSq += c.length * c.length;
    for (let i = 0; i < c.length; i++) total += c[i];
  }
  if (g < 2 || N - g < 1) return null;
  const grand = total / N;
  let ssb = 0;
  let ssw = 0;
  for (const c of clusters) {
    let m = 0;
    for (let i = 0; i < c.length; i++) m += c[i];
    m /= c.length;
    ssb += c.length * (m - grand) ** 2;
    for (let i = 0; i < c.length; i++) ssw += (c[i] - m) ** 2;
  }
  const msb = ssb / (g - 1);
  const msw = ssw / (N - g);
  const k0 = (N - sumSq / N) / (g - 1);
  const den = msb + (k0 - 1) * msw;
  return den > 0 ? (msb - msw) / den : null;
}
