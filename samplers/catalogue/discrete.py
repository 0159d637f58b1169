"""Discrete mechanisms with exact rational laws (REFERENCE.md, FAIER, OpenDP, Ghosh et al.)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from samplers.catalogue import register
from samplers.errors import ParameterError
from samplers.lang import (
    BOTTOM, all_differ, argmax, categorical, clamp, flip, ints, ite, maximum, mechanism,
    one_differ, replace_one, two_sided_geometric,
)


def _log_inv(a: Fraction) -> float:
    return math.inf if a == 0 else -math.log(a)


def _rr_eps(p: Mapping[str, Any]) -> float:
    lam = p["lam"]
    return math.inf if lam in (0, 1) else abs(math.log((1 - lam) / lam))


@register
@mechanism(domain=ints(lo=0, hi=1, size="n"), neighbours=replace_one, claimed_eps=_rr_eps)
def rr(x, *, n=4, lam="1/4"):
    """Binary randomized response (Warner 1965): each client's bit is flipped with probability lam.

    Neighbours differ in one client's bit.  Exact e^eps = max((1-lam)/lam, lam/(1-lam))
    for every n (REFERENCE.md; Oakley, Holtzen and Oprea).
    """
    return tuple(xi ^ flip(lam) for xi in x)


def _kary_check(p: Mapping[str, Any]) -> None:
    k, prob = p["k"], p["p"]
    if k < 2:
        raise ParameterError(f"kary_rr: k = {k}: there must be at least 2 categories")
    # OpenDP validates in f64: 1/k <= p < 1 with both sides rounded to doubles.
    pf = float(prob)
    if not (1.0 / float(k) <= pf < 1.0):
        raise ParameterError(f"kary_rr: p = {prob} must satisfy 1/k <= p < 1 (checked in f64, as OpenDP does)")


def _kary_eps(p: Mapping[str, Any]) -> float:
    k, prob = p["k"], p["p"]
    return math.log(prob * (k - 1) / (1 - prob)) if prob > 0 else math.inf


@register
@mechanism(domain=ints(lo=0, hi=lambda p: p["k"] - 1, size=1), neighbours=replace_one,
           check=_kary_check, claimed_eps=_kary_eps, aliases=("make_randomized_response",))
def kary_rr(x, *, k=3, p="1/2"):
    """k-ary randomized response as OpenDP's make_randomized_response.

    Report the true category with probability p, otherwise one of the other k-1
    uniformly.  Parameters are validated as OpenDP does, in f64: k >= 2 and
    1/k <= p < 1.  Privacy map: eps = ln(p (k-1) / (1-p)).
    """
    shift = categorical([p] + [(1 - p) / (k - 1)] * (k - 1))
    return (x[0] + shift) % k


@register
@mechanism(domain=ints(lo=0, hi="m", size=1), neighbours=one_differ,
           claimed_eps=lambda p: _log_inv(p["a"]))
def trunc_geom(x, *, m=2, a="1/2"):
    """Truncated geometric mechanism (Ghosh, Roughgarden and Sundararajan 2009).

    Y = clamp(c + Z, 0, m) with P(Z = z) = (1-a)/(1+a) a^|z| on a count c in 0..m;
    exact e^eps = 1/a for every m >= 1.
    """
    return clamp(x[0] + two_sided_geometric(a), 0, m)


@register
@mechanism(domain=ints(lo=0, hi=1, size="n"), neighbours=replace_one, claimed_eps=_rr_eps)
def rr_count(x, *, n=2, lam="1/5"):
    """Count of ones after binary randomized response (Oakley et al.'s RRcount accuracy example)."""
    return sum(xi ^ flip(lam) for xi in x)


def _tie_check(p: Mapping[str, Any]) -> None:
    if p["tie"] not in ("uniform", "first"):
        raise ParameterError(f"tie must be 'uniform' or 'first', got {p['tie']!r}")


def _noisy_values(x, n, a):
    return [clamp(xi + two_sided_geometric(a), 0, n) for xi in x]


@register
@mechanism(domain=ints(lo=0, hi="n", size="m"), neighbours=all_differ, check=_tie_check,
           claimed_eps=lambda p: 2 * _log_inv(p["a"]))
def noisy_max_geom(x, *, m=5, n=2, a="1/2", tie="uniform"):
    """Discrete report-noisy-max (FAIER, Liu, Wang and Zhang, Algorithm 2).

    m counting queries with answers in 0..n each get independent truncated a-geometric
    noise over 0..n; the output is the 1-based index of the largest noisy value, ties
    broken uniformly at random (or by lowest index with tie="first").  For m=5, n=2,
    a=1/2 the exact level is e^eps = 288/73 (REFERENCE.md).
    """
    return argmax(_noisy_values(x, n, a), ties=tie) + 1


@register
@mechanism(domain=ints(lo=0, hi="n", size="m"), neighbours=all_differ,
           claimed_eps=lambda p: 2 * _log_inv(p["a"]))
def noisy_max_geom_value(x, *, m=5, n=2, a="1/2"):
    """Buggy discrete noisy max that releases the largest noisy value instead of its index.

    The discrete twin of StatDP's noisy_max_v1b: releasing the value leaks about every
    coordinate at once, so it is not 2 ln(1/a)-DP as the index version is.
    """
    return maximum(_noisy_values(x, n, a))


@register
@mechanism(domain=ints(lo=0, hi="n", size="L"), neighbours=all_differ, length_param="L",
           claimed_eps=lambda p: 2 * _log_inv(p["a1"]))
def above_threshold_geom(x, *, L=2, n=2, T=1, a1="1/4", a2="1/2"):
    """Discrete above threshold (FAIER Algorithm 3): not private for any eps.

    The threshold T gets truncated a1-geometric noise over 0..n, each query answer
    truncated a2-geometric noise over 0..n.  Output per query: 0 ("bottom" in FAIER's
    words) while the noisy answer is below the noisy threshold, 1 ("top") when it is >=
    it, then BOTTOM (halted) for the remaining positions.  The level grows with L: e^eps
    = 2, 4, 16 for L = 1, 2, 4 (REFERENCE.md).
    """
    t = clamp(T + two_sided_geometric(a1), 0, n)
    out, halted = [], 0
    for q in x:
        above = clamp(q + two_sided_geometric(a2), 0, n) >= t
        out.append(ite(halted, BOTTOM, above))
        halted = halted | above
    return tuple(out)


@register
@mechanism(domain=ints(lo=0, hi="n", size="m"), neighbours=one_differ,
           claimed_eps=lambda p: _log_inv(p["a"]))
def histogram_geom(x, *, m=3, n=2, a="1/2"):
    """Noisy histogram with truncated geometric noise: every bin count clamp(c + Z, 0, n).

    Adding or removing one record changes one count by 1 (one_differ); e^eps = 1/a.
    """
    return tuple(_noisy_values(x, n, a))


@register
@mechanism(domain=ints(lo=0, hi="n", size="m"), neighbours=one_differ,
           claimed_eps=lambda p: _log_inv(p["a"]))
def histogram_geom_wrong_scale(x, *, m=3, n=2, a="1/2"):
    """Buggy noisy histogram with half the noise it claims (base a^2 instead of a).

    The discrete twin of StatDP's histogram_eps (wrong noise scale): the true level is
    e^eps = 1/a^2, twice the claimed ln(1/a).
    """
    return tuple(_noisy_values(x, n, a * a))


def _geo_sample_table(eps: float, n: int, c: int) -> list[int]:
    """Balcer and Vadhan's integer CDF table F(0..n) for a count c (DP-Sniper's k = ceil(ln(2/eps)))."""
    k = math.ceil(math.log(2 / eps))
    d = (2 ** (k + 1) + 1) * (2**k + 1) ** (n - 1)
    f = []
    for z in range(n + 1):
        if z < c:
            f.append(2 ** (k * (c - z)) * (2**k + 1) ** (n - (c - z)))
        elif z < n:
            f.append(d - 2 ** (k * (z - c + 1)) * (2**k + 1) ** (n - 1 - (z - c)))
        else:
            f.append(d)
    return f


@register
@mechanism(domain=ints(lo=0, hi="n", size=1), neighbours=one_differ, claimed_eps=lambda p: p["eps"],
           aliases=("TruncatedGeometricMechanism", "truncated_geometric"))
def geo_sample(x, *, eps=0.1, n=5):
    """Balcer and Vadhan's GeoSample truncated geometric, as in DP-Sniper's suite.

    A count c in 0..n is released by inverting an exact integer CDF table with
    k = ceil(ln(2/eps)) (DP-Sniper's natural log): the true level is ln(1 + 2^-k), which
    for eps = 0.1 is 0.1178, above the claimed 0.1.
    """
    if eps <= 0:
        raise ParameterError(f"geo_sample: eps must be positive, got {eps}")
    out = 0
    for c in range(n + 1):
        f = _geo_sample_table(eps, n, c)
        draw = categorical([f[0]] + [f[z] - f[z - 1] for z in range(1, n + 1)])
        out = ite(x[0] == c, draw, out)
    return out
