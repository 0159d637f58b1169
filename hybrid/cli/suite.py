"""``dphybrid suite``: run a whole suite in parallel, locally or on a dask cluster."""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_json_flag, emit_json
from hybrid.formats import lower_str
from hybrid.suites.report import markdown
from hybrid.suites.runner import BACKENDS, run_suite
from hybrid.suites.suite_file import load_suite
from samplers.lang.exact import fraction_str


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("suite", help="run a suite of mechanisms in parallel (local processes or dask)")
    p.add_argument("suite", metavar="SUITE",
                   help="discrete, statdp, dpsniper, checkdp, continuous60, or a .toml/.json suite file")
    p.add_argument("--jobs", type=int, default=1,
                   help="parallel entries; a worker with no entry left to start takes the running entries' "
                        "independent tasks (default 1)")
    p.add_argument("--backend", default="local", choices=list(BACKENDS),
                   help="local (a process per entry on this machine) or dask")
    p.add_argument("--scheduler", help="address of a running dask scheduler (with --backend dask)")
    p.add_argument("--out", help="append results to this JSONL file (one line per finished entry; "
                                 "locked while the run writes it)")
    p.add_argument("--resume", action="store_true", help="skip entries already in --out")
    p.add_argument("--retry-failed", action="store_true",
                   help="with --resume: run the entries whose row is an error or a timeout again")
    p.add_argument("--precision", type=argtypes.precision, help="override every entry's precision")
    p.add_argument("--time-budget", type=float, help="override every entry's time budget (seconds)")
    p.add_argument("--delta", type=argtypes.delta,
                   help="claim (eps, delta)-DP: this delta in [0, 1] beside every entry's claimed_eps "
                        "(entries without one claim nothing)")
    p.add_argument("--time-limit", type=float,
                   help="override every entry's hard limit (seconds; default 2 x budget + 30): "
                        "the entry's process is killed and its row says timeout")
    add_json_flag(p)
    p.set_defaults(run=run)


def _bar(total: int, quiet: bool) -> Any:
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True))


def _delta(v: float | Fraction | None) -> float | str | None:
    """A claimed delta as a suite entry holds it: a float, or a rational as exact text."""
    return fraction_str(v) if isinstance(v, Fraction) else v


def run(args: argparse.Namespace) -> int:
    from samplers.errors import ParameterError

    if args.out is not None and not args.out.strip():
        raise ParameterError("--out '' names no file")
    if args.resume and not args.out:
        raise ParameterError("--resume needs --out FILE")
    suite = load_suite(args.suite)
    bar = _bar(len(suite.entries), args.json)
    task = None

    def on_row(row: dict[str, Any]) -> None:
        if bar is not None:
            r = row.get("result") or {}
            done = f"eps >= {lower_str(r['eps_lower'], 4)}" if "eps_lower" in r else row["status"]
            bar.update(task, advance=1, description=f"{row['entry']['mechanism']}: {done}")

    if bar is not None:
        bar.start()
        task = bar.add_task(f"suite {suite.name}", total=len(suite.entries))
    try:
        rows = run_suite(suite, jobs=args.jobs, backend=args.backend, scheduler=args.scheduler, out=args.out,
                         resume=args.resume, retry_failed=args.retry_failed, precision=args.precision,
                         time_budget=args.time_budget, time_limit=args.time_limit, delta=_delta(args.delta),
                         on_row=on_row)
    finally:
        if bar is not None:
            bar.stop()
    if args.json:
        emit_json(rows)
    else:
        print(markdown(rows, f"suite {suite.name}"))
    return 0
