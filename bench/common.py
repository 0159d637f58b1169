"""Timing and reporting helpers shared by the benchmarks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Callable, Sequence


def best_time(fn: Callable[[], Any], repeat: int = 3, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of ``repeat`` runs of ``fn`` (seconds of ``clock``, default the wall clock): least
    disturbed by noise.  ``clock=time.thread_time``: the CPU time of this thread, whatever else runs."""
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        fn()
        best = min(best, clock() - t)
    return best


def run_python(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it must print one JSON object last."""
    res = subprocess.run([sys.executable, "-c", code], env={**os.environ, **(env or {})},
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def fmt(v: Any) -> str:
    if isinstance(v, float):
        if v >= 1e5:
            return f"{v:.3g}"
        return f"{v:.3g}" if v < 10 else f"{v:,.1f}"
    return str(v)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    return f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"
