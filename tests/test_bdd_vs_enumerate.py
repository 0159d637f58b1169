"""The BDD backend equals the enumerator on every discrete catalogue mechanism (property-based)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samplers import catalogue
from verifiers.bdd.backend import BDDBackend
from verifiers.enumerate import Enumerator
from verifiers.bdd.lower import lower_argmax

from small import SMALL, discrete_names

EXTRA = [("noisy_max_geom", dict(m=4, tie="first")), ("noisy_max_geom", dict(m=4, n=3, a="2/3"))]
DISCRETE = discrete_names()
CASES = [(name, SMALL[name]) for name in DISCRETE if name in SMALL] + EXTRA


def test_every_discrete_mechanism_is_covered():
    assert sorted(SMALL) == DISCRETE


def _point(data, domain):
    return tuple(data.draw(st.integers(lo, hi)) for lo, hi in zip(domain.lo, domain.hi))


@pytest.mark.parametrize("name,params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
@given(data=st.data())
@settings(max_examples=8, deadline=None)
def test_bdd_equals_enumerator(name, params, data):
    program = catalogue.get(name).trace(**params)
    bdd, ref = _backends(name, program)
    x = _point(data, program.domain)
    xp = data.draw(st.sampled_from(list(program.neighbours.of(x, program.domain))))
    assert bdd.distribution(x) == ref.distribution(x)
    assert bdd.pair_epsilon(x, xp)[0] == ref.pair_epsilon(x, xp)[0]
    assert bdd.pair_power_sum(x, xp, 2) == ref.pair_power_sum(x, xp, 2)
    support = sorted(ref.distribution(x), key=repr)
    event = data.draw(st.lists(st.sampled_from(support), max_size=4))
    assert bdd.event_probability(x, event) == ref.event_probability(x, event)
    c = data.draw(st.fractions(min_value=Fraction(1), max_value=Fraction(20)))
    assert (bdd.exists_violation(x, xp, c) is None) == (ref.exists_violation(x, xp, c) is None)


_CACHE: dict = {}


def _backends(name, program):
    key = (name, program.params)
    if key not in _CACHE:
        _CACHE[key] = (BDDBackend(program), Enumerator(program))
    return _CACHE[key]


@pytest.mark.parametrize("tie", ["uniform", "first"])
@given(x=st.lists(st.integers(0, 2), min_size=4, max_size=4))
@settings(max_examples=10, deadline=None)
def test_argmax_lowering_keeps_the_distribution(tie, x):
    program = catalogue.get("noisy_max_geom").trace(m=4, tie=tie)
    lowered = lower_argmax(program)
    assert not any(n.op == "argmax" for n in lowered.nodes)
    assert Enumerator(lowered).distribution(x) == Enumerator(program).distribution(x)


def test_joint_count_equals_per_input_counts():
    program = catalogue.get("above_threshold_geom").trace(L=3)
    single, swept = BDDBackend(program), BDDBackend(program)
    swept.prepare_sweep()
    for x in program.domain.points():
        assert single.distribution(x) == swept.distribution(x)
