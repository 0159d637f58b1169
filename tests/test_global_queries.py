"""Global epsilon, delta and Renyi divergence: the BDD against the enumerator and by hand."""

import math
from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.errors import ParameterError
from verifiers.base import renyi_bracket
from verifiers.bdd.backend import BDDBackend
from verifiers.enumerate import Enumerator
from verifiers.ratio import INF

BACKENDS = [BDDBackend, Enumerator]


@pytest.mark.parametrize("cls", BACKENDS)
def test_delta_of_randomized_response(cls):
    b = cls(catalogue.get("rr").trace(n=1, lam="1/4"))
    d0 = b.delta(0.0)
    assert d0.lo == d0.hi == Fraction(1, 2)  # total variation distance
    d = b.delta(math.log(3))  # the exact level: delta is 0 up to the bracket of e^eps
    assert d.lo == 0 <= d.hi < Fraction(1, 10**30)
    assert b.delta(INF).hi == 0
    eps = math.log(2)  # a float just below ln 2: e^eps = 2 - tiny
    half = b.delta(eps)
    assert half.lo < half.hi and half.hi - half.lo < Fraction(1, 10**35)
    assert half.lo <= Fraction(3, 4) - 2 * Fraction(1, 4) + Fraction(1, 10**15) and half.hi > Fraction(1, 4)


@pytest.mark.parametrize("cls", BACKENDS)
def test_renyi_of_randomized_response(cls):
    r = cls(catalogue.get("rr").trace(n=1, lam="1/4")).renyi(2)
    assert r.power_sum == Fraction(7, 3)
    assert r.lo <= math.log(7 / 3) <= r.hi
    with pytest.raises(ParameterError):
        cls(catalogue.get("rr").trace(n=1)).renyi(1)


def test_renyi_is_infinite_without_full_support():
    r = BDDBackend(catalogue.get("rr").trace(n=2, lam="0")).renyi(3)
    assert r.power_sum == INF and r.lo == INF
    lo, hi = renyi_bracket(Fraction(1), 2)
    assert lo <= 0 <= hi and hi - lo < 1e-30


def test_renyi_scales_to_many_clients():
    """2^60 outputs: the Renyi sum factorises over clients and the BDD never lists outputs."""
    b = BDDBackend(catalogue.get("rr").trace(n=60, lam="1/4"))
    x = (0,) * 60
    s = b.pair_power_sum(x, (1,) + (0,) * 59, 2)
    assert s == Fraction(7, 3)


@pytest.mark.parametrize("name,params", [("noisy_max_geom", dict(m=3)), ("histogram_geom", dict(m=2)),
                                         ("above_threshold_geom", dict(L=2))])
def test_global_queries_agree(name, params):
    program = catalogue.get(name).trace(**params)
    bdd, ref = BDDBackend(program), Enumerator(program)
    g1, g2 = bdd.global_epsilon(), ref.global_epsilon()
    assert g1.ratio == g2.ratio and g1.pairs == g2.pairs
    assert bdd.delta(0.5) == ref.delta(0.5)
    assert bdd.renyi(2).power_sum == ref.renyi(2).power_sum


def test_exp_bracket_is_a_real_bracket():
    from verifiers.epsilon import exp_bracket

    for eps in (math.log(2), 1.372, 0.1, Fraction(1, 3)):
        lo, hi = exp_bracket(eps)
        assert lo < hi and hi - lo < Fraction(1, 10**35)


def test_bisection_accepts_output_zero_as_a_witness():
    """Output 0 is falsy but a real violation: the bracket must close on ln 2, not on 0."""
    from verifiers.epsilon import bisect_epsilon

    e = Enumerator(catalogue.get("trunc_geom").trace(m=2, a="1/2"))
    b = bisect_epsilon(lambda c: e.exists_violation((0,), (1,), c), 0.0, 1.0, 1e-3)
    assert b.lo <= math.log(2) <= b.hi and b.hi - b.lo <= 1e-3 and b.witness == 0
