"""Sound arithmetic between epsilon (a float) and exact probability ratios.

``e^eps`` is irrational, so an exact verifier compares probabilities against a
rational bracket ``c_lo <= e^eps <= c_hi``: a violation of eps-DP is claimed only when
``P(o|x) > c_hi P(o|x')`` and privacy only when ``P(o|x) <= c_lo P(o|x')`` for every o.
Brackets come from :mod:`decimal`, whose ``exp`` and ``ln`` are correctly rounded, so
the exact value lies within one unit in the last place of the result; we widen by two
units.  ``eps`` floats are taken at their exact binary value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import Any, Callable

from verifiers.ratio import INF, Ratio

GUARD_DIGITS = 40
_CTX = Context(prec=GUARD_DIGITS)
# Widening by a few units is exact in twice the digits (the default context's 28 digits
# would round the widening away and make c_lo = c_hi).
_WIDE = Context(prec=2 * GUARD_DIGITS)


def _ulp(d: Decimal) -> Decimal:
    return Decimal(1).scaleb(d.adjusted() - GUARD_DIGITS + 1)


def exp_bracket(eps: float | Fraction) -> tuple[Fraction, Fraction]:
    """Rationals ``(c_lo, c_hi)`` with ``c_lo <= e^eps <= c_hi`` (eps finite, exact value)."""
    if isinstance(eps, float) and not math.isfinite(eps):
        raise ValueError("exp_bracket needs a finite epsilon")
    if isinstance(eps, Fraction):
        arg = _CTX.divide(Decimal(eps.numerator), Decimal(eps.denominator))
    else:
        arg = Decimal(eps)
    if isinstance(eps, Fraction) and Fraction(arg) != eps:  # not exactly representable: widen first
        lo_arg, hi_arg = _WIDE.subtract(arg, 2 * _ulp(arg)), _WIDE.add(arg, 2 * _ulp(arg))
    else:
        lo_arg = hi_arg = arg
    lo, hi = _CTX.exp(lo_arg), _CTX.exp(hi_arg)
    return Fraction(_WIDE.subtract(lo, 2 * _ulp(lo))), Fraction(_WIDE.add(hi, 2 * _ulp(hi)))


def log_bracket(r: Ratio) -> tuple[float, float]:
    """Floats ``(lo, hi)`` with ``lo <= ln r <= hi`` (``inf`` for an infinite ratio)."""
    if r == INF:
        return INF, INF
    r = Fraction(r)
    if r <= 0:
        return -INF, -INF
    d = _CTX.ln(_CTX.divide(Decimal(r.numerator), Decimal(r.denominator)))
    # the division rounds too: widen by a few units before converting to floats
    lo, hi = _WIDE.subtract(d, 4 * _ulp(d)), _WIDE.add(d, 4 * _ulp(d))
    return math.nextafter(float(lo), -INF), math.nextafter(float(hi), INF)


def eps_lower(r: Ratio) -> float:
    """A float certainly at most ``ln r``: the certified epsilon lower bound of ratio ``r``."""
    return max(0.0, log_bracket(r)[0]) if r != INF else INF


def eps_upper(r: Ratio) -> float:
    """A float certainly at least ``ln r``."""
    return max(0.0, log_bracket(r)[1]) if r != INF else INF


def violates(p: Fraction, q: Fraction, eps: float) -> bool:
    """Certainly ``p > e^eps q`` (uses the upper end of the bracket)."""
    if eps == INF:
        return False
    return p > exp_bracket(eps)[1] * q


def satisfies(p: Fraction, q: Fraction, eps: float) -> bool:
    """Certainly ``p <= e^eps q`` (uses the lower end of the bracket)."""
    if eps == INF:
        return True
    return p <= exp_bracket(eps)[0] * q


@dataclass(frozen=True)
class Bisection:
    """A certified bracket: eps ``lo`` is violated (witness), eps ``hi`` holds (or is inf)."""

    lo: float
    hi: float
    witness: Any  # what the oracle returned at ``lo`` (None when lo = 0 was not violated)
    queries: int

    @property
    def width(self) -> float:
        return self.hi - self.lo


def bisect_epsilon(
    oracle: Callable[[Fraction], Any],
    lo: float,
    hi: float,
    precision: float,
    *,
    witness: Any = None,
    max_queries: int = 200,
) -> Bisection:
    """Narrow ``[lo, hi]`` to width ``<= precision`` with a violation oracle.

    ``oracle(c)`` returns a witness when some output has ``P(o|x) > c P(o|x')`` and None
    otherwise (a witness may be falsy: output 0 is one).  Each midpoint ``m`` is tested
    at ``c_hi(m)`` to claim a violation of m-DP and, if none, at ``c_lo(m)`` to claim
    m-DP; when neither holds (the ratio is within the bracket's rounding of e^m) the
    points m -/+ precision/4 are certified instead.  The caller supplies a valid starting
    bracket: ``lo`` violated (or 0) and ``hi`` private; ``hi`` may be ``inf``, in which
    case it is found by doubling.
    """
    queries = 0
    if hi == INF:
        probe = max(2 * lo, 1.0)
        while probe < 1e6:
            queries += 1
            w = oracle(exp_bracket(probe)[1])
            if w is None:
                break
            lo, witness, probe = probe, w, 2 * probe
        else:
            return Bisection(lo, INF, witness, queries)
        queries += 1
        if oracle(exp_bracket(probe)[0]) is not None:
            return Bisection(lo, INF, witness, queries)
        hi = probe
    while hi - lo > precision and queries < max_queries:
        mid = (lo + hi) / 2
        c_lo, c_hi = exp_bracket(mid)
        queries += 1
        w = oracle(c_hi)
        if w is not None:
            lo, witness = mid, w
            continue
        queries += 1
        if oracle(c_lo) is None:
            hi = mid
            continue
        # The ratio lies inside the tiny bracket of e^mid: certify just below and above it.
        below, above = max(lo, mid - precision / 4), min(hi, mid + precision / 4)
        queries += 2
        w = oracle(exp_bracket(below)[1])
        if w is not None:
            lo, witness = below, w
        if oracle(exp_bracket(above)[0]) is None:
            hi = above
    return Bisection(lo, hi, witness, queries)
