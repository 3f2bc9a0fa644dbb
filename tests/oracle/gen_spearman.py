#!/usr/bin/python3
"""Reference for spearmanBootstrap (src/stats/spearman-correlation.ts): Spearman's rho by scipy
`spearmanr`, and the percentile bootstrap over pairs simulated with numpy (default_rng, 200,000
resamples, replicates with a constant variable dropped, numpy 'linear' quantiles = R type 7).

    /usr/bin/python3 tests/oracle/gen_spearman.py    # writes tests/oracle/spearman.json
"""
import json
import os

import numpy as np
from scipy.stats import rankdata, spearmanr

B = 200_000
CASES = [
    ("five subjects", [0.81, 0.57, 0.80, 0.9, 0.6], [1.0, 0.42, 0.83, 0.95, 0.5]),
    ("ties", [1, 2, 2, 3, 5, 4, 6], [2, 2, 1, 4, 4, 3, 7]),
]


def rho(x, y):
    if np.all(x == x[0]) or np.all(y == y[0]):
        return None
    return float(np.corrcoef(rankdata(x), rankdata(y))[0, 1])


out = []
for name, x, y in CASES:
    x = np.array(x, float)
    y = np.array(y, float)
    rng = np.random.default_rng(7)
    reps = []
    undef = 0
    for _ in range(B):
        i = rng.integers(0, len(x), len(x))
        r = rho(x[i], y[i])
        if r is None:
            undef += 1
        else:
            reps.append(r)
    reps = np.array(reps)
    out.append({
        "name": name, "x": x.tolist(), "y": y.tolist(),
        "estimate": float(spearmanr(x, y).statistic),
        "lower": float(np.quantile(reps, 0.025)), "upper": float(np.quantile(reps, 0.975)),
        "undefined_share": undef / B, "resamples": B,
        "source": "scipy %s spearmanr; numpy %s bootstrap" % (__import__("scipy").__version__, np.__version__),
    })
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spearman.json")
with open(path, "w") as f:
    json.dump({"cases": out}, f, indent=1)
    f.write("\n")
print(path)
