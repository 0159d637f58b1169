"""Rigorous enclosures of real probabilities: exact rational end points from arb balls.

Every probability the continuous backend computes is an arb ball (python-flint's
interval arithmetic with rigorous error bounds); :class:`Enclosure` turns one into two
exact ``Fraction`` end points ``lo <= p <= hi`` (the ball's end points are dyadic
rationals, so nothing is rounded on the way), clipped to ``[0, 1]``.  Ratios of
enclosures are enclosures of ratios, with ``inf`` where the denominator may be zero.

Magnitudes below ``2^-4096`` are rounded outwards to it, so end points stay small
rationals (a ratio against such a probability is certified as at least ``2^4096``
times the other, not more).

Precision is a *level*: level ``k`` computes with ``64 * 2**k`` bits (and finer
quadrature, see :mod:`verifiers.continuous.region`); refining means raising the level, and the
highest level is an explicit budget.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from verifiers.ratio import INF, Ratio

BASE_BITS = 64


def bits(level: int) -> int:
    """Working precision (bits) of a refinement level."""
    return BASE_BITS << level


@contextmanager
def working_precision(level: int) -> Iterator[int]:
    """Run arb arithmetic at the precision of ``level`` (restored afterwards)."""
    from flint import ctx

    with ctx.workprec(bits(level)):
        yield bits(level)


EXPONENT_LIMIT = 4096  # magnitudes below 2^-4096 are rounded outwards to it (exact rationals stay small)


def _dyadic(x) -> tuple[int, int]:
    """An exact arb value (an arf) as ``(m, e)`` with value ``m 2^e``."""
    m, e = x.man_exp()
    return int(m), int(e)


def _magnitude(m: int, e: int) -> int:
    """``log2 |m 2^e|`` rounded up (``-inf`` stands as a very negative number for 0)."""
    return e + m.bit_length() if m else -(1 << 62)


def _fraction(m: int, e: int) -> Fraction:
    return Fraction(m << e) if e >= 0 else Fraction(m, 1 << -e)


@dataclass(frozen=True)
class Enclosure:
    """``lo <= p <= hi`` for a probability ``p`` (exact rationals)."""

    lo: Fraction
    hi: Fraction

    @staticmethod
    def exact(p: Fraction | int) -> "Enclosure":
        return Enclosure(Fraction(p), Fraction(p))

    @staticmethod
    def from_arb(x) -> "Enclosure":
        """The end points of an arb ball, clipped to [0, 1] (a non-finite ball gives [0, 1])."""
        if not x.is_finite():
            return Enclosure(Fraction(0), Fraction(1))
        (mm, me), (rm, re) = _dyadic(x.mid()), _dyadic(x.rad())  # exact at any working precision
        if max(_magnitude(mm, me), _magnitude(rm, re)) > EXPONENT_LIMIT:
            return Enclosure(Fraction(0), Fraction(1))
        floor = Fraction(1, 1 << EXPONENT_LIMIT)
        rad = _fraction(rm, re) if _magnitude(rm, re) >= -EXPONENT_LIMIT else floor
        if _magnitude(mm, me) >= -EXPONENT_LIMIT:
            mid = _fraction(mm, me)
        else:
            mid, rad = Fraction(0), rad + floor
        lo, hi = mid - rad, mid + rad
        return Enclosure(min(max(lo, Fraction(0)), Fraction(1)), min(max(hi, Fraction(0)), Fraction(1)))

    def __add__(self, other: "Enclosure") -> "Enclosure":
        return Enclosure(self.lo + other.lo, min(self.hi + other.hi, Fraction(1)))

    def scaled(self, w: Fraction) -> "Enclosure":
        """``w`` times the enclosed value (a negative ``w`` swaps the ends)."""
        return Enclosure(self.lo * w, self.hi * w) if w >= 0 else Enclosure(self.hi * w, self.lo * w)

    @property
    def width(self) -> Fraction:
        return self.hi - self.lo

    def contains(self, p: Fraction | float) -> bool:
        return self.lo <= p <= self.hi

    def to_json(self) -> list[str]:
        from samplers.lang.exact import fraction_str

        return [fraction_str(self.lo), fraction_str(self.hi)]


ZERO = Enclosure(Fraction(0), Fraction(0))


def _div(p: Fraction, q: Fraction) -> Ratio:
    if p == 0:
        return Fraction(0)
    return INF if q == 0 else p / q


@dataclass(frozen=True)
class RatioEnclosure:
    """``lo <= P(E|x) / P(E|x') <= hi``; ``lo`` is the certified ratio (``inf`` when P(E|x') = 0 surely)."""

    lo: Ratio
    hi: Ratio

    @staticmethod
    def of(p: Enclosure, q: Enclosure) -> "RatioEnclosure":
        return RatioEnclosure(_div(p.lo, q.hi), _div(p.hi, q.lo) if p.hi else Fraction(0))

    def to_json(self) -> list[str]:
        from verifiers.ratio import ratio_str

        return [ratio_str(self.lo), ratio_str(self.hi)]
