"""Shared by the oracle generators that run R boot in batches (gen_bootstrap_extra.py,
gen_clustered_paired.py, gen_statistic_boot.py); imported from the script's own folder, so each
stays a plain `/usr/bin/python3 tests/oracle/gen_*.py` program.

Their R programs print one `batch <i> <v1> <v2> ...` line per batch of resamples (interval ends,
the replicates' sd) and `<key> <value>` lines (estimate, acceleration, boot_version).
"""
import subprocess

import numpy as np


def run_r_batches(args):
    """Runs `Rscript *args`; returns (the batch values, rows x columns, as a numpy array; the
    other lines as a dict of strings)."""
    proc = subprocess.run(["Rscript", *args], capture_output=True, text=True, check=True)
    rows, info = [], {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "batch":
            rows.append([float(v) for v in parts[2:]])
        else:
            info[parts[0]] = parts[1]
    return np.array(rows), info


def batch_bands(arr):
    """(column means, band): band(i) is column i's mean +- 4 sd over the batches, widened to the
    batches' min and max, as [low, high] floats."""
    mean, sd = arr.mean(axis=0), arr.std(axis=0, ddof=1)
    lo, hi = arr.min(axis=0), arr.max(axis=0)
    return mean, lambda i: [float(min(mean[i] - 4 * sd[i], lo[i])), float(max(mean[i] + 4 * sd[i], hi[i]))]
