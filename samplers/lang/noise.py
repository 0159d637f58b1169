"""Exact laws of the discrete noise primitives.

Every discrete noise is a finite law on consecutive integers ``lo, lo+1, ...`` with
exact ``Fraction`` weights summing to one; this module builds and validates them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from samplers import deadline
from samplers.errors import ParameterError
from samplers.memory import check_fits
from samplers.lang.exact import Rational, exact, fraction_str

Law = tuple[int, tuple[Fraction, ...]]


def probability(p: Rational, what: str) -> Fraction:
    """An exact probability in [0, 1], or a ParameterError naming ``what``."""
    q = exact(p, what=what)
    if not 0 <= q <= 1:
        raise ParameterError(f"{what} = {fraction_str(q)} is outside [0, 1]")
    return q


def bernoulli_law(p: Rational) -> Law:
    """``flip(p)``: 1 with probability p, else 0."""
    q = probability(p, "flip(p): p")
    return 0, (1 - q, q)


def categorical_law(weights: Sequence[Rational]) -> Law:
    """Values ``0..k-1`` with probabilities proportional to ``weights`` (k >= 2)."""
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
        raise ParameterError("categorical(weights): weights must be a list of numbers")
    if len(weights) < 2:
        raise ParameterError(f"categorical(weights) needs at least 2 categories, got {len(weights)}")
    w = [exact(v, what="categorical weight") for v in weights]
    if any(v < 0 for v in w):
        raise ParameterError("categorical(weights): weights must be non-negative")
    total = sum(w)
    if total == 0:
        raise ParameterError("categorical(weights): weights must not all be zero")
    return 0, tuple(v / total for v in w)


# Bytes a law takes per outcome in the IR and its compiled forms (a Fraction, a cumulative
# table entry, the enumerator's weights), before the outcome's own digits.
LAW_BYTES_PER_OUTCOME = 200


def check_law_size(outcomes: int, digits_bits: int, what: str) -> None:
    """Refuse a law of ``outcomes`` values whose weights total ``digits_bits`` bits if it cannot fit."""
    check_fits(outcomes * LAW_BYTES_PER_OUTCOME + digits_bits / 8, f"{what}: a law over {outcomes} values",
               "lower the parameter that sets its range")


def uniform_law(lo: int, hi: int) -> Law:
    """Uniform on the integers ``lo..hi`` inclusive."""
    if not (isinstance(lo, int) and isinstance(hi, int)) or isinstance(lo, bool) or isinstance(hi, bool):
        raise ParameterError("uniform(lo, hi): bounds must be integers")
    if lo > hi:
        raise ParameterError(f"uniform(lo, hi): empty range {lo}..{hi}")
    k = hi - lo + 1
    check_law_size(k, 0, "uniform(lo, hi)")
    return lo, (Fraction(1, k),) * k


def geometric_base(a: Rational) -> Fraction:
    """Validate the base ``a`` of a two-sided geometric law: 0 <= a < 1."""
    q = exact(a, what="two_sided_geometric(a): a")
    if not 0 <= q < 1:
        raise ParameterError(f"two_sided_geometric(a): a = {fraction_str(q)} must satisfy 0 <= a < 1")
    return q


def geometric_window(a: Fraction, zmin: int, zmax: int) -> Law:
    """Two-sided geometric ``P(Z=z) = (1-a)/(1+a) a^|z|`` folded onto ``[zmin, zmax]``.

    The end points carry the whole tails (``P(Z <= zmin)`` and ``P(Z >= zmax)``), which
    is exactly what ``clamp(c + Z, lo, hi)`` needs when ``[zmin, zmax]`` covers
    ``[lo - c, hi - c]`` for every offset ``c``: Ghosh et al.'s truncated geometric.
    """
    if zmin == zmax:
        return zmin, (Fraction(1),)
    # a^|z| has about |z| times the bits of a: the digits grow quadratically with the window
    far = max(abs(zmin), abs(zmax))
    check_law_size(zmax - zmin + 1, far * (zmax - zmin + 1) * (a.numerator.bit_length() + a.denominator.bit_length()) // 2,
                   "two_sided_geometric(a)")

    def point(z: int) -> Fraction:
        return (1 - a) / (1 + a) * a ** abs(z)

    def below(z: int) -> Fraction:  # P(Z <= z)
        return a ** (-z) / (1 + a) if z <= 0 else 1 - a ** (z + 1) / (1 + a)

    def above(z: int) -> Fraction:  # P(Z >= z)
        return a**z / (1 + a) if z >= 0 else 1 - a ** (1 - z) / (1 + a)

    weights = [below(zmin)]
    for z in range(zmin + 1, zmax):
        if z % 1024 == 0:
            deadline.check("while tabulating two_sided_geometric(a)")
        weights.append(point(z))
    weights.append(above(zmax))
    return zmin, tuple(weights)


def discrete_laplace_law(a: Rational, bound: int) -> Law:
    """Bounded discrete Laplace: ``P(Z=z)`` proportional to ``a^|z|`` on ``-bound..bound``."""
    q = exact(a, what="discrete_laplace(a, bound): a")
    if not 0 < q < 1:
        raise ParameterError(f"discrete_laplace(a, bound): a = {fraction_str(q)} must satisfy 0 < a < 1")
    if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
        raise ParameterError("discrete_laplace(a, bound): bound must be a non-negative integer")
    check_law_size(2 * bound + 1, bound * (2 * bound + 1) * (q.numerator.bit_length() + q.denominator.bit_length()) // 2,
                   "discrete_laplace(a, bound)")
    raw = [q ** abs(z) for z in range(-bound, bound + 1)]
    total = sum(raw)
    return -bound, tuple(w / total for w in raw)


def positive_scale(scale: Rational, what: str) -> float:
    """A finite positive float scale for continuous noise."""
    try:
        s = float(scale)
    except (TypeError, ValueError):
        raise ParameterError(f"{what}: scale {scale!r} is not a number") from None
    if not (s > 0 and s != float("inf")):
        raise ParameterError(f"{what}: scale must be a finite positive number, got {scale!r}")
    return s
