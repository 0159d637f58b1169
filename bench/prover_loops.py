"""CheckDP's running-max and monotone programs: proved at the claim, refuted by search, seconds.

``noisymax`` / ``badnoisymax`` are CheckDP's report noisy max loop (a running max ``bq`` and
its index; the bug releases the value), proved through the loop's normal form (one
``argmax`` / ``max``, :mod:`verifiers.prover.running_max`); ``svt_increasing`` /
``svt_decreasing`` are proved with one alignment per box of the monotone relation.  Each row:
``prove(MECH.trace(n=N), claim)`` (synthesis, z3 and the independent checker, the rewrite's
own check included) and ``search`` with the claim (certified lower bound, default budget).
Timings are one run each on a shared machine: read them as orders of size.

Run: ``python -m bench.prover_loops [--quick]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.common import machine, markdown_table
from bench.prover import at_claim
from hybrid.searcher.search import search
from samplers import catalogue
from verifiers.prover.proof import Proof

TARGETS = ("noisymax", "badnoisymax", "svt_increasing", "svt_decreasing")


def _row(name: str, n: int) -> list[Any]:
    mech = catalogue.get(name)
    claim = mech.claimed_eps()
    found, proving = at_claim(mech.trace(n=n), claim)
    t0 = time.perf_counter()
    result = search(mech, params={"n": n}, claimed_eps=claim)
    verdict = f"proved {float(found.eps):.6g}" if isinstance(found, Proof) else "no proof"
    return [name, n, f"{claim:.4g}", verdict, f"{proving:.1f}", f"{result.eps_lower:.6g}",
            "refuted" if result.refuted else "not refuted", f"{time.perf_counter() - t0:.1f}"]


def rows(quick: bool) -> list[list[Any]]:
    return [_row(name, n) for n in ((5,) if quick else (5, 20)) for name in TARGETS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 5 only")
    args = ap.parse_args()
    print(f"CheckDP's running-max and monotone programs ({machine()}): prove at the claim, then search\n")
    print(markdown_table(["mechanism", "n", "claim", "prove", "prove s", "certified eps >=", "claim",
                          "search s"], rows(args.quick)))


if __name__ == "__main__":
    main()
