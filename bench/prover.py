"""Proofs by alignment: proved level, true level and time per target, checker included.

Each row is ``prove(MECH.trace(**params))`` (:mod:`verifiers.prover`): synthesis, z3
conditions and the independent checker, with the rule's own split of the time (the
attempt vs the check).  The buggy mechanisms get no proof at their claims (the reason
is shown).  Timings are one run each on a shared machine: read them as orders of size.

The third table is CheckDP's benchmark (cmla-psu/checkdp ``examples/``, in
:mod:`samplers.catalogue.checkdp` or as aliases) at n = 5 and n = 20: the correct programs
proved at their claim (every rule, 60 s), the buggy ones refuted by ``search`` with their
claim (a certified lower bound above it, 60 s), each timed on its own.

Run: ``python -m bench.prover [--quick]``.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from typing import Any

from bench.common import machine, markdown_table
from hybrid.searcher.search import search
from samplers import catalogue
from verifiers.prover import alignment
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

TARGETS: list[tuple[str, dict[str, Any], float]] = [
    ("laplace", {}, 0.1), ("noisy_hist1", {}, 0.1), ("report_noisy_max1", {}, 0.1),
    ("report_noisy_max2", {}, 0.1), ("svt1", {}, 0.1), ("svt2", {}, 0.1), ("numerical_svt", {}, 0.1),
    ("laplace_parallel", {"eps": 0.005, "k": 20}, 0.1), ("prefix_sum", {"n": 10}, 1.0),
    ("svt4", {"c": 1}, 0.175), ("report_noisy_max3", {}, 0.25),
    ("svt1", {"n": 100}, 0.1), ("noisy_hist1", {"n": 1000}, 0.1), ("report_noisy_max1", {"n": 100}, 0.1),
    ("svt1", {"n": 30, "c": 2}, 0.1),
]
BUGGY = ["noisy_hist2", "report_noisy_max3", "report_noisy_max4", "svt3", "svt4", "svt5", "svt6",
         "svt34_parallel", "prefix_sum"]
QUICK = {"laplace", "svt1", "report_noisy_max1"}


def proved(quick: bool) -> list[list[Any]]:
    rows = []
    for name, params, level in TARGETS:
        if quick and (name not in QUICK or params):
            continue
        program = catalogue.get(name).trace(**params)
        t0 = time.perf_counter()
        found = alignment.attempt(program, None)
        t1 = time.perf_counter()
        problem = alignment.check(program, found) if isinstance(found, Proof) else found.reason
        t2 = time.perf_counter()
        eps = float(found.eps) if isinstance(found, Proof) else float("nan")
        rows.append([name, " ".join(f"{k}={v}" for k, v in params.items()) or "defaults", f"{eps:.6g}", level,
                     abs(eps - level) < 1e-9, problem is None, len(found.evidence["paths"]) if isinstance(found, Proof) else 0,
                     f"{t1 - t0:.1f}", f"{t2 - t1:.1f}"])
    return rows


def refused(quick: bool) -> list[list[Any]]:
    rows = []
    for name in BUGGY[:3] if quick else BUGGY:
        mech = catalogue.get(name)
        claim = mech.claimed_eps()
        t0 = time.perf_counter()
        found = prove(mech.trace(), Fraction(claim), rules=["alignment"], time_budget=60)
        rows.append([name, f"{claim:.4g}", "PROOF (unsound!)" if isinstance(found, Proof) else found[0].reason,
                     f"{time.perf_counter() - t0:.1f}"])
    return rows


# (CheckDP's name, ours, parameters at n = 5 and at n = 20, correct?)
CHECKDP: list[tuple[str, str, dict[str, Any], dict[str, Any], bool]] = [
    ("partialsum", "partialsum", {"n": 5}, {"n": 20}, True),
    ("smartsum", "smartsum", {"n": 5, "T": 4, "M": 2}, {"n": 20, "T": 19, "M": 4}, True),
    ("prefixsum (ShadowDP)", "shadowdp_prefixsum", {"n": 5, "T": 4}, {"n": 20, "T": 19}, True),
    ("sparsevector", "svt1", {"n": 5}, {"n": 20}, True),
    ("numsparsevector", "numerical_svt", {"n": 5}, {"n": 20}, True),
    ("gapsparsevector", "gapsvt", {"n": 5}, {"n": 20}, True),
    ("adaptivesparsevector", "adaptivesvt", {"n": 5}, {"n": 20}, True),
    ("noisymax", "noisymax", {"n": 5}, {"n": 20}, True),
    ("svt_increasing", "svt_increasing", {"n": 5}, {"n": 20}, True),
    ("svt_decreasing", "svt_decreasing", {"n": 5}, {"n": 20}, True),
    ("badpartialsum", "badpartialsum", {"n": 5}, {"n": 20}, False),
    ("badsmartsum", "badsmartsum", {"n": 5, "T": 4, "M": 2}, {"n": 20, "T": 19, "M": 4}, False),
    ("badsparsevector1", "svt5", {"n": 5}, {"n": 20}, False),
    ("badsparsevector2", "svt6", {"n": 5}, {"n": 20}, False),
    ("badsparsevector3", "svt4", {"n": 5}, {"n": 20}, False),
    ("badgapsparsevector", "badgapsvt", {"n": 5}, {"n": 20}, False),
    ("badadaptivesparsevector", "badadaptivesvt", {"n": 5}, {"n": 20}, False),
    ("badnoisymax", "badnoisymax", {"n": 5}, {"n": 20}, False),
]
CHECKDP_QUICK = {"gapsvt", "adaptivesvt", "badgapsvt"}
SECONDS = 60


def checkdp(quick: bool) -> list[list[Any]]:
    """Each program at both sizes: proved at its claim, or refuted above it, and the seconds."""
    rows = []
    for theirs, ours, small, large, correct in CHECKDP:
        if quick and ours not in CHECKDP_QUICK:
            continue
        mech = catalogue.get(ours)
        for params in ([small] if quick else [small, large]):
            claim = mech.claimed_eps(**params)
            t0 = time.perf_counter()
            if correct:
                found = prove(mech.trace(**params), Fraction(claim), time_budget=SECONDS)
                verdict = (f"proved {float(found.eps):.6g} ({found.rule})" if isinstance(found, Proof)
                           else "no proof: " + "; ".join(f"{f.rule}: {f.reason}" for f in found))
                ok = isinstance(found, Proof)
            else:
                r = search(mech, params, claimed_eps=claim, time_budget=SECONDS)
                verdict = (f"certified eps >= {r.eps_lower:.6g} ({'refuted' if r.refuted else 'not refuted'})"
                           if r.certified else f"no certified bound (statistical eps >= {r.eps_lower:.4g})")
                if any("time budget" in limit for limit in r.limits_hit):
                    verdict += f", the {SECONDS} s budget reached"
                ok = bool(r.refuted and r.certified)
            rows.append([theirs, ours, " ".join(f"{k}={v}" for k, v in params.items()), f"{claim:.4g}",
                         "correct" if correct else "buggy", verdict, ok, f"{time.perf_counter() - t0:.1f}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="three small targets and three refusals")
    args = ap.parse_args()
    print(f"Alignment proofs ({machine()}): proved eps against the true level, checker verdict, seconds\n")
    print(markdown_table(["mechanism", "params", "proved eps", "true eps", "equal (1e-9)", "checker confirms",
                          "paths", "prove s", "check s"], proved(args.quick)))
    print("\nNo proof at the claimed eps of the buggy mechanisms (the reason the rule gives)\n")
    print(markdown_table(["mechanism", "claim", "no proof because", "seconds"], refused(args.quick)))
    print(f"\nCheckDP's benchmark: correct programs proved at their claim, buggy ones refuted by a certified "
          f"lower bound above it ({SECONDS} s each)\n")
    print(markdown_table(["CheckDP program", "catalogue", "params", "claim", "kind", "result", "target met",
                          "seconds"], checkdp(args.quick)))


if __name__ == "__main__":
    main()
