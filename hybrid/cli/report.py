"""``dphybrid report``: a table and a plot from a suite's JSONL results."""

from __future__ import annotations

import argparse

from hybrid.cli.common import add_time_budget, time_limited
from hybrid.suites.plots import plot_path
from hybrid.suites.report import html_report, json_report, markdown, plot
from hybrid.suites.results_log import ResultsFileError, current_rows, read_results


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("report", help="table and plot of suite results")
    p.add_argument("results", metavar="RESULTS",
                   help="JSONL file written by 'dphybrid suite --out' (the last row of each entry counts)")
    p.add_argument("--format", default="md", choices=["md", "html", "json"], help="table format (default md)")
    p.add_argument("--plot", metavar="FILE", help="bar plot of bounds against claimed eps (PNG)")
    add_time_budget(p)
    p.set_defaults(run=time_limited(run))


def run(args: argparse.Namespace) -> int:
    path = None if args.plot is None else plot_path(args.plot)  # checked before anything is printed
    rows = current_rows(read_results(args.results))  # one row per entry, in suite order
    if not rows:
        raise ResultsFileError(f"{args.results} holds no complete result row")
    if path is not None:
        plot(rows, str(path))
    render = {"md": markdown, "html": html_report, "json": json_report}[args.format]
    print(render(rows))
    if path is not None and args.format == "md":
        print(f"plot written to {path}")
    return 0
