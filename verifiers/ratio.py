"""Exact likelihood ratios: ``Fraction`` or ``inf``, never a rounded float."""

from __future__ import annotations

import math
from fractions import Fraction

from samplers.lang.exact import fraction_str

INF = math.inf
Ratio = Fraction | float  # a Fraction, or math.inf


def ratio(p: Fraction, q: Fraction) -> Ratio:
    """``p / q`` exactly; ``inf`` when ``p > 0 = q``; 0 when ``p = 0`` (no evidence)."""
    if p == 0:
        return Fraction(0)
    if q == 0:
        return INF
    return Fraction(p) / Fraction(q)


def ratio_str(r: Ratio) -> str:
    """``"p/q"`` or ``"inf"``: the JSON form of a ratio."""
    return "inf" if r == INF else fraction_str(r)


def parse_ratio(text: str) -> Ratio:
    """Inverse of :func:`ratio_str`."""
    from samplers.lang.exact import exact

    return INF if text.strip() == "inf" else exact(text, what="ratio")


def log_ratio(r: Ratio) -> float:
    """Natural log of a ratio as a float for display (inf for inf, -inf for 0)."""
    if r == INF:
        return INF
    if r == 0:
        return -INF
    r = Fraction(r)
    # log of numerator and denominator separately: exact integers never overflow here.
    return math.log(r.numerator) - math.log(r.denominator)
