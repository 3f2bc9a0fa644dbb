#!/usr/bin/python3
"""Reference values for the statistics that ../shared/oracle/cases.json does not cover.

    /usr/bin/python3 tests/oracle/gen_extra_stats.py            # writes tests/oracle/extra-stats.json

Needs Debian's R and Python packages (apt-get install r-base-core python3-scipy
python3-statsmodels python3-nltk). Tests read the committed JSON and need neither.

Every expected value records the tool and call that produced it ("source"):
- Clopper-Pearson one-sided bounds: R binom.test(x, n, alternative = 'less'|'greater', conf.level)
- Wilson: R prop.test(x, n, correct = FALSE|TRUE, alternative, conf.level), cross-checked with
  statsmodels proportion_confint(method='wilson') for the uncorrected two-sided interval. With
  correct = TRUE and x = n/2, R drops the continuity correction (it is capped at |x - n p0|,
  p0 = 0.5); those cases instead evaluate Newcombe (1998) method 4 directly in R.
- Holm and Benjamini-Hochberg: R p.adjust(p, 'holm' | 'BH').
- Cohen's kappa: statsmodels.stats.inter_rater.cohens_kappa(table).kappa, table from
  statsmodels.stats.inter_rater.to_table-like crosstab of the both-rated items.
- Expected calibration error: numpy, direct formula (Guo et al. 2017, eq. 3) with right-closed
  equal-width bins, edges b/B, np.digitize(right=True); no library implements ECE in Debian.
- Krippendorff's alpha conventions: NLTK 3.8 AnnotationTask.alpha().
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy
import statsmodels
import nltk
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import binary_distance, interval_distance
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "extra-stats.json")


def r_eval(lines):
    """Runs R code whose output lines are `key<TAB>number` and returns {key: float|None}."""
    code = "options(warn = -1)\nf <- function(k, v) cat(k, '\\t', sprintf('%.17g', v), '\\n', sep = '')\n" + "\n".join(lines)
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(code + "\n")
    try:
        out = subprocess.run(["Rscript", "--vanilla", fh.name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(fh.name)
    res = {}
    for line in out.splitlines():
        if "\t" not in line:
            continue
        k, v = line.split("\t")
        v = v.strip()
        res[k] = None if v in ("NA", "NaN") else float(v)
    return res


def r_version():
    return subprocess.run(["Rscript", "--vanilla", "-e", "cat(R.version.string)"], check=True, capture_output=True, text=True).stdout


def r_num(x):
    return "NA" if x is None else repr(float(x))


# --------------------------------------------------------------------------- Clopper-Pearson one-sided
CP_CASES = [(0, 1, 0.95), (1, 1, 0.8), (0, 7, 0.9), (3, 20, 0.95), (3, 20, 0.999), (7, 7, 0.95),
            (1, 12, 0.5), (17, 40, 0.8), (99, 100, 0.99), (500, 1000, 0.95), (12, 100000, 0.95)]


def clopper_pearson():
    lines = []
    for i, (x, n, c) in enumerate(CP_CASES):
        lines.append(f"b <- binom.test({x}, {n}, alternative = 'two.sided', conf.level = {c})$conf.int; f('t{i}lo', b[1]); f('t{i}hi', b[2])")
        lines.append(f"b <- binom.test({x}, {n}, alternative = 'less', conf.level = {c})$conf.int; f('u{i}', b[2])")
        lines.append(f"b <- binom.test({x}, {n}, alternative = 'greater', conf.level = {c})$conf.int; f('l{i}', b[1])")
    r = r_eval(lines)
    out = []
    for i, (x, n, c) in enumerate(CP_CASES):
        out.append({
            "id": f"cp-extra-x{x}-n{n}-c{c}",
            "input": {"x": x, "n": n, "level": c},
            "expected": {"two_sided": [r[f"t{i}lo"], r[f"t{i}hi"]], "upper_one_sided": r[f"u{i}"], "lower_one_sided": r[f"l{i}"]},
            "tol": 1e-9,
            "source": {
                "two_sided": f"R: binom.test({x}, {n}, conf.level = {c})$conf.int",
                "upper_one_sided": f"R: binom.test({x}, {n}, alternative = 'less', conf.level = {c})$conf.int[2]",
                "lower_one_sided": f"R: binom.test({x}, {n}, alternative = 'greater', conf.level = {c})$conf.int[1]",
            },
        })
    return out


# --------------------------------------------------------------------------- Wilson
WILSON_CASES = [(0, 1, 0.95), (1, 1, 0.95), (0, 10, 0.95), (10, 10, 0.9), (3, 20, 0.95), (1, 50, 0.99),
                (5, 10, 0.95), (17, 40, 0.8), (250, 500, 0.95), (999, 1000, 0.95), (3275, 5000, 0.99), (1, 3, 0.5)]

NEWCOMBE_R = """
newcombe <- function(x, n, conf.level, alternative) {
  z <- qnorm(if (alternative == 'two.sided') (1 + conf.level)/2 else conf.level)
  p <- x/n; z22n <- z^2/(2*n)
  p.c <- p + 0.5/n
  p.u <- if (p.c >= 1) 1 else (p.c + z22n + z*sqrt(p.c*(1-p.c)/n + z22n/(2*n)))/(1 + 2*z22n)
  p.c <- p - 0.5/n
  p.l <- if (p.c <= 0) 0 else (p.c + z22n - z*sqrt(p.c*(1-p.c)/n + z22n/(2*n)))/(1 + 2*z22n)
  switch(alternative, two.sided = c(max(p.l, 0), min(p.u, 1)), less = c(0, min(p.u, 1)), greater = c(max(p.l, 0), 1))
}
"""


def wilson():
    lines = [NEWCOMBE_R]
    alts = {"two": "two.sided", "upper": "less", "lower": "greater"}
    for i, (x, n, c) in enumerate(WILSON_CASES):
        for cc in (False, True):
            for sided, alt in alts.items():
                k = f"w{i}{int(cc)}{sided}"
                if cc and 2 * x == n:
                    call = f"newcombe({x}, {n}, {c}, '{alt}')"
                else:
                    call = f"prop.test({x}, {n}, correct = {'TRUE' if cc else 'FALSE'}, alternative = '{alt}', conf.level = {c})$conf.int"
                lines.append(f"b <- {call}; f('{k}lo', b[1]); f('{k}hi', b[2])")
    r = r_eval(lines)
    out = []
    for i, (x, n, c) in enumerate(WILSON_CASES):
        for cc in (False, True):
            for sided, alt in alts.items():
                k = f"w{i}{int(cc)}{sided}"
                lo, hi = r[k + "lo"], r[k + "hi"]
                if cc and 2 * x == n:
                    src = f"R: Newcombe (1998) method 4 evaluated directly, newcombe({x}, {n}, {c}, '{alt}') (prop.test drops the correction at x = n/2)"
                else:
                    src = f"R: prop.test({x}, {n}, correct = {'TRUE' if cc else 'FALSE'}, alternative = '{alt}', conf.level = {c})$conf.int"
                case = {
                    "id": f"wilson-x{x}-n{n}-c{c}-{'cc' if cc else 'nocc'}-{sided}",
                    "input": {"x": x, "n": n, "level": c, "continuity": cc, "sided": sided},
                    "expected": [lo, hi],
                    "tol": 1e-9,
                    "source": src,
                }
                if not cc and sided == "two":
                    sm = proportion_confint(x, n, alpha=1 - c, method="wilson")
                    diff = max(abs(sm[0] - lo), abs(sm[1] - hi))
                    assert diff < 1e-9, (case["id"], sm, lo, hi)
                    case["info"] = {"statsmodels": [float(sm[0]), float(sm[1])], "max_abs_diff": diff}
                out.append(case)
    return out


# --------------------------------------------------------------------------- Holm, BH
P_CASES = {
    "four": [0.01, 0.04, 0.03, 0.005],
    "single": [0.03],
    "ties": [0.02, 0.02, 0.02, 0.5, 0.001],
    "with-na": [0.01, None, 0.04, 0.2, None],
    "zeros-ones": [0, 1, 0, 0.5, 1],
    "twenty": [round(v, 6) for v in np.random.RandomState(7).uniform(0, 0.2, 20).tolist()],
    "all-large": [0.6, 0.7, 0.9, 0.95],
    "empty": [],
}


def p_adjust():
    lines = []
    for name, p in P_CASES.items():
        vec = "c(" + ", ".join(r_num(v) for v in p) + ")" if p else "numeric(0)"
        for m in ("holm", "BH"):
            lines.append(f"a <- p.adjust({vec}, '{m}'); for (i in seq_along(a)) f(paste0('{name}|{m}|', i), a[i])")
    r = r_eval(lines)
    out = []
    for name, p in P_CASES.items():
        vec = "c(" + ", ".join(r_num(v) for v in p) + ")" if p else "numeric(0)"
        for m in ("holm", "BH"):
            out.append({
                "id": f"padjust-{m}-{name}",
                "input": {"p": p, "method": m},
                "expected": [r[f"{name}|{m}|{i + 1}"] for i in range(len(p))],
                "tol": 1e-12,
                "source": f"R: p.adjust({vec}, '{m}')",
            })
    return out


# --------------------------------------------------------------------------- Cohen's kappa
def kappa_cases():
    rs = np.random.RandomState(11)
    labels = ["pass", "fail", "unsure"]
    a_rand = [labels[i] for i in rs.choice(3, 60, p=[0.6, 0.3, 0.1])]
    b_rand = [a if rs.uniform() < 0.7 else labels[rs.randint(3)] for a in a_rand]
    for i in rs.choice(60, 8, replace=False):
        (a_rand if i % 2 else b_rand)[i] = None
    cases = {
        "two-by-two": (["y", "y", "n", "n"], ["y", "n", "n", "n"]),
        "perfect": (["a", "b", "c", "a"], ["a", "b", "c", "a"]),
        "worse-than-chance": (["y", "n", "y", "n"], ["n", "y", "n", "y"]),
        "rare-label": (["ok"] * 18 + ["bad", "ok"], ["ok"] * 19 + ["bad"]),
        "random-3-labels-missing": (a_rand, b_rand),
        "numeric-labels": ([1, 2, 3, 1, 2, 3, 1, 1], [1, 2, 2, 1, 3, 3, 1, 2]),
    }
    out = []
    for name, (a, b) in cases.items():
        pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        cats = sorted({x for x, _ in pairs} | {y for _, y in pairs}, key=str)
        idx = {c: i for i, c in enumerate(cats)}
        table = np.zeros((len(cats), len(cats)))
        for x, y in pairs:
            table[idx[x], idx[y]] += 1
        k = float(cohens_kappa(table).kappa)
        out.append({
            "id": f"kappa-{name}",
            "input": {"a": a, "b": b},
            "expected": {"kappa": k, "n": len(pairs)},
            "tol": 1e-12,
            "source": "statsmodels 0.13: statsmodels.stats.inter_rater.cohens_kappa(table).kappa on the both-rated crosstab",
        })
    return out


# --------------------------------------------------------------------------- ECE
def ece_numpy(conf, correct, bins):
    conf = np.asarray(conf, dtype=float)
    correct = np.asarray(correct, dtype=float)
    edges = np.arange(bins + 1) / bins  # b / B exactly as the TypeScript computes them
    # right=True: bin b holds edges[b] < c <= edges[b+1]; c = 0 lands in bin 0.
    which = np.digitize(conf, edges[1:-1], right=True)
    ece = 0.0
    mce = 0.0
    out_bins = []
    n = len(conf)
    for b in range(bins):
        m = which == b
        k = int(m.sum())
        if k:
            mc = float(conf[m].mean())
            acc = float(correct[m].mean())
            ece += k / n * abs(acc - mc)
            mce = max(mce, abs(acc - mc))
            out_bins.append({"count": k, "meanConfidence": mc, "accuracy": acc})
        else:
            out_bins.append({"count": 0, "meanConfidence": None, "accuracy": None})
    return (ece if n else None), (mce if n else None), out_bins


def ece_cases():
    rs = np.random.RandomState(3)
    conf_r = rs.uniform(0, 1, 500).round(4)
    corr_r = (rs.uniform(0, 1, 500) < conf_r ** 1.5).astype(int)
    conf_o = rs.beta(5, 2, 300).round(3)
    corr_o = (rs.uniform(0, 1, 300) < conf_o - 0.15).astype(int)
    cases = {
        "edges-10": ([0.0, 0.1, 0.1, 0.3, 0.7, 0.7, 0.70001, 1.0, 1.0, 0.95], [0, 0, 1, 0, 1, 1, 0, 1, 1, 0], 10),
        "random-500-10": (conf_r.tolist(), corr_r.tolist(), 10),
        "overconfident-300-15": (conf_o.tolist(), corr_o.tolist(), 15),
        "one-bin": ([0.2, 0.4, 0.9], [1, 0, 1], 1),
        "all-in-one-bin-of-5": ([0.81, 0.85, 0.9], [1, 1, 0], 5),
    }
    out = []
    for name, (conf, corr, bins) in cases.items():
        ece, mce, b = ece_numpy(conf, corr, bins)
        out.append({
            "id": f"ece-{name}",
            "input": {"confidences": conf, "correct": corr, "bins": bins},
            "expected": {"ece": ece, "maxCalibrationError": mce, "bins": b},
            "tol": 1e-12,
            "source": "numpy 1.24: direct formula (Guo et al. 2017 eq. 3), edges np.arange(B+1)/B, np.digitize(right=True)",
        })
    return out


# --------------------------------------------------------------------------- Krippendorff conventions (NLTK)
def nltk_alpha(ratings, distance):
    data = [(f"r{r}", f"u{u}", v) for r, row in enumerate(ratings) for u, v in enumerate(row) if v is not None]
    try:
        return float(AnnotationTask(data=data, distance=distance).alpha())
    except ZeroDivisionError:
        return None


def alpha_cases():
    rs = np.random.RandomState(5)
    verdicts = ["ALIGNED", "MISALIGNED", "UNCLEAR"]
    strings = [[verdicts[rs.choice(3, p=[0.7, 0.2, 0.1])] if rs.uniform() > 0.15 else None for _ in range(40)] for _ in range(3)]
    cases = {
        "string-labels-3x40": (strings, "nominal", binary_distance),
        "single-value-no-pairable-unit": ([[4, None], [None, 4]], "nominal", binary_distance),
        "interval-wide-range": ([[0.5, 100.25, 3, None, 7], [0.75, 99, 3.5, 12, None], [None, 101, 2.5, 11, 7]], "interval", interval_distance),
    }
    out = []
    for name, (ratings, level, dist) in cases.items():
        out.append({
            "id": f"alpha-extra-{name}",
            "input": {"ratings": ratings, "level": level},
            "expected": {"alpha": nltk_alpha(ratings, dist)},
            "tol": 1e-9,
            "source": f"NLTK {nltk.__version__}: AnnotationTask(data, distance={dist.__name__}).alpha()",
        })
    return out


def main():
    doc = {
        "schema": "standoff-extra-stats/1",
        "generator": "tests/oracle/gen_extra_stats.py",
        "environment": {
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
            "nltk": nltk.__version__,
            "R": r_version(),
        },
        "clopper_pearson": clopper_pearson(),
        "wilson": wilson(),
        "p_adjust": p_adjust(),
        "cohen_kappa": kappa_cases(),
        "ece": ece_cases(),
        "krippendorff_alpha": alpha_cases(),
    }

    def clean(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    with open(OUT, "w") as fh:
        json.dump(clean(doc), fh, indent=1)
        fh.write("\n")
    counts = {k: len(v) for k, v in doc.items() if isinstance(v, list)}
    print(f"wrote {OUT}: {counts}")


if __name__ == "__main__":
    main()
