#!/usr/bin/python3
"""Reference values for `standoff rank --preferences` (src/stats/bradley-terry.ts).

    /usr/bin/python3 tests/oracle/gen_bradley_terry.py     # writes tests/oracle/bradley-terry.json

Needs Debian's R (r-base-core) and numpy. Tests read the committed JSON and need neither.
Preferences are drawn with numpy (seeded) from a Bradley-Terry model with ties; R fits
glm(cbind(w, l) ~ X - 1, family = binomial(link = "logit")) with one +1/-1 column per subject
but the reference (the first), a tie counted as half a win for each side. The expected values are
R's coefficients and their standard errors (summary(fit)$coefficients).
"""
import json
import os
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bradley-terry.json")


def draw(seed, strengths, n, tie):
    rng = np.random.default_rng(seed)
    S = len(strengths)
    rows = []
    for _ in range(n):
        a, b = rng.choice(S, 2, replace=False)
        u = rng.random()
        if u < tie:
            y = 0.5
        else:
            p = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
            y = 1.0 if rng.random() < p else 0.0
        rows.append([int(a), int(b), y])
    return rows


def fit_r(rows, S):
    lines = ["options(warn = -1)", f"S <- {S}"]
    lines.append("d <- data.frame(a = c(%s), b = c(%s), y = c(%s))" % tuple(",".join(str(r[i]) for r in rows) for i in range(3)))
    lines += [
        "X <- matrix(0, nrow(d), S); X[cbind(seq_len(nrow(d)), d$a + 1)] <- 1; X[cbind(seq_len(nrow(d)), d$b + 1)] <- -1",
        "X <- X[, -1, drop = FALSE]",
        "fit <- glm(cbind(d$y, 1 - d$y) ~ X - 1, family = binomial(link = 'logit'), control = glm.control(epsilon = 1e-14, maxit = 100))",
        "cf <- summary(fit)$coefficients",
        "for (i in seq_len(nrow(cf))) cat(sprintf('%.17g\\t%.17g\\n', cf[i, 1], cf[i, 2]))",
        "cat(sprintf('ll\\t%.17g\\n', as.numeric(logLik(fit))))",
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        out = subprocess.run(["Rscript", "--vanilla", fh.name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(fh.name)
    coef, se = [0.0], [0.0]
    for line in out.splitlines():
        k, v = line.split("\t")
        if k == "ll":
            continue
        coef.append(float(k))
        se.append(float(v))
    return coef, se


def main():
    cases = []
    for seed, strengths, n, tie in [(1, [0.0, 0.5, 1.0], 300, 0.0), (2, [0.0, -0.3, 0.4, 1.2, 0.8], 800, 0.15), (3, [0.0, 2.0, 1.0, 0.2], 120, 0.1)]:
        rows = draw(seed, strengths, n, tie)
        coef, se = fit_r(rows, len(strengths))
        cases.append({"subjects": len(strengths), "preferences": rows, "coefficients": coef, "se": se,
                      "source": "glm(cbind(y, 1 - y) ~ X - 1, binomial(logit)), X: +1 for a, -1 for b, reference subject 0 dropped"})
    version = subprocess.run(["Rscript", "--vanilla", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout
    with open(OUT, "w") as fh:
        json.dump({"generator": "tests/oracle/gen_bradley_terry.py", "r": version, "cases": cases}, fh)
        fh.write("\n")


if __name__ == "__main__":
    main()
