"""Sums of exponentials ``sum_k c_k e^(lam_k t)``: exact rates, arb coefficients, closed-form integrals.

On each piece of a star region (:mod:`verifiers.continuous.region`), the integrand of a program
with Laplace and exponential noise is a product of such sums (one density, one CDF
difference per other noise variable).  Rates ``lam`` are exact rationals, so equal
rates merge exactly and a product of k two-term factors with equal scales has k + 1
terms, not 2^k.  ``int_a^b c e^(lam t) dt`` is ``c e^(lam a) expm1(lam (b - a)) / lam``
(no cancellation on short pieces), ``c (b - a)`` for ``lam = 0``, and its limit on an
infinite end where the term decays.  For speed, a product is built over integer keys
``lam * D`` for a common denominator ``D`` (:func:`rekey`), which hash and add in C.
"""

from __future__ import annotations

import math
from fractions import Fraction

ExpSum = dict  # Fraction rate -> arb coefficient
INF = math.inf


def q(v: Fraction | int):
    """An exact rational as an arb ball (rounded to the working precision)."""
    from flint import arb, fmpq

    if not isinstance(v, Fraction):
        v = Fraction(v)
    return arb(fmpq(v.numerator, v.denominator))


def exp_q(v: Fraction):
    """``e^v`` for an exact rational ``v``."""
    return q(v).exp()


def multiply(a: ExpSum, b: ExpSum) -> ExpSum:
    out: ExpSum = {}
    for la, ca in a.items():
        for lb, cb in b.items():
            lam = la + lb
            out[lam] = out[lam] + ca * cb if lam in out else ca * cb
    return out


def subtract(a: ExpSum, b: ExpSum) -> ExpSum:
    out = dict(a)
    for lam, c in b.items():
        out[lam] = out[lam] - c if lam in out else -c
    return {lam: c for lam, c in out.items() if not c.is_zero()}


def rekey(f: ExpSum, denominator: int) -> ExpSum:
    """The same sum keyed by the integers ``lam * denominator`` (which must be integers)."""
    out = {}
    for lam, c in f.items():
        key = lam * denominator
        if key.denominator != 1:
            raise ValueError(f"rate {lam} is not a multiple of 1/{denominator}")
        out[key.numerator] = c
    return out


def integrate(f: ExpSum, a: Fraction | float, b: Fraction | float, denominator: int = 1):
    """``int_a^b f(t) dt`` as an arb ball (``a`` may be -inf, ``b`` may be inf); keys are ``lam * denominator``."""
    from flint import arb

    total = arb(0)
    for key, c in f.items():
        if c.is_zero():
            continue
        lam = Fraction(key, denominator)
        if lam == 0:
            if a == -INF or b == INF:
                raise ArithmeticError("a constant term on an infinite piece (the integrand is not integrable)")
            total += c * q(Fraction(b) - Fraction(a))
        elif b == INF:
            if lam > 0:
                raise ArithmeticError("a growing term on a piece up to +inf")
            total += -c * exp_q(lam * a) / q(lam)
        elif a == -INF:
            if lam < 0:
                raise ArithmeticError("a growing term on a piece down to -inf")
            total += c * exp_q(lam * b) / q(lam)
        else:
            total += c * exp_q(lam * a) * q(lam * (b - a)).expm1() / q(lam)
    return total


def evaluators(sums: list[ExpSum]):
    """``t -> [f(t) for f in sums]`` at an arb or acb ``t`` (for quadrature): each ``e^(lam t)`` is
    computed once for all the sums with rate ``lam`` (a star's leaves share their noise's few rates),
    the rates converted to balls once.  Each sum's value is the ball it would be alone: the same
    exponentials (``e^(0 t)`` is the exact 1, not computed), added in the same order from the first
    term (adding it to an exact 0 is exact)."""
    from flint import arb

    one = arb(1)
    index: dict[Fraction, int] = {}
    for f in sums:
        for lam in f:
            if lam != 0:
                index.setdefault(lam, len(index))
    rates = [q(lam) for lam in index]
    terms = [[(index[lam] if lam != 0 else -1, c) for lam, c in f.items()] for f in sums]

    def values(t):
        exps = [(rate * t).exp() for rate in rates]
        out = []
        for f in terms:
            total = None
            for i, c in f:
                term = c * (one if i < 0 else exps[i])
                total = term if total is None else total + term
            out.append(0 * t if total is None else total)
        return out

    return values
