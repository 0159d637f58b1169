"""Exact rational parameters.

A parameter written as a rational string (``"1/2"``) is that rational; a float (or a
decimal string such as ``"0.7"``) is kept as the exact binary value of the IEEE double
it denotes, so ``0.7`` is ``3152519739159347/4503599627370496``, never ``7/10``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from samplers.errors import ParameterError
from samplers.numerals import INTEGER, parse_decimal, parse_integer, short_text

Rational = Fraction | int | float | str


def exact(value: Rational, *, what: str = "value") -> Fraction:
    """Return the exact rational denoted by ``value`` (see the module docstring)."""
    if isinstance(value, bool):
        raise ParameterError(f"{what}: expected a number, got a boolean")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{what}: {value} is not a finite number")
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        if "/" in text:
            num, _, den = text.partition("/")
            if not (INTEGER.fullmatch(num.strip()) and INTEGER.fullmatch(den.strip())):
                raise ParameterError(f"{what}: {short_text(repr(value))} is not a rational like 1/2")
            n, d = parse_integer(num, what), parse_integer(den, what)
            if d == 0:
                raise ParameterError(f"{what}: {short_text(repr(value))} has a zero denominator")
            return Fraction(n, d)
        if INTEGER.fullmatch(text):
            return Fraction(parse_integer(text, what))
        return exact(parse_decimal(text, what), what=what)
    try:
        return exact(float(value), what=what)  # numpy scalars and the like
    except (TypeError, ValueError):
        raise ParameterError(f"{what}: {value!r} is not a number") from None


def fraction_str(q: Fraction | int) -> str:
    """Render an exact rational as ``"p/q"`` (or ``"p"`` for integers)."""
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"
