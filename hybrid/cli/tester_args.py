"""Arguments and helpers shared by ``dphybrid test`` and ``dphybrid estimate``."""

from __future__ import annotations

import argparse
from typing import Any

from hybrid.cli import argtypes
from hybrid.cli.common import add_mechanism_args, add_time_budget, parse_params, resolve
from hybrid.cli.render import cut_text, pair_text
from samplers.errors import ParameterError, UntraceableError

# Default --samples per method: (compiled sampler, black box).  A black box may cost a
# Python call per output (OpenDP's randomized response: 40-100 us each on 2 cores).
DEFAULT_SAMPLES = {"statdp": (500_000, 100_000), "sniper": (10_000_000, 300_000), "audit": (1_000_000, 100_000)}


def add_tester_args(p: argparse.ArgumentParser, samples_help: str) -> None:
    add_mechanism_args(p)
    p.add_argument("--black-box", action="store_true",
                   help="run a file.py:alg function as it is, with numpy's generator (statistical only), "
                        "instead of tracing it")
    p.add_argument("--samples", type=argtypes.sample_count, default=None, help=samples_help)
    p.add_argument("--seed", type=argtypes.seed, default=0, help="random seed in [0, 2^64) (default 0)")
    add_time_budget(p)


def positive_samples(args: argparse.Namespace, method: str, sampler: object) -> int:
    """``--samples``, or the method's default for this kind of sampler."""
    from samplers.blackbox import BlackBox

    compiled, black_box = DEFAULT_SAMPLES[method]
    n = (black_box if isinstance(sampler, BlackBox) else compiled) if args.samples is None else args.samples
    if n < 1:
        raise ParameterError(f"--samples must be positive, got {n}")
    return n


def resolve_sampler(args: argparse.Namespace) -> Any:
    """A compiled mechanism (catalogue or traced function), a library black box named ``library:mechanism``,
    or with ``--black-box`` a plain function run as it is."""
    from samplers.plain import is_function_spec

    if ":" in args.mechanism and not is_function_spec(args.mechanism):
        from samplers.libraries import library_mechanism

        return library_mechanism(args.mechanism, parse_params(args.param))
    if args.black_box and not is_function_spec(args.mechanism):
        raise ParameterError("--black-box applies to a file.py:alg or module:alg function")
    mech, params = resolve(args)  # a bad name or parameter is reported before numba is imported
    if args.black_box:
        return mech.black_box(**params)
    from samplers.compile import compile_sampler

    try:
        sampler = compile_sampler(mech, **params)
    except UntraceableError as e:
        raise UntraceableError(f"{e} (--black-box tests the function as it is, statistically)") from None
    sampler.warm_up()
    return sampler


def samples_text(res: Any, n: int) -> str:
    """``"N samples"``, or ``"D of N samples drawn"`` when a time limit cut the draws short."""
    drawn = res.extra.get("outputs_drawn", n)
    return f"{drawn} samples" if drawn >= n else f"{drawn} of {n} samples drawn"


def print_witness(res: Any) -> None:
    """The witness lines, the limits that cut the run short and the reminder that the result is statistical."""
    c = res.candidate
    if c is not None:
        print(f"  witness {pair_text(c.x, c.x_prime)}")
        print(f"  event: {cut_text(c.event.describe())}")
    for limit in res.extra.get("limits_hit", []):
        print(f"  limit: {limit}")
    print("  (statistical result, not certified)")
