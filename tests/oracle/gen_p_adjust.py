#!/usr/bin/python3
"""Reference values for the report's pairwise p-value adjustment within families
(src/report/sections/pairwise.ts adjustWithinFamilies; src/stats/holm.ts, benjamini-hochberg.ts).

    /usr/bin/python3 tests/oracle/gen_p_adjust.py         # writes tests/oracle/p-adjust.json

Needs Debian's R (r-base-core). Tests read the committed JSON and need no R.
Each family is adjusted on its own with R's p.adjust(p, method) ("holm", "BH"); "across" is the
same call over every family's p-values at once, which is what the report must NOT do. The first
three families are the demo report's p-values per metric (Standoff O1 suite, reports/results.json
at commit 967e784); the fourth has a tie, an NA and a p-value of 1.
"""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "p-adjust.json")

FAMILIES = {
    "gathered_evidence": [7.264582411829672e-58, 0.02753189387562961, 6.146940159646618e-105],
    "policy_action": [3.0584797426176624e-08, 0.0555110980978711, 2.0757410317596606e-11],
    "alignment": [0.06950915127634615, 0.24526395026224934, 0.00020275597704324798],
    "quality": [0.04, 0.01, 0.04, None, 1.0, 0.003],
}


def r_vec(xs):
    return "c(" + ", ".join("NA" if x is None else repr(x) for x in xs) + ")"


def r_adjust(ps, method):
    code = f"x <- p.adjust({r_vec(ps)}, method = '{method}'); cat(ifelse(is.na(x), 'NA', sprintf('%.17g', x)), sep = '\\n')"
    out = subprocess.run(["Rscript", "--vanilla", "-e", code], check=True, capture_output=True, text=True).stdout.split()
    return [None if v == "NA" else float(v) for v in out]


def main():
    families = []
    for name, ps in FAMILIES.items():
        families.append({"family": name, "p": ps, "holm": r_adjust(ps, "holm"), "bh": r_adjust(ps, "BH"),
                         "source": f"p.adjust({r_vec(ps)}, method = 'holm' | 'BH')"})
    every = [p for ps in FAMILIES.values() for p in ps]
    version = subprocess.run(["Rscript", "--vanilla", "-e", "cat(R.version.string)"], capture_output=True, text=True).stdout
    json.dump({"generator": "tests/oracle/gen_p_adjust.py", "r": version, "families": families,
               "across": {"p": every, "holm": r_adjust(every, "holm"), "bh": r_adjust(every, "BH")}}, open(OUT, "w"), indent=1)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
