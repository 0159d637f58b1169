"""Suite scaling: ``python -m bench.suite [--quick] [--suite NAME_OR_FILE]``.

Runs a suite (default: the built-in ``discrete``) through :func:`hybrid.suites.runner.run_suite`
twice on the local backend (a process per entry), with 1 and with 2 workers, each in a
fresh interpreter with empty kernel caches (so both runs pay the same JIT) and into a
fresh temporary JSONL file.  Reported: the wall time of each run, the speed-up, the sum
of the per-entry times (the ``elapsed`` field of each JSONL row), the longest entries,
and the projected wall time on a cluster of k workers: LPT scheduling (longest entry
first, onto the least-loaded worker) of the 1-worker run's per-entry times.  The
projection ignores scheduler overhead and each worker's start-up and JIT; no number of
workers beats the longest entry.

``run_suite`` gives each worker ``cores // workers`` numba threads, so on a 2-core machine
the 1-worker run's entries use 2 threads and the 2-worker run's use 1 each.
``--quick`` runs the suite's first 4 entries only.
"""

from __future__ import annotations

import argparse
import heapq
import tempfile
from pathlib import Path
from typing import Sequence

from bench.common import machine, markdown_table
from bench.suite_runs import add_suite_options, entries_ok, run_once, selected

CLUSTER_SIZES = (2, 4, 8, 16, 64)


def lpt_makespan(times: Sequence[float], workers: int) -> float:
    """The finishing time of LPT scheduling: longest job first, onto the least-loaded worker."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    loads = [0.0] * max(1, min(workers, len(times)))
    for t in sorted(times, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(loads)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.suite", description=__doc__.splitlines()[0])
    add_suite_options(ap)
    args = ap.parse_args(argv)
    suite, limit = selected(ap, args)
    n = len(suite.entries[:limit])
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as d:
        wall1, rows1 = run_once(args.suite, limit, 1, Path(d))
        wall2, rows2 = run_once(args.suite, limit, 2, Path(d))
    times1 = {r["id"]: r["elapsed"] for r in rows1}
    times2 = {r["id"]: r["elapsed"] for r in rows2}
    total1, longest1 = sum(times1.values()), max(times1.values())

    print(f"Suite `{suite.name}`: {n} of {len(suite.entries)} entries, local backend ({machine()})\n")
    print(markdown_table(
        ["workers", "wall s", "sum of entry s", "longest entry s", "speed-up", "entries ok"],
        [[1, f"{wall1:.1f}", f"{total1:.1f}", f"{longest1:.1f}", "1.0x", entries_ok(rows1)],
         [2, f"{wall2:.1f}", f"{sum(times2.values()):.1f}", f"{max(times2.values()):.1f}",
          f"{wall1 / wall2:.2f}x", entries_ok(rows2)]]))
    print("\nLongest entries (by their 1-worker time)\n")
    top = sorted(times1, key=times1.get, reverse=True)[:5]
    print(markdown_table(["entry", "1 worker s", "2 workers s"],
                         [[i, f"{times1[i]:.2f}", f"{times2[i]:.2f}" if i in times2 else "-"] for i in top]))
    print("\nProjected wall time on k workers: LPT scheduling of the 1-worker per-entry times, a projection "
          "that ignores scheduler overhead and each worker's start-up and JIT (k = 2 is measured above); "
          f"the lower bound is max(longest entry, sum / k), and no k beats the longest entry, {longest1:.1f} s\n")
    print(markdown_table(
        ["workers k", "projected wall s", "lower bound s", "speed-up (sum / projected)"],
        [[k, f"{lpt_makespan(list(times1.values()), k):.1f}", f"{max(longest1, total1 / k):.1f}",
          f"{total1 / lpt_makespan(list(times1.values()), k):.1f}x"] for k in CLUSTER_SIZES]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
