"""Composition-rule benchmark: ``python -m bench.composition [--quick] [--repeat N]``.

Proofs of eps-DP for every input (``verifiers.prover.prove`` with the composition rule,
the independent checker included) of randomized response and the truncated-geometric
histogram at growing sizes, against the exhaustive global sweep of the same program by
the BDD backend in this run (where that finishes: ``SWEEP_MAX`` coordinates), and against
Dice's published privacy-bound synthesis times for RR (REFERENCE.md: restricted inputs,
n = 5 0.024 s, 10 0.052 s, 15 1.29 s, 20 53.9 s).  Every proof must come out at the
exact level (rr lam = 1/4: e^eps = 3; histogram_geom a = 1/2: 2); the exit code is 1 if
one does not.  Timings are the best of ``--repeat`` runs, wall clock, seconds, after one
warm-up proof and sweep; tracing the program is not counted (both sides start from it).
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction

from bench.common import best_time, fmt, markdown_table
from samplers import catalogue
from verifiers.backends import get_backend
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

DICE = {5: 0.024, 10: 0.052, 15: 1.29, 20: 53.9}  # RR privacy bound synthesis, restricted inputs (s)
SWEEP_MAX = 10  # coordinates up to which the exhaustive sweep is timed as the baseline
CASES = [("rr", {"n": n}, Fraction(3)) for n in (5, 10, 15, 20, 1000, 10000)] + [
    ("histogram_geom", {"m": m, "n": 4}, Fraction(2)) for m in (5, 1000)]
QUICK = [("rr", {"n": n}, Fraction(3)) for n in (5, 10, 1000)] + [("histogram_geom", {"m": 5, "n": 4}, Fraction(2))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.composition", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes, one run each")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    rows, wrong = [], []
    prove(catalogue.get("rr").trace(n=2), rules=["composition"])  # warm-up: imports and the backends' first use
    get_backend(catalogue.get("rr").trace(n=2), "bdd").global_epsilon()
    for name, params, level in QUICK if args.quick else CASES:
        program = catalogue.get(name).trace(**params)
        found: list = []
        t_prove = best_time(lambda: found.append(prove(program, rules=["composition"])), repeat)
        p = found[-1]
        ok = isinstance(p, Proof) and p.ratio == level
        if not ok:
            wrong.append(f"{name} {params}")
        size = program.domain.size
        t_sweep = best_time(lambda: get_backend(program, "bdd").global_epsilon(), 1) if size <= SWEEP_MAX else None
        dice = DICE.get(size) if name == "rr" else None
        rows.append([f"{name} {' '.join(f'{k}={v}' for k, v in params.items())}",
                     p.evidence["ratio"] if ok else "NO PROOF", fmt(t_prove),
                     "" if t_sweep is None else f"{fmt(t_sweep)} ({fmt(t_sweep / t_prove)}x)",
                     "" if dice is None else f"{fmt(dice)} ({fmt(dice / t_prove)}x)"])
    print(markdown_table(["program", "proved e^eps", "prove + check s", "exhaustive bdd sweep s (ratio)",
                          "Dice published s (ratio)"], rows))
    if wrong:
        print(f"\nnot proved at the exact level: {', '.join(wrong)}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
