"""Argument helpers shared by the CLI commands: mechanism, parameters, inputs, output."""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from typing import Any, Callable

from hybrid.cli import argtypes
from hybrid.formats import json_safe
from samplers.deadline import TimeLimitReached, check_seconds, time_limit
from samplers.errors import DomainError, ParameterError
from samplers.lang.mechanism import Mechanism
from samplers.lang.neighbours import BY_NAME as NEIGHBOURS
from samplers.numerals import MAX_DIGITS, is_integer, short_text
from samplers.plain import is_function_spec
from samplers.plain import resolve as resolve_mechanism

DEFAULT_TIME_BUDGET = 300.0  # seconds: a safety limit, never what decides a result
NO_RESULT = 3  # exit status of a command that ends without a result (a time limit or budget stopped it)


def add_mechanism_args(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    """``MECH``, repeatable ``-p key=value``, the inputs of a plain function (and ``--json``)."""
    p.add_argument("mechanism", metavar="MECH",
                   help="catalogue mechanism name (see 'dphybrid list'), or a function in StatDP's contract "
                        "alg(prng, queries, epsilon, ...) as path/to/file.py:alg or module:alg")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="mechanism parameter; rationals as 1/2 (repeatable)")
    plain = p.add_argument_group("inputs of a file.py:alg function (StatDP's defaults)")
    plain.add_argument("--size", type=argtypes.positive_int, default=None,
                       help="number of queries (default 5)")
    plain.add_argument("--domain", type=argtypes.int_range, default=None, metavar="LO..HI",
                       help="range of each query answer (default -10..10)")
    plain.add_argument("--neighbours", choices=sorted(NEIGHBOURS), default=None,
                       help="neighbouring query vectors (default all_differ)")
    p._negative_number_matcher = re.compile(  # let "--domain -10..10" read -10..10 as a value
        f"{argtypes.RANGE_ARG.pattern}|{p._negative_number_matcher.pattern}")
    if json_flag:
        add_json_flag(p)


def add_json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def parse_params(items: list[str]) -> dict[str, str]:
    """``["a=1/2", "m=5"]`` as a dict of strings (coerced later by the mechanism)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ParameterError(f"parameter {item!r} is not of the form key=value")
        if key.strip() in out:
            raise ParameterError(f"parameter {key.strip()!r} given twice")
        out[key.strip()] = value.strip()
    return out


def resolve(args: argparse.Namespace) -> tuple[Mechanism, dict[str, Any]]:
    """The mechanism (a catalogue name or a plain function) and its full, validated parameter set."""
    settings = {"size": args.size, "domain": args.domain, "neighbours": args.neighbours}
    if not is_function_spec(args.mechanism):
        given = [f"--{k}" for k, v in settings.items() if v is not None]
        if given:
            resolve_mechanism(args.mechanism)  # an unknown name (or file.py: naming no function) says so first
            raise ParameterError(f"{given[0]} applies to a file.py:alg or module:alg function; a catalogue "
                                 f"mechanism declares its own inputs (use -p)")
    mech = resolve_mechanism(args.mechanism, **settings)
    return mech, mech.params(**parse_params(args.param))


def parse_input(text: str) -> tuple[int, ...]:
    """``"1,0,2"`` as a tuple of integers; an empty item (``"1,,1"``, ``"1,"``) is an error."""
    items = [v.strip() for v in text.split(",")]
    for i, v in enumerate(items):
        if not is_integer(v):
            what = "is empty" if not v else f"is {short_text(repr(v))}, not an integer of at most {MAX_DIGITS} digits"
            raise DomainError(f"input {short_text(repr(text))} is not a comma-separated list of integers: "
                              f"item {i + 1} {what}")
    return tuple(int(v) for v in items)


def emit_json(obj: Any) -> None:
    """``obj`` as JSON on stdout: infinities as "inf", NaN as null (never invalid JSON)."""
    json.dump(json_safe(obj), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def add_time_budget(p: argparse.ArgumentParser, default: float = DEFAULT_TIME_BUDGET) -> None:
    """``--time-budget SECONDS``: a safety limit on the whole command (results are sized by counts)."""
    p.add_argument("--time-budget", type=argtypes.positive, default=default, metavar="SECONDS",
                   help=f"stop after this many seconds (default {default:g}) with a partial result, or say "
                        "that the budget was reached (exit status 3)")


def no_result(why: str, remedy: str) -> int:
    """Say on stderr, in the one sentence every command uses, that it ends without a result
    (``dphybrid: WHY; no result (REMEDY)``), and return its exit status (:data:`NO_RESULT`)."""
    sys.stderr.write(f"dphybrid: {why}; no result ({remedy})\n")
    return NO_RESULT


def time_limited(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run a command under its ``--time-budget``, counted from the command's start (``args.startup``:
    the process's start-up, imports included); stopped with nothing to show, it says so (:func:`no_result`)."""

    @functools.wraps(run)
    def limited(args: argparse.Namespace) -> int:
        seconds = check_seconds(args.time_budget, "--time-budget")
        try:
            with time_limit(seconds, spent=getattr(args, "startup", 0.0)):
                return run(args)
        except TimeLimitReached as e:
            return no_result(str(e), "raise --time-budget")

    return limited
