"""Exact rational parameters.

A parameter written as a rational string (``"1/2"``) is that rational; a float (or a
decimal string such as ``"0.7"``) is kept as the exact binary value of the IEEE double
it denotes, so ``0.7`` is ``3152519739159347/4503599627370496``, never ``7/10``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from samplers.errors import ParameterError

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
            try:
                n, d = int(num), int(den)
            except ValueError:
                raise ParameterError(f"{what}: {value!r} is not a rational like 1/2") from None
            if d == 0:
                raise ParameterError(f"{what}: {value!r} has a zero denominator")
            return Fraction(n, d)
        try:
            return Fraction(int(text))
        except ValueError:
            pass
        try:
            f = float(text)
        except ValueError:
            raise ParameterError(f"{what}: {value!r} is not a number") from None
        return exact(f, what=what)
    try:
        return exact(float(value), what=what)  # numpy scalars and the like
    except (TypeError, ValueError):
        raise ParameterError(f"{what}: {value!r} is not a number") from None


def fraction_str(q: Fraction | int) -> str:
    """Render an exact rational as ``"p/q"`` (or ``"p"`` for integers)."""
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"
