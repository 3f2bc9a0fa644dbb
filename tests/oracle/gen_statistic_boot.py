#!/usr/bin/python3
"""Generate tests/oracle/statistic-boot.json: reference values for `bootstrapStatistic` and
`ci bootstrap --statistic` (median, trimmed mean, sd, quantile on continuous data), and the
xoshiro128** jump that seeds its blocks.

    /usr/bin/python3 tests/oracle/gen_statistic_boot.py [--batches 40]

Needs Debian's python3-scipy, r-base-core + r-cran-boot, and gcc (the jump section is skipped
without it). ~5 minutes. The JSON is committed; the tests never run this script.

Sections (each entry names the tool that produced each value in "tool"):
  cases    For each data set and statistic:
           - estimate: scipy / numpy (np.median, scipy.stats.trim_mean, np.std(ddof=1),
             np.quantile (linear)) and R (median, mean(trim =), sd, quantile type 7); both kept,
             they agree to 1e-12.
           - acceleration: R, sum(L^3) / (6 sum(L^2)^1.5) with L = (n - 1)(mean(jk) - jk), jk the
             leave-one-out values (Efron & Tibshirani eq. 14.15), deterministic.
           - band: R boot 1.3.28.1 boot(R = 10000) + boot.ci(type = c('perc', 'basic', 'bca'), L = L),
             repeated `batches` times with different resamples; each interval end's band is
             mean +- 4 sd over the batches, widened to their min and max (as
             gen_bootstrap_extra.py); se: sd of the replicates, same rule.
  jump     Blackman & Vigna's reference C (xoshiro128starstar.c: next() and jump()), seeded by
           splitmix64 as src/stats/xoshiro128.ts documents: 4 draws after 0, 1, 2 and 5 jumps.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import tempfile

import numpy as np
import scipy
import scipy.stats as st
from r_batches import batch_bands, run_r_batches

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "statistic-boot.json")

R_PROGRAM = r"""
args <- commandArgs(TRUE)
x <- scan(args[1], quiet = TRUE)
stat <- args[2]; param <- as.numeric(args[3]); B <- as.integer(args[4]); batches <- as.integer(args[5])
seed <- as.integer(args[6]); conf <- as.numeric(args[7])
suppressPackageStartupMessages(library(boot))
f <- switch(stat,
  median = function(d, i) median(d[i]),
  "trimmed-mean" = function(d, i) mean(d[i], trim = param),
  sd = function(d, i) sd(d[i]),
  quantile = function(d, i) unname(quantile(d[i], param, type = 7)))
