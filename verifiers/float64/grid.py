"""The grid lemma: adding noise to a double ``x'`` gives no small non-zero output finer than ``x'``'s grid.

**Lemma.**  Let ``x'`` be a non-zero double with ``2^e <= |x'| < 2^(e+1)``, and ``z`` any double.  If
``r = fl(x' + z)`` (rounded to nearest, or by any monotone rounding) satisfies ``0 < |r| < |x'| / 2``,
then ``r = x' + z`` exactly and ``r`` is a multiple of ``g = 2^max(e - 53, -1074)`` (``ulp(x') / 2`` for
a normal ``x'``), so ``|r| >= g``.  Hence no output ``o`` with ``0 < |o| < g`` is ``fl(x' + z)`` for any
double ``z``: an additive mechanism that releases ``fl(x' + z)`` never gives it from ``x'``, whatever
its noise ``z`` and however that noise was computed.

*Proof.*  Every non-zero double is at least ``2^-1074``, so for ``e <= -1022`` (where ``g = 2^-1074``)
there is nothing to prove; let ``e >= -1021``, and ``x' > 0`` (the negative case is symmetric:
``fl(-a) = -fl(a)``).  Then ``x'/2`` is a double, and rounding is monotone and leaves doubles as they
are.  If ``z >= 0``, ``x' + z >= x'`` gives ``r >= x'``; if ``z <= -2x'``, ``x' + z <= -x'`` gives
``r <= -x'``; if ``-x'/2 < z < 0``, ``x' + z > x'/2`` gives ``r >= x'/2``: each contradicts
``|r| < x'/2``.  So ``x'/2 <= -z <= 2x'``, and Sterbenz's lemma (``b/2 <= a <= 2b`` makes ``b - a``
a double) makes ``x' + z = x' - (-z)`` exact: ``r = x' + z``.  ``x'`` is a multiple of its ulp
``2^(e-52)``; ``|z| >= x'/2 >= 2^(e-1)`` makes ``z`` a multiple of ``2^(e-1-52) = g``; so ``r`` is a
multiple of ``g``, and a non-zero one has ``|r| >= g``.  ∎

The lemma needs nothing of the noise: it is what makes a float-level eps = inf certain for a
mechanism that releases ``value + noise`` (or ``value - noise``), whatever its sampler, as soon as
``x = 0`` can give a non-zero output below ``g``: from ``0`` the output is the noise itself.
``tests/test_float_grid.py`` checks the lemma exhaustively on small binary formats and on float64
near 0.
"""

from __future__ import annotations

import math
from fractions import Fraction


def grid(x_prime: float) -> Fraction:
    """``g`` of the lemma: every non-zero ``fl(x_prime + z)`` below ``|x_prime| / 2`` is a multiple of it."""
    if not (x_prime != 0 and math.isfinite(x_prime)):
        raise ValueError(f"the grid lemma needs a non-zero finite double, got {x_prime!r}")
    e = math.frexp(x_prime)[1] - 1  # 2^e <= |x_prime| < 2^(e+1)
    return Fraction(2) ** max(e - 53, -1074)


def unreachable(x_prime: float, o: float) -> bool:
    """Whether the lemma proves that no ``fl(x_prime + z)`` equals ``o``: ``0 < |o| < grid(x_prime)``."""
    return o != 0 and abs(Fraction(o)) < grid(x_prime)
