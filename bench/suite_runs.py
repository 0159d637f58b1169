"""One suite run for the suite benches: a fresh interpreter, empty kernel caches, a fresh JSONL file.

Shared by :mod:`bench.suite` (1 vs 2 workers, an LPT projection) and :mod:`bench.suite_scaling`
(1, 2, 4, ... workers up to the cores): every run pays the same JIT, so their wall times compare.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

QUICK_ENTRIES = 4

_RUN = """
import json, time
from hybrid.suites.runner import run_suite
from hybrid.suites.suite_file import Suite, load_suite
s = load_suite({suite!r})
s = Suite(s.name, s.entries[:{limit!r}], s.description)
t = time.perf_counter()
run_suite(s, jobs={jobs}, backend={backend!r}, out={out!r})
print(json.dumps({{"wall": time.perf_counter() - t}}))
"""


def add_suite_options(ap: argparse.ArgumentParser, default: str = "discrete") -> None:
    """``--suite NAME_OR_FILE`` (default ``default``) and ``--quick`` (its first entries only)."""
    ap.add_argument("--suite", default=default,
                    help=f"a built-in suite name or a .toml/.json suite file (default {default})")
    ap.add_argument("--quick", action="store_true", help=f"the suite's first {QUICK_ENTRIES} entries only")


def selected(ap: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Any, int | None]:
    """The suite the options name and how many of its entries to run (None: all); a bad suite is a usage error."""
    from hybrid.suites.suite_file import SuiteError, load_suite

    try:
        suite = load_suite(args.suite)
    except SuiteError as e:
        ap.error(str(e))
    return suite, QUICK_ENTRIES if args.quick else None


def run_once(suite: str, limit: int | None, jobs: int, workdir: Path,
             backend: str = "local") -> tuple[float, list[dict[str, Any]]]:
    """One ``run_suite`` on ``backend`` in a fresh interpreter with fresh caches: (wall seconds, rows)."""
    from hybrid.suites.results_log import read_results

    out = workdir / f"jobs{jobs}.jsonl"
    env = {**os.environ, "DPHYBRID_CACHE_DIR": str(workdir / f"cache{jobs}" / "kernels"),
           "NUMBA_CACHE_DIR": str(workdir / f"cache{jobs}" / "numba")}
    code = _RUN.format(suite=suite, limit=limit, jobs=jobs, backend=backend, out=str(out))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"bench: the suite run with {jobs} worker(s) failed (exit code {res.returncode})")
    return json.loads(res.stdout.strip().splitlines()[-1])["wall"], read_results(out)


def entries_ok(rows: list[dict[str, Any]]) -> str:
    """How many rows are ``ok``, e.g. ``27/27``."""
    ok = sum(r["status"] == "ok" for r in rows)
    return f"{ok}/{len(rows)}" + ("" if ok == len(rows) else " (others: error/timeout)")
