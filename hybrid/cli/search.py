"""``dphybrid search``: the main job -- a certified lower bound on epsilon."""

from __future__ import annotations

import argparse
import threading
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_mechanism_args, emit_json, no_result, parse_params, resolve, time_limited
from hybrid.cli.progress import progress_reporter
from hybrid.formats import float_at_most
from hybrid.searcher.budget import Budget
from samplers import deadline
from samplers.errors import ParameterError
from samplers.plain import is_function_spec


def register(subs: argparse._SubParsersAction) -> None:
    p = subs.add_parser("search", help="certified lower bound on epsilon: testing proposes, exact backends certify")
    add_mechanism_args(p)
    p.add_argument("--precision", type=argtypes.precision, default=1e-3,
                   help="width of the certified bracket (default 1e-3)")
    p.add_argument("--claimed-eps", type=argtypes.epsilon, default=None,
                   help="the epsilon the mechanism claims (e.g. 1 or 7/10)")
    p.add_argument("--delta", type=argtypes.delta, default=None,
                   help="with --claimed-eps: the claim is (eps, delta)-DP, delta in [0, 1] (e.g. 1e-5 or 1/1000); "
                        "refuted when the certified lower delta at eps exceeds it, proved when the proved "
                        "delta(eps) is at most it")
    p.add_argument("--seed", type=argtypes.seed, default=0,
                   help="random seed of the testing stages, in [0, 2^64) (default 0)")
    p.add_argument("--backend", default="auto", help="exact backend: auto, enumerate, bdd, smt")
    p.add_argument("--time-budget", type=argtypes.positive, default=Budget.time, metavar="SECONDS",
                   help=f"safety limit on the whole search (default {Budget.time:g}); a stage it stops gives a "
                        "partial result that says so in limits_hit")
    p.add_argument("--samples", type=argtypes.sample_count, default=Budget.samples,
                   help=f"sample budget of the testers, which decides the result (default {Budget.samples:,})")
    glob = p.add_mutually_exclusive_group()
    glob.add_argument("--global", dest="global_check", action="store_true", default=None,
                      help="always finish with global verification over every neighbour pair")
    glob.add_argument("--no-global", dest="global_check", action="store_false",
                      help="never run the global verification")
    p.add_argument("--float", dest="float_semantics", action="store_true",
                   help="also audit numpy's float64 samplers: a certified float-level lower bound with its witness "
                        "(docs: Floating point)")
    p.add_argument("--jobs", type=argtypes.positive_int, default=1,
                   help="workers for the search's independent tasks (each candidate pair's event tuning); the "
                        "result is the same at any number (default 1)")
    p.add_argument("--plot", metavar="FILE",
                   help="write a plot of p-value and bounds against eps (.png, .pdf or .svg; default .png)")
    p.set_defaults(run=time_limited(run))


def _library(args: argparse.Namespace) -> tuple[Any, dict] | None:
    """A library mechanism (``diffprivlib:laplace``) and no parameters, or None for anything else."""
    if ":" not in args.mechanism or is_function_spec(args.mechanism):
        return None
    given = [f"--{k}" for k in ("size", "domain", "neighbours") if getattr(args, k) is not None]
    if given:
        raise ParameterError(f"{given[0]} applies to a file.py:alg or module:alg function; a library mechanism "
                             "declares its own inputs (use -p)")
    from samplers.libraries import library_mechanism

    return library_mechanism(args.mechanism, parse_params(args.param)), {}


def run(args: argparse.Namespace) -> int:
    if args.samples < 1000:
        raise ParameterError(f"--samples must be at least 1000, got {args.samples}")
    if args.delta is not None and args.claimed_eps is None:
        raise ParameterError("--delta needs --claimed-eps: delta is claimed at an eps")
    mech, params = _library(args) or resolve(args)  # a bad name or parameter is reported before the heavy imports
    deadline.check("before the search started")  # a budget start-up already spent ends here, not after imports
    from hybrid.searcher.forked_tasks import use_pool
    from hybrid.searcher.search import search

    plot = None
    if args.plot is not None:  # checked before the work, written after the result is out
        from hybrid.suites.plots import plot_path

        plot = plot_path(args.plot)
    # the claim as the largest double not above it: the verdicts, made on double bounds, stay exact
    claimed = None if args.claimed_eps is None else float_at_most(args.claimed_eps)
    budget = Budget(time=args.time_budget, samples=args.samples)
    use_pool(threading.BoundedSemaphore(args.jobs - 1) if args.jobs > 1 else None)
    with progress_reporter(quiet=args.json) as say:
        result = search(mech, params, precision=args.precision, claimed_eps=claimed, claimed_delta=args.delta,
                        seed=args.seed, budget=budget, backend=args.backend, global_check=args.global_check,
                        progress=say, float_semantics=args.float_semantics)
    data = result.to_json()
    if args.json:
        emit_json(data)
    else:
        from hybrid.cli.summary import print_search

        print_search(data)
    if not data["certified"] and data["witness"] is None and data.get("proof") is None \
            and not data.get("float_certified"):  # no bound at all
        if data["backend"] is None and "float_certified" in data:  # a library mechanism: its float audit said why
            return no_result("no float-level certificate", "estimate or test give a statistical bound")
        return no_result(data["note"] or "the search found no bound", "raise --time-budget")
    if plot is not None:  # after the result is out, so a plot that cannot be written loses nothing
        from hybrid.suites.plots import search_plot

        search_plot(data, plot)
        if not args.json:
            print(f"  plot written to {plot}")
    return 0

