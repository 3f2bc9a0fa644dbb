#!/usr/bin/python3
"""Generate tests/oracle/clustered-paired.json: reference values for Standoff's paired comparisons
when pairs repeat within clusters (every epoch of a scenario is a pair): the paired cluster
bootstrap, the clustered paired standard error, and the z-test p-value and minimum detectable
effect computed from that SE.

    /usr/bin/python3 tests/oracle/gen_clustered_paired.py [--batches 100] [--resamples 10000]

Needs Debian's python3-numpy, python3-scipy, python3-statsmodels, r-base-core and r-cran-boot. A
run takes about a minute. The JSON is committed; the tests never run this script.

For each dataset (a, b: two subjects' scores on the same pairs; cluster_ids: the scenario of each
pair), with d = a - b:
  se_cr1, se_cr0   statsmodels OLS(d, ones).fit(cov_type='cluster', cov_kwds={'groups': g})
                   (one regressor: Stata's correction is exactly C/(C-1), i.e. CR1;
                   use_correction=False gives CR0).
  se_independent   numpy: sd(d, ddof=1) / sqrt(n), the paired SE that ignores the clusters.
  z, p             scipy: d_bar / se_cr1 and 2 * scipy.stats.norm.sf(|z|).
  mde              the smallest effect the two-sided alpha = 0.05 z-test detects with power 0.8 at
                   SE se_cr1: statsmodels NormalIndPower().power(es, nobs1=1, alpha, ratio=0)
                   solved for es by scipy.optimize.brentq(xtol=1e-16), times se_cr1 (statsmodels'
                   own solve_power stops at ~1e-6 relative accuracy; kept as mde_statsmodels).
  percentile, bca  R boot: boot() over the clusters (data: per-cluster sum of d and number of pairs;
                   statistic sum(s[i]) / sum(n[i]), the ratio estimator), boot.ci(type=c('perc',
                   'bca'), L = (C - 1) * (mean(jk) - jk)) with jk the leave-one-cluster-out
                   estimates (Efron & Tibshirani eq. 14.15). Bootstrap intervals are random: each
                   end holds a band, mean +- 4 sd over `batches` runs of `resamples` resamples,
                   widened to the batch min and max (an implementation drawing 10,000 resamples
                   lands inside with probability ~1 - 6e-5).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
import scipy
import scipy.stats as st
from r_batches import batch_bands, run_r_batches
import statsmodels
import statsmodels.api as sm
from scipy.optimize import brentq
from statsmodels.stats.power import NormalIndPower

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "clustered-paired.json")

R_PROGRAM = r"""
args <- commandArgs(TRUE)
dat <- read.table(args[1], header = TRUE)
B <- as.integer(args[2]); batches <- as.integer(args[3]); seed <- as.integer(args[4]); conf <- as.numeric(args[5])
suppressPackageStartupMessages(library(boot))
f <- function(d, i) sum(d$s[i]) / sum(d$n[i])
C <- nrow(dat)
jk <- sapply(seq_len(C), function(i) f(dat, seq_len(C)[-i]))
L <- (C - 1) * (mean(jk) - jk)
cat("estimate", format(f(dat, seq_len(C)), digits = 17), "\n")
cat("acceleration", format(sum(L^3) / (6 * sum(L^2)^1.5), digits = 17), "\n")
cat("boot_version", as.character(packageVersion("boot")), "\n")
set.seed(seed)
for (k in seq_len(batches)) {
  b <- boot(dat, f, R = B)
  ci <- suppressWarnings(boot.ci(b, conf = conf, type = c("perc", "bca"), L = L))
  cat("batch", k, format(c(ci$percent[4:5], ci$bca[4:5], sd(b$t[, 1])), digits = 17), "\n")
}
"""


def datasets():
    rng = np.random.default_rng(20261129)
    out = []

    def binary(name, clusters, sizes, pa, pb, shared):
        ids, a, b = [], [], []
        for c in range(clusters):
            # A scenario-level difficulty shared by both subjects (the reason pairs correlate).
            h = rng.uniform(-shared, shared)
            for _ in range(sizes[c]):
                ids.append("s%02d" % c)
                a.append(float(rng.random() < min(1, max(0, pa + h))))
                b.append(float(rng.random() < min(1, max(0, pb + h))))
        out.append((name, ids, a, b))

    # 18 scenarios x 5 epochs of 0/1 outcomes, like the demo run's evidence column.
    binary("binary-18x5", 18, [5] * 18, 0.7, 0.45, 0.3)
    # 12 non-ambiguous scenarios x 5 epochs (policy action), subjects close together.
    binary("binary-12x5-close", 12, [5] * 12, 0.6, 0.55, 0.35)
    # Unequal cluster sizes (epochs that errored are missing).
    binary("binary-unequal-c15", 15, list(rng.integers(1, 7, 15)), 0.5, 0.3, 0.25)
    # One pair per cluster: the clustered SE (CR1) is the ordinary paired SE.
    binary("binary-30x1", 30, [1] * 30, 0.6, 0.4, 0.2)
    # Continuous scores (judge medians with halves, rubric points) in 15 clusters of 3.
    ids, a, b = [], [], []
    for c in range(15):
        h = rng.normal(0, 0.2)
        for _ in range(3):
            ids.append("q%02d" % c)
            a.append(float(np.round(np.clip(0.6 + h + rng.normal(0, 0.15), 0, 1), 2)))
            b.append(float(np.round(np.clip(0.5 + h + rng.normal(0, 0.15), 0, 1), 2)))
    out.append(("continuous-15x3", ids, a, b))
    return out


def analytic(ids, a, b):
    a, b = np.array(a), np.array(b)
    d = a - b
    groups = np.array([int(i[1:]) for i in ids])
    X = np.ones((len(d), 1))
    cr1 = float(sm.OLS(d, X).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0])
    cr0 = float(sm.OLS(d, X).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}).bse[0])
    mean = float(d.mean())
    z = mean / cr1
    nip = NormalIndPower()
    f = lambda e: nip.power(e, 1, 0.05, ratio=0, alternative="two-sided") - 0.8
    es = brentq(f, 1e-9, 20.0, xtol=1e-16, rtol=1e-15, maxiter=500)
    es_sm = float(nip.solve_power(effect_size=None, nobs1=1, alpha=0.05, power=0.8, ratio=0, alternative="two-sided"))
    return {
        "mean_a": float(a.mean()), "mean_b": float(b.mean()), "mean_diff": mean,
        "se_cr1": cr1, "se_cr0": cr0, "se_independent": float(d.std(ddof=1) / np.sqrt(len(d))),
        "z": z, "p": float(2 * st.norm.sf(abs(z))), "mde": float(es) * cr1, "mde_statsmodels": es_sm * cr1,
        "alpha": 0.05, "power": 0.8,
    }


def bootstrap_bands(tmp, rfile, name, ids, a, b, batches, resamples, seed):
    d = np.array(a) - np.array(b)
    order = sorted(set(ids))
    sums = [float(sum(d[i] for i in range(len(ids)) if ids[i] == c)) for c in order]
    sizes = [sum(1 for i in ids if i == c) for c in order]
    dfile = os.path.join(tmp, name + ".txt")
    with open(dfile, "w") as fh:
        fh.write("s n\n")
        for s, n in zip(sums, sizes):
            fh.write("%.17g %d\n" % (s, n))
    arr, info = run_r_batches([rfile, dfile, str(resamples), str(batches), str(seed), "0.95"])
    mean, band = batch_bands(arr)
    return {
        "estimate": float(info["estimate"]), "acceleration": float(info["acceleration"]),
        "center": {"percentile": [float(mean[0]), float(mean[1])], "bca": [float(mean[2]), float(mean[3])], "se": float(mean[4])},
        "band": {"percentile": [band(0), band(1)], "bca": [band(2), band(3)], "se": band(4)},
        "batches": batches, "resamples_per_batch": resamples, "r_seed": seed, "boot_version": info["boot_version"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--resamples", type=int, default=10000)
    args = ap.parse_args()
    r_version = subprocess.run(["Rscript", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        rfile = os.path.join(tmp, "boot.R")
        with open(rfile, "w") as fh:
            fh.write(R_PROGRAM)
        for k, (name, ids, a, b) in enumerate(datasets()):
            boot = bootstrap_bands(tmp, rfile, name, ids, a, b, args.batches, args.resamples, 9100 + k)
            cases.append({
                "id": "paired-cluster-" + name, "a": a, "b": b, "cluster_ids": ids, "level": 0.95,
                **analytic(ids, a, b), "bootstrap": boot,
                "tool": {
                    "se": "statsmodels %s OLS(a - b, ones).fit(cov_type='cluster', cov_kwds={'groups': ids}); "
                          "se_cr0: use_correction=False" % statsmodels.__version__,
                    "p": "scipy %s: 2 * scipy.stats.norm.sf(|mean_diff / se_cr1|)" % scipy.__version__,
                    "mde": "statsmodels NormalIndPower().power(es, nobs1=1, alpha=0.05, ratio=0) = 0.8 solved by "
                           "scipy.optimize.brentq(xtol=1e-16), times se_cr1",
                    "bootstrap": "R boot %s: boot() over clusters, statistic sum(s[i]) / sum(n[i]) (per-cluster sums "
                                 "of a - b and pair counts), boot.ci(type=c('perc','bca'), L = (C-1)*(mean(jk)-jk))"
                                 % boot["boot_version"],
                },
            })
            print("  %s done" % name, file=sys.stderr)
    doc = {
        "schema": "standoff-clustered-paired/1",
        "generator": "tests/oracle/gen_clustered_paired.py",
        "environment": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                        "statsmodels": statsmodels.__version__, "R": r_version},
        "band_rule": "mean +- 4 sd over batches of resamples_per_batch resamples, widened to the batch min and max",
        "cases": cases,
    }
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print("wrote %s" % OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
