"""Accuracy synthesis (RRcount, REFERENCE.md) on both exact backends."""

from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, ints, mechanism, one_differ, uniform
from verifiers.accuracy import accuracy, distance, noiseless_target, tightest_alpha
from verifiers.backends import get_backend


@pytest.mark.parametrize("backend", ["bdd", "enumerate"])
def test_rr_count_two_clients(backend):
    b = get_backend(catalogue.get("rr_count").trace(n=2, lam="1/5"), backend)
    r = accuracy(b, 1)
    assert r.probability == Fraction(24, 25) and r.beta == Fraction(1, 25)
    assert sorted(r.worst) == [(0, 0), (1, 1)]


@pytest.mark.parametrize("backend", ["bdd", "enumerate"])
def test_rr_count_eight_clients(backend):
    b = get_backend(catalogue.get("rr_count").trace(n=8, lam="1/5"), backend)
    r = accuracy(b, 3)
    assert r.probability == Fraction(73728, 78125) and float(r.probability) == 0.9437184
    assert sorted(r.worst) == [(0,) * 8, (1,) * 8]
    one = (1,) + (0,) * 7
    p = b.event_probability(one, lambda o: abs(o - 1) <= 3)
    assert p == Fraction(75968, 78125) and float(p) == 0.9723904


def test_tightest_alpha():
    b = get_backend(catalogue.get("rr_count").trace(n=8, lam="1/5"), "bdd")
    r = tightest_alpha(b, Fraction(1, 10))
    assert r.alpha == 3 and r.probability >= Fraction(9, 10)
    assert accuracy(b, 2).probability < Fraction(9, 10)
    assert tightest_alpha(b, 0).probability == 1


def test_noiseless_target_and_distance():
    f = noiseless_target(catalogue.get("rr_count").trace(n=3))
    assert f((1, 0, 1)) == 2
    g = noiseless_target(catalogue.get("histogram_geom").trace(m=2))
    assert g((2, 1)) == (2, 1)
    assert distance((1, 5), (2, 1)) == 4 and distance(BOTTOM, 3) == float("inf")


def test_noise_that_cannot_be_zero_needs_a_target():
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=one_differ)
    def shifted(x):
        return x[0] + uniform(1, 2)

    with pytest.raises(ParameterError, match="target"):
        noiseless_target(shifted.trace())
    b = get_backend(shifted.trace(), "bdd")
    assert accuracy(b, 0, target=lambda x: x[0] + 1).probability == Fraction(1, 2)


def test_bad_alpha_and_beta():
    b = get_backend(catalogue.get("rr_count").trace(n=2), "bdd")
    with pytest.raises(ParameterError):
        accuracy(b, -1)
    with pytest.raises(ParameterError):
        tightest_alpha(b, "3/2")
