"""Sound arithmetic between epsilon (a float) and exact probability ratios.

``e^eps`` is irrational, so an exact verifier compares probabilities against a
rational bracket ``c_lo <= e^eps <= c_hi``: a violation of eps-DP is claimed only when
``P(o|x) > c_hi P(o|x')`` and privacy only when ``P(o|x) <= c_lo P(o|x')`` for every o.
Brackets come from :mod:`decimal`, whose ``exp`` and ``ln`` are correctly rounded (to
half an ulp), with every other rounding error bounded explicitly and covered by
widening in the sound direction.  ``eps`` floats are taken at their exact binary value.

:func:`log_bracket` is sound for every positive rational, at every scale: near 1 its
working precision grows with the number of leading digits ``r`` shares with 1, so the
division's error stays far below ``|ln r|``.  Comparisons of a known ratio with ``e^eps``
(:func:`exceeds_exp`, :func:`within_exp`) decide in the log domain first, so a huge
eps (``1e7``) is answered without building ``e^eps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction
from typing import Any, Callable

from samplers.errors import ParameterError
from verifiers.ratio import INF, Ratio

GUARD_DIGITS = 40
# e^eps as an exact rational has about 0.43 eps decimal digits: beyond this it is refused.
EXP_LIMIT = 1e6
_LOG10_2 = 0.30103


def _context(prec: int, rounding: str | None = None) -> Context:
    return Context(prec=prec, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=rounding)


_CTX = _context(GUARD_DIGITS)
# Widening by a few units is exact in twice the digits (the default context's 28 digits
# would round the widening away and make c_lo = c_hi).
_WIDE = _context(2 * GUARD_DIGITS)


def _ulp(d: Decimal, prec: int = GUARD_DIGITS) -> Decimal:
    return Decimal(1).scaleb(d.adjusted() - prec + 1)


def _eps_decimals(eps: float | Fraction) -> tuple[Decimal, Decimal]:
    """Decimals ``(lo, hi)`` with ``lo <= eps <= hi``: a float exactly, a Fraction widened.

    Every operation names its context and direction: the default context's 28 digits
    would round a float's exact value (up to ~750 digits) and lose the widening.
    """
    if not isinstance(eps, Fraction):
        exact = Decimal(eps)
        return exact, exact
    arg = _CTX.divide(Decimal(eps.numerator), Decimal(eps.denominator))
    if Fraction(arg) == eps:
        return arg, arg
    slack = 2 * _ulp(arg)  # the division is correctly rounded: within half an ulp
    return _context(2 * GUARD_DIGITS, ROUND_FLOOR).subtract(arg, slack), \
        _context(2 * GUARD_DIGITS, ROUND_CEILING).add(arg, slack)


def exp_bracket(eps: float | Fraction) -> tuple[Fraction, Fraction]:
    """Rationals ``(c_lo, c_hi)`` with ``c_lo <= e^eps <= c_hi`` (eps finite, exact value).

    Raises ParameterError above :data:`EXP_LIMIT` (the rationals would have hundreds of
    thousands of digits); compare a known ratio with :func:`exceeds_exp` instead.
    """
    if isinstance(eps, float) and not math.isfinite(eps):
        raise ValueError("exp_bracket needs a finite epsilon")
    if abs(eps) > EXP_LIMIT:
        raise ParameterError(f"eps = {float(eps):g} is too large for an exact bracket of e^eps "
                             f"(at most {EXP_LIMIT:g})")
    lo_arg, hi_arg = _eps_decimals(eps)
    lo, hi = _CTX.exp(lo_arg), _CTX.exp(hi_arg)
    return Fraction(_WIDE.subtract(lo, 2 * _ulp(lo))), Fraction(_WIDE.add(hi, 2 * _ulp(hi)))


def _log_decimal(r: Fraction) -> tuple[Decimal, Decimal]:
    """Decimals ``(lo, hi)`` with ``lo <= ln r <= hi``, for a positive rational ``r != 1``.

    With ``p`` digits, the quotient ``q = r (1 + d)`` has ``|d| <= 10^(1-p)``, so
    ``|ln q - ln r| <= 2 |d|``, and ``ln q`` is rounded to within half an ulp
    (``<= 10^(1-p) |ln q| / 2``).  ``p`` grows with the leading digits shared by ``r``
    and 1, which keeps this error ~1e-40 relative to ``|ln r|`` at every scale.
    """
    n, d = r.numerator, r.denominator
    near_one = max(0, d.bit_length() - abs(n - d).bit_length())  # ~ -log2 |r - 1| when r ~ 1
    prec = GUARD_DIGITS + 2 + math.ceil(near_one * _LOG10_2)
    ctx = _context(prec)
    value = ctx.ln(ctx.divide(Decimal(n), Decimal(d)))
    unit = Decimal(1).scaleb(1 - prec)
    err = _context(8, ROUND_CEILING).multiply(unit, _context(8, ROUND_CEILING).add(abs(value), 2))
    err = _context(8, ROUND_CEILING).multiply(err, 2)  # a factor 2 of margin on the bound above
    return _context(prec + 10, ROUND_FLOOR).subtract(value, err), _context(prec + 10, ROUND_CEILING).add(value, err)


def log_bracket(r: Ratio) -> tuple[float, float]:
    """Floats ``(lo, hi)`` with ``lo <= ln r <= hi`` (``inf`` for an infinite ratio)."""
    if r == INF:
        return INF, INF
    r = Fraction(r)
    if r <= 0:
        return -INF, -INF
    if r == 1:
        return 0.0, 0.0
    lo, hi = _log_decimal(r)
    # float() rounds to nearest: one step outwards makes each end sound
    return math.nextafter(float(lo), -INF), math.nextafter(float(hi), INF)


def eps_lower(r: Ratio) -> float:
    """A float certainly at most ``ln r``: the certified epsilon lower bound of ratio ``r``."""
    return max(0.0, log_bracket(r)[0]) if r != INF else INF


def eps_upper(r: Ratio) -> float:
    """A float certainly at least ``ln r``."""
    return max(0.0, log_bracket(r)[1]) if r != INF else INF


def compare_exp(r: Ratio, eps: float | Fraction) -> int | None:
    """The sign of ``r - e^eps`` when it is certain, else None (eps non-negative, may be inf).

    ``e^eps`` is irrational for every rational ``eps != 0``, so 0 only comes out for
    ``r = 1, eps = 0`` (and ``inf`` against ``inf``); None means ``r`` lies inside the
    bracket's rounding of ``e^eps``.
    """
    if eps == INF:
        return 0 if r == INF else -1
    if r == INF:
        return 1
    r = Fraction(r)
    if eps == 0:
        return (r > 1) - (r < 1)
    if r == 0:
        return -1
    lo, hi = _log_decimal(r) if r != 1 else (Decimal(0), Decimal(0))
    e_lo, e_hi = _eps_decimals(eps)
    if lo > e_hi:  # Decimal comparisons are exact
        return 1
    if hi < e_lo:
        return -1
    if abs(eps) > EXP_LIMIT:  # r is within a relative 1e-40 of e^eps: cannot happen at this size
        return None
    c_lo, c_hi = exp_bracket(eps)
    if r > c_hi:
        return 1
    if r <= c_lo:
        return -1
    return None


def exceeds_exp(r: Ratio, eps: float | Fraction) -> bool:
    """Certainly ``r > e^eps``: a ratio that refutes eps-DP (``inf`` exceeds every finite eps)."""
    return compare_exp(r, eps) == 1


def within_exp(r: Ratio, eps: float | Fraction) -> bool:
    """Certainly ``r <= e^eps`` (True for every ratio when eps is inf)."""
    return compare_exp(r, eps) in (-1, 0)


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