set.seed(seed)
n <- length(x)
jk <- sapply(seq_len(n), function(i) f(x, seq_len(n)[-i]))
L <- (n - 1) * (mean(jk) - jk)
cat("acceleration", format(sum(L^3) / (6 * sum(L^2)^1.5), digits = 17), "\n")
cat("estimate", format(f(x, seq_along(x)), digits = 17), "\n")
cat("boot_version", as.character(packageVersion("boot")), "\n")
for (k in seq_len(batches)) {
  b <- boot(x, f, R = B)
  ci <- suppressWarnings(boot.ci(b, conf = conf, type = c("perc", "basic", "bca"), L = L))
  cat("batch", k, format(c(ci$percent[4:5], ci$basic[4:5], ci$bca[4:5], sd(b$t[, 1])), digits = 17), "\n")
}
"""

JUMP_C = r"""
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
static void jump(void) {
  static const uint32_t JUMP[] = { 0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b };
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int i = 0; i < 4; i++)
    for (int b = 0; b < 32; b++) {
      if (JUMP[i] & UINT32_C(1) << b) { s0 ^= s[0]; s1 ^= s[1]; s2 ^= s[2]; s3 ^= s[3]; }
      next();
    }
  s[0] = s0; s[1] = s1; s[2] = s2; s[3] = s3;
}
static uint64_t x;
static uint64_t splitmix64(void) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int main(void) {
  uint32_t seeds[3] = {0u, 1u, 20261129u};
  int jumps[4] = {0, 1, 2, 5};
  for (int q = 0; q < 3; q++)
    for (int j = 0; j < 4; j++) {
      x = seeds[q];
      uint64_t a = splitmix64(), b = splitmix64();
      s[0] = (uint32_t)a; s[1] = (uint32_t)(a >> 32); s[2] = (uint32_t)b; s[3] = (uint32_t)(b >> 32);
      for (int k = 0; k < jumps[j]; k++) jump();
      printf("%u %d", seeds[q], jumps[j]);
      for (int i = 0; i < 4; i++) printf(" %u", next());
      printf("\n");
    }
  return 0;
}
"""


def scipy_estimate(stat, param, data):
    if stat == "median":
        return float(np.median(data)), "numpy.median"
    if stat == "trimmed-mean":
        return float(st.trim_mean(data, param)), "scipy.stats.trim_mean"
    if stat == "sd":
        return float(np.std(data, ddof=1)), "numpy.std(ddof=1)"
    return float(np.quantile(data, param)), "numpy.quantile (linear)"


def cases_section(batches, resamples):
    rng = np.random.default_rng(20261201)
    datasets = [
        ("lognormal-n40", np.round(rng.lognormal(0.0, 0.7, 40), 4)),
        ("exp-n75", np.round(rng.exponential(2.0, 75), 4)),
        ("normal-n150", np.round(rng.normal(5.0, 1.5, 150), 4)),
    ]
    stats = [("median", 0.0), ("trimmed-mean", 0.1), ("trimmed-mean", 0.25), ("sd", 0.0), ("quantile", 0.9)]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        rfile = os.path.join(tmp, "boot.R")
        with open(rfile, "w") as fh:
            fh.write(R_PROGRAM)
        for k, (name, data) in enumerate(datasets):
            dfile = os.path.join(tmp, name + ".txt")
            np.savetxt(dfile, data, fmt="%.4f")
            for j, (stat, param) in enumerate(stats):
                seed = 9100 + 10 * k + j
                arr, info = run_r_batches([rfile, dfile, stat, repr(param), str(resamples), str(batches), str(seed), "0.95"])
                mean, band = batch_bands(arr)
                label = stat if stat in ("median", "sd") else "%s:%g" % (stat, param)
                est, est_tool = scipy_estimate(stat, param, data)
                out.append({
                    "id": "%s-%s" % (name, label), "statistic": label, "data": [float(v) for v in data], "level": 0.95,
                    "estimate": est, "estimate_r": float(info["estimate"]),
                    "acceleration": float(info["acceleration"]),
                    "band": {"percentile": [band(0), band(1)], "basic": [band(2), band(3)], "bca": [band(4), band(5)], "se": band(6)},
                    "batches": batches, "resamples_per_batch": resamples,
                    "tool": {"estimate": est_tool, "estimate_r": "R " + stat, "acceleration": "R jackknife, Efron & Tibshirani eq. 14.15",
                             "band": "R boot %s boot() + boot.ci(type = c('perc', 'basic', 'bca'), L = L)" % info["boot_version"]},
                })
                print(out[-1]["id"], flush=True)
    return out


def jump_section():
    gcc = shutil.which("gcc")
    if not gcc:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "jump.c")
        exe = os.path.join(tmp, "jump")
        with open(src, "w") as fh:
            fh.write(JUMP_C)
        subprocess.run([gcc, "-O2", "-o", exe, src], check=True)
        lines = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    out = []
    for line in lines:
        if line.strip():
            p = line.split()
            out.append({"seed": int(p[0]), "jumps": int(p[1]), "draws": [int(v) for v in p[2:]],
                        "tool": "reference C xoshiro128starstar.c next() + jump(), gcc"})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--resamples", type=int, default=10000)
    a = ap.parse_args()
    r_version = subprocess.run(["Rscript", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout.strip()
    doc = {
        "schema": "standoff-statistic-boot/1",
        "generator": "tests/oracle/gen_statistic_boot.py",
        "environment": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__, "R": r_version},
        "band_rule": "mean +- 4 sd over batches of resamples_per_batch resamples, widened to the batch min and max",
        "jump": jump_section(),
        "cases": cases_section(a.batches, a.resamples),
    }
    with open(OUT, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
