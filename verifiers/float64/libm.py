"""What the platform's ``log`` may return: the one operation of numpy's samplers C does not pin down.

numpy's samplers call the C library's ``log``, whose result IEEE 754 does not specify.  The
model: for a positive finite double ``a``, ``log(a)`` is a double within 1 ulp of the exact
``ln a`` (glibc documents at most 1 ulp for ``log`` on x86_64; its current ``log`` is correctly
rounded in practice).  Every such double lies in ``{pred(RD(t)), RD(t), RU(t), succ(RU(t))}`` for
``t = ln a`` (``RD``/``RU``: rounding down/up to a double; ``t`` is a double only when ``a = 1``),
so :func:`log_bounds` returns the smallest and largest of these, computed from a rigorous arb
enclosure of ``t``.  Both ends are non-decreasing in ``a``: at 128 bits the enclosures of the
logs of two different doubles below 2^1024 are disjoint (their logs differ by at least 2^-54
relatively, the radii are near 2^-120), which is what the preimage bisection relies on.

A user's own ``np.log`` (a hand-written inversion) is numpy's float64 log, not always the C
library's: an AVX512F kernel where the CPU has one.  It differs from ``math.log`` on about 1
double in 10^4 here, and the same 1-ulp model is assumed for it (:data:`NP_LOG_ASSUMPTION`).
"""

from __future__ import annotations

import math
from fractions import Fraction

LOG_ASSUMPTION = ("log is the platform libm's (the one Python's math.log calls, as numpy's C code does): "
                  "any double within 1 ulp of the exact natural logarithm (glibc documents at most 1 ulp)")

NP_LOG_ASSUMPTION = ("np.log (numpy's own float64 log, an AVX512F kernel where the CPU has one, else the C library's): any "
                     "double within 1 ulp of the exact natural logarithm (numpy documents no bound; measured at most "
                     "0.56 ulp on 3e5 doubles k / 2^53 near 0 and 1, numpy 2.4.6, AVX512F)")

_PREC = 128


def arb_exact(x: object) -> Fraction:
    """The exact value of an arb ball's end (``lower()`` or ``upper()``)."""
    man, exp = x.man_exp()  # type: ignore[attr-defined]
    man, exp = int(man), int(exp)
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def round_down(r: Fraction) -> float:
    """The largest double at most ``r``."""
    d = float(r)
    return math.nextafter(d, -math.inf) if Fraction(d) > r else d


def round_up(r: Fraction) -> float:
    """The smallest double at least ``r``."""
    d = float(r)
    return math.nextafter(d, math.inf) if Fraction(d) < r else d


def log_bounds(a: float) -> tuple[float, float]:
    """The smallest and largest double the model lets ``log(a)`` return (``a`` positive, finite)."""
    if not (0 < a < math.inf):
        raise ValueError(f"log_bounds needs a positive finite double, got {a!r}")
    from flint import arb, ctx

    with ctx.workprec(_PREC):
        t = arb(a).log()
        lo, hi = arb_exact(t.lower()), arb_exact(t.upper())
    if hi - lo > abs(lo + hi) * Fraction(1, 2**100):
        raise ArithmeticError(f"the enclosure of log({a!r}) is too wide")  # never at 128 bits
    return math.nextafter(round_down(lo), -math.inf), math.nextafter(round_up(hi), math.inf)
