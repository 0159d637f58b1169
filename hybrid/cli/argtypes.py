"""argparse types of the CLI's numeric options, checked when the command line is parsed.

A bad value is refused before any work starts, with argparse's one-line error and exit
status 2.  Numbers accept rationals wherever the README promises them (``--eps 7/10``,
``--alpha 1/20``); NaN and infinities are refused everywhere, and nothing is silently
clamped or folded (a seed outside [0, 2^64) is an error, not reduced modulo 2^64).
"""

from __future__ import annotations

import argparse
import re
from fractions import Fraction
from typing import Any

from hybrid.formats import delta_value, eps_value
from hybrid.searcher.budget import MAX_PRECISION, MAX_SAMPLES
from samplers.errors import ParameterError
from samplers.lang.exact import exact
from samplers.numerals import is_integer, parse_integer, short_text
from samplers.seed import check_seed



def _integer(text: str) -> int:
    try:
        return parse_integer(text, "value")
    except ParameterError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("value: ")) from None


def _number(text: str) -> Fraction:
    try:
        return exact(text, what="value")
    except ParameterError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("value: ")) from None


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2^64)."""
    v = _integer(text)
    try:
        return check_seed(v)
    except ParameterError:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is outside [0, 2^64)") from None


def positive_int(text: str) -> int:
    """A count that must be at least 1 (samples, threads, K)."""
    v = _integer(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is not a positive integer")
    return v




def sample_count(text: str) -> int:
    """A sample budget: a positive integer a run can draw (at most :data:`MAX_SAMPLES`)."""
    return _at_most(positive_int(text), MAX_SAMPLES, text,
                    f"more than the {MAX_SAMPLES:.0e} samples a run can draw (about 10^7 a second)")


def _at_most(v: Any, most: Any, text: str, beyond: str) -> Any:
    """``v``, or the error ``TEXT is BEYOND`` when it exceeds ``most``."""
    if v > most:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is {beyond}")
    return v


def nonnegative_int(text: str) -> int:
    """A count that may be 0 (e.g. ``--top 0`` for no cap)."""
    v = _integer(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is negative")
    return v


def epsilon(text: str) -> float | Fraction:
    """A finite eps >= 0: ``7/10`` stays the exact rational, ``0.7`` is a float."""
    try:
        return eps_value(text, "eps")
    except ParameterError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("eps ")) from None


def delta(text: str) -> float | Fraction:
    """A claimed delta in [0, 1]: ``1/1000`` stays the exact rational, ``1e-3`` is a float."""
    try:
        return delta_value(text)
    except ParameterError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("delta ")) from None


def positive(text: str) -> float:
    """A finite number > 0 (a precision, a time limit), rationals accepted."""
    v = _number(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is not positive")
    return _finite_float(v, text)


def precision(text: str) -> float:
    """A bracket width: a number in (0, 1] (the rule suite files follow too)."""
    return _at_most(positive(text), MAX_PRECISION, text,
                    f"wider than {MAX_PRECISION:g}: such a bracket says nothing about epsilon")


def probability(text: str) -> float:
    """A level strictly between 0 and 1 (a significance level, a confidence), rationals accepted."""
    v = _number(text)
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"{short_text(text)} is not strictly between 0 and 1")
    return float(v)


def _finite_float(v: Fraction, text: str) -> float:
    try:
        f = float(v)
    except OverflowError:
        f = float("inf")
    if f == float("inf") or (f == 0 and v != 0):
        raise argparse.ArgumentTypeError(f"{short_text(text)} is out of the range of a float")
    return f


def int_range(text: str) -> tuple[int, int]:
    """``LO..HI``: an integer range with LO <= HI (``-10..10``)."""
    lo, sep, hi = text.partition("..")
    if not (sep and is_integer(lo) and is_integer(hi)):
        raise argparse.ArgumentTypeError(f"{short_text(repr(text))} is not a range LO..HI of integers such as -10..10")
    if int(lo) > int(hi):
        raise argparse.ArgumentTypeError(f"{short_text(text)} is not a range LO..HI: LO exceeds HI")
    return int(lo), int(hi)


RANGE_ARG = re.compile(r"^-\d+\.\.[+-]?\d+$")  # a range starting with a minus sign is a value, not an option
