#!/usr/bin/python3
"""Generate tests/oracle/bootstrap-extra.json: reference values for Standoff's bootstrap, power
and sampling code that the shared oracle (tests/fixtures/oracle/cases.json) does not cover.

    /usr/bin/python3 tests/oracle/gen_bootstrap_extra.py [--batches 200] [--sections a,b]

Needs Debian's python3-scipy, python3-statsmodels, python3-mpmath, r-base-core + r-cran-boot,
and gcc for the xoshiro128** reference (that section is skipped without gcc). A full run takes
~10 minutes (bca_continuous: 8 x 200 R boot runs); --sections recomputes only the listed
sections and merges them into the existing JSON. The JSON is committed; the tests never run
this script.

Sections (each entry names the tool that produced it in "tool"):
  power          statsmodels NormalIndPower(ratio=0).power (paired z-test on the differences)
                 and TTestPower().power (paired t-test, information only).
  mde            statsmodels NormalIndPower(ratio=0).solve_power(effect_size=None) times sd_diff,
                 and the same root refined with scipy.optimize.brentq (xtol 1e-16) on
                 statsmodels' own power function: solve_power stops at ~1e-6 to 3e-5 relative
                 accuracy.
  bca_continuous R boot 1.3-28: boot(R = 10000) + boot.ci(type = c('perc', 'basic', 'bca'),
                 L = (n - 1) * (mean(jk) - jk)) on continuous data, jk the leave-one-out values
                 (Efron & Tibshirani's acceleration, eq. 14.15; boot's own empinf(type = 'jack')
                 centres at t0 instead of mean(jk), which changes a for the median; that value is
                 kept as acceleration_boot_empinf for information), repeated `batches` times with
                 different resamples. For each interval end the band is mean +- 4 sd over
                 batches (the range a 10,000-resample implementation reaches with probability
                 ~1 - 6e-5, as in the shared oracle), widened to the batches' min and max (the
                 median's bootstrap distribution is discrete, so an end can sit on one order
                 statistic in almost every batch). `acceleration` is
                 sum(L^3) / (6 sum(L^2)^1.5) (deterministic).
  interval_from_replicates
                 R boot.ci (perc, basic, bca with L = empinf(type = 'jack')) on one fixed set of
                 replicates (R = 999, 1000 and 40, stored), so an implementation fed the same
                 replicates must reproduce the intervals exactly.
  clustered_se   statsmodels OLS(y, 1).fit(cov_type='cluster'): CR1 (Stata's correction reduces to
                 C/(C-1) with one regressor) and, with use_correction=False, CR0.
  binom_pmf      mpmath (40 digits); scipy.stats.binom.pmf kept for information.
  xoshiro128ss   Blackman & Vigna's reference C (xoshiro128starstar.c, seeded by splitmix64.c as
                 documented in src/stats/xoshiro128.ts), compiled with gcc.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import scipy
import scipy.stats as st
from r_batches import batch_bands, run_r_batches
import statsmodels
from scipy.optimize import brentq
from statsmodels.stats.power import NormalIndPower, TTestPower

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bootstrap-extra.json")

R_PROGRAM = r"""
args <- commandArgs(TRUE)
x <- scan(args[1], quiet = TRUE)
stat <- args[2]; B <- as.integer(args[3]); batches <- as.integer(args[4])
seed <- as.integer(args[5]); conf <- as.numeric(args[6])
suppressPackageStartupMessages(library(boot))
f <- if (stat == "mean") function(d, i) mean(d[i]) else function(d, i) median(d[i])
set.seed(seed)
# Efron & Tibshirani (1993) eq. 14.15: jackknife values centred at their mean. (boot's own
# empinf(type = "jack") centres them at t0 instead; identical for the mean, not for the median.)
n <- length(x)
jk <- sapply(seq_len(n), function(i) f(x, seq_len(n)[-i]))
L <- (n - 1) * (mean(jk) - jk)
a <- sum(L^3) / (6 * sum(L^2)^1.5)
Lr <- empinf(data = x, statistic = f, type = "jack", stype = "i")
cat("acceleration", format(a, digits = 17), "\n")
cat("acceleration_boot_empinf", format(sum(Lr^3) / (6 * sum(Lr^2)^1.5), digits = 17), "\n")
cat("estimate", format(f(x, seq_along(x)), digits = 17), "\n")
cat("boot_version", as.character(packageVersion("boot")), "\n")
for (k in seq_len(batches)) {
  b <- boot(x, f, R = B)
  ci <- suppressWarnings(boot.ci(b, conf = conf, type = c("perc", "basic", "bca"), L = L))
  cat("batch", k, format(c(ci$percent[4:5], ci$basic[4:5], ci$bca[4:5], sd(b$t[, 1])), digits = 17), "\n")
}
"""

R_INTERVAL_PROGRAM = r"""
args <- commandArgs(TRUE)
x <- scan(args[1], quiet = TRUE)
B <- as.integer(args[2]); seed <- as.integer(args[3]); out <- args[4]
suppressPackageStartupMessages(library(boot))
f <- function(d, i) mean(d[i])
set.seed(seed)
b <- boot(x, f, R = B)
L <- empinf(data = x, statistic = f, type = "jack", stype = "i")
writeLines(format(b$t[, 1], digits = 17), out)
cat("t0", format(b$t0, digits = 17), "\n")
cat("acceleration", format(sum(L^3) / (6 * sum(L^2)^1.5), digits = 17), "\n")
for (conf in c(0.95, 0.9, 0.5)) {
  ci <- suppressWarnings(boot.ci(b, conf = conf, type = c("perc", "basic", "bca"), L = L))
  cat("ci", conf, format(c(ci$percent[4:5], ci$basic[4:5], ci$bca[4:5]), digits = 17), "\n")
}
"""

XOSHIRO_C = r"""
#include <stdio.h>
#include <stdint.h>
static inline uint32_t rotl(const uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
static uint32_t s[4];
static uint32_t next(void) {
  const uint32_t result = rotl(s[1] * 5, 7) * 9;
  const uint32_t t = s[1] << 9;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 11);
  return result;
}
static uint64_t x;
static uint64_t splitmix64(void) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int main(void) {
  uint32_t seeds[4] = {0u, 1u, 42u, 4294967295u};
  for (int q = 0; q < 4; q++) {
    x = seeds[q];
    uint64_t a = splitmix64(), b = splitmix64();
    s[0] = (uint32_t)a; s[1] = (uint32_t)(a >> 32); s[2] = (uint32_t)b; s[3] = (uint32_t)(b >> 32);
    printf("%u", seeds[q]);
    for (int i = 0; i < 8; i++) printf(" %u", next());
    printf("\n");
  }
  return 0;
}
"""


def power_section():
    power, mde = [], []
    nip, ttp = NormalIndPower(), TTestPower()
    for n in (30, 200, 1000):
        for sd in (0.3, 0.7):
            for alpha in (0.05, 0.01):
                for alt in ("two-sided", "larger"):
                    for effect in (0.02, 0.05, 0.15):
                        es = effect / sd
                        power.append({
                            "n": n, "sd_diff": sd, "effect": effect, "alpha": alpha, "alternative": alt,
                            "power": float(nip.power(es, n, alpha, ratio=0, alternative=alt)),
                            "power_ttest": float(ttp.power(es, n, alpha, alternative=alt)),
                            "tool": "statsmodels NormalIndPower(ratio=0).power; power_ttest: TTestPower().power",
                        })
                    for target in (0.5, 0.8, 0.9):
                        es_sm = float(nip.solve_power(effect_size=None, nobs1=n, alpha=alpha, power=target,
                                                      ratio=0, alternative=alt))
                        f = lambda e: nip.power(e, n, alpha, ratio=0, alternative=alt) - target
                        es_exact = brentq(f, 1e-9, 10.0, xtol=1e-16, rtol=1e-15, maxiter=500)
                        mde.append({
                            "n": n, "sd_diff": sd, "alpha": alpha, "power": target, "alternative": alt,
                            "mde_statsmodels": es_sm * sd, "mde": float(es_exact) * sd,
                            "tool": "statsmodels NormalIndPower(ratio=0).solve_power; mde: its power() "
                                    "solved by scipy.optimize.brentq(xtol=1e-16)",
                        })
    return power, mde


def bca_section(batches, resamples):
    out = []
    rng = np.random.default_rng(20251129)
    datasets = [
        ("exp-n25", np.round(rng.exponential(1.0, 25), 4)),
        ("lognormal-n40", np.round(rng.lognormal(0.0, 0.8, 40), 4)),
        ("normal-n16", np.round(rng.normal(10.0, 2.0, 16), 4)),
        ("gamma-n120", np.round(rng.gamma(0.7, 2.0, 120), 4)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        rfile = os.path.join(tmp, "boot.R")
        with open(rfile, "w") as fh:
            fh.write(R_PROGRAM)
        for k, (name, data) in enumerate(datasets):
            dfile = os.path.join(tmp, name + ".txt")
            np.savetxt(dfile, data, fmt="%.4f")
            for stat in ("mean", "median"):
                seed = 7000 + 10 * k + (stat == "median")
                arr, info = run_r_batches([rfile, dfile, stat, str(resamples), str(batches), str(seed), "0.95"])
                mean, band = batch_bands(arr)
                out.append({
                    "id": "bca-%s-%s" % (name, stat), "statistic": stat, "data": [float(v) for v in data],
                    "level": 0.95, "estimate": float(info["estimate"]), "acceleration": float(info["acceleration"]),
                    "acceleration_boot_empinf": float(info["acceleration_boot_empinf"]),
                    "center": {"percentile": [float(mean[0]), float(mean[1])], "basic": [float(mean[2]), float(mean[3])],
                               "bca": [float(mean[4]), float(mean[5])], "se": float(mean[6])},
                    "band": {"percentile": [band(0), band(1)], "basic": [band(2), band(3)],
                             "bca": [band(4), band(5)], "se": band(6)},
                    "batches": batches, "resamples_per_batch": resamples, "r_seed": seed,
                    "tool": "R boot %s: boot.ci(type=c('perc','basic','bca'), L=(n-1)*(mean(jk)-jk)), jk the "
                            "leave-one-out values (Efron & Tibshirani eq. 14.15)" % info["boot_version"],
                })
                print("  %s %s done" % (name, stat), file=sys.stderr)
    return out


def interval_section():
    """R boot.ci on a fixed set of replicates: checks the quantile rule and the BCa formula exactly."""
    rng = np.random.default_rng(77)
    data = np.round(rng.lognormal(0.0, 1.0, 30), 3)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        rfile, dfile, tfile = (os.path.join(tmp, f) for f in ("ci.R", "d.txt", "t.txt"))
        with open(rfile, "w") as fh:
            fh.write(R_INTERVAL_PROGRAM)
        np.savetxt(dfile, data, fmt="%.3f")
        for B, seed in ((999, 11), (1000, 12), (40, 13)):
            proc = subprocess.run(["Rscript", rfile, dfile, str(B), str(seed), tfile],
                                  capture_output=True, text=True, check=True)
            with open(tfile) as fh:
                t = [float(v) for v in fh.read().split()]
            entry = {"id": "interval-R%d" % B, "data": [float(v) for v in data], "replicates": t, "intervals": [],
                     "tool": "R boot 1.3-28 boot.ci(type=c('perc','basic','bca'), L=empinf(type='jack')) on these replicates"}
            for line in proc.stdout.splitlines():
                parts = line.split()
                if parts[0] == "t0":
                    entry["t0"] = float(parts[1])
                elif parts[0] == "acceleration":
                    entry["acceleration"] = float(parts[1])
                elif parts[0] == "ci":
                    v = [float(z) for z in parts[2:]]
                    entry["intervals"].append({"level": float(parts[1]), "percentile": v[0:2], "basic": v[2:4], "bca": v[4:6]})
            out.append(entry)
    return out


def binom_section():
    """Exact binomial probabilities (mpmath, 40 significant digits, p taken as the given double).

    scipy.stats.binom.pmf is kept for information: it is accurate to ~1e-11 relative in the far
    body of Binomial(10^6, p), while R's dbinom (Loader's algorithm) agrees with mpmath to ~1e-13.
    """
    import mpmath as mp
    mp.mp.dps = 40
    rows = []
    for k, n, p in [(3, 10, 0.3), (0, 10, 0.3), (10, 10, 0.3), (1, 1, 0.5), (7, 20, 0.05), (12, 15, 0.97),
                    (500000, 1000000, 0.5), (300123, 1000000, 0.3), (299000, 1000000, 0.3), (5, 1000000, 1e-5),
                    (45000, 100000, 0.4511), (17, 60, 0.25), (0, 100000, 1e-6), (100000, 100000, 0.99999)]:
        exact = mp.binomial(n, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (n - k)
        rows.append({"k": k, "n": n, "p": p, "pmf": float(exact), "pmf_scipy": float(st.binom.pmf(k, n, p)),
                     "tool": "mpmath %s binomial(n, k) p^k (1-p)^(n-k) at 40 digits; pmf_scipy: scipy.stats.binom.pmf"
                             % mp.__version__})
    return rows


def clustered_section():
    """Cluster-robust SEs of a mean from statsmodels OLS on an intercept (unequal cluster sizes).

    OLS(y, 1).fit(cov_type='cluster') applies Stata's correction C/(C-1) * (N-1)/(N-K); with one
    regressor (K = 1) that is exactly C/(C-1), i.e. CR1. use_correction=False gives CR0.
    """
    import statsmodels.api as sm
    rng = np.random.default_rng(4242)
    out = []
    for name, C, kind in (("binary-c40", 40, "binary"), ("cont-c25", 25, "continuous"), ("binary-c7", 7, "binary")):
        sizes = rng.integers(1, 9, C)
        ids, ys = [], []
        for c in range(C):
            p = rng.uniform(0.1, 0.9)
            for _ in range(sizes[c]):
                ids.append("q%02d" % c)
                ys.append(float(rng.random() < p) if kind == "binary" else float(np.round(rng.normal(p, 0.3), 3)))
        y = np.array(ys)
        groups = np.array([int(i[1:]) for i in ids])
        X = np.ones((len(y), 1))
        cr1 = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]
        cr0 = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}).bse[0]
        out.append({"id": "clustered-" + name, "values": ys, "cluster_ids": ids, "mean": float(y.mean()),
                    "se_cr1": float(cr1), "se_cr0": float(cr0),
                    "tool": "statsmodels %s OLS(y, ones).fit(cov_type='cluster', cov_kwds={'groups': ids}) "
                            "(se_cr0: use_correction=False)" % statsmodels.__version__})
    return out


def xoshiro_section():
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        print("  no C compiler: xoshiro128ss section skipped", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "x.c"), os.path.join(tmp, "x")
        with open(src, "w") as fh:
            fh.write(XOSHIRO_C)
        subprocess.run([cc, "-O2", "-o", exe, src], check=True)
        lines = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    rows = []
    for line in lines:
        if line.strip():
            v = [int(t) for t in line.split()]
            rows.append({"seed": v[0], "uint32": v[1:], "tool": "reference C xoshiro128** + splitmix64 (gcc)"})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--sections", default="all",
                    help="comma-separated subset to recompute (power,bca_continuous,interval_from_replicates,"
                         "clustered_se,binom_pmf,xoshiro128ss), merged into the existing JSON")
    args = ap.parse_args()
    r_version = subprocess.run(["Rscript", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout
    want = None if args.sections == "all" else set(args.sections.split(","))
    doc = {}
    if want is not None and os.path.exists(OUT):
        with open(OUT) as fh:
            doc = json.load(fh)
    doc.update({
        "schema": "standoff-bootstrap-extra/1",
        "generator": "tests/oracle/gen_bootstrap_extra.py",
        "environment": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                        "statsmodels": statsmodels.__version__, "R": r_version},
        "band_rule": "mean +- 4 sd over batches of resamples_per_batch resamples, widened to the batch min and max",
    })
    run = lambda name: want is None or name in want
    if run("power"):
        doc["power"], doc["mde"] = power_section()
    if run("bca_continuous"):
        doc["bca_continuous"] = bca_section(args.batches, args.resamples)
    if run("interval_from_replicates"):
        doc["interval_from_replicates"] = interval_section()
    if run("clustered_se"):
        doc["clustered_se"] = clustered_section()
    if run("binom_pmf"):
        doc["binom_pmf"] = binom_section()
    if run("xoshiro128ss"):
        doc["xoshiro128ss"] = xoshiro_section()
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print("wrote %s" % OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
