"""Path templates at scale: the proved upper bound per catalogue configuration, without and with them.

Each row is one continuous catalogue mechanism with ``n`` queries at ``eps``: the level the
alignment rule proves (checker included, :func:`verifiers.prover.prove.prove`) with the
per-path search only (``before``: path templates switched off) and with path templates
(``after``), and the time of each.  A proof the rule did not find within the time budget
(or the path budget, or checked within it) is ``-``.  Then the three targets of issue 29 at n = 20, 50 and 100.
Timings are one run each on a shared machine: read them as orders of size.

Run: ``python -m bench.templates [--quick] [--time-budget S]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.common import machine, markdown_table
from samplers import catalogue, deadline
from verifiers.prover import alignment
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

MECHANISMS = ("partialsum", "badpartialsum", "smartsum", "badsmartsum", "noisy_hist1", "noisy_hist2",
              "report_noisy_max1", "report_noisy_max2", "report_noisy_max3", "report_noisy_max4", "svt1",
              "svt2", "svt3", "svt4", "svt5", "svt6", "svt34_parallel", "numerical_svt", "prefix_sum")
AT_SCALE = ("report_noisy_max3", "prefix_sum", "svt6")


def _proved(program: Any, templates: bool, budget: float) -> tuple[str, float, int]:
    """The proved level (or '-'), the seconds it took, and the number of paths of the proof."""
    saved = alignment._template
    if not templates:
        alignment._template = lambda program: None
    t = time.perf_counter()
    try:
        found = prove(program, rules=["alignment"], time_budget=budget)
    except deadline.TimeLimitReached:  # the checker ran out of time: no proof within the budget
        found = None
    finally:
        wall = time.perf_counter() - t
        alignment._template = saved
    if isinstance(found, Proof):
        return f"{float(found.eps):.6g}", wall, len(found.evidence["paths"])
    return "-", wall, 0


def table(sizes: tuple[int, ...], budget: float) -> list[list[Any]]:
    rows = []
    for name in MECHANISMS:
        for eps in (0.1, 1.0):
            for n in sizes:
                program = catalogue.get(name).trace(n=n, eps=eps)
                before, tb, _ = _proved(program, False, budget)
                after, ta, paths = _proved(program, True, budget)
                rows.append([name, eps, n, before, f"{tb:.1f}", after, f"{ta:.1f}",
                             "template" if paths == 1 and after != before else ""])
    return rows


def at_scale(sizes: tuple[int, ...], budget: float) -> list[list[Any]]:
    rows = []
    for name in AT_SCALE:
        for n in sizes:
            level, wall, _ = _proved(catalogue.get(name).trace(n=n, eps=0.1), True, budget)
            rows.append([name, n, level, f"{wall:.1f}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 5 only, and the targets at n = 20")
    ap.add_argument("--time-budget", type=float, default=8.0, help="seconds per proof attempt (default 8)")
    args = ap.parse_args()
    sizes = (5,) if args.quick else (5, 20)
    print(f"Proved upper bounds without and with path templates ({machine()}; "
          f"time budget {args.time_budget:g} s per attempt)\n")
    print(markdown_table(["mechanism", "eps", "n", "before", "before s", "after", "after s", "new by"],
                         table(sizes, args.time_budget)))
    print("\nThe targets at scale (eps = 0.1)\n")
    print(markdown_table(["mechanism", "n", "proved", "s"],
                         at_scale((20,) if args.quick else (20, 50, 100), 60.0)))


if __name__ == "__main__":
    main()
