"""Distribution functions of the continuous noise laws, as arb balls and exp-sums.

* Laplace(b): ``F(u) = e^(u/b) / 2`` for ``u < 0`` and ``1 - e^(-u/b) / 2`` for ``u >= 0``;
  density ``e^(-|t|/b) / (2b)``.
* Exponential(b): ``F(u) = 1 - e^(-u/b)`` for ``u >= 0``, else 0; density ``e^(-t/b) / b``
  on ``t >= 0``.
* Gaussian(s): ``F(u) = erfc(-u / (s sqrt 2)) / 2``; density ``e^(-t^2/(2 s^2)) / (s sqrt(2 pi))``.

Laplace and exponential are sums of exponentials ``c e^(lam t)`` of an affine argument
on each side of their kink at 0 (:func:`cdf_terms`, :func:`density_terms`), which
:mod:`verifiers.continuous.expsum` multiplies and integrates in closed form; the Gaussian has no
kink and is integrated by arb's rigorous quadrature (:func:`cdf_ball`, :func:`density_ball`).
Probabilities of intervals are computed on the side of the kink that avoids cancellation.
"""

from __future__ import annotations

from fractions import Fraction

from verifiers.continuous.expsum import ExpSum, exp_q, q, subtract
from verifiers.continuous.paths import INF, Law

EXP_TYPE = frozenset({"laplace", "exponential"})
Affine = tuple[Fraction, Fraction]  # (m, k): the argument u = m t + k


def kinks(law: Law) -> tuple[Fraction, ...]:
    """Points where the law's formulas change (0 for Laplace and exponential)."""
    return (Fraction(0),) if law.kind in EXP_TYPE else ()


def cdf_terms(law: Law, u: Affine, nonneg: bool) -> ExpSum:
    """``F(m t + k)`` as an exp-sum in ``t``, on a piece where the argument's sign is fixed."""
    m, k = u
    b = law.scale
    if law.kind == "laplace":
        if nonneg:
            return subtract({Fraction(0): q(1)}, {-m / b: exp_q(-k / b) / 2})
        return {m / b: exp_q(k / b) / 2}
    if law.kind == "exponential":
        return subtract({Fraction(0): q(1)}, {-m / b: exp_q(-k / b)}) if nonneg else {}
    raise ValueError(f"{law.kind} has no exp-sum form")


def density_terms(law: Law, nonneg: bool) -> ExpSum:
    """The density at ``t`` as an exp-sum, on a side of 0."""
    b = law.scale
    if law.kind == "laplace":
        return {(-1 if nonneg else 1) / b: q(1) / (2 * q(b))}
    if law.kind == "exponential":
        return {-1 / b: q(1) / q(b)} if nonneg else {}
    raise ValueError(f"{law.kind} has no exp-sum form")


def _phi_arg(law: Law, u):
    """``u / (s sqrt 2)``: the Gaussian CDF is ``erfc(-that) / 2``."""
    from flint import arb

    return u / (q(law.scale) * arb(2).sqrt())


def gaussian_cdf(law: Law, u):
    """The Gaussian ``F(u)`` for an arb or acb ``u``."""
    return (-_phi_arg(law, u)).erfc() / 2


def density_ball(law: Law, t):
    """The Gaussian density at an arb or acb ``t``."""
    from flint import arb

    s = q(law.scale)
    return (-(t * t) / (2 * s * s)).exp() / (s * (2 * arb.pi()).sqrt())


def below(law: Law, u: Fraction | float):
    """``P(Z < u)`` as an arb ball (exact 0 or 1 at infinite ``u`` and outside the support)."""
    from flint import arb

    if u == -INF:
        return arb(0)
    if u == INF:
        return arb(1)
    if law.kind == "laplace":
        return exp_q(u / law.scale) / 2 if u < 0 else 1 - exp_q(-u / law.scale) / 2
    if law.kind == "exponential":
        return arb(0) if u <= 0 else -((-q(u) / q(law.scale)).expm1())
    return (-_phi_arg(law, q(u))).erfc() / 2


def above(law: Law, u: Fraction | float):
    """``P(Z > u)`` as an arb ball, computed without cancellation in the upper tail."""
    from flint import arb

    if law.kind != "exponential":  # symmetric laws
        return below(law, -u)
    if u == INF:
        return arb(0)
    return arb(1) if u <= 0 else exp_q(-u / law.scale)


def interval(law: Law, lo: Fraction | float, hi: Fraction | float):
    """``P(lo < Z < hi)`` as an arb ball (exact 0 for an empty interval)."""
    from flint import arb

    if lo >= hi:
        return arb(0)
    if law.kind == "exponential" and hi <= 0:
        return arb(0)
    if lo >= 0:
        return above(law, lo) - above(law, hi)
    if hi <= 0:
        return below(law, hi) - below(law, lo)
    return 1 - below(law, lo) - above(law, hi)
