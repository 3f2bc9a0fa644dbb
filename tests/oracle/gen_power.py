#!/usr/bin/python3
"""Reference values for `standoff plan` (src/stats/two-proportion-power.ts, t-test-power.ts,
noncentral-t-cdf.ts, intraclass-correlation.ts).

    /usr/bin/python3 tests/oracle/gen_power.py            # writes tests/oracle/power.json

Needs Debian's R (r-base-core). Tests read the committed JSON and need no R.
Every case records the R call that produced it ("source"):
- power.prop.test(n, p1, p2, sig.level, power, tol = 1e-12): power at n, n for a power, and p2
  for a power at n (R solves p2 > p1);
- power.t.test(n, delta, sd, sig.level, power, type, tol = 1e-12): the same for two.sample,
  paired and one.sample;
- pt(q, df, ncp): the noncentral t CDF;
- the one-way ANOVA ICC (MSB - MSW) / (MSB + (k0 - 1) MSW) from anova(lm(x ~ factor(g))).
"""
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "power.json")

PROP = [(1000, 0.7, 0.65, 0.05), (200, 0.5, 0.6, 0.05), (50, 0.1, 0.3, 0.01), (5000, 0.92, 0.9, 0.05), (120, 0.35, 0.2, 0.1)]
PROP_N = [(0.7, 0.65, 0.8, 0.05), (0.5, 0.55, 0.9, 0.05), (0.1, 0.2, 0.8, 0.01), (0.95, 0.9, 0.8, 0.05), (0.3, 0.45, 0.95, 0.1)]
PROP_P2 = [(1000, 0.7, 0.8, 0.05), (300, 0.4, 0.9, 0.05), (80, 0.2, 0.8, 0.01)]
T_POW = [(50, 0.5, 1, 0.05, "two.sample"), (20, 3, 12, 0.05, "paired"), (8, 1.2, 1, 0.01, "one.sample"), (400, 0.1, 0.5, 0.05, "two.sample"), (3, 2, 1, 0.05, "paired")]
T_N = [(0.5, 1, 0.8, 0.05, "two.sample"), (3, 12, 0.9, 0.05, "paired"), (0.05, 0.4, 0.8, 0.05, "two.sample"), (1, 1, 0.95, 0.01, "one.sample")]
T_DELTA = [(50, 1, 0.8, 0.05, "two.sample"), (30, 2.5, 0.9, 0.05, "paired")]
PT = [(2, 10, 1), (-1.5, 5, 0.5), (1.97, 198, 2.5), (0.3, 3, -1), (4, 60, 6), (1.5, 2, 0.0), (10, 30, 12)]
ICC = [
    [[1, 1], [0, 0], [1, 0]],
    [[1, 1, 1], [0, 1, 0], [0, 0, 0], [1, 1, 0], [1, 0]],
    [[0.2, 0.4, 0.1], [0.9, 0.8], [0.5, 0.55, 0.6, 0.45], [0.1, 0.3]],
]


def r_eval(lines):
    code = "options(warn = -1)\nf <- function(k, v) cat(k, '\\t', sprintf('%.17g', v), '\\n', sep = '')\n" + "\n".join(lines)
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(code + "\n")
    try:
        out = subprocess.run(["Rscript", "--vanilla", fh.name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(fh.name)
    return {k: float(v) for k, v in (line.split("\t") for line in out.splitlines() if "\t" in line)}


def main():
    lines, cases = [], []
    def add(kind, args, call):
        key = f"c{len(cases)}"
        lines.append(f"f('{key}', {call})")
        cases.append({"kind": kind, "args": args, "source": call, "key": key})
    for n, p1, p2, a in PROP:
        add("prop.power", {"n": n, "p1": p1, "p2": p2, "alpha": a}, f"power.prop.test(n = {n}, p1 = {p1}, p2 = {p2}, sig.level = {a}, tol = 1e-12)$power")
    for p1, p2, pw, a in PROP_N:
        add("prop.n", {"p1": p1, "p2": p2, "power": pw, "alpha": a}, f"power.prop.test(p1 = {p1}, p2 = {p2}, power = {pw}, sig.level = {a}, tol = 1e-12)$n")
    for n, p1, pw, a in PROP_P2:
        add("prop.p2", {"n": n, "p1": p1, "power": pw, "alpha": a}, f"power.prop.test(n = {n}, p1 = {p1}, power = {pw}, sig.level = {a}, tol = 1e-12)$p2")
    for n, d, sd, a, t in T_POW:
        add("t.power", {"n": n, "delta": d, "sd": sd, "alpha": a, "type": t}, f"power.t.test(n = {n}, delta = {d}, sd = {sd}, sig.level = {a}, type = '{t}')$power")
    for d, sd, pw, a, t in T_N:
        add("t.n", {"delta": d, "sd": sd, "power": pw, "alpha": a, "type": t}, f"power.t.test(delta = {d}, sd = {sd}, power = {pw}, sig.level = {a}, type = '{t}', tol = 1e-12)$n")
    for n, sd, pw, a, t in T_DELTA:
        add("t.delta", {"n": n, "sd": sd, "power": pw, "alpha": a, "type": t}, f"power.t.test(n = {n}, sd = {sd}, power = {pw}, sig.level = {a}, type = '{t}', tol = 1e-12)$delta")
    for q, df, ncp in PT:
        add("pt", {"t": q, "df": df, "ncp": ncp}, f"pt({q}, {df}, ncp = {ncp})")
    for groups in ICC:
        xs = [v for g in groups for v in g]
        gs = [i for i, g in enumerate(groups) for _ in g]
        x = "c(" + ", ".join(map(str, xs)) + ")"
        g = "factor(c(" + ", ".join(map(str, gs)) + "))"
        call = (f"local({{ x <- {x}; g <- {g}; a <- anova(lm(x ~ g)); N <- length(x); n <- table(g); k0 <- (N - sum(n^2) / N) / (nlevels(g) - 1); "
                f"(a[1, 3] - a[2, 3]) / (a[1, 3] + (k0 - 1) * a[2, 3]) }})")
        add("icc", {"clusters": groups}, call)
    got = r_eval(lines)
    for c in cases:
        c["expected"] = got[c.pop("key")]
    version = subprocess.run(["Rscript", "--vanilla", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout
    with open(OUT, "w") as fh:
        json.dump({"generator": "tests/oracle/gen_power.py", "r": version, "cases": cases}, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
