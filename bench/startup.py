"""Start-up benchmark: ``python -m bench.startup [--quick] [--repeat N]``.

How long the ``dphybrid`` command takes before it does any work, and what it imports.
Each command runs as ``python -m hybrid.cli ...`` in a fresh process (best of ``--repeat``
wall-clock runs).  Baseline in the same run: a bare interpreter (``python -c pass``) and
the eager start-up the CLI had before imports were deferred (the testers, the search,
the compiled sampler and the suite runner imported at once), so the ratios stay
meaningful on a loaded machine.  The second table is ``python -X importtime``: each
command's total import time and its three most expensive top-level imports.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from bench.common import markdown_table

COMMANDS = {
    "--help": ["--help"],
    "list": ["list"],
    "argument error": ["search", "no_such_mechanism", "--bogus"],
    "dist rr --input 1": ["dist", "rr", "--input", "1"],
    "verify rr": ["verify", "rr"],
    "search --help": ["search", "--help"],
}
EAGER = ("import hybrid.searcher.search, hybrid.searcher.certify, hybrid.testers.testing, "
         "hybrid.suites.runner, samplers.compile, samplers.gof")
TARGET = {"--help": 0.3, "list": 0.3, "argument error": 0.3, "search --help": 0.3,
          "dist rr --input 1": 1.0, "verify rr": 1.0}  # issue 16's start-up goals, seconds


def wall(argv: list[str], repeat: int) -> float:
    """Fastest of ``repeat`` runs of ``python argv`` (output discarded; any exit status)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
    return best


def import_profile(argv: list[str]) -> tuple[float, list[tuple[str, float]]]:
    """Total import seconds of ``python -X importtime argv`` and its top-level imports, costliest first."""
    res = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True)
    top: list[tuple[str, float]] = []
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith("  "):  # a top-level import: its cumulative time includes its children
            top.append((name.strip(), int(cumulative) / 1e6))
    return sum(s for _, s in top), sorted(top, key=lambda t: -t[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one run per command instead of five")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else args.repeat

    bare = wall(["-c", "pass"], repeat)
    eager = wall(["-c", EAGER], repeat)
    rows = [["bare `python -c pass`", f"{bare:.3f}", "", ""],
            ["eager imports (before deferral)", f"{eager:.3f}", "", ""]]
    missed = []
    for label, cmd in COMMANDS.items():
        s = wall(["-m", "hybrid.cli", *cmd], repeat)
        rows.append([f"`dphybrid {' '.join(cmd)}`", f"{s:.3f}", f"{s / eager:.2f}", f"< {TARGET[label]:g}"])
        if s > TARGET[label]:
            missed.append(label)
    print(f"## Start-up (best of {repeat} runs, seconds)\n")
    print(markdown_table(["command", "wall s", "/ eager imports", "goal s"], rows))
    print()
    if missed:
        print(f"Over the goal on this run: {', '.join(missed)} (the machine may be loaded; compare the ratios).\n")

    print("## `python -X importtime` per command\n")
    prof = []
    for label, cmd in {"eager imports": ["-c", EAGER],
                       **{k: ["-m", "hybrid.cli", *v] for k, v in COMMANDS.items()}}.items():
        total, top = import_profile(cmd)
        costly = ", ".join(f"{name} {s * 1000:.0f} ms" for name, s in top[:3])
        prof.append([label, f"{total * 1000:.0f}", costly])
    print(markdown_table(["command", "imports ms", "costliest top-level imports"], prof))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
