#!/usr/bin/python3
"""Independent reference for errorConcentration (src/stats/error-concentration.ts): the
error-concentration statistic of "Reading Right, Acting Wrong" section 5.3 and its permutation
null, simulated with numpy and computed exactly.

    /usr/bin/python3 tests/oracle/gen_concentration.py     # writes tests/oracle/concentration.json

Tests read the committed JSON and need neither numpy nor this script.

For each case (subjects with their facts-right states and facts-right, action-wrong states):
- observed: share of errors on states that at least k subjects fail; states every subject fails;
- null by simulation (numpy.random.default_rng(PCG64) with its own seed, 200,000 permutations:
  each subject's errors drawn with rng.choice(facts_right, e, replace=False)): mean, 2.5% and
  97.5% quantiles (numpy 'linear' = type 7), one-sided p (1 + #{null >= observed}) / (1 + B),
  mean number of states every subject fails;
- null mean exactly: E[on] = sum_s sum_{j in FR_s} (e_s / f_s) P(N_{j,-s} >= k - 1), where
  N_{j,-s} is the Poisson-binomial count of the other subjects that fail j (subject t fails j with
  probability e_t / f_t when j is among its facts-right states, else 0); divided by the fixed
  number of errors. The exact mean of "states every subject fails" is sum_j prod_s P(s fails j).
"""
import json
import os

import numpy as np

B = 200_000


def poisson_binomial_tail(ps, m):
    """P(sum of independent Bernoulli(ps) >= m)."""
    dist = np.zeros(len(ps) + 1)
    dist[0] = 1.0
    for p in ps:
        dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
        dist[0] *= 1 - p
    return float(dist[max(m, 0):].sum())


def share(sets, k, n_subjects):
    count = {}
    for e in sets:
        for j in e:
            count[j] = count.get(j, 0) + 1
    on = sum(1 for e in sets for j in e if count[j] >= k)
    allf = sum(1 for c in count.values() if c == n_subjects)
    return on, allf


def case(name, subjects, k, seed):
    S = len(subjects)
    errors = sum(len(s["errors"]) for s in subjects)
    on, allf = share([s["errors"] for s in subjects], k, S)
    rng = np.random.default_rng(seed)
    null = np.empty(B)
    all_null = np.empty(B)
    for b in range(B):
        sets = [list(rng.choice(s["factsRight"], len(s["errors"]), replace=False)) for s in subjects]
        o, a = share(sets, k, S)
        null[b] = o / errors
        all_null[b] = a
    states = sorted({j for s in subjects for j in s["factsRight"]})
    prob = [{j: (len(s["errors"]) / len(s["factsRight"]) if j in s["factsRight"] else 0.0) for j in states} for s in subjects]
    exp_on = 0.0
    for si, s in enumerate(subjects):
        for j in s["factsRight"]:
            others = [prob[t][j] for t in range(S) if t != si]
            exp_on += prob[si][j] * poisson_binomial_tail(others, k - 1)
    exact_all = sum(float(np.prod([prob[s][j] for s in range(S)])) for j in states)
    return {
        "name": name,
        "subjects": subjects,
        "minSubjects": k,
        "observed": on / errors,
        "onShared": on,
        "errors": errors,
        "statesAllFail": allf,
        "null_simulated": {
            "permutations": B,
            "numpy_seed": seed,
            "mean": float(null.mean()),
            "lower": float(np.quantile(null, 0.025)),
            "upper": float(np.quantile(null, 0.975)),
            "p": float((1 + (null >= on / errors - 1e-12).sum()) / (1 + B)),
            "statesAllFailMean": float(all_null.mean()),
        },
        "null_exact": {"mean": exp_on / errors, "statesAllFailMean": exact_all},
        "source": "numpy %s default_rng simulation and exact Poisson-binomial expectation" % np.__version__,
    }


def main():
    r = np.random.default_rng(2026)
    # Case 1: hand-sized. Two subjects, both fail s1; null: same state with probability 1/2.
    c1 = [{"subject": "a", "factsRight": ["s1", "s2"], "errors": ["s1"]}, {"subject": "b", "factsRight": ["s1", "s2"], "errors": ["s1"]}]
    # Case 2: five subjects over 30 states, errors concentrated on states 0-4 (shared hard states).
    c2 = []
    for i in range(5):
        fr = sorted(r.choice(30, 22, replace=False).tolist() + [0, 1, 2, 3, 4])
        fr = sorted(set(fr))
        hard = [j for j in [0, 1, 2, 3, 4] if r.random() < 0.8]
        easy = [j for j in fr if j >= 5 and r.random() < 0.1]
        c2.append({"subject": "m%d" % i, "factsRight": ["st%02d" % j for j in fr], "errors": ["st%02d" % j for j in hard + easy]})
    out = {"cases": [case("two subjects, one shared error", c1, 2, 11), case("five subjects, shared hard states", c2, 3, 12)]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "concentration.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(path)


if __name__ == "__main__":
    main()
