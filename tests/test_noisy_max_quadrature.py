"""Report noisy max over three queries against one-dimensional mpmath quadrature.

``P(argmax = i | x) = int f(z) prod_{j != i} F(x_i + z - x_j) dz`` with the noise's own
density and distribution function, written here from the definitions (Laplace,
exponential, Gaussian; scales at the exact binary value of the float parameters), at
30 digits.  The continuous backend's pair level and every output's witness ratio must
enclose the truth, and the certified eps bracket must contain its log (issue: soundness
audit; two-way noisy max and thresholds are in ``test_continuous_soundness.py``).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from samplers import catalogue
from verifiers.continuous.backend import ContinuousBackend


@pytest.fixture(autouse=True)
def _mpmath_digits():
    """This module's truths at 30 digits, whatever precision other modules leave behind."""
    with mpmath.workdps(30):
        yield



def _mp(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _pdf(kind: str, s: mpmath.mpf, z: mpmath.mpf) -> mpmath.mpf:
    if kind == "laplace":
        return mpmath.exp(-abs(z) / s) / (2 * s)
    if kind == "exponential":
        return mpmath.exp(-z / s) / s if z >= 0 else mpmath.mpf(0)
    return mpmath.npdf(z, 0, s)


def _cdf(kind: str, s: mpmath.mpf, u: mpmath.mpf) -> mpmath.mpf:
    if kind == "laplace":
        return mpmath.exp(u / s) / 2 if u < 0 else 1 - mpmath.exp(-u / s) / 2
    if kind == "exponential":
        return -mpmath.expm1(-u / s) if u > 0 else mpmath.mpf(0)
    return mpmath.ncdf(u, 0, s)


def _p_index(kind: str, s: mpmath.mpf, x: tuple[int, ...], i: int) -> mpmath.mpf:
    def integrand(z):
        r = _pdf(kind, s, z)
        for j, xj in enumerate(x):
            if j != i:
                r *= _cdf(kind, s, x[i] + z - xj)
        return r

    start = mpmath.mpf(0) if kind == "exponential" else -mpmath.inf
    kinks = sorted({mpmath.mpf(xj - x[i]) for xj in x} | {mpmath.mpf(0)})  # where a factor changes form
    return mpmath.quad(integrand, [start, *[k for k in kinks if k > start], mpmath.inf])


def _inside(lo, hi, truth) -> bool:
    lo = mpmath.inf if lo == float("inf") else _mp(lo)
    hi = mpmath.inf if hi == float("inf") else _mp(hi)
    return lo <= truth <= hi


CASES = [
    ("report_noisy_max2", "exponential", {"eps": 0.3, "n": 3}, Fraction(2 / 0.3), (1, 0, -1), (0, 1, 0)),
    ("report_noisy_max2", "exponential", {"eps": 2.0, "n": 3}, Fraction(1), (0, 0, 0), (-1, 1, 1)),
    pytest.param("report_noisy_max1", "laplace", {"eps": 0.3, "n": 3}, Fraction(2 / 0.3), (0, 0, 0), (-1, 1, 1),
                 marks=pytest.mark.slow),
    pytest.param("gaussian_noisy_max", "gaussian", {"sigma": 0.7, "n": 3}, Fraction(0.7), (0, 0, 0), (1, 1, 0),
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name, kind, params, scale, x, xp", CASES)
def test_three_way_noisy_max_encloses_quadrature(name, kind, params, scale, x, xp):
    b = ContinuousBackend(catalogue.get(name).trace(**params))
    s = _mp(scale)
    p = [_p_index(kind, s, x, i) for i in range(3)]
    q = [_p_index(kind, s, xp, i) for i in range(3)]
    assert abs(sum(p) - 1) < mpmath.mpf(10) ** -20 and abs(sum(q) - 1) < mpmath.mpf(10) ** -20
    truth = [a / c if c > 0 else mpmath.inf for a, c in zip(p, q)]
    level = b.pair_epsilon(x, xp, precision=1e-6)
    assert _inside(level.ratio.lo, level.ratio.hi, max(truth))
    assert mpmath.mpf(level.bracket[0]) <= mpmath.log(max(truth)) <= mpmath.mpf(level.bracket[1])
    for i in range(3):
        w = b.witness_ratio(x, xp, [i])
        assert _inside(w.ratio.lo, w.ratio.hi, truth[i]), (i, truth[i])
