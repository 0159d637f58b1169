"""The search at large n (issue 30's targets): each command in a fresh process, its wall time
beside its target, the certified lower bound, the proved upper bound and the slice searched.

The kernel cache is as the machine has it (a slice's kernel is small: its compile is part of the
time).  The load average is printed: timings on a shared machine are noisy, the bounds are not
(counts decide them).

Run: ``python -m bench.large_n [--quick]`` (``--quick``: noisy_hist1 at n = 1000 only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench.common import machine, markdown_table
from hybrid.formats import lower_str, upper_str

# (mechanism, n, time budget or None for the default, wall target s, certified target: eps_lower at least)
TARGETS: list[tuple[str, int, float | None, float, float]] = [
    ("noisy_hist1", 1000, None, 30, 0.0999),
    ("svt1", 1000, None, 60, 0.099),
    ("report_noisy_max1", 1000, None, 60, 0.099),
    ("noisy_hist1", 100000, 10, 12, 0.0),
]
HEADERS = ["command", "wall s", "target s", "wall / target", "certified eps", "target eps", "proved upper",
           "slice (outputs, inputs)", "met"]


def run_one(name: str, n: int, budget: float | None, target_s: float, target_eps: float) -> list[Any]:
    cmd = [sys.executable, "-m", "hybrid.cli", "search", name, "-p", f"n={n}", "--json"]
    cmd += [] if budget is None else ["--time-budget", str(budget)]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    shown = f"search {name} -p n={n}" + ("" if budget is None else f" --time-budget {budget:g}")
    try:
        r = json.loads(out.stdout)
    except json.JSONDecodeError:
        return [shown, wall, target_s, wall / target_s, "error: " + out.stderr.strip()[-80:], target_eps, "-", "-", "no"]
    lower = r["eps_lower"] if r["certified"] else 0.0
    upper = r.get("eps_upper")
    sl = r.get("slice")
    where = "-" if sl is None else f"{len(sl['outputs'])} of {n}, {len(sl['inputs'])} of {n}"
    met = wall <= target_s and lower >= target_eps and upper is not None and upper <= 0.1
    return [shown, wall, target_s, wall / target_s, lower_str(lower), target_eps,
            "-" if upper is None else upper_str(upper), where, "yes" if met else "no"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="noisy_hist1 at n = 1000 only")
    args = ap.parse_args()
    rows = []
    load0 = os.getloadavg()[0]
    for target in TARGETS[:1] if args.quick else TARGETS:
        rows.append(run_one(*target))
        print(markdown_table(HEADERS, rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"The search at large n ({machine()}, load average {load0:.1f} at the start and "
          f"{os.getloadavg()[0]:.1f} at the end)\n\n" + markdown_table(HEADERS, rows) + "\n")


if __name__ == "__main__":
    main()
