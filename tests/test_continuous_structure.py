"""Soundness of the structured star integrals (identical leaves as powers, quadrature beyond
CLOSED_FORM_LEAVES leaves, stars shared by shape) against independently computed truths.

Truths come from closed forms (an argmax of iid noise is uniform) or mpmath quadrature at 40
digits of formulas written here from the noise laws, never from project code.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from samplers import catalogue
from verifiers.continuous.backend import ContinuousBackend
from verifiers.continuous.enclosure import Enclosure, working_precision
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import Law
from verifiers.continuous.region import CLOSED_FORM_LEAVES, probability

mpmath.mp.dps = 40
TOLERANCE = mpmath.mpf(10) ** -30  # the references' own accuracy


def _mp(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _laplace_cdf(u, b):
    u, b = _mp(u) if isinstance(u, (int, Fraction)) else u, _mp(b)
    return mpmath.exp(u / b) / 2 if u < 0 else 1 - mpmath.exp(-u / b) / 2


def _laplace_pdf(t, b):
    return mpmath.exp(-abs(t) / _mp(b)) / (2 * _mp(b))


def _quad(f, kinks):
    pts = [-mpmath.inf] + sorted(set(_mp(k) for k in kinks)) + [mpmath.inf]
    return mpmath.quad(f, pts)


def _assert_encloses(e: Enclosure, truth) -> None:
    assert _mp(e.lo) <= truth * (1 + TOLERANCE), (float(e.lo), float(truth))
    assert truth <= _mp(e.hi) * (1 + TOLERANCE), (float(truth), float(e.hi))


def _enclose(constraints, noise, level=0):
    with working_precision(level):
        return Enclosure.from_arb(probability(constraints, noise, level))


def _diff(a: int, b: int, const: Fraction) -> Form:
    """``z_a - z_b + const`` (> 0 means z_a + const beats z_b)."""
    return Form(tuple(sorted(((a, Fraction(1)), (b, Fraction(-1))))), const)


@pytest.mark.parametrize("n", [CLOSED_FORM_LEAVES + 1, CLOSED_FORM_LEAVES + 2, 40])
def test_argmax_of_iid_laplace_is_uniform(n):
    """P(z_0 > z_j for every j) = 1/n for iid noise: one group of n - 1 leaves, a power (in closed
    form up to CLOSED_FORM_LEAVES leaves, by quadrature beyond)."""
    noise = {v: Law("laplace", Fraction(20)) for v in range(n)}
    e = _enclose([_diff(0, j, Fraction(0)) for j in range(1, n)], noise)
    assert e.lo <= Fraction(1, n) <= e.hi
    assert e.hi - e.lo < Fraction(1, 10**12)


def test_shifted_argmax_star_against_quadrature():
    """Leaves in three groups (shifts 0, 1, -2), 30 leaves: P(z_0 + 1 > z_j + x_j) against mpmath."""
    b = Fraction(20)
    shifts = [0] * 12 + [1] * 10 + [-2] * 8  # x_j - x_0 + ... : z_0 > z_j + s_j - 1
    noise = {v: Law("laplace", b) for v in range(len(shifts) + 1)}
    cons = [_diff(0, j + 1, Fraction(1 - s)) for j, s in enumerate(shifts)]
    truth = _quad(lambda t: _laplace_pdf(t, b) * mpmath.fprod(_laplace_cdf(t + 1 - s, b) for s in shifts),
                  [0] + [s - 1 for s in shifts])
    e = _enclose(cons, noise)
    _assert_encloses(e, truth)
    assert e.hi - e.lo < Fraction(1, 10**12) * (1 + e.hi)


def test_sparse_vector_star_against_quadrature():
    """A sparse-vector path: threshold Lap(2), 19 queries Lap(4) below and the last above."""
    th, qs, T = Fraction(2), Fraction(4), Fraction(1, 2)
    xs = [0] * 10 + [1] * 9 + [2]
    noise = {0: Law("laplace", th)} | {j + 1: Law("laplace", qs) for j in range(len(xs))}
    cons = []  # below: x_j + z_j < T + z_0 ; above: x_k + z_k > T + z_0
    for j, x in enumerate(xs[:-1]):
        cons.append(_diff(0, j + 1, T - x))
    cons.append(_diff(len(xs), 0, xs[-1] - T))

    def integrand(t):
        below = mpmath.fprod(_laplace_cdf(T + t - x, qs) for x in xs[:-1])
        return _laplace_pdf(t, th) * below * (1 - _laplace_cdf(T + t - xs[-1], qs))

    truth = _quad(integrand, [0] + [x - T for x in xs])
    e = _enclose(cons, noise)
    _assert_encloses(e, truth)
    assert e.hi - e.lo < Fraction(1, 10**12) * e.hi


def test_exponential_leaves_by_quadrature_against_quadrature():
    """Exponential noise (support t >= 0), 20 leaves: P(z_0 > z_j - 1 for every j)."""
    b = Fraction(3)
    n = 20
    noise = {v: Law("exponential", b) for v in range(n + 1)}
    cons = [_diff(0, j, Fraction(1)) for j in range(1, n + 1)]
    bb = _mp(b)

    def integrand(t):
        return mpmath.exp(-t / bb) / bb * (1 - mpmath.exp(-(t + 1) / bb)) ** n

    truth = mpmath.quad(integrand, [0, mpmath.inf])
    e = _enclose(cons, noise)
    _assert_encloses(e, truth)
    assert e.hi - e.lo < Fraction(1, 10**12)


def test_report_noisy_max_outputs_sum_to_one_and_equal_coordinates_agree():
    """Backend distribution of report_noisy_max1 (n = 40): equal coordinates get one enclosure,
    the enclosures of all outputs contain 1 in their sum, and the uniform input gives 1/n."""
    n = 40
    b = ContinuousBackend(catalogue.get("report_noisy_max1").trace(n=n))
    d = b.distribution([3] * n)
    assert all(e.lo <= Fraction(1, n) <= e.hi for e in d.values())
    x = [0] * 20 + [1] * 20
    d = b.distribution(x)
    assert len({d[i] for i in range(20)}) == 1 and len({d[i] for i in range(20, 40)}) == 1
    assert sum(e.lo for e in d.values()) <= 1 <= sum(e.hi for e in d.values())
    scale = Fraction(2 / 0.1)  # Lap(2 / eps) at eps = 0.1, the float's exact value
    low = _quad(lambda t: _laplace_pdf(t, scale) * _laplace_cdf(t, scale) ** 19 * _laplace_cdf(t - 1, scale) ** 20,
                [0, 1])
    _assert_encloses(d[0], low)
