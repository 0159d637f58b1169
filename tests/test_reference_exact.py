"""Every REFERENCE.md value the catalogue expresses, from the exact backends."""

import math
from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.errors import ParameterError
from verifiers.backends import get_backend
from verifiers.bdd.backend import BDDBackend
from verifiers.enumerate import Enumerator
from verifiers.epsilon import exp_bracket
from verifiers.ratio import INF

F = Fraction


def attains(backend, g):
    """The reported witness attains the reported global ratio."""
    assert backend.program.neighbours.contains(g.x, g.x_prime)
    assert backend.witness_ratio(g.x, g.x_prime, [g.output]) == g.ratio


RR_TABLE = [("1/4", 3), ("1/5", 4), ("1/10", 9), ("1/3", 2), ("1/2", 1), ("3/5", F(3, 2)), ("0", INF)]


@pytest.mark.parametrize("backend", ["bdd", "enumerate"])
@pytest.mark.parametrize("lam,expect", RR_TABLE)
def test_rr_global_epsilon(backend, lam, expect):
    b = get_backend(catalogue.get("rr").trace(n=3, lam=lam), backend)
    g = b.global_epsilon()
    assert g.ratio == expect
    attains(b, g)
    if expect == INF:
        assert g.eps_lower == INF
    else:
        assert g.eps_lower <= math.log(expect) <= g.eps_upper


def test_rr_witness_output_flips_for_lam_above_half():
    g = BDDBackend(catalogue.get("rr").trace(n=2, lam="3/5")).global_epsilon()
    i = next(k for k in range(2) if g.x[k] != g.x_prime[k])
    assert g.output[i] != g.x[i]  # the flipped report is the likelier one


def test_rr_inference():
    b = BDDBackend(catalogue.get("rr").trace(n=2, lam="1/5"))
    assert b.event_probability((0, 0), [(0, 0)]) == F(16, 25)
    assert b.event_probability((1, 0), [(0, 0)]) == F(4, 25)
    assert b.event_probability((1, 1), [(0, 0)]) == F(1, 25)


@pytest.mark.parametrize("k,p,expect", [(3, "1/2", 2), (4, "1/2", 3), (4, "7/10", 7), (3, "1/3", 1)])
def test_kary_rr(k, p, expect):
    b = BDDBackend(catalogue.get("kary_rr").trace(k=k, p=p))
    assert b.global_epsilon().ratio == expect


def test_kary_rr_float_parameter_is_its_binary_value():
    p = F(0.7)
    g = BDDBackend(catalogue.get("kary_rr").trace(k=4, p=0.7)).global_epsilon()
    assert g.ratio == p * 3 / (1 - p) != 7


def test_kary_rr_construction_errors():
    with pytest.raises(ParameterError):
        catalogue.get("kary_rr").trace(k=3, p="1/4")


def test_truncated_geometric():
    b = BDDBackend(catalogue.get("trunc_geom").trace(m=2, a="1/2"))
    assert b.distribution((0,)) == {0: F(2, 3), 1: F(1, 6), 2: F(1, 6)}
    assert b.distribution((1,)) == {0: F(1, 3), 1: F(1, 3), 2: F(1, 3)}
    g = b.global_epsilon()
    assert g.ratio == 2
    attains(b, g)
    assert BDDBackend(catalogue.get("trunc_geom").trace(m=1, a="1/4")).global_epsilon().ratio == 4
    for m in (3, 5):
        assert BDDBackend(catalogue.get("trunc_geom").trace(m=m, a="1/3")).global_epsilon().ratio == 3


@pytest.fixture(scope="module")
def noisy_max():
    return BDDBackend(catalogue.get("noisy_max_geom").trace(m=5, n=2, a="1/2"))


def test_noisy_max_distributions(noisy_max):
    d = noisy_max.distribution((0, 2, 2, 2, 2))
    assert d[1] == F(73, 1440) and all(d[i] == F(1367, 5760) for i in range(2, 6))
    assert noisy_max.distribution((1,) * 5) == {i: F(1, 5) for i in range(1, 6)}


def test_noisy_max_global_level(noisy_max):
    g = noisy_max.global_epsilon()
    assert g.ratio == F(288, 73) and g.pairs == 16564
    assert round(g.eps_lower, 7) == 1.3725010
    attains(noisy_max, g)
    assert sorted(g.x) == [1] * 5 and sorted(g.x_prime) == [0, 2, 2, 2, 2] and g.output == 1 + g.x_prime.index(0)


def test_noisy_max_runner_up_and_precision(noisy_max):
    assert noisy_max.pair_epsilon((1, 0, 1, 1, 1), (0, 1, 2, 2, 2))[0] == F(1456, 373)
    ratios = {noisy_max.pair_ratio(x, xp) for x, xp in noisy_max.neighbour_pairs()}
    assert sorted(ratios)[-2:] == [F(1456, 373), F(288, 73)]
    assert noisy_max.global_violation(exp_bracket(1.372)[1]) is not None
    assert noisy_max.global_violation(exp_bracket(1.373)[0]) is None


@pytest.mark.parametrize("d2,expect", [
    ((0, 2, 2, 2, 2), F(288, 73)), ((2, 0, 0, 0, 0), F(2329, 864)), ((0, 1, 1, 1, 1), F(81, 41)),
    ((2, 1, 1, 1, 1), F(146, 81)), ((2,) * 5, 1), ((0,) * 5, 1)])
def test_noisy_max_statdp_patterns(noisy_max, d2, expect):
    d1 = (1,) * 5
    assert max(noisy_max.pair_ratio(d1, d2), noisy_max.pair_ratio(d2, d1)) == expect


def test_noisy_max_three_queries():
    assert BDDBackend(catalogue.get("noisy_max_geom").trace(m=3)).global_epsilon().ratio == F(24, 7)


def test_above_threshold_witness_grows_with_L():
    ratios = []
    for L in range(2, 7):
        b = BDDBackend(catalogue.get("above_threshold_geom").trace(L=L))
        out = (0,) * (L - 1) + (1,)
        ratios.append(b.witness_ratio((0,) * (L - 1) + (1,), (1,) * (L - 1) + (0,), [out]))
    assert ratios[0] == F(29, 8)
    assert all(b > a for a, b in zip(ratios, ratios[1:]))
    growth = [b / a for a, b in zip(ratios, ratios[1:])]
    assert abs(growth[-1] - F(5, 4)) < abs(growth[0] - F(5, 4))  # tends to 1 + a2 - a2^2


@pytest.mark.parametrize("L,expect", [(1, 2), (2, 4), (4, 16)])
def test_above_threshold_global_level(L, expect):
    b = BDDBackend(catalogue.get("above_threshold_geom").trace(L=L))
    g = b.global_epsilon()
    assert g.ratio == expect
    attains(b, g)
    if L > 1:  # REFERENCE.md's witness form (for L = 1 the maximum is attained elsewhere)
        assert b.pair_ratio((1,) * L, (2,) * (L - 1) + (0,)) == expect


def test_enumerator_agrees_on_the_global_levels():
    for name, params in [("noisy_max_geom", dict(m=3)), ("above_threshold_geom", dict(L=2)),
                         ("rr", dict(n=3, lam="1/5"))]:
        program = catalogue.get(name).trace(**params)
        assert Enumerator(program).global_epsilon().ratio == BDDBackend(program).global_epsilon().ratio
