"""Time budgets benchmark: ``python -m bench.budgets [--quick]``.

How far past its ``--time-budget`` a command stopped by it ends (the documented limit is the
budget + 20 %).  Each command runs as ``python -m hybrid.cli ...`` in a fresh process, so the
wall time includes start-up, as the budget does (it counts from the process's start).  The
tests check what such a command says (status 3, one line); the wall-clock overrun is measured
here, not asserted in tests, since a loaded machine stretches any clock.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from bench.common import markdown_table

SLACK = 1.2
COMMANDS = {  # name: (argv, budget seconds); each takes far longer than its budget unstopped
    "continuous sweep": (["verify", "svt1", "-p", "n=8", "--input-range", "0..1"], 4.0),
    "bit-blasting": (["search", "noisy_max_geom", "-p", "m=30"], 5.0),
    "pufferfish lengths": (["pufferfish", "geometric_dp", "--c", "2", "--k", "100000"], 4.0),
    "exact sweep": (["verify", "rr", "-p", "n=12", "--backend", "enumerate", "--json"], 5.0),
    "one large law": (["verify", "rr", "-p", "n=22", "--backend", "enumerate"], 4.0),
    "z3 on pufferfish": (["pufferfish", "noisy_max_independent", "--eps", "0.7"], 5.0),
}


def run(argv: list[str], budget: float) -> tuple[float, int]:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hybrid.cli", *argv, "--time-budget", str(budget)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, done.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first two commands only")
    args = ap.parse_args(argv)
    names = list(COMMANDS)[:2] if args.quick else list(COMMANDS)
    rows = []
    for name in names:
        cmd, budget = COMMANDS[name]
        seconds, code = run(cmd, budget)
        rows.append([name, " ".join(cmd), budget, round(seconds, 2), round(seconds / budget, 2), code,
                     "yes" if seconds <= budget * SLACK else "NO"])
    print("## budgets\n")
    print(markdown_table(["command", "argv", "budget s", "wall s", "wall / budget", "exit", "within +20 %"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
