"""How the certified search scales with the number of queries n (continuous noise).

For svt1, report_noisy_max1, report_noisy_max3 and numerical_svt at each n: ``search`` with its
default count budgets (a time budget as a safety limit only), in a fresh process each (the
kernel cache warm, so the numba compile is not timed), the wall time, the certified bound, and
what ended the search (the stop rules and budgets named in ``stopped_by`` / ``limits_hit``), and
the proved upper bound the proof stage found (the stop rule ``proved_upper`` ends a search there).
The load average is printed beside the table: timings on a shared machine are noisy, the
bounds are not (counts decide them).

Run: ``python -m bench.scaling [--sizes 10,20,50,100] [--only svt1,...] [--time-budget S] [--out FILE]``.
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

MECHANISMS = ("svt1", "report_noisy_max1", "report_noisy_max3", "numerical_svt")
SIZES = (10, 20, 50, 100)
HEADERS = ["mechanism", "n", "wall s", "certified eps", "proved upper", "true eps", "ended by"]
TRUE = {"svt1": 0.1, "report_noisy_max1": 0.1, "report_noisy_max3": None, "numerical_svt": 0.1}


def _ended_by(result: dict[str, Any]) -> str:
    """The rules that ended the local searches and any budget or time limit hit, briefly."""
    parts = list(dict.fromkeys(result.get("stopped_by") or []))
    for limit in result.get("limits_hit", []):
        for key in ("time budget", "constraints budget", "enclosures budget", "certify_pairs", "tune_steps",
                    "local_steps"):
            if key in limit and key not in parts:
                parts.append(key)
    return ", ".join(parts) or "-"


def run_one(name: str, n: int, time_budget: float) -> list[Any]:
    warm = [sys.executable, "-m", "hybrid.cli", "sample", name, "-p", f"n={n}", "-n", "1000",
            "--input", ",".join(["0"] * n), "--json"]
    subprocess.run(warm, capture_output=True, check=True)  # compiles the kernel into the disk cache, untimed
    cmd = [sys.executable, "-m", "hybrid.cli", "search", name, "-p", f"n={n}", "--json",
           "--time-budget", str(time_budget)]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    r = json.loads(out.stdout)
    true = TRUE[name] if name != "report_noisy_max3" else n * 0.1 / 2
    return [name, n, wall, r["eps_lower"], r.get("eps_upper") if r.get("eps_upper") is not None else "-", true,
            _ended_by(r)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--only", default=",".join(MECHANISMS))
    ap.add_argument("--time-budget", type=float, default=300.0)
    ap.add_argument("--out", help="also write the markdown here")
    ap.add_argument("--quick", action="store_true", help="a smoke run: n = 10 and 20 only")
    args = ap.parse_args()
    if args.quick:
        args.sizes = "10,20"
    rows = []
    load0 = os.getloadavg()[0]
    for name in args.only.split(","):
        for n in map(int, args.sizes.split(",")):
            rows.append(run_one(name, n, args.time_budget))
            print(markdown_table(HEADERS, rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    text = (f"Search scaling with n ({machine()}, load average {load0:.1f} at the start and "
            f"{os.getloadavg()[0]:.1f} at the end; kernel cache warm)\n\n" + markdown_table(HEADERS, rows) + "\n")
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
