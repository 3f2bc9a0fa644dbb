#!/usr/bin/python3
"""Reference values for the `--input` shapes of issue 11 (tests/cli/input-shapes.test.ts).

    npx tsx tests/helpers/natural-csv.ts /tmp/results.csv
    /usr/bin/python3 tests/oracle/gen_input_shapes.py /tmp/results.csv   # writes tests/oracle/input-shapes.json

The CSV is the seeded natural results file (tests/helpers/natural-csv.ts); its SHA-256 is recorded
and the test checks it, so a change of the generator asks for this script to be run again.
Needs Debian's R and Python packages (r-base-core python3-scipy python3-nltk); tests read the
committed JSON and need neither.

Every value records its source:
- Clopper-Pearson: R binom.test(k, n)$conf.int (two-sided, 0.95), counts by pandas-free Python.
- Bootstrap percentile intervals of a mean: scipy.stats.bootstrap(method='percentile',
  n_resamples=200000); checked with a tolerance (Monte Carlo error, ours uses 10000 resamples).
- Standard errors: numpy (ddof=1); paired p-value: scipy.stats.norm.sf.
- Krippendorff's alpha (interval): NLTK 3.8 AnnotationTask(distance=interval_distance).alpha().
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

import numpy as np
import scipy
import scipy.stats as st
import nltk
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import interval_distance

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "input-shapes.json")


def r_binom(pairs):
    """R binom.test conf.int for each (k, n)."""
    code = "options(digits = 17)\n" + "\n".join(
        f"ci <- binom.test({k}, {n})$conf.int; cat(sprintf('%.17g %.17g\\n', ci[1], ci[2]))" for k, n in pairs
    )
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(code + "\n")
    try:
        out = subprocess.run(["Rscript", "--vanilla", fh.name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(fh.name)
    return [[float(x) for x in line.split()] for line in out.strip().split("\n")]


def boot_ci(data, paired_b=None):
    rng = np.random.default_rng(20261129)
    if paired_b is None:
        res = st.bootstrap((np.asarray(data, float),), np.mean, method="percentile", n_resamples=200000, random_state=rng)
    else:
        d = np.asarray(data, float) - np.asarray(paired_b, float)
        res = st.bootstrap((d,), np.mean, method="percentile", n_resamples=200000, random_state=rng)
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def main(path):
    raw = open(path, "rb").read()
    rows = list(csv.DictReader(open(path, newline="")))
    out = {"csv_sha256": hashlib.sha256(raw).hexdigest(), "tools": {"scipy": scipy.__version__, "numpy": np.__version__, "nltk": nltk.__version__}}

    # ci exact --value correct --by model
    by = defaultdict(list)
    for r in rows:
        by[r["model"]].append(int(r["correct"]))
    models = sorted(by)
    cis = r_binom([(sum(by[m]), len(by[m])) for m in models])
    out["exact_by_model"] = {m: {"successes": sum(by[m]), "trials": len(by[m]), "ci": ci, "source": f"R binom.test({sum(by[m])}, {len(by[m])})"} for m, ci in zip(models, cis)}

    # --missing drop: the correct cell of every 97th data row blanked (natural-csv.ts withMissingCorrect)
    kept = defaultdict(list)
    for i, r in enumerate(rows):
        if i % 97 != 0:
            kept[r["model"]].append(int(r["correct"]))
    cis = r_binom([(sum(kept[m]), len(kept[m])) for m in models])
    out["exact_missing_drop"] = {m: {"successes": sum(kept[m]), "trials": len(kept[m]), "ci": ci} for m, ci in zip(models, cis)}
    out["missing_dropped"] = sum(1 for i in range(len(rows)) if i % 97 == 0)

    # ci bootstrap --value quality --by model
    q = defaultdict(list)
    for r in rows:
        q[r["model"]].append(float(r["quality"]))
    out["bootstrap_by_model"] = {
        m: {"n": len(q[m]), "mean": float(np.mean(q[m])), "se_ddof1": float(np.std(q[m], ddof=1) / np.sqrt(len(q[m]))), "percentile": boot_ci(q[m])} for m in models
    }

    # ci paired --item sample_id,epoch --arm model --value correct --a acme-large --b acme-small [--by epoch]
    def paired(sel):
        a = {(r["sample_id"], r["epoch"]): float(r["correct"]) for r in rows if r["model"] == "acme-large" and sel(r)}
        b = {(r["sample_id"], r["epoch"]): float(r["correct"]) for r in rows if r["model"] == "acme-small" and sel(r)}
        keys = sorted(set(a) & set(b))
        xa = np.array([a[k] for k in keys])
        xb = np.array([b[k] for k in keys])
        d = xa - xb
        se = float(np.std(d, ddof=1) / np.sqrt(len(d)))
        return {
            "n": len(keys),
            "mean_diff": float(d.mean()),
            "se_paired": se,
            "p_value": float(2 * st.norm.sf(abs(d.mean()) / se)),
            "percentile": boot_ci(xa, xb),
        }

    out["paired"] = paired(lambda r: True)
    out["paired_by_epoch"] = {e: paired(lambda r, e=e: r["epoch"] == e) for e in ["1", "2"]}

    # agreement --raters judge_a,judge_b,judge_c --unit sample_id,epoch,model --measure interval
    data = []
    for r in rows:
        unit = f"{r['sample_id']}/{r['epoch']}/{r['model']}"
        for j in ["judge_a", "judge_b", "judge_c"]:
            if r[j] != "":
                data.append((j, unit, float(r[j])))
    out["alpha_interval"] = {"alpha": AnnotationTask(data=data, distance=interval_distance).alpha(), "source": "nltk AnnotationTask(distance=interval_distance).alpha()"}
    json.dump(out, open(OUT, "w"), indent=1)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
